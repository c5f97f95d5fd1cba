# shellcheck shell=bash
# Sourced by scripts/setup.sh and scripts/space-build.sh (not run on its own).
# install_missing_debian_packages PKG...: apt-get installs those of PKG not installed yet, as
# root or through sudo; does nothing, apt-get update included, when all are present. The caller
# defines say() for its messages.

install_missing_debian_packages() {
  local pkg status
  local missing=()
  for pkg in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] && continue
    # python3, node and npm may come from outside Debian (pyenv, nodesource, the python
    # image): a working command on PATH is as good as the package.
    case "$pkg" in
      python3) python3 -c 'import venv' 2>/dev/null && continue ;;
      python3-venv) python3 -c 'import ensurepip' 2>/dev/null && continue ;;
      nodejs) command -v node >/dev/null && continue ;;
      npm) command -v npm >/dev/null && continue ;;
    esac
    missing+=("$pkg")
  done
  if ((${#missing[@]} == 0)); then
    say "Debian packages: all present"
    return 0
  fi
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    sudo=$(command -v sudo || true)
    [[ -n "$sudo" ]] || { say "missing Debian packages and not root: ${missing[*]}"; return 1; }
  fi
  say "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}
