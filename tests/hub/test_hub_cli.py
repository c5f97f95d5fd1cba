"""canrun hub rankings|info against the local Hub stand-in: real HTTP on loopback, real
safetensors files, the real HF cache read back by huggingface_hub."""
import json
import os
import struct
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from checkpoints import MOE_CONFIG, expected_facts, repo_files
from hub_standin import load_fixture

FIXTURE_MODELS = load_fixture("models.json")["models"]


@pytest.fixture
def hub(canrun, standin, tmp_path):
    """Run canrun against the stand-in with a private HF_HOME and rankings folder."""
    home = tmp_path / "hf-home"

    def run(*args, offline=False, endpoint=None, token=None):
        env = {"HF_ENDPOINT": endpoint or standin.endpoint, "HF_HOME": str(home),
               "CANRUN_RANKINGS_DIR": str(tmp_path / "rankings"), "HF_TOKEN": token or "",
               "HF_HUB_OFFLINE": "1" if offline else ""}
        return canrun("hub", *args, env=env)

    run.home = home
    run.rankings = tmp_path / "rankings"
    return run


def fixture_order(task, key):
    models = [m for m in FIXTURE_MODELS if m["pipeline_tag"] == task]
    return [m["id"] for m in sorted(models, key=lambda m: m[key], reverse=True)]


# --- rankings ----------------------------------------------------------------------------------

