"""canrun campaign, read from the shared campaign fixture (fixture_campaign.py): what it
selected, excluded and planned, what it recorded, and that a campaign's verdict is what
canrun test gives for the same model and options."""
import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pandas as pd
import pytest

from fixture_campaign import OPTIONS, WHEELS, environment

sys.path.insert(0, str(Path(__file__).parents[1] / "serve"))
from server import SpaceServer  # noqa: E402

OUT = Path(os.environ.get("CANRUN_CAMPAIGN_FIXTURE", ""))


@pytest.fixture(scope="module")
def campaign():
    path = OUT / "campaign.json"
    assert path.is_file(), "run through ctest: the campaign_fixture_run entry makes it"
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def items(campaign):
    return {item["model_id"]: item for item in campaign["items"]}


def canrun(*args):
    return subprocess.run([os.environ["CANRUN_BIN"], *map(str, args)], capture_output=True, text=True,
                          env=environment(OUT), timeout=900)


def test_every_listed_model_has_its_verdict_or_reason(items, campaign):
    expected = {
        "canrun-fixtures/tiny-llama": ("PASS", None),
        "canrun-fixtures/tiny-llama-4l": ("FAIL_JUDGE", None),
        "canrun-fixtures/tiny-tiktoken": ("PASS", None),
        "canrun-fixtures/unknown-arch": ("FAIL_LOAD", None),
        "canrun-fixtures/no-weights": ("EXCLUDED", "no_safetensors"),
        "canrun-fixtures/remote-code": ("EXCLUDED", "remote_code"),
        "canrun-fixtures/tiny-fp8": ("EXCLUDED", "quantized"),
        "canrun-fixtures/tiny-gpt2": ("EXCLUDED", "no_parallel_plan"),
        "canrun-fixtures/tiny-phimoe": ("EXCLUDED", "too_large"),
        "canrun-fixtures/tiny-opt": ("EXCLUDED", "low_priority"),
        "canrun-fixtures/tiny-llava": ("EXCLUDED", "unsupported_task"),
    }
    got = {model: (item["result"], item["exclusion_reason"]) for model, item in items.items()}
    assert got == expected
    assert [u for u in campaign["unresolved"] if "canrun-fixtures/not-there" in u]
    assert campaign["problems"] == [] and not campaign["interrupted"]


def test_a_sharded_plan_ran_sharded(items):
    sharded = items["canrun-fixtures/tiny-llama-4l"]
    assert (sharded["cores"], sharded["parallelism"]) == (2, "tp")
    table = pd.read_parquet(OUT / "dataset" / "data")
    row = table[table.model_id == "canrun-fixtures/tiny-llama-4l"].iloc[0]
    assert row.cores == 2 and row.parallelism == "tp" and row.verification == "judge+agreement"
    assert row.judge_score < row.judge_threshold
    assert 0.0 <= row.agreement <= 1.0 and row.judge_parts


def test_the_dataset_holds_each_model_once_and_validates(items):
    table = pd.read_parquet(OUT / "dataset" / "data")
    assert sorted(table.model_id) == sorted(items)
    assert table.model_id.is_unique
    excluded = table[table.result == "EXCLUDED"]
    assert excluded.exclusion_reason.notna().all() and excluded.error.notna().all()
    assert (excluded.cores.isna()).all()
    result = canrun("dataset", "validate", OUT / "dataset")
    assert result.returncode == 0, result.stdout + result.stderr


def test_each_failure_keeps_its_log_beside_the_dataset_and_the_space_links_it(items):
    """A failure's row holds the end of its error; the whole run's output (stdout, then
    stderr) is kept under logs/ and offered on the model page."""
    table = pd.read_parquet(OUT / "dataset" / "data")
    failed = table[~table.result.isin(["PASS", "EXCLUDED"])]
    assert sorted(failed.model_id) == ["canrun-fixtures/tiny-llama-4l",
                                       "canrun-fixtures/unknown-arch"]
    stem = next((OUT / "dataset" / "data").glob("*.parquet")).stem
    logs = sorted(p.relative_to(OUT / "dataset").as_posix()
                  for p in (OUT / "dataset" / "logs").rglob("*.log"))
    assert logs == [f"logs/{stem}/{model}/text-generation.log" for model in sorted(failed.model_id)]
    load_failure = failed[failed.model_id == "canrun-fixtures/unknown-arch"].iloc[0]
    log = (OUT / "dataset" / logs[1]).read_text()
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
    server = SpaceServer(os.environ["CANRUN_BIN"], ["--data", OUT / "dataset"], exit_after=60)
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
    for model in ("canrun-fixtures/tiny-llama", "canrun-fixtures/tiny-llama-4l", "canrun-fixtures/tiny-gpt2"):
        result = canrun("plan", model, "--json", *OPTIONS[2:6])
        plan = json.loads(result.stdout)
        item = items[model]
        if plan["placed"]:
            assert (plan["cores"], plan["parallelism"]) == (item["cores"], item["parallelism"]), model
        else:
            assert plan["exclusion_reason"] == item["exclusion_reason"], model


