#!/usr/bin/env bash
# Runs every benchmark under bench/ and writes their reports to BUILD_DIR/bench/.
# Each benchmark measures a baseline in the same run; read the ratios, not the times.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
mkdir -p "$build_dir/bench"
for bench in "$build_dir"/bench_*; do
  [[ -x "$bench" ]] || continue
  name=$(basename "$bench")
  echo "== $name"
  "$bench" --benchmark_out="$build_dir/bench/$name.json" --benchmark_out_format=json
done
