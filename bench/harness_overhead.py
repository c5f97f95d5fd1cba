"""Harness overhead of canrun test, and the compile cache's effect, in one run.

usage: python bench/harness_overhead.py BUILD_DIR [RUNS]

1. Compile cache: `canrun test` of a tiny fixture twice with a fresh cache folder; the
   ratio is the second run's compile_s over the first's (inductor's cache per compiler version).
2. Overhead: the same recipe RUNS times through `canrun test` (reference cached, compile cache
   warm) and RUNS times as `python3 run.py` directly with the same environment; the ratio is
   canrun's mean wall time over the direct mean (target <= 1.05).
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
MODEL = "canrun-fixtures/tiny-llama"


def main():
    build = Path(sys.argv[1]).resolve()
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    python = str(SOURCE / ".venv" / "bin" / "python")
    fixtures = SOURCE / ".cache" / "fixtures"
    subprocess.run([python, str(SOURCE / "tests/fixtures/build_models.py"), str(fixtures), "--only", "tiny-llama"],
                   check=True)
    env = dict(os.environ, HF_HOME=str(fixtures), NO_COLOR="1")
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"

        def canrun_test():
            start = time.perf_counter()
            out = subprocess.run([str(build / "canrun"), "test", MODEL, "--json", "--cache", str(cache)],
                                 check=True, capture_output=True, text=True, env=env).stdout
            return time.perf_counter() - start, json.loads(out)

        _, cold = canrun_test()
        _, warm = canrun_test()
        print(f"compile cache: first compile_s {cold['compile_s']:.2f} s, second {warm['compile_s']:.2f} s, "
              f"ratio {warm['compile_s'] / cold['compile_s']:.2f}")

        run_dir = Path(warm["run_dir"])
        direct_env = dict(env, HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1", TOKENIZERS_PARALLELISM="false",
                          TORCHINDUCTOR_CACHE_DIR=str(cache / "compile" / "cpu" / f"inductor-{warm['compiler_version']}"))
        through_canrun, direct = [], []
        for _ in range(runs):  # interleaved, so that a change of machine load hits both alike
            through_canrun.append(canrun_test()[0])
            start = time.perf_counter()
            subprocess.run([python, "run.py"], cwd=run_dir, check=True, capture_output=True, env=direct_env)
            direct.append(time.perf_counter() - start)
    ratio = statistics.mean(through_canrun) / statistics.mean(direct)
    print(f"harness: canrun test {statistics.mean(through_canrun):.2f} s (mean of {runs}), "
          f"python3 run.py {statistics.mean(direct):.2f} s, ratio {ratio:.3f} (target <= 1.05)")


if __name__ == "__main__":
    main()
