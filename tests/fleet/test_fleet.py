"""A fleet campaign run the way a Slurm array or a Kubernetes Indexed Job runs it, with the
worker commands started here: planned into a campaign folder and cut into slices, the scripts
and manifests written, each slice run by `canrun worker` (a duplicate refused, one killed
mid-way and requeued), its state read by `campaign status`, and collected into a dataset
with every model exactly once."""
import json
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fleet_setup import MODELS, OPTIONS, FleetFolder  # noqa: E402


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, canrun_bin):
    fleet = FleetFolder(tmp_path_factory.mktemp("fleet").resolve(), canrun_bin)
    fleet.planned = fleet.canrun(*fleet.campaign_args(
        fleet.root, "--executor", "slurm", "--slices", "2", "--parallel", "1", "--emit",
        fleet.root / "emit", "--compile-cache", fleet.root / "shared-compile-cache"))
    assert fleet.planned.returncode == 0, fleet.planned.stderr
    return fleet


def slices_of(root):
    return json.loads((root / "campaign" / "slices.json").read_text())["slices"]


def status(fleet):
    result = fleet.canrun("campaign", "status", fleet.root / "campaign", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_plan_is_cut_into_slices_and_the_scripts_say_how_to_run_them(fleet):
    root = fleet.root
    slices = slices_of(root)
    assert len(slices) == 2 and sorted(sum(slices, [])) == list(range(len(MODELS)))
    assert all(slices), "each slice has work"
    assert "planned 5 items in 2 slice(s)" in fleet.planned.stdout
    settings = json.loads((root / "campaign" / "campaign.json").read_text())
    assert settings["executor"] == {"kind": "slurm",
                                    "compile_cache": str(root / "shared-compile-cache")}
    assert settings["slices"] == 2
    assert settings["compiler_version"] and settings["library_version"]

    worker = (root / "emit" / "worker.sbatch").read_text()
    for line in ("#SBATCH --exclusive", "#SBATCH --requeue", "#SBATCH --nodes=1"):
        assert line in worker.splitlines()
    assert f"worker --campaign-dir '{root / 'campaign'}' --index \"$SLURM_ARRAY_TASK_ID\"" in worker
    submit = (root / "emit" / "submit.sh").read_text()
    assert "sbatch --parsable --array=0-1%1 " in submit
    assert "--dependency=afterany:" in submit
    collect = (root / "emit" / "collect.sbatch").read_text()
    assert f"campaign --collect '{root / 'campaign'}' --out '{root / 'dataset'}'" in collect
    for name in ("worker.sbatch", "collect.sbatch", "submit.sh"):
        check = subprocess.run(["bash", "-n", str(root / "emit" / name)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    # A folder that holds a campaign is not planned over.
    again = fleet.canrun(*fleet.campaign_args(root, "--executor", "slurm", "--emit",
                                              root / "emit2"))
    assert again.returncode == 2 and "already holds a campaign" in again.stderr


def test_workers_run_their_slices_and_collect_merges_each_model_once(fleet):
    root, canrun = fleet.root, fleet.canrun
    assert [s["state"] for s in status(fleet)["slices"]] == ["waiting", "waiting"]

    # Slice 1's worker, killed once it has started a run, then run again (Slurm's requeue).
    command = [fleet.bin, "worker", "--campaign-dir", str(root / "campaign"), "--json"]
    first = subprocess.Popen(command + ["--index", "1"], env=fleet.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    journal = root / "campaign" / "slices" / "1" / "journal.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and '"start"' not in (journal.read_text() if journal.exists() else ""):
        time.sleep(0.1)
    assert status(fleet)["slices"][1]["state"] == "running"
    # A duplicate of a running slice is refused and changes nothing.
    duplicate = canrun("worker", "--campaign-dir", root / "campaign", "--index", "1")
    assert duplicate.returncode == 1 and "is being run by another worker" in duplicate.stderr
    first.send_signal(signal.SIGKILL)
    first.wait()
    # Nothing of a killed slice reaches the dataset.
    early = canrun("campaign", "--collect", root / "campaign", "--out", root / "dataset", "--json")
    assert early.returncode == 1
    assert json.loads(early.stdout)["merged_rows"] == 0

    requeued = canrun("worker", "--campaign-dir", root / "campaign", "--index", "1", "--json")
    assert requeued.returncode == 0, requeued.stderr
    env = dict(fleet.env, SLURM_ARRAY_TASK_ID="0")  # the index as Slurm gives it
    zero = canrun("worker", "--campaign-dir", root / "campaign", "--json", env=env)
    assert zero.returncode == 0, zero.stderr
    ran = {item["model_id"]: item["result"] for out in (zero, requeued)
           for item in json.loads(out.stdout)["items"]}
    assert ran == MODELS

    state = status(fleet)
    assert [s["state"] for s in state["slices"]] == ["done", "done"] and state["eta_s"] == 0
    assert sum(state["results"].values()) == len(MODELS)

    for attempt in range(2):  # collecting again changes nothing
        collected = canrun("campaign", "--collect", root / "campaign", "--out", root / "dataset")
        assert collected.returncode == 0, collected.stderr
        assert "5 rows of 2 done slice(s) merged" in collected.stdout
        table = pd.read_parquet(root / "dataset" / "data")
        assert dict(zip(table.model_id, table.result)) == MODELS and table.model_id.is_unique
    # The compiler's own count: this first campaign on a fresh cache compiled its graphs.
    assert state["compile_cache"]["misses"] > 0
    logs = list((root / "dataset" / "logs").rglob("*.log"))
    assert [p.parent.name for p in logs] == ["unknown-arch"]
    check = canrun("dataset", "validate", root / "dataset")
    assert check.returncode == 0, check.stdout


def test_a_worker_refuses_what_it_cannot_run(fleet):
    root, canrun = fleet.root, fleet.canrun
    beyond = canrun("worker", "--campaign-dir", root / "campaign", "--index", "7")
    assert beyond.returncode == 2 and "has slices 0 to 1" in beyond.stderr
    nothing = canrun("worker", "--campaign-dir", root / "nowhere", "--index", "0")
    assert nothing.returncode == 2 and "holds no planned campaign" in nothing.stderr
    env = {k: v for k, v in fleet.env.items()
           if k not in ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX")}
    unnamed = canrun("worker", "--campaign-dir", root / "campaign", env=env)
    assert unnamed.returncode == 2 and "--index is required" in unnamed.stderr


def test_kubernetes_manifests_are_an_indexed_job_and_its_worker_runs(fleet, tmp_path):
    canrun = fleet.canrun
    k8s = ["--executor", "k8s", "--slices", "2", "--image", "example/canrun:1",
           "--emit", tmp_path / "k8s"]
    planned = canrun(*fleet.campaign_args(
        tmp_path, *k8s, options=["--backend", "neuron", "--python", sys.executable, *OPTIONS[2:]]))
    if planned.returncode != 0 and "neuronx-cc" in planned.stderr:
        # No neuron stack here: plan the same on the cpu backend.
        planned = canrun(*fleet.campaign_args(tmp_path, *k8s))
    assert planned.returncode == 0, planned.stderr
    job = json.loads((tmp_path / "k8s" / "job.json").read_text())
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == 2
    assert spec["backoffLimitPerIndex"] >= 1 and "podFailurePolicy" in spec
    container = spec["template"]["spec"]["containers"][0]
    assert container["command"][-1] == "$(JOB_COMPLETION_INDEX)"
    # Index 0's command, run here as the pod would (paths on the volume mapped to this folder).
    command = [fleet.bin if word == "canrun" else word for word in container["command"]]
    command = [str(tmp_path / "campaign") if word == "/campaign/campaign" else word
               for word in command]
    command[-1] = "0"
    ran = subprocess.run(command, env=fleet.env, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, shlex.join(command) + "\n" + ran.stderr


def test_another_node_compiles_nothing_the_fleet_compiled(fleet, tmp_path):
    """The same models in a new campaign on another node (a fresh canrun cache): its worker
    pulls the graphs the first campaign's workers pushed to the shared compile cache, so every
    graph is a hit by TorchInductor's own count, and `cache stats` reports the hit rate."""
    root = fleet.root
    shared = root / "shared-compile-cache"
    if not shared.is_dir():
        pytest.fail("runs after test_workers_run_their_slices_and_collect_merges_each_model_once")
    [version] = [p.name for p in shared.iterdir()]
    assert version.startswith("inductor-") and any(shared.rglob("*"))
    node = dict(fleet.env, CANRUN_CACHE=str(tmp_path / "node-b-cache"))
    again = tmp_path / "campaign"

    def on_node(*args):
        return fleet.canrun(*args, env=node)

    planned = on_node(*fleet.campaign_args(tmp_path, "--executor", "slurm", "--slices", "1",
                                           "--emit", tmp_path / "emit", "--compile-cache", shared))
    assert planned.returncode == 0, planned.stderr
    ran = on_node("worker", "--campaign-dir", again, "--index", "0")
    assert ran.returncode == 0, ran.stderr
    assert f"copied from {shared / version} to" in ran.stderr
    state = json.loads(on_node("campaign", "status", again, "--json").stdout)
    cache = state["compile_cache"]
    assert cache["misses"] == 0 and cache["hits"] > 0, cache
    stats = on_node("cache", "stats", "--campaign", again, "--json")
    assert stats.returncode == 0, stats.stderr
    report = json.loads(stats.stdout)
    assert report["campaign"]["hit_rate"] == 1.0 and report["total"]["entries"] > 0
    text = on_node("campaign", "status", again).stdout
    assert f"compile cache: {cache['hits']} of {cache['hits']} graphs found in the cache (100 %)" in text
