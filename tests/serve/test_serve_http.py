"""canrun serve on loopback: the API's answers, the page's caching, and robustness against
malformed, oversized, hostile and slow clients, and against files replaced while it reloads."""
import gzip
import json
import math
import selectors
import socket
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from server import SpaceServer  # noqa: E402
from space_data import EAGER_NOTE, HOW_WELL, build_space, rows, verdict_row, NEW  # noqa: E402


@pytest.fixture(scope="module")
def space_args(tmp_path_factory, write_rows_bin):
    import subprocess

    def write(dataset_dir, rows):
        lines = "".join(json.dumps(row) + "\n" for row in rows)
        result = subprocess.run([str(write_rows_bin), str(dataset_dir)], input=lines, text=True,
                                capture_output=True, timeout=120)
        assert result.returncode == 0, result.stderr
    return build_space(tmp_path_factory.mktemp("space"), write)


@pytest.fixture(scope="module")
def space(canrun_bin, space_args):
    server = SpaceServer(canrun_bin, space_args, extra=["--request-deadline", "2"])
    yield server
    assert server.stop() == 0, server.process.stderr.read()


def raw(server, data: bytes, timeout=5) -> bytes:
    """Sends bytes on a fresh connection and reads until the server closes or times out."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as conn:
        conn.sendall(data)
        chunks = []
        try:
            while chunk := conn.recv(65536):
                chunks.append(chunk)
        except (socket.timeout, ConnectionResetError):
            pass
        return b"".join(chunks)


def status_of(response: bytes) -> int:
    assert response.startswith(b"HTTP/1.1 "), response[:200]
    return int(response.split(b" ", 2)[1])


def get_json(server, path):
    status, headers, body = server.get(path)
    return status, json.loads(body)


# --- the API -------------------------------------------------------------------------------

def test_versions_are_newest_first_by_number(space):
    status, body = get_json(space, "/api/versions")
    assert status == 200
    neuron = next(item for item in body["backends"] if item["name"] == "neuron")
    assert [s["compiler_version"] for s in neuron["stacks"]] == [
        "2.17.1.0+5e6f7a8b", "2.17.1.0+5e6f7a8b", "2.16.372.0+4a9b2326", "2.9.1.0+1a2b3c4d"]
    assert [s["library_version"] for s in neuron["stacks"][:2]] == ["5.19.0", "5.18.0"]
    assert body["default"]["compiler_version"] == "2.17.1.0+5e6f7a8b"


def test_models_views_search_and_stack(space):
    status, body = get_json(space, "/api/models?view=downloads&task=text-generation&q=qwen"
                                   "&compiler_version=2.16.372.0%2B4a9b2326")
    assert status == 200
    assert [m["id"] for m in body["models"]] == ["Qwen/Qwen3-0.6B", "Qwen/Qwen3-8B"]
    assert [m["status"] for m in body["models"]] == ["PASS", "not tested"]
    assert body["models"][0]["rank"] == 1 and body["models"][0]["downloads"] == 5_000_000
    status, body = get_json(space, "/api/models?view=selected")
    excluded = next(m for m in body["models"] if m["id"].startswith("meta-llama/"))
    assert (excluded["status"], excluded["exclusion_reason"]) == ("EXCLUDED", "gated")
    status, body = get_json(space, "/api/models?view=trending&offset=30&limit=10")
    assert body["total"] == 36 and len(body["models"]) == 6 and body["models"][0]["rank"] == 31


def test_serve_given_only_a_dataset_uses_the_shipped_catalog_and_the_last_rankings(canrun_bin, space_args):
    """canrun serve --data DATASET: the shipped curated list, the rankings snapshots where
    canrun hub keeps them ($CANRUN_RANKINGS_DIR here), and a start-up log saying so."""
    import tomllib
    dataset, rankings = space_args[1], space_args[3]
    shipped = Path(__file__).resolve().parents[2] / "catalog"
    curated = tomllib.loads((shipped / "selected.toml").read_text())["text-generation"]["models"]
    server = SpaceServer(canrun_bin, ["--data", dataset], env={"CANRUN_RANKINGS_DIR": str(rankings)})
    try:
        status, body = get_json(server, "/api/models?view=selected&task=text-generation&limit=100")
        assert status == 200
        assert [m["id"] for m in body["models"]] == [m["id"] for m in curated]
        status, body = get_json(server, "/api/models?view=trending&task=text-generation")
        assert body["total"] == 36
    finally:
        server.stop()
    log = server.process.stderr.read()
    assert f"catalog: {shipped}" in log and f"rankings: {rankings}" in log, log


def test_rankings_are_refreshed_from_the_hub_while_serving_and_kept_when_it_is_gone(
        canrun_bin, space_args, tmp_path):
    sys.path.insert(0, str(Path(__file__).parents[1] / "hub"))
    from hub_standin import HubStandIn, load_fixture
    hub = HubStandIn(load_fixture("models.json")["models"], page_size=3, lifetime_s=120).start()
    rankings = tmp_path / "rankings"  # empty: everything Trending shows comes from the refresh
    args = ["--data", space_args[1], "--rankings", rankings, "--refresh-rankings", "3600"]
    env = {"HF_ENDPOINT": hub.endpoint, "HF_HUB_OFFLINE": "0"}
    server = SpaceServer(canrun_bin, args, env=env)
    try:
        trending = lambda: get_json(server, "/api/models?view=trending&task=text-generation")[1]["total"]
        assert server.wait_for(lambda: trending() > 0, timeout=20), server.process.stderr.read()
        assert hub.requests_to("/api/models")
        assert (rankings / "text-generation__trending.json").is_file()
    finally:
        server.stop()
        hub.stop()
    count = json.loads((rankings / "text-generation__trending.json").read_text())["models"]
    # The Hub is gone: the snapshot is served, and the log says why it was kept.
    server = SpaceServer(canrun_bin, args, env=env)
    try:
        status, body = get_json(server, "/api/models?view=trending&task=text-generation")
        assert body["total"] == len(count) > 0
        time.sleep(1)
    finally:
        server.stop()
    assert "keeping the snapshot fetched at" in server.process.stderr.read()


def test_tested_view_lists_every_row_of_the_stack_sortable(space):
    status, body = get_json(space, "/api/models?view=tested&task=text-generation&limit=100")
    assert status == 200 and body["view"] == "tested" and body["sort"] == "name"
    assert body["stack"]["library_version"] == "5.19.0" and body["total"] == 17
    ids = [m["id"] for m in body["models"]]
    assert ids == sorted(ids, key=str.lower) and "community-11/tiny-model-11" in ids  # not ranked
    assert all("decode_tokens_per_s" in m and "ttft_s" in m for m in body["models"])
    status, body = get_json(space, "/api/models?view=tested&sort=runtime&limit=100")
    runtimes = [m["runtime_s"] for m in body["models"]]
    assert runtimes[:12] == [31.0 + n for n in range(11)] + [95.0]
    assert runtimes[-1] is None  # unknown last: the excluded model
    status, body = get_json(space, "/api/models?view=tested&sort=verdict&limit=100")
    assert body["models"][0]["status"] == "PASS" and body["models"][-1]["status"] == "EXCLUDED"
    status, body = get_json(space, "/api/models?view=tested&q=QWEN")
    assert [m["id"] for m in body["models"]] == ["Qwen/Qwen3-0.6B", "Qwen/Qwen3-8B"]
    status, body = get_json(space, "/api/models?view=selected&sort=runtime")
    assert status == 400 and body["parameters"] == ["sort"]


# --- how well: the dashboard's figures, speedup, the long generation ----------------------

HOW_WELL_COLUMNS = ["eager_throughput", "eager_ttft_s", "eager_peak_memory_bytes", "eager_note",
                    "speedup", "memory_ratio", "memory_measure", "long_tokens",
                    "long_decode_tokens_per_s", "long_agreement", "drifts_after"]


def rows_of(compiler_version, library_version, task="text-generation"):
    return [row for row in rows() if row["backend"] == "neuron" and row["task"] == task
            and row["compiler_version"] == compiler_version
            and row["library_version"] == library_version]


def expected_summary(stack_rows):
    """The dashboard's figures of `stack_rows` as dataset/perf_summary.h defines them: pass
    rate over rows not EXCLUDED; geometric means of speedup and memory ratio and the median
    compile time over the PASSes that have them; drifting PASSes among those with a long
    generation."""
    tested = [row for row in stack_rows if row["result"] != "EXCLUDED"]
    passed = [row for row in tested if row["result"] == "PASS"]
    speedups = [row["speedup"] for row in passed if row.get("speedup")]
    compiles = [row["compile_s"] for row in passed if row.get("compile_s") is not None]
    ratios = [row["memory_ratio"] for row in passed if row.get("memory_ratio")]
    measures = {row.get("memory_measure") for row in passed if row.get("memory_ratio")}
    long = [row for row in passed if row.get("long_agreement") is not None]
    geomean = lambda values: math.exp(sum(map(math.log, values)) / len(values)) if values else None
    return {
        "tested": len(tested), "passed": len(passed),
        "pass_rate": len(passed) / len(tested) if tested else None,
        "with_baseline": len(speedups), "geomean_speedup": geomean(speedups),
        "with_compile_time": len(compiles),
        "median_compile_s": statistics.median(compiles) if compiles else None,
        "with_memory_ratio": len(ratios), "geomean_memory_ratio": geomean(ratios),
        "memory_measure": measures.pop() if len(measures) == 1 else None,
        "with_long_generation": len(long),
        "drifting": sum(row.get("drifts_after") is not None for row in long),
    }


def alarms_of(summary):
    """The dashboard's alarms that fire for `summary`, by the words each starts with."""
    fires = [("pass rate", summary["pass_rate"], lambda v: v < 0.90),
             ("speedup", summary["geomean_speedup"], lambda v: v < 0.95),
             ("compile", summary["median_compile_s"], lambda v: v > 120),
             ("memory ratio", summary["geomean_memory_ratio"], lambda v: v < 0.9)]
    return [name for name, value, fired in fires if value is not None and fired(value)]


