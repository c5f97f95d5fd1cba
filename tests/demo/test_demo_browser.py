"""Browser tier: a second `make demo` (scripts/demo.sh, serving on a free loopback port) after
the demo_run fixture's first: it re-tests nothing and serves the Space, which demo.browser.mjs
(node's test runner, playwright-core, Debian's chromium) opens as a newcomer would. Screenshots
land in CANRUN_ARTIFACTS_DIR/demo; demo-laptop.png is the README's picture."""
import os
import re
import subprocess
import time
from pathlib import Path

from demo_fixture import OUT, SOURCE

HERE = Path(__file__).parent


def start_demo():
    """scripts/demo.sh until its Space says where it serves: (process, address, output so far, seconds)."""
    env = dict(os.environ, CANRUN_DEMO_OUT=str(OUT), DEMO_PORT="0", DEMO_EXIT_AFTER="300", NO_COLOR="1")
    start = time.monotonic()
    process = subprocess.Popen([str(SOURCE / "scripts" / "demo.sh"), str(Path(os.environ["CANRUN_BIN"]).parent)],
                               cwd=SOURCE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = []
    for line in process.stdout:
        output.append(line)
        if match := re.search(r"serving on (http://127\.0\.0\.1:\d+)/", line):
            return process, match.group(1), "".join(output), time.monotonic() - start
    process.wait()
    raise AssertionError(f"the demo exited {process.returncode} without serving:\n{''.join(output)[-6000:]}")


def test_a_second_make_demo_serves_the_space_it_left(tmp_path):
    assert (OUT / "demo.json").is_file(), "run through ctest: the demo_run entry makes it"
    process, url, output, seconds = start_demo()
    artifacts = Path(os.environ.get("CANRUN_ARTIFACTS_DIR", tmp_path / "artifacts")) / "demo"
    try:
        print(f"second make demo: serving after {seconds:.1f} s")
        assert " start " not in output, output[-6000:]  # every verdict stood: nothing ran again
        result = subprocess.run(
            ["node", "--test", "--test-reporter=spec", str(HERE / "demo.browser.mjs")],
            env=dict(os.environ, SPACE_URL=url, ARTIFACTS_DIR=str(artifacts)),
            capture_output=True, text=True, timeout=300, cwd=SOURCE)
    finally:
        process.terminate()
        process.wait(timeout=30)
    print(result.stdout[-8000:], result.stderr[-4000:])
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-4000:]
    for name in ("demo-laptop", "demo-phone", "demo-compare", "demo-causes", "demo-model",
                 "demo-features-laptop", "demo-features-phone", "demo-classifier-laptop",
                 "demo-classifier-phone", "demo-zero-shot-laptop", "demo-zero-shot-phone",
                 "demo-translation-laptop", "demo-translation-phone", "demo-ranking-laptop", "demo-ranking-phone",
                 "demo-speech-laptop", "demo-speech-phone"):
        assert (artifacts / f"{name}.png").stat().st_size > 10_000, name
