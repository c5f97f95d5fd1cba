"""canrun dataset validate / show / diff / causes, and the dataset card, as a user meets them."""
import ast
import json
import re

import markdown_it
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from conftest import verdict_row

OLD = dict(compiler_version="2.15.128.0+56dc5a86", library_version="4.57.6")
NEW = dict(compiler_version="2.16.372.0+4a9b2326", library_version="5.18.0")
OLD_STEM = "neuron__neuronx-cc-2.15.128.0+56dc5a86__transformers-4.57.6"
NEW_STEM = "neuron__neuronx-cc-2.16.372.0+4a9b2326__transformers-5.18.0"


@pytest.fixture
def two_stacks(tmp_path, write_rows):
    write_rows(tmp_path, [
        verdict_row("org/stays-passing", "PASS", **OLD),
        verdict_row("org/regresses", "PASS", **OLD),
        verdict_row("org/gets-fixed", "FAIL_COMPILE", **OLD),
        verdict_row("org/dropped", "FAIL_OOM", **OLD),
        verdict_row("org/stays-passing", "PASS", **NEW),
        verdict_row("org/regresses", "FAIL_RUNTIME", **NEW),
        verdict_row("org/gets-fixed", "PASS", **NEW),
        verdict_row("org/new", "TIMEOUT", **NEW),
        verdict_row("org/excluded", "EXCLUDED", **NEW),
    ])
    return tmp_path


def test_validate_good_dataset(canrun, two_stacks):
    result = canrun("dataset", "validate", two_stacks)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 files checked, 0 with problems" in result.stdout


