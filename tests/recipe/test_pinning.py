"""How a sharded run.py pins its ranks, read from the rendered script itself (imported, not
run): each rank gets its own contiguous slice of the Neuron cores or CUDA devices it was
given, or its share of the host's threads; too few cores is an error naming the variable.
The rule is canrun's (src/backend/pinning.h): the case table both sides are held to is
src/backend/pinning_cases.json."""
import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def model_folder(tmp_path_factory):
    """A checkpoint folder canrun render can resolve offline: a config and one tiny tensor."""
    from safetensors.numpy import save_file
    import numpy as np

    folder = tmp_path_factory.mktemp("model") / "tiny"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    save_file({"w": np.zeros(4, dtype=np.float32)}, str(folder / "model.safetensors"))
    return folder


def render(canrun_bin, model_folder, *args):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    return subprocess.run([str(canrun_bin), "render", str(model_folder), *args], capture_output=True, text=True,
                          check=True, env=env).stdout


@pytest.fixture
def rendered(canrun_bin, model_folder, tmp_path):
    def make(backend, cores):
        return load(render(canrun_bin, model_folder, "--backend", backend, "--cores", str(cores), "--parallelism", "tp"),
                    tmp_path / f"run_{backend}_{cores}.py")
    return make


def load(script, path):
    path.write_text(script)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # main() runs only as __main__
    return module


def pinning(module, monkeypatch, given):
    if given is None:
        monkeypatch.delenv(module.PIN_ENV, raising=False)
    else:
        monkeypatch.setenv(module.PIN_ENV, given)
    return [module.rank_pinning(rank) for rank in range(module.CORES)]


def test_neuron_ranks_get_contiguous_ranges(rendered, monkeypatch):
    run = rendered("neuron", 4)
    assert run.PIN_ENV == "NEURON_RT_VISIBLE_CORES" and run.DISTRIBUTED_BACKEND == "neuron"
    assert pinning(run, monkeypatch, None) == ["0", "1", "2", "3"]
    assert pinning(run, monkeypatch, "8-11") == ["8", "9", "10", "11"]
    assert pinning(run, monkeypatch, "0-7") == ["0-1", "2-3", "4-5", "6-7"]
    with pytest.raises(RuntimeError, match="NEURON_RT_VISIBLE_CORES=4-5 gives fewer than the 4 cores"):
        pinning(run, monkeypatch, "4-5")


def test_cuda_ranks_get_their_devices(rendered, monkeypatch):
    run = rendered("cuda", 2)
    assert run.PIN_ENV == "CUDA_VISIBLE_DEVICES" and run.DISTRIBUTED_BACKEND == "nccl"
    assert pinning(run, monkeypatch, None) == ["0", "1"]
    assert pinning(run, monkeypatch, "4,6") == ["4", "6"]
    assert pinning(run, monkeypatch, "0,1,2,3") == ["0,1", "2,3"]


def test_cpu_ranks_share_the_threads(rendered, monkeypatch):
    run = rendered("cpu", 3)
    assert run.PIN_ENV == "OMP_NUM_THREADS" and run.DISTRIBUTED_BACKEND == "gloo"
    assert pinning(run, monkeypatch, "12") == ["4", "4", "4"]
    assert pinning(run, monkeypatch, "2") == ["1", "1", "1"]  # at least one thread each
    assert pinning(run, monkeypatch, None) == [str(max(1, len(os.sched_getaffinity(0)) // 3))] * 3


def test_one_core_starts_no_rank(canrun_bin, model_folder, tmp_path):
    script = render(canrun_bin, model_folder)
    # Nothing about ranks in a one-core script: no rank to start, nothing to pin or shard.
    for word in ("CORES", "PARALLELISM", "RANK", "start_ranks", "rank_pinning", "sharding", "torch.distributed"):
        assert word not in script
    module = load(script, tmp_path / "run_one_core.py")
    assert callable(module.main) and callable(module.load)


BACKEND_OF_SYNTAX = {"count": "cpu", "range": "neuron", "list": "cuda"}


def test_case_table_holds_for_canrun_and_run_py(canrun_bin, rendered, monkeypatch):
    table = Path(os.environ["CANRUN_SOURCE_DIR"]) / "src/backend/pinning_cases.json"
    cases = json.loads(table.read_text())["cases"]
    answers = json.loads(subprocess.run([os.environ["CANRUN_PINNING_ANSWERS"], str(table)], capture_output=True,
                                        text=True, check=True).stdout)
    scripts = {syntax: rendered(backend, 2) for syntax, backend in BACKEND_OF_SYNTAX.items()}
    assert {case["syntax"] for case in cases} == set(scripts)
    for case, canrun_says in zip(cases, answers, strict=True):
        run = scripts[case["syntax"]]
        assert run.PIN_SYNTAX == case["syntax"]
        monkeypatch.setattr(run, "CORES", case["cores"])
        if case["given"]:
            monkeypatch.setenv(run.PIN_ENV, case["given"])
        else:
            monkeypatch.delenv(run.PIN_ENV, raising=False)
        run_py_says = []
        for rank in range(case["cores"]):
            try:
                run_py_says.append({"share": run.rank_pinning(rank)})
            except RuntimeError as error:
                run_py_says.append({"error": str(error)})
        if "error" in case:  # every rank's failure says why, on both sides
            for side in (canrun_says, run_py_says):
                assert all(case["error"] in said.get("error", "") for said in side), (case, side)
            continue
        if case.get("host_threads"):
            expected = [str(max(1, len(os.sched_getaffinity(0)) // case["cores"]))] * case["cores"]
        else:
            expected = case["shares"]
        assert canrun_says == [{"share": share} for share in expected], case
        assert run_py_says == [{"share": share} for share in expected], case
