#!/usr/bin/env bash
# make space-check: what can be checked of the Space without Docker.
#   1. scripts/space-package.sh writes the Space's repository tree (build-space/space-repo);
#      its Dockerfile and card are checked offline (dockerfile-parse, in build-space/tools-venv),
#      and with hadolint and a Docker daemon when present;
#   2. that tree's scripts/space-build.sh builds and installs canrun into a temporary PREFIX, as
#      the image's build stage does (build folder: build-space/build; ccache when present);
#   3. the install is checked: the binary runs with an empty environment, finds libarrow and
#      libparquet in PREFIX/lib/canrun, and PREFIX holds no torch, chromium or test files;
#   4. scripts/space-start.sh refuses what it cannot serve, with a message that says why;
#   5. it serves a two-row dataset on 127.0.0.1 (a port the kernel picks): /, /api/versions,
#      /api/models (Tested and Selected) and /healthz answer 200 with what the dataset and the
#      shipped catalog hold; then the server is stopped by its pid.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

say() { printf 'space-check: %s\n' "$*" >&2; }
die() {
  say "FAILED: $*"
  exit 1
}

started=$SECONDS
work=$repo/build-space
tmp=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
prefix=$tmp/prefix
image_prefix=/opt/canrun  # PREFIX in space/Dockerfile

# --- 1. The Space tree, its Dockerfile and card -------------------------------------------
tree=$work/space-repo
rm -rf "$tree"
mkdir -p "$work"
scripts/space-package.sh "$tree"

tools=$work/tools-venv
if ! "$tools/bin/python" -c 'import dockerfile_parse' 2>/dev/null; then
  say "installing dockerfile-parse into $tools"
  python3 -m venv "$tools"
  "$tools/bin/python" -m pip install -q --disable-pip-version-check dockerfile-parse==2.0.1 2>&1 |
    { grep -v "^WARNING: Location 'file://" || true; } >&2
fi
"$tools/bin/python" scripts/space-check.py dockerfile "$tree" "$image_prefix"

if command -v hadolint >/dev/null; then
  hadolint "$tree/Dockerfile"
  say "hadolint: clean"
else
  say "hadolint: not installed, skipped"
fi
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  docker build --check "$tree"
  say "docker build --check: clean"
else
  say "docker: no daemon here, the image itself was not built"
fi
if command -v shellcheck >/dev/null; then
  shellcheck -x scripts/space-*.sh scripts/setup.sh scripts/lib/debian-packages.sh
  say "shellcheck: clean"
else
  say "shellcheck: not installed, skipped"
fi

# --- 2. Build and install as the image's build stage does ----------------------------------
CANRUN_SPACE_BUILD_DIR=$work/build "$tree/scripts/space-build.sh" "$prefix"
build_python=$work/build/venv/bin/python

