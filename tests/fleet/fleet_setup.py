"""The set-up the fleet tests share: the fixture models in a local HF cache, the models list,
the options every fleet campaign is planned with, and canrun run in the environment a node of
the fleet gives it (the fixture models offline, a canrun cache of the folder's own)."""
import os
import subprocess
import sys
from pathlib import Path

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = SOURCE / ".cache" / "fixtures"
# The campaigns' models, with the verdict each gets on the cpu backend.
MODELS = {"canrun-fixtures/tiny-llama": "PASS", "canrun-fixtures/tiny-qwen3": "PASS",
          "canrun-fixtures/tiny-mistral": "PASS", "canrun-fixtures/unknown-arch": "FAIL_LOAD",
          "canrun-fixtures/no-weights": "EXCLUDED"}
# Two tokens, no eager baseline, no long generation: the fleet's own behaviour is under test.
OPTIONS = ["--backend", "cpu", "--tasks", "text-generation", "--tokens", "2", "--no-perf",
           "--long-tokens", "0", "--memory-per-core", "0.0005", "--reserve", "0"]


class FleetFolder:
    """A test's folder for fleet campaigns: the fixture models built, models.txt listing
    MODELS, and canrun run in the environment of `base_env` (this process's by default) with
    the fixture cache as HF_HOME, offline, and ROOT/cache as its canrun cache."""

    def __init__(self, root: Path, canrun_bin, base_env=None, timeout=900):
        subprocess.run([sys.executable, str(SOURCE / "tests/fixtures/build_models.py"),
                        str(FIXTURES)], check=True)
        self.root = root
        self.bin = str(canrun_bin)
        self.models = root / "models.txt"
        self.models.write_text("\n".join(MODELS) + "\n")
        self.env = dict(os.environ if base_env is None else base_env, HF_HOME=str(FIXTURES),
                        HF_HUB_OFFLINE="1", NO_COLOR="1", CANRUN_CACHE=str(root / "cache"))
        self.env.pop("HF_HUB_CACHE", None)
        self.timeout = timeout

    def canrun(self, *args, env=None, timeout=None):
        """canrun ARGS in the folder's environment (or `env`); the CompletedProcess (text)."""
        return subprocess.run([self.bin, *map(str, args)], env=self.env if env is None else env,
                              capture_output=True, text=True,
                              timeout=self.timeout if timeout is None else timeout)

    def campaign_args(self, folder: Path, *extra, options=OPTIONS):
        """`canrun campaign` planning the models into FOLDER/campaign for the dataset
        FOLDER/dataset, no exclusions list, with `extra` (the executor and its options)."""
        return ["campaign", *options, "--models", self.models, "--exclusions", "/dev/null",
                "--out", folder / "dataset", "--campaign-dir", folder / "campaign", *extra]