def assert_summary(actual, stack_rows):
    expected = expected_summary(stack_rows)
    assert {key: actual[key] for key in expected} == pytest.approx(expected), actual
    names = alarms_of(expected)
    assert len(actual["alarms"]) == len(names), actual["alarms"]
    for alarm, name in zip(actual["alarms"], names):
        assert alarm.startswith(name + " "), (alarm, name)


@pytest.mark.parametrize("view", ["selected", "trending", "downloads", "tested"])
def test_every_view_summarizes_the_stacks_rows_of_the_task(space, view):
    status, body = get_json(space, f"/api/models?view={view}&task=text-generation&limit=5")
    assert status == 200 and body["stack"]["library_version"] == "5.19.0"
    newest = rows_of("2.17.1.0+5e6f7a8b", "5.19.0")
    assert_summary(body["summary"], newest)
    # The fixture's newest stack: a baseline on two PASSes, one of two long generations drifts,
    # and alarms fire (a third of it fails; compile 180 s; rss makes the memory ratio < 1).
    assert body["summary"]["with_baseline"] == 2 and body["summary"]["drifting"] == 1
    assert body["summary"]["memory_measure"] == "rss" and body["summary"]["alarms"]
    # A stack whose rows predate the eager baseline: none, and no memory ratio.
    status, body = get_json(space, f"/api/models?view={view}&task=text-generation"
                                   "&compiler_version=2.16.372.0%2B4a9b2326")
    old = rows_of("2.16.372.0+4a9b2326", "5.18.0")
    assert_summary(body["summary"], old)
    assert body["summary"]["geomean_speedup"] is None and body["summary"]["with_long_generation"] == 0