# --- 3. The install -----------------------------------------------------------------------
canrun=$prefix/bin/canrun
env -i "$canrun" --version >/dev/null || die "$canrun does not run with an empty environment"
runpath=$(readelf -d "$canrun" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
# shellcheck disable=SC2016 # the literal $ORIGIN of the dynamic loader
[[ "$runpath" == '$ORIGIN/../lib/canrun' ]] || die "canrun's RUNPATH is '$runpath'"
libraries=$(ldd "$canrun")
for lib in libarrow libparquet; do
  found=$(awk -v lib="$lib" 'index($1, lib ".so.") == 1 && $2 == "=>" { print $3 }' <<<"$libraries")
  [[ -n "$found" && "$(readlink -f "$found")" == "$prefix/lib/canrun/"* ]] ||
    die "canrun takes $lib from '$found', not from $prefix/lib/canrun"
done
[[ -s $prefix/share/canrun/debian-runtime-packages ]] || die "no debian-runtime-packages"
while read -r package; do
  dpkg-query -W "$package" >/dev/null 2>&1 || die "debian-runtime-packages names $package"
done <"$prefix/share/canrun/debian-runtime-packages"
for shipped in catalog backends; do
  diff -r "$shipped" "$prefix/share/canrun/$shipped" >/dev/null || die "share/canrun/$shipped"
done
cmp -s scripts/space-start.sh "$prefix/bin/canrun-space-start" || die "bin/canrun-space-start"
"$prefix/bin/hf" version >/dev/null || die "$prefix/bin/hf does not run"
unwanted=$(find "$prefix" \( \( -type d \( -name torch -o -name pytest -o -name pyarrow \
  -o -name numpy \) \) -o -iname 'chrom*' -o -name 'libgtest*' -o -name 'libgmock*' \
  -o -name 'libbenchmark*' \) -print)
[[ -z "$unwanted" ]] || die "the install holds what serving does not need: $unwanted"
say "install: $(du -sh "$prefix" | cut -f1), runtime Debian packages:" \
  "$(tr '\n' ' ' <"$prefix/share/canrun/debian-runtime-packages")"

# --- 4. The start script refuses what it cannot serve ---------------------------------------
# Runs the start script with a clean environment plus the given variables; prints its stderr,
# fails unless it exits with the code given.
refused() {
  local code=$1 rc=0
  shift
  env -i HOME="$tmp" "$@" scripts/space-start.sh >/dev/null 2>"$tmp/refused.err" || rc=$?
  [[ $rc -eq $code ]] || die "space-start.sh with $* exited $rc, not $code: $(cat "$tmp/refused.err")"
  cat "$tmp/refused.err"
}
said=$(refused 2 PATH="$prefix/bin:/usr/bin:/bin")
grep -q "set CANRUN_DATA.*or CANRUN_DATASET_REPO" <<<"$said" ||
  die "space-start.sh without a dataset says: $said"
said=$(refused 1 PATH="$prefix/bin:/usr/bin:/bin" CANRUN_DATA="$tmp/absent")
grep -q "CANRUN_DATA=$tmp/absent is not a folder" <<<"$said" ||
  die "space-start.sh with a missing CANRUN_DATA says: $said"
# Without hf on PATH (canrun is found beside the installed copy of the script instead).
said=$(env -i HOME="$tmp" PATH=/usr/bin:/bin CANRUN_DATASET_REPO=org/results \
  "$prefix/bin/canrun-space-start" 2>&1 >/dev/null || true)
grep -q "install the huggingface_hub" <<<"$said" || die "space-start.sh without hf says: $said"
say "start script: refuses no dataset, a missing folder and a missing hf, each with a message"

# --- 5. Serve a dataset and ask it ----------------------------------------------------------
dataset=$tmp/dataset
"$build_python" scripts/space-check.py dataset "$dataset"
"$canrun" dataset validate "$dataset" >/dev/null || die "canrun dataset validate $dataset"

# PORT=0: canrun takes a free port and says which on its one stdout line. --exit-after: it stops
# by itself should this script be killed before its cleanup.
env -u CANRUN_DATASET_REPO CANRUN_DATA="$dataset" CANRUN_HOST=127.0.0.1 PORT=0 \
  CANRUN_RANKINGS_DIR="$tmp/rankings" HF_HUB_OFFLINE=1 PATH="$prefix/bin:$PATH" \
  scripts/space-start.sh --refresh-rankings 0 --exit-after 300 \
  >"$tmp/serve.out" 2>"$tmp/serve.err" &
server_pid=$!
port=""
for _ in $(seq 300); do
  port=$(sed -n 's#^serving on http://127\.0\.0\.1:\([0-9]*\)/$#\1#p' "$tmp/serve.out")
  [[ -n "$port" ]] && break
  kill -0 "$server_pid" 2>/dev/null || die "the Space exited at start: $(cat "$tmp/serve.err")"
  sleep 0.1
done
[[ -n "$port" ]] || die "the Space did not start within 30 s: $(cat "$tmp/serve.err")"
grep -q "catalog: $prefix/share/canrun/catalog" "$tmp/serve.err" ||
  die "the Space did not take the shipped catalog: $(cat "$tmp/serve.err")"

# NAME PATH: fetches PATH, wants 200 and the check NAME of space-check.py on the body.
ask() {
  local status
  status=$(curl -sS --max-time 10 -o "$tmp/$1.body" -w '%{http_code}' "http://127.0.0.1:$port$2")
  [[ "$status" == 200 ]] || die "GET $2 answered $status: $(head -c 300 "$tmp/$1.body")"
  python3 scripts/space-check.py response "$1" "$tmp/$1.body"
  say "GET $2: 200, as expected"
}
ask page /
ask versions /api/versions
ask tested '/api/models?view=tested&task=text-generation'
ask selected '/api/models?view=selected&task=text-generation'
ask health /healthz

kill "$server_pid"
rc=0
wait "$server_pid" || rc=$?
server_pid=""
[[ $rc -eq 0 ]] || die "the Space exited $rc when stopped: $(cat "$tmp/serve.err")"
grep -q "stopping on signal" "$tmp/serve.err" || die "the Space did not stop on SIGTERM"

say "passed in $((SECONDS - started)) s"
