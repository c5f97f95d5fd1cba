"""Fixtures for the end-to-end tests of canrun test: the model fixtures in a local HF cache,
backend profiles for the fault-injecting backends, and a runner for the canrun binary."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = SOURCE / ".cache" / "fixtures"
FAULTS = Path(__file__).parent / "faults"


@pytest.fixture(scope="session")
def hf_home():
    """The fixture cache, built by the fixtures_build ctest entry (or here, when run alone)."""
    python = os.environ.get("CANRUN_PYTHON", sys.executable)
    subprocess.run([python, str(SOURCE / "tests/fixtures/build_models.py"), str(FIXTURES)], check=True)
    return FIXTURES


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("canrun-cache")


def fault_profile(directory, function, env=None):
    """A backend profile whose compile backend is canrun_faults:<function>."""
    cpu = (SOURCE / "backends" / "cpu.toml").read_text()
    lines = [l for l in cpu.splitlines() if not l.startswith(("name =", "compile_backend ="))]
    env = dict(env or {}, PYTHONPATH=str(FAULTS))
    text = "\n".join([f'name = "fault-{function}"', f'compile_backend = "canrun_faults:{function}"']
                     + lines + ["[env]"] + [f'{k} = {json.dumps(v)}' for k, v in env.items()])
    path = Path(directory) / f"fault-{function}.toml"
    path.write_text(text + "\n")
    return path


@pytest.fixture(scope="module")
def canrun_test(canrun_bin, hf_home, cache_dir):
    """Runs `canrun test MODEL --json ...`; returns (exit code, verdict row or None, stderr).
    With printed=True, without --json: (exit code, the verdict as printed, stderr). Without the
    eager baseline and the long generation (--no-perf --long-tokens 0), which the tests of what
    a run is and how it is verified do not need; how_well=True keeps canrun's defaults."""

    def run(model, *args, timeout=900, printed=False, how_well=False):
        env = dict(os.environ, HF_HOME=str(hf_home), NO_COLOR="1")
        env.pop("HF_HUB_CACHE", None)
        quick = [] if how_well else ["--no-perf", "--long-tokens", "0"]
        result = subprocess.run([str(canrun_bin), "test", model, *([] if printed else ["--json"]), "--cache",
                                 str(cache_dir), *quick, *map(str, args)],
                                capture_output=True, text=True, env=env, timeout=timeout)
        if printed:
            return result.returncode, result.stdout, result.stderr
        row = json.loads(result.stdout) if result.stdout.strip().startswith("{") else None
        return result.returncode, row, result.stderr

    return run


def run_rendered_alone(canrun_bin, hf_home, folder, model, task, backend):
    """Renders MODEL's run.py for TASK on BACKEND with canrun render, runs it alone in `folder`
    (python3 run.py, as a user would) and returns its result line as a dict."""
    env = dict(os.environ, HF_HOME=str(hf_home), HF_HUB_OFFLINE="1")
    env.pop("HF_HUB_CACHE", None)
    script = subprocess.run([str(canrun_bin), "render", model, "--task", task, "--backend", backend],
                            capture_output=True, text=True, env=env, timeout=300, check=True).stdout
    (Path(folder) / "run.py").write_text(script)
    python = os.environ.get("CANRUN_PYTHON", sys.executable)
    result = subprocess.run([python, "run.py"], cwd=folder, capture_output=True, text=True,
                            env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    line = [l for l in result.stdout.splitlines() if l.startswith("CANRUN_RESULT ")][-1]
    return json.loads(line.removeprefix("CANRUN_RESULT "))