def test_the_summary_without_a_task_is_that_of_the_task_shown(space):
    """No task in the query: the table shows the first task, and the summary is of its rows."""
    status, body = get_json(space, "/api/models")
    assert body["task"] == "text-generation"
    assert_summary(body["summary"], rows_of("2.17.1.0+5e6f7a8b", "5.19.0"))
    status, body = get_json(space, "/api/models?task=sentence-similarity&backend=cpu")
    cpu = [row for row in rows() if row["backend"] == "cpu" and row["task"] == "sentence-similarity"]
    assert_summary(body["summary"], cpu)
    assert body["summary"]["tested"] == 1


def test_entries_carry_how_well_they_ran(space):
    status, body = get_json(space, "/api/models?view=tested&task=text-generation&limit=100")
    by_id = {m["id"]: m for m in body["models"]}
    for model_id in ("openai-community/gpt2", "google/gemma-3-1b-it"):
        row = HOW_WELL[(model_id, "NEW_LIB")]
        entry = by_id[model_id]
        for column in ("speedup", "memory_ratio", "long_agreement"):
            assert entry[column] == pytest.approx(row[column]), (model_id, column)
        assert entry["drifts_after"] == row.get("drifts_after")
        assert entry["compile_s"] == 180.0
    assert by_id["google/gemma-3-1b-it"]["drifts_after"] == 57
    untested_fields = ("speedup", "compile_s", "memory_ratio", "drifts_after", "long_agreement")
    # A failure's figures of how well: none (its compile time is its own column, kept).
    assert all(by_id["Qwen/Qwen3-8B"][key] is None for key in untested_fields if key != "compile_s")
    # Rows from before schema 9: every figure null, never missing.
    status, body = get_json(space, "/api/models?view=tested&compiler_version=2.16.372.0%2B4a9b2326")
    for entry in body["models"]:
        assert all(key in entry for key in untested_fields)
        assert entry["speedup"] is None and entry["drifts_after"] is None
    # A listed model never tested: the keys are there, null.
    status, body = get_json(space, "/api/models?view=downloads&q=SmolLM2")
    assert all(body["models"][0][key] is None for key in untested_fields)


def test_tested_view_sorts_by_speedup_largest_first_unknown_last(space):
    status, body = get_json(space, "/api/models?view=tested&task=text-generation&sort=speedup"
                                   "&limit=100")
    assert status == 200 and body["sort"] == "speedup"
    newest = rows_of("2.17.1.0+5e6f7a8b", "5.19.0")
    known = sorted((row for row in newest if row.get("speedup")), key=lambda row: -row["speedup"])
    unknown = sorted((row for row in newest if not row.get("speedup")),
                     key=lambda row: row["model_id"].lower())
    assert [m["id"] for m in body["models"]] == [row["model_id"] for row in known + unknown]
    assert [m["speedup"] for m in body["models"][:2]] == [1.95, 1.2]
    status, body = get_json(space, "/api/models?view=tested&sort=fastest")
    assert status == 400 and body["parameters"] == ["sort"] and "speedup" in body["error"]


def test_model_page_has_every_column_of_how_well(space):
    status, body = get_json(space, "/api/model/openai-community/gpt2")
    assert status == 200 and body["stack"]["library_version"] == "5.19.0"
    expected = HOW_WELL[("openai-community/gpt2", "NEW_LIB")]
    for column in HOW_WELL_COLUMNS:
        assert body["verdict"][column] == pytest.approx(expected.get(column)), column
    status, body = get_json(space, "/api/model/google/gemma-3-1b-it")
    assert body["status"] == "PASS" and body["verdict"]["drifts_after"] == 57
    assert body["verdict"]["long_agreement"] == 0.625
    status, body = get_json(space, "/api/model/community-1/tiny-model-1")
    assert body["verdict"]["eager_note"] == EAGER_NOTE and body["verdict"]["speedup"] is None
    # A row from before schema 9: the columns are there, null.
    status, body = get_json(space, "/api/model/openai-community/gpt2?compiler_version=2.16.372.0%2B4a9b2326")
    assert all(body["verdict"][column] is None for column in HOW_WELL_COLUMNS)


