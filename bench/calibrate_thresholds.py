"""Measures what the one-core verification thresholds of the tasks beyond generation are
calibrated on: every fixture of a task run through `canrun test` on the CPU (TorchInductor)
against the eager CPU reference, in float32 and bfloat16, and the figure its comparison found
(the largest relative error of the logits, or of a reranker's scores; the lowest cosine of the
embeddings; the PSNR and SSIM of the image). Prints one table row per (model, dtype) and the worst per task and dtype.

usage: python bench/calibrate_thresholds.py [--only TASK ...]
(run from the project root after `make test` has built build/canrun and the fixtures)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / ".cache" / "fixtures"
MODELS = {
    "text-classification": ["tiny-bert-classifier", "tiny-roberta-classifier", "tiny-distilbert-classifier"],
    "fill-mask": ["tiny-bert-mlm", "tiny-roberta-mlm", "tiny-xlmr-mlm"],
    "token-classification": ["tiny-bert-ner", "tiny-electra-ner"],
    "sentence-similarity": ["tiny-bert-embedder", "tiny-xlmr-embedder", "tiny-mpnet-embedder",
                            "tiny-qwen3-embedder", "sentence-transformers/all-MiniLM-L6-v2"],
    "feature-extraction": ["tiny-bge-features", "tiny-xlmr-features", "tiny-qwen3-embedder",
                           "sentence-transformers/all-MiniLM-L6-v2"],
    "image-classification": ["tiny-vit-classifier", "tiny-convnext-classifier"],
    "zero-shot-image-classification": ["tiny-clip", "tiny-siglip"],
    "text-ranking": ["tiny-bert-reranker"],
    "automatic-speech-recognition": ["tiny-wav2vec2-ctc"],  # CTC: logits per frame
    "text-to-image": ["tiny-sd", "tiny-pixart"],
}
FIGURES = {
    "logits": re.compile(r"largest relative error (?:of a query's scores )?against the CPU reference "
                         r"([0-9.e+-]+|inf|nan)"),
    "cosine": re.compile(r"lowest cosine similarity with the CPU reference ([0-9.]+)"),
    "psnr": re.compile(r"PSNR ([0-9.]+|inf) dB"),
    "ssim": re.compile(r"SSIM ([0-9.]+)"),
}


def profile(folder, dtype):
    """backends/cpu.toml in `dtype`, under a name of its own."""
    text = (ROOT / "backends" / "cpu.toml").read_text()
    text = re.sub(r'^name = .*$', f'name = "cpu-{dtype}"', text, flags=re.M)
    text = re.sub(r'^dtype = .*$', f'dtype = "{dtype}"', text, flags=re.M)
    path = Path(folder) / f"cpu-{dtype}.toml"
    path.write_text(text)
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=list(MODELS))
    args = parser.parse_args()
    # Packages on top (tiny-siglip: sentencepiece, protobuf) from the wheels set-up keeps.
    env = dict(os.environ, HF_HOME=str(FIXTURES), HF_HUB_OFFLINE="1", NO_COLOR="1", PIP_NO_INDEX="1",
               PIP_FIND_LINKS=str(ROOT / ".cache" / "wheels"))
    worst = {}
    with tempfile.TemporaryDirectory() as tmp:
        print("| task | model | dtype | result | figures |")
        print("|---|---|---|---|---|")
        for task in args.only:
            for name in MODELS[task]:
                model = name if "/" in name else f"canrun-fixtures/{name}"
                for dtype in ("float32", "bfloat16"):
                    run = subprocess.run([str(ROOT / "build" / "canrun"), "test", model, "--task", task,
                                          "--backend", str(profile(tmp, dtype)), "--json",
                                          "--cache", str(Path(tmp) / "cache")],
                                         capture_output=True, text=True, env=env, timeout=1800)
                    row = json.loads(run.stdout) if run.stdout.startswith("{") else {}
                    text = (row.get("output_text") or "") + "\n" + (row.get("error") or "")
                    figures = {name: float(m.group(1)) for name, pattern in FIGURES.items()
                               if (m := pattern.search(text))}
                    print(f"| {task} | {model} | {dtype} | {row.get('result', run.stderr[-200:])} | "
                          f"{', '.join(f'{k} {v:.6g}' for k, v in figures.items())} |", flush=True)
                    for figure, value in figures.items():
                        key = (task, dtype, figure)
                        lower_is_worse = figure != "logits"
                        if key not in worst or (value < worst[key] if lower_is_worse else value > worst[key]):
                            worst[key] = value
    print("\nworst per task and dtype:")
    for (task, dtype, figure), value in sorted(worst.items()):
        print(f"  {task:22} {dtype:9} {figure:6} {value:.6g}")


if __name__ == "__main__":
    sys.exit(main())
