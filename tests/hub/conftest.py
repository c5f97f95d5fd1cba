"""Fixtures for the Hub tests: the local Hub stand-in and small real safetensors checkpoints."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from checkpoints import moe_state_dict, write_sharded_checkpoint  # noqa: E402
from hub_standin import HubStandIn, load_fixture  # noqa: E402


@pytest.fixture
def standin():
    server = HubStandIn(load_fixture("models.json")["models"], page_size=3, lifetime_s=120).start()
    yield server
    server.stop()


@pytest.fixture
def moe_checkpoint(tmp_path):
    return write_sharded_checkpoint(tmp_path / "tiny-moe", moe_state_dict())
