"""census/build_checkpoints.py: the tiny checkpoints of every model type, run by a stack's own
Python (CANRUN_PYTHON, transformers 5.18.0; the 4.57.6 stack where scripts/setup.sh made it)."""
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
# A type that cannot be built: an override that names an activation nobody has.
BAD = {"qwen2": {"config": {"hidden_act": "canrun-no-such-activation"}}}


def run(*args, python=PYTHON, env=None):
    full_env = dict(os.environ, OMP_NUM_THREADS="1", **(env or {}))
    return subprocess.run([str(python), str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, env=full_env, timeout=300)


def build(root, manifest, types, *extra, python=PYTHON):
    result = run("--hf-home", root, "--tasks", "text-generation", "--types", types,
                 "--manifest", manifest, *extra, python=python)
    assert result.returncode == 0, result.stderr[-3000:]
    return result, {e["model_type"]: e for e in json.loads(Path(manifest).read_text())["entries"]}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """llama, phimoe and a type made to fail, built once into a fresh cache."""
    work = tmp_path_factory.mktemp("census")
    overrides = work / "overrides.json"
    overrides.write_text(json.dumps(BAD))
    result, entries = build(work / "hf", work / "first.json", "llama,phimoe,qwen2",
                            "--overrides", overrides)
    return work, result, entries


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


def test_builds_checkpoints_in_the_cache_layout_with_their_claims(built):
    work, result, entries = built
    llama, phimoe = entries["llama"], entries["phimoe"]
    assert llama["status"] == phimoe["status"] == "built"
    assert llama["model_id"] == "canrun-census/llama" and llama["task"] == "text-generation"
    assert llama["claims"] == {"can_compile_fullgraph": True, "tp_plan": True, "ep_plan": False}
    assert phimoe["claims"]["tp_plan"] is False and phimoe["claims"]["ep_plan"] is True
    for entry in (llama, phimoe):
        repo = work / "hf" / "hub" / ("models--" + entry["model_id"].replace("/", "--"))
        assert (repo / "refs" / "main").read_text() == entry["revision"]
        snapshot = repo / "snapshots" / entry["revision"]
        assert all((snapshot / name).is_symlink() for name in
                   ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"))
        config = json.loads((snapshot / "config.json").read_text())
        assert config["canrun_census"]["model_type"] == entry["model_type"]
        assert config["vocab_size"] == 320 and config["num_hidden_layers"] == 2
        assert 0 < entry["size_bytes"] < 4 * 2**20
        assert entry["logits_flat"] is False and len(entry["tokens"]) >= 1
    manifest = json.loads((work / "first.json").read_text())
    assert manifest["transformers"] == "5.18.0" and manifest["generator"] >= 1
    assert "[1/3] text-generation llama: built" in result.stderr


def test_a_checkpoint_loads_offline_from_the_cache_and_generates_what_was_recorded(built):
    work, _, entries = built
    code = ("import json, torch\n"
            "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
            "tok = AutoTokenizer.from_pretrained('canrun-census/llama')\n"
            "model = AutoModelForCausalLM.from_pretrained('canrun-census/llama', dtype=torch.float32)\n"
            "inputs = tok('The capital of France is', return_tensors='pt')\n"
            "out = model.generate(**inputs, max_new_tokens=4, do_sample=False, pad_token_id=tok.pad_token_id)\n"
            "print(json.dumps(out[0, inputs['input_ids'].shape[1]:].tolist()))\n")
    result = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, HF_HOME=str(work / "hf"), HF_HUB_OFFLINE="1",
                                     OMP_NUM_THREADS="1"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == entries["llama"]["tokens"]


def test_a_type_that_cannot_be_built_is_recorded_with_its_step_and_error(built):
    _, result, entries = built
    bad = entries["qwen2"]
    assert bad["status"] == "failed" and bad["step"] == "model"
    assert "canrun-no-such-activation" in bad["error"] and "\n" not in bad["error"]
    assert "revision" not in bad
    assert "text-generation qwen2: failed at model" in result.stderr


def test_a_second_build_is_a_no_op_and_a_rebuild_gives_the_same_revision(built, tmp_path):
    work, _, first = built
    (work / "hf" / "canrun-census" / "llama.json").unlink()  # its stamp: llama is made again
    result, again = build(work / "hf", tmp_path / "again.json", "llama,phimoe")
    assert "phimoe: already built" in result.stderr
    assert "llama: built" in result.stderr
    assert {t: e["revision"] for t, e in again.items()} == \
        {t: first[t]["revision"] for t in ("llama", "phimoe")}


def test_an_unknown_type_is_refused_naming_it(tmp_path):
    result = run("--hf-home", tmp_path / "hf", "--tasks", "text-generation",
                 "--types", "llama,canrun-imaginary", "--manifest", tmp_path / "m.json")
    assert result.returncode == 2
    assert "canrun-imaginary" in result.stderr and "llama" not in result.stderr.split(":")[-1]
    assert not (tmp_path / "m.json").exists()


@pytest.mark.skipif(not OLD_STACK.exists(), reason="no transformers 4.57.6 stack (scripts/setup.sh)")
def test_the_older_stack_builds_its_own_phimoe_without_an_expert_parallel_plan(tmp_path):
    _, entries = build(tmp_path / "hf", tmp_path / "m.json", "phimoe", python=OLD_STACK)
    phimoe = entries["phimoe"]
    assert phimoe["status"] == "built"
    assert phimoe["claims"]["ep_plan"] is False and phimoe["claims"]["tp_plan"] is False
    manifest = json.loads((tmp_path / "m.json").read_text())
    assert manifest["transformers"] == "4.57.6"
