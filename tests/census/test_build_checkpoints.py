"""census/build_checkpoints.py, the tiny checkpoints of every model type, as run by a stack's own
Python: what the census of tests/census/census_run.py built (CANRUN_PYTHON, transformers
5.18.0), and the generator run alone (its listing; the 4.57.6 stack where scripts/setup.sh
made it)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SCRIPT = SOURCE / "census" / "build_checkpoints.py"
PYTHON = os.environ.get("CANRUN_PYTHON", sys.executable)
OLD_STACK = SOURCE / ".cache" / "stacks" / "transformers-4.57.6" / "bin" / "python"


def run(*args, python=PYTHON):
    return subprocess.run([str(python), str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=300)


def test_list_tells_decoder_only_types_from_other_tasks():
    result = run("--list", "--tasks", "text-generation,fill-mask", "--types", "llama,bart,bert,phimoe")
    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)
    assert listing["transformers"] == "5.18.0"
    kinds = {row["model_type"]: row for row in listing["tasks"]["text-generation"]}
    assert kinds["llama"] == {"model_type": "llama", "class": "LlamaForCausalLM", "kind": "decoder-only"}
    assert kinds["phimoe"]["kind"] == "decoder-only"
    assert kinds["bart"]["kind"] == "encoder-decoder" and kinds["bart"]["other_task"] == "text2text-generation"
    assert kinds["bert"]["kind"] == "encoder" and kinds["bert"]["other_task"] == "fill-mask"
    assert [row["model_type"] for row in listing["tasks"]["fill-mask"]] == ["bart", "bert"]


def test_builds_checkpoints_in_the_cache_layout_with_their_claims(census):
    qwen2, phimoe = census.entries["qwen2"], census.entries["phimoe"]
    assert qwen2["status"] == phimoe["status"] == "built"
    assert qwen2["model_id"] == "canrun-census/qwen2" and qwen2["task"] == "text-generation"
    assert qwen2["claims"] == {"can_compile_fullgraph": True, "tp_plan": True, "ep_plan": False}
    assert phimoe["claims"]["tp_plan"] is False and phimoe["claims"]["ep_plan"] is True
    for entry in (qwen2, phimoe):
        repo = census.hf / "hub" / ("models--" + entry["model_id"].replace("/", "--"))
        assert (repo / "refs" / "main").read_text() == entry["revision"]
        snapshot = repo / "snapshots" / entry["revision"]
        assert all((snapshot / name).is_symlink() for name in
                   ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"))
        config = json.loads((snapshot / "config.json").read_text())
        assert config["canrun_census"]["model_type"] == entry["model_type"]
        assert config["vocab_size"] == 320 and config["num_hidden_layers"] == 2
        assert 0 < entry["size_bytes"] < 4 * 2**20
        assert entry["logits_flat"] is False and len(entry["tokens"]) >= 1
    assert census.manifest["transformers"] == "5.18.0" and census.manifest["generator"] >= 2


def test_a_checkpoint_loads_offline_from_the_cache_and_generates_what_was_recorded(census):
    """The CPU reference (run.py, eager, the checkpoint loaded offline from the census's cache)
    begins with the tokens the generator recorded from the model it built."""
    for name in ("qwen2", "phimoe", "gpt2"):
        entry = census.entries[name]
        reference = census.reference(entry["revision"])
        assert reference["tokens"][:len(entry["tokens"])] == entry["tokens"], name


def test_a_type_that_cannot_be_built_is_recorded_with_its_step_and_error(census):
    bad = census.entries["llama"]
    assert bad["status"] == "failed" and bad["step"] == "model"
    assert "canrun-no-such-activation" in bad["error"] and "\n" not in bad["error"]
    assert "revision" not in bad


@pytest.mark.skipif(not OLD_STACK.exists(), reason="no transformers 4.57.6 stack (scripts/setup.sh)")
def test_the_older_stack_builds_its_own_phimoe_without_an_expert_parallel_plan(tmp_path):
    result = run("--hf-home", tmp_path / "hf", "--tasks", "text-generation", "--types", "phimoe",
                 "--manifest", tmp_path / "m.json", python=OLD_STACK)
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = json.loads((tmp_path / "m.json").read_text())
    [phimoe] = manifest["entries"]
    assert manifest["transformers"] == "4.57.6" and phimoe["status"] == "built"
    assert phimoe["claims"]["ep_plan"] is False and phimoe["claims"]["tp_plan"] is False
    assert "[1/1] text-generation phimoe: built" in result.stderr
