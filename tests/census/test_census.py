"""canrun census (issue 32), end to end on CPU with the project's stack (transformers 5.18.0):
the census of tests/census/census_run.py — types built tiny and tested on one core, then sharded
over 2 cores with the plan the stack offers (or none) — read back with pandas."""
import json

import pandas as pd

from census_run import TYPES, census_command


def test_each_type_on_one_core_then_sharded_with_the_plan_the_stack_offers(census):
    rows, summary = census.rows, census.summary
    assert sorted(rows.index) == [
        "canrun-census-sharded/gpt2", "canrun-census-sharded/phimoe", "canrun-census-sharded/qwen2",
        "canrun-census/bart", "canrun-census/gpt2", "canrun-census/llama", "canrun-census/phimoe",
        "canrun-census/qwen2"]
    for name in ("qwen2", "phimoe", "gpt2"):
        one = rows.loc[f"canrun-census/{name}"]
        assert (one.result, one.cores, one.verification) == ("PASS", 1, "reference"), one.error
        assert one.match_tokens == one.new_tokens == 32
        assert one.model_type == name
    qwen2, phimoe = rows.loc["canrun-census-sharded/qwen2"], rows.loc["canrun-census-sharded/phimoe"]
    for row, parallelism in ((qwen2, "tp"), (phimoe, "ep")):
        # Random weights write no English: the teacher-forced agreement with the CPU reference
        # decided, not the judge.
        assert (row.result, row.cores, row.parallelism) == ("PASS", 2, parallelism), row.error
        assert row.verification == "agreement" and row.agreement >= 0.9
        assert pd.isna(row.judge_score)
    # The same snapshot under its second id.
    assert qwen2.revision == rows.loc["canrun-census/qwen2"].revision
    gpt2 = rows.loc["canrun-census-sharded/gpt2"]
    assert (gpt2.result, gpt2.exclusion_reason) == ("EXCLUDED", "no_parallel_plan")
    assert "no tensor-parallel plan for gpt2" in gpt2.error and pd.isna(gpt2.runtime_s)
    assert summary["one_core"] == {"PASS": 3}
    assert summary["sharded"] == {"PASS tp": 1, "PASS ep": 1, "EXCLUDED no_parallel_plan": 1}


def test_types_not_built_are_recorded_with_why(census):
    rows, summary = census.rows, census.summary
    llama, bart = rows.loc["canrun-census/llama"], rows.loc["canrun-census/bart"]
    assert (llama.result, llama.exclusion_reason) == ("EXCLUDED", "build_failed")
    assert "could not build a tiny llama checkpoint: failed at" in llama.error
    assert "canrun-no-such-activation" in llama.error
    assert (bart.result, bart.exclusion_reason) == ("EXCLUDED", "other_task")
    assert "belongs to text2text-generation" in bart.error
    assert summary["built"] == {"built": 3, "failed": 1, "other_task": 1}
    builds = {t["model_type"]: t["build"] for t in summary["types"]}
    assert builds == {"bart": "other_task", "gpt2": "built", "llama": "failed", "phimoe": "built",
                      "qwen2": "built"}


def test_rows_say_what_transformers_claims_for_the_type(census):
    rows = census.rows
    claims = rows.set_index("model_type", append=True)[
        ["claims_fullgraph", "claims_tp_plan", "claims_ep_plan"]]
    qwen2 = rows.loc["canrun-census-sharded/qwen2"]
    assert (qwen2.claims_tp_plan, qwen2.claims_ep_plan, qwen2.claims_fullgraph) == (True, False, True)
    phimoe = rows.loc["canrun-census/phimoe"]
    assert (phimoe.claims_tp_plan, phimoe.claims_ep_plan) == (False, True)
    gpt2 = rows.loc["canrun-census/gpt2"]
    assert (gpt2.claims_tp_plan, gpt2.claims_ep_plan) == (False, False)
    assert claims.notna().all().all(), claims


def test_the_reference_keeps_how_close_its_best_two_tokens_were(census):
    """The margins that tell a near-tie from a wrong token: one per generated token, over the
    finite logits (min_new_tokens masks the end of sequence with -inf)."""
    revision = census.rows.loc["canrun-census/qwen2"].revision
    margins = census.reference(revision)["margins"]
    assert len(margins) == 32 and all(0 <= m <= 2 for m in margins), margins
    assert sum(m > 1e-3 for m in margins) > 16, margins


def test_the_census_dataset_reads_as_any_dataset(census, canrun):
    card = (census.work / "ds" / "README.md").read_text()
    assert "# An architecture census" in card and "`canrun-census-sharded/<type>`" in card
    validated = canrun("dataset", "validate", census.work / "ds")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    shown = canrun("dataset", "show", census.work / "ds", "--model", "canrun-census/qwen2", "--json")
    assert shown.returncode == 0, shown.stderr
    [row] = json.loads(shown.stdout)
    assert (row["model_type"], row["result"], row["claims_tp_plan"]) == ("qwen2", "PASS", True)


def test_resume_rebuilds_the_same_checkpoint_and_runs_nothing_again(census, canrun_bin):
    rows = census.rows
    stamp = census.hf / "canrun-census" / "qwen2.json"
    stamp.unlink()  # qwen2 is built again, to the same revision: nothing to run again
    again = census.again(canrun_bin, "--resume")
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(stamp.read_text())["revision"] == rows.loc["canrun-census/qwen2"].revision
    assert "running canrun-census" not in again.stderr
    after = pd.read_parquet(next((census.work / "ds" / "data").glob("*.parquet"))).set_index("model_id")
    assert sorted(after.index) == sorted(rows.index)
    assert (after.started_at == rows.started_at.reindex(after.index)).all()


def test_an_unknown_type_is_refused_naming_it(canrun_bin, tmp_path):
    result = census_command(canrun_bin, tmp_path, "--types", f"{TYPES},canrun-no-such-type")
    assert result.returncode == 2, result.stderr
    assert "canrun-no-such-type" in result.stderr
    assert not (tmp_path / "ds" / "data").exists()


def test_a_resumed_pass_runs_what_its_older_plan_lacked(census, canrun_bin):
    # A sitting planned the sharded pass before phimoe's one-core PASS was known (its plan lacks
    # phimoe, and the dataset has no sharded row for it); a later sitting resumes: the pass is
    # planned anew from the one-core PASSes, runs phimoe's sharded trial, and keeps the rest.
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    sharded = "canrun-census-sharded/phimoe"
    path = next((census.work / "ds" / "data").glob("*.parquet"))
    table = pq.read_table(path)
    pq.write_table(table.filter(pc.not_equal(table["model_id"], sharded)), path)
    work_file = census.work / "ds" / ".census" / "cpu" / "transformers-5.18.0" / "text-generation" / "sharded" / "work.json"
    work = json.loads(work_file.read_text())
    work["items"] = [item for item in work["items"] if item["model_id"] != sharded]
    work_file.write_text(json.dumps(work))
    again = census.again(canrun_bin, "--resume")
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"running {sharded}" in again.stderr
    assert "running canrun-census/" not in again.stderr  # the rest stands
    after = pd.read_parquet(path).set_index("model_id")
    assert (after.loc[sharded].result, after.loc[sharded].parallelism) == ("PASS", "ep")
    assert sorted(after.index) == sorted(census.rows.index)
