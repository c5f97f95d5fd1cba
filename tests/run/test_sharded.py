"""Sharded runs on the CPU (gloo): canrun test plans a model onto several cores when a small
memory per core says so, run.py starts its own ranks (plain `python run.py`, no torchrun),
the judge model verifies the text, and a rank that dies takes the others with it. (The real
SmolLM2-135M passing on 3 cores by the judge and the agreement is the demo's: tests/demo.)"""
import json
import os
from pathlib import Path
import re
import signal
import subprocess

import pytest

from conftest import SOURCE, fault_profile

# verify::kAgreementThreshold (src/verify/verification.h): a sharded run below it fails.
AGREEMENT_THRESHOLD = float(re.search(
    r"kAgreementThreshold = ([0-9.]+);",
    (SOURCE / "src/verify/verification.h").read_text()).group(1))


@pytest.fixture
def canrun(canrun_bin, hf_home, cache_dir):
    """Runs the canrun binary with the fixture cache; returns the CompletedProcess."""

    def run(*args, timeout=1200):
        env = dict(os.environ, HF_HOME=str(hf_home), NO_COLOR="1", CANRUN_CACHE=str(cache_dir))
        env.pop("HF_HUB_CACHE", None)
        return subprocess.run([str(canrun_bin), *map(str, args)], capture_output=True, text=True,
                              env=env, timeout=timeout)

    return run


def planned(canrun, model, *memory):
    result = canrun("plan", model, "--json", *memory)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def memory_for_two_cores(canrun, model):
    """A memory per core that one core cannot hold and two can: 0.6 of the weights each."""
    weights = planned(canrun, model)["weights_bytes"]
    return ("--memory-per-core", f"{0.6 * weights / 2**30:.9f}", "--reserve", "0")


def test_moe_without_tp_plan_runs_expert_parallel(canrun, canrun_test):
    # PhiMoE has an expert-parallel plan and no tensor-parallel one in transformers 5.x.
    memory = ("--memory-per-core", "0.0007", "--reserve", "0")
    plan = planned(canrun, "canrun-fixtures/tiny-phimoe", *memory)
    assert (plan["cores"], plan["parallelism"], plan["tp_plan"]) == (2, "ep", False), plan
    code, row, err = canrun_test("canrun-fixtures/tiny-phimoe", *memory)
    assert row is not None, err
    assert (row["cores"], row["parallelism"]) == (2, "ep")
    assert "enable_expert_parallel=True" in row["run_py"]
    assert row["new_tokens"] == 32
    # Experts split over two ranks compute what one core does: every token equals the reference,
    # and fed the reference's tokens, it predicts each of them.
    assert row["match_tokens"] == 32
    assert row["agreement"] == 1.0 and row["verification"] == "judge+agreement"
    # Random weights: the text is not English, and the judge says so.
    assert row["result"] == "FAIL_JUDGE" and code == 1
    assert row["judge_score"] < row["judge_threshold"]


def test_random_dense_model_sharded_fails_the_judge(canrun, canrun_test, tmp_path):
    model = "canrun-fixtures/tiny-qwen2"
    memory = memory_for_two_cores(canrun, model)
    assert (planned(canrun, model, *memory)["cores"], planned(canrun, model, *memory)["parallelism"]) == (2, "tp")
    # The graph runs uncompiled (what fails is the text, whatever compiled it; the real SmolLM2
    # passes on 3 cores through TorchInductor in the demo, tiny PhiMoE on 2 in the test above).
    code, row, err = canrun_test(model, *memory, "--backend", fault_profile(tmp_path, "passing"))
    assert row is not None, err
    assert code == 1
    assert row["result"] == "FAIL_JUDGE"
    assert (row["cores"], row["parallelism"], row["verification"]) == (2, "tp", "judge+agreement")
    assert row["judge_score"] < row["judge_threshold"]
    assert "below its threshold" in row["error"]
    assert row["match_tokens"] == 32  # the shards compute what one core does
    assert row["agreement"] == 1.0  # so the judge decided


