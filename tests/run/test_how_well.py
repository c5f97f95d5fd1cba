"""How well a PASS runs (issue 36): the eager baseline measured in the same run.py process before
compiling (speedup, memory ratio), and the long generation's speed and teacher-forced agreement
over 128 tokens, which tells a model that drifts after the 32-token check from one that does not.
(The demo's every PASS has both, measured in full: tests/demo/test_demo.py.)"""
import json

from conftest import fault_profile

MODEL = "canrun-fixtures/tiny-llama"


def test_a_backend_wrong_past_position_40_passes_the_check_and_is_reported_drifting(
        canrun_test, canrun, tmp_path):
    # Right until the cache position passes 40 (it reads the position it is given, it does not
    # count calls): the 32-token check from a 6-token prompt ends before it, the long generation
    # goes past it. Its eager baseline is cut at its first token (eager_max_s of a microsecond),
    # which the row says.
    profile = fault_profile(tmp_path, "drifting")
    profile.write_text(profile.read_text() + "\n[perf]\neager_max_s = 1e-6\n")
    code, printed, err = canrun_test(MODEL, "--backend", profile, "--out", tmp_path / "ds",
                                     printed=True, how_well=True)
    assert code == 0, err
    assert "result    PASS (32 of 32 tokens equal to the CPU reference)" in printed
    assert "DRIFTS after token 34" in printed
    assert "graph(s) anew" not in err  # the long generation reused the first call's graphs
    rows = json.loads(canrun("dataset", "show", tmp_path / "ds", "--json").stdout)
    assert len(rows) == 1
    row = rows[0]
    assert row["result"] == "PASS" and row["agreement"] == 1.0
    # The long generation: 128 tokens more, on the same compiled graphs; 6 prompt tokens, so the
    # 35th generated token is the first whose input sits past position 40.
    assert row["long_tokens"] == 128 and row["long_decode_tokens_per_s"] > 0
    assert row["long_agreement"] < 0.9 and row["drifts_after"] == 34
    # The eager baseline ran first and was cut: the row says so, and its memory was read.
    assert row["eager_note"].startswith("cut at 1e-06 s: the eager baseline generated 1 of 2 tokens")
    # One token made: no decode speed to compare with, so no speedup; its first token was timed.
    assert row["eager_throughput"] is None and row["speedup"] is None
    assert row["eager_ttft_s"] > 0
    # On cpu, peak memory is the process tree's maximum resident size, which only grows: the
    # compiled peak includes the eager run's, so the ratio is at most 1, and the row says how.
    assert row["memory_measure"] == "rss"
    assert 0 < row["eager_peak_memory_bytes"] <= row["peak_device_memory_bytes"]
    assert row["memory_ratio"] == row["eager_peak_memory_bytes"] / row["peak_device_memory_bytes"]
    assert "PERF = True" in row["run_py"] and "LONG_TOKENS = 128" in row["run_py"]
    shown = canrun("dataset", "show", tmp_path / "ds").stdout
    assert "drifts after token 34" in shown and "long generation: 1 of 1 drifts" in shown
