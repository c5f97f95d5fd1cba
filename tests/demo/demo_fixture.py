"""The demo's campaign as the suite's shared campaign fixture: `make demo`'s own script
(scripts/demo.sh, DEMO_SERVE=0) run once per test session (ctest fixture demo_run) into
OUT (build/demo), whose dataset the demo, campaign and Space checks read instead of running
models themselves. Same zoo, same options (demo/campaign.args), same script as a user's
`make demo`; the caches under OUT/cache (CPU references, compiled graphs, stack answers) are
kept between sessions, the dataset and the campaign folders start empty each time (a campaign
keeps the rows of a stack it already holds, and a changed canrun must be tested again).

usage: demo_fixture.py BUILD_DIR OUT   (OUT/dataset, OUT/cache, OUT/demo.log, OUT/demo.json)
"""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = SOURCE / ".cache" / "fixtures"
WHEELS = SOURCE / ".cache" / "wheels"  # pip installs packages on top from here only
OUT = Path(os.environ.get("CANRUN_DEMO_OUT", SOURCE / "build" / "demo"))
# The options canrun test and canrun plan must be given to treat a model as the demo did.
OPTIONS = ["--backend", "cpu", "--memory-per-core", "0.25", "--reserve", "0"]
# The demo's time limit, under ctest's for demo_run (4500 s) so that this script still reports
# how far it got: about 2100-2500 s on 2 cores beside the suite's other tests, up to 1.6 times
# that on a slower CI host (a demo still running at 3450 s was stopped there once).
TIME_LIMIT_S = 4400


def campaign_args():
    """demo/campaign.args as the demo passes them (every campaign adds --backend, --python,
    --cores, --out and --campaign-dir)."""
    text = (SOURCE / "demo" / "campaign.args").read_text()
    return [word for line in text.splitlines() for word in line.split("#")[0].split()]


def environment(out=OUT):
    """The environment the demo's campaigns ran in."""
    env = dict(os.environ, HF_HOME=str(FIXTURES), HF_HUB_OFFLINE="1", NO_COLOR="1",
               CANRUN_CACHE=str(out / "cache"), PIP_NO_INDEX="1", PIP_FIND_LINKS=str(WHEELS))
    env.pop("HF_HUB_CACHE", None)
    return env


def run_demo(build, out):
    """scripts/demo.sh with DEMO_SERVE=0, its output written to OUT/demo.log as it goes (so that
    a demo stopped by its time limit still shows how far it got); its exit status and seconds."""
    env = dict(os.environ, DEMO_SERVE="0", CANRUN_DEMO_OUT=str(out), NO_COLOR="1")
    start = time.monotonic()
    with open(out / "demo.log", "w") as log:
        demo = subprocess.Popen([str(SOURCE / "scripts" / "demo.sh"), str(build)], env=env,
                                cwd=SOURCE, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            code = demo.wait(timeout=TIME_LIMIT_S)
        except subprocess.TimeoutExpired:
            demo.kill()
            demo.wait()
            code = None
    return code, time.monotonic() - start


def main():
    build, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    for folder in ("dataset", "campaigns"):
        shutil.rmtree(out / folder, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    code, seconds = run_demo(build, out)
    (out / "demo.json").write_text(json.dumps({"exit": code, "seconds": seconds}) + "\n")
    print(f"make demo's script: exit {code} after {seconds:.0f} s (log: {out / 'demo.log'})")
    if code != 0:
        said = (out / "demo.log").read_text(errors="replace")[-6000:]
        why = f"ran past {TIME_LIMIT_S} s" if code is None else f"exited {code}"
        sys.exit(f"the demo {why}; the end of its log:\n{said}")


if __name__ == "__main__":
    main()
