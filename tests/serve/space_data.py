"""A small but complete Space: a dataset of several stacks, a census beside it, rankings, a
catalog and backend profiles, written with the real C++ writer. Shared by the robustness and
browser tests."""
import json
from pathlib import Path

from conftest import verdict_row

OLD = dict(compiler_version="2.9.1.0+1a2b3c4d")          # older, though "2.9" > "2.16" as text
MID = dict(compiler_version="2.16.372.0+4a9b2326")
NEW = dict(compiler_version="2.17.1.0+5e6f7a8b")
NEW_LIB = dict(compiler_version="2.17.1.0+5e6f7a8b", library_version="5.19.0")
CPU = dict(backend="cpu", compiler="inductor", compiler_version="2.13.0")

HOSTILE_ERROR = ('RuntimeError: bad <script>window.__canrunXss = 1</script> '
                 '<img src=x onerror="window.__canrunXss = 2"> & "quotes"')
HOSTILE_NOTE = 'Curated <b>bold</b> <script>window.__canrunXss = 3</script>'

RUN_PY = """# run.py: Qwen/Qwen3-0.6B on neuron, 1 core, 32 new tokens, greedy.
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-0.6B", torch_dtype=torch.bfloat16)
print("ok")
"""

CURATED = ["Qwen/Qwen3-0.6B", "Qwen/Qwen3-8B", "meta-llama/Llama-3.2-1B-Instruct",
           "google/gemma-3-1b-it", "HuggingFaceTB/SmolLM2-135M-Instruct", "openai-community/gpt2",
           "acme-labs/html-note-model"]
RANKED = CURATED + [f"community-{idx}/tiny-model-{idx}" for idx in range(1, 30)]


GIB = 1024 ** 3

# How well (schema 9) on the newest stacks; the older stacks' rows predate it (all null). On the
# default stack (NEW_LIB): gpt2 with an eager baseline and a long generation that holds, gemma a
# PASS whose long generation drifts, community-1 an eager baseline cut short. Memory is read as
# rss (cpu's measure), so the compiled peak includes the eager one.
HOW_WELL = {
    ("openai-community/gpt2", "NEW_LIB"): dict(
        throughput=48.75, throughput_unit="tokens/s", eager_throughput=25.0, speedup=1.95,
        eager_ttft_s=0.31, eager_peak_memory_bytes=int(2.5 * GIB), memory_ratio=2.5 / 3.0,
        memory_measure="rss", long_tokens=128, long_decode_tokens_per_s=47.5,
        long_agreement=0.984375),
    ("openai-community/gpt2", "NEW"): dict(
        throughput=48.75, throughput_unit="tokens/s", eager_throughput=32.5, speedup=1.5,
        compile_s=100.0, memory_measure="rss"),
    ("google/gemma-3-1b-it", "NEW_LIB"): dict(
        throughput=48.75, throughput_unit="tokens/s", eager_throughput=40.625, speedup=1.2,
        eager_ttft_s=0.05, eager_peak_memory_bytes=int(2.7 * GIB), memory_ratio=0.9,
        memory_measure="rss", long_tokens=128, long_decode_tokens_per_s=29.5,
        long_agreement=0.625, drifts_after=57),
}
EAGER_NOTE = "eager baseline cut at the profile's eager_max_s (120 s): no speedup"


def how_well(model_id, stack):
    name = {id(NEW): "NEW", id(NEW_LIB): "NEW_LIB"}.get(id(stack))
    return HOW_WELL.get((model_id, name), {})


