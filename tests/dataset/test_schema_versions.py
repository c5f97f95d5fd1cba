"""Schema versions of the dataset, as a user with older files meets them: a version-1 file
(34 columns, written before versions were recorded, here made with pyarrow) is read, upserted
into and upgraded; `canrun dataset migrate` makes a folder of mixed versions read as one table
with pandas; a file of a newer version is refused and left untouched."""
import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import verdict_row

OLD = dict(compiler_version="2.15.128.0+56dc5a86", library_version="4.57.6")
NEW = dict(compiler_version="2.16.372.0+4a9b2326", library_version="5.18.0")
OLD_STEM = "neuron__neuronx-cc-2.15.128.0+56dc5a86__transformers-4.57.6"
NEW_STEM = "neuron__neuronx-cc-2.16.372.0+4a9b2326__transformers-5.18.0"
KEY = b"canrun.schema_version"
# The version canrun writes (src/dataset/schema.h: kCurrentSchemaVersion).
CURRENT = int(re.search(r"kCurrentSchemaVersion = (\d+);",
                        (Path(__file__).resolve().parents[2] / "src/dataset/schema.h").read_text()).group(1))

# Schema version 1, as canrun wrote it: today's columns without judge_threshold and judge_model.
V1_SCHEMA = pa.schema([
    pa.field("model_id", pa.string(), nullable=False), ("revision", pa.string()),
    pa.field("task", pa.string(), nullable=False), pa.field("backend", pa.string(), nullable=False),
    pa.field("device", pa.string(), nullable=False),
    pa.field("compiler", pa.string(), nullable=False),
    pa.field("compiler_version", pa.string(), nullable=False),
    pa.field("library", pa.string(), nullable=False),
    pa.field("library_version", pa.string(), nullable=False),
    pa.field("result", pa.string(), nullable=False), ("error", pa.string()),
    ("error_signature", pa.string()), ("exclusion_reason", pa.string()), ("cores", pa.int32()),
    ("parallelism", pa.string()), ("weights_bytes", pa.int64()), ("runtime_s", pa.float64()),
    ("load_s", pa.float64()), ("compile_s", pa.float64()), ("generate_s", pa.float64()),
    ("ttft_s", pa.float64()), ("decode_tokens_per_s", pa.float64()),
    ("peak_device_memory_bytes", pa.int64()), ("new_tokens", pa.int32()),
    ("output_text", pa.string()), ("verification", pa.string()), ("match_tokens", pa.int32()),
    ("judge_score", pa.float64()), pa.field("stack", pa.string(), nullable=False),
    pa.field("packages", pa.list_(pa.string()), nullable=False), ("run_py", pa.string()),
    pa.field("started_at", pa.timestamp("us", tz="UTC"), nullable=False), ("host", pa.string()),
    pa.field("canrun_version", pa.string(), nullable=False),
])


def write_version1_file(path, rows):
    """A version-1 file: 34 columns and no version key, as canrun wrote before recording it."""
    assert len(V1_SCHEMA) == 34
    columns = {}
    for field in V1_SCHEMA:
        values = [row[field.name] for row in rows]
        if field.name == "stack":
            values = [json.dumps(value) for value in values]
        elif field.name == "started_at":
            values = [pd.Timestamp(value).to_pydatetime() for value in values]
        columns[field.name] = pa.array(values, type=field.type)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns, schema=V1_SCHEMA), path)
    assert KEY not in (pq.read_schema(path).metadata or {})


def judged(model_id, **stack):
    return verdict_row(model_id, "PASS", cores=2, parallelism="tp", verification="judge",
                       judge_score=-1.5, judge_threshold=-5.068,
                       judge_model="HuggingFaceTB/SmolLM2-135M-Instruct@24aa9a1", **stack)


