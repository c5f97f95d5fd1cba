"""canrun plan on the fixture checkpoints: the plan, its explanation, and bad input."""
import json
import os
import subprocess

import pytest

SOURCE = os.environ["CANRUN_SOURCE_DIR"]
FIXTURES = os.path.join(SOURCE, ".cache", "fixtures")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One canrun cache for the module: the stack is probed once (its versions and which model
    types have parallel plans), not once per test."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def plan(canrun, cache):
    def run(*args):
        return canrun("plan", *args, env={"HF_HOME": FIXTURES, "HF_HUB_OFFLINE": "1",
                                          "CANRUN_CACHE": str(cache)})
    return run


def test_smollm2_fits_one_cpu_core(plan):
    result = plan("HuggingFaceTB/SmolLM2-135M-Instruct", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["cores"] == 1 and out["parallelism"] == "none"
    assert out["weights_bytes"] == 269030016  # 134,515,008 bf16 parameters, from the headers
    assert out["weights_bytes_by_dtype"] == {"BF16": 269030016}
    assert out["tp_plan"] is True and out["model_type"] == "llama"


def test_small_cpu_cores_shard_smollm2_with_tp(plan):
    result = plan("HuggingFaceTB/SmolLM2-135M-Instruct", "--memory-per-core", "0.2", "--reserve", "0.05")
    assert result.returncode == 0, result.stderr
    assert "on cpu: 3 cores, parallelism tp" in result.stdout
    assert "2 cores would hold it but 9 attention / 3 KV heads do not divide by 2" in result.stdout


def test_neuron_and_a_local_folder(plan):
    snapshot = next(iter(os.scandir(os.path.join(
        FIXTURES, "hub", "models--HuggingFaceTB--SmolLM2-135M-Instruct", "snapshots")))).path
    result = plan(snapshot, "--backend", "neuron", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["backend"] == "neuron" and out["cores"] == 1
    assert out["budget_bytes"] == 22 * 1024 ** 3


def test_no_tp_plan_is_excluded_with_the_reason(plan):
    result = plan("canrun-fixtures/tiny-gpt2", "--memory-per-core", "0.0003", "--reserve", "0")
    assert result.returncode == 1
    assert "excluded as no_parallel_plan" in result.stdout
    assert "no tensor-parallel plan for gpt2" in result.stdout


def test_bad_input(plan):
    assert plan("org/a;b").returncode == 2
    missing = plan("canrun-fixtures/nothing-here")  # offline, and not in the cache
    assert missing.returncode != 0
    assert "is not in the HF cache" in missing.stderr
    bad_reserve = plan("canrun-fixtures/tiny-gpt2", "--memory-per-core", "1", "--reserve", "2")
    assert bad_reserve.returncode == 2
    assert "leaves nothing" in bad_reserve.stderr