def rows():
    out = []
    for stack in (OLD, MID, NEW, NEW_LIB):
        out.append(verdict_row("google/gemma-3-1b-it", "FAIL_COMPILE" if stack is OLD else "PASS",
                               **stack, **how_well("google/gemma-3-1b-it", stack)))
        out.append(verdict_row("openai-community/gpt2", "PASS", cores=2, parallelism="tp",
                               runtime_s=95.0, verification="judge+agreement", match_tokens=29,
                               judge_score=2.41, judge_threshold=0.794, agreement=0.96875,
                               judge_parts='{"bias": -2.97, "likelihood": {"value": -1.9, "adds": 0.8}}',
                               judge_model="HuggingFaceTB/SmolLM2-135M-Instruct@24aa9a1",
                               **{**stack, **how_well("openai-community/gpt2", stack)}))
        out.append(verdict_row("meta-llama/Llama-3.2-1B-Instruct", "EXCLUDED",
                               peak_device_memory_bytes=None, **stack))
        out.append(verdict_row("acme-labs/html-note-model", "FAIL_RUNTIME", error=HOSTILE_ERROR,
                               **stack))
    # The version switch: Qwen3-0.6B passes on 2.16 and regresses on 2.17.
    out.append(verdict_row("Qwen/Qwen3-0.6B", "PASS", run_py=RUN_PY,
                           packages=["torch-neuronx==2.13.3.0", "neuronx-cc==2.16.372.0"], **OLD))
    out.append(verdict_row("Qwen/Qwen3-0.6B", "PASS", run_py=RUN_PY,
                           packages=["torch-neuronx==2.13.3.0", "neuronx-cc==2.16.372.0"], **MID))
    out.append(verdict_row("Qwen/Qwen3-0.6B", "FAIL_COMPILE", run_py=RUN_PY,
                           packages=["torch-neuronx==2.14.0.0", "neuronx-cc==2.17.1.0"],
                           error="neuronx-cc: error: unsupported op aten::foo", **NEW))
    out.append(verdict_row("Qwen/Qwen3-0.6B", "FAIL_COMPILE", run_py=RUN_PY,
                           packages=["torch-neuronx==2.14.0.0", "neuronx-cc==2.17.1.0"],
                           error="neuronx-cc: error: unsupported op aten::foo", **NEW_LIB))
    for stack in (NEW, NEW_LIB):
        out.append(verdict_row("Qwen/Qwen3-8B", "FAIL_OOM", cores=4, parallelism="tp", **stack))
    for idx in range(1, 12):
        for stack in (NEW, NEW_LIB):
            row = verdict_row(f"community-{idx}/tiny-model-{idx}",
                              "PASS" if idx % 3 else "TIMEOUT", runtime_s=30.0 + idx, **stack)
            if idx == 1 and stack is NEW_LIB:
                row.update(eager_note=EAGER_NOTE, memory_measure="rss")
            out.append(row)
    out.append(verdict_row("Qwen/Qwen3-0.6B", "PASS", device="cpu", **CPU))
    out.extend(other_task_rows())
    return out


# Tasks beyond generation, on the cpu stack: their library on top of transformers, their
# throughput unit, and a text-to-image verdict whose images are kept beside the dataset.
CPU_STEM = "cpu__inductor-2.13.0__transformers-5.18.0"
IMAGE_MODEL = "canrun-fixtures/tiny-sd"
IMAGE_FILES = {role: f"images/{CPU_STEM}/{IMAGE_MODEL}/text-to-image.{role}.png"
               for role in ("image", "reference_image")}


def other_task_rows():
    on_top = lambda library, version: dict(
        library=library, library_version=version, new_tokens=None, match_tokens=None,
        ttft_s=None, decode_tokens_per_s=None, packages=[],
        stack={"python": "3.11.7", "torch": "2.13.0", "transformers": "5.18.0", library: version})
    return [
        verdict_row("sentence-transformers/all-MiniLM-L6-v2", "PASS", device="cpu",
                    task="sentence-similarity", throughput=812.5, throughput_unit="sentences/s",
                    output_text="10 sentences, 384-dimensional embeddings; lowest cosine similarity "
                                "with the CPU reference 1.000000 (threshold 0.99999)",
                    **on_top("sentence-transformers", "6.3.0"), **CPU),
        verdict_row("canrun-fixtures/tiny-bert-classifier", "PASS", device="cpu",
                    task="text-classification", throughput=2357.0, throughput_unit="sentences/s",
                    new_tokens=None, match_tokens=None, output_text="neutral neutral positive negative",
                    **CPU),
        verdict_row(IMAGE_MODEL, "PASS", device="cpu", task="text-to-image", throughput=14.2,
                    throughput_unit="steps/s", output_files=json.dumps(IMAGE_FILES),
                    output_text="32×32 image; against the CPU reference PSNR 48.1 dB (threshold 35), "
                                "SSIM 0.9990 (threshold 0.98); 14.20 steps/s",
                    **on_top("diffusers", "0.42.1"), **CPU),
    ]