def test_a_version1_file_is_read_and_an_upsert_rewrites_it_in_the_current_version(canrun, tmp_path,
                                                                      write_rows):
    path = tmp_path / "data" / f"{NEW_STEM}.parquet"
    write_version1_file(path, [judged("org/old-a", **NEW), verdict_row("org/old-b", "FAIL_OOM",
                                                                       **NEW)])

    shown = canrun("dataset", "show", tmp_path, "--json")
    assert shown.returncode == 0, shown.stderr
    rows = {row["model_id"]: row for row in json.loads(shown.stdout)}
    assert set(rows) == {"org/old-a", "org/old-b"}
    assert rows["org/old-a"]["judge_score"] == -1.5
    assert rows["org/old-a"]["judge_threshold"] is None and rows["org/old-a"]["judge_model"] is None

    validated = canrun("dataset", "validate", tmp_path)
    assert validated.returncode == 0, validated.stdout
    assert (f"data/{NEW_STEM}.parquet: schema version 1 (inferred from its columns), older than {CURRENT}; "
            "`canrun dataset migrate` upgrades it") in validated.stdout
    assert "schema version 1 in 1 file" in validated.stdout
    as_json = json.loads(canrun("dataset", "validate", tmp_path, "--json").stdout)
    assert as_json["schema_version"] == CURRENT
    assert as_json["versions"] == [
        {"file": f"data/{NEW_STEM}.parquet", "schema_version": 1, "recorded": False}]

    write_rows(tmp_path, [judged("org/new", **NEW)])

    assert pq.read_schema(path).metadata[KEY] == str(CURRENT).encode()
    df = pd.read_parquet(path)
    assert len(df.columns) == 61
    assert list(df.columns)[29:32] == ["judge_score", "judge_threshold", "judge_model"]
    by_id = df.set_index("model_id")
    assert by_id.loc["org/old-a", "judge_score"] == -1.5  # a version-1 column is kept
    for old in ("org/old-a", "org/old-b"):
        assert pd.isna(by_id.loc[old, "judge_threshold"]) and pd.isna(by_id.loc[old, "judge_model"])
    assert by_id.loc["org/new", "judge_threshold"] == -5.068
    assert by_id.loc["org/new", "judge_model"] == "HuggingFaceTB/SmolLM2-135M-Instruct@24aa9a1"
    assert f"schema version {CURRENT} (current) in 1 file" in canrun("dataset", "validate", tmp_path).stdout


def test_an_upsert_upgrades_the_older_files_of_its_folder(tmp_path, write_rows):
    old = tmp_path / "data" / f"{OLD_STEM}.parquet"
    write_version1_file(old, [verdict_row("org/old", "PASS", **OLD)])
    write_rows(tmp_path, [judged("org/new", **NEW)])  # another stack's file
    assert pq.read_schema(old).metadata[KEY] == str(CURRENT).encode()
    df = pd.read_parquet(tmp_path / "data")
    assert len(df.columns) == 61 and sorted(df.model_id) == ["org/new", "org/old"]


def test_migrate_makes_a_folder_of_mixed_versions_read_as_one_table(canrun, tmp_path, write_rows):
    write_rows(tmp_path, [judged("org/new", **NEW)])  # the current version, recorded
    old = tmp_path / "data" / f"{OLD_STEM}.parquet"
    write_version1_file(old, [verdict_row("org/old-a", "PASS", **OLD),
                              verdict_row("org/old-b", "CRASH", **OLD)])

    migrated = canrun("dataset", "migrate", tmp_path)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    assert migrated.stdout.splitlines() == [
        f"data/{OLD_STEM}.parquet: schema version 1 (inferred from its columns) → {CURRENT}: rewritten",
        f"data/{NEW_STEM}.parquet: schema version {CURRENT}: already current",
        f"2 files: 1 upgraded, 1 already at version {CURRENT}, 0 left untouched",
    ]
    df = pd.read_parquet(tmp_path / "data")
    assert len(df.columns) == 61 and len(df) == 3
    by_id = df.set_index("model_id")
    assert by_id.loc["org/old-b", "result"] == "CRASH"
    assert pd.isna(by_id.loc["org/old-a", "judge_model"])
    assert by_id.loc["org/new", "judge_threshold"] == -5.068
    for path in (tmp_path / "data").glob("*.parquet"):
        assert pq.read_schema(path).metadata[KEY] == str(CURRENT).encode(), path

    again = canrun("dataset", "migrate", tmp_path, "--json")
    assert again.returncode == 0
    report = json.loads(again.stdout)
    assert (report["upgraded"], report["current"], report["problems"]) == (0, 2, 0)
    assert [(f["file"], f["from_version"], f["rewritten"]) for f in report["files"]] == [
        (f"data/{OLD_STEM}.parquet", CURRENT, False), (f"data/{NEW_STEM}.parquet", CURRENT, False)]


