"""make demo, as the suite's shared campaign (demo_fixture.py ran scripts/demo.sh with
DEMO_SERVE=0): what its dataset shows for each of the two stacks, read with pandas and canrun's
own dataset commands, and that a second run reuses everything."""
import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from demo_fixture import OUT, run_demo

DATASET = OUT / "dataset"
TASKS_SHOWN = 4  # at least this many tasks with rows, per stack
MODELS_SHOWN = 20  # at least this many models, per stack


def canrun(*args):
    return subprocess.run([os.environ["CANRUN_BIN"], *map(str, args)], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def stacks():
    """{transformers version: that stack's rows}, from the dataset's files."""
    assert (OUT / "demo.json").is_file(), "run through ctest: the demo_run entry makes it"
    files = sorted((DATASET / "data").glob("*.parquet"))
    out = {}
    for path in files:
        table = pd.read_parquet(path)
        versions = set(table.stack.map(lambda stack: json.loads(stack)["transformers"]))
        assert len(versions) == 1, (path.name, versions)
        out[versions.pop()] = table.set_index(["model_id", "task"], drop=False)
    return out


def stem_of(stacks, version):
    return next(p.stem for p in (DATASET / "data").glob("*.parquet") if p.stem.endswith(f"transformers-{version}"))


def test_the_demo_tested_the_zoo_on_two_transformers_versions(stacks):
    assert sorted(stacks) == ["4.57.6", "5.18.0"], sorted(stacks)
    for version, table in stacks.items():
        assert table.model_id.nunique() >= MODELS_SHOWN, (version, table.model_id.nunique())
        assert table.task.nunique() >= TASKS_SHOWN, (version, sorted(set(table.task)))
        assert set(table.backend) == {"cpu"} and set(table.compiler) == {"inductor"}
        # Rows name the task's library, the stack holds every library's version.
        libraries = dict(zip(table.task, table.library))
        assert libraries["sentence-similarity"] == "sentence-transformers", version
        assert libraries["text-to-image"] == "diffusers" and libraries["fill-mask"] == "transformers"
    assert canrun("dataset", "validate", DATASET).returncode == 0


@pytest.mark.parametrize("version", ["5.18.0", "4.57.6"])
def test_the_real_models_pass(stacks, version):
    table = stacks[version]
    minilm = table.loc[("sentence-transformers/all-MiniLM-L6-v2", "sentence-similarity")]
    assert minilm.result == "PASS" and minilm.verification == "reference", minilm.error
    assert minilm.throughput > 0 and minilm.throughput_unit == "sentences/s"
    smollm2 = table.loc[("HuggingFaceTB/SmolLM2-135M-Instruct", "text-generation")]
    assert smollm2.result == "PASS", smollm2.error
    # Sharded: 257 MiB of weights over the demo's 0.25 GiB cores, tensor parallel over 3, decided
    # by the judge and the teacher-forced agreement with the CPU reference.
    assert (smollm2.cores, smollm2.parallelism) == (3, "tp")
    assert smollm2.verification == "judge+agreement" and smollm2.agreement >= 0.9
    assert smollm2.judge_score >= smollm2.judge_threshold
    assert "Paris" in smollm2.output_text


@pytest.mark.parametrize("version", ["5.18.0", "4.57.6"])
def test_every_exclusion_kind_carries_its_reason(stacks, version):
    table = stacks[version]
    excluded = table[table.result == "EXCLUDED"]
    reasons = dict(zip(excluded.model_id, excluded.exclusion_reason))
    assert reasons == {
        "canrun-fixtures/no-weights": "no_safetensors",
        "canrun-fixtures/tiny-sd-pickle": "no_safetensors",
        "canrun-fixtures/remote-code": "remote_code",
        "canrun-fixtures/tiny-sd-custom-unet": "remote_code",
        "canrun-fixtures/big-llama": "too_large",
        "canrun-fixtures/big-gpt2": "no_parallel_plan",
        "canrun-fixtures/tiny-fp8": "quantized",
        "canrun-fixtures/tiny-opt": "low_priority",  # the zoo's curated exclusion
    }, reasons
    assert excluded.error.str.len().min() > 20  # each says why, in a sentence
    why = dict(zip(excluded.model_id, excluded.error))
    assert "do not fit even 3 cores" in why["canrun-fixtures/big-llama"]
    assert "trust_remote_code" in why["canrun-fixtures/remote-code"]


def test_a_verdict_differs_between_the_versions_for_a_reason_of_the_version(stacks):
    """NanoChat and Jais2 are architectures transformers 5 added: 4.57.6 cannot load them."""
    for model in ("canrun-fixtures/tiny-nanochat", "canrun-fixtures/tiny-jais2"):
        new = stacks["5.18.0"].loc[(model, "text-generation")]
        old = stacks["4.57.6"].loc[(model, "text-generation")]
        assert new.result == "PASS", new.error
        assert old.result == "FAIL_LOAD", old.error
        model_type = model.split("-")[-1]
        assert f"model type `{model_type}`" in old.error, old.error
    result = canrun("dataset", "diff", DATASET, "--from", stem_of(stacks, "4.57.6"),
                    "--to", stem_of(stacks, "5.18.0"), "--json")
    assert result.returncode in (0, 1), result.stderr
    diff = json.dumps(json.loads(result.stdout))
    assert "canrun-fixtures/tiny-nanochat" in diff and "canrun-fixtures/tiny-jais2" in diff


def test_a_failure_cause_groups_more_than_one_model(stacks):
    result = canrun("dataset", "causes", DATASET, "--stack", stem_of(stacks, "4.57.6"), "--json")
    assert result.returncode == 0, result.stderr
    causes = json.loads(result.stdout)
    groups = causes["causes"] if isinstance(causes, dict) else causes
    assert max(len(group["models"]) for group in groups) >= 2, causes


@pytest.mark.parametrize("version", ["5.18.0", "4.57.6"])
def test_every_family_of_the_zoo_passes(stacks, version):
    """What the zoo's fixtures are for: each family passes against the CPU reference, compared
    by its task's own rule; the ones that must fail do, with the verdict they must get."""
    table = stacks[version]
    failing = {("canrun-fixtures/unknown-arch", "text-generation"): "FAIL_LOAD"}
    if version.startswith("4."):
        failing[("canrun-fixtures/tiny-nanochat", "text-generation")] = "FAIL_LOAD"
        failing[("canrun-fixtures/tiny-jais2", "text-generation")] = "FAIL_LOAD"
    ran = table[table.result != "EXCLUDED"]
    got = {key: row.result for key, row in ran.iterrows() if row.result != "PASS"}
    assert got == failing, {key: ran.loc[key].error for key in got}
    verified = {"text-generation": "reference", "image-text-to-text": "reference"}
    for key, row in ran[ran.result == "PASS"].iterrows():
        assert row.verification == verified.get(row.task, "reference") or row.cores > 1, key
        assert row.compile_s > 0 and row.runtime_s >= row.compile_s, key
        assert row.throughput > 0, key
    units = dict(zip(ran.task, ran.throughput_unit))
    assert units["text-generation"] == "tokens/s" and units["text-to-image"] == "steps/s"
    # A text-to-image verdict keeps both images beside the dataset.
    sd = table.loc[("canrun-fixtures/tiny-sd", "text-to-image")]
    files = json.loads(sd.output_files) if isinstance(sd.output_files, str) else dict(sd.output_files)
    for path in files.values():
        assert (DATASET / path).stat().st_size > 100, path
    # The package learned on top: tiny-tiktoken's tokenizer needs tiktoken, on both stacks.
    tiktoken = table.loc[("canrun-fixtures/tiny-tiktoken", "text-generation")]
    assert [p.split("==")[0] for p in tiktoken.packages] == ["tiktoken"]


def test_a_second_demo_reuses_everything():
    """A second run re-tests nothing: every verdict stands (resume, references, compiled
    graphs); the dataset is not rewritten."""
    before = {p.name: p.stat().st_mtime_ns for p in (DATASET / "data").glob("*.parquet")}
    result, seconds = run_demo(Path(os.environ["CANRUN_BIN"]).parent, OUT)
    assert result.returncode == 0, result.stderr[-4000:]
    print(f"second make demo (DEMO_SERVE=0): {seconds:.1f} s")
    assert " start " not in result.stderr and "verify " not in result.stderr, result.stderr[-4000:]
    after = {p.name: p.stat().st_mtime_ns for p in (DATASET / "data").glob("*.parquet")}
    assert after == before
