"""Shared fixtures for tests that drive the real canrun binary as a subprocess."""
import os
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def canrun_bin() -> Path:
    path = Path(os.environ["CANRUN_BIN"])
    assert path.is_file(), f"CANRUN_BIN={path} is not a file; run through ctest"
    return path


@pytest.fixture
def canrun(canrun_bin):
    """Run canrun with arguments; returns the CompletedProcess (text mode)."""

    def run(*args, env=None, input=None):
        full_env = dict(os.environ, NO_COLOR="1")
        if env:
            full_env.update(env)
        return subprocess.run([str(canrun_bin), *map(str, args)], capture_output=True,
                              text=True, env=full_env, input=input, timeout=120)

    return run
