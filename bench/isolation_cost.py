"""What the box costs a run (README, "Isolation"), in one run.

usage: python bench/isolation_cost.py BUILD_DIR [RUNS]

1. Per trial: `canrun test` of a text-generation fixture (reference cached, compile cache warm),
   RUNS times boxed (the default, `--isolation auto`) and RUNS times unboxed
   (`--isolation none`), interleaved; the ratio is the boxed mean wall time over the unboxed.
   Both get the allow-listed environment: the ratio is the box's own cost.
2. Per box: the helper around `/bin/true` (`canrun __box ... -- /bin/true`: namespaces, mounts,
   cgroup, init) against starting canrun itself (`canrun --version`), RUNS*20 times each: what
   setting a box up adds to each process canrun boxes.
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
MODEL = ("canrun-fixtures/tiny-llama", "tiny-llama")


def timed(args, **kwargs):
    start = time.perf_counter()
    result = subprocess.run(args, check=True, capture_output=True, text=True, **kwargs)
    return time.perf_counter() - start, result.stdout


def main():
    build = Path(sys.argv[1]).resolve()
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    canrun = str(build / "canrun")
    python = str(SOURCE / ".venv" / "bin" / "python")
    fixtures = SOURCE / ".cache" / "fixtures"
    subprocess.run([python, str(SOURCE / "tests/fixtures/build_models.py"), str(fixtures), "--only",
                    MODEL[1]], check=True)
    env = dict(os.environ, HF_HOME=str(fixtures), NO_COLOR="1", HF_HUB_OFFLINE="1")
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"

        def trial(isolation):
            seconds, out = timed([canrun, "--isolation", isolation, "test", MODEL[0], "--json",
                                  "--cache", str(cache)], env=env)
            row = json.loads(out)
            assert row["result"] == "PASS", row["error"]
            return seconds, row["isolation"]

        _, held = trial("auto")  # the reference and the compile cache, once
        boxed, unboxed = [], []
        for _ in range(runs):
            boxed.append(trial("auto")[0])
            unboxed.append(trial("none")[0])
    print(f"per trial ({MODEL[0]}, isolation {held!r}): boxed {statistics.mean(boxed):.2f} s, "
          f"unboxed {statistics.mean(unboxed):.2f} s (means of {runs}), "
          f"ratio {statistics.mean(boxed) / statistics.mean(unboxed):.3f}", flush=True)

    box, start = [], []
    for _ in range(runs * 20):
        box.append(timed([canrun, "__box", "--", "/bin/true"])[0])
        start.append(timed([canrun, "--version"])[0])
    print(f"per box: helper around /bin/true {statistics.median(box) * 1000:.1f} ms, canrun "
          f"--version {statistics.median(start) * 1000:.1f} ms (medians of {runs * 20}): the box "
          f"adds {(statistics.median(box) - statistics.median(start)) * 1000:.1f} ms to each "
          "process it boxes")


if __name__ == "__main__":
    main()
