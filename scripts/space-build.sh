#!/usr/bin/env bash
# Builds canrun for the Space and installs what serving needs under PREFIX. The Docker image's
# build stage runs it (space/Dockerfile); so does `make space-check`.
#
#   scripts/space-build.sh PREFIX
#
# Installs:
#   PREFIX/bin/canrun                       the binary (RUNPATH $ORIGIN/../lib/canrun)
#   PREFIX/bin/canrun-space-start           scripts/space-start.sh, the image's entrypoint
#   PREFIX/bin/hf                           the Hub CLI, huggingface_hub as requirements.lock pins it
#   PREFIX/lib/canrun/libarrow.so.N ...     the Arrow C++ and Parquet libraries of the pyarrow wheel
#   PREFIX/lib/canrun/hf-venv/              the venv behind bin/hf (not relocatable: PREFIX is final)
#   PREFIX/share/canrun/catalog, backends   the shipped folders canrun serve reads by default
#   PREFIX/share/canrun/debian-runtime-packages
#                                           the Debian packages the binary's other libraries come
#                                           from, one a line, for the image's runtime stage
#
# Steps: 1. Debian build packages (only those missing), 2. a venv with pyarrow alone (pinned by
# requirements.lock; CMake takes Arrow's headers and libraries from it), 3. CMake with the tests
# off (CANRUN_BUILD_TESTS=OFF) into $CANRUN_SPACE_BUILD_DIR (default build-space), 4. the canrun
# target alone, 5. the install above. Re-running reuses the build folder and its venv.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'space-build: %s\n' "$*" >&2; }

if [[ $# -ne 1 || -z "$1" ]]; then
  say "usage: scripts/space-build.sh PREFIX"
  exit 2
fi
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
build_dir=${CANRUN_SPACE_BUILD_DIR:-build-space}
jobs=${CANRUN_JOBS:-$(nproc)}

# Pip prints a warning for each absent local index folder a pip.conf may name; errors still show.
quiet_pip() {
  "$@" 2>&1 | { grep -v "^WARNING: Location 'file://" || true; } >&2
}

# The version requirements.lock pins for a Python package: the one source of pins.
locked_version() {
  local version
  version=$(sed -n "s/^$1==//Ip" requirements.lock)
  [[ -n "$version" ]] || { say "requirements.lock pins no $1"; return 1; }
  printf '%s\n' "$version"
}

# A venv at $1 holding package $2 at version $3 (with the dependencies requirements.lock pins);
# left alone when it already has that version.
ensure_venv_with() {
  local venv=$1 package=$2 version=$3 module=$4
  if [[ "$("$venv/bin/python" -c "import $module; print($module.__version__)" 2>/dev/null)" == "$version" ]]; then
    say "$package $version: present in $venv"
    return 0
  fi
  say "$package $version: installing into $venv"
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
  quiet_pip "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    -c requirements.lock "$package==$version"
}

# --- 1. Debian packages -------------------------------------------------------------------
build_packages=(
  cmake g++ ninja-build pkg-config
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev
  libcurl4-openssl-dev libssl-dev libboost-dev zlib1g-dev
  python3 python3-venv
)
# shellcheck source=scripts/lib/debian-packages.sh
source scripts/lib/debian-packages.sh
install_missing_debian_packages "${build_packages[@]}"

# --- 2. The build venv: pyarrow alone -----------------------------------------------------
mkdir -p "$build_dir"
build_venv=$(cd "$build_dir" && pwd)/venv
ensure_venv_with "$build_venv" pyarrow "$(locked_version pyarrow)" pyarrow

# --- 3. Configure -------------------------------------------------------------------------
# The binary finds libarrow and libparquet beside it once installed, never in the build venv.
# shellcheck disable=SC2016 # $ORIGIN is for the dynamic loader, not the shell.
install_rpath='$ORIGIN/../lib/canrun'
cmake_args=(
  -S . -B "$build_dir" -G Ninja
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
  -DCANRUN_BUILD_TESTS=OFF
  "-DCANRUN_PYTHON=$build_venv/bin/python"
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON
  "-DCMAKE_INSTALL_RPATH=$install_rpath"
)
if command -v ccache >/dev/null; then
  cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths relative to the source, so a copy of the tree elsewhere still hits the cache.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
fi
say "configuring $build_dir"
cmake "${cmake_args[@]}" >/dev/null

# --- 4. Build the canrun target alone -------------------------------------------------------
say "building canrun (-j $jobs)"
cmake --build "$build_dir" --target canrun -j "$jobs"

# --- 5. Install ---------------------------------------------------------------------------
say "installing into $prefix"
install -d "$prefix/bin" "$prefix/lib/canrun" "$prefix/share/canrun"
install -m 755 "$build_dir/canrun" "$prefix/bin/canrun"
strip --strip-debug "$prefix/bin/canrun"
install -m 755 scripts/space-start.sh "$prefix/bin/canrun-space-start"
for shipped in catalog backends; do
  rm -rf "${prefix:?}/share/canrun/$shipped"
  cp -R "$shipped" "$prefix/share/canrun/$shipped"
done

# The libraries the binary needs from the pyarrow wheel go beside it; the others are Debian's.
pyarrow_lib_dir=$("$build_venv/bin/python" -c 'import pyarrow; print(pyarrow.get_library_dirs()[0])')
mapfile -t needed < <(readelf -d "$prefix/bin/canrun" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for lib in "${needed[@]}"; do
  if [[ -f "$pyarrow_lib_dir/$lib" ]]; then
    install -m 644 "$pyarrow_lib_dir/$lib" "$prefix/lib/canrun/$lib"
  fi
done

# Which Debian package each other library comes from (dpkg records some under /lib, some under
# /usr/lib: both spellings are asked). ca-certificates: canrun and hf reach the Hub over HTTPS.
resolved=$(ldd "$prefix/bin/canrun")
if grep -q "not found" <<<"$resolved"; then
  say "canrun's libraries are not all found:"
  grep "not found" <<<"$resolved" >&2
  exit 1
fi
runtime_packages=(ca-certificates)
for lib in "${needed[@]}"; do
  [[ -f "$prefix/lib/canrun/$lib" ]] && continue
  path=$(awk -v lib="$lib" '$1 == lib && $2 == "=>" { print $3 }' <<<"$resolved")
  [[ -n "$path" ]] || { say "ldd does not say where $lib is"; exit 1; }
  owner=""
  for candidate in "$path" "${path#/usr}" "/usr$path" "$(readlink -f "$path")"; do
    owner=$(dpkg-query -S "$candidate" 2>/dev/null | head -1 | cut -d: -f1) && [[ -n "$owner" ]] && break
  done
  [[ -n "$owner" ]] || { say "no Debian package holds $path ($lib)"; exit 1; }
  runtime_packages+=("$owner")
done
printf '%s\n' "${runtime_packages[@]}" | sort -u >"$prefix/share/canrun/debian-runtime-packages"

# The Hub CLI the start script downloads a dataset with.
hf_venv=$prefix/lib/canrun/hf-venv
ensure_venv_with "$hf_venv" huggingface_hub "$(locked_version huggingface_hub)" huggingface_hub
ln -sfn ../lib/canrun/hf-venv/bin/hf "$prefix/bin/hf"

say "done: $prefix/bin/canrun ($(du -sh "$prefix" | cut -f1) in $prefix)"
