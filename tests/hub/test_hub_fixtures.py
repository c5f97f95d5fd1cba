"""canrun hub info on the real checkpoints of the model fixtures (a local HF cache, offline):
SmolLM2-135M-Instruct and the tiny models. The facts must equal the bytes of the tensors as
safetensors loads them."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = Path(os.environ.get("CANRUN_FIXTURES_DIR", SOURCE / ".cache" / "fixtures"))
MODELS = ["HuggingFaceTB/SmolLM2-135M-Instruct", "canrun-fixtures/tiny-llama",
          "canrun-fixtures/tiny-gpt2", "canrun-fixtures/tiny-qwen3"]
ST_DTYPES = {"torch.bfloat16": "BF16", "torch.float16": "F16", "torch.float32": "F32",
             "torch.int64": "I64", "torch.bool": "BOOL", "torch.uint8": "U8"}


@pytest.fixture(scope="module")
def hf_home():
    """The fixture cache, built by the fixtures_build ctest entry (or here, when run alone)."""
    if not (FIXTURES / "hub").is_dir():
        python = os.environ.get("CANRUN_PYTHON", sys.executable)
        subprocess.run([python, str(SOURCE / "tests/fixtures/build_models.py"), str(FIXTURES)],
                       check=True)
    return FIXTURES


@pytest.mark.parametrize("model_id", MODELS)
def test_facts_equal_the_bytes_of_the_tensors(canrun, hf_home, model_id):
    from huggingface_hub import snapshot_download
    from safetensors.torch import load_file

    folder = Path(snapshot_download(model_id, cache_dir=hf_home / "hub", local_files_only=True))
    result = canrun("hub", "info", model_id, "--json", "--tensors",
                    env={"HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": ""})
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["weights"]["source"] == "hf-cache" and out["sha"] == folder.name

    expected, by_dtype = {}, {}
    for shard in sorted(folder.glob("*.safetensors")):
        for name, tensor in load_file(shard).items():
            nbytes = tensor.numel() * tensor.element_size()
            expected[name] = (nbytes, list(tensor.shape), ST_DTYPES[str(tensor.dtype)], shard.name)
            by_dtype[ST_DTYPES[str(tensor.dtype)]] = by_dtype.get(
                ST_DTYPES[str(tensor.dtype)], 0) + nbytes
    got = {t["name"]: (t["bytes"], t["shape"], t["dtype"], t["file"]) for t in out["tensors"]}
    assert got == expected
    assert out["weights"]["bytes"] == sum(v[0] for v in expected.values())
    assert out["weights"]["bytes_by_dtype"] == by_dtype
    assert out["weights"]["expert_bytes"] == 0
    config = json.loads((folder / "config.json").read_text())
    assert out["config"]["architectures"] == config["architectures"]
    assert out["config"]["num_attention_heads"] == config.get(
        "num_attention_heads", config.get("n_head"))