def test_a_newer_version_is_refused_and_left_untouched(canrun, tmp_path, write_rows,
                                                       write_rows_bin):
    write_rows(tmp_path, [verdict_row("org/a", "PASS", **NEW)])
    path = tmp_path / "data" / f"{NEW_STEM}.parquet"
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({KEY: b"99"}), path)
    before = path.read_bytes()
    message = f"written by a newer canrun: schema version 99, this canrun reads up to {CURRENT}"

    validated = canrun("dataset", "validate", tmp_path)
    assert validated.returncode == 1
    assert f"data/{NEW_STEM}.parquet: {message}" in validated.stdout
    shown = canrun("dataset", "show", tmp_path)
    assert shown.returncode == 0 and message in shown.stderr

    upsert = subprocess.run([str(write_rows_bin), str(tmp_path)], text=True, capture_output=True,
                            input=json.dumps(verdict_row("org/b", "PASS", **NEW)) + "\n",
                            timeout=120)
    assert upsert.returncode == 1
    assert message in upsert.stderr and "not overwriting it" in upsert.stderr

    migrated = canrun("dataset", "migrate", tmp_path)
    assert migrated.returncode == 1
    assert f"data/{NEW_STEM}.parquet: left untouched: {message}" in migrated.stdout
    assert f"1 file: 0 upgraded, 0 already at version {CURRENT}, 1 left untouched" in migrated.stdout
    assert path.read_bytes() == before


@pytest.mark.parametrize("name, content", [
    ("notes.csv", b"model_id,result\n"),
    (f"{OLD_STEM}.parquet", b"not parquet at all"),
])
def test_migrate_reports_what_it_cannot_read_and_leaves_it(canrun, tmp_path, write_rows, name,
                                                           content):
    write_rows(tmp_path, [verdict_row("org/a", "PASS", **NEW)])
    bad = tmp_path / "data" / name
    bad.write_bytes(content)
    migrated = canrun("dataset", "migrate", tmp_path)
    assert migrated.returncode == 1
    assert any(line.startswith(f"data/{name}: left untouched: ")
               for line in migrated.stdout.splitlines()), migrated.stdout
    assert bad.read_bytes() == content
    assert canrun("dataset", "migrate", tmp_path / "absent").returncode == 2


def test_the_original_spaces_published_query_answers_on_a_neuron_dataset(tmp_path, write_rows):
    """The torch-neuronx model support Space publishes a pandas query over its dataset folder;
    it runs unchanged on canrun's, whose other backends' files share the schema (null there),
    and a file written before the neuron columns existed gets them when the folder is upgraded."""
    write_version1_file(tmp_path / "data" / f"{OLD_STEM}.parquet",
                        [verdict_row("Qwen/Qwen3-0.6B", "FAIL_COMPILE", **OLD)])
    write_rows(tmp_path, [verdict_row("Qwen/Qwen3-0.6B", "PASS", cores=2, parallelism="tp", **NEW),
                          verdict_row("org/other", "PASS", **NEW)])
    write_rows(tmp_path, [verdict_row("Qwen/Qwen3-0.6B", "PASS", backend="cuda",
                                      compiler="inductor", compiler_version="2.13.0")])

    df = pd.read_parquet(tmp_path / "data")
    answer = df[df.model_id == "Qwen/Qwen3-0.6B"][
        ["neuronx_cc", "library", "library_version", "neuron_cores", "result"]]
    by_compiler = {row.neuronx_cc: row for row in answer.itertuples()
                   if pd.notna(row.neuronx_cc)}
    assert set(by_compiler) == {"2.15.128.0+56dc5a86", "2.16.372.0+4a9b2326"}
    old, new = by_compiler["2.15.128.0+56dc5a86"], by_compiler["2.16.372.0+4a9b2326"]
    assert (old.library, old.library_version, old.neuron_cores, old.result) == (
        "transformers", "4.57.6", 1, "FAIL_COMPILE")
    assert (new.library, new.library_version, new.neuron_cores, new.result) == (
        "transformers", "5.18.0", 2, "PASS")
    # The cuda row is in the answer too, with the neuron columns null, as on any other backend.
    cuda = answer[answer.neuronx_cc.isna()]
    assert len(cuda) == 1 and pd.isna(cuda.neuron_cores.iloc[0])
    assert cuda.result.iloc[0] == "PASS" and len(answer) == 3
    for path in (tmp_path / "data").glob("*.parquet"):
        assert {"neuronx_cc", "neuron_cores"} <= set(pq.read_schema(path).names), path
