"""canrun campaign, read from the demo's campaigns (the suite's shared campaign fixture,
tests/demo/demo_fixture.py): what the project stack's campaign recorded, its failure logs,
that a campaign's plan and verdict are what canrun plan and canrun test give for the same model
and options, the package learned on top, resume, dry run and retry."""
import json
import os
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "demo"))
from demo_fixture import OPTIONS, OUT, SOURCE, WHEELS, campaign_args, environment  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "serve"))
from server import SpaceServer  # noqa: E402

DATASET = OUT / "dataset"
# The project stack's campaign folder (scripts/demo.sh: campaigns/<backend>-<stack>).
CAMPAIGN = OUT / "campaigns" / "cpu-project"


def canrun(*args, env=None):
    return subprocess.run([os.environ["CANRUN_BIN"], *map(str, args)], capture_output=True, text=True,
                          env=env or environment(), timeout=900, cwd=SOURCE)


def campaign_command(*args):
    return ["campaign", *campaign_args(), "--backend", "cpu", "--python", os.environ["CANRUN_PYTHON"],
            "--cores", "3", *args]


@pytest.fixture(scope="module")
def stem():
    """The project stack's file stem (its transformers is the project's)."""
    import transformers
    stems = [p.stem for p in (DATASET / "data").glob("*.parquet")
             if p.stem.endswith(f"transformers-{transformers.__version__}")]
    assert len(stems) == 1, "run through ctest: the demo_run entry makes the dataset"
    return stems[0]


@pytest.fixture(scope="module")
def table(stem):
    return pd.read_parquet(DATASET / "data" / f"{stem}.parquet")


@pytest.fixture(scope="module")
def items(table):
    return {row.model_id: row for row in table.itertuples()}


def test_the_dataset_holds_each_model_once_and_validates(table):
    assert not table.duplicated(["model_id", "task"]).any()
    excluded = table[table.result == "EXCLUDED"]
    assert excluded.exclusion_reason.notna().all() and excluded.error.notna().all()
    assert (excluded.cores.isna()).all()
    result = canrun("dataset", "validate", DATASET)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_campaign_folder_says_every_item_is_done(table):
    result = canrun("campaign", "status", CAMPAIGN, "--json")
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["slices"] and all(s["state"] == "done" for s in status["slices"]), status


def test_each_failure_keeps_its_log_beside_the_dataset_and_the_space_links_it(table, stem):
    """A failure's row holds the end of its error; the whole run's output (stdout, then
    stderr) is kept under logs/ and offered on the model page."""
    failed = table[~table.result.isin(["PASS", "EXCLUDED"])]
    assert sorted(failed.model_id) == ["canrun-fixtures/unknown-arch"]
    logs = sorted(p.relative_to(DATASET).as_posix() for p in (DATASET / "logs" / stem).rglob("*.log"))
    assert logs == [f"logs/{stem}/canrun-fixtures/unknown-arch/text-generation.log"]
    load_failure = failed.iloc[0]
    log = (DATASET / logs[0]).read_text()
    assert log.startswith("[canrun: run.py's stdout]\nCANRUN_RESULT ")
    assert "\n[canrun: run.py's stderr]\n" in log
    # Last, the traceback run.py caught, readable (in the result line it is a JSON string).
    caught = log.split("[canrun: the error run.py caught, from its result line]\n")[1]
    assert caught.startswith("Traceback (most recent call last):\n")
    assert load_failure.error.strip().splitlines()[-1] == caught.strip().splitlines()[-1]

    backend, compiler, library = stem.split("__")
    stack = {"backend": backend, "compiler_version": compiler.split("-", 1)[1],
             "library_version": library.split("-", 1)[1], "task": "text-generation"}
    query = urllib.parse.urlencode(stack)
    server = SpaceServer(os.environ["CANRUN_BIN"], ["--data", DATASET], exit_after=60)
    try:
        status, _, body = server.get(f"/api/model/canrun-fixtures/unknown-arch?{query}")
        assert status == 200, body
        url = json.loads(body)["log_url"]
        status, headers, served = server.get(url)
        assert status == 200 and headers["Content-Type"] == "text/plain; charset=utf-8"
        assert served.decode() == log
        status, _, body = server.get(f"/api/model/canrun-fixtures/tiny-llama?{query}")
        assert status == 200 and json.loads(body)["log_url"] is None  # a PASS keeps no log
        status, _, body = server.get(f"/api/log/canrun-fixtures/tiny-llama?{query}")
        assert status == 404 and b"logs are kept for failures only" in body
    finally:
        server.stop()


