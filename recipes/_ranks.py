def load(torch, auto_class):
    """from_pretrained in the profile's dtype; each rank loads its own shard."""
    torch.distributed.init_process_group(DISTRIBUTED_BACKEND)
    stable_mesh_cache_keys()
    model = auto_class.from_pretrained(MODEL, revision=REVISION, dtype=getattr(torch, DTYPE), **sharding())
    return model.eval()


def eager_may_stop_alone():
    """The ranks stop together or not at all: one that cut its eager baseline by its own clock
    would leave the others waiting in a collective. They run it whole, within the run's time
    limit."""
    return False


def stable_mesh_cache_keys():
    """Lets a sharded graph find itself in the compile cache on the next run. TorchInductor's
    graph cache key pickles each DeviceMesh a graph holds, with the mesh's hash; that hash mixes
    hash(None), which Python 3.11 takes from None's address, and salted strings, so the key
    changed in every process and a tensor-parallel graph was never found. In the key, a mesh is
    what makes it the same mesh: its device type, ranks, dimension names and this rank's place
    in it (each rank keeps its own graphs). Without these internals the key stays as it was."""
    try:
        from torch._inductor.codecache import FxGraphCachePickler
        from torch.distributed.device_mesh import DeviceMesh
    except ImportError:
        return
    if getattr(FxGraphCachePickler, "_canrun_stable_meshes", False):
        return

    def reduce_mesh(mesh):
        return (str, (repr(("DeviceMesh", mesh.device_type, mesh.mesh.tolist(),
                            mesh.mesh_dim_names, mesh.get_coordinate())),))

    init = FxGraphCachePickler.__init__

    def init_with_meshes(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.dispatch_table[DeviceMesh] = reduce_mesh

    FxGraphCachePickler.__init__ = init_with_meshes
    FxGraphCachePickler._canrun_stable_meshes = True


def sharding():
    """from_pretrained's arguments for the plan: tp_plan="auto" (tensor parallel), or with
    enable_expert_parallel=True (expert parallel), through transformers' DistributedConfig
    where this version takes the plan inside it (5.x), beside it before."""
    try:
        from transformers.distributed.configuration_utils import DistributedConfig
    except ImportError:  # before DistributedConfig: tensor parallel only
        return {"tp_plan": "auto"}
    expert = {"enable_expert_parallel": True} if PARALLELISM == "ep" else {}
    if "tp_plan" in getattr(DistributedConfig, "__dataclass_fields__", {}):
        return {"distributed_config": DistributedConfig(tp_plan="auto", **expert)}
    return {"tp_plan": "auto", **({"distributed_config": DistributedConfig(**expert)} if expert else {})}


RANKS = None  # on rank 0: the other ranks


def start_ranks():
    """On rank 0 (this script, started as `python3 run.py`), starts the other ranks; on those,
    makes sure a rank never outlives rank 0."""
    global RANKS
    if "RANK" not in os.environ:
        RANKS = Ranks()
        return
    parent = int(os.environ.get("CANRUN_PARENT", "0"))
    if parent:
        import threading

        def orphaned():
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)
        threading.Thread(target=orphaned, daemon=True).start()