def test_validate_names_each_bad_file_and_why(canrun, two_stacks):
    data = two_stacks / "data"
    good = (data / f"{NEW_STEM}.parquet").read_bytes()
    (data / "cpu__inductor-2.13.0__transformers-5.18.0.parquet").write_bytes(good[: len(good) // 2])
    (data / "notes.csv").write_text("model_id,result\n")
    (data / "cuda__inductor-2.13.0__transformers-5.18.0.parquet").write_bytes(b"hello, not parquet")
    wrong = pa.table({"model_id": ["org/a"], "result": [1]})
    pq.write_table(wrong, data / "cpu__inductor-2.14.0__transformers-5.18.0.parquet")
    (data / "stray.parquet").write_bytes(good)

    result = canrun("dataset", "validate", two_stacks)
    assert result.returncode == 1
    out = result.stdout
    assert re.search(r"data/cpu__inductor-2\.13\.0__transformers-5\.18\.0\.parquet: truncated", out)
    assert re.search(r"data/cuda__inductor-2\.13\.0__transformers-5\.18\.0\.parquet: not a Parquet file", out)
    line = next(l for l in out.splitlines() if l.startswith("data/cpu__inductor-2.14.0"))
    assert "wrong schema" in line and "column task is missing" in line
    assert "column result is int64, expected string" in line
    assert re.search(r"data/notes\.csv: not a dataset file", out)
    assert re.search(r'data/stray\.parquet: "stray\.parquet" is not a stack name', out)
    assert "7 files checked, 5 with problems" in out

    as_json = json.loads(canrun("dataset", "validate", two_stacks, "--json").stdout)
    assert as_json["files"] == 7
    assert {p["file"] for p in as_json["problems"]} == {
        "data/cpu__inductor-2.13.0__transformers-5.18.0.parquet",
        "data/cuda__inductor-2.13.0__transformers-5.18.0.parquet",
        "data/cpu__inductor-2.14.0__transformers-5.18.0.parquet",
        "data/notes.csv", "data/stray.parquet"}

    # show still reads the good files, and says which it skipped.
    shown = canrun("dataset", "show", two_stacks, "--json")
    assert shown.returncode == 0
    assert len(json.loads(shown.stdout)) == 9
    assert "skipped data/notes.csv" in shown.stderr
    assert "skipped data/cpu__inductor-2.13.0__transformers-5.18.0.parquet: truncated" in shown.stderr


def test_show_filters_and_prints_a_table(canrun, two_stacks):
    result = canrun("dataset", "show", two_stacks, "--model", "org/regresses")
    assert result.returncode == 0
    lines = table_lines(result.stdout)
    assert lines[0].split()[:4] == ["MODEL", "TASK", "STACK", "RESULT"]
    assert len(lines) == 3
    assert any("FAIL_RUNTIME" in l and "5.18.0" in l for l in lines)
    assert any("PASS" in l and "4.57.6" in l and "3.0 GiB" in l for l in lines)

    only_pass = json.loads(canrun("dataset", "show", two_stacks, "--result", "PASS", "--json").stdout)
    assert sorted(r["model_id"] for r in only_pass) == [
        "org/gets-fixed", "org/regresses", "org/stays-passing", "org/stays-passing"]
    row = only_pass[0]
    assert row["stack"]["transformers"] in ("4.57.6", "5.18.0")
    assert row["started_at"] == "2026-12-01T10:00:00.000000Z"

    one_stack = json.loads(canrun("dataset", "show", two_stacks, "--stack", OLD_STEM, "--json").stdout)
    assert len(one_stack) == 4

    excluded = canrun("dataset", "show", two_stacks, "--result", "EXCLUDED")
    assert "gated" in excluded.stdout
    none = canrun("dataset", "show", two_stacks, "--model", "org/absent")
    assert none.returncode == 0 and "no rows match" in none.stdout


def table_lines(shown):
    """The table of `canrun dataset show`: its lines before the blank one (the summaries follow)."""
    return shown.split("\n\n")[0].splitlines()


def test_show_names_stacks_as_the_options_take_them(canrun, two_stacks):
    table = table_lines(canrun("dataset", "show", two_stacks).stdout)
    column = table[0].index("STACK")
    stacks = {line[column:].split()[0] for line in table[1:]}
    assert stacks == {OLD_STEM, NEW_STEM}
    # What the STACK column says is what --stack, --from and --to take.
    for stack in stacks:
        shown = table_lines(canrun("dataset", "show", two_stacks, "--stack", stack).stdout)
        assert len(shown) > 1 and all(stack in line for line in shown[1:])
    assert canrun("dataset", "diff", two_stacks, "--from", OLD_STEM, "--to", NEW_STEM).returncode == 1


def test_show_of_a_stack_the_dataset_lacks_exits_2_and_lists_its_stacks(canrun, two_stacks):
    for stack, why in (("cpu__inductor-2.13.0__transformers-5.18.0", "--stack: no results for stack "
                        "cpu · inductor 2.13.0 · transformers 5.18.0"),
                       ("X", '--stack: "X" is not a stack name')):
        result = canrun("dataset", "show", two_stacks, "--stack", stack)
        assert result.returncode == 2, result.stdout
        assert result.stdout == "" and why in result.stderr
        assert f"as --stack takes them:\n  {OLD_STEM}\n  {NEW_STEM}\n" in result.stderr


def test_show_refuses_bad_filters(canrun, two_stacks, tmp_path):
    bad_result = canrun("dataset", "show", two_stacks, "--result", "MAYBE")
    assert bad_result.returncode == 2
    assert '--result "MAYBE" is not a result' in bad_result.stderr
    bad_model = canrun("dataset", "show", two_stacks, "--model", "org/x;rm -rf")
    assert bad_model.returncode == 2
    assert "invalid model id" in bad_model.stderr
    missing = canrun("dataset", "show", tmp_path / "nope")
    assert missing.returncode == 2
    assert "does not exist" in missing.stderr


def test_diff_reports_changes_and_fails_on_regressions(canrun, two_stacks):
    result = canrun("dataset", "diff", two_stacks, "--from", OLD_STEM, "--to", f"{NEW_STEM}.parquet")
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "regressions (1)\n  org/regresses  text-generation  PASS → FAIL_RUNTIME" in out
    assert "fixes (1)\n  org/gets-fixed  text-generation  FAIL_COMPILE → PASS" in out
    assert "newly tested (1)\n  org/new  text-generation  not tested → TIMEOUT" in out
    assert "no longer tested (1)\n  org/dropped  text-generation  FAIL_OOM → not tested" in out
    assert "unchanged: 2" in out  # stays-passing, and excluded (never tested)

    as_json = json.loads(canrun("dataset", "diff", two_stacks, "--from", OLD_STEM, "--to", NEW_STEM,
                                "--json").stdout)
    assert as_json["regressions"] == [
        {"model_id": "org/regresses", "task": "text-generation", "from": "PASS", "to": "FAIL_RUNTIME"}]

    # The other way round there is no regression (PASS → PASS, FAIL → PASS only), so exit 0.
    back = canrun("dataset", "diff", two_stacks, "--from", NEW_STEM, "--to", OLD_STEM)
    assert back.returncode == 1  # gets-fixed goes PASS → FAIL_COMPILE backwards
    same = canrun("dataset", "diff", two_stacks, "--from", NEW_STEM, "--to", NEW_STEM)
    assert same.returncode == 0
    assert "regressions (0)" in same.stdout


def test_show_and_diff_say_how_well_each_stack_runs(canrun, tmp_path, write_rows):
    # Speedup over eager, compile time, memory ratio per PASS (schema 9), as the compiler
    # dashboard reads them per suite; a PASS that drifts in the long generation says so.
    perf = lambda speedup, compile_s, ratio, **more: {
        "speedup": speedup, "compile_s": compile_s, "memory_ratio": ratio, "memory_measure": "rss",
        "eager_throughput": 10.0, "long_tokens": 128, "long_agreement": 1.0, **more}
    write_rows(tmp_path, [
        verdict_row("org/fast", "PASS", **perf(2.0, 100.0, 0.8), **OLD),
        verdict_row("org/slow", "PASS", **perf(0.5, 40.0, 0.9), **OLD),
        verdict_row("org/fast", "PASS", **perf(1.0, 100.0, 0.8), **NEW),  # speedup halved
        verdict_row("org/slow", "PASS", **perf(0.55, 200.0, 0.9, long_agreement=0.3,
                                               drifts_after=34), **NEW),  # compile ×5, drifts
        verdict_row("org/broken", "FAIL_COMPILE", **NEW),
        verdict_row("org/old", "PASS", **NEW),  # recorded before canrun measured how well
    ])
    shown = canrun("dataset", "show", tmp_path)
    assert shown.returncode == 0, shown.stderr
    table = table_lines(shown.stdout)
    speedup = table[0].index("SPEEDUP")
    by_model = {(l.split()[0], l.split()[2]): l for l in table[1:]}
    assert by_model[("org/fast", OLD_STEM)][speedup:].startswith("2.00x")
    assert by_model[("org/old", NEW_STEM)][speedup:].startswith("-")
    assert "drifts after token 34" in by_model[("org/slow", NEW_STEM)]
    summary = dict(l.split(": ", 1) for l in shown.stdout.split("\n\n")[1].splitlines()
                   if not l.startswith("  "))
    # OLD: 2 of 2 PASS, geomean speedup sqrt(2 × 0.5) = 1.00, median compile (40 + 100) / 2.
    assert summary[OLD_STEM].startswith("pass rate 100.0 % (2/2) · speedup 1.00x geomean (2 PASS) · "
                                        "compile 70.0 s median · memory ratio 0.85 geomean (rss)")
    # NEW: 3 of 4 PASS (the failure counts, the old row has no baseline): the dashboard's alarms.
    assert summary[NEW_STEM].startswith("pass rate 75.0 % (3/4) · speedup 0.74x geomean (2 PASS)")
    assert "long generation: 1 of 2 drifts" in summary[NEW_STEM]
    # Its median compile time is over every PASS's, the old row's 180 s too: (100, 180, 200).
    assert (f"{NEW_STEM}: pass rate 75.0 % (3/4) · speedup 0.74x geomean (2 PASS) · compile 180.0 s median"
            in shown.stdout)
    assert ("  alarms: pass rate 75.0 % < 90 %; speedup 0.74x < 0.95x; compile 180 s > 120 s; "
            "memory ratio 0.85 < 0.9\n") in shown.stdout

    diff = canrun("dataset", "diff", tmp_path, "--from", OLD_STEM, "--to", NEW_STEM).stdout
    assert ("speedup over eager changed by 20 % or more (PASS on both) (1)\n"
            "  org/fast  text-generation  2.00x → 1.00x\n") in diff
    assert ("compile time changed by 20 % or more (PASS on both) (1)\n"
            "  org/slow  text-generation  40.0 s → 200.0 s\n") in diff
    as_json = json.loads(canrun("dataset", "diff", tmp_path, "--from", OLD_STEM, "--to", NEW_STEM,
                                "--json").stdout)
    assert [(c["model_id"], c["from_speedup"], c["to_speedup"]) for c in as_json["speedup_changes"]] == [
        ("org/fast", 2.0, 1.0)]
    assert [c["model_id"] for c in as_json["compile_time_changes"]] == ["org/slow"]


def test_diff_lists_unverified_apart_and_does_not_fail_on_them(canrun, tmp_path, write_rows):
    # PASS → REFERENCE_FAIL or a curator's exclusion says nothing against the backend:
    # unverified, listed apart, exit 0. PASS → excluded by the planner is a regression.
    write_rows(tmp_path, [
        verdict_row("org/no-reference", "PASS", **OLD),
        verdict_row("org/now-gated", "PASS", **OLD),
        verdict_row("org/no-reference", "REFERENCE_FAIL", **NEW),
        verdict_row("org/now-gated", "EXCLUDED", **NEW),
    ])
    result = canrun("dataset", "diff", tmp_path, "--from", OLD_STEM, "--to", NEW_STEM)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "regressions (0)" in out
    assert ("unverified, not counted as regressions (2)\n"
            "  org/no-reference  text-generation  PASS → REFERENCE_FAIL\n"
            "  org/now-gated  text-generation  PASS → EXCLUDED (gated)\n") in out
    as_json = json.loads(canrun("dataset", "diff", tmp_path, "--from", OLD_STEM, "--to", NEW_STEM,
                                "--json").stdout)
    assert as_json["regressions"] == []
    assert [(c["model_id"], c["to"]) for c in as_json["unverified"]] == [
        ("org/no-reference", "REFERENCE_FAIL"), ("org/now-gated", "EXCLUDED")]

    write_rows(tmp_path, [verdict_row("org/now-gated", "EXCLUDED", exclusion_reason="too_large",
                                      started_at="2026-12-02T10:00:00Z", **NEW)])
    result = canrun("dataset", "diff", tmp_path, "--from", OLD_STEM, "--to", NEW_STEM)
    assert result.returncode == 1
    assert ("regressions (1)\n  org/now-gated  text-generation  PASS → EXCLUDED (too_large)\n"
            in result.stdout)
    assert "unverified, not counted as regressions (1)\n" in result.stdout


def test_causes_groups_a_neuron_stacks_failures_by_signature(canrun, tmp_path, write_rows):
    op = "NeuronCompilerError<RuntimeError | neuronx-cc failed: unsupported op aten::N on <path>"
    oom = "OutOfMemoryError | NRT_RESOURCE: N bytes"
    rows = [verdict_row(f"org/compile-{n}", "FAIL_COMPILE", error_signature=op,
                        error=f"Traceback ...\nNeuronCompilerError: unsupported op aten::{n}", **NEW)
            for n in (3, 1, 2)]
    rows += [verdict_row("org/slow", "TIMEOUT", error_signature=op, error="ran past its time limit", **NEW),
             verdict_row("org/big", "FAIL_OOM", error_signature=oom, error="NRT_RESOURCE", **NEW),
             verdict_row("org/ok", "PASS", **NEW), verdict_row("org/gated", "EXCLUDED", **NEW),
             verdict_row("org/older", "FAIL_RUNTIME", **OLD)]
    write_rows(tmp_path, rows)
    result = canrun("dataset", "causes", tmp_path, "--stack", NEW_STEM, "--json")
    assert result.returncode == 0, result.stderr
    [stack] = json.loads(result.stdout)
    assert stack["stack"] == NEW_STEM and stack["failures"] == 5
    assert [(c["signature"], c["count"], c["results"]) for c in stack["causes"]] == [
        (op, 4, {"FAIL_COMPILE": 3, "TIMEOUT": 1}), (oom, 1, {"FAIL_OOM": 1})]
    assert stack["causes"][0]["models"] == ["org/compile-1", "org/compile-2", "org/compile-3", "org/slow"]
    assert stack["causes"][0]["excerpt"] == "Traceback ...\nNeuronCompilerError: unsupported op aten::1"
    text = canrun("dataset", "causes", tmp_path).stdout
    assert "5 failures in 2 causes" in text and "1 failure in 1 cause" in text  # both stacks
    assert f"4 × {op}  (FAIL_COMPILE 3, TIMEOUT 1)" in text
    assert "    | NeuronCompilerError: unsupported op aten::1" in text
    missing = canrun("dataset", "causes", tmp_path, "--stack", OLD_STEM.replace("4.57.6", "4.0.0"))
    assert missing.returncode == 2 and "--stack: no results for stack" in missing.stderr
    assert f"\n  {OLD_STEM}\n  {NEW_STEM}" in missing.stderr  # the stacks it has


def test_causes_explain_signatures_name_model_types_and_leave_advice_out(canrun, tmp_path,
                                                                         write_rows):
    signature = ("ValueError<KeyError | ValueError: The checkpoint you are trying to load has model "
                 "type `<model type>` but Transformers does not recognize this architecture.")
    advice = "You can update Transformers with the command `pip install --upgrade transformers`."

    def unknown(model, model_type):
        error = ("Traceback (most recent call last):\n  File \"x/transformers/models/auto/"
                 "configuration_auto.py\", line 1, in from_pretrained\nKeyError: "
                 f"'{model_type}'\n\nDuring handling of the above exception, another exception "
                 "occurred:\n\n    raise ValueError(\nValueError: The checkpoint you are trying to "
                 f"load has model type `{model_type}` but Transformers does not recognize this "
                 f"architecture.\n\n{advice}\n")
        return verdict_row(model, "FAIL_LOAD", error_signature=signature, error=error, **NEW)

    compile_error = ("Traceback (most recent call last):\n  File \"x/transformers/models/auto/"
                     "auto_factory.py\", line 9\n  File \"x/transformers/models/qwen3/"
                     "modeling_qwen3.py\", line 7, in forward\nRuntimeError: bad op\n")
    write_rows(tmp_path, [unknown("org/nano", "nanochat"), unknown("org/jais", "jais2"),
                          verdict_row("org/qwen", "FAIL_COMPILE", error_signature="RuntimeError | bad op",
                                      error=compile_error, **NEW)])
    result = canrun("dataset", "causes", tmp_path)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith("Each cause is one error_signature: the exception chain")
    assert "    model types: jais2, nanochat\n" in text
    assert "    model types: qwen3\n" in text  # the model's code the traceback passed through
    # The excerpt ends with the error (org/jais's, the first by id), not transformers' advice.
    assert "    | ValueError: The checkpoint you are trying to load has model type `jais2`" in text
    assert "pip install" not in text
    [stack] = json.loads(canrun("dataset", "causes", tmp_path, "--json").stdout)
    assert [c["model_types"] for c in stack["causes"]] == [["jais2", "nanochat"], ["qwen3"]]

    explained = canrun("dataset", "causes", "--help").stdout
    assert "An error_signature is \"CHAIN | LINE\"" in explained
    assert "a ValueError raised while handling a KeyError" in explained
    assert "numbers by N, paths by <path>" in explained


def test_diff_lists_changed_plans_and_measurements(canrun, tmp_path, write_rows):
    write_rows(tmp_path, [
        verdict_row("org/resharded", "PASS", cores=2, parallelism="tp", **OLD),
        verdict_row("org/slower", "PASS", runtime_s=100.0, **OLD),
        verdict_row("org/resharded", "PASS", cores=4, parallelism="tp", **NEW),
        verdict_row("org/slower", "PASS", runtime_s=150.0, peak_device_memory_bytes=1 << 30, **NEW),
    ])
    result = canrun("dataset", "diff", tmp_path, "--from", OLD_STEM, "--to", NEW_STEM)
    assert result.returncode == 0, result.stderr
    assert "changed plans (1)\n  org/resharded  text-generation  2 core(s) tp → 4 core(s) tp\n" in result.stdout
    assert "(PASS on both) (1)\n  org/slower  text-generation  100.0 s → 150.0 s\n" in result.stdout
    assert "org/slower  text-generation  3.0 GiB → 1.0 GiB" in result.stdout
    as_json = json.loads(canrun("dataset", "diff", tmp_path, "--from", OLD_STEM, "--to", NEW_STEM,
                                "--json").stdout)
    assert [(c["model_id"], c["from_cores"], c["to_cores"]) for c in as_json["changed_plans"]] == [
        ("org/resharded", 2, 4)]
    assert [c["to_runtime_s"] for c in as_json["run_time_changes"]] == [150.0]


def test_diff_refuses_unknown_stacks(canrun, two_stacks):
    missing = canrun("dataset", "diff", two_stacks, "--from", OLD_STEM,
                     "--to", "neuron__neuronx-cc-9.9__transformers-9.9")
    assert missing.returncode == 2
    assert "--to: no results for stack neuron · neuronx-cc 9.9 · transformers 9.9" in missing.stderr
    malformed = canrun("dataset", "diff", two_stacks, "--from", "garbage", "--to", NEW_STEM)
    assert malformed.returncode == 2
    assert '--from: "garbage" is not a stack name' in malformed.stderr
    required = canrun("dataset", "diff", two_stacks, "--from", OLD_STEM)
    assert required.returncode == 2
    assert "--to is required" in required.stderr


def run_snippet(code, scope):
    """Runs Python as a notebook cell would: the statements, then the value of the last line."""
    tree = ast.parse(code)
    last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<card>", "exec"), scope)
    return eval(compile(last, "<card>", "eval"), scope)


def test_card_is_valid_markdown_with_hub_front_matter(two_stacks):
    card = (two_stacks / "README.md").read_text()
    assert card.startswith("---\n")
    front, body = card[4:].split("\n---\n", 1)
    meta = yaml.safe_load(front)
    assert meta["configs"] == [{"config_name": "default", "data_files": "data/*.parquet"}]
    assert meta["license"] == "apache-2.0"
    assert "canrun" in meta["tags"]

    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(body)
    tables = [t for t in tokens if t.type == "table_open"]
    assert len(tables) == 4  # stacks, columns, results, verification values
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == ["canrun results", "Stacks", "Columns", "Results", "Verification", "How to query"]
    fences = [t for t in tokens if t.type == "fence"]
    assert [f.info for f in fences] == ["python", "python", "sql"]
    assert 'pd.read_parquet("DATASET/data")' in fences[0].content
    # The card's pandas queries run as printed on this dataset: ours, then the torch-neuronx
    # Space's (which reads the `df` of the first).
    scope = {}
    for fence in fences[:2]:
        code = fence.content.replace("DATASET", str(two_stacks))
        answer = run_snippet(code.replace("Qwen/Qwen3-0.6B", "org/regresses"), scope)
        assert list(answer.columns)[-1] == "result" and len(answer) == 2, answer
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(body)
    assert f"<code>{OLD_STEM}.parquet</code></td>" in html
    # stacks table: rows, PASS, not PASS, EXCLUDED per stack
    assert re.search(rf"\| `{re.escape(NEW_STEM)}\.parquet` \| neuron \| neuronx-cc 2\.16\.372\.0\+4a9b2326 "
                     r"\| transformers 5\.18\.0 \| 5 \| 2 \| 2 \| 1 \|", card)
    for result in ["PASS", "FAIL_LOAD", "FAIL_COMPILE", "FAIL_RUNTIME", "FAIL_OOM", "FAIL_MISMATCH",
                   "FAIL_JUDGE", "TIMEOUT", "CRASH", "REFERENCE_FAIL", "EXCLUDED"]:
        assert f"| `{result}` |" in card
