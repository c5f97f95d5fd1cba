"""What a new user trips on (issue 37): a dry run that changes nothing whatever the executor
(no campaign folder, no scheduler command: stand-in `sbatch` and `kubectl` on PATH record any
call), campaign and hub commands started outside the repository finding the shipped catalog,
`campaign status` of a missing folder as bad input, and a campaign's compile cache hit rate
shown by `campaign status` and `cache stats --campaign`, also once its verdicts stood from an
earlier campaign in the folder. Every command runs in a folder of the test's own, on the fixture
models; none runs a model."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import verdict_row  # noqa: E402

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = SOURCE / ".cache" / "fixtures"
OPTIONS = ["--backend", "cpu", "--tasks", "text-generation", "--tokens", "2", "--no-perf",
           "--long-tokens", "0", "--memory-per-core", "0.0005", "--reserve", "0"]
STAND_IN = '#!/bin/sh\necho "$(basename "$0") $*" >> "{log}"\necho 1\n'


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One canrun cache for the module's commands, so the stack is probed once."""
    return tmp_path_factory.mktemp("canrun-cache")


@pytest.fixture
def user(tmp_path, shared_cache, canrun_bin):
    """canrun run as a user would in TMP (not the repository), the fixture models offline, with
    stand-in `sbatch` and `kubectl` first on PATH that append their calls to TMP/calls.log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sbatch", "kubectl"):
        (bin_dir / name).write_text(STAND_IN.format(log=tmp_path / "calls.log"))
        (bin_dir / name).chmod(0o755)
    (tmp_path / "models.txt").write_text("canrun-fixtures/tiny-llama\ncanrun-fixtures/no-weights\n")
    (tmp_path / "none.toml").write_text("")
    env = dict(os.environ, HF_HOME=str(FIXTURES), HF_HUB_OFFLINE="1", NO_COLOR="1",
               CANRUN_CACHE=str(shared_cache), PATH=f"{bin_dir}:{os.environ['PATH']}")
    env.pop("HF_HUB_CACHE", None)

    def run(*args):
        return subprocess.run([str(canrun_bin), *map(str, args)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)

    run.folder = tmp_path
    return run


def scheduler_calls(folder):
    log = folder / "calls.log"
    return log.read_text() if log.exists() else ""


FLEET_DRY_RUNS = {
    "slurm": ["--executor", "slurm", "--slices", "2"],
    "slurm --emit": ["--executor", "slurm", "--emit", "emitted"],
    "k8s": ["--executor", "k8s", "--image", "canrun:test"],
    "k8s --emit": ["--executor", "k8s", "--image", "canrun:test", "--emit", "emitted"],
}


@pytest.mark.parametrize("executor", FLEET_DRY_RUNS)
def test_a_fleet_dry_run_prints_the_plan_and_writes_and_submits_nothing(user, executor):
    # An explicit relative --exclusions is taken from the working folder.
    result = user("campaign", *OPTIONS, "--models", "models.txt", "--exclusions", "none.toml",
                  "--out", "dataset", "--campaign-dir", "campaign", *FLEET_DRY_RUNS[executor],
                  "--dry-run")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["#", "MODEL", "TASK"], result.stdout
    assert any("canrun-fixtures/tiny-llama" in line and "1 core" in line for line in lines)
    assert any("excluded: no_safetensors" in line for line in lines)
    assert any(line.startswith("dry run: nothing written, nothing submitted") for line in lines)
    for written in ("campaign", "emitted", "dataset"):
        assert not (user.folder / written).exists(), f"a dry run wrote {written}/"
    assert scheduler_calls(user.folder) == ""


def test_the_stand_in_scheduler_sees_a_real_submission(user):
    """The check above can fail: without --dry-run the same campaign is submitted to sbatch."""
    result = user("campaign", *OPTIONS, "--models", "models.txt", "--exclusions", "none.toml",
                  "--out", "dataset", "--campaign-dir", "campaign", "--executor", "slurm")
    assert result.returncode == 0, result.stderr
    assert (user.folder / "campaign" / "work.json").is_file()
    assert scheduler_calls(user.folder).startswith("sbatch --parsable --array=0-0")


def test_a_local_dry_run_from_another_folder_uses_the_shipped_catalog_and_writes_nothing(user):
    # No --selected, no --exclusions: the catalog shipped with canrun, not ./catalog.
    result = user("campaign", *OPTIONS, "--top", "0", "--out", "dataset", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "cannot open" not in result.stderr
    assert any("HuggingFaceTB/SmolLM2-135M-Instruct" in line and "selected" in line
               for line in result.stdout.splitlines()), result.stdout
    assert not (user.folder / "dataset").exists()
    # A relative path given is the user's, from the working folder.
    given = user("campaign", *OPTIONS, "--exclusions", "catalog/exclusions.toml", "--out",
                 "dataset", "--dry-run")
    assert given.returncode == 2
    assert "--exclusions catalog/exclusions.toml: no such file" in given.stderr
    given = user("campaign", *OPTIONS, "--models", "nope.txt", "--out", "dataset", "--dry-run")
    assert given.returncode == 2 and "--models nope.txt: no such file" in given.stderr


def test_hub_select_from_another_folder_uses_the_shipped_catalog(user):
    result = user("hub", "select", "--task", "text-generation", "--top", "0")
    assert result.returncode == 0, result.stderr
    assert "selected" in result.stdout and "Qwen/Qwen3-0.6B" in result.stdout
    given = user("hub", "select", "--task", "text-generation", "--top", "0", "--selected",
                 "catalog/selected.toml")
    assert given.returncode == 2 and "--selected catalog/selected.toml: no such file" in given.stderr


def test_status_of_a_missing_campaign_folder_is_bad_input(user):
    for command in (["campaign", "status", "no/such/campaign"],
                    ["cache", "stats", "--campaign", "no/such/campaign"]):
        result = user(*command)
        assert result.returncode == 2, (command, result.stderr)
        assert "no campaign folder no/such/campaign" in result.stderr
    (user.folder / "empty").mkdir()
    result = user("campaign", "status", "empty")
    assert result.returncode == 2 and "empty holds no campaign" in result.stderr


def test_the_hit_rate_of_a_campaign_whose_verdict_stood(user, write_rows):
    folder = user.folder
    (folder / "no-weights.txt").write_text("canrun-fixtures/no-weights\n")
    (folder / "tiny-llama.txt").write_text("canrun-fixtures/tiny-llama\n")
    # An excluded model's campaign (nothing runs) tells the stack's versions.
    first = user("campaign", *OPTIONS, "--models", "no-weights.txt", "--exclusions", "none.toml",
                 "--out", "dataset", "--campaign-dir", "excluded")
    assert first.returncode == 0, first.stderr
    stack = json.loads((folder / "excluded" / "campaign.json").read_text())
    revision = (FIXTURES / "hub" / "models--canrun-fixtures--tiny-llama" / "refs" / "main")
    write_rows(folder / "dataset", [verdict_row(
        "canrun-fixtures/tiny-llama", backend="cpu", compiler="inductor",
        compiler_version=stack["compiler_version"], library_version=stack["library_version"],
        revision=revision.read_text().strip())])

    def campaign():
        result = user("campaign", *OPTIONS, "--models", "tiny-llama.txt", "--exclusions",
                      "none.toml", "--out", "dataset", "--campaign-dir", "campaign")
        assert result.returncode == 0, result.stderr
        assert "PASS" in result.stdout  # the dataset's verdict stands: nothing ran

    def status_line():
        result = user("campaign", "status", "campaign")
        assert result.returncode == 0, result.stderr
        return [line for line in result.stdout.splitlines() if line.startswith("compile cache: ")]

    campaign()
    assert status_line() == ["compile cache: no hit rate: no run behind its 1 verdict reported "
                             "the compiler's cache counts (exclusions, verdicts that stood from "
                             "a campaign in another folder, or a backend that keeps no count)"]
    # As if this campaign had run it: the compiler's counts, journalled with its verdict.
    journal = folder / "campaign" / "slices" / "0" / "journal.jsonl"
    with journal.open("a") as events:
        events.write(json.dumps({"event": "done", "item": 0, "result": "PASS",
                                 "compile_cache": {"hits": 3, "misses": 1}}) + "\n")
    expected = ("3 of 4 graphs found in the cache (75 %), by the compiler's count in the runs of "
                "1 of 1 verdicts")
    assert status_line() == [f"compile cache: {expected}"]
    # The campaign again in its folder: the verdict stands, and so do its run's counts.
    campaign()
    assert status_line() == [f"compile cache: {expected}"]
    graph = folder / "compiled" / "inductor-2.13.0+cpu" / "fxgraph" / "ab" / "graph"
    graph.parent.mkdir(parents=True)
    graph.write_bytes(b"0" * 100)
    stats = user("cache", "stats", "compiled", "--campaign", "campaign")
    assert stats.returncode == 0, stats.stderr
    assert stats.stdout.splitlines()[2].split()[:2] == ["inductor-2.13.0+cpu", "1"], stats.stdout
    assert f"campaign campaign: {expected}" in stats.stdout.splitlines()
    as_json = user("cache", "stats", "compiled", "--campaign", "campaign", "--json")
    assert json.loads(as_json.stdout)["campaign"] == {
        "dir": "campaign", "hits": 3, "misses": 1, "hit_rate": 0.75, "counted": 1, "verdicts": 1}