def write_images(dataset: Path):
    """The text-to-image verdict's two images where canrun keeps them: a gradient and the same
    gradient a shade darker (32 × 32 PNG)."""
    from PIL import Image
    for role, relative in IMAGE_FILES.items():
        shade = 0 if role == "image" else 8
        image = Image.new("RGB", (32, 32))
        image.putdata([(8 * x, 8 * y, max(0, 200 - shade - 4 * x)) for y in range(32) for x in range(32)])
        (dataset / relative).parent.mkdir(parents=True, exist_ok=True)
        image.save(dataset / relative)


# What the Hub lists of some untested models (parameter counts, model type), for predicted
# plans; the others are listed without (as in snapshots from before these fields).
LISTED_FACTS = {
    "HuggingFaceTB/SmolLM2-135M-Instruct": ({"BF16": 134_515_008}, "llama"),  # one core
    "community-12/tiny-model-12": ({"BF16": 70_553_706_496}, "llama"),  # 8 cores, TP
    "community-13/tiny-model-13": ({"BF16": 46_702_792_704}, "mixtral"),  # EP plan only
    "community-14/tiny-model-14": ({"F32": 6_053_381_344}, "gptj"),  # no parallel plan
    "community-15/tiny-model-15": ({"BF16": 1_000_000_000_000}, "llama"),  # too large
    "community-16/tiny-model-16": ({"BF16": 2_000_000_000}, "bloom"),  # fails on one core
    "openai-community/gpt2": ({"F32": 124_439_808}, "gpt2"),  # tested: no census line
}
# What each transformers version offers per model type, as canrun's stack cache keeps it.
PARALLEL = {"llama": (True, False), "mixtral": (False, True), "gptj": (False, False)}


def listed(rank, model_id):
    model = {"id": model_id, "downloads": 5_000_000 // (rank + 1), "likes": 100 - rank,
             "trendingScore": 90 - rank, "pipeline_tag": "text-generation",
             "library_name": "transformers", "tags": [], "gated": False,
             "createdAt": "2026-01-01T00:00:00Z", "lastModified": "2026-06-01T00:00:00Z"}
    if model_id in LISTED_FACTS:
        parameters, model_type = LISTED_FACTS[model_id]
        model["safetensors"] = {"parameters": parameters, "total": sum(parameters.values())}
        model["config"] = {"architectures": ["X"], "model_type": model_type}
    return model


def write_stack_cache(folder: Path):
    for version in ("5.18.0", "5.19.0"):
        parallel = folder / "stack" / f"transformers-{version}" / "parallel"
        parallel.mkdir(parents=True, exist_ok=True)
        for model_type, (tp, ep) in PARALLEL.items():
            (parallel / f"{model_type}.json").write_text(json.dumps(
                {"transformers": version, "model_type": model_type, "known": True,
                 "tp_plan": tp, "ep_plan": ep}))


def write_rankings(folder: Path):
    folder.mkdir(parents=True, exist_ok=True)
    for sort, ids in (("downloads", RANKED), ("trending", list(reversed(RANKED)))):
        models = [listed(rank, model_id) for rank, model_id in enumerate(ids)]
        snapshot = {"task": "text-generation", "sort": sort, "fetched_at": "2026-12-02T15:00:00Z",
                    "endpoint": "https://huggingface.co", "models": models}
        (folder / f"text-generation__{sort}.json").write_text(json.dumps(snapshot))


def write_catalog(folder: Path):
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for model_id in CURATED:
        note = HOSTILE_NOTE if model_id == "acme-labs/html-note-model" else ""
        entries.append(f'  {{ id = "{model_id}"' + (f', note = {json.dumps(note)}' if note else "")
                       + " },")
    (folder / "selected.toml").write_text("[text-generation]\nmodels = [\n" + "\n".join(entries)
                                          + "\n]\n")
    (folder / "exclusions.toml").write_text(
        '[[exclude]]\nmatch = "meta-llama/*"\nreason = "gated"\n'
        'why = "Gated on the Hub: needs a token and accepting the license."\n')


