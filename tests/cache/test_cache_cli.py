"""canrun cache sync / stats as a user meets them: real folders, and Storage Buckets through a
stand-in `hf` on PATH (tests/fixtures/hf_standin.py) that checks and records its arguments."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from hf_standin import HfStandIn, path_without_hf  # noqa: E402

VERSION = "neuronxcc-2.16.372.0+4a9b2326"
OK = f"{VERSION}/MODULE_1111+aaaa"
FAILED = f"{VERSION}/MODULE_2222+bbbb"
RUNNING = f"{VERSION}/MODULE_3333+cccc"


def neuron_cache(root):
    """A Neuron compile cache: one complete entry, one failed, one still compiling."""
    files = {
        f"{OK}/model.neff": b"N" * 3000, f"{OK}/model.hlo_module.pb": b"H" * 500,
        f"{OK}/compile_flags.json": b'["--target=trn2"]', f"{OK}/model.done": b"",
        f"{FAILED}/model.hlo_module.pb": b"H" * 400, f"{FAILED}/model.log": b"error: out of memory",
        f"{RUNNING}/model.hlo_module.pb": b"H" * 300,
    }
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


NEFFS = ["3f/a2/3fa2c0de77.neff", "3f/a2/3fa2ffee01.neff", "07/c1/07c1aa9e3b.neff"]
WRITING = "07/c1/.tmp.Hq27aZ"  # TorchNeuron's temp file (mkstemp), not yet renamed into place


def torchneuron_cache(root):
    """TorchNeuron's compile cache: hash-sharded NEFFs, and one being written right now."""
    for name, size in zip(NEFFS, (3000, 2000, 1000)):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"N" * size)
    (root / WRITING).write_bytes(b"n" * 500)
    return root


def tree(root):
    """{relative path: (bytes, mtime_ns)} of every file under root."""
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def hf(tmp_path):
    return HfStandIn(tmp_path / "hf")


