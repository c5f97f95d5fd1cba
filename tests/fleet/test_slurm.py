"""A fleet campaign run by a real Slurm: a one-node cluster on localhost (munged, slurmctld and
slurmd as root, every config, key, socket, state and log file under the test's folder, its own
ports), `canrun campaign --executor slurm` submitting the array and the collect job, one array
task cancelled once its worker has started a run and requeued with `scontrol requeue`, the
collect job (afterany on the array) run once every task ended, and the dataset holding every
model exactly once. Every daemon is stopped by its process id, whatever the test's outcome."""
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fleet_setup import MODELS, FleetFolder  # noqa: E402

SBIN = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
FINISHED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
            "PREEMPTED", "BOOT_FAIL", "DEADLINE"}


def program(name):
    path = shutil.which(name, path=SBIN)
    assert path, f"{name} is not installed (scripts/setup.sh installs slurm-wlm and munge)"
    return path


def free_ports(count):
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def end_with_parent():
    """In a daemon's child process: SIGTERM when this test's process dies, however it dies (a
    ctest timeout kills it without running the fixture's clean-up)."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def wait_for(what, check, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


class LocalSlurm:
    """munged, slurmctld and slurmd started by this test, with their files under `folder`."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.conf = folder / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.daemons = []  # (name, Popen), in start order

    def command(self, *args, check=True):
        result = subprocess.run([program(args[0]), *map(str, args[1:])], env=self.env,
                                capture_output=True, text=True, timeout=60)
        if check:
            assert result.returncode == 0, f"{' '.join(map(str, args))}: {result.stderr}"
        return result

    def start_daemon(self, name, *args):
        log = open(self.folder / "log" / f"{name}.out", "w")
        process = subprocess.Popen([program(name), *map(str, args)], env=self.env,
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   preexec_fn=end_with_parent)
        log.close()
        self.daemons.append((name, process))
        return process

    def log(self, name):
        path = self.folder / "log" / f"{name}.out"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def start(self):
        for sub in ("munge", "state", "spool", "log"):
            (self.folder / sub).mkdir(mode=0o700)
        key = self.folder / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        munge_socket = self.folder / "munge" / "munge.socket"
        assert len(str(munge_socket)) < 100, f"{munge_socket}: too long for a unix socket"
        # The node as slurmd detects it (CPUs, sockets, cores, memory), named localhost, so it
        # comes up idle on any machine.
        detected = subprocess.run([program("slurmd"), "-C"], capture_output=True, text=True,
                                  timeout=60, check=True).stdout.splitlines()[0]
        node = re.sub(r"^NodeName=\S+", "NodeName=localhost", detected)
        # Ports of its own: a system Slurm (or another test's) may hold the usual ones.
        controller_port, node_port = free_ports(2)
        self.conf.write_text("\n".join([
            "ClusterName=canrun-test",
            "SlurmctldHost=localhost",
            f"SlurmctldPort={controller_port}",
            f"SlurmdPort={node_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            # cred_expire is also how long a requeued job waits before it may start again.
            f"AuthInfo=socket={munge_socket},cred_expire=10",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            f"StateSaveLocation={self.folder / 'state'}",
            f"SlurmdSpoolDir={self.folder / 'spool'}",
            f"SlurmctldPidFile={self.folder / 'slurmctld.pid'}",
            f"SlurmdPidFile={self.folder / 'slurmd.pid'}",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none",
            "KillWait=5",
            "MinJobAge=3600",  # finished jobs stay listed by squeue for the whole test
            "SchedulerParameters=sched_interval=5",
            node + " State=UNKNOWN",
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n")
        self.start_daemon("munged", "--foreground", "--force", f"--socket={munge_socket}",
                          f"--key-file={key}", f"--pid-file={self.folder / 'munge/munged.pid'}",
                          f"--seed-file={self.folder / 'munge/munged.seed'}",
                          f"--log-file={self.folder / 'log/munged.log'}")
        wait_for("munged's socket", munge_socket.exists, 30)
        self.start_daemon("slurmctld", "-D")
        wait_for("slurmctld", lambda: "is UP" in self.command("scontrol", "ping",
                                                               check=False).stdout, 60)
        self.start_daemon("slurmd", "-D", "-N", "localhost")
        wait_for("the node to be idle", lambda: self.command(
            "sinfo", "-h", "-N", "-o", "%T", check=False).stdout.strip() == "idle", 60)

    def stop(self):
        """Cancels every job, then stops slurmd, slurmctld and munged by their process ids."""
        alive = [process for _, process in self.daemons if process.poll() is None]
        if any(name == "slurmctld" for name, process in self.daemons if process in alive):
            jobs = self.command("squeue", "-h", "-o", "%A", check=False).stdout.split()
            if jobs:
                self.command("scancel", *jobs, check=False)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and self.command(
                        "squeue", "-h", "-t", "RUNNING,COMPLETING", "-o", "%A",
                        check=False).stdout.strip():
                    time.sleep(0.5)
        for name, process in reversed(self.daemons):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    def leftover_steps(self):
        """Process ids of slurmstepd processes of this cluster still alive (none once stopped)."""
        left = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if not (entry / "cmdline").read_bytes().startswith(b"slurmstepd"):
                    continue
                if f"SLURM_CONF={self.conf}".encode() in (entry / "environ").read_bytes():
                    left.append(int(entry.name))
            except OSError:
                continue
        return left


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    assert os.geteuid() == 0, "the one-node Slurm runs its daemons as root (as set-up does on CI)"
    cluster = LocalSlurm(tmp_path_factory.mktemp("slurm").resolve())
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        left = cluster.leftover_steps()
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert not left, f"slurmstepd processes left after slurmd stopped: {left}"


def states(slurm, job):
    """Array index (or job id) → state, from squeue, for every task of `job`."""
    out = slurm.command("squeue", "-h", "-r", "-t", "all", "-j", job, "-o", "%i|%T").stdout
    return {line.split("|")[0].split("_")[-1]: line.split("|")[1]
            for line in out.splitlines() if line.strip()}


def test_a_campaign_runs_through_slurm_with_a_task_cancelled_and_requeued(slurm, canrun_bin,
                                                                        tmp_path):
    # The jobs get the submitting environment (sbatch --export=ALL).
    fleet = FleetFolder(tmp_path, canrun_bin, base_env=slurm.env, timeout=300)
    canrun = fleet.canrun
    campaign = tmp_path / "campaign"
    submitted = canrun(*fleet.campaign_args(tmp_path, "--executor", "slurm", "--slices", "2",
                                            "--parallel", "2"))
    assert submitted.returncode == 0, submitted.stderr
    assert "planned 5 items in 2 slice(s)" in submitted.stdout
    ids = re.search(r"submitted: job array (\d+) \(worker.sbatch\), collect job (\d+) "
                    r"\(collect.sbatch\)", submitted.stdout)
    assert ids, submitted.stdout
    array, collect = ids.groups()

    # --exclusive: the two tasks take the one node in turn. Once the running one's worker has
    # started a run, cancel that task while the other still waits: cancelling the last task to
    # end would fulfil the collect job's afterany at once, and Slurm 22.05 starts it before
    # `scontrol requeue` can put the task back.
    running = None

    def a_worker_started():
        nonlocal running
        now = states(slurm, array)
        assert not any(state in FINISHED for state in now.values()), now
        started = [index for index, state in now.items() if state == "RUNNING" and '"start"' in (
            (campaign / "slices" / index / "journal.jsonl").read_text()
            if (campaign / "slices" / index / "journal.jsonl").exists() else "")]
        running = started[0] if started else None
        return running is not None

    wait_for("an array task's worker to start a run", a_worker_started, 300)
    waiting = "1" if running == "0" else "0"
    assert states(slurm, array)[waiting] == "PENDING"
    status = json.loads(canrun("campaign", "status", campaign, "--json").stdout)
    assert status["slices"][int(running)]["state"] == "running"

    task = f"{array}_{running}"
    slurm.command("scancel", task)
    wait_for(f"{task} to be cancelled",
             lambda: states(slurm, array)[running] == "CANCELLED", 60)
    log = campaign / "slurm" / f"worker-{array}_{running}.out"
    print(f"after scancel {task}: {states(slurm, array)}, collect {states(slurm, collect)}\n"
          f"{log.name}:\n{log.read_text()}")
    # slurmstepd's note of the cancel, and the worker stopping on its SIGTERM (the log is
    # written anew when the task runs again).
    assert "CANCELLED AT" in log.read_text() and "interrupted" in log.read_text()
    assert states(slurm, collect) == {collect: "PENDING"}
    slurm.command("scontrol", "requeue", task)
    print(f"after scontrol requeue {task}: {states(slurm, array)}")
    assert states(slurm, array)[running] in ("PENDING", "REQUEUED", "RUNNING")

    # The collect job runs once both tasks ended, the requeued one included.
    wait_for("the collect job to end", lambda: states(slurm, collect)[collect] in FINISHED, 600)
    assert states(slurm, array) == {"0": "COMPLETED", "1": "COMPLETED"}
    assert states(slurm, collect) == {collect: "COMPLETED"}
    job = slurm.command("scontrol", "show", "job", task).stdout
    assert "Restarts=1" in job, job
    collected = (campaign / "slurm" / f"collect-{collect}.out").read_text()
    assert "5 rows of 2 done slice(s) merged" in collected, collected

    status = json.loads(canrun("campaign", "status", campaign, "--json").stdout)
    assert [s["state"] for s in status["slices"]] == ["done", "done"]
    assert sum(status["results"].values()) == len(MODELS)
    table = pd.read_parquet(tmp_path / "dataset" / "data")
    assert table.model_id.is_unique and dict(zip(table.model_id, table.result)) == MODELS
    if os.geteuid() == 0:  # the nodes box their runs as canrun test does (root: all of it)
        assert set(table[table.result != "EXCLUDED"].isolation) == {"user,net,mount,pid,pids"}
    check = canrun("dataset", "validate", tmp_path / "dataset")
    assert check.returncode == 0, check.stdout
