"""A campaign against the same models run by a shell loop of `canrun test`, both from cold
caches: the wall-time ratio (loop ÷ campaign), and how many CPU references and compiled runs
each did (the run folders they left). The models are the fixture zoo's small decoders plus the
real SmolLM2-135M-Instruct, on the cpu backend.

usage: python bench/campaign_vs_loop.py BUILD_DIR [--tokens N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1]
FIXTURES = SOURCE / ".cache" / "fixtures"
MODELS = ["canrun-fixtures/tiny-llama", "canrun-fixtures/tiny-qwen3", "canrun-fixtures/tiny-mistral",
          "canrun-fixtures/tiny-gpt2", "canrun-fixtures/tiny-opt", "HuggingFaceTB/SmolLM2-135M-Instruct"]


def runs(cache):
    folders = list((cache / "runs").iterdir()) if (cache / "runs").is_dir() else []
    return sum("-reference-" in f.name for f in folders), sum("-reference-" not in f.name for f in folders)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--tokens", default="32")
    args = parser.parse_args()
    canrun = str((args.build_dir / "canrun").resolve())
    subprocess.run([sys.executable, str(SOURCE / "tests/fixtures/build_models.py"), str(FIXTURES)], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, HF_HOME=str(FIXTURES), HF_HUB_OFFLINE="1", NO_COLOR="1")
        loop_cache, campaign_cache = tmp / "loop-cache", tmp / "campaign-cache"
        started = time.perf_counter()
        for model in MODELS:
            subprocess.run([canrun, "test", model, "--tokens", args.tokens, "--cache", str(loop_cache),
                            "--out", str(tmp / "loop-dataset")], env=env, capture_output=True, check=False)
        loop_s = time.perf_counter() - started
        (tmp / "models.txt").write_text("\n".join(MODELS) + "\n")
        started = time.perf_counter()
        result = subprocess.run([canrun, "campaign", "--models", str(tmp / "models.txt"), "--tokens", args.tokens,
                                 "--cache", str(campaign_cache), "--out", str(tmp / "campaign-dataset"), "--json"],
                                env=env, capture_output=True, text=True)
        campaign_s = time.perf_counter() - started
        counts = json.loads(result.stdout)["counts"] if result.returncode == 0 else result.stderr[-500:]
        print(f"models {len(MODELS)}, {args.tokens} tokens, {os.cpu_count()} CPUs")
        print(f"shell loop of canrun test: {loop_s:.1f} s, references {runs(loop_cache)[0]}, runs {runs(loop_cache)[1]}")
        print(f"canrun campaign:           {campaign_s:.1f} s, references {runs(campaign_cache)[0]}, "
              f"runs {runs(campaign_cache)[1]}, verdicts {counts}")
        print(f"ratio loop/campaign: {loop_s / campaign_s:.2f}")


if __name__ == "__main__":
    main()
