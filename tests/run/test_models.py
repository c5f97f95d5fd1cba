"""canrun test on a checkpoint on the CPU with inductor: the reference is computed once; the
rendered run.py reproduces the tokens on its own; verdicts land in the dataset; bad input is
refused; a folder is a model as its Hub id is. One fixture throughout (tiny GPT-2, the quickest to
compile), so the module's tests share its reference and compiled graphs. (Every fixture
architecture and the real SmolLM2 passing, the unknown one failing to load and the repo without
weights being excluded are read from the demo's campaign: tests/demo/test_demo.py.)"""
import json
import os
import subprocess
import sys

from pathlib import Path

import pandas as pd
import pytest


@pytest.fixture(scope="module")
def runs(canrun_test, tmp_path_factory):
    """tiny GPT-2 through canrun test twice: first with an empty cache, then with --out."""
    code, first, err = canrun_test("canrun-fixtures/tiny-gpt2")
    assert code == 0, err
    dataset = tmp_path_factory.mktemp("out") / "dataset"
    code, second, err = canrun_test("canrun-fixtures/tiny-gpt2", "--out", dataset)
    assert code == 0, err
    return {"first": first, "second": second, "second_stderr": err, "dataset": dataset}


def test_reference_is_reused(runs):
    first, second = runs["first"], runs["second"]
    assert first["result"] == "PASS" and not first["reference_reused"]
    assert second["result"] == "PASS" and second["reference_reused"]
    assert "running the CPU reference" not in runs["second_stderr"]
    assert second["output_text"] == first["output_text"]


def test_rendered_run_py_runs_alone_and_prints_the_same_tokens(runs, hf_home, cache_dir, tmp_path):
    row = runs["first"]
    script = tmp_path / "elsewhere" / "run.py"
    script.parent.mkdir()
    script.write_text(row["run_py"])
    # A bare environment but for the compile cache canrun filled (as its compile-cache command
    # gives a user): the script needs nothing else of canrun's, and its graphs are not compiled
    # a third time. (Under CANRUN_COMPILE_CACHE when that names the graphs' folder, as the
    # suite's does; and with the thread count canrun's run had, when one was set: TorchInductor's
    # CPU graphs are compiled for a thread count, and another misses them.)
    graphs = Path(os.environ.get("CANRUN_COMPILE_CACHE") or cache_dir / "compile")
    compiled = graphs / "cpu" / f"inductor-{row['compiler_version']}"
    assert compiled.is_dir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1",
           "TORCHINDUCTOR_CACHE_DIR": str(compiled)}
    if "OMP_NUM_THREADS" in os.environ:
        env["OMP_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"]
    python = os.environ.get("CANRUN_PYTHON", sys.executable)
    result = subprocess.run([python, "run.py"], cwd=script.parent, env=env, capture_output=True, text=True,
                            timeout=600)
    line = next((l for l in result.stdout.splitlines() if l.startswith("CANRUN_RESULT ")), None)
    assert line is not None, f"no result line (status {result.returncode}):\n{result.stderr[-3000:]}"
    alone = json.loads(line[len("CANRUN_RESULT "):])
    assert result.returncode == 0 and alone["ok"], \
        f"status {result.returncode}, stage {alone.get('stage')}:\n{alone.get('error')}\n{result.stderr[-3000:]}"
    assert alone["text"] == row["output_text"]
    assert len(alone["tokens"]) == 32
    assert alone["compile_cache"]["hits"] > 0, alone["compile_cache"]
    # Run alone, it is given no reference: no teacher-forced pass, no agreement. Under canrun
    # it was given one (reference.json beside it) and reported the pass, compiling nothing new.
    assert not any(key.startswith("agreement") for key in alone)
    assert row["agreement"] == 1.0
    ran = Path(row["run_dir"])
    report = next(json.loads(l[len("CANRUN_RESULT "):]) for l in (ran / "stdout.txt").read_text().splitlines()
                  if l.startswith("CANRUN_RESULT "))
    assert report["agreement_positions"] == 32 and report["agreement_compiled_graphs"] == 0
    assert json.loads((ran / "reference.json").read_text())["tokens"] == report["tokens"]