def sync_json(canrun, *args, env=None):
    result = canrun("cache", "sync", *args, "--json", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def test_sync_copies_complete_entries_and_a_second_sync_copies_nothing(canrun, tmp_path):
    source = neuron_cache(tmp_path / "src")
    dest = tmp_path / "dst"

    first = canrun("cache", "sync", source, dest)
    assert first.returncode == 0, first.stderr
    assert f"skip entry  {FAILED}  (failed: no model.done)" in first.stdout
    assert f"skip entry  {RUNNING}  (incomplete: no model.done)" in first.stdout
    assert "copied 4 files (3.4 KiB), deleted 0 files; 0 unchanged; 2 entries skipped" in first.stdout
    assert sorted(tree(dest)) == sorted(p for p in tree(source) if p.startswith(OK))
    for name, (data, mtime) in tree(dest).items():
        assert (data, mtime) == tree(source)[name], name

    second = sync_json(canrun, source, dest)
    assert second["copy"] == [] and second["delete"] == []
    assert second["unchanged"] == 4
    assert [e["entry"] for e in second["skipped_entries"]] == [FAILED, RUNNING]


def test_a_changed_or_finished_entry_is_copied_on_the_next_sync(canrun, tmp_path):
    source = neuron_cache(tmp_path / "src")
    dest = tmp_path / "dst"
    sync_json(canrun, source, dest)
    (source / RUNNING / "model.neff").write_bytes(b"n" * 10)
    (source / RUNNING / "model.done").write_bytes(b"")
    (source / OK / "compile_flags.json").write_bytes(b'["--target=trn2", "-O2"]')

    out = sync_json(canrun, source, dest)
    copied = [(step["path"], step["reason"]) for step in out["copy"]]
    assert (f"{OK}/compile_flags.json", "size differs") in copied
    # The finished entry comes whole, its model.done last.
    assert [p for p, _ in copied if p.startswith(RUNNING)] == [
        f"{RUNNING}/model.hlo_module.pb", f"{RUNNING}/model.neff", f"{RUNNING}/model.done"]
    assert (dest / RUNNING / "model.done").exists()


def test_dry_run_prints_the_plan_and_changes_nothing(canrun, tmp_path):
    source = neuron_cache(tmp_path / "src")
    dest = tmp_path / "dst"
    (dest / VERSION / "MODULE_9999+dddd").mkdir(parents=True)
    (dest / VERSION / "MODULE_9999+dddd" / "model.done").write_bytes(b"")
    before = tree(dest)

    result = canrun("cache", "sync", source, dest, "--dry-run", "--delete")
    assert result.returncode == 0, result.stderr
    assert f"copy    {OK}/model.neff  2.9 KiB (new file)" in result.stdout
    assert f"delete  {VERSION}/MODULE_9999+dddd/model.done  0 B (not in source)" in result.stdout
    assert "dry run, nothing changed: would copy 4 files (3.4 KiB), delete 1 file" in result.stdout
    assert tree(dest) == before


def test_delete_only_when_asked_and_never_an_entry_the_source_holds_incomplete(canrun, tmp_path):
    source = neuron_cache(tmp_path / "src")
    dest = tmp_path / "dst"
    stale = f"{VERSION}/MODULE_9999+dddd"
    for name in (f"{stale}/model.done", f"{stale}/model.neff", f"{FAILED}/model.done",
                 f"{FAILED}/model.neff"):
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_bytes(b"kept?")

    sync_json(canrun, source, dest)
    assert (dest / stale / "model.neff").exists()

    out = sync_json(canrun, source, dest, "--delete")
    assert sorted(step["path"] for step in out["delete"]) == [f"{stale}/model.done",
                                                              f"{stale}/model.neff"]
    assert not (dest / stale).exists()
    # The source's compile of FAILED failed; the destination's good FAILED stays.
    assert (dest / FAILED / "model.neff").exists()


def test_an_inductor_cache_is_synced_file_by_file_and_counted(canrun, tmp_path):
    source = tmp_path / "cache" / "compile" / "cpu"
    for name in ("inductor-2.13.0/fxgraph/ab/fabc", "inductor-2.13.0/triton/0/kernel.so",
                 "inductor-2.14.0/fxgraph/cd/fcde"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_bytes(b"x" * 100)

    out = sync_json(canrun, f"file://{source}", tmp_path / "copy")
    assert len(out["copy"]) == 3 and out["skipped_entries"] == []

    stats = canrun("cache", "stats", "--backend", "cpu", "--json",
                   env={"CANRUN_CACHE": str(tmp_path / "cache")})
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    assert data["dir"] == str(source)
    assert [(v["version"], v["entries"], v["complete"], v["bytes"]) for v in data["versions"]] == [
        ("inductor-2.13.0", 2, 2, 200), ("inductor-2.14.0", 1, 1, 100)]


def test_a_torchneuron_cache_is_synced_neff_by_neff_never_a_write_in_progress(canrun, tmp_path):
    source = torchneuron_cache(tmp_path / "src")
    dest = tmp_path / "dst"
    (dest / "3f" / "a2").mkdir(parents=True)
    (dest / "3f" / "a2" / ".tmp.Zp01Lk").write_bytes(b"being written at the destination")

    first = canrun("cache", "sync", source, dest, "--delete")
    assert first.returncode == 0, first.stderr
    assert f"skip entry  {WRITING}  (incomplete: a write in progress)" in first.stdout
    assert "copied 3 files (5.9 KiB), deleted 0 files; 0 unchanged; 1 entry skipped" in first.stdout
    assert sorted(tree(dest)) == sorted(NEFFS + ["3f/a2/.tmp.Zp01Lk"])

    # Once renamed into place, the NEFF comes on the next sync.
    (source / WRITING).rename(source / "07" / "c1" / "07c1beef00.neff")
    second = sync_json(canrun, source, dest)
    assert [step["path"] for step in second["copy"]] == ["07/c1/07c1beef00.neff"]
    assert second["unchanged"] == 3 and second["skipped_entries"] == []


def test_stats_of_a_torchneuron_cache_and_of_canruns_folder_per_compiler_version(canrun, tmp_path):
    # The folder TorchNeuron writes (no version folder: its top-level folders are hash shards).
    cache = torchneuron_cache(tmp_path / "neff_cache")
    result = canrun("cache", "stats", cache)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2].split() == ["neff_cache", "4", "3", "0", "1", "6.3", "KiB"]
    assert len(lines) == 3

    # canrun's own folder per compiler version holds the same layout.
    backend = tmp_path / "canrun" / "compile" / "neuron"
    backend.mkdir(parents=True)
    cache.rename(backend / "neuronx-cc-2.21.0")
    stats = canrun("cache", "stats", "--backend", "neuron", "--json",
                   env={"CANRUN_CACHE": str(tmp_path / "canrun")})
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    assert [(v["version"], v["entries"], v["complete"], v["incomplete"]) for v in data["versions"]] == [
        ("neuronx-cc-2.21.0", 4, 3, 1)]


def test_stats_counts_entries_per_compiler_version(canrun, tmp_path):
    cache = neuron_cache(tmp_path / "neuron")
    (cache / "neuronxcc-2.15.128.0+56dc5a86" / "MODULE_1+1").mkdir(parents=True)
    (cache / "neuronxcc-2.15.128.0+56dc5a86" / "MODULE_1+1" / "model.done").write_bytes(b"")

    result = canrun("cache", "stats", cache)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["VERSION", "ENTRIES", "COMPLETE", "FAILED", "INCOMPLETE", "SIZE"]
    assert lines[2].split() == ["neuronxcc-2.15.128.0+56dc5a86", "1", "1", "0", "0", "0", "B"]
    assert lines[3].split() == [VERSION, "3", "1", "1", "1", "4.1", "KiB"]
    assert lines[4].split() == ["total", "4", "2", "1", "1", "4.1", "KiB"]


def test_stats_names_a_missing_folder(canrun, tmp_path):
    result = canrun("cache", "stats", "--backend", "cpu", env={"CANRUN_CACHE": str(tmp_path)})
    assert result.returncode == 2
    assert f'cache folder "{tmp_path}/compile/cpu" does not exist' in result.stderr
    result = canrun("cache", "stats", "--backend", "no-such-backend")
    assert result.returncode == 2 and "no-such-backend" in result.stderr


def test_upload_to_a_bucket_goes_through_hf_with_the_exact_arguments(canrun, tmp_path, hf):
    source = neuron_cache(tmp_path / "src") / VERSION
    bucket = f"hf://buckets/my-org/neff-cache/{VERSION}"
    complete = sorted(p for p in tree(source) if p.startswith("MODULE_1111+aaaa/"))
    # What a local sync into this folder is writing right now: not part of the cache.
    (source / "MODULE_1111+aaaa" / ".canrun-partial-99-model.neff").write_bytes(b"half")

    out = sync_json(canrun, source, bucket, env=hf.env)
    calls = hf.calls()
    assert len(calls) == 2, calls
    plan_file = Path(calls[0]["argv"][-1])
    assert calls[0]["argv"] == ["buckets", "sync", str(source), bucket,
                                "--exclude", "*.canrun-partial-*", "--plan", str(plan_file)]
    assert calls[1]["argv"] == ["buckets", "sync", "--apply",
                                str(plan_file.parent / "plan-complete-entries.jsonl")]
    # hf applied only the complete entry's files; the scratch folder is gone.
    assert sorted(path for _, path in calls[1]["plan"]) == complete
    assert not plan_file.parent.exists()
    assert [e["entry"] for e in out["skipped_entries"]] == ["MODULE_2222+bbbb", "MODULE_3333+cccc"]
    assert sorted(tree(hf.bucket(f"my-org/neff-cache/{VERSION}"))) == complete

    again = sync_json(canrun, source, bucket, env=hf.env)
    assert again["copy"] == [] and again["unchanged"] == 4
    assert len(hf.calls()) == 3, "nothing to copy: the plan is not applied"


def test_a_torchneuron_cache_goes_to_a_bucket_without_its_writes_in_progress(canrun, tmp_path, hf):
    source = torchneuron_cache(tmp_path / "neff_cache")
    bucket = "hf://buckets/my-org/neff-cache/neuronx-cc-2.21.0"

    out = sync_json(canrun, source, bucket, env=hf.env)
    assert [(e["entry"], e["why"]) for e in out["skipped_entries"]] == [(WRITING, "a write in progress")]
    assert sorted(path for _, path in hf.calls()[1]["plan"]) == sorted(NEFFS)
    assert sorted(tree(hf.bucket("my-org/neff-cache/neuronx-cc-2.21.0"))) == sorted(NEFFS)


def test_download_from_a_bucket_with_delete_and_dry_run(canrun, tmp_path, hf):
    neuron_cache(hf.bucket("aws-neuron/torch-neuronx-neff-cache"))
    dest = tmp_path / "neff_cache"
    (dest / "old").mkdir(parents=True)
    (dest / "old" / "file").write_bytes(b"old")
    bucket = "hf://buckets/aws-neuron/torch-neuronx-neff-cache/"

    planned = sync_json(canrun, bucket, dest, "--delete", "--dry-run", env=hf.env)
    [call] = hf.calls()
    assert call["argv"][:-1] == ["buckets", "sync", bucket.rstrip("/"), str(dest), "--delete",
                                 "--exclude", "*.canrun-partial-*", "--plan"]
    assert [step["path"] for step in planned["delete"]] == ["old/file"]
    assert tree(dest) == {"old/file": (b"old", (dest / "old" / "file").stat().st_mtime_ns)}

    sync_json(canrun, bucket, dest, "--delete", env=hf.env)
    assert sorted(tree(dest)) == sorted(p for p in tree(hf.bucket("aws-neuron/torch-neuronx-neff-cache"))
                                        if p.startswith(OK))


def test_missing_hf_names_what_to_install(canrun, tmp_path):
    source = neuron_cache(tmp_path / "src")
    result = canrun("cache", "sync", source, "hf://buckets/my-org/neff-cache",
                    env={"PATH": path_without_hf()})
    assert result.returncode == 2
    assert "the hf command (huggingface_hub's CLI) is not on PATH" in result.stderr
    assert "pip install huggingface_hub" in result.stderr


def test_hf_failing_is_reported_with_what_it_said(canrun, tmp_path, hf):
    result = canrun("cache", "sync", "hf://buckets/my-org/no-such-bucket", tmp_path / "x",
                    env=hf.env)
    assert result.returncode == 1
    assert "`hf buckets sync hf://buckets/my-org/no-such-bucket" in result.stderr
    assert "failed (exit 1): Error: Bucket 'my-org/no-such-bucket' not found" in result.stderr
    assert not (tmp_path / "x").exists()


def test_bad_bucket_locations_are_named(canrun, tmp_path, hf):
    result = canrun("cache", "sync", "hf://buckets/nobody", tmp_path / "x", env=hf.env)
    assert result.returncode == 2 and "no bucket name" in result.stderr
    # Both sides local is fine, both buckets is not.
    result = canrun("cache", "sync", "hf://buckets/a/b", "hf://buckets/c/d", env=hf.env)
    assert result.returncode == 2 and "one side must be a local folder" in result.stderr
    (tmp_path / "plain-file").write_text("x")
    result = canrun("cache", "sync", "hf://buckets/a/b", tmp_path / "plain-file", env=hf.env)
    assert result.returncode == 2 and "is not a folder" in result.stderr
    assert hf.calls() == []


def test_bad_source_is_named(canrun, tmp_path):
    missing = canrun("cache", "sync", tmp_path / "no-such-cache", tmp_path / "dst")
    assert missing.returncode == 2
    assert f'source: cache folder "{tmp_path}/no-such-cache" does not exist' in missing.stderr
    assert not (tmp_path / "dst").exists()

    (tmp_path / "a-file").write_text("x")
    not_folder = canrun("cache", "sync", tmp_path / "a-file", tmp_path / "dst")
    assert not_folder.returncode == 2 and "a-file" in not_folder.stderr
    assert "is not a folder" in not_folder.stderr

    scheme = canrun("cache", "sync", "s3://my-bucket/cache", tmp_path / "dst")
    assert scheme.returncode == 2
    assert '"s3://my-bucket/cache": not a location canrun can sync' in scheme.stderr

    nested = canrun("cache", "sync", neuron_cache(tmp_path / "src"), tmp_path / "src" / "copy")
    assert nested.returncode == 2 and "inside it" in nested.stderr