def test_compare_lists_speedup_and_compile_time_changes(space):
    new = quote("neuron__neuronx-cc-2.17.1.0+5e6f7a8b__transformers-5.18.0")
    new_lib = quote("neuron__neuronx-cc-2.17.1.0+5e6f7a8b__transformers-5.19.0")
    status, body = get_json(space, f"/api/compare?a={new}&b={new_lib}&task=text-generation")
    assert status == 200
    before = HOW_WELL[("openai-community/gpt2", "NEW")]
    after = HOW_WELL[("openai-community/gpt2", "NEW_LIB")]
    assert [(c["model_id"], c["from_speedup"], c["to_speedup"]) for c in body["speedup_changes"]] == [
        ("openai-community/gpt2", before["speedup"], after["speedup"])]
    assert [(c["model_id"], c["from_compile_s"], c["to_compile_s"])
            for c in body["compile_time_changes"]] == [
        ("openai-community/gpt2", before["compile_s"], 180.0)]


def test_causes_group_the_stacks_failures(space):
    status, body = get_json(space, "/api/causes")
    assert status == 200 and body["stack"]["library_version"] == "5.19.0" and body["failures"] == 6
    assert [(c["signature"], c["count"]) for c in body["causes"]] == [
        ("timeout", 3), ("fail_compile", 1), ("fail_oom", 1), ("fail_runtime", 1)]
    assert body["causes"][0]["models"] == [f"community-{n}/tiny-model-{n}" for n in (3, 6, 9)]
    assert body["causes"][1]["excerpt"] == "neuronx-cc: error: unsupported op aten::foo"
    status, body = get_json(space, "/api/causes?compiler_version=2.9.1.0%2B1a2b3c4d")
    assert [(c["signature"], c["results"]) for c in body["causes"]] == [
        ("fail_compile", [{"result": "FAIL_COMPILE", "count": 1, "status_class": "fail"}]),
        ("fail_runtime", [{"result": "FAIL_RUNTIME", "count": 1, "status_class": "fail"}])]
    status, body = get_json(space, "/api/causes?task=x")
    assert status == 400 and body["parameters"] == ["task"]


def test_compare_two_stacks_by_the_regression_rule(space):
    mid = "neuron__neuronx-cc-2.16.372.0%2B4a9b2326__transformers-5.18.0"
    new = "neuron__neuronx-cc-2.17.1.0%2B5e6f7a8b__transformers-5.18.0"
    status, body = get_json(space, f"/api/compare?a={mid}&b={new}&task=text-generation")
    assert status == 200, body
    assert body["a"]["compiler_version"] == "2.16.372.0+4a9b2326" and body["b"]["stem"] == new.replace("%2B", "+")
    assert [(c["model_id"], c["from"], c["to"]) for c in body["regressions"]] == [
        ("Qwen/Qwen3-0.6B", "PASS", "FAIL_COMPILE")]
    assert body["fixes"] == [] and len(body["newly_tested"]) == 12  # Qwen3-8B and 11 community models
    status, body = get_json(space, f"/api/compare?a={new}&b={mid}")
    assert [c["model_id"] for c in body["fixes"]] == ["Qwen/Qwen3-0.6B"]
    status, body = get_json(space, f"/api/compare?a={mid}&b=neuron__nothing-1__transformers-1")
    assert status == 400 and body["parameters"] == ["b"] and "known:" in body["error"]
    status, body = get_json(space, f"/api/compare?a={mid}")
    assert status == 400 and body["parameters"] == ["b"]


@pytest.mark.parametrize("query, names", [
    ("view=popular", ["view"]),
    ("limit=many", ["limit"]),
    ("limit=100000", ["limit"]),
    ("offset=-1", ["offset"]),
    ("task=text-to-nothing", ["task"]),
    ("backend=tpu", ["backend"]),
    ("compiler_version=9.9", ["compiler_version"]),
    ("library_version=0.0.1", ["library_version"]),
    ("colour=red&size=2", ["colour", "size"]),
])
def test_bad_parameters_are_400_naming_them(space, query, names):
    status, body = get_json(space, f"/api/models?{query}")
    assert status == 400
    assert body["parameters"] == names
    assert all(name in body["error"] for name in names)


def test_model_page_api(space):
    status, body = get_json(space, "/api/model/Qwen/Qwen3-0.6B?compiler_version=2.16.372.0%2B4a9b2326")
    assert status == 200
    assert body["status"] == "PASS"
    assert body["verdict"]["packages"] == ["torch-neuronx==2.13.3.0", "neuronx-cc==2.16.372.0"]
    # TorchNeuron's cache folder: its variable's, else its default (where run.py run alone looks).
    assert body["prefetch_command"] == (
        "hf buckets sync hf://buckets/aws-neuron/torch-neuronx-neff-cache/neuronxcc-2.16.372.0+4a9b2326"
        ' "${TORCH_NEURONX_NEFF_CACHE_DIR:-/tmp/neff_cache}"')
    assert body["run_command"] == "python3 run.py"
    assert [h["regression"] for h in body["history"]] == [False, True, False, False]
    status, body = get_json(space, "/api/model/Qwen/Qwen3-0.6B?backend=cpu")
    assert body["prefetch_command"] is None
    assert body["prefetch_note"] == "no public cache for this backend"
    assert get_json(space, "/api/model/nobody/nothing")[0] == 404
    assert get_json(space, "/api/model/bad..id/x")[0] == 400


