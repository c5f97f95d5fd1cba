#!/usr/bin/env bash
# Idempotent set-up for building and testing canrun on a fresh Debian machine
# (scripts/setup.sh --bench also installs what the benchmarks need):
#   1. Debian packages (apt-get, only those missing),
#   2. the project virtualenv .venv from requirements.lock and requirements-nodeps.txt (only
#      when they changed),
#   3. npm packages from package-lock.json (only when the lock changed), beside 2,
#   4. the wheels the tests install on top of a stack, from a local folder (.cache/wheels),
#   5. one virtualenv per second stack, .cache/stacks/<name> from stacks/<name>.lock (only when
#      its lock changed), beside 2.
# Re-running it when everything is in place only compares package lists and hashes.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

# --- 1. Debian packages -------------------------------------------------------------------
apt_packages=(
  cmake g++ ninja-build pkg-config make git clang-format
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcurl4-openssl-dev libssl-dev libboost-dev zlib1g-dev
  clang-14 libclang-rt-14-dev
  chromium
  python3 python3-venv nodejs npm
  # The Slurm executor's test starts a one-node Slurm on localhost (tests/fleet/test_slurm.py).
  slurm-wlm munge
)
# The server benchmark's load generator and baseline (make bench only).
if [[ "${1:-}" == "--bench" ]]; then
  apt_packages+=(wrk nginx-light)
fi
# shellcheck source=scripts/lib/debian-packages.sh
source scripts/lib/debian-packages.sh
install_missing_debian_packages "${apt_packages[@]}"

# --- 3. npm packages ----------------------------------------------------------------------
npm_packages() {
  local npm_hash npm_stamp=node_modules/.canrun-lock.sha256
  npm_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [[ -f $npm_stamp && "$(cat $npm_stamp)" == "$npm_hash" ]]; then
    say "npm packages: up to date"
  else
    say "npm packages: npm ci"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    echo "$npm_hash" > "$npm_stamp"
  fi
}

# --- 5. Second stacks ---------------------------------------------------------------------
# Each stacks/<name>.lock is a stack of its own (another transformers), in its own virtualenv:
# the tests check the fixtures load under every one, the demo campaigns on each.
second_stacks() {
  local lock name env hash
  for lock in stacks/*.lock; do
    name=$(basename "$lock" .lock)
    env=.cache/stacks/$name
    hash=$(sha256sum "$lock" | cut -d' ' -f1)
    if [[ -x $env/bin/python && -f $env/.canrun-lock.sha256 && "$(cat "$env/.canrun-lock.sha256")" == "$hash" ]]; then
      say "stack $name: up to date"
    else
      say "stack $name: installing $lock into $env"
      [[ -x $env/bin/python ]] || python3 -m venv "$env"
      "$env/bin/python" -m pip install -q --disable-pip-version-check -r "$lock" 2>&1 |
        { grep -v "^WARNING: Location 'file://" || true; } >&2
      echo "$hash" > "$env/.canrun-lock.sha256"
    fi
  done
}

# Steps 3 and 5 need nothing of step 2: they run beside it (on a fresh machine, installing the
# virtualenvs is most of the set-up's time).
npm_packages & npm_job=$!
second_stacks & stacks_job=$!
# A failure of step 2 or 4 ends the set-up: it takes these two with it.
trap 'kill "$npm_job" "$stacks_job" 2>/dev/null || true' EXIT

# --- 2. Python virtualenv -----------------------------------------------------------------
lock_hash=$(cat requirements.lock requirements-nodeps.txt | sha256sum | cut -d' ' -f1)
stamp=.venv/.canrun-lock.sha256
if [[ -x .venv/bin/python && -f $stamp && "$(cat $stamp)" == "$lock_hash" ]]; then
  say "Python venv: up to date"
else
  say "Python venv: installing requirements.lock into .venv"
  [[ -x .venv/bin/python ]] || python3 -m venv .venv
  # pip's own warnings about absent local index folders are noise; errors still show.
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.lock 2>&1 |
    { grep -v "^WARNING: Location 'file://" || true; } >&2
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -r requirements-nodeps.txt 2>&1 |
    { grep -v "^WARNING: Location 'file://" || true; } >&2
  echo "$lock_hash" > "$stamp"
fi

# --- 4. Wheels for "packages on top" ------------------------------------------------------
# The campaign test has canrun learn a package the stack lacks; it installs from this folder
# only (PIP_NO_INDEX), never from the network.
test_wheels=(tiktoken==0.14.0 sentencepiece==0.2.1 protobuf==6.31.1)
mkdir -p .cache/wheels
for pin in "${test_wheels[@]}"; do
  if ! ls .cache/wheels/"${pin%%==*}-${pin##*==}-"*.whl >/dev/null 2>&1; then
    say "test wheels: downloading $pin"
    .venv/bin/python -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      -d .cache/wheels "$pin" 2>&1 | { grep -v "^WARNING: Location 'file://" || true; } >&2
  fi
done

wait "$npm_job" || { say "npm packages: failed"; exit 1; }
wait "$stacks_job" || { say "second stacks: failed"; exit 1; }
