"""canrun test against fault-injecting backends: each failure gets its exact verdict."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import fault_profile

MODEL = "canrun-fixtures/tiny-llama"
TOKENS = 32


def no_process_of(marker):
    """No process on the machine has `marker` in its environment or command line."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as env:
                if marker.encode() in env.read():
                    found.append(pid)
        except OSError:
            pass
    return found == []


def test_compile_failure(canrun_test, tmp_path):
    code, row, err = canrun_test(MODEL, "--backend", fault_profile(tmp_path, "raising"))
    assert code == 1, err
    assert row["result"] == "FAIL_COMPILE"
    assert "refuses to compile" in row["error"]
    assert row["error_signature"].startswith("BackendCompilerFailed")


def test_perturbed_logits_mismatch_with_match_tokens(canrun_test, tmp_path):
    # run.py calls generate twice (the first call compiles; on transformers 5 the second compiles
    # nothing new, so it is the one measured): TOKENS calls, then K good ones.
    good = 5
    profile = fault_profile(tmp_path, "perturbing", {"CANRUN_FAULT_GOOD_CALLS": str(TOKENS + good)})
    code, row, err = canrun_test(MODEL, "--backend", profile)
    assert code == 1, err
    assert row["result"] == "FAIL_MISMATCH"
    assert row["match_tokens"] == good
    assert row["new_tokens"] == TOKENS
    assert f"token {good + 1} of {TOKENS} differs" in row["error"]


def test_timeout_kills_every_process(canrun_test, tmp_path):
    marker = f"CANRUN_FAULT_MARK_{os.getpid()}"
    profile = fault_profile(tmp_path, "sleeping", {marker: "1"})
    code, row, err = canrun_test(MODEL, "--backend", profile, "--timeout", "25")
    assert code == 1, err
    assert row["result"] == "TIMEOUT"
    assert "time limit of 25 s" in row["error"]
    assert no_process_of(marker)


def test_signal_is_a_crash(canrun_test, tmp_path):
    marker = f"CANRUN_FAULT_KILL_{os.getpid()}"
    code, row, err = canrun_test(MODEL, "--backend", fault_profile(tmp_path, "killing", {marker: "1"}))
    assert code == 1, err
    assert row["result"] == "CRASH"
    assert f"killed by signal {int(signal.SIGKILL)}" in row["error"]
    assert no_process_of(marker)


def test_out_of_memory(canrun_test, tmp_path):
    code, row, err = canrun_test(MODEL, "--backend", fault_profile(tmp_path, "exhausting", {"CANRUN_FAULT_ALLOC_MB": "96"}))
    assert code == 1, err
    assert row["result"] == "FAIL_OOM"
    assert "CUDA out of memory" in row["error"]


def test_broken_reference(canrun_test, tmp_path):
    reference = (tmp_path / "broken-reference.toml")
    text = open(os.path.join(os.environ["CANRUN_SOURCE_DIR"], "backends", "reference.toml")).read()
    reference.write_text(text.replace('packages = [', 'import = ["canrun_no_such_module"]\npackages = ['))
    code, row, err = canrun_test("canrun-fixtures/tiny-qwen2", "--reference-backend", reference,
                                 "--backend", fault_profile(tmp_path, "passing"))
    assert code == 1, err
    assert row["result"] == "REFERENCE_FAIL"
    assert "the CPU reference failed (FAIL_LOAD)" in row["error"]
    assert "canrun_no_such_module" in row["error"]


def test_stdout_flood_is_bounded_and_verdict_right(canrun_bin, hf_home, cache_dir, tmp_path):
    profile = fault_profile(tmp_path, "flooding", {"CANRUN_FAULT_FLOOD_MB": "300"})
    env = dict(os.environ, HF_HOME=str(hf_home), NO_COLOR="1")
    proc = subprocess.Popen([str(canrun_bin), "test", MODEL, "--json", "--cache", str(cache_dir), "--backend",
                             str(profile), "--no-perf", "--long-tokens", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak_kib = 0
    while proc.poll() is None:  # canrun's own peak resident memory (VmHWM), sampled
        try:
            with open(f"/proc/{proc.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        peak_kib = max(peak_kib, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    row = json.loads(out)
    assert row["result"] == "PASS"
    assert row["stdout_bytes"] >= 300 << 20
    assert os.path.getsize(os.path.join(row["run_dir"], "stdout.txt")) <= 1 << 20  # the kept tail
    assert 0 < peak_kib < 100 * 1024, f"canrun peaked at {peak_kib} KiB while 300 MiB flowed through"
