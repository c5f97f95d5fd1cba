"""A campaign's checkpoint fetch, end to end over loopback HTTP: the campaign_fetch_checkpoints
tool (CheckpointPrefetcher + DiskBudget + download_checkpoint) against the Hub stand-in, into
a private HF cache that huggingface_hub and transformers then read.

What is checked: checkpoints that do not fit the disk budget together are fetched one after
another with eviction in between, and the bytes in the cache — measured by sampling the folder
while the tool runs, not taken from the tool — never pass the budget; a file the user had is
untouched; an interrupted download resumes with a Range request and its blob's sha256 is right;
wrong bytes are an error naming the file; gated repos keep their reason; transformers loads a
fetched tiny Llama with HF_HUB_OFFLINE=1; huggingface_hub.scan_cache_dir finds nothing wrong.
"""
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "hub"))
from hub_standin import HubStandIn, git_blob_sha1  # noqa: E402

MIB = 1 << 20


@pytest.fixture(scope="session")
def fetch_bin() -> Path:
    path = Path(os.environ.get("CANRUN_FETCH_CHECKPOINTS", ""))
    assert path.is_file(), (f"CANRUN_FETCH_CHECKPOINTS={path} is not a file; run through ctest "
                            "(it builds campaign_fetch_checkpoints)")
    return path


@pytest.fixture
def standin():
    server = HubStandIn([], lifetime_s=300).start()
    yield server
    server.stop()


@pytest.fixture
def cache(tmp_path) -> Path:
    return tmp_path / "hf-home" / "hub"


def hf_env(standin, cache: Path, **extra) -> dict:
    env = dict(os.environ, NO_COLOR="1", HF_ENDPOINT=standin.endpoint, HF_HUB_CACHE=str(cache),
               HF_HOME=str(cache.parent), HF_TOKEN="", HF_HUB_OFFLINE="",
               HF_HUB_DISABLE_TELEMETRY="1")
    env.update(extra)
    return env


def run_fetch(fetch_bin, standin, cache, models, budget_bytes, *args, **env):
    result = subprocess.run([str(fetch_bin), "--budget-bytes", str(budget_bytes), *args, *models],
                            capture_output=True, text=True, env=hf_env(standin, cache, **env),
                            timeout=120)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    return result, events


def add_checkpoint(standin, repo_id: str, weights_bytes: int, seed: int, **kwargs):
    """A repo with a config, a tokenizer file and random 'weights' (LFS, as *.safetensors)."""
    weights = hashlib.sha256(str(seed).encode()).digest() * (weights_bytes // 32 + 1)
    files = {"config.json": json.dumps({"model_type": "llama", "seed": seed}).encode(),
             "tokenizer_config.json": b"{}",
             "model.safetensors": weights[:weights_bytes],
             # Another weight format beside safetensors: a campaign does not fetch it.
             "pytorch_model.bin": b"\0" * 1024}
    return standin.add_repo(repo_id, files=files, **kwargs)


def blob_path(cache: Path, repo_id: str, data: bytes, lfs: bool) -> Path:
    name = hashlib.sha256(data).hexdigest() if lfs else git_blob_sha1(data)
    return cache / ("models--" + repo_id.replace("/", "--")) / "blobs" / name


def cache_bytes(cache: Path) -> int:
    """Bytes of the regular files in the cache (blobs, partial downloads, refs), as on disk."""
    total = 0
    for root, dirs, files in os.walk(cache):
        dirs[:] = [d for d in dirs if d != ".locks"]
        for name in files:
            path = os.path.join(root, name)
            try:
                if not os.path.islink(path):
                    total += os.lstat(path).st_size
            except FileNotFoundError:
                pass  # evicted or renamed between listing and stat
    return total


class CacheSampler:
    """Samples cache_bytes() on a thread while a command runs; keeps the maximum."""

    def __init__(self, cache: Path):
        self.cache = cache
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, cache_bytes(self.cache))
            self.samples += 1
            time.sleep(0.002)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, cache_bytes(self.cache))


