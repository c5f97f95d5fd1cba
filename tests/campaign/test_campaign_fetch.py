"""canrun campaign against the loopback Hub stand-in (real protocol) with an empty HF cache
and a disk budget smaller than the checkpoints together: each checkpoint is fetched ahead of
its run and evicted after, the cache (measured on disk while the campaign runs) never holds
more of the campaign's bytes than the budget, a model the user had is used as it is and
untouched, and every model gets its verdict."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_fetch import CacheSampler, cache_bytes  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "hub"))
from hub_standin import HubStandIn  # noqa: E402

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = SOURCE / ".cache" / "fixtures"
FETCHED = ["canrun-fixtures/tiny-llama", "canrun-fixtures/tiny-qwen3", "canrun-fixtures/tiny-mistral"]
USERS = "canrun-fixtures/tiny-gemma"  # in the user's cache before the campaign


def model_info_asked(standin, repo_id):
    """The model-info requests the stand-in answered for REPO_ID: what resolving a checkpoint
    on the Hub asks first (fetching one at its commit lists the tree and asks no model info)."""
    return [r for r in standin.requests if re.fullmatch(
        rf"/api/models/{re.escape(repo_id)}(/revision/.+)?", urllib.parse.urlsplit(r.path).path)]


def snapshot(repo_id):
    repo = FIXTURES / "hub" / ("models--" + repo_id.replace("/", "--"))
    return repo / "snapshots" / (repo / "refs" / "main").read_text()


def files_of(repo_id):
    folder = snapshot(repo_id)
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def canrun_cache(tmp_path_factory):
    """One canrun cache for the module's campaigns (stack answers, CPU references), as the
    nodes of a fleet may share one."""
    return tmp_path_factory.mktemp("canrun-cache")


def test_campaign_fetches_within_the_disk_budget(canrun_bin, canrun_cache, tmp_path):
    subprocess.run([sys.executable, str(SOURCE / "tests/fixtures/build_models.py"), str(FIXTURES)], check=True)
    standin = HubStandIn([], lifetime_s=900).start()
    try:
        for repo_id in FETCHED + [USERS]:
            standin.add_repo(repo_id, {"pipeline_tag": "text-generation", "library_name": "transformers"},
                             files_of(repo_id), sha=(snapshot(repo_id).name))
        home = tmp_path / "hf-home"
        cache = home / "hub"
        cache.mkdir(parents=True)
        users = cache / ("models--" + USERS.replace("/", "--"))
        shutil.copytree(snapshot(USERS).parents[1], users, symlinks=True)
        before_user = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (users / "blobs").iterdir()}
        user_bytes = cache_bytes(cache)
        one = max(sum(len(b) for b in files_of(repo_id).values()) for repo_id in FETCHED)
        budget = int(one * 1.5)  # room for one checkpoint at a time, not two
        models = tmp_path / "models.txt"
        models.write_text("\n".join(FETCHED + [USERS]) + "\n")
        env = dict(os.environ, NO_COLOR="1", HF_ENDPOINT=standin.endpoint, HF_HOME=str(home),
                   HF_TOKEN="", HF_HUB_OFFLINE="", CANRUN_CACHE=str(canrun_cache))
        env.pop("HF_HUB_CACHE", None)
        command = [str(canrun_bin), "campaign", "--backend", "cpu", "--tasks", "text-generation",
                   "--models", str(models), "--out", str(tmp_path / "dataset"), "--tokens", "4", "--no-perf", "--long-tokens", "0",
                   "--disk-budget", f"{budget / 2**30:.12f}", "--json"]
        with CacheSampler(cache) as sampler:
            result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1200)
        assert result.returncode == 0, result.stderr[-4000:]
        out = json.loads(result.stdout)
        # Each checkpoint was resolved once, by planning: its runs used what the plan kept.
        assert {m: len(model_info_asked(standin, m)) for m in FETCHED + [USERS]} == \
            {m: 1 for m in FETCHED + [USERS]}
    finally:
        standin.stop()
    assert {item["model_id"]: item["result"] for item in out["items"]} == {m: "PASS" for m in FETCHED + [USERS]}
    # Measured on disk: the campaign's bytes on top of the user's never passed the budget, and
    # it did fetch (more than one checkpoint went through the cache in turn).
    assert sampler.peak - user_bytes <= budget, (sampler.peak, user_bytes, budget)
    assert out["peak_fetched_bytes"] <= budget
    assert sampler.samples > 10
    # The user's model: used from the cache, its weights never fetched, every file it had
    # untouched (planning may add config.json under the Hub's ETag, as huggingface_hub would).
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in before_user} == before_user
    weights = [r for r in standin.requests if USERS in r.path and r.path.endswith(".safetensors")]
    assert all("Range" in r.headers for r in weights)  # headers read for the plan, never the weights
    table = pd.read_parquet(tmp_path / "dataset" / "data")
    assert sorted(table.model_id) == sorted(FETCHED + [USERS])
    assert set(table.revision) == {snapshot(m).name for m in FETCHED + [USERS]}


def test_a_fleet_worker_resolves_nothing(canrun_bin, canrun_cache, tmp_path):
    """A fleet campaign planned against the Hub; its worker on a node with an empty HF cache
    fetches the checkpoint at the planned commit and runs it, asking the Hub for no model info:
    the checkpoint and plan come from the campaign folder."""
    subprocess.run([sys.executable, str(SOURCE / "tests/fixtures/build_models.py"), str(FIXTURES)], check=True)
    models = FETCHED[:1]
    standin = HubStandIn([], lifetime_s=600).start()
    try:
        for repo_id in models:
            standin.add_repo(repo_id, {"pipeline_tag": "text-generation", "library_name": "transformers"},
                             files_of(repo_id), sha=(snapshot(repo_id).name))
        listed = tmp_path / "models.txt"
        listed.write_text("\n".join(models) + "\n")

        def node(name):  # a node's environment: an HF cache of its own (canrun's cache shared)
            env = dict(os.environ, NO_COLOR="1", HF_ENDPOINT=standin.endpoint, HF_HOME=str(tmp_path / name / "hf"),
                       HF_TOKEN="", HF_HUB_OFFLINE="", CANRUN_CACHE=str(canrun_cache))
            env.pop("HF_HUB_CACHE", None)
            return env
        campaign = tmp_path / "campaign"
        planned = subprocess.run(
            [str(canrun_bin), "campaign", "--backend", "cpu", "--tasks", "text-generation", "--models", str(listed),
             "--exclusions", "/dev/null", "--tokens", "4", "--no-perf", "--long-tokens", "0", "--out", str(tmp_path / "dataset"), "--campaign-dir",
             str(campaign), "--executor", "slurm", "--slices", "1", "--emit", str(tmp_path / "emit")],
            capture_output=True, text=True, env=node("planner"), timeout=600)
        assert planned.returncode == 0, planned.stderr[-4000:]
        assert {m: len(model_info_asked(standin, m)) for m in models} == {m: 1 for m in models}
        asked_before = len(standin.requests)
        ran = subprocess.run([str(canrun_bin), "worker", "--campaign-dir", str(campaign), "--index", "0", "--json"],
                             capture_output=True, text=True, env=node("worker"), timeout=900)
        assert ran.returncode == 0, ran.stderr[-4000:]
        during = standin.requests[asked_before:]
    finally:
        standin.stop()
    out = json.loads(ran.stdout)
    assert {item["model_id"]: item["result"] for item in out["items"]} == {m: "PASS" for m in models}
    assert any("/tree/" in r.path for r in during), "the worker fetched the checkpoints"
    assert [r.path for r in during if re.fullmatch(r"/api/models/[^/]+/[^/]+(/revision/.+)?",
                                                   urllib.parse.urlsplit(r.path).path)] == []