@pytest.mark.parametrize("sort,key", [("downloads", "downloads"), ("trending", "trendingScore")])
def test_rankings_follow_link_pages_in_fixture_order(hub, standin, sort, key):
    result = hub("rankings", "--task", "text-generation", "--sort", sort, "--limit", "8",
                 "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    expected = fixture_order("text-generation", key)[:8]
    assert [m["id"] for m in out["models"]] == expected
    assert out["source"] == "hub"
    # 8 models at 3 per page: three pages, each reached through the previous page's Link.
    pages = standin.requests_to("/api/models?")
    assert len(pages) == 3
    assert "cursor=3" in pages[1].path and "cursor=6" in pages[2].path
    assert all(p.headers.get("User-Agent", "").startswith("canrun/") for p in pages)

    snapshot = json.loads((hub.rankings / f"text-generation__{sort}.json").read_text())
    assert snapshot["task"] == "text-generation" and snapshot["sort"] == sort
    assert snapshot["endpoint"] == standin.endpoint
    fetched = datetime.strptime(snapshot["fetched_at"], "%Y-%m-%dT%H:%M:%SZ")
    assert abs((datetime.utcnow() - fetched).total_seconds()) < 60
    assert [m["id"] for m in snapshot["models"]] == expected
    first = next(m for m in FIXTURE_MODELS if m["id"] == expected[0])
    listed = {k: first[k] for k in (
        "id", "downloads", "likes", "trendingScore", "pipeline_tag", "library_name", "tags",
        "gated", "createdAt", "lastModified", "safetensors") if k in first}
    # The config's facts a plan needs, in the Hub's shape; the rest of the listed config is not
    # kept (it can be long, e.g. a chat template).
    if "config" in first:
        listed["config"] = {k: first["config"][k] for k in ("architectures", "model_type")}
    assert snapshot["models"][0] == listed
    # Every listed parameter count is kept; a model listed without any has none.
    fixture = {m["id"]: m for m in FIXTURE_MODELS}
    for model in snapshot["models"]:
        assert model.get("safetensors") == fixture[model["id"]].get("safetensors"), model["id"]


def test_rankings_all_pages_when_the_limit_exceeds_them(hub):
    result = hub("rankings", "--task", "text-generation", "--limit", "100", "--json")
    assert result.returncode == 0, result.stderr
    assert [m["id"] for m in json.loads(result.stdout)["models"]] == fixture_order(
        "text-generation", "downloads")


def test_rankings_table_lists_ranks(hub):
    result = hub("rankings", "--task", "image-text-to-text")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("image-text-to-text by downloads: 2 models from http://127.0.0.1")
    assert lines[2].split()[:2] == ["1", "google/gemma-3-4b-it"]
    assert lines[2].split()[-1] == "manual"


def write_old_snapshot(hub, hours):
    fetched = (datetime.now(timezone.utc) - timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")
    hub.rankings.mkdir(parents=True, exist_ok=True)
    models = [{k: m[k] for k in ("id", "downloads", "likes", "trendingScore", "pipeline_tag",
                                 "library_name", "tags", "gated", "createdAt", "lastModified")}
              for m in FIXTURE_MODELS[:4]]
    (hub.rankings / "text-generation__downloads.json").write_text(json.dumps(
        {"task": "text-generation", "sort": "downloads", "fetched_at": fetched,
         "endpoint": "https://huggingface.co", "models": models}))
    return [m["id"] for m in models]


def test_offline_uses_the_snapshot_and_says_its_age(hub, standin):
    ids = write_old_snapshot(hub, hours=3)
    result = hub("rankings", "--task", "text-generation", "--json", offline=True)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["source"] == "snapshot"
    assert 3 * 3600 - 5 <= out["age_seconds"] <= 3 * 3600 + 60
    assert [m["id"] for m in out["models"]] == ids
    assert "HF_HUB_OFFLINE is set" in result.stderr
    assert "(3 h 0 min old)" in result.stderr
    assert standin.requests == []
    text = hub("rankings", "--task", "text-generation", offline=True)
    assert "(snapshot, 3 h 0 min old: the Hub could not be reached)" in text.stdout


def test_unreachable_hub_uses_the_snapshot(hub, standin):
    ids = write_old_snapshot(hub, hours=50)
    port = standin.endpoint.rsplit(":", 1)[1]
    standin.stop()  # nothing listens on the port any more
    result = hub("rankings", "--task", "text-generation", "--json",
                 endpoint=f"http://127.0.0.1:{port}")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["source"] == "snapshot" and [m["id"] for m in out["models"]] == ids
    assert "(2 d 2 h old)" in result.stderr


def test_offline_without_snapshot_is_an_error(hub):
    result = hub("rankings", "--task", "text-generation", offline=True)
    assert result.returncode == 1
    assert "no snapshot to fall back on" in result.stderr


def test_429_storm_gives_up_with_its_error(hub, standin):
    standin.storms["/api/models"] = (429, {"Retry-After": "0"}, b'{"error":"slow down"}')
    result = hub("rankings", "--task", "text-generation")
    assert result.returncode == 1
    assert "rate limited: HTTP 429 Too Many Requests on all 5 attempts" in result.stderr
    assert len(standin.requests_to("/api/models")) == 5


def test_retry_after_is_honoured_then_the_answer_used(hub, standin):
    standin.faults["/api/models"] = [(503, {"Retry-After": "1"}, b"busy"),
                                     (429, {"Retry-After": "1"}, b"slow")]
    started = time.monotonic()
    result = hub("rankings", "--task", "text-generation", "--limit", "2", "--json")
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert [m["id"] for m in json.loads(result.stdout)["models"]] == fixture_order(
        "text-generation", "downloads")[:2]
    assert elapsed >= 2.0
    assert len(standin.requests_to("/api/models")) == 3


@pytest.mark.parametrize("body,message", [
    (b'[{"id": "Qwen/Qwen3-0.6B", "downloads": 5', "rankings page 1 ("),
    (b'{"error": "oops"}', "a JSON object where a list of models belongs"),
    (b'[{"id": "Qwen/Qwen3-0.6B", "downloads": "many"}]',
     'field "downloads" holds string where an integer belongs'),
    (b'[{"downloads": 3}]', 'model 1: no field "id"'),
    (b'[{"id": "../etc/passwd"}]', 'field "id"'),
])
def test_malformed_rankings_get_their_error_and_keep_the_snapshot(hub, standin, body, message):
    ids = write_old_snapshot(hub, hours=1)
    standin.storms["/api/models"] = (200, {}, body)
    result = hub("rankings", "--task", "text-generation")
    assert result.returncode == 1
    assert message in result.stderr
    snapshot = json.loads((hub.rankings / "text-generation__downloads.json").read_text())
    assert [m["id"] for m in snapshot["models"]] == ids


def test_truncated_rankings_say_so(hub, standin):
    standin.storms["/api/models"] = (200, {}, b'[{"id": "Qwen/Qwen3-0.6B"')
    result = hub("rankings", "--task", "text-generation")
    assert "not valid JSON (25 bytes; truncated?)" in result.stderr


def test_pagination_loop_and_foreign_links_are_refused(hub, standin):
    loop = f'<{standin.endpoint}/api/models?pipeline_tag=text-generation&cursor=0>; rel="next"'
    standin.storms["/api/models"] = (200, {"Link": loop}, b'[{"id": "a/b"}]')
    result = hub("rankings", "--task", "text-generation", "--limit", "10")
    assert result.returncode == 1
    assert "a pagination loop" in result.stderr
    standin.storms["/api/models"] = (200, {"Link": '<http://evil.example/api/models>; rel="next"'},
                                     b'[{"id": "a/b"}]')
    result = hub("rankings", "--task", "text-generation", "--limit", "10")
    assert "is not on http://127.0.0.1" in result.stderr


def test_bad_task_is_a_usage_error(hub):
    result = hub("rankings", "--task", "Text Generation")
    assert result.returncode == 2
    assert "a task is a Hub pipeline tag" in result.stderr


# --- model facts -------------------------------------------------------------------------------

@pytest.fixture
def moe_repo(standin, moe_checkpoint):
    info = load_fixture("model_info_moe.json")
    return standin.add_repo("canrun-test/tiny-moe", info, repo_files(moe_checkpoint))


def check_facts_match(out, folder):
    expected = expected_facts(folder)
    tensors = {t["name"]: t for t in out["tensors"]}
    assert set(tensors) == set(expected)
    for name, want in expected.items():
        assert tensors[name]["bytes"] == want["bytes"], name
        assert tensors[name]["shape"] == want["shape"], name
        assert tensors[name]["file"] == want["file"], name
    total = sum(t["bytes"] for t in expected.values())
    assert out["weights"]["bytes"] == total
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    assert total == index["metadata"]["total_size"]
    by_dtype = {}
    torch_to_st = {"torch.bfloat16": "BF16", "torch.float32": "F32", "torch.int64": "I64"}
    for t in expected.values():
        key = torch_to_st[t["dtype"]]
        by_dtype[key] = by_dtype.get(key, 0) + t["bytes"]
    assert out["weights"]["bytes_by_dtype"] == by_dtype
    experts = sum(t["bytes"] for n, t in expected.items() if ".experts." in n)
    assert out["weights"]["expert_bytes"] == experts > 0
    assert out["weights"]["non_expert_bytes"] == total - experts
    assert not tensors["model.layers.0.mlp.shared_experts.down_proj.weight"]["expert"]


def test_info_of_sharded_checkpoint_from_headers_only(hub, standin, moe_repo, moe_checkpoint):
    result = hub("info", "canrun-test/tiny-moe", "--json", "--tensors")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    check_facts_match(out, moe_checkpoint)
    assert out["sha"] == moe_repo.sha
    assert out["weights"]["source"] == "hub"
    assert out["config"] == {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
                             "auto_map": {}, "num_attention_heads": 4, "num_key_value_heads": 2,
                             "num_experts": 4}
    # Only headers were read: every shard request is a Range request, and the bytes sent for
    # the shards are exactly the 8-byte prefixes plus the headers.
    shard_requests = [r for r in standin.requests if r.path.endswith(".safetensors")]
    assert shard_requests and all("Range" in r.headers for r in shard_requests)
    header_bytes = 0
    for shard in moe_checkpoint.glob("*.safetensors"):
        with open(shard, "rb") as f:
            header_bytes += 8 + struct.unpack("<Q", f.read(8))[0]
    assert sum(r.body_bytes for r in shard_requests) == header_bytes
    # The shards were read at the commit the model info named.
    assert all(f"/resolve/{moe_repo.sha}/" in r.path for r in shard_requests)


def test_info_text_output(hub, moe_repo, moe_checkpoint):
    result = hub("info", "canrun-test/tiny-moe")
    assert result.returncode == 0, result.stderr
    total = sum(t["bytes"] for t in expected_facts(moe_checkpoint).values())
    assert f"({total} bytes, 36 tensors, read from hub)" in result.stdout
    assert "experts        4" in result.stdout


def test_config_lands_in_the_hf_cache_that_huggingface_hub_reads(hub, standin, moe_repo):
    assert hub("info", "canrun-test/tiny-moe").returncode == 0
    from huggingface_hub import scan_cache_dir, try_to_load_from_cache

    cache = hub.home / "hub"
    path = try_to_load_from_cache("canrun-test/tiny-moe", "config.json", cache_dir=cache)
    assert isinstance(path, str) and json.loads(Path(path).read_text()) == MOE_CONFIG
    assert Path(path).is_symlink() and not os.path.isabs(os.readlink(path))
    assert (cache / "models--canrun-test--tiny-moe" / "refs" / "main").read_text() == moe_repo.sha
    info = scan_cache_dir(cache)
    assert info.warnings == []
    (repo,) = info.repos
    assert repo.repo_id == "canrun-test/tiny-moe"
    (revision,) = repo.revisions
    assert revision.commit_hash == moe_repo.sha and "main" in revision.refs
    assert {f.file_name for f in revision.files} == {"config.json"}  # never the weights

    # A second look asks with the cached ETag and keeps the copy on 304.
    assert hub("info", "canrun-test/tiny-moe").returncode == 0
    config_requests = [r for r in standin.requests if r.path.endswith("/config.json")]
    assert len(config_requests) == 2
    assert "If-None-Match" not in config_requests[0].headers
    assert config_requests[1].headers["If-None-Match"].strip('"') == Path(
        os.readlink(path)).name
    assert config_requests[1].status == 304


def test_offline_info_reads_what_huggingface_hub_downloaded(hub, standin, moe_repo,
                                                            moe_checkpoint):
    from huggingface_hub import snapshot_download

    folder = snapshot_download("canrun-test/tiny-moe", cache_dir=hub.home / "hub",
                               endpoint=standin.endpoint, token=False)
    assert Path(folder).name == moe_repo.sha
    before = len(standin.requests)
    result = hub("info", "canrun-test/tiny-moe", "--json", "--tensors", offline=True)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    check_facts_match(out, moe_checkpoint)
    assert out["weights"]["source"] == "hf-cache" and out["sha"] == moe_repo.sha
    assert out["config"]["num_experts"] == 4
    assert len(standin.requests) == before  # offline: nothing asked


def test_offline_info_not_cached_is_an_error(hub):
    result = hub("info", "canrun-test/tiny-moe", offline=True)
    assert result.returncode == 1
    assert "is not in the HF cache" in result.stderr


def test_info_from_local_folder_equals_python(hub, moe_checkpoint):
    result = hub("info", "canrun-test/tiny-moe", "--folder", moe_checkpoint, "--json",
                 "--tensors")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    check_facts_match(out, moe_checkpoint)
    assert out["weights"]["source"] == "local"


def test_single_file_checkpoint_with_revision(hub, standin, tmp_path):
    import torch
    from safetensors.torch import save_file

    save_file({"w": torch.zeros(3, 5, dtype=torch.float16), "b": torch.zeros(5)},
              tmp_path / "model.safetensors")
    repo = standin.add_repo("canrun-test/single", {"pipeline_tag": "text-generation"},
                            {"model.safetensors": (tmp_path / "model.safetensors").read_bytes()})
    result = hub("info", "canrun-test/single", "--revision", repo.sha, "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["weights"]["bytes"] == 3 * 5 * 2 + 5 * 4
    assert out["weights"]["bytes_by_dtype"] == {"F16": 30, "F32": 20}
    assert standin.requests_to(f"/api/models/canrun-test/single/revision/{repo.sha}")


# --- bad input, each with its own error ---------------------------------------------------------

def safetensors_bytes(header: dict, data_len: int, declared: int | None = None) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", declared if declared is not None else len(text)) + text + \
        b"\0" * data_len


BAD_FILES = {
    "header-over-100mb": (safetensors_bytes({}, 0, declared=100_000_001),
                          "declares 100000001 bytes, over the 100000000-byte limit"),
    "header-past-file": (safetensors_bytes({}, 0, declared=5000),
                         "declares 5000 bytes but the file has only"),
    "unknown-dtype": (safetensors_bytes({"w": {"dtype": "Q4_K", "shape": [2],
                                               "data_offsets": [0, 2]}}, 2),
                      'unknown dtype "Q4_K"'),
    "shape-overflow": (safetensors_bytes({"w": {"dtype": "F32", "shape": [2**40, 2**40],
                                                "data_offsets": [0, 4]}}, 4),
                       "more elements than 64 bits can count"),
    "offsets-outside": (safetensors_bytes({"w": {"dtype": "F32", "shape": [4],
                                                 "data_offsets": [0, 16]}}, 8),
                        "outside the file's 8 data bytes"),
    "truncated-header": (struct.pack("<Q", 40) + b'{"w": {"dtype": "F32", "shape": [1], "da',
                         "is not valid JSON (truncated?)"),
    "wrong-type": (safetensors_bytes({"w": {"dtype": 32, "shape": [1],
                                            "data_offsets": [0, 4]}}, 4),
                   '"dtype" is not a string'),
    "missing-field": (safetensors_bytes({"w": {"dtype": "F32", "shape": [1]}}, 4),
                      'no "data_offsets"'),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_safetensors_get_their_error(hub, standin, case):
    data, message = BAD_FILES[case]
    standin.add_repo(f"bad/{case}", {}, {"model.safetensors": data})
    result = hub("info", f"bad/{case}")
    assert result.returncode == 1, result.stdout
    assert message in result.stderr
    assert f"bad/{case}: model.safetensors (hub)" in result.stderr


@pytest.mark.parametrize("body,message", [
    (b'{"id": "bad/info", "tags": ["a"', "not valid JSON"),
    (b'{"id": "bad/info", "tags": "a"}', 'field "tags" holds string where a list of strings'),
    (b'{"tags": []}', 'has no field "id"'),
    (b'{"id": "bad/info", "siblings": [{"size": 3}]}', 'no string "rfilename"'),
    (b'{"id": "bad/info", "gated": 1}', 'field "gated" holds number'),
    (b'{"id": "bad/info", "config": {"model_type": ["x"]}}', 'field "model_type" holds array'),
])
def test_bad_model_info_gets_its_error(hub, standin, body, message):
    standin.storms["/api/models/bad/info"] = (200, {}, body)
    result = hub("info", "bad/info")
    assert result.returncode == 1
    assert message in result.stderr


def test_bad_index_gets_its_error(hub, standin, moe_checkpoint):
    files = repo_files(moe_checkpoint)
    index = json.loads(files["model.safetensors.index.json"])
    index["weight_map"]["ghost.weight"] = "model-00001-of-00004.safetensors"
    files["model.safetensors.index.json"] = json.dumps(index).encode()
    standin.add_repo("bad/index", {}, files)
    result = hub("info", "bad/index")
    assert 'the index puts tensor "ghost.weight" in model-00001-of-00004.safetensors' in \
        result.stderr
    index["weight_map"]["ghost.weight"] = "../../etc/passwd"
    files["model.safetensors.index.json"] = json.dumps(index).encode()
    standin.add_repo("bad/index", {}, files)
    result = hub("info", "bad/index")
    assert "has an empty, . or .. part" in result.stderr


def test_redirect_loop_is_refused(hub, standin):
    loop = f"{standin.endpoint}/api/models/bad/loop"
    standin.storms["/api/models/bad/loop"] = (302, {"Location": loop}, b"")
    result = hub("info", "bad/loop")
    assert result.returncode == 1
    assert "more than 10 redirects (a redirect loop?)" in result.stderr


def test_server_that_ignores_range_is_not_read_whole(hub, standin, tmp_path):
    standin.add_repo("bad/norange", {}, {"model.safetensors": b"x" * 100})
    path = "/bad/norange/resolve/" + standin.repos["bad/norange"].sha + "/model.safetensors"
    standin.storms[path] = (200, {}, b"x" * 100_000)
    result = hub("info", "bad/norange")
    assert result.returncode == 1
    assert "instead of 206 Partial Content: the server ignored the Range header" in result.stderr


def test_gated_unknown_and_no_safetensors(hub, standin, moe_checkpoint):
    standin.add_repo("gated/model", {"gated": "manual"}, repo_files(moe_checkpoint), gated=True)
    result = hub("info", "gated/model")
    assert result.returncode == 2
    assert "HTTP 401: the model is gated or private; set HF_TOKEN" in result.stderr
    result = hub("info", "gated/model", token="hf_test")
    assert result.returncode == 0, result.stderr
    auth = [r.headers.get("Authorization") for r in standin.requests_to("/gated/model/")]
    assert "Bearer hf_test" in auth

    result = hub("info", "nobody/nothing")
    assert result.returncode == 2
    assert "HTTP 404: not on the Hub" in result.stderr

    standin.add_repo("only/pytorch", {}, {"pytorch_model.bin": b"\0" * 10})
    result = hub("info", "only/pytorch")
    assert "no_safetensors: the repo has neither model.safetensors nor" in result.stderr


def test_bad_model_id_is_a_usage_error(hub):
    result = hub("info", "org/a;b")
    assert result.returncode == 2
    assert "MODEL:" in result.stderr
    # A path is a folder, never a Hub id: one that is not there is said so.
    result = hub("info", "../../etc/passwd")
    assert result.returncode == 2
    assert 'no such folder: "../../etc/passwd"' in result.stderr