def test_rank_with_slightly_wrong_weights_fails_by_agreement(canrun, canrun_test, tmp_path):
    # Rank 1's shard of every weight is off by ~5 %: its partial sums feed every all-reduce
    # slightly wrong, the text still looks like the model's (whatever the judge says of it), and
    # the teacher-forced agreement with the CPU reference is what fails the run.
    model = "canrun-fixtures/tiny-llama"
    profile = fault_profile(tmp_path, "perturbing_rank_1", {"CANRUN_FAULT_NOISE": "0.05"})
    code, row, err = canrun_test(model, "--backend", profile, *memory_for_two_cores(canrun, model))
    assert row is not None, err
    assert code == 1
    assert (row["cores"], row["parallelism"]) == (2, "tp")
    assert row["result"] == "FAIL_MISMATCH", row["error"]
    assert row["verification"] == "judge+agreement"
    assert row["agreement"] < AGREEMENT_THRESHOLD
    assert f"teacher-forced agreement {row['agreement']:.3f} below threshold {AGREEMENT_THRESHOLD:.2f}" in row["error"]
    assert row["error_signature"] == "FAIL_MISMATCH | teacher-forced agreement below threshold"
    assert row["judge_score"] is not None  # the judge was asked too; agreement decided


def test_a_tensor_parallel_run_finds_its_graphs_in_the_compile_cache_next_time(canrun_bin, hf_home, tmp_path):
    # The rendered run.py of tiny-llama over 2 ranks, run twice into one empty compile cache, as
    # a user (or a fleet sharing a cache) would: the second run compiles nothing. (Its DeviceMesh
    # used to put an address into every graph's cache key: each run missed every graph.)
    env = dict(os.environ, HF_HOME=str(hf_home), HF_HUB_OFFLINE="1",
               TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "graphs"))
    env.pop("HF_HUB_CACHE", None)
    script = subprocess.run([str(canrun_bin), "render", "canrun-fixtures/tiny-llama", "--cores", "2",
                             "--parallelism", "tp", "--cache", str(tmp_path / "cache")],
                            capture_output=True, text=True, env=env, timeout=300, check=True).stdout
    assert "tp_plan" in script
    (tmp_path / "run.py").write_text(script)
    python = os.environ.get("CANRUN_PYTHON", "python3")
    runs = []
    for _ in range(2):
        result = subprocess.run([python, "run.py"], cwd=tmp_path, capture_output=True, text=True,
                                env=env, timeout=600)
        line = [l for l in result.stdout.splitlines() if l.startswith("CANRUN_RESULT ")][-1]
        runs.append(json.loads(line.removeprefix("CANRUN_RESULT ")))
        assert result.returncode == 0 and runs[-1]["ok"], result.stderr[-3000:]
    first, second = runs
    assert first["compile_cache"]["misses"] > 0 and first["compile_cache"]["hits"] == 0, first["compile_cache"]
    assert second["compile_cache"] == {"hits": first["compile_cache"]["misses"], "misses": 0}
    assert second["tokens"] == first["tokens"]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_rank_crash_stops_every_rank(canrun, canrun_test, tmp_path):
    model = "canrun-fixtures/tiny-llama"
    marker = f"CANRUN_FAULT_RANKS_{os.getpid()}"
    profile = fault_profile(tmp_path, "crashing_rank_1",
                            {"CANRUN_FAULT_PIDS": "pids", "CANRUN_FAULT_GOOD_CALLS": "4", marker: "1"})
    code, row, err = canrun_test(model, "--backend", profile, *memory_for_two_cores(canrun, model))
    assert row is not None, err
    assert code == 1
    assert row["result"] == "CRASH"
    assert (row["cores"], row["parallelism"]) == (2, "tp")
    # Rank 0 reported rank 1's death, not its own broken collective.
    assert f"rank 1 of 2 failed first" in row["error"]
    assert f"killed by signal {int(signal.SIGKILL)}" in row["error"]
    notes = {}
    for note in (Path(row["run_dir"]) / "pids").iterdir():
        rank, pid, pgid = map(int, note.read_text().split())
        notes[rank] = (pid, pgid)
    assert sorted(notes) == [0, 1], notes
    assert notes[0][1] == notes[1][1]  # the ranks share one process group, canrun's for run.py
    if row["isolation"] == "none":  # else the numbers are the box's, not the host's
        assert not group_alive(notes[0][1])
        assert not any(alive(pid) for pid, _ in notes.values())
    assert no_process_with(marker)


def no_process_with(marker):
    """No process on the machine has `marker` in its environment."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as env:
                if marker.encode() in env.read():
                    return False
        except OSError:
            pass
    return True
