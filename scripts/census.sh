#!/usr/bin/env bash
# make census: the architecture census (canrun census) of both stacks on the cpu backend — the
# project's transformers for text generation (one core, then sharded after a one-core PASS) and
# the encoder tasks, and each second stack of stacks/*.lock for text generation — published as
# the census dataset the demo serves (demo/census).
#
# Hours of CPU on a small machine, so it may be run in several sittings: stopped (Ctrl-C, or
# killed), `make census` again resumes where it was (canrun census --resume). Its work stays in
# CANRUN_CENSUS_WORK (default .cache/census): the dataset being filled, canrun's cache for it
# (the tiny checkpoints, CPU references, compiled graphs) and the wall time of each sitting.
# When every census is complete, the dataset (rows, kept logs, card) is copied to demo/census
# and its card says how it was made: the command, the machine, the dates and the wall time.
#
#   CENSUS_TIMEOUT=S   seconds each run may take (default 300)
#   CENSUS_CORES=N     worker cores (default: all)
#   CENSUS_TYPES=a,b   only these model types (a trial of the script; publish it elsewhere)
#   CENSUS_PUBLISH=DIR where to publish (default demo/census)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
canrun="$build_dir/canrun"
work=${CANRUN_CENSUS_WORK:-.cache/census}
mkdir -p "$work"
work=$(cd "$work" && pwd)
out=$work/dataset
published=${CENSUS_PUBLISH:-demo/census}
timeout=${CENSUS_TIMEOUT:-300}
cores=()  # and --types: the options that narrow the census
[[ -z "${CENSUS_CORES:-}" ]] || cores=(--cores "$CENSUS_CORES")
[[ -z "${CENSUS_TYPES:-}" ]] || cores+=(--types "$CENSUS_TYPES")
encoder_tasks=text-classification,fill-mask,token-classification

# The wall time of this sitting is added to the log when it ends, however it ends.
started=$(date +%s)
sitting_end() {  # START END SECONDS
  echo "$(date -u -d "@$started" +%FT%TZ) $(date -u +%FT%TZ) $(( $(date +%s) - started ))" >> "$work/sittings.log"
}
trap sitting_end EXIT
# Stopped by a signal (Ctrl-C, `kill`), bash leaves without its EXIT trap unless it traps the
# signal: it then waits for canrun, which stops its runs cleanly, and logs the sitting.
trap 'exit 130' INT
trap 'exit 143' TERM

census() {  # PYTHON TASKS
  echo
  echo "census: $2 with $1"
  # --resume starts a census that has not begun, and continues one that has.
  "$canrun" census --backend cpu --python "$1" --tasks "$2" --timeout "$timeout" "${cores[@]}" \
    --out "$out" --cache "$work/cache" --resume
}
"$canrun" --version
# Text generation of every stack first (what the Space's census line most often shows), then the
# encoder tasks.
census "$PWD/.venv/bin/python" text-generation
for stack in .cache/stacks/*/; do
  census "$PWD/${stack%/}/bin/python" text-generation
done
census "$PWD/.venv/bin/python" "$encoder_tasks"

echo
"$canrun" dataset validate "$out"
"$canrun" dataset show "$out"

# Publish: the rows, the logs of failures, the card; not the campaigns' work folders.
rm -rf "$published.new"
mkdir -p "$published.new"
cp -r "$out/data" "$out/census.json" "$out/README.md" "$published.new/"
[[ ! -d "$out/logs" ]] || cp -r "$out/logs" "$published.new/"
sitting_end
trap - EXIT
seconds=$(awk '{ s += $3 } END { print s }' "$work/sittings.log")
{
  echo
  echo "## How this census was made"
  echo
  echo "- Command: \`make census\` (scripts/census.sh; each run's timeout ${timeout} s)."
  echo "- Machine: $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) of memory; backend cpu."
  echo "- Dates: $(head -1 "$work/sittings.log" | cut -d' ' -f1) to $(tail -1 "$work/sittings.log" | cut -d' ' -f2) (UTC), in $(wc -l < "$work/sittings.log") sitting(s)."
  echo "- Wall time: $(( seconds / 3600 )) h $(( seconds % 3600 / 60 )) min in all."
} >> "$published.new/README.md"
rm -rf "$published"
mv "$published.new" "$published"
echo "census: published in $published"
