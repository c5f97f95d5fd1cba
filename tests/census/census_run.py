"""The census run every census test reads (tests/census/conftest.py runs it once per session):
`canrun census` over five types of the project's stack (transformers 5.18.0).

- qwen2: a dense decoder with a tensor-parallel plan;
- phimoe: a mixture of experts with only an expert-parallel plan;
- gpt2: a type with no parallel plan;
- llama: made unbuildable by an override (an activation nobody has);
- bart: an encoder-decoder, of another task.

phimoe's config and the census tokenizer equal the test fixture tiny-phimoe's (and its
tokenizer): its graphs on one core (the demo's) and by expert parallel over 2 cores
(run_sharded_test's) are compiled once into the suite's compile cache (CANRUN_COMPILE_CACHE),
by whichever runs first (ctest runs this after run_sharded_test). qwen2's config equals
tiny-qwen2's, which the suite runs only through its fault backends: the census compiles it."""
import json
import os
import subprocess
from pathlib import Path

import pandas as pd

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TYPES = "qwen2,phimoe,gpt2,llama,bart"
BAD = {"llama": {"config": {"hidden_act": "canrun-no-such-activation"}}}
PARQUET = "cpu__inductor-2.13.0+cpu__transformers-5.18.0.parquet"


def census_command(canrun_bin, work, *extra):
    env = dict(os.environ, NO_COLOR="1", OMP_NUM_THREADS="1")
    return subprocess.run([str(canrun_bin), "census", "--backend", "cpu", "--out", work / "ds",
                           "--cache", work / "cache", *map(str, extra)],
                          capture_output=True, text=True, env=env, timeout=900)


class Census:
    """The census's folders and what it said: `summary` (--json), `rows` by model id."""

    def __init__(self, work, result):
        self.work = work
        self.stderr = result.stderr
        self.summary = json.loads(result.stdout)
        self.rows = pd.read_parquet(work / "ds" / "data" / PARQUET).set_index("model_id")
        self.hf = work / "cache" / "census" / "hf" / "transformers-5.18.0"
        manifest = json.loads((self.hf / "manifest.json").read_text())
        self.manifest = manifest
        self.entries = {entry["model_type"]: entry for entry in manifest["entries"]}

    def reference(self, revision):
        """The CPU reference the census stored for the checkpoint at `revision`."""
        [found] = [ref for ref in (json.loads(path.read_text()) for path in
                                   (self.work / "cache" / "references").glob("*.json"))
                   if ref["key"]["revision"] == revision]
        return found

    def again(self, canrun_bin, *extra):
        return census_command(canrun_bin, self.work, "--types", TYPES, "--overrides",
                              self.work / "overrides.json", *extra)


def run_census(canrun_bin, work):
    """The census of TYPES into `work`, with the shipped overrides and BAD."""
    shipped = json.loads((SOURCE / "census" / "overrides.json").read_text())
    (work / "overrides.json").write_text(json.dumps({**shipped, **BAD}))
    result = census_command(canrun_bin, work, "--types", TYPES, "--overrides",
                            work / "overrides.json", "--json")
    assert result.returncode == 0, result.stderr[-4000:]
    assert sorted(p.name for p in (work / "ds" / "data").glob("*.parquet")) == [PARQUET]
    return Census(work, result)