# --- the census served beside the dataset --------------------------------------------------

NEW_LIB_STEM = "neuron__neuronx-cc-2.17.1.0+5e6f7a8b__transformers-5.19.0"
NEW_STEM = "neuron__neuronx-cc-2.17.1.0+5e6f7a8b__transformers-5.18.0"


def test_architectures_list_every_type_of_the_census_stack(space):
    status, body = get_json(space, "/api/architectures")
    assert status == 200
    # By default, the census of the Space's default stack.
    assert body["stack"]["stem"] == NEW_LIB_STEM and body["task"] == "text-generation"
    assert sorted(body["stacks"]) == sorted([NEW_LIB_STEM, NEW_STEM])
    by_type = {entry["model_type"]: entry for entry in body["architectures"]}
    assert list(by_type) == ["bart", "bloom", "gpt2", "gptj", "llama", "mixtral"]
    llama = by_type["llama"]
    assert llama["one_core"]["status"] == "PASS" and llama["one_core"]["model_id"] == "canrun-census/llama"
    assert llama["sharded"]["status"] == "PASS" and llama["sharded"]["parallelism"] == "tp"
    assert llama["text"] == ("architecture llama: PASS on 1 core, PASS tensor parallel "
                             "(census, random weights)")
    assert llama["claims"] == {"fullgraph": True, "tp_plan": True, "ep_plan": False}
    # SmolLM2 and community-12, -15 list llama; a model in both sorts counts once.
    assert llama["ranked_models"] == 3
    mixtral = by_type["mixtral"]
    assert mixtral["sharded"]["status"] == "FAIL_COMPILE" and mixtral["sharded"]["parallelism"] == "ep"
    assert mixtral["cause"] == "dynamo unsupported: fake tensor of a dtensor"
    assert by_type["gptj"]["sharded"]["exclusion_reason"] == "no_parallel_plan"
    assert by_type["gptj"]["claims"]["fullgraph"] is None
    assert by_type["bloom"]["sharded"] is None and by_type["bloom"]["cause"] == "fail_runtime"
    assert by_type["bart"]["one_core"]["status"] == "EXCLUDED" and by_type["bart"]["cause"] == "other_task"
    one_core = {(c["status"], c["exclusion_reason"]): c["count"] for c in body["counts"]["one_core"]}
    assert one_core == {("PASS", None): 4, ("FAIL_RUNTIME", None): 1, ("EXCLUDED", "other_task"): 1}
    sharded = {(c["status"], c["parallelism"], c["exclusion_reason"]): c["count"]
               for c in body["counts"]["sharded"]}
    assert sharded == {("PASS", "tp", None): 1, ("FAIL_COMPILE", "ep", None): 1,
                       ("EXCLUDED", None, "no_parallel_plan"): 2}
    # The other stack's census: mixtral's expert-parallel run passed there.
    status, body = get_json(space, f"/api/architectures?stack={quote(NEW_STEM)}&q=MIX")
    assert [e["model_type"] for e in body["architectures"]] == ["mixtral"]
    assert body["architectures"][0]["sharded"]["status"] == "PASS"
    # Sorted by verdict: PASS first, then failures by kind, then EXCLUDED.
    status, body = get_json(space, "/api/architectures?sort=one_core")
    assert [e["one_core"]["status"] for e in body["architectures"]] == [
        "PASS", "PASS", "PASS", "PASS", "FAIL_RUNTIME", "EXCLUDED"]
    status, body = get_json(space, "/api/architectures?sort=ranked")
    assert body["architectures"][0]["model_type"] == "llama"


@pytest.mark.parametrize("query, names, words", [
    ("stack=neuron__nothing-1__transformers-1", ["stack"], "census stacks:"),
    ("task=fill-mask", ["task"], "its tasks: text-generation"),
    ("sort=size", ["sort"], "type, one_core, sharded, ranked"),
    ("view=x", ["view"], "view"),
])
def test_bad_architectures_parameters_are_400_naming_them(space, query, names, words):
    status, body = get_json(space, f"/api/architectures?{query}")
    assert status == 400 and body["parameters"] == names and words in body["error"]


