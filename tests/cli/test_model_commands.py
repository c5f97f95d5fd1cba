"""canrun plan, render and test of one model, as a new user meets them: they exclude exactly what
a campaign excludes (the campaign's reason and sentence, the reason once, exit 1, nothing run),
take the task from the model when --task is not given (and say so), and read a MODEL that looks
like a path as a folder."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(os.environ["CANRUN_SOURCE_DIR"])
FIXTURES = SOURCE / ".cache" / "fixtures"
# The demo's campaign's cores (demo/campaign.args: 0.25 GiB each, no reserve) and curated
# exclusions, and the reasons it records for the fixtures it excludes (tests/demo/test_demo.py).
# --cores 4 is the cpu profile's most, which plan, render and test plan up to.
OPTIONS = ["--memory-per-core", "0.25", "--reserve", "0",
           "--exclusions", SOURCE / "demo" / "catalog" / "exclusions.toml"]
EXCLUDED = {
    "canrun-fixtures/remote-code": "remote_code",
    "canrun-fixtures/tiny-fp8": "quantized",
    "canrun-fixtures/no-weights": "no_safetensors",
    "canrun-fixtures/tiny-sd-custom-unet": "remote_code",
    "canrun-fixtures/tiny-sd-pickle": "no_safetensors",
    "canrun-fixtures/tiny-llama-4l": "low_priority",
    "canrun-fixtures/big-gpt2": "no_parallel_plan",
    "canrun-fixtures/big-llama": "too_large",
}
PIPELINES = {"canrun-fixtures/tiny-sd-custom-unet", "canrun-fixtures/tiny-sd-pickle"}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    return {"HF_HOME": str(FIXTURES), "HF_HUB_OFFLINE": "1", "CANRUN_CACHE": str(cache)}


@pytest.fixture(scope="module")
def campaign_plan(canrun_bin, env, tmp_path_factory):
    """What a campaign of these models (and a BERT) decides, by model: (reason, why). Run first,
    it asks the stack about every model type at once, and the commands below find the answers
    cached."""
    folder = tmp_path_factory.mktemp("campaign")
    models = folder / "models.txt"
    models.write_text("".join(f"{model} {'text-to-image' if model in PIPELINES else ''}\n"
                              for model in EXCLUDED) +
                      "canrun-fixtures/tiny-bert-classifier text-classification\n")
    result = subprocess.run([str(canrun_bin), "campaign", "--models", models, "--out",
                             folder / "dataset", "--cores", "4", *OPTIONS, "--dry-run", "--json"],
                            capture_output=True, text=True, env=dict(os.environ, **env),
                            timeout=300)
    assert result.returncode == 0, result.stderr
    items = json.loads(result.stdout)["items"]
    return {item["model_id"]: (item["exclusion_reason"], item["why"]) for item in items}


def once(reason, text):
    """How often `reason` stands on its own in `text` (not inside trust_remote_code or
    fp8-quantized)."""
    return len(re.findall(rf"(?<![\w-]){reason}(?![\w-])", text))


@pytest.mark.parametrize("model", EXCLUDED)
def test_an_excluded_model_is_excluded_by_plan_render_and_test_as_by_a_campaign(
        canrun, env, campaign_plan, model, tmp_path):
    reason, why = campaign_plan[model]
    assert reason == EXCLUDED[model]

    plan = canrun("plan", model, *OPTIONS, env=env)
    assert plan.returncode == 1, plan.stderr
    assert f"on cpu: not placed, excluded as {reason}\n" in plan.stdout
    assert f"why       {why}\n" in plan.stdout
    assert once(reason, plan.stdout + plan.stderr) == 1, plan.stdout + plan.stderr
    planned = json.loads(canrun("plan", model, *OPTIONS, "--json", env=env).stdout)
    assert (planned["exclusion_reason"], planned["why"]) == (reason, why)

    render = canrun("render", model, *OPTIONS, env=env)
    assert render.returncode == 1 and render.stdout == ""
    assert f"canrun: {model} is excluded on cpu ({reason}): {why}\n" in render.stderr
    assert once(reason, render.stderr) == 1, render.stderr

    test = canrun("test", model, *OPTIONS, "--out", tmp_path / "dataset", env=env)
    assert test.returncode == 1, test.stderr
    assert "result    EXCLUDED\n" in test.stdout and f"excluded  {reason}\n" in test.stdout
    assert f"\n{why}\n" in test.stdout
    assert once(reason, test.stdout + test.stderr) == 1, test.stdout + test.stderr
    assert "run.py" not in test.stdout  # nothing ran: no run folder
    assert list((tmp_path / "dataset" / "data").glob("*.parquet"))  # the EXCLUDED row, recorded


def test_render_of_a_pipeline_renders_its_task_and_says_where_it_was_taken_from(
        canrun, env, campaign_plan):  # campaign_plan: the stack's answers, cached
    render = canrun("render", "canrun-fixtures/tiny-sd", env=env)
    assert render.returncode == 0, render.stderr
    assert "from diffusers import DiffusionPipeline" in render.stdout
    assert "AutoModelForCausalLM" not in render.stdout
    said = [line for line in render.stderr.splitlines() if "task" in line]
    assert said == ["canrun: task text-to-image, from model_index.json (StableDiffusionPipeline); "
                    "--task chooses another"], render.stderr
    # --task given: taken as it is, nothing said.
    given = canrun("render", "canrun-fixtures/tiny-sd", "--task", "text-to-image", env=env)
    assert given.returncode == 0 and given.stdout == render.stdout
    assert "chooses another" not in given.stderr


def test_plan_takes_the_task_of_an_encoder_from_its_architecture(canrun, env,
                                                                 campaign_plan):  # cached
    plan = canrun("plan", "canrun-fixtures/tiny-bert-classifier", "--json", env=env)
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["task"] == "text-classification"
    assert "from config.json's architecture BertForSequenceClassification" in plan.stderr


def test_a_model_that_looks_like_a_path_is_a_folder(canrun, env):
    for model in ("./nope/folder", "../nope/folder", "/nope/folder"):
        result = canrun("plan", model, env=env)
        assert result.returncode == 2
        assert f'no such folder: "{model}"' in result.stderr, result.stderr
        assert "invalid model id" not in result.stderr
    render = canrun("render", "./nope/folder", env=env)
    assert render.returncode == 2 and "no such folder" in render.stderr


def test_an_unresolved_model_is_named_once(canrun, env, tmp_path):
    models = tmp_path / "models.txt"
    models.write_text("canrun-fixtures/not-there\n")
    result = canrun("campaign", "--models", models, "--out", tmp_path / "dataset", "--dry-run",
                    env=env)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("unresolved: ")]
    assert len(lines) == 1 and lines[0].count("canrun-fixtures/not-there") == 1, lines
    assert lines[0].startswith("unresolved: canrun-fixtures/not-there (text-generation) at main "
                               "is not in the HF cache"), lines
