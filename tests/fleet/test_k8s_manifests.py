"""The Kubernetes manifests `canrun campaign --executor k8s --emit` writes, held offline to the
Kubernetes API's own OpenAPI schemas by kubernetes-validate in strict mode (an unknown field is an
error, as `kubectl apply --validate=strict` makes it): for Kubernetes 1.29, the first release
with backoffLimitPerIndex on by default, and for the newest release the validator bundles. The
validator is shown to reject broken variants of the same Job, so the check can fail."""
import copy
import json
import sys
from pathlib import Path

import kubernetes_validate
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fleet_setup import FleetFolder  # noqa: E402

VERSIONS = ["1.29", ".".join(kubernetes_validate.latest_version().split(".")[:2])]


@pytest.fixture(scope="module")
def manifests(tmp_path_factory, canrun_bin):
    fleet = FleetFolder(tmp_path_factory.mktemp("k8s").resolve(), canrun_bin, timeout=300)
    root = fleet.root
    planned = fleet.canrun(*fleet.campaign_args(
        root, "--executor", "k8s", "--slices", "2", "--image", "example/canrun:1",
        "--instance-type", "trn2.48xlarge", "--emit", root / "k8s"))
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
    for name in ("job.json", "collect-job.json"):
        [container] = manifests[name]["spec"]["template"]["spec"]["containers"]
        assert container["securityContext"] == {
            "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"}}


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
