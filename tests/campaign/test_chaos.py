"""A campaign killed with SIGKILL at ten moments (seeded, so a failure can be replayed with
CANRUN_CHAOS_SEED), resumed each time: in the end every model has exactly one verdict, every
file validates, and no process of a run is left behind."""
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = SOURCE / ".cache" / "fixtures"
MODELS = {"canrun-fixtures/tiny-llama": "PASS", "canrun-fixtures/tiny-qwen3": "PASS",
          "canrun-fixtures/tiny-mistral": "PASS", "canrun-fixtures/unknown-arch": "FAIL_LOAD",
          "canrun-fixtures/no-weights": "EXCLUDED"}


def processes_of(campaign_dir):
    """Live processes whose environment names this campaign (CANRUN_CAMPAIGN)."""
    mark = f"CANRUN_CAMPAIGN={campaign_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if mark in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def test_kill_nine_at_ten_moments_then_resume(canrun_bin, tmp_path):
    subprocess.run([sys.executable, str(SOURCE / "tests/fixtures/build_models.py"), str(FIXTURES)], check=True)
    seed = int(os.environ.get("CANRUN_CHAOS_SEED", "20261204"))
    moments = random.Random(seed).sample([x / 10 for x in range(3, 120)], 10)
    models = tmp_path / "models.txt"
    models.write_text("\n".join(MODELS) + "\n")
    dataset = tmp_path / "dataset"
    campaign_dir = (tmp_path / "campaign").resolve()
    env = dict(os.environ, HF_HOME=str(FIXTURES), HF_HUB_OFFLINE="1", NO_COLOR="1",
               CANRUN_CACHE=str(tmp_path / "cache"))
    env.pop("HF_HUB_CACHE", None)
    command = [str(canrun_bin), "campaign", "--backend", "cpu", "--tasks", "text-generation",
               "--models", str(models), "--out", str(dataset), "--campaign-dir", str(campaign_dir),
               "--tokens", "2", "--no-perf", "--long-tokens", "0", "--json"]
    killed_at = []
    for attempt, moment in enumerate(moments):
        process = subprocess.Popen(command + (["--resume"] if attempt else []), env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            process.wait(timeout=moment)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
            killed_at.append(moment)
    final = subprocess.run(command + ["--resume"], env=env, capture_output=True, text=True, timeout=1200)
    assert final.returncode == 0, f"seed {seed}, kills at {killed_at}:\n{final.stderr[-3000:]}"
    out = json.loads(final.stdout)
    assert {item["model_id"]: item["result"] for item in out["items"]} == MODELS, f"seed {seed}"
    table = pd.read_parquet(dataset / "data")
    assert sorted(table.model_id) == sorted(MODELS) and table.model_id.is_unique, f"seed {seed}"
    assert dict(zip(table.model_id, table.result)) == MODELS
    check = subprocess.run([str(canrun_bin), "dataset", "validate", str(dataset)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    results = list((campaign_dir / "slices" / "0" / "results").glob("*.json"))
    assert len(results) == len(MODELS)
    assert processes_of(campaign_dir) == [], f"seed {seed}: processes of runs left behind"
    assert len(killed_at) >= 5, f"seed {seed}: only {len(killed_at)} kills landed mid-campaign"


def test_sigterm_stops_a_campaign_and_its_running_trial(canrun_bin, tmp_path):
    """`kill`, `timeout`, Slurm and Kubernetes stop a program with SIGTERM: the campaign stops as
    on Ctrl-C (exit 130), ending the trial it was running instead of leaving it to run on."""
    models = tmp_path / "models.txt"
    models.write_text("canrun-fixtures/tiny-llama\n")
    campaign_dir = (tmp_path / "campaign").resolve()
    env = dict(os.environ, HF_HOME=str(FIXTURES), HF_HUB_OFFLINE="1", NO_COLOR="1",
               CANRUN_CACHE=str(tmp_path / "cache"))
    env.pop("HF_HUB_CACHE", None)
    process = subprocess.Popen([str(canrun_bin), "campaign", "--backend", "cpu", "--tasks", "text-generation",
                                "--models", str(models), "--out", str(tmp_path / "dataset"),
                                "--campaign-dir", str(campaign_dir)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    said = []
    for line in process.stderr:  # until a run of the trial is under way
        said.append(line)
        if "canrun: running " in line or "running the CPU reference" in line:
            break
    deadline = time.monotonic() + 30
    while not processes_of(campaign_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_of(campaign_dir), "".join(said)
    process.send_signal(signal.SIGTERM)
    said.append(process.stderr.read())
    assert process.wait(timeout=120) == 130, "".join(said)
    assert processes_of(campaign_dir) == [], "processes of the run left behind"
