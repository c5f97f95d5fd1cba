"""What a run (run.py, whatever its model and backend steer) can reach: an allow-list of canrun's
environment and never a secret, a home and a temporary folder of its own, and, where the OS
allows a box (root, or unprivileged user namespaces), no network but loopback, no writes outside
its folders, a bounded number of processes, none outliving it. The backend here,
canrun_faults:prying, tries each and notes what it found in pried.json in its run folder."""
import json
import os
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import fault_profile
from test_faults import no_process_of

MODEL = "canrun-fixtures/tiny-llama"
TOKEN = "hf_canrun_isolation_test_token"
BOX = "user,net,mount,pid,pids"  # what root gets on Linux with a writable pids cgroup


class Listener:
    """A TCP server on 127.0.0.1 that counts the connections it is offered; it stops after
    `seconds` at the latest."""

    def __init__(self, seconds=600):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(seconds)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        try:
            while True:
                connection, _ = self.server.accept()
                self.connections += 1
                connection.close()
        except OSError:
            pass

    def close(self):
        self.server.close()
        self.thread.join(5)


@pytest.fixture
def user_env(tmp_path, monkeypatch):
    """canrun's environment as a user's shell could hold it: a home, a Hub token, cloud keys."""
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-canrun-isolation-test")
    monkeypatch.setenv("CANRUN_FAULT_LOOK_FOR", "MY_SETTING,MY_OTHER_SETTING")
    monkeypatch.setenv("MY_SETTING", "passed")
    monkeypatch.setenv("MY_OTHER_SETTING", "not passed")
    return home


def pried(row):
    """The folder of the run behind `row`, and what canrun_faults:prying found there."""
    run_dir = Path(row["run_dir"])
    return run_dir, json.loads((run_dir / "pried.json").read_text())


def assert_no_secret_and_own_folders(found, run_dir, user_home):
    assert found["HF_TOKEN"] is None and found["hub_token"] is None
    assert found["AWS_SECRET_ACCESS_KEY"] is None
    assert found["looked"] == {"MY_SETTING": "passed", "MY_OTHER_SETTING": None}
    assert found["home"] == str(run_dir / "home")
    assert found["wrote_home"] and (run_dir / "home" / "pried").is_file()
    assert found["tmpdir"] and not os.path.exists(found["tmpdir"])  # its own, gone with it


def test_a_run_in_the_box_reaches_nothing_it_should_not(canrun_test, hf_home, tmp_path, user_env):
    [snapshot] = (hf_home / "hub" / "models--canrun-fixtures--tiny-llama" / "snapshots").iterdir()
    marker = f"CANRUN_FAULT_MARK_BOX_{os.getpid()}"
    listener = Listener()
    profile = fault_profile(tmp_path, "prying", {
        "CANRUN_FAULT_PRY": "all", "CANRUN_FAULT_PORT": str(listener.port),
        "CANRUN_FAULT_WRITE_INTO": f"{snapshot},{user_env}", "CANRUN_FAULT_SPAWN": "200",
        "CANRUN_FAULT_MARK": marker})
    try:
        code, row, err = canrun_test(MODEL, "--backend", profile, "--pass-env", "MY_SETTING",
                                     "--max-processes", "64")
    finally:
        listener.close()
        (snapshot / "canrun-pried").unlink(missing_ok=True)  # should the box have let it
    assert code == 0, err
    assert row["result"] == "PASS", row["error"]
    run_dir, found = pried(row)
    assert_no_secret_and_own_folders(found, run_dir, user_env)
    if row["isolation"] == "none" and os.geteuid() != 0:
        pytest.skip("this machine allows no box to a user (no unprivileged user namespaces)")
    assert row["isolation"].startswith("user,net,mount,pid"), row["isolation"]
    if os.geteuid() == 0:
        assert row["isolation"] == BOX
    # No network but loopback: the listener on the host's 127.0.0.1 was not reached.
    assert found["connect"] is not None and listener.connections == 0
    # No writes outside its folders: the model's snapshot, the user's home.
    assert all(error and "Read-only file system" in error for error in found["writes"].values()), found
    assert sorted(os.listdir(user_env)) == [] and not (snapshot / "canrun-pried").exists()
    # Processes stop at the limit (64 tasks, threads included), and none outlives the run,
    # not even those that left its process group.
    assert found["spawn_error"] is not None and 0 < found["spawned"] < 64, found
    assert no_process_of(marker)


def test_without_a_box_a_run_still_gets_no_secret(canrun_test, tmp_path, user_env):
    profile = fault_profile(tmp_path, "prying")
    code, row, err = canrun_test(MODEL, "--backend", profile, "--pass-env", "MY_SETTING",
                                 "--isolation", "none")
    assert code == 0, err
    assert row["result"] == "PASS", row["error"]
    assert row["isolation"] == "none"
    run_dir, found = pried(row)
    assert_no_secret_and_own_folders(found, run_dir, user_env)


def test_a_secret_is_refused_as_pass_env(canrun_bin, tmp_path):
    result = subprocess.run([str(canrun_bin), "--pass-env", "HF_TOKEN", "test", MODEL, "--cache",
                             str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert '"HF_TOKEN" names a secret' in result.stderr
    assert not (tmp_path / "runs").exists()
