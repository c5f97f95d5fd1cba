"""Fault-injecting torch.compile backends for canrun's tests, named in backend profiles as
"canrun_faults:<function>". Each misbehaves in one way that canrun must classify exactly."""
import os
import signal
import sys
import time

import torch

_calls = [0]


def passing(gm, example_inputs):
    """Compiles nothing: runs the graph as Dynamo captured it. For the tests of what lies around
    the compiler (the reference, the judge), which a compile would only slow down."""
    return gm.forward


def raising(gm, example_inputs):
    """The compiler fails: FAIL_COMPILE."""
    raise RuntimeError("canrun fault: this backend refuses to compile the graph")


def _changing_outputs(gm, change):
    """Runs the graph as Dynamo captured it; after CANRUN_FAULT_GOOD_CALLS calls, applies
    `change` to its floating outputs of the dimensions CANRUN_FAULT_DIMS lists ("3": a language
    model's logits and hidden states; "2" a classifier's logits, "4" a denoiser's sample)."""
    good = int(os.environ.get("CANRUN_FAULT_GOOD_CALLS", "0"))
    dims = {int(d) for d in os.environ.get("CANRUN_FAULT_DIMS", "3").split(",")}
    chosen = lambda t: isinstance(t, torch.Tensor) and t.is_floating_point() and t.dim() in dims

    def run(*args):
        outputs = gm(*args)
        _calls[0] += 1
        if _calls[0] <= good:
            return outputs
        one = lambda t: change(t) if chosen(t) else t
        return type(outputs)(one(t) for t in outputs) if isinstance(outputs, (tuple, list)) else one(outputs)

    return run


def perturbing(gm, example_inputs):
    """Compiles fine, but negates the chosen outputs (_changing_outputs), so greedy decoding
    picks other tokens from then on: FAIL_MISMATCH with a known match_tokens."""
    return _changing_outputs(gm, lambda t: -t)


def poisoning(gm, example_inputs):
    """Compiles fine, but the chosen outputs (_changing_outputs) are NaN, or CANRUN_FAULT_VALUE
    ("inf", "-inf"): what a broken kernel returns. FAIL_MISMATCH, naming the values."""
    value = float(os.environ.get("CANRUN_FAULT_VALUE", "nan"))
    return _changing_outputs(gm, lambda t: torch.full_like(t, value))


def sleeping(gm, example_inputs):
    """Never finishes compiling: TIMEOUT."""
    time.sleep(3600)
    return gm.forward


def killing(gm, example_inputs):
    """The process dies by a signal mid-run: CRASH."""
    os.kill(os.getpid(), signal.SIGKILL)


def exhausting(gm, example_inputs):
    """Allocates up to a limit, then fails the way torch does when a device is full: FAIL_OOM."""
    limit = int(os.environ.get("CANRUN_FAULT_ALLOC_MB", "64")) << 20
    held = []
    while sum(t.numel() for t in held) < limit:
        held.append(torch.empty(8 << 20, dtype=torch.uint8))
    raise torch.OutOfMemoryError(
        f"CUDA out of memory. Tried to allocate 2.00 GiB (canrun fault after {limit >> 20} MiB)")


def flooding(gm, example_inputs):
    """Prints CANRUN_FAULT_FLOOD_MB of text on stdout, then compiles fine: output capture must
    stay bounded and the verdict must still be right (PASS)."""
    line = ("x" * 1023 + "\n").encode()
    for _ in range(int(os.environ.get("CANRUN_FAULT_FLOOD_MB", "200")) * 1024):
        sys.stdout.buffer.write(line)
    sys.stdout.flush()
    return gm.forward


def crashing_rank_1(gm, example_inputs):
    """Sharded runs: rank 1 dies by SIGKILL after CANRUN_FAULT_GOOD_CALLS calls of its graph
    (mid-run); the other ranks run the graph as it is. Each rank notes "rank pid pgid" in
    $CANRUN_FAULT_PIDS/<rank> (a folder relative to the run folder, the one place a boxed run
    may write), so a test can check that none outlives the run: CRASH. In a box the numbers are
    those of its PID namespace."""
    rank = os.environ.get("RANK", "0")
    if os.environ.get("CANRUN_FAULT_PIDS"):
        os.makedirs(os.environ["CANRUN_FAULT_PIDS"], exist_ok=True)
        with open(os.path.join(os.environ["CANRUN_FAULT_PIDS"], rank), "w") as note:
            note.write(f"{rank} {os.getpid()} {os.getpgid(0)}\n")
    if rank != "1":
        return gm.forward
    good = int(os.environ.get("CANRUN_FAULT_GOOD_CALLS", "3"))

    def run(*args):
        _calls[0] += 1
        if _calls[0] > good:
            os.kill(os.getpid(), signal.SIGKILL)
        return gm(*args)

    return run


_perturbed = set()


