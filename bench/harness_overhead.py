"""Harness overhead of canrun test per task, and the compile cache's effect, in one run.

usage: python bench/harness_overhead.py BUILD_DIR [RUNS] [TASK ...]

For a fixture of each task (TASKS; all by default):
1. Compile cache: `canrun test` twice with a fresh cache folder; the ratio is the second run's
   compile_s over the first's (inductor's cache per compiler version).
2. Overhead: the same recipe RUNS times through `canrun test` (reference cached, compile cache
   warm) and RUNS times as `python3 run.py` directly with the same environment, interleaved;
   the ratio is canrun's mean wall time over the direct mean (target <= 1.03). canrun's time
   includes everything it adds: the stack probe, resolving and planning the model, rendering,
   supervising, reading the reference and comparing the output with it.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1]
TASKS = {  # task → (fixture, its name for build_models.py)
    "text-generation": ("canrun-fixtures/tiny-llama", "tiny-llama"),
    "sentence-similarity": ("canrun-fixtures/tiny-bert-embedder", "tiny-bert-embedder"),
    "text-classification": ("canrun-fixtures/tiny-bert-classifier", "tiny-bert-classifier"),
    "fill-mask": ("canrun-fixtures/tiny-bert-mlm", "tiny-bert-mlm"),
    "token-classification": ("canrun-fixtures/tiny-bert-ner", "tiny-bert-ner"),
    "text-to-image": ("canrun-fixtures/tiny-sd", "tiny-sd"),
}


def main():
    build = Path(sys.argv[1]).resolve()
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    tasks = sys.argv[3:] or list(TASKS)
    python = str(SOURCE / ".venv" / "bin" / "python")
    fixtures = SOURCE / ".cache" / "fixtures"
    subprocess.run([python, str(SOURCE / "tests/fixtures/build_models.py"), str(fixtures), "--only",
                    *(TASKS[task][1] for task in tasks)], check=True)
    # Offline on both sides: online, canrun asks the Hub for the model's revision and run.py's
    # from_pretrained asks it again; with no network, canrun's lookup fails and is retried once
    # (500 ms) before it uses the HF cache, a cost of this machine's network, not of the harness.
    env = dict(os.environ, HF_HOME=str(fixtures), NO_COLOR="1", HF_HUB_OFFLINE="1")
    for task in tasks:
        measure(build, python, env, task, TASKS[task][0], runs)


def measure(build, python, env, task, model, runs):
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"

        def canrun_test():
            start = time.perf_counter()
            out = subprocess.run([str(build / "canrun"), "test", model, "--task", task, "--json",
                                  "--cache", str(cache)],
                                 check=True, capture_output=True, text=True, env=env).stdout
            return time.perf_counter() - start, json.loads(out)

        _, cold = canrun_test()
        _, warm = canrun_test()
        print(f"{task} ({model}): compile cache: first compile_s {cold['compile_s']:.2f} s, second "
              f"{warm['compile_s']:.2f} s, ratio {warm['compile_s'] / cold['compile_s']:.2f}")

        run_dir = Path(warm["run_dir"])
        direct_env = dict(env, PYTHONUNBUFFERED="1", TOKENIZERS_PARALLELISM="false",
                          TORCHINDUCTOR_CACHE_DIR=str(cache / "compile" / "cpu" / f"inductor-{warm['compiler_version']}"))
        through_canrun, direct = [], []
        for _ in range(runs):  # interleaved, so that a change of machine load hits both alike
            through_canrun.append(canrun_test()[0])
            start = time.perf_counter()
            subprocess.run([python, "run.py"], cwd=run_dir, check=True, capture_output=True, env=direct_env)
            direct.append(time.perf_counter() - start)
    ratio = statistics.mean(through_canrun) / statistics.mean(direct)
    print(f"{task}: harness: canrun test {statistics.mean(through_canrun):.2f} s (mean of {runs}), "
          f"python3 run.py {statistics.mean(direct):.2f} s, ratio {ratio:.3f} (target <= 1.03)", flush=True)


if __name__ == "__main__":
    main()