class Ranks:
    """Ranks 1..CORES-1 of torch.distributed, started by rank 0 as copies of this script.

    Each gets RANK, WORLD_SIZE, LOCAL_RANK (its device among those it sees: 0 when pinned to
    its own), MASTER_ADDR and a free MASTER_PORT, and is pinned through PIN_ENV. Their result
    lines come back on a pipe; other output is passed on, marked with the rank. The first
    failure of any rank stops them all, and rank 0 reports it."""

    def __init__(self):
        import socket
        import subprocess
        import threading
        pins = [rank_pinning(rank) for rank in range(CORES)]  # fails before any rank starts
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        common = {"WORLD_SIZE": str(CORES), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
        own = lambda rank: {"RANK": str(rank), PIN_ENV: pins[rank],
                            "LOCAL_RANK": str(rank) if PIN_SYNTAX == "count" else "0"}
        self.results, self.failed, self.processes, self.followers = {}, threading.Event(), [], []
        for rank in range(1, CORES):
            env = {**os.environ, **common, **own(rank), "CANRUN_PARENT": str(os.getpid())}
            process = subprocess.Popen([sys.executable, os.path.abspath(__file__)], env=env,
                                       stdout=subprocess.PIPE, text=True, errors="replace")
            self.processes.append(process)
            follower = threading.Thread(target=self._follow, args=(rank, process), daemon=True)
            follower.start()
            self.followers.append(follower)
        os.environ.update(common, **own(0))  # rank 0 is this process; torch is not loaded yet

    def _follow(self, rank, process):
        import threading
        for line in process.stdout:
            if line.startswith("CANRUN_RESULT "):
                self.results[rank] = {**json.loads(line[len("CANRUN_RESULT "):]), "rank": rank}
            else:
                print(f"[rank {rank}] {line}", end="", file=sys.stderr, flush=True)
        code = process.wait()
        if code != 0 and not self.results.get(rank, {}).get("ok") is False:
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
            self.results[rank] = {"ok": False, "stage": stage, "rank": rank, "at": time.time(),
                                  "error_types": ["RankDied"],
                                  "error": f"rank {rank} {how} without a result"}
        if code != 0:
            self.failed.set()
            # Rank 0 hears of it from its own collectives; should it not, give up for it.
            threading.Timer(30.0, self.abandon).start()

    def abandon(self):
        emit(self.first_failure(wait_s=0))
        os._exit(1)

    def outcome(self, own):
        """Rank 0's result once the others are done: the first failure of any rank, or its own
        with the peak memory of the fullest core."""
        if not own["ok"]:
            return self.first_failure(own={**own, "rank": 0})
        first = self.wait()
        if first:
            return first
        peaks = [r.get("peak_device_memory_bytes") for r in self.results.values()]
        peaks.append(own["peak_device_memory_bytes"])
        counts = [r["compile_cache"] for r in [*self.results.values(), own] if r.get("compile_cache")]
        cache = {key: sum(c[key] for c in counts) for key in ("hits", "misses")} if counts else None
        return {**own, "peak_device_memory_bytes": max((p for p in peaks if p is not None), default=None),
                "compile_cache": cache}

    def wait(self):
        """After rank 0 is done: the first failure of another rank, or None when all are done."""
        while any(p.poll() is None for p in self.processes) and not self.failed.wait(0.05):
            pass
        return self.first_failure(wait_s=0 if not self.failed.is_set() else 5.0)

    def first_failure(self, own=None, wait_s=5.0):
        """The failure to report, after the other ranks end (killed after wait_s): the earliest
        of any rank's, where an error that only says a peer went away counts after the others;
        None when every rank ended well."""
        deadline = time.time() + wait_s
        while time.time() < deadline and any(p.poll() is None for p in self.processes):
            time.sleep(0.05)
        self.stop()
        for follower in self.followers:  # each records how its rank ended before we read it
            follower.join(timeout=5.0)
        failures = [r for r in self.results.values() if r.get("ok") is False] + ([own] if own else [])
        lost_peer = lambda r: any(name.startswith("Dist") for name in r.get("error_types", [])) or \
            "closed by peer" in r.get("error", "") or "Connection reset" in r.get("error", "")
        first = min(failures, key=lambda r: (lost_peer(r), r.get("at", 0)), default=None)
        if first and first.get("rank", 0) != 0:
            first = {**first, "error": f"rank {first['rank']} of {CORES} failed first:\n{first['error']}"}
        return first

    def stop(self):
        for process in self.processes:
            if process.poll() is None:
                process.kill()
        for process in self.processes:
            process.wait()


def rank_pinning(rank):
    """PIN_ENV for one rank: its share of the cores this script was given (PIN_ENV as set when
    it started; unset: the first CORES cores, or all the host's threads). canrun's rule, per
    PIN_SYNTAX: "count" shares the threads evenly; "range" and "list" give each rank a
    contiguous slice of the cores."""
    import re
    given = os.environ.get(PIN_ENV, "")
    form, what = {"count": (r"0*[1-9][0-9]*", "a thread count (N > 0)"),
                  "range": (r"[0-9]+(-[0-9]+)?", "a core range (N or A-B)"),
                  "list": (r"[^,\s]+(,[^,\s]+)*", "a list of ids (N,M,...)")}[PIN_SYNTAX]
    if given and not re.fullmatch(form, given):
        raise RuntimeError(f"{PIN_ENV}={given} is not {what}")
    if PIN_SYNTAX == "count":
        total = int(given) if given else len(os.sched_getaffinity(0))
        return str(max(1, total // CORES))
    if PIN_SYNTAX == "range":
        first, _, last = (given or f"0-{CORES - 1}").partition("-")
        cores = [str(core) for core in range(int(first), int(last or first) + 1)]
    else:
        cores = given.split(",") if given else [str(core) for core in range(CORES)]
    share = len(cores) // CORES
    if share == 0:
        raise RuntimeError(f"{PIN_ENV}={given} gives fewer than the {CORES} cores this plan needs")
    mine = cores[rank * share:(rank + 1) * share]
    return f"{mine[0]}-{mine[-1]}" if PIN_SYNTAX == "range" and len(mine) > 1 else ",".join(mine)


if __name__ == "__main__":
    try:
        start_ranks()
        result = main()
    except BaseException as error:  # report every failure, then exit non-zero
        if isinstance(error, KeyboardInterrupt):
            if RANKS:
                RANKS.stop()
            raise
        result = {**failure(error), "at": time.time()}
    if RANKS:  # rank 0 of a sharded run: the first failure of any rank is the one to report
        result = RANKS.outcome(result)
    emit(result)
    sys.exit(0 if result["ok"] else 1)
