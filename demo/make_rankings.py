"""Writes the demo zoo's rankings snapshots (demo/rankings/<task>__{downloads,trending}.json) in
the form `canrun hub rankings` keeps them (src/hub/rankings.h), from the table below: each zoo
model with made-up downloads, trending score and likes, and the safetensors parameter counts and
config facts the Hub would list, read from the fixture in the local HF cache. The snapshots are
committed; run this after changing the zoo:

    .venv/bin/python demo/make_rankings.py   (after tests/fixtures/build_models.py .cache/fixtures)
"""
import json
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HF = ROOT / ".cache" / "fixtures" / "hub"
# task → [(id, downloads, trendingScore, likes, library)]
ZOO = {
 "text-generation": [
  ("HuggingFaceTB/SmolLM2-135M-Instruct", 412_000, 21, 640, "transformers"),
  ("canrun-fixtures/tiny-llama", 310_000, 9, 41, "transformers"),
  ("canrun-fixtures/tiny-qwen3", 280_500, 34, 52, "transformers"),
  ("canrun-fixtures/tiny-gpt2", 87_300, 1, 64, "transformers"),
  ("canrun-fixtures/tiny-phimoe", 61_000, 15, 27, "transformers"),
  ("canrun-fixtures/tiny-nanochat", 45_800, 88, 120, "transformers"),
  ("canrun-fixtures/tiny-jais2", 23_100, 41, 35, "transformers"),
  ("canrun-fixtures/tiny-tiktoken", 19_700, 6, 8, "transformers"),
  ("canrun-fixtures/big-llama", 17_500, 19, 90, "transformers"),
  ("canrun-fixtures/big-gpt2", 14_900, 3, 71, "transformers"),
  ("canrun-fixtures/tiny-fp8", 12_400, 26, 14, "transformers"),
  ("canrun-fixtures/remote-code", 9_900, 7, 5, "transformers"),
  ("canrun-fixtures/no-weights", 6_100, 2, 3, "transformers"),
  ("canrun-fixtures/unknown-arch", 4_200, 5, 2, "transformers"),
  ("canrun-fixtures/tiny-llama-4l", 2_600, 1, 4, "transformers"),
 ],
 "image-text-to-text": [("canrun-fixtures/tiny-llava", 75_000, 11, 33, "transformers")],
 "sentence-similarity": [
  ("sentence-transformers/all-MiniLM-L6-v2", 980_000, 25, 4100, "sentence-transformers"),
  ("canrun-fixtures/tiny-qwen3-embedder", 150_000, 30, 77, "sentence-transformers"),
 ],
 "feature-extraction": [
  ("canrun-fixtures/tiny-bge-features", 210_000, 12, 48, "sentence-transformers"),
 ],
 "text-classification": [
  ("canrun-fixtures/tiny-distilbert-classifier", 330_000, 7, 55, "transformers"),
 ],
 "fill-mask": [
  ("canrun-fixtures/tiny-bert-mlm", 560_000, 5, 80, "transformers"),
 ],
 "token-classification": [
  ("canrun-fixtures/tiny-electra-ner", 36_000, 2, 7, "transformers"),
 ],
 "image-classification": [
  ("canrun-fixtures/tiny-vit-classifier", 390_000, 14, 160, "transformers"),
 ],
 "zero-shot-image-classification": [
  ("canrun-fixtures/tiny-siglip", 88_000, 17, 30, "transformers"),
 ],
 "translation": [
  ("canrun-fixtures/tiny-t5-translator", 270_000, 13, 58, "transformers"),
 ],
 "text2text-generation": [
  ("canrun-fixtures/tiny-bart-text2text", 120_000, 6, 25, "transformers"),
 ],
 "text-ranking": [
  ("canrun-fixtures/tiny-bert-reranker", 520_000, 16, 95, "sentence-transformers"),
 ],
 "automatic-speech-recognition": [
  ("canrun-fixtures/tiny-whisper", 610_000, 19, 130, "transformers"),
 ],
 "text-to-image": [
  ("canrun-fixtures/tiny-sd", 450_000, 40, 210, "diffusers"),
  ("canrun-fixtures/tiny-pixart", 95_000, 22, 64, "diffusers"),
  ("canrun-fixtures/tiny-sd-custom-unet", 8_800, 3, 4, "diffusers"),
  ("canrun-fixtures/tiny-sd-pickle", 5_100, 1, 2, "diffusers"),
 ],
}


