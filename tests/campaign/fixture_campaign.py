"""The shared campaign fixture: one campaign over the model fixtures on the cpu backend, run
once per test session (ctest fixture campaign_run) into a folder that the campaign tests read
instead of running models themselves.

It mixes what a campaign meets: PASS, two kinds of failure (a load failure; a sharded random
model the judge finds not fluent), a package learned on top (tiny-tiktoken's tokenizer needs
tiktoken, installed from the wheel scripts/setup.sh put in .cache/wheels, never the network), exclusions of every kind a local campaign can meet (curated,
no_safetensors, remote_code, quantized, unsupported_task, too_large, no_parallel_plan) and a
model that cannot be resolved at all. A small memory per core makes the planner shard.

usage: fixture_campaign.py OUT   (OUT/dataset, OUT/cache, OUT/campaign.json, OUT/stderr.txt)
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = SOURCE / ".cache" / "fixtures"
WHEELS = SOURCE / ".cache" / "wheels"  # pip installs packages on top from here only

MODELS = """\
canrun-fixtures/tiny-llama
canrun-fixtures/tiny-llama-4l
canrun-fixtures/tiny-tiktoken
canrun-fixtures/unknown-arch
canrun-fixtures/no-weights
canrun-fixtures/remote-code
canrun-fixtures/tiny-fp8
canrun-fixtures/tiny-gpt2
canrun-fixtures/tiny-phimoe
canrun-fixtures/tiny-opt
canrun-fixtures/tiny-llava text-to-speech
canrun-fixtures/not-there
"""
EXCLUSIONS = """\
[[exclude]]
match = "canrun-fixtures/tiny-opt"
reason = "low_priority"
why = "Covered by the other decoder fixtures."
"""
# The options canrun test must be given to test a model as the campaign did.
OPTIONS = ["--backend", "cpu", "--memory-per-core", "0.0005", "--reserve", "0", "--tokens", "8"]


def environment(out):
    env = dict(os.environ, HF_HOME=str(FIXTURES), HF_HUB_OFFLINE="1", NO_COLOR="1",
               CANRUN_CACHE=str(out / "cache"), PIP_NO_INDEX="1", PIP_FIND_LINKS=str(WHEELS))
    env.pop("HF_HUB_CACHE", None)
    return env


def main():
    out = Path(sys.argv[1]).resolve()
    subprocess.run([sys.executable, str(SOURCE / "tests/fixtures/build_models.py"), str(FIXTURES)], check=True)
    # A fresh dataset each time (a campaign keeps the rows of a stack it already holds); the
    # caches under OUT/cache (compiled graphs, references, stack answers) are kept.
    shutil.rmtree(out / "dataset", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "models.txt").write_text(MODELS)
    (out / "exclusions.toml").write_text(EXCLUSIONS)
    command = [os.environ["CANRUN_BIN"], "campaign", *OPTIONS, "--tasks", "text-generation",
               "--models", str(out / "models.txt"), "--exclusions", str(out / "exclusions.toml"),
               "--out", str(out / "dataset"), "--json"]
    result = subprocess.run(command, capture_output=True, text=True, env=environment(out), timeout=1500)
    (out / "stderr.txt").write_text(result.stderr)
    (out / "campaign.json").write_text(result.stdout)
    if result.returncode != 0:
        sys.exit(f"the fixture campaign exited {result.returncode}:\n{result.stderr[-4000:]}")


if __name__ == "__main__":
    main()
