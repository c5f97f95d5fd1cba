"""canrun dataset push / pull: the dataset on a Hub dataset repo, through a stand-in `hf` on PATH
(tests/fixtures/hf_standin.py) that checks and records the arguments canrun passes."""
import json
import sys
from pathlib import Path

import pytest

from conftest import verdict_row

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from hf_standin import HfStandIn, path_without_hf  # noqa: E402

REPO = "my-org/canrun-results"
STACK = "neuron__neuronx-cc-2.16.372.0+4a9b2326__transformers-5.18.0"
LOG = f"logs/{STACK}/org/fails/text-generation.log"


@pytest.fixture
def hf(tmp_path):
    return HfStandIn(tmp_path / "hf")


@pytest.fixture
def dataset(tmp_path, write_rows):
    folder = write_rows(tmp_path / "results", [verdict_row("org/passes", "PASS"),
                                               verdict_row("org/fails", "FAIL_COMPILE")])
    (folder / LOG).parent.mkdir(parents=True)
    (folder / LOG).write_text("Traceback (most recent call last):\nRuntimeError: boom\n")
    return folder


def files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def published(root):
    """What a push publishes: everything but hidden files (locks, campaign folders)."""
    return {path: data for path, data in files(root).items()
            if not any(part.startswith(".") for part in path.split("/"))}


def test_push_publishes_data_logs_and_card_with_the_exact_arguments(canrun, dataset, hf):
    assert (dataset / ".locks").is_dir()  # the writer's locks: local only

    result = canrun("dataset", "push", dataset, f"hf://datasets/{REPO}", env=hf.env)
    assert result.returncode == 0, result.stderr
    assert f"pushed {dataset} (3 files, 1 stack file) to hf://datasets/{REPO}" in result.stdout
    [call] = hf.calls()
    assert call["argv"] == [
        "upload", REPO, str(dataset), ".", "--repo-type", "dataset",
        "--include", "data/*", "--include", "logs/*", "--include", "README.md",
        "--exclude", "*/.*", "--commit-message", "canrun dataset push: 1 stack file"]
    assert files(hf.dataset(REPO)) == published(dataset)
    assert sorted(published(dataset)) == ["README.md", f"data/{STACK}.parquet", LOG]


def test_push_refuses_a_dataset_that_does_not_validate(canrun, dataset, hf):
    (dataset / "data" / "notes.csv").write_text("model_id,result\n")
    good = (dataset / "data" / f"{STACK}.parquet").read_bytes()
    (dataset / "data" / f"{STACK}.parquet").write_bytes(good[: len(good) // 2])

    result = canrun("dataset", "push", dataset, f"hf://datasets/{REPO}", env=hf.env)
    assert result.returncode == 1
    assert f"not pushing {dataset}: `canrun dataset validate` finds 2 files with problems" in result.stderr
    assert "data/notes.csv: not a dataset file" in result.stderr
    assert f"data/{STACK}.parquet: truncated" in result.stderr
    assert hf.calls() == []


def test_pull_into_a_new_folder_gives_back_the_same_dataset(canrun, dataset, hf, tmp_path):
    assert canrun("dataset", "push", dataset, f"hf://datasets/{REPO}", env=hf.env).returncode == 0
    copy = tmp_path / "elsewhere" / "results"

    result = canrun("dataset", "pull", f"hf://datasets/{REPO}", copy, "--json", env=hf.env)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["files"] == ["README.md", f"data/{STACK}.parquet", LOG] and out["replaced"] == 0
    call = hf.calls()[-1]["argv"]
    assert call[:5] == ["download", REPO, "--repo-type", "dataset", "--local-dir"]
    staging = Path(call[5])
    assert staging.parent == copy.parent and staging.name.startswith(".results.pull-")
    assert call[6:] == ["--include", "data/*", "--include", "logs/*", "--include", "README.md"]
    assert not staging.exists()
    assert published(copy) == published(dataset)
    validate = canrun("dataset", "validate", copy)
    assert validate.returncode == 0, validate.stdout
    show = canrun("dataset", "show", copy, "--json")
    assert sorted(row["model_id"] for row in json.loads(show.stdout)) == ["org/fails", "org/passes"]


def test_pull_replaces_the_hubs_files_and_keeps_the_others(canrun, dataset, hf, tmp_path,
                                                           write_rows):
    assert canrun("dataset", "push", dataset, f"hf://datasets/{REPO}", env=hf.env).returncode == 0
    local = write_rows(tmp_path / "local", [
        verdict_row("org/passes", "FAIL_RUNTIME"),  # the Hub's row of this stack wins
        verdict_row("org/cpu-only", "PASS", backend="cpu", compiler="inductor",
                    compiler_version="2.13.0")])

    result = canrun("dataset", "pull", f"hf://datasets/{REPO}", local, env=hf.env)
    assert result.returncode == 0, result.stderr
    assert f"pulled hf://datasets/{REPO} into {local}: 3 files (1 new, 2 replaced)" in result.stdout
    rows = json.loads(canrun("dataset", "show", local, "--json").stdout)
    assert sorted((row["model_id"], row["result"]) for row in rows) == [
        ("org/cpu-only", "PASS"), ("org/fails", "FAIL_COMPILE"), ("org/passes", "PASS")]
    card = (local / "README.md").read_text()
    assert "inductor" in card and "neuronx-cc" in card  # the card is rewritten for both stacks


def test_pull_refuses_what_does_not_validate_and_leaves_the_folder_alone(canrun, dataset, hf,
                                                                       tmp_path):
    assert canrun("dataset", "push", dataset, f"hf://datasets/{REPO}", env=hf.env).returncode == 0
    (hf.dataset(REPO) / "data" / f"{STACK}.parquet").write_bytes(b"not parquet at all")
    target = tmp_path / "pulled"

    result = canrun("dataset", "pull", f"hf://datasets/{REPO}", target, env=hf.env)
    assert result.returncode == 1
    assert f"not pulling hf://datasets/{REPO} into {target}" in result.stderr
    assert f"data/{STACK}.parquet: not a Parquet file" in result.stderr
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pulled")] == []


def test_bad_repos_and_a_missing_hf_are_named(canrun, dataset, hf, tmp_path):
    models = canrun("dataset", "push", dataset, "hf://models/my-org/x", env=hf.env)
    assert models.returncode == 2
    assert '"hf://models/my-org/x" is not a Hub dataset; expected hf://datasets/<namespace>/<name>' \
        in models.stderr
    bad = canrun("dataset", "pull", "hf://datasets/my-org/bad--name", tmp_path / "x", env=hf.env)
    assert bad.returncode == 2 and "hf://datasets/my-org/bad--name" in bad.stderr
    assert hf.calls() == []

    absent = canrun("dataset", "pull", "hf://datasets/my-org/absent", tmp_path / "x", env=hf.env)
    assert absent.returncode == 1
    assert "`hf download my-org/absent --repo-type dataset" in absent.stderr
    assert "Repository Not Found" in absent.stderr
    assert not (tmp_path / "x").exists()

    missing = canrun("dataset", "push", dataset, f"hf://datasets/{REPO}",
                     env={"PATH": path_without_hf()})
    assert missing.returncode == 2
    assert "pip install huggingface_hub" in missing.stderr
