"""canrun hub select: the curated list ∪ the top N of the ranking, then the exclusions with
their reasons, against the Hub stand-in and the venv's real transformers."""
import json
import os
from pathlib import Path

import pytest

from hub_standin import load_fixture

FIXTURE_MODELS = {m["id"]: m for m in load_fixture("models.json")["models"]}
SAFETENSORS = {"config.json": b"{}", "model.safetensors": b"\0" * 8}


@pytest.fixture
def catalog(tmp_path):
    selected = tmp_path / "selected.toml"
    selected.write_text("""
[text-generation]
models = [
  { id = "HuggingFaceTB/SmolLM2-135M", note = "The smallest Llama-family model." },
  { id = "canrun-test/curated-only" },
  { id = "canrun-test/no-such-arch" },
  { id = "canrun-test/pickles-only" },
  { id = "canrun-test/embedder" },
]
""")
    exclusions = tmp_path / "exclusions.toml"
    exclusions.write_text("""
[[exclude]]
match = "deepseek-ai/DeepSeek-V3*"
reason = "too_large"
why = "671B parameters: far more than 16 cores hold."

[[exclude]]
match = "*-GGUF"
reason = "no_safetensors"
why = "GGUF-only repositories hold no safetensors checkpoint."
""")
    return selected, exclusions


@pytest.fixture(scope="module")
def cache_home(tmp_path_factory):
    """One architecture cache for the module: transformers is imported once, not per test."""
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture
def select(canrun, standin, tmp_path, catalog, cache_home):
    # Every ranked model's info, as the Hub answers /api/models/{id}.
    for model_id, entry in FIXTURE_MODELS.items():
        arch = {"openai-community/gpt2": "GPT2LMHeadModel",
                "mistralai/Mixtral-8x7B-Instruct-v0.1": "MixtralForCausalLM",
                "microsoft/phi-4-mini": "Phi3ForCausalLM",
                "BAAI/bge-small-en-v1.5": "BertModel", "facebook/dinov2-small": "Dinov2Model",
                "sentence-transformers/all-MiniLM-L6-v2": "BertModel",
                "google/vit-base-patch16-224": "ViTForImageClassification",
                "openai/clip-vit-base-patch32": "CLIPModel"}.get(model_id, "LlamaForCausalLM")
        config = {"architectures": [arch], "model_type": "x"}
        if model_id == "microsoft/phi-4-mini":
            config["auto_map"] = {"AutoModelForCausalLM": "modeling_phi3.Phi3ForCausalLM"}
        info = {k: entry[k] for k in ("gated", "pipeline_tag", "library_name", "tags")}
        # An image encoder has an image processor where a text model has its tokenizer.
        files = ({"preprocessor_config.json": b"{}"} if arch == "Dinov2Model"
                 else {"tokenizer.json": b"{}"})
        standin.add_repo(model_id, dict(info, config=config), {**SAFETENSORS, **files})
    standin.add_repo("canrun-test/curated-only", {
        "pipeline_tag": "text-generation", "config": {"architectures": ["Qwen3ForCausalLM"]}},
        SAFETENSORS)
    custom = load_fixture("model_info_remote_code.json")
    custom["config"].pop("auto_map")  # no auto_map: only the architecture gives it away
    standin.add_repo("canrun-test/no-such-arch", custom, SAFETENSORS)
    standin.add_repo("canrun-test/pickles-only", {
        "pipeline_tag": "text-generation", "config": {"architectures": ["LlamaForCausalLM"]}},
        {"config.json": b"{}", "pytorch_model.bin": b"\0"})
    standin.add_repo("canrun-test/embedder", {
        "pipeline_tag": "sentence-similarity", "config": {"architectures": ["BertModel"]}},
        {**SAFETENSORS, "tokenizer.json": b"{}", "modules.json": b"[]"})
    selected, exclusions = catalog

    # Pipelines, which the Hub lists with their files; their model_index.json names the classes.
    unet = {"unet/config.json": b"{}", "unet/diffusion_pytorch_model.safetensors": b"\0" * 8}
    index = {"_class_name": "StableDiffusionPipeline", "scheduler": ["diffusers", "PNDMScheduler"],
             "unet": ["diffusers", "UNet2DConditionModel"]}
    standin.add_repo("canrun-test/plain-pipeline", {"pipeline_tag": "text-to-image",
                                                    "library_name": "diffusers"},
                     {"model_index.json": json.dumps(index).encode(), **unet})
    standin.add_repo("canrun-test/custom-pipeline", {"pipeline_tag": "text-to-image",
                                                     "library_name": "diffusers"},
                     {"model_index.json": json.dumps(dict(index, unet=["my_unet", "MyUNet"])).encode(),
                      "unet/my_unet.py": b"class MyUNet: pass\n", **unet})
    standin.add_repo("canrun-test/other-library-pipeline", {"pipeline_tag": "text-to-image",
                                                            "library_name": "diffusers"},
                     {"model_index.json": json.dumps(dict(index, unet=["onnx_unet", "OnnxUNet"])).encode(),
                      **unet})

    def run(*args, offline=False, task="text-generation"):
        env = {"HF_ENDPOINT": standin.endpoint, "HF_HOME": str(tmp_path / "hf-home"),
               "CANRUN_RANKINGS_DIR": str(tmp_path / "rankings"), "HF_TOKEN": "",
               "HF_HUB_OFFLINE": "1" if offline else "", "XDG_CACHE_HOME": str(cache_home)}
        return canrun("hub", "select", "--task", task, "--selected", selected,
                      "--exclusions", exclusions, "--python", os.environ["CANRUN_PYTHON"],
                      *args, env=env)

    import transformers
    run.cache_file = (cache_home / "canrun" / "stack" / f"transformers-{transformers.__version__}"
                      / "architectures.json")
    return run