def test_canrun_test_gives_the_campaigns_verdict(items):
    """Every model the campaign ran (tiny-tiktoken: in the packages test) gets the same verdict,
    cores and parallelism from canrun test, with the same run.py."""
    table = pd.read_parquet(OUT / "dataset" / "data")
    for model in ("canrun-fixtures/tiny-llama", "canrun-fixtures/tiny-llama-4l", "canrun-fixtures/unknown-arch"):
        stored = table[table.model_id == model].iloc[0]
        result = canrun("test", model, *OPTIONS, "--json")
        row = json.loads(result.stdout)
        item = items[model]
        assert (row["result"], row["cores"], row["parallelism"]) == \
            (item["result"], item["cores"], item["parallelism"]), model
        assert row["run_py"] == stored.run_py, model
        if row["result"] == "PASS":
            assert row["output_text"] == stored.output_text
            assert row["reference_reused"]  # the campaign computed it; canrun test shares it


def test_a_missing_package_is_learned_on_top_and_the_stack_left_alone(items, tmp_path):
    wheel = next(WHEELS.glob("tiktoken-*.whl"))  # scripts/setup.sh put it there
    learned = [f"tiktoken=={wheel.name.split('-')[1]}"]
    table = pd.read_parquet(OUT / "dataset" / "data")
    row = table[table.model_id == "canrun-fixtures/tiny-tiktoken"].iloc[0]
    assert row.result == "PASS" and list(row.packages) == learned
    assert all(len(p) == 0 for p in table[table.model_id != row.model_id].packages)
    stack = subprocess.run([os.environ["CANRUN_PYTHON"], "-c", "import tiktoken"], capture_output=True)
    assert stack.returncode != 0, "tiktoken was installed into the stack itself"
    # canrun test learns it the same way.
    result = canrun("test", "canrun-fixtures/tiny-tiktoken", *OPTIONS, "--json")
    tested = json.loads(result.stdout)
    assert (tested["result"], tested["packages"]) == ("PASS", learned)
    # With no wheel to be had, the load failure stays, saying why.
    env = dict(environment(OUT), CANRUN_CACHE=str(tmp_path / "cache"), PIP_FIND_LINKS=str(tmp_path))
    result = subprocess.run([os.environ["CANRUN_BIN"], "test", "canrun-fixtures/tiny-tiktoken", *OPTIONS,
                             "--json"], capture_output=True, text=True, env=env, timeout=600)
    failed = json.loads(result.stdout)
    assert failed["result"] == "FAIL_LOAD" and failed["packages"] == []
    assert "installing tiktoken on top of the stack failed" in failed["error"]


def test_resume_of_a_finished_campaign_runs_nothing(items):
    before = (OUT / "dataset" / "data").stat().st_mtime_ns
    result = canrun("campaign", *OPTIONS, "--tasks", "text-generation", "--models", OUT / "models.txt",
                    "--exclusions", OUT / "exclusions.toml", "--out", OUT / "dataset", "--resume", "--json")
    assert result.returncode == 0, result.stderr
    again = {item["model_id"]: item["result"] for item in json.loads(result.stdout)["items"]}
    assert again == {model: item["result"] for model, item in items.items()}
    assert "start " not in result.stderr


def test_dry_run_prints_the_plan_and_runs_nothing(tmp_path):
    result = canrun("campaign", *OPTIONS, "--tasks", "text-generation", "--models", OUT / "models.txt",
                    "--exclusions", OUT / "exclusions.toml", "--out", tmp_path / "dataset", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "canrun-fixtures/tiny-llama-4l" in result.stdout and "2 cores (tp)" in result.stdout
    assert "excluded: quantized" in result.stdout and "unresolved: canrun-fixtures/not-there" in result.stdout
    assert not (tmp_path / "dataset").exists()


def test_retry_failed_runs_the_failures_again_and_marks_whether_they_held(items, tmp_path):
    """--retry failed on a copy of the fixture campaign: only the non-PASS verdicts run again,
    and each says in `flaky` whether it changed (a deterministic failure holds: false)."""
    import shutil
    copy = tmp_path / "dataset"
    shutil.copytree(OUT / "dataset", copy)
    result = canrun("campaign", *OPTIONS, "--tasks", "text-generation", "--models", OUT / "models.txt",
                    "--exclusions", OUT / "exclusions.toml", "--out", copy, "--resume", "--retry", "failed")
    assert result.returncode == 0, result.stderr
    started = [line for line in result.stderr.splitlines() if " start " in f" {line} "]
    assert len(started) == 2 and all("unknown-arch" in l or "tiny-llama-4l" in l for l in started), started
    table = pd.read_parquet(copy / "data").set_index("model_id")
    assert table.loc["canrun-fixtures/unknown-arch", "flaky"] == False  # noqa: E712 (a numpy bool)
    assert table.loc["canrun-fixtures/unknown-arch", "result"] == "FAIL_LOAD"
    assert pd.isna(table.loc["canrun-fixtures/tiny-llama", "flaky"])  # PASS: not run again