def write_backends(folder: Path):
    folder.mkdir(parents=True, exist_ok=True)
    # The shipped profiles: neuron has a public compile cache, cpu has none.
    shipped = Path(__file__).resolve().parents[2] / "backends"
    for name in ("neuron.toml", "cpu.toml"):
        (folder / name).write_text((shipped / name).read_text())


HOSTILE_LOG = ("[canrun: run.py's stdout]\nloading <b>weights</b>\n[canrun: run.py's stderr]\n"
               "Traceback (most recent call last):\n  File \"run.py\", line 9\n" + HOSTILE_ERROR + "\n")


def write_logs(dataset: Path, written_rows):
    """The kept log of each failure of the hostile model, where canrun keeps them."""
    for row in written_rows:
        if row["model_id"] == "acme-labs/html-note-model":
            stem = (f"{row['backend']}__{row['compiler']}-{row['compiler_version']}__"
                    f"transformers-{row['library_version']}")
            path = dataset / "logs" / stem / row["model_id"] / f"{row['task']}.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(HOSTILE_LOG)


# The architecture census served beside the dataset (canrun census's rows: one core as
# canrun-census/<type>, sharded as canrun-census-sharded/<type>), on the newest neuron stack and
# the one before it (transformers 5.18.0), where mixtral's expert-parallel run passed.
CENSUS_TYPES = {  # type → (one core, sharded, claims fullgraph / tp plan / ep plan)
    "llama": ("PASS", ("PASS", "tp"), (True, True, False)),
    "mixtral": ("PASS", ("FAIL_COMPILE", "ep"), (True, False, True)),
    "gptj": ("PASS", ("EXCLUDED", "no_parallel_plan"), (None, False, False)),
    "gpt2": ("PASS", ("EXCLUDED", "no_parallel_plan"), (True, False, False)),
    "bloom": ("FAIL_RUNTIME", None, (True, True, False)),
    "bart": ("EXCLUDED", None, (True, False, False)),
}


def census_rows():
    out = []
    for stack in (NEW, NEW_LIB):
        for model_type, (one_core, sharded, (fullgraph, tp, ep)) in CENSUS_TYPES.items():
            facts = dict(model_type=model_type, claims_fullgraph=fullgraph, claims_tp_plan=tp,
                         claims_ep_plan=ep, **stack)
            row = verdict_row(f"canrun-census/{model_type}", one_core, output_text="x x x",
                              weights_bytes=400_000, **facts)
            if model_type == "bart":
                row.update(exclusion_reason="other_task",
                           error="bart belongs to text2text-generation")
            out.append(row)
            if not sharded:
                continue
            result, how = sharded
            if stack is NEW and model_type == "mixtral":
                result = "PASS"
            if result == "EXCLUDED":
                row = verdict_row(f"canrun-census-sharded/{model_type}", "EXCLUDED", **facts)
                row.update(exclusion_reason=how, parallelism=None)
            else:
                row = verdict_row(f"canrun-census-sharded/{model_type}", result, cores=2,
                                  parallelism=how, verification="agreement", agreement=1.0,
                                  **facts)
                if result != "PASS":
                    row.update(error="torch._dynamo.exc.Unsupported: fake tensor of a DTensor",
                               error_signature="dynamo unsupported: fake tensor of a dtensor")
            out.append(row)
    return out


def build_space(root: Path, write_rows):
    """Writes everything under root; returns the serve arguments."""
    write_rows(root / "dataset", rows())
    write_logs(root / "dataset", rows())
    write_images(root / "dataset")
    write_rankings(root / "rankings")
    write_catalog(root / "catalog")
    write_backends(root / "backends")
    write_stack_cache(root / "cache")
    write_rows(root / "census", census_rows())
    return ["--data", root / "dataset", "--rankings", root / "rankings", "--catalog",
            root / "catalog", "--backends", root / "backends", "--cache", root / "cache",
            "--census", root / "census"]
