"""The Kubernetes manifests `canrun campaign --executor k8s --emit` writes, held offline to the
Kubernetes API's own OpenAPI schemas by kubernetes-validate in strict mode (an unknown field is an
error, as `kubectl apply --validate=strict` makes it): for Kubernetes 1.29, the first release
with backoffLimitPerIndex on by default, and for the newest release the validator bundles. The
validator is shown to reject broken variants of the same Job, so the check can fail."""
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = SOURCE / ".cache" / "fixtures"
MODELS = ["canrun-fixtures/tiny-llama", "canrun-fixtures/tiny-qwen3",
          "canrun-fixtures/tiny-mistral", "canrun-fixtures/unknown-arch",
          "canrun-fixtures/no-weights"]
OPTIONS = ["--backend", "cpu", "--tasks", "text-generation", "--tokens", "2",
           "--memory-per-core", "0.0005", "--reserve", "0"]
VERSIONS = ["1.29", ".".join(kubernetes_validate.latest_version().split(".")[:2])]


@pytest.fixture(scope="module")
def manifests(tmp_path_factory, canrun_bin):
    subprocess.run([sys.executable, str(SOURCE / "tests/fixtures/build_models.py"), str(FIXTURES)],
                   check=True)
    root = tmp_path_factory.mktemp("k8s").resolve()
    (root / "models.txt").write_text("\n".join(MODELS) + "\n")
    env = dict(os.environ, HF_HOME=str(FIXTURES), HF_HUB_OFFLINE="1", NO_COLOR="1",
               CANRUN_CACHE=str(root / "cache"))
    env.pop("HF_HUB_CACHE", None)
    planned = subprocess.run(
        [str(canrun_bin), "campaign", *OPTIONS, "--models", str(root / "models.txt"),
         "--exclusions", "/dev/null", "--out", str(root / "dataset"), "--campaign-dir",
         str(root / "campaign"), "--executor", "k8s", "--slices", "2", "--image",
         "example/canrun:1", "--instance-type", "trn2.48xlarge", "--emit", str(root / "k8s")],
        env=env, capture_output=True, text=True, timeout=300)
    assert planned.returncode == 0, planned.stderr
    return {name: json.loads((root / "k8s" / name).read_text())
            for name in ("job.json", "collect-job.json")}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", ["job.json", "collect-job.json"])
def test_the_manifests_are_valid_kubernetes_jobs(manifests, name, version):
    manifest = manifests[name]
    assert (manifest["apiVersion"], manifest["kind"]) == ("batch/v1", "Job")
    assert kubernetes_validate.validate(manifest, version, strict=True) == version


def test_the_indexed_job_is_what_the_validator_checked(manifests):
    spec = manifests["job.json"]["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == 2
    assert spec["backoffLimitPerIndex"] >= 1
    assert spec["template"]["spec"]["nodeSelector"] == {
        "node.kubernetes.io/instance-type": "trn2.48xlarge"}
    assert spec["template"]["spec"]["containers"][0]["image"] == "example/canrun:1"


def rejected(manifest, version="1.29"):
    """The path of the field the validator rejects in `manifest`, strictly checked."""
    with pytest.raises(kubernetes_validate.ValidationError) as error:
        kubernetes_validate.validate(manifest, version, strict=True)
    return ".".join(map(str, error.value.absolute_path))


def test_the_validator_rejects_a_broken_job(manifests):
    job = manifests["job.json"]
    text_limit = copy.deepcopy(job)
    text_limit["spec"]["backoffLimitPerIndex"] = "2"
    assert rejected(text_limit) == "spec.backoffLimitPerIndex"

    unknown = copy.deepcopy(job)
    unknown["spec"]["template"]["spec"]["containers"][0]["comand"] = ["canrun"]
    assert rejected(unknown) == "spec.template.spec.containers.0"

    # A pod condition without its status: optional only from Kubernetes 1.35 on.
    no_status = copy.deepcopy(job)
    [condition] = no_status["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"]
    del condition["status"]
    assert rejected(no_status) == "spec.podFailurePolicy.rules.0.onPodConditions.0"