def perturbing_rank_1(gm, example_inputs):
    """Sharded runs: rank 1's shard of the weights is off by a little — each weight it computes
    with scaled by (1 + CANRUN_FAULT_NOISE * noise), noise normal with a fixed seed — so the
    partial results it adds to every all-reduce are slightly wrong, the way a miscompiled rank
    would be, while the other ranks and the graph itself are as they should be. The text stays
    text-like (every step still picks a likely token); the teacher-forced agreement with the
    CPU reference must catch it."""
    if os.environ.get("RANK", "0") != "1":
        return gm.forward
    noise = float(os.environ.get("CANRUN_FAULT_NOISE", "0.05"))
    generator = torch.Generator().manual_seed(1)
    weights = [t for t in example_inputs if isinstance(t, torch.nn.Parameter)] or list(gm.parameters())
    with torch.no_grad():
        for weight in weights:
            if id(weight) in _perturbed or not weight.is_floating_point() or weight.dim() < 2:
                continue
            _perturbed.add(id(weight))
            local = weight.to_local() if hasattr(weight, "to_local") else weight
            scale = 1 + noise * torch.randn(local.shape, generator=generator, dtype=torch.float32)
            local.mul_(scale.to(local.dtype))
    return gm.forward


def _try(action):
    """None when `action` succeeded, else the error it raised, as text."""
    try:
        action()
        return None
    except Exception as error:  # noqa: BLE001 - what failed is the finding
        return f"{type(error).__name__}: {error}"


def _write(path):
    with open(path, "w") as note:
        note.write("a run was here\n")


def _connect(port):
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"a run was here\n")


def _spawn_until_refused(limit, marker):
    """Starts `sleep 60` until the OS refuses or `limit` were started; each carries `marker` in
    its environment. Returns (started, the error). Keeps three in sessions of their own (out of
    run.py's process group) and ends the others."""
    import subprocess
    started, error = [], None
    env = dict(os.environ, **{marker: "1"})
    while len(started) < limit:
        try:
            started.append(subprocess.Popen(["sleep", "60"], env=env, start_new_session=True))
        except OSError as refused:
            error = f"{type(refused).__name__}: {refused}"
            break
    for process in started[3:]:
        process.kill()
        process.wait()
    return len(started), error


def prying(gm, example_inputs):
    """Tries, once, what a stranger's code should not be able to do from inside a run, and notes
    what it found in pried.json in its folder (the run folder); then runs the graph as it is
    (PASS). Always: reads canrun's secrets (HF_TOKEN, the Hub library's token,
    AWS_SECRET_ACCESS_KEY) and the variables CANRUN_FAULT_LOOK_FOR names, writes into its home.
    With CANRUN_FAULT_PRY=all, also: connects to 127.0.0.1:CANRUN_FAULT_PORT, writes a file
    into the folders CANRUN_FAULT_WRITE_INTO names (comma-separated), starts processes until
    refused (at most CANRUN_FAULT_SPAWN, marked with CANRUN_FAULT_MARK) and leaves three of
    them running outside its process group."""
    if os.path.exists("pried.json"):
        return gm.forward
    import json
    from huggingface_hub import get_token

    home = os.path.expanduser("~")
    found = {
        "HF_TOKEN": os.environ.get("HF_TOKEN"),
        "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY"),
        "hub_token": get_token(),
        "looked": {n: os.environ.get(n) for n in os.environ.get("CANRUN_FAULT_LOOK_FOR", "").split(",") if n},
        "home": home,
        "wrote_home": _try(lambda: _write(os.path.join(home, "pried"))) is None,
        "tmpdir": os.environ.get("TMPDIR"),
        "cwd": os.getcwd(),
    }
    if os.environ.get("CANRUN_FAULT_PRY") == "all":
        found["connect"] = _try(lambda: _connect(int(os.environ["CANRUN_FAULT_PORT"])))
        found["writes"] = {folder: _try(lambda: _write(os.path.join(folder, "canrun-pried")))
                           for folder in os.environ.get("CANRUN_FAULT_WRITE_INTO", "").split(",") if folder}
        found["spawned"], found["spawn_error"] = _spawn_until_refused(
            int(os.environ.get("CANRUN_FAULT_SPAWN", "200")), os.environ["CANRUN_FAULT_MARK"])
    with open("pried.json", "w") as out:
        json.dump(found, out)
    return gm.forward


def drifting(gm, example_inputs):
    """Right until the cache position passes CANRUN_FAULT_DRIFT_AT (default 40), wrong after:
    reads the position each call is given (the graph's cache_position input, or position_ids
    where transformers passes no cache_position, as 5.x does; a graph with neither is left
    alone), never counts calls, and negates the chosen outputs (_changing_outputs' dims) of the
    steps past it. A 32-token check from a short prompt ends before it and PASSes; the long
    generation's teacher-forced pass must report the drift."""
    limit = int(os.environ.get("CANRUN_FAULT_DRIFT_AT", "40"))
    dims = {int(d) for d in os.environ.get("CANRUN_FAULT_DIMS", "3").split(",")}
    names = [node.name for node in gm.graph.nodes if node.op == "placeholder"]
    where = next((i for marker in ("cache_position", "position_ids")
                  for i, name in enumerate(names) if marker in name), None)
    if where is None:
        return gm.forward

    def run(*args):
        outputs = gm(*args)
        if int(args[where].max()) <= limit:
            return outputs
        one = lambda t: -t if isinstance(t, torch.Tensor) and t.is_floating_point() and t.dim() in dims else t
        return type(outputs)(one(t) for t in outputs) if isinstance(outputs, (tuple, list)) else one(outputs)

    return run
