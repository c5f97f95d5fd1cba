#!/usr/bin/env bash
# Builds the fuzz targets with clang (a project of their own, fuzz/CMakeLists.txt) in BUILD_DIR
# and runs each for SECONDS from the seed corpus, under ASan and UBSan. Exit 1 on any finding;
# the input that caused it is left in BUILD_DIR/artifacts/. Used by the fuzz_short test
# (20 s each) and by hand for long runs:  fuzz/run.sh build-fuzz 300
set -euo pipefail
build_dir=${1:?usage: fuzz/run.sh BUILD_DIR SECONDS}
seconds=${2:?usage: fuzz/run.sh BUILD_DIR SECONDS}
here=$(cd "$(dirname "$0")" && pwd)
cxx=${CXX:-$(command -v clang++-14 || command -v clang++)}
if [[ ! -f "$build_dir/build.ninja" ]]; then
  cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
fi
cmake --build "$build_dir" -j 2 >/dev/null
mkdir -p "$build_dir/artifacts"
status=0
for target in safetensors_header model_facts; do
  work=$(mktemp -d)
  if "$build_dir/${target}_fuzz" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$build_dir/artifacts/${target}-" -dict="$here/$target.dict" \
      "$work" "$here/corpus/$target" >"$build_dir/$target.log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build_dir/$target.log" | grep -o '[0-9]*$')
    echo "fuzz: $target: ${runs:-?} runs in ${seconds} s, no finding"
  else
    echo "fuzz: $target: FINDING; see $build_dir/$target.log and $build_dir/artifacts/" >&2
    tail -30 "$build_dir/$target.log" >&2
    status=1
  fi
  rm -rf "$work"
done
exit $status