def by_id(out):
    return {c["id"]: c for c in out["candidates"]}


def test_selected_then_ranked_each_with_its_reason(select):
    result = select("--top", "8", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    ids = [c["id"] for c in out["candidates"]]
    ranked = [m["id"] for m in sorted(
        (m for m in FIXTURE_MODELS.values() if m["pipeline_tag"] == "text-generation"),
        key=lambda m: m["downloads"], reverse=True)][:8]
    curated = ["HuggingFaceTB/SmolLM2-135M", "canrun-test/curated-only",
               "canrun-test/no-such-arch", "canrun-test/pickles-only", "canrun-test/embedder"]
    assert ids == curated + [m for m in ranked if m not in curated]
    c = by_id(out)
    smol = c["HuggingFaceTB/SmolLM2-135M"]
    assert smol["selected"] and smol["rank"] == ranked.index(smol["id"]) + 1
    assert smol["note"] == "The smallest Llama-family model." and not smol["excluded"]
    assert c["canrun-test/curated-only"]["rank"] is None
    assert not c["canrun-test/curated-only"]["excluded"]
    assert c["Qwen/Qwen3-0.6B"] == {"id": "Qwen/Qwen3-0.6B", "selected": False, "note": None,
                                    "rank": 1, "excluded": False, "exclusion": None,
                                    "facts_from": "hub", "problem": None}

    def reason(model_id):
        exclusion = c[model_id]["exclusion"]
        return exclusion["reason"], exclusion["rule"]

    assert reason("TheBloke/Llama-2-7B-GGUF") == ("no_safetensors", "curated")
    assert reason("meta-llama/Llama-3.1-8B-Instruct") == ("gated", "automatic")
    assert "manual approval" in c["meta-llama/Llama-3.1-8B-Instruct"]["exclusion"]["why"]
    assert reason("mistralai/Mixtral-8x7B-Instruct-v0.1") == ("gated", "automatic")
    assert reason("microsoft/phi-4-mini") == ("remote_code", "automatic")
    assert "auto_map (AutoModelForCausalLM → modeling_phi3" in \
        c["microsoft/phi-4-mini"]["exclusion"]["why"]
    assert reason("canrun-test/no-such-arch") == ("remote_code", "automatic")
    import transformers
    assert f"transformers {transformers.__version__} has no class TinyCustomForCausalLM" in \
        c["canrun-test/no-such-arch"]["exclusion"]["why"]
    assert reason("canrun-test/pickles-only") == ("no_safetensors", "automatic")
    # A sentence-similarity model curated under text-generation: its own task tests it.
    assert reason("canrun-test/embedder") == ("unsupported_task", "automatic")
    assert c["canrun-test/embedder"]["exclusion"]["why"] == (
        "The Hub lists it for sentence-similarity, not text-generation: canrun tests it as "
        "sentence-similarity (--task sentence-similarity).")


def test_feature_extraction_takes_embedders_and_leaves_image_encoders(select, catalog):
    selected, _ = catalog
    selected.write_text(selected.read_text() + """
[feature-extraction]
models = [
  { id = "canrun-test/embedder" },
  { id = "HuggingFaceTB/SmolLM2-135M" },
]
""")
    result = select("--top", "5", "--json", task="feature-extraction")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    # The curated list, then the Hub's feature-extraction ranking by downloads.
    assert [c["id"] for c in out["candidates"]] == [
        "canrun-test/embedder", "HuggingFaceTB/SmolLM2-135M", "BAAI/bge-small-en-v1.5",
        "facebook/dinov2-small"]
    c = by_id(out)
    # A sentence-similarity model is a feature-extraction candidate too (SPEC.md §1), and so is
    # a sentence-transformers repo the Hub lists under feature-extraction.
    assert not c["canrun-test/embedder"]["excluded"], c["canrun-test/embedder"]
    assert not c["BAAI/bge-small-en-v1.5"]["excluded"], c["BAAI/bge-small-en-v1.5"]
    dinov2 = c["facebook/dinov2-small"]["exclusion"]
    assert (dinov2["reason"], dinov2["rule"]) == ("unsupported_task", "automatic")
    assert dinov2["why"] == ("No tokenizer in the repo: canrun's feature-extraction recipe encodes "
                             "text, and this is an encoder of something else (Dinov2Model: images "
                             "or audio?).")
    smol = c["HuggingFaceTB/SmolLM2-135M"]["exclusion"]
    assert smol["why"] == ("The Hub lists it for text-generation, not feature-extraction: canrun "
                           "tests it as text-generation (--task text-generation).")


# The tasks after the first ones: each ranks the Hub's models of its pipeline_tag and library
# (rerankers: sentence-transformers), and sends a model the Hub lists for another task there.
@pytest.mark.parametrize("task,model", [("image-classification", "google/vit-base-patch16-224"),
                                        ("zero-shot-image-classification", "openai/clip-vit-base-patch32"),
                                        ("translation", "Helsinki-NLP/opus-mt-en-de"),
                                        ("text2text-generation", "google/flan-t5-base"),
                                        ("text-ranking", "cross-encoder/ms-marco-MiniLM-L6-v2"),
                                        ("automatic-speech-recognition", "openai/whisper-large-v3-turbo")])
def test_later_tasks_select_their_rankings_and_send_other_tasks_models_away(select, catalog, task, model):
    selected, _ = catalog
    selected.write_text(selected.read_text() + f"""
[{task}]
models = [ {{ id = "HuggingFaceTB/SmolLM2-135M" }} ]
""")
    result = select("--top", "5", "--json", task=task)
    assert result.returncode == 0, result.stderr
    c = by_id(json.loads(result.stdout))
    assert list(c) == ["HuggingFaceTB/SmolLM2-135M", model]
    assert not c[model]["excluded"], c[model]
    assert c["HuggingFaceTB/SmolLM2-135M"]["exclusion"]["why"] == (
        f"The Hub lists it for text-generation, not {task}: canrun tests it as text-generation "
        "(--task text-generation).")


def test_pipelines_of_custom_or_foreign_components_are_excluded(select, catalog):
    selected, _ = catalog
    selected.write_text(selected.read_text() + """
[text-to-image]
models = [
  { id = "canrun-test/plain-pipeline" },
  { id = "canrun-test/custom-pipeline" },
  { id = "canrun-test/other-library-pipeline" },
]
""")
    result = select("--json", task="text-to-image")
    assert result.returncode == 0, result.stderr
    c = by_id(json.loads(result.stdout))
    assert not c["canrun-test/plain-pipeline"]["excluded"], c["canrun-test/plain-pipeline"]
    custom = c["canrun-test/custom-pipeline"]["exclusion"]
    assert (custom["reason"], custom["rule"]) == ("remote_code", "automatic")
    assert custom["why"] == ("model_index.json names unet: my_unet.MyUNet (a component): code from "
                             "the repo; canrun loads only diffusers' and transformers' classes and "
                             "never sets trust_remote_code.")
    other = c["canrun-test/other-library-pipeline"]["exclusion"]
    assert other["reason"] == "incompatible"
    assert "unet: onnx_unet.OnnxUNet (a component): classes of a library outside the stack" in other["why"]


def test_architecture_answers_are_cached_per_transformers_version(select):
    assert select("--top", "3", "--json").returncode == 0
    import transformers
    cache = json.loads(select.cache_file.read_text())
    known = cache  # name → bool, in the stack cache's folder of that transformers version
    assert known["TinyCustomForCausalLM"] is False
    assert known["LlamaForCausalLM"] is True and known["GPT2LMHeadModel"] is True
    # Poison the cache: a second run must believe it (it asks Python only about new names).
    original = select.cache_file.read_text()
    known["LlamaForCausalLM"] = False
    select.cache_file.write_text(json.dumps(cache))
    try:
        out = by_id(json.loads(select("--top", "3", "--json").stdout))
        assert out["HuggingFaceTB/SmolLM2-135M"]["exclusion"]["reason"] == "remote_code"
    finally:
        select.cache_file.write_text(original)


def test_curated_rule_wins_over_automatic(select, catalog):
    _, exclusions = catalog
    exclusions.write_text('[[exclude]]\nmatch = "meta-llama/*"\nreason = "note"\n'
                          'why = "Tested separately."\n')
    out = by_id(json.loads(select("--top", "3", "--json").stdout))
    assert out["meta-llama/Llama-3.1-8B-Instruct"]["exclusion"] == {
        "reason": "note", "why": "Tested separately.", "rule": "curated"}


def test_text_output_names_the_reasons(select):
    result = select("--top", "8")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("text-generation: 5 selected + top 8 by downloads from the Hub:")
    row = next(line for line in lines if line.startswith("meta-llama/Llama-3.1-8B-Instruct"))
    assert "ranked #3" in row and "excluded: gated (automatic)" in row
    row = next(line for line in lines if line.startswith("HuggingFaceTB/SmolLM2-135M"))
    assert "selected, ranked #" in row and "candidate" in row


def test_offline_uses_the_ranking_snapshot_and_its_entries(select):
    assert select("--top", "8", "--json").returncode == 0  # writes the snapshot
    result = select("--top", "8", "--json", offline=True)
    assert result.returncode == 0, result.stderr
    assert "using the snapshot fetched at" in result.stderr
    c = by_id(json.loads(result.stdout))
    assert c["meta-llama/Llama-3.1-8B-Instruct"]["facts_from"] == "ranking"
    assert c["meta-llama/Llama-3.1-8B-Instruct"]["exclusion"]["reason"] == "gated"
    assert c["microsoft/phi-4-mini"]["exclusion"]["reason"] == "remote_code"  # custom_code tag
    assert c["canrun-test/curated-only"]["facts_from"] == "none"


def test_unknown_selected_model_is_reported(select, standin):
    del standin.repos["canrun-test/curated-only"]
    result = select("--top", "0", "--json")
    assert result.returncode == 1
    c = by_id(json.loads(result.stdout))
    assert "HTTP 404: not on the Hub" in c["canrun-test/curated-only"]["problem"]


def test_bad_catalog_file_is_a_usage_error(select, catalog):
    selected, _ = catalog
    selected.write_text('[text-generation]\nmodels = [ { id = "not a model id" } ]\n')
    result = select("--top", "3")
    assert result.returncode == 2
    assert "selected.toml" in result.stderr