# Models the zoo does not hold, listed after every zoo model in both sorts (demo/campaign.args
# takes the top 15, which text generation's zoo fills): never tested by the demo, so the Space
# shows them "not tested", with the plan predicted from these parameter counts and, when a census
# is served (make census), the census line of their model type.
# task → [(id, downloads, likes, {dtype: parameters}, architecture, model_type)]
UNTESTED = {
 "text-generation": [
  ("Qwen/Qwen3-0.6B", 2_400, 3, {"BF16": 751_632_384}, "Qwen3ForCausalLM", "qwen3"),
  ("google/gemma-3-1b-it", 2_300, 3, {"BF16": 999_885_952}, "Gemma3ForCausalLM", "gemma3_text"),
  ("ibm-granite/granite-3.3-2b-instruct", 2_200, 2, {"BF16": 2_533_531_648}, "GraniteForCausalLM", "granite"),
  ("microsoft/Phi-4-mini-instruct", 2_100, 2, {"BF16": 3_836_021_760}, "Phi3ForCausalLM", "phi3"),
  ("mistralai/Mistral-7B-Instruct-v0.3", 2_000, 2, {"BF16": 7_248_023_552}, "MistralForCausalLM", "mistral"),
  ("bigscience/bloomz-560m", 1_900, 1, {"F16": 559_214_592}, "BloomForCausalLM", "bloom"),
  ("allenai/OLMoE-1B-7B-0125-Instruct", 1_800, 1, {"BF16": 6_919_161_856}, "OlmoeForCausalLM", "olmoe"),
 ],
}


def parameters_by_dtype(snapshot):
    """safetensors.parameters as the Hub lists it: parameter count per dtype, every file's header."""
    counts = {}
    for path in snapshot.rglob("*.safetensors"):
        with open(path, "rb") as data:
            header = json.loads(data.read(struct.unpack("<Q", data.read(8))[0]))
        for name, tensor in header.items():
            if name != "__metadata__":
                count = 1
                for dim in tensor["shape"]:
                    count *= dim
                counts[tensor["dtype"]] = counts.get(tensor["dtype"], 0) + count
    return counts


def hub_facts(model_id):
    """The "safetensors" and "config" fields the Hub would list for the fixture."""
    snapshot = next((HF / ("models--" + model_id.replace("/", "--")) / "snapshots").iterdir())
    facts = {}
    if counts := parameters_by_dtype(snapshot):
        facts["safetensors"] = {"parameters": counts, "total": sum(counts.values())}
    if (snapshot / "config.json").exists():
        config = json.loads((snapshot / "config.json").read_text())
        listed = {key: config[key] for key in ("architectures", "model_type") if key in config}
        if "quantization_config" in config:
            listed["quantization_config"] = {"quant_method": config["quantization_config"]["quant_method"]}
        if listed:
            facts["config"] = listed
    return facts


def main():
    for task, models in ZOO.items():
        entries = []
        for index, (model_id, downloads, trending, likes, library) in enumerate(models):
            entries.append({
                "id": model_id, "downloads": downloads, "likes": likes, "trendingScore": trending,
                "pipeline_tag": task, "library_name": library, "tags": [library, task], "gated": False,
                "createdAt": f"2026-11-0{1 + index % 9}T12:00:00.000Z",
                "lastModified": "2026-12-01T09:00:00.000Z", **hub_facts(model_id)})
        for model_id, downloads, likes, parameters, architecture, model_type in UNTESTED.get(task, []):
            library = "transformers"
            entries.append({
                "id": model_id, "downloads": downloads, "likes": likes, "trendingScore": 0,
                "pipeline_tag": task, "library_name": library, "tags": [library, task], "gated": False,
                "createdAt": "2026-10-01T12:00:00.000Z", "lastModified": "2026-11-20T09:00:00.000Z",
                "safetensors": {"parameters": parameters, "total": sum(parameters.values())},
                "config": {"architectures": [architecture], "model_type": model_type}})
        for sort, key in (("downloads", "downloads"), ("trending", "trendingScore")):
            snapshot = {"task": task, "sort": sort, "fetched_at": "2026-12-04T12:00:00Z",
                        "endpoint": "canrun demo zoo (local fixtures; made-up figures)",
                        "models": sorted(entries, key=lambda entry: -entry[key])}
            path = ROOT / "demo" / "rankings" / f"{task}__{sort}.json"
            path.write_text(json.dumps(snapshot, indent=1) + "\n")


if __name__ == "__main__":
    main()
