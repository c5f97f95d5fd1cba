"""What measuring how well (issue 36) adds to a trial, in one run.

usage: python bench/how_well_overhead.py BUILD_DIR [RUNS]

`canrun test` of a one-core text-generation fixture (tiny-llama) and of a sharded one
(tiny-qwen2 over 2 cores, tensor parallel), RUNS times with canrun's defaults (the eager
baseline, and a long generation of 128 tokens with its teacher-forced agreement against a CPU
reference of 128 tokens) and RUNS times with `--no-perf --long-tokens 0`, interleaved. Each run
has a fresh cache folder, so its CPU reference is computed as a campaign computes each model's
once; compiled graphs come from one warm compile cache (CANRUN_COMPILE_CACHE, filled by a first
run of each) so that compile time, the same in both, does not drown the difference. Prints the
mean wall time of each, the ratio, the seconds added, and where they went (the row's eager,
long-generation and compile figures), as JSON lines.
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
CASES = (("one core", "canrun-fixtures/tiny-llama", []),
         ("sharded, tp over 2", "canrun-fixtures/tiny-qwen2", ["--cores", "2"]))
QUICK = ["--no-perf", "--long-tokens", "0"]


def run(canrun, env, model, extra):
    with tempfile.TemporaryDirectory(prefix="canrun-how-well-") as cache:
        start = time.perf_counter()
        done = subprocess.run([canrun, "test", model, "--json", "--cache", cache, *extra],
                              capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
    if not done.stdout.startswith("{"):
        sys.exit(f"canrun test {model} {' '.join(extra)} failed:\n{done.stderr[-3000:]}")
    row = json.loads(done.stdout)
    assert row["result"] in ("PASS", "FAIL_JUDGE"), (model, row["result"], row.get("error"))
    return wall, row


def main():
    build = Path(sys.argv[1]).resolve()
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    canrun = str(build / "canrun")
    python = str(SOURCE / ".venv" / "bin" / "python")
    fixtures = SOURCE / ".cache" / "fixtures"
    subprocess.run([python, str(SOURCE / "tests/fixtures/build_models.py"), str(fixtures), "--only",
                    "tiny-llama", "tiny-qwen2"], check=True)
    with tempfile.TemporaryDirectory(prefix="canrun-how-well-graphs-") as graphs:
        env = dict(os.environ, HF_HOME=str(fixtures), NO_COLOR="1", HF_HUB_OFFLINE="1",
                   CANRUN_PYTHON=python, CANRUN_COMPILE_CACHE=graphs)
        env.pop("CANRUN_REFERENCE_CACHE", None)
        for name, model, extra in CASES:
            for warm in ([], QUICK):  # fill the compile cache for both shapes of static cache
                run(canrun, env, model, extra + warm)
            walls = {"how well": [], "quick": []}
            rows = []
            for _ in range(runs):
                wall, row = run(canrun, env, model, extra)
                walls["how well"].append(wall)
                rows.append(row)
                walls["quick"].append(run(canrun, env, model, extra + QUICK)[0])
            with_it, without = statistics.mean(walls["how well"]), statistics.mean(walls["quick"])
            print(json.dumps({
                "case": name, "model": model, "runs": runs,
                "wall_s_how_well": round(with_it, 2), "wall_s_quick": round(without, 2),
                "ratio": round(with_it / without, 3), "added_s": round(with_it - without, 2),
                "eager_throughput": rows[-1].get("eager_throughput"),
                "speedup": rows[-1].get("speedup"),
                "long_decode_tokens_per_s": rows[-1].get("long_decode_tokens_per_s"),
                "compile_s": rows[-1].get("compile_s"),
                "runtime_s": rows[-1].get("runtime_s")}), flush=True)


if __name__ == "__main__":
    main()
