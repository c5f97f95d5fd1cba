"""Shared fixtures for tests that drive the real canrun binary as a subprocess."""
import json
import os
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def canrun_bin() -> Path:
    path = Path(os.environ["CANRUN_BIN"])
    assert path.is_file(), f"CANRUN_BIN={path} is not a file; run through ctest"
    return path


@pytest.fixture
def canrun(canrun_bin):
    """Run canrun with arguments; returns the CompletedProcess (text mode)."""

    def run(*args, env=None, input=None):
        full_env = dict(os.environ, NO_COLOR="1")
        if env:
            full_env.update(env)
        return subprocess.run([str(canrun_bin), *map(str, args)], capture_output=True,
                              text=True, env=full_env, input=input, timeout=120)

    return run


@pytest.fixture(scope="session")
def write_rows_bin() -> Path:
    return Path(os.environ["CANRUN_WRITE_ROWS"])


def verdict_row(model_id="Qwen/Qwen3-0.6B", result="PASS", *, backend="neuron",
                compiler="neuronx-cc", compiler_version="2.16.372.0+4a9b2326",
                library_version="5.18.0", task="text-generation", started_at="2026-12-01T10:00:00Z",
                **columns):
    """A verdict row as canrun's JSON (column → value); every column present."""
    row = {
        "model_id": model_id, "revision": "c1b7e3d4a5f60718293a4b5c6d7e8f9012345678",
        "task": task, "backend": backend, "device": {"neuron": "trn2"}.get(backend, backend),
        "compiler": compiler, "compiler_version": compiler_version, "library": "transformers",
        "library_version": library_version, "result": result, "error": None,
        "error_signature": None, "exclusion_reason": None, "cores": 1, "parallelism": "none",
        "weights_bytes": 1_503_238_553, "runtime_s": 212.5, "load_s": 3.25, "compile_s": 180.0,
        "generate_s": 1.5, "ttft_s": 0.04, "decode_tokens_per_s": 48.75,
        "peak_device_memory_bytes": 3_221_225_472, "new_tokens": 32,
        "output_text": "The capital of France is Paris.", "verification": "reference",
        "match_tokens": 32, "judge_score": None, "judge_threshold": None, "judge_model": None,
        "agreement": None, "judge_parts": None,
        "stack": {"python": "3.11.7", "torch": "2.13.0", "transformers": library_version,
                  compiler: compiler_version},
        "packages": ["torch-neuronx==2.13.3.0"], "run_py": "print('hi')\n",
        "started_at": started_at, "host": "node-1", "canrun_version": "0.1.0",
    }
    if result == "EXCLUDED":
        row.update(exclusion_reason="gated", cores=None, runtime_s=None, output_text=None,
                   verification=None, match_tokens=None)
    elif result != "PASS":
        row.update(error=f"RuntimeError: {result.lower()} happened", error_signature=result.lower(),
                   output_text=None, match_tokens=None)
    row.update(columns)
    return row


@pytest.fixture
def write_rows(write_rows_bin):
    """Upsert rows into a dataset folder with the C++ writer."""

    def write(dataset_dir, rows):
        lines = "".join(json.dumps(row) + "\n" for row in rows)
        result = subprocess.run([str(write_rows_bin), str(dataset_dir)], input=lines, text=True,
                                capture_output=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return dataset_dir

    return write
