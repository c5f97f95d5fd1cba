#!/usr/bin/env bash
# The Space's entrypoint (installed as PREFIX/bin/canrun-space-start by scripts/space-build.sh):
# serves one canrun dataset folder with `canrun serve`.
#
#   CANRUN_DATA=DIR               serve this dataset folder (it holds data/*.parquet); else
#   CANRUN_DATASET_REPO=OWNER/NAME  download that Hub dataset at start with the `hf` CLI (HF_TOKEN
#                                 for a private one; CANRUN_DATASET_REVISION for a branch, tag or
#                                 commit) into CANRUN_DATASET_DIR (default ~/dataset) and serve it
#   CANRUN_CENSUS=DIR             also serve this census dataset (canrun census --out) beside it:
#                                 the Architectures view and the census line of untested models;
#                                 or CANRUN_CENSUS_REPO=OWNER/NAME, a Hub dataset downloaded at
#                                 start into CANRUN_CENSUS_DIR (default ~/census)
#   CANRUN_HOST                   address to listen on (default 0.0.0.0)
#   PORT                          port to listen on (default 7860, the Space's app_port)
#
# Arguments are passed on to canrun serve (e.g. --refresh-rankings 0). canrun is taken from
# beside this script, else from PATH.
set -euo pipefail

say() { printf 'space-start: %s\n' "$*" >&2; }

here=$(dirname "$0")
if [[ -x "$here/canrun" ]]; then
  canrun=$here/canrun
elif canrun=$(command -v canrun); then
  :
else
  say "no canrun executable beside $0 or on PATH: build and install it with scripts/space-build.sh PREFIX"
  exit 1
fi

# download REPO DIR [REVISION]: a Hub dataset into DIR with the `hf` CLI.
download() {
  if ! command -v hf >/dev/null; then
    say "a Hub dataset ($1) is asked for but the Hugging Face CLI \`hf\` is not on PATH: install the" \
      "huggingface_hub Python package (pip install huggingface_hub, at the version requirements.lock pins)"
    exit 1
  fi
  local revision=()
  [[ -z "${3:-}" ]] || revision=(--revision "$3")
  say "downloading the Hub dataset $1 into $2"
  mkdir -p "$2"
  if ! hf download --repo-type dataset "$1" "${revision[@]}" --local-dir "$2" >&2; then
    say "could not download the Hub dataset $1 (a private one needs HF_TOKEN)"
    exit 1
  fi
}

if [[ -n "${CANRUN_DATA:-}" ]]; then
  data=$CANRUN_DATA
  if [[ ! -d "$data" ]]; then
    say "CANRUN_DATA=$data is not a folder (it should be a canrun dataset folder holding data/*.parquet)"
    exit 1
  fi
elif [[ -n "${CANRUN_DATASET_REPO:-}" ]]; then
  data=${CANRUN_DATASET_DIR:-$HOME/dataset}
  download "$CANRUN_DATASET_REPO" "$data" "${CANRUN_DATASET_REVISION:-}"
else
  say "nothing to serve: set CANRUN_DATA to a dataset folder, or CANRUN_DATASET_REPO to a Hub" \
    "dataset (e.g. org/canrun-results) to download at start"
  exit 2
fi

census=()
if [[ -n "${CANRUN_CENSUS:-}" ]]; then
  if [[ ! -d "$CANRUN_CENSUS/data" ]]; then
    say "CANRUN_CENSUS=$CANRUN_CENSUS is not a census dataset folder (it should hold data/*.parquet)"
    exit 1
  fi
  census=(--census "$CANRUN_CENSUS")
elif [[ -n "${CANRUN_CENSUS_REPO:-}" ]]; then
  download "$CANRUN_CENSUS_REPO" "${CANRUN_CENSUS_DIR:-$HOME/census}"
  census=(--census "${CANRUN_CENSUS_DIR:-$HOME/census}")
fi

exec "$canrun" serve --data "$data" "${census[@]}" --host "${CANRUN_HOST:-0.0.0.0}" --port "${PORT:-7860}" "$@"
