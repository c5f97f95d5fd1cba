"""The dataset as the ecosystem's own readers see it: pandas, pyarrow and DuckDB read the
files canrun's C++ writer produced, and agree with each other."""
import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import verdict_row

NEURON_OLD = dict(compiler_version="2.15.128.0+56dc5a86", library_version="4.57.6")
NEURON_NEW = dict(compiler_version="2.16.372.0+4a9b2326", library_version="5.18.0")
CPU = dict(backend="cpu", compiler="inductor", compiler_version="2.13.0+cpu",
           library_version="5.18.0")


@pytest.fixture
def dataset(tmp_path, write_rows):
    rows = [
        verdict_row("Qwen/Qwen3-0.6B", "PASS", **NEURON_OLD),
        verdict_row("Qwen/Qwen3-0.6B", "FAIL_COMPILE", **NEURON_NEW, cores=None),
        verdict_row("Qwen/Qwen3-0.6B", "PASS", **CPU, cores=2, parallelism="tp"),
        verdict_row("meta-llama/Llama-3.1-8B-Instruct", "EXCLUDED", **NEURON_NEW),
        verdict_row("HuggingFaceTB/SmolLM2-135M-Instruct", "PASS", **NEURON_NEW,
                    output_text="Ünïcödé 日本語 😀", packages=[]),
        verdict_row("google/gemma-3-4b-it", "FAIL_OOM", **NEURON_NEW, task="image-text-to-text"),
    ]
    write_rows(tmp_path, rows)
    return tmp_path


def test_pandas_reads_every_row_with_the_right_dtypes(dataset):
    df = pd.read_parquet(dataset / "data")
    assert len(df) == 6
    assert list(df.columns)[:3] == ["model_id", "revision", "task"]
    assert str(df["started_at"].dtype) == "datetime64[us, UTC]"
    assert df["started_at"].iloc[0] == pd.Timestamp("2026-12-01T10:00:00Z")
    assert pd.api.types.is_string_dtype(df["model_id"])
    assert pd.api.types.is_string_dtype(df["result"])
    assert pd.api.types.is_float_dtype(df["runtime_s"])
    assert pd.api.types.is_numeric_dtype(df["cores"])  # nullable: float64 with NaN where null
    assert df["cores"].isna().sum() == 2
    assert pd.api.types.is_integer_dtype(df["weights_bytes"])
    smol = df[df.model_id == "HuggingFaceTB/SmolLM2-135M-Instruct"].iloc[0]
    assert smol.output_text == "Ünïcödé 日本語 😀"
    assert list(smol.packages) == []
    assert list(df[df.result == "PASS"].iloc[0].packages) == ["torch-neuronx==2.13.3.0"]
    excluded = df[df.result == "EXCLUDED"].iloc[0]
    assert excluded.exclusion_reason == "gated"
    assert pd.isna(excluded.runtime_s)


def test_seed_query_gives_the_model_on_every_stack(dataset):
    df = pd.read_parquet(dataset / "data")
    view = df[df.model_id == "Qwen/Qwen3-0.6B"][
        ["compiler_version", "library", "library_version", "cores", "result"]]
    got = sorted((r.compiler_version, r.library, r.library_version,
                  None if pd.isna(r.cores) else int(r.cores), r.result) for r in view.itertuples())
    assert sorted(got, key=str) == sorted([
        ("2.15.128.0+56dc5a86", "transformers", "4.57.6", 1, "PASS"),
        ("2.16.372.0+4a9b2326", "transformers", "5.18.0", None, "FAIL_COMPILE"),
        ("2.13.0+cpu", "transformers", "5.18.0", 2, "PASS"),
    ], key=str)


def test_duckdb_agrees_with_pandas(dataset):
    df = pd.read_parquet(dataset / "data")
    glob = str(dataset / "data" / "*.parquet")
    con = duckdb.connect()
    assert con.execute(f"SELECT count(*) FROM '{glob}'").fetchone()[0] == len(df)
    duck = con.execute(
        f"SELECT compiler_version, library, library_version, cores, result FROM '{glob}' "
        "WHERE model_id = 'Qwen/Qwen3-0.6B' ORDER BY compiler_version").fetchall()
    pandas_rows = sorted(
        (r.compiler_version, r.library, r.library_version,
         None if pd.isna(r.cores) else int(r.cores), r.result)
        for r in df[df.model_id == "Qwen/Qwen3-0.6B"].itertuples())
    assert duck == pandas_rows
    by_result = dict(con.execute(f"SELECT result, count(*) FROM '{glob}' GROUP BY result").fetchall())
    assert by_result == df.result.value_counts().to_dict()
    tz = con.execute(f"SELECT typeof(started_at) FROM '{glob}' LIMIT 1").fetchone()[0]
    assert tz == "TIMESTAMP WITH TIME ZONE"


def test_every_file_has_the_documented_arrow_schema(dataset):
    files = sorted((dataset / "data").glob("*.parquet"))
    assert [f.name for f in files] == [
        "cpu__inductor-2.13.0+cpu__transformers-5.18.0.parquet",
        "neuron__neuronx-cc-2.15.128.0+56dc5a86__transformers-4.57.6.parquet",
        "neuron__neuronx-cc-2.16.372.0+4a9b2326__transformers-5.18.0.parquet",
    ]
    schemas = [pq.read_schema(f) for f in files]
    assert all(s.equals(schemas[0]) for s in schemas)
    schema = schemas[0]
    assert schema.field("started_at").type == pa.timestamp("us", tz="UTC")
    assert schema.field("packages").type == pa.list_(pa.string())
    assert schema.field("cores").type == pa.int32()
    assert schema.field("peak_device_memory_bytes").type == pa.int64()
    assert not schema.field("model_id").nullable
    assert schema.field("error").nullable
    card = (dataset / "README.md").read_text()
    for field in schema:
        assert f"| `{field.name}` |" in card, field.name


def test_huggingface_datasets_style_glob_reads_one_table(dataset):
    table = pq.ParquetDataset(dataset / "data").read()
    assert table.num_rows == 6
    assert table.column("compiler_version").to_pylist().count("2.16.372.0+4a9b2326") == 4
