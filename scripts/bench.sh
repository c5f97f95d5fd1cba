#!/usr/bin/env bash
# Runs every benchmark under bench/. Each measures a baseline in the same run: read the
# ratios, not the absolute times. Google Benchmark reports go to BUILD_DIR/bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
scripts/setup.sh --bench
mkdir -p "$build_dir/bench"

echo "== ModelId::parse vs std::regex of the same rules"
"$build_dir/bench_model_id" --benchmark_out="$build_dir/bench/bench_model_id.json" \
  --benchmark_out_format=json

echo "== dataset: C++ vs pyarrow"
.venv/bin/python bench/dataset_vs_pyarrow.py "$build_dir"

echo "== canrun test harness overhead per task and compile-cache effect"
.venv/bin/python bench/harness_overhead.py "$build_dir"

echo "== the box: a boxed trial vs an unboxed one, and a box's set-up"
.venv/bin/python bench/isolation_cost.py "$build_dir"

echo "== how well: what the eager baseline and the long generation add to a trial"
.venv/bin/python bench/how_well_overhead.py "$build_dir"

echo "== verification of the tasks' outputs at real models' sizes (image, logits, embeddings)"
"$build_dir/bench_verify" --benchmark_out="$build_dir/bench/bench_verify.json" \
  --benchmark_out_format=json

echo "== planner: 10,000 models from cached facts vs reading one safetensors header"
.venv/bin/python tests/fixtures/build_models.py .cache/fixtures --only smollm2
"$build_dir/bench_plan" "$(ls .cache/fixtures/hub/models--HuggingFaceTB--SmolLM2-135M-Instruct/snapshots/*/model.safetensors)"

echo "== campaign packing: a simulated 600-test campaign on trn2.48xlarge vs its makespan's lower bound"
"$build_dir/bench_campaign_packing"

echo "== canrun campaign vs a shell loop of canrun test (cold caches)"
.venv/bin/python bench/campaign_vs_loop.py "$build_dir"

echo "== canrun serve vs http.server+pandas and nginx (wrk, 30 s each)"
.venv/bin/python bench/serve_vs_baselines.py "$build_dir"