def test_untested_models_carry_their_types_census_line_and_tested_ones_do_not(space):
    status, body = get_json(space, "/api/models?view=downloads&task=text-generation&limit=100")
    by_id = {m["id"]: m for m in body["models"]}
    smol = by_id["HuggingFaceTB/SmolLM2-135M-Instruct"]
    assert smol["status"] == "not tested" and smol["predicted"]["cores"] == 1
    assert smol["census"]["text"] == ("architecture llama: PASS on 1 core, PASS tensor parallel "
                                      "(census, random weights)")
    assert smol["census"]["stack"]["stem"] == NEW_LIB_STEM
    assert by_id["community-16/tiny-model-16"]["census"]["text"] == (
        "architecture bloom: FAIL_RUNTIME on 1 core (census, random weights)")
    assert by_id["community-14/tiny-model-14"]["census"]["text"] == (
        "architecture gptj: PASS on 1 core, no parallel plan (census, random weights)")
    # gpt2 has a verdict of its own, and its type a census row: the verdict only.
    assert by_id["openai-community/gpt2"]["status"] == "PASS"
    assert by_id["openai-community/gpt2"]["census"] is None
    # Excluded by the catalog, or listed without a type: no census line.
    assert by_id["meta-llama/Llama-3.2-1B-Instruct"]["census"] is None
    assert by_id["community-20/tiny-model-20"]["census"] is None
    # On a stack without a census (cpu), none either.
    status, body = get_json(space, "/api/models?view=downloads&backend=cpu&limit=100")
    assert all(m["census"] is None for m in body["models"])
    # The model page says the same.
    status, body = get_json(space, "/api/model/community-13/tiny-model-13")
    assert body["status"] == "not tested" and body["census_row"] is False
    assert body["census"]["text"] == ("architecture mixtral: PASS on 1 core, FAIL_COMPILE expert "
                                      "parallel (census, random weights)")
    status, body = get_json(space, "/api/model/openai-community/gpt2")
    assert body["verdict"] is not None and body["census"] is None


def test_a_census_rows_page_is_served_from_the_census(space):
    status, body = get_json(space, "/api/model/canrun-census-sharded/mixtral")
    assert status == 200 and body["census_row"] is True
    assert body["stack"]["stem"] == NEW_LIB_STEM
    assert body["verdict"]["model_type"] == "mixtral" and body["status"] == "FAIL_COMPILE"
    assert body["verdict"]["run_py"] == "print('hi')\n"
    assert [h["status"] for h in body["history"]] == ["FAIL_COMPILE", "PASS"]
    assert body["history"][0]["regression"] is True
    status, body = get_json(space, "/api/model/canrun-census/llama?library_version=5.18.0")
    assert status == 200 and body["stack"]["stem"] == NEW_STEM and body["status"] == "PASS"
    status, body = get_json(space, "/api/model/canrun-census/nothing")
    assert status == 404 and "census" in body["error"]


def test_health_and_metrics(space):
    status, body = get_json(space, "/healthz")
    assert status == 200 and body["status"] == "ok" and body["stacks"] == 5
    status, headers, text = space.get("/metrics")
    text = text.decode()
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    for name in ("canrun_http_requests_total{route=\"api_models\",code=\"2xx\"}",
                 "canrun_http_request_duration_seconds_bucket{route=\"api_models\",le=\"+Inf\"}",
                 "canrun_index_rows ", "canrun_index_reloads_total ",
                 "canrun_http_open_connections "):
        assert name in text, name


# --- the page's files ----------------------------------------------------------------------