def test_plans_agree_with_canrun_plan(items):
    for model in ("canrun-fixtures/tiny-llama", "HuggingFaceTB/SmolLM2-135M-Instruct",
                  "canrun-fixtures/big-gpt2", "canrun-fixtures/big-llama"):
        result = canrun("plan", model, "--json", *OPTIONS[2:])
        plan = json.loads(result.stdout)
        item = items[model]
        if plan["placed"]:
            assert (plan["cores"], plan["parallelism"]) == (item.cores, item.parallelism), model
        else:
            assert plan["exclusion_reason"] == item.exclusion_reason, model


def test_canrun_test_gives_the_campaigns_verdict(items):
    """A model the campaign ran gets the same verdict, cores and parallelism from canrun test,
    with the same run.py, and shares the campaign's CPU reference."""
    for model in ("canrun-fixtures/tiny-llama", "canrun-fixtures/unknown-arch"):
        stored = items[model]
        result = canrun("test", model, *OPTIONS, "--json")
        row = json.loads(result.stdout)
        assert (row["result"], row["cores"], row["parallelism"]) == \
            (stored.result, stored.cores, stored.parallelism), model
        assert row["run_py"] == stored.run_py, model
        if row["result"] == "PASS":
            assert row["output_text"] == stored.output_text
            assert row["reference_reused"]  # the campaign computed it; canrun test shares it


def test_a_missing_package_is_learned_on_top_and_the_stack_left_alone(table, tmp_path):
    wheel = next(WHEELS.glob("tiktoken-*.whl"))  # scripts/setup.sh put it there
    learned = [f"tiktoken=={wheel.name.split('-')[1]}"]
    row = table[table.model_id == "canrun-fixtures/tiny-tiktoken"].iloc[0]
    assert row.result == "PASS" and list(row.packages) == learned
    # Only the models that need packages on top have some (tiny-siglip: sentencepiece, protobuf).
    on_top = {row.model_id, "canrun-fixtures/tiny-siglip"}
    assert all(len(p) == 0 for p in table[~table.model_id.isin(on_top)].packages)
    stack = subprocess.run([os.environ["CANRUN_PYTHON"], "-c", "import tiktoken"], capture_output=True)
    assert stack.returncode != 0, "tiktoken was installed into the stack itself"
    # canrun test learns it the same way.
    result = canrun("test", "canrun-fixtures/tiny-tiktoken", *OPTIONS, "--json")
    tested = json.loads(result.stdout)
    assert (tested["result"], tested["packages"]) == ("PASS", learned)
    # With no wheel to be had, the load failure stays, saying why.
    env = dict(environment(), CANRUN_CACHE=str(tmp_path / "cache"), PIP_FIND_LINKS=str(tmp_path))
    result = canrun("test", "canrun-fixtures/tiny-tiktoken", *OPTIONS, "--json", env=env)
    failed = json.loads(result.stdout)
    assert failed["result"] == "FAIL_LOAD" and failed["packages"] == []
    assert "installing tiktoken on top of the stack failed" in failed["error"]


def test_a_new_campaign_on_a_finished_stack_runs_nothing(items, tmp_path):
    """The rows of the same models at the same revisions stand (as a second make demo)."""
    copy = tmp_path / "dataset"
    shutil.copytree(DATASET, copy)
    before = {p.name: p.stat().st_mtime_ns for p in (copy / "data").glob("*.parquet")}
    result = canrun(*campaign_command("--out", copy, "--campaign-dir", tmp_path / "campaign", "--json"))
    assert result.returncode == 0, result.stderr
    again = {item["model_id"]: item["result"] for item in json.loads(result.stdout)["items"]}
    assert again == {model: row.result for model, row in items.items()}
    assert " start " not in result.stderr
    assert {p.name: p.stat().st_mtime_ns for p in (copy / "data").glob("*.parquet")} == before