def test_out_records_the_verdict_in_the_dataset(runs):
    row, dataset = runs["second"], runs["dataset"]
    df = pd.read_parquet(dataset / "data")
    assert len(df) == 1
    stored = df.iloc[0]
    assert stored.model_id == "canrun-fixtures/tiny-gpt2" and stored.result == "PASS"
    assert stored.run_py == row["run_py"]
    assert stored.compiler_version == row["compiler_version"]
    files = [p.name for p in (dataset / "data").iterdir()]
    assert files == [f"cpu__inductor-{row['compiler_version']}__transformers-{row['library_version']}.parquet"]


def test_bad_input_is_refused_before_running(canrun_test, tmp_path):
    code, row, err = canrun_test("org/model\"; import os")
    assert code == 2 and row is None
    assert "invalid model id" in err
    code, row, err = canrun_test("canrun-fixtures/not-there")
    assert code == 2
    assert "is not in the HF cache" in err and "download it first" in err
    code, row, err = canrun_test("canrun-fixtures/tiny-gpt2", "--backend", "tpu")
    assert code == 2
    assert 'no backend profile "tpu"' in err
    code, row, err = canrun_test("canrun-fixtures/tiny-gpt2", "--task", "text-to-speech")
    assert code == 2
    assert 'no recipe for task "text-to-speech"' in err
    code, row, err = canrun_test("canrun-fixtures/tiny-gpt2", "--backend", "neuron")
    assert code == 2
    assert "has no neuronx-cc" in err


def test_every_command_takes_a_folder_and_render_prints_what_test_runs(canrun_bin, canrun_test,
                                                                      hf_home, cache_dir):
    """plan, render, test and hub info take MODEL in the same forms (a Hub id, a folder), and
    canrun render prints, byte for byte, the run.py that canrun test runs."""
    folder = next((hf_home / "hub" / "models--canrun-fixtures--tiny-gpt2" / "snapshots").iterdir())

    def canrun(*args):
        env = dict(os.environ, HF_HOME=str(hf_home), HF_HUB_OFFLINE="1", NO_COLOR="1")
        result = subprocess.run([str(canrun_bin), *map(str, args)], capture_output=True, text=True,
                                env=env, timeout=300)
        assert result.returncode == 0, result.stderr
        return result.stdout

    code, row, err = canrun_test(folder)
    assert code == 0, (row or {}).get("error") or err
    assert row["model_id"] == "local/" + folder.name
    # With the options canrun_test gave the test (no eager baseline, no long generation).
    rendered = canrun("render", folder, "--cache", cache_dir, "--no-perf", "--long-tokens", "0")
    assert "PERF = False" in rendered and "LONG_TOKENS = 0" in rendered
    assert rendered == row["run_py"]
    assert rendered == (Path(row["run_dir"]) / "run.py").read_text()

    by_id = json.loads(canrun("plan", "canrun-fixtures/tiny-gpt2", "--json"))
    by_folder = json.loads(canrun("plan", folder, "--json"))
    assert by_id["weights_bytes"] == by_folder["weights_bytes"] == row["weights_bytes"]
    assert by_id["cores"] == by_folder["cores"] == row["cores"] == 1
    info_id = json.loads(canrun("hub", "info", "canrun-fixtures/tiny-gpt2", "--json"))
    info_folder = json.loads(canrun("hub", "info", folder, "--json"))
    assert info_id["weights"]["bytes"] == info_folder["weights"]["bytes"] == row["weights_bytes"]
    assert info_id["weights"]["source"] == "hf-cache" and info_folder["weights"]["source"] == "local"
    # The Hub id renders the script that canrun test runs for the Hub id.
    by_hub_id = canrun("render", "canrun-fixtures/tiny-gpt2")
    assert 'MODEL = "canrun-fixtures/tiny-gpt2"' in by_hub_id
    assert f'REVISION = "{info_id["sha"]}"' in by_hub_id
