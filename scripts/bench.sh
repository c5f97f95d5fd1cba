#!/usr/bin/env bash
# Runs every benchmark under bench/. Each measures a baseline in the same run: read the
# ratios, not the absolute times. Google Benchmark reports go to BUILD_DIR/bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
mkdir -p "$build_dir/bench"

echo "== ModelId::parse vs std::regex of the same rules"
"$build_dir/bench_model_id" --benchmark_out="$build_dir/bench/bench_model_id.json" \
  --benchmark_out_format=json

echo "== dataset: C++ vs pyarrow"
.venv/bin/python bench/dataset_vs_pyarrow.py "$build_dir"

echo "== canrun serve vs http.server+pandas and nginx (wrk, 30 s each)"
.venv/bin/python bench/serve_vs_baselines.py "$build_dir"
