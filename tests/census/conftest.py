"""The census every census test reads (tests/census/census_run.py), run once per session."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from census_run import run_census  # noqa: E402


@pytest.fixture(scope="session")
def census(canrun_bin, tmp_path_factory):
    return run_census(canrun_bin, tmp_path_factory.mktemp("census"))