def test_page_assets_have_etags_gzip_and_keep_alive(space):
    request = (b"GET /app.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n"
               b"GET /style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    response = raw(space, request)
    assert response.count(b"HTTP/1.1 200 OK") == 2  # two answers on one connection
    head, _, rest = response.partition(b"\r\n\r\n")
    headers = dict(line.split(b": ", 1) for line in head.split(b"\r\n")[1:])
    assert headers[b"Content-Encoding"] == b"gzip"
    body = rest[:int(headers[b"Content-Length"])]
    assert b"textContent" in gzip.decompress(body)
    etag = headers[b"ETag"]
    again = raw(space, b"GET /app.js HTTP/1.1\r\nHost: x\r\nIf-None-Match: " + etag +
                b"\r\nConnection: close\r\n\r\n")
    assert status_of(again) == 304
    head = raw(space, b"HEAD /style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    full = raw(space, b"GET /style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head_fields, _, head_body = head.partition(b"\r\n\r\n")
    assert status_of(head) == 200 and head_body == b""
    full_body = full.partition(b"\r\n\r\n")[2]
    assert b"Content-Length: %d\r\n" % len(full_body) in head_fields + b"\r\n"
    status, headers, body = space.get("/model/Qwen/Qwen3-0.6B")
    assert status == 200 and b'<div id="app"' in body
    assert "script-src 'self'" in headers["Content-Security-Policy"]


# --- robustness ----------------------------------------------------------------------------

@pytest.mark.parametrize("request_bytes, expected", [
    (b"GARBAGE\r\n\r\n", 400),
    (b"GET\r\n\r\n", 400),
    (b"GET / HTTP/9.9\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nHost x\r\n\r\n", 400),
    (b"\x00\x01\x02\x03\r\n\r\n", 400),
    (b"POST /api/models HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi", 405),
    (b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET /%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET /..%2f..%2fetc%2fpasswd HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET /static/..\\..\\secret HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET /etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404),
    (b"GET /api/models?q=%ff%fe HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET /api/models?q=%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET /api/models?q=%00 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET /api/models?q=\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET /api/model/%C0%AE%C0%AE/x HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n", 431),
    (b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Many: b\r\n" * 2000 + b"\r\n", 431),
    (b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n", 413),
])
def test_malformed_requests_get_4xx_and_never_crash(space, request_bytes, expected):
    response = raw(space, request_bytes)
    assert status_of(response) == expected, response[:300]
    body = response.partition(b"\r\n\r\n")[2]
    assert b'"error"' in body
    assert space.process.poll() is None
    assert space.get("/healthz")[0] == 200


def timed_get(server, path="/api/models?view=downloads&q=qwen"):
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as conn:
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        response = b""
        while chunk := conn.recv(65536):
            response += chunk
    return time.perf_counter() - started, status_of(response)


def test_slow_clients_dripping_headers_do_not_stop_a_normal_client(space):
    """500 connections each send a header byte every 50 ms; normal requests are answered while
    every dripper still holds its connection (they never wait for a dripper to be evicted),
    and the server cuts the drippers off at --request-deadline (2 s)."""
    drippers = []
    for _ in range(500):
        conn = socket.create_connection(("127.0.0.1", space.port), timeout=5)
        conn.setblocking(False)
        conn.send(b"GET /api/versions HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        drippers.append(conn)
    stop = threading.Event()
    closed_by_server = set()

    def drip():
        selector = selectors.DefaultSelector()
        for conn in drippers:
            selector.register(conn, selectors.EVENT_READ)
        while not stop.is_set():
            for conn in drippers:
                if conn.fileno() in closed_by_server:
                    continue
                try:
                    conn.send(b"a")
                except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                    closed_by_server.add(conn.fileno())
            for key, _ in selector.select(timeout=0.05):
                try:
                    if key.fileobj.recv(4096) == b"":
                        closed_by_server.add(key.fileobj.fileno())
                        selector.unregister(key.fileobj)
                except (BlockingIOError, ConnectionResetError):
                    closed_by_server.add(key.fileobj.fileno())
                    selector.unregister(key.fileobj)

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    try:
        time.sleep(0.5)
        timings = [timed_get(space) for _ in range(20)]
        assert all(status == 200 for _, status in timings)
        assert not closed_by_server, \
            f"the normal requests were only answered after {len(closed_by_server)} drippers were cut off"
        # The deadline is per request: dripping never completes one, so each is cut off.
        assert space.wait_for(lambda: len(closed_by_server) == 500, timeout=6), \
            f"{500 - len(closed_by_server)} dripping connections still open after the deadline"
    finally:
        stop.set()
        thread.join()
        for conn in drippers:
            conn.close()
    assert space.get("/healthz")[0] == 200


def test_connection_cap_answers_503(canrun_bin, space_args):
    server = SpaceServer(canrun_bin, space_args, extra=["--max-connections", "4"])
    try:
        idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(4)]
        time.sleep(0.2)
        assert status_of(raw(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")) == 503
        for conn in idle:
            conn.close()
        assert server.wait_for(lambda: server.get("/healthz")[0] == 200, timeout=5)
    finally:
        assert server.stop() == 0


def test_files_replaced_during_reloads_never_produce_an_error(canrun_bin, tmp_path, write_rows,
                                                              space_args):
    """Writers replace a stack file over and over (atomic renames) while the server reloads
    every 0.2 s and clients query it: every answer is a 200 with whole JSON, and the new verdicts
    show up without a restart."""
    dataset = tmp_path / "dataset"
    write_rows(dataset, [verdict_row("org/flipping", "PASS", **NEW)])
    server = SpaceServer(canrun_bin, ["--data", dataset])
    errors = []
    seen = set()
    stop = threading.Event()

    def query():
        while not stop.is_set():
            status, headers, body = server.get("/api/model/org/flipping")
            try:
                seen.add(json.loads(body)["status"])
            except ValueError:
                errors.append(f"bad JSON {body[:100]!r}")
            if status != 200:
                errors.append(f"{status} {body[:200]!r}")

    clients = [threading.Thread(target=query) for _ in range(4)]
    for client in clients:
        client.start()
    try:
        for round_idx in range(12):
            result = "FAIL_RUNTIME" if round_idx % 2 == 0 else "PASS"
            write_rows(dataset, [verdict_row("org/flipping", result, **NEW,
                                             started_at=f"2026-12-01T10:00:{round_idx + 1:02d}Z")]
                       + [verdict_row(f"org/filler-{idx}", "PASS", **NEW) for idx in range(200)])
            time.sleep(0.1)
        # A second stack appears: picked up without a restart.
        write_rows(dataset, [verdict_row("org/flipping", "PASS", compiler_version="2.18.0.0")])
        assert server.wait_for(
            lambda: get_json(server, "/api/versions")[1]["default"]["compiler_version"]
            == "2.18.0.0")
    finally:
        stop.set()
        for client in clients:
            client.join()
    metrics = server.get("/metrics")[2].decode()
    assert server.stop() == 0
    assert errors == []
    assert seen == {"PASS", "FAIL_RUNTIME"}
    reloads = int(next(line.split()[1] for line in metrics.splitlines()
                       if line.startswith("canrun_index_reloads_total ")))
    assert reloads >= 2


# --- the command's own errors --------------------------------------------------------------

def test_bad_inputs_exit_2_naming_them(canrun, tmp_path, space_args):
    result = canrun("serve", "--data", tmp_path / "missing", "--port", "0")
    assert result.returncode == 2
    assert "missing" in result.stderr and "does not exist" in result.stderr
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "selected.toml").write_text("[text-generation]\nmodels = [ { id = \"bad id\" } ]\n")
    result = canrun("serve", *space_args[:2], "--catalog", catalog, "--port", "0")
    assert result.returncode == 2
    assert "selected.toml:2" in result.stderr
    result = canrun("serve", *space_args[:2], "--census", tmp_path / "no-census", "--port", "0")
    assert result.returncode == 2
    assert "census dataset folder" in result.stderr and "no-census" in result.stderr


def test_a_port_in_use_is_an_error_naming_it(canrun, space_args):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = canrun("serve", *space_args, "--port", port, "--exit-after", "5")
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr


# --- large answers sent again (sendfile from a file copy) ----------------------------------

@pytest.fixture(scope="module")
def big_page_space(canrun_bin, space_args, tmp_path_factory):
    """A Space whose app.js is 8 MB (--web), so it is sent from a file copy from its second
    send on (serve/body_files.h); --request-deadline 2 s."""
    web = tmp_path_factory.mktemp("web")
    source = Path(__file__).resolve().parents[2] / "web"
    for path in source.iterdir():  # every page file (--web serves what the build embeds)
        if path.name != "app.js":
            (web / path.name).write_bytes(path.read_bytes())
    lines = (f"// line {idx:07d} {idx * 2654435761 % 4294967296:010d}\n" for idx in range(240_000))
    (web / "app.js").write_text("".join(lines))
    server = SpaceServer(canrun_bin, space_args, extra=["--web", web, "--request-deadline", "2"])
    server.app_js = (web / "app.js").read_bytes()
    yield server
    assert server.stop() == 0, server.process.stderr.read()


def read_responses(conn, methods):
    """The responses to requests `methods` (b"GET", b"HEAD") sent on a connection, each with
    Content-Length: [(head bytes, body bytes)]."""
    data = b""
    responses = []
    while len(responses) < len(methods):
        head_end = data.find(b"\r\n\r\n")
        if head_end >= 0:
            head = data[:head_end]
            length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:")))
            if methods[len(responses)] == b"HEAD":
                length = 0
            if len(data) >= head_end + 4 + length:
                responses.append((head, data[head_end + 4:head_end + 4 + length]))
                data = data[head_end + 4 + length:]
                continue
        chunk = conn.recv(1 << 20)
        assert chunk, f"connection closed after {len(responses)} of {len(methods)} responses"
        data += chunk
    return responses


def test_large_answers_sent_again_arrive_whole(big_page_space):
    """The first send is written from memory, the later ones go with sendfile from the file
    copy: every one has the same bytes, on one keep-alive connection and on fresh ones, and
    HEAD still has only the head."""
    get = b"GET /app.js HTTP/1.1\r\nHost: x\r\n\r\n"
    head = b"HEAD /app.js HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection(("127.0.0.1", big_page_space.port), timeout=10) as conn:
        conn.sendall(get + get + get)  # pipelined: one write, then two from the file
        for head_bytes, body in read_responses(conn, [b"GET"] * 3):
            assert head_bytes.startswith(b"HTTP/1.1 200 OK")
            assert body == big_page_space.app_js
    for _ in range(3):
        status, headers, body = big_page_space.get("/app.js", timeout=10)
        assert status == 200 and body == big_page_space.app_js
    with socket.create_connection(("127.0.0.1", big_page_space.port), timeout=10) as conn:
        # HEAD between GETs on one connection: no body bytes may leak into the next answer.
        conn.sendall(head + get + head + get)
        answers = read_responses(conn, [b"HEAD", b"GET", b"HEAD", b"GET"])
        assert b"Content-Length: %d" % len(big_page_space.app_js) in answers[0][0]
        assert answers[1][1] == big_page_space.app_js and answers[3][1] == big_page_space.app_js
        assert answers[2][0].startswith(b"HTTP/1.1 200 OK")


def test_a_client_that_stops_reading_a_large_answer_is_cut_off(big_page_space):
    """A client that asks for the large answer and reads nothing holds its socket only until
    --request-deadline: others are answered meanwhile, and the server then closes it."""
    big_page_space.get("/app.js", timeout=10)
    big_page_space.get("/app.js", timeout=10)  # the file copy exists from here on
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect(("127.0.0.1", big_page_space.port))
    try:
        stalled.sendall(b"GET /app.js HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
        started = time.monotonic()
        for _ in range(5):
            assert big_page_space.get("/healthz")[0] == 200
        assert time.monotonic() - started < 1.5
        time.sleep(3.5)  # past the deadline
        stalled.settimeout(10)
        received = 0
        try:
            while chunk := stalled.recv(1 << 20):
                received += len(chunk)
        except ConnectionResetError:
            pass
        assert received < 3 * len(big_page_space.app_js), "the stalled client got everything"
    finally:
        stalled.close()
    assert big_page_space.process.poll() is None
    status, headers, body = big_page_space.get("/app.js", timeout=10)
    assert status == 200 and body == big_page_space.app_js