def test_dry_run_prints_the_plan_and_runs_nothing(tmp_path):
    result = canrun(*campaign_command("--out", tmp_path / "dataset", "--dry-run"))
    assert result.returncode == 0, result.stderr
    smollm2 = next(line for line in result.stdout.splitlines() if "SmolLM2-135M-Instruct" in line)
    assert "3 cores (tp)" in smollm2 and "selected" in smollm2
    assert "excluded: quantized" in result.stdout and "excluded: too_large" in result.stdout
    assert not (tmp_path / "dataset").exists()


def test_a_campaign_folder_written_before_items_kept_their_plan_resumes(items, stem, tmp_path):
    """The demo's campaign folder with its work list as canrun wrote it before items kept their
    checkpoint and plan, one verdict not yet recorded: --resume runs that one item (resolving
    its checkpoint again, as that canrun did) and records the verdict the campaign gave it."""
    copy = tmp_path / "dataset"
    shutil.copytree(DATASET, copy)
    folder = shutil.copytree(CAMPAIGN, tmp_path / "campaign")
    work = json.loads((folder / "work.json").read_text())
    index, item = next((i, it) for i, it in enumerate(work["items"]) if it["model_id"] == "canrun-fixtures/tiny-llama")
    assert {"checkpoint", "stack_plan"} <= set(item), "a campaign of this canrun keeps them"
    for each in work["items"]:
        each.pop("checkpoint", None)
        each.pop("stack_plan", None)
    (folder / "work.json").write_text(json.dumps(work))
    (folder / "slices" / "0" / "results" / f"{index}.json").unlink()
    result = canrun(*campaign_command("--out", copy, "--campaign-dir", folder, "--resume"))
    assert result.returncode == 0, result.stderr
    started = [line for line in result.stderr.splitlines() if " start " in f" {line} "]
    assert len(started) == 1 and "tiny-llama" in started[0], started
    table = pd.read_parquet(copy / "data" / f"{stem}.parquet").set_index("model_id")
    assert table.result.to_dict() == {model: row.result for model, row in items.items()}
    row = table.loc["canrun-fixtures/tiny-llama"]
    before = items["canrun-fixtures/tiny-llama"]
    assert (row.result, row.revision, row.cores, row.weights_bytes) == \
        (before.result, before.revision, before.cores, before.weights_bytes)


def test_retry_failed_runs_the_failures_again_and_marks_whether_they_held(items, tmp_path):
    """--retry failed on a copy of the demo's campaign: only the non-PASS verdicts run again,
    and each says in `flaky` whether it changed (a deterministic failure holds: false)."""
    copy = tmp_path / "dataset"
    shutil.copytree(DATASET, copy)
    shutil.copytree(CAMPAIGN, tmp_path / "campaign")
    result = canrun(*campaign_command("--out", copy, "--campaign-dir", tmp_path / "campaign", "--resume",
                                      "--retry", "failed"))
    assert result.returncode == 0, result.stderr
    started = [line for line in result.stderr.splitlines() if " start " in f" {line} "]
    assert len(started) == 1 and "unknown-arch" in started[0], started
    import transformers
    stem = next(p for p in (copy / "data").glob("*.parquet") if p.stem.endswith(transformers.__version__))
    table = pd.read_parquet(stem).set_index("model_id")
    assert table.loc["canrun-fixtures/unknown-arch", "flaky"] == False  # noqa: E712 (a numpy bool)
    assert table.loc["canrun-fixtures/unknown-arch", "result"] == "FAIL_LOAD"
    assert pd.isna(table.loc["canrun-fixtures/tiny-llama", "flaky"])  # PASS: not run again