def scan_warnings(cache: Path, standin) -> list:
    code = ("import json, sys; from huggingface_hub import scan_cache_dir; "
            "report = scan_cache_dir(sys.argv[1]); "
            "print(json.dumps({'warnings': [str(w) for w in report.warnings], "
            "'repos': sorted(r.repo_id for r in report.repos)}))")
    result = subprocess.run([sys.executable, "-c", code, str(cache)], capture_output=True,
                            text=True, env=hf_env(standin, cache), timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def hf_snapshot_download(standin, cache: Path, repo_id: str):
    """The user's own download, by huggingface_hub, before the campaign."""
    code = ("import sys; from huggingface_hub import snapshot_download; "
            "print(snapshot_download(sys.argv[1]))")
    result = subprocess.run([sys.executable, "-c", code, repo_id], capture_output=True, text=True,
                            env=hf_env(standin, cache), timeout=120)
    assert result.returncode == 0, result.stderr
    return Path(result.stdout.strip())


def file_identity(path: Path):
    stat = path.stat()
    return stat.st_ino, stat.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest()


# --- the disk budget ---------------------------------------------------------------------------

def test_checkpoints_larger_than_the_budget_are_fetched_in_turn_within_it(
        fetch_bin, standin, cache):
    # The user's own model, fetched by huggingface_hub before the campaign; the campaign tests
    # it too, so it shares its blobs.
    user_repo = add_checkpoint(standin, "user/own-model", 1 * MIB, seed=99)
    user_snapshot = hf_snapshot_download(standin, cache, "user/own-model")
    user_weights = blob_path(cache, "user/own-model", user_repo.files["model.safetensors"], True)
    user_before = file_identity(user_weights)
    user_link = user_snapshot / "model.safetensors"
    assert user_link.is_symlink() and user_link.resolve() == user_weights
    baseline = cache_bytes(cache)

    repos = {f"org/model-{idx}": add_checkpoint(standin, f"org/model-{idx}", 3 * MIB // 2, idx)
             for idx in range(4)}
    checkpoint_bytes = sum(len(data) for name, data in repos["org/model-0"].files.items()
                           if name != "pytorch_model.bin")
    budget = 7 * MIB // 2  # two checkpoints at once, not three: 6 MiB in all must take turns
    standin.throttle_bytes_per_s = 12 * MIB  # slow enough to be watched downloading

    models = ["org/model-0", "user/own-model", "org/model-1", "org/model-2", "org/model-3"]
    with CacheSampler(cache) as sampler:
        result, events = run_fetch(fetch_bin, standin, cache, models, budget, "--hold-ms", "250")
    assert result.returncode == 0, result.stderr
    ready = {e["model"]: e for e in events if e["event"] == "ready"}
    assert list(ready) == models
    summary = events[-1]
    assert summary["event"] == "summary" and summary["budget_bytes"] == budget

    # Measured on disk, beside what the user had: never over the budget, and a checkpoint was
    # fetched while another one's test ran (the overlap the prefetcher is for).
    measured_peak = sampler.peak - baseline
    print(f"budget {budget} B; measured peak {measured_peak} B over the user's {baseline} B "
          f"({sampler.samples} samples); the budget's own peak {summary['peak_bytes_held']} B")
    assert sampler.samples > 50
    assert measured_peak <= budget
    assert summary["peak_bytes_held"] <= budget
    assert measured_peak > checkpoint_bytes  # two at once

    # The user's model cost nothing and nothing of it was touched.
    assert ready["user/own-model"]["bytes_fetched"] == 0
    assert file_identity(user_weights) == user_before
    assert user_link.is_symlink() and user_link.resolve() == user_weights

    # Eviction in between: the early checkpoints' weights are gone, the last one's are there.
    assert not blob_path(cache, "org/model-0", repos["org/model-0"].files["model.safetensors"],
                         True).exists()
    last_weights = blob_path(cache, "org/model-3", repos["org/model-3"].files["model.safetensors"],
                             True)
    assert hashlib.sha256(last_weights.read_bytes()).hexdigest() == last_weights.name
    # Other weight formats are not fetched when safetensors are there.
    assert not standin.requests_to("/org/model-0/resolve/" + repos["org/model-0"].sha +
                                   "/pytorch_model.bin")

    scan = scan_warnings(cache, standin)
    assert scan["warnings"] == []
    assert "user/own-model" in scan["repos"] and "org/model-3" in scan["repos"]


def test_at_the_end_the_campaign_can_leave_only_what_the_user_had(fetch_bin, standin, cache):
    add_checkpoint(standin, "user/own-model", 256 * 1024, seed=7)
    hf_snapshot_download(standin, cache, "user/own-model")
    before = sorted(str(p.relative_to(cache)) for p in cache.rglob("*")
                    if ".locks" not in p.parts)
    for idx in range(2):
        add_checkpoint(standin, f"org/model-{idx}", 512 * 1024, seed=idx)
    result, events = run_fetch(fetch_bin, standin, cache,
                               ["org/model-0", "user/own-model", "org/model-1"], 4 * MIB,
                               "--evict-at-end")
    assert result.returncode == 0, result.stderr
    assert events[-1]["bytes_held"] == 0
    after = sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if ".locks" not in p.parts)
    assert after == before
    assert scan_warnings(cache, standin)["warnings"] == []


def test_a_checkpoint_larger_than_the_whole_budget_is_refused(fetch_bin, standin, cache):
    add_checkpoint(standin, "org/huge", 2 * MIB, seed=1)
    add_checkpoint(standin, "org/small", 64 * 1024, seed=2)
    result, events = run_fetch(fetch_bin, standin, cache, ["org/huge", "org/small"], 1 * MIB)
    assert result.returncode == 1
    errors = [e for e in events if e["event"] == "error"]
    assert [e["model"] for e in errors] == ["org/huge"]
    assert errors[0]["reason"] == "over_disk_budget"
    assert "org/huge" in errors[0]["message"]
    assert [e["model"] for e in events if e["event"] == "ready"] == ["org/small"]
    assert not standin.requests_to("/org/huge/resolve/")


# --- resumable, verified downloads -------------------------------------------------------------

def test_an_interrupted_download_resumes_with_a_range_request(fetch_bin, standin, cache):
    repo = add_checkpoint(standin, "org/cut", 2 * MIB, seed=3)
    path = f"/org/cut/resolve/{repo.sha}/model.safetensors"
    standin.truncations[path] = [700_000]
    result, events = run_fetch(fetch_bin, standin, cache, ["org/cut"], 8 * MIB)
    assert result.returncode == 0, result.stderr
    requests = [r for r in standin.requests_to(path) if r.method == "GET"]
    assert [r.headers.get("Range") for r in requests] == [None, "bytes=700000-"]
    assert requests[0].body_bytes == 700_000
    ready = events[0]
    assert ready["resumed_transfers"] == 1
    assert ready["bytes_fetched"] == ready["bytes"]
    weights = repo.files["model.safetensors"]
    blob = blob_path(cache, "org/cut", weights, True)
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == hashlib.sha256(weights).hexdigest()
    assert not Path(str(blob) + ".incomplete").exists()


def test_a_partial_file_left_by_an_earlier_process_is_continued(fetch_bin, standin, cache):
    repo = add_checkpoint(standin, "org/partial", 1 * MIB, seed=4)
    weights = repo.files["model.safetensors"]
    blob = blob_path(cache, "org/partial", weights, True)
    blob.parent.mkdir(parents=True)
    Path(str(blob) + ".incomplete").write_bytes(weights[:300_000])
    result, events = run_fetch(fetch_bin, standin, cache, ["org/partial"], 8 * MIB)
    assert result.returncode == 0, result.stderr
    requests = standin.requests_to(f"/org/partial/resolve/{repo.sha}/model.safetensors")
    assert [r.headers.get("Range") for r in requests] == ["bytes=300000-"]
    assert events[0]["bytes_reused"] >= 300_000
    assert blob.read_bytes() == weights


def test_wrong_bytes_are_an_error_naming_the_file_and_the_partial_is_deleted(
        fetch_bin, standin, cache):
    repo = add_checkpoint(standin, "org/bad", 512 * 1024, seed=5)
    weights = repo.files["model.safetensors"]
    sha = hashlib.sha256(weights).hexdigest()
    path = f"/org/bad/resolve/{repo.sha}/model.safetensors"
    # The Hub's headers, the right length, the wrong bytes.
    headers = {"X-Repo-Commit": repo.sha, "ETag": f'"{sha}"', "X-Linked-Etag": f'"{sha}"',
               "X-Linked-Size": str(len(weights)), "Content-Type": "application/octet-stream"}
    standin.faults[path] = [(200, headers, b"\xff" * len(weights))]
    result, events = run_fetch(fetch_bin, standin, cache, ["org/bad"], 8 * MIB)
    assert result.returncode == 1
    error = events[0]
    assert error["event"] == "error" and error["code"] == "corrupt"
    assert "model.safetensors" in error["message"] and "sha256" in error["message"]
    blob = blob_path(cache, "org/bad", weights, True)
    assert not blob.exists() and not Path(str(blob) + ".incomplete").exists()

    # The fault was answered once: the next campaign gets the right bytes.
    result, events = run_fetch(fetch_bin, standin, cache, ["org/bad"], 8 * MIB)
    assert result.returncode == 0, result.stderr
    assert blob.read_bytes() == weights


def test_the_hubs_cdn_redirect_and_a_cut_on_the_cdn(fetch_bin, standin, cache):
    standin.cdn_redirects = True
    repo = add_checkpoint(standin, "org/cdn", 1 * MIB, seed=6)
    weights = repo.files["model.safetensors"]
    cdn_path = "/cdn-lfs/" + hashlib.sha256(weights).hexdigest()
    standin.truncations[cdn_path] = [100_000]
    result, events = run_fetch(fetch_bin, standin, cache, ["org/cdn"], 8 * MIB)
    assert result.returncode == 0, result.stderr
    assert [r.headers.get("Range") for r in standin.requests_to(cdn_path)] == [
        None, "bytes=100000-"]
    assert blob_path(cache, "org/cdn", weights, True).read_bytes() == weights
    assert scan_warnings(cache, standin)["warnings"] == []


def test_a_gated_repo_keeps_its_reason(fetch_bin, standin, cache):
    add_checkpoint(standin, "org/gated", 64 * 1024, seed=8, gated=True)
    result, events = run_fetch(fetch_bin, standin, cache, ["org/gated"], 8 * MIB)
    assert result.returncode == 1
    assert events[0]["event"] == "error" and events[0]["reason"] == "gated"
    assert "HF_TOKEN" in events[0]["message"]
    assert events[-1]["bytes_held"] == 0  # the room it held is given back

    result, events = run_fetch(fetch_bin, standin, cache, ["org/gated"], 8 * MIB,
                               HF_TOKEN="hf_test")
    assert result.returncode == 0, result.stderr


def test_an_unknown_model_is_not_found(fetch_bin, standin, cache):
    result, events = run_fetch(fetch_bin, standin, cache, ["org/missing"], 8 * MIB)
    assert result.returncode == 1
    assert events[0]["reason"] == "not_found"


# --- what reads the cache afterwards -----------------------------------------------------------

LOAD_OFFLINE = """
import sys, torch
from transformers import AutoModelForCausalLM
from safetensors.torch import load_file
model = AutoModelForCausalLM.from_pretrained(sys.argv[1], revision=sys.argv[2] or None)
saved = load_file(sys.argv[3])
state = model.state_dict()
assert all(torch.equal(state[name], tensor) for name, tensor in saved.items()), "weights differ"
print(type(model).__name__, len(saved))
"""


def test_transformers_loads_a_fetched_checkpoint_offline(fetch_bin, standin, cache, tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=256, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=64)
    saved = tmp_path / "tiny-llama"
    transformers.LlamaForCausalLM(config).save_pretrained(saved)
    files = {p.relative_to(saved).as_posix(): p.read_bytes() for p in saved.rglob("*")
             if p.is_file()}
    assert "model.safetensors" in files
    repo = standin.add_repo("org/tiny-llama", files=files)

    result, events = run_fetch(fetch_bin, standin, cache, ["org/tiny-llama"], 64 * MIB)
    assert result.returncode == 0, result.stderr
    assert events[0]["commit"] == repo.sha

    # By commit, and by name alone (refs/main was written); nothing can reach the stand-in.
    for revision in (repo.sha, ""):
        load = subprocess.run(
            [sys.executable, "-c", LOAD_OFFLINE, "org/tiny-llama", revision,
             str(saved / "model.safetensors")],
            capture_output=True, text=True, timeout=300,
            env=hf_env(standin, cache, HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9"))
        assert load.returncode == 0, load.stderr
        assert load.stdout.startswith("LlamaForCausalLM")
    assert scan_warnings(cache, standin)["warnings"] == []
