"""Browser tier: starts `canrun serve` on the fixture Space and runs space.browser.mjs (node's
test runner, playwright-core, Debian's chromium) against it. Screenshots land in
CANRUN_ARTIFACTS_DIR (default: build/test-artifacts/serve)."""
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from server import SpaceServer  # noqa: E402
from space_data import build_space  # noqa: E402

HERE = Path(__file__).parent


def test_space_in_chromium(canrun_bin, tmp_path, write_rows):
    args = build_space(tmp_path, write_rows)
    server = SpaceServer(canrun_bin, args)
    artifacts = Path(os.environ.get("CANRUN_ARTIFACTS_DIR", tmp_path / "artifacts")) / "serve"
    try:
        result = subprocess.run(
            ["node", "--test", "--test-reporter=spec", str(HERE / "space.browser.mjs")],
            env=dict(os.environ, SPACE_URL=server.url, ARTIFACTS_DIR=str(artifacts)),
            capture_output=True, text=True, timeout=240, cwd=HERE.parent.parent)
    finally:
        assert server.stop() == 0
    print(result.stdout[-8000:], result.stderr[-4000:])
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-4000:]
    for name in ("main-laptop", "model-laptop", "main-phone", "model-phone", "tested-laptop",
                 "causes-laptop", "causes-phone", "compare-laptop", "compare-phone", "image-laptop",
                 "image-phone", "architectures-laptop", "architectures-phone", "census-row-laptop",
                 "census-line-laptop", "census-line-phone", "census-model-laptop",
                 "census-model-phone", "summary-laptop", "summary-phone", "tested-speedup-laptop",
                 "tested-speedup-phone", "how-well-laptop", "how-well-phone", "drift-laptop",
                 "drift-phone", "compare-how-well-laptop"):
        assert (artifacts / f"{name}.png").stat().st_size > 10_000, name
