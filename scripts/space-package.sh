#!/usr/bin/env bash
# Writes the tree of canrun's Hugging Face Space repository into DIR: space/Dockerfile as
# Dockerfile, space/README.md (the Space's card) as README.md, and the files the Dockerfile
# copies, from this checkout (committed or not, as git sees them; ignored files left out).
# Upload it with: hf upload --repo-type space OWNER/NAME DIR . --delete '*'
#
#   scripts/space-package.sh DIR     (DIR: absent or empty)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'space-package: %s\n' "$*" >&2; }

if [[ $# -ne 1 || -z "$1" ]]; then
  say "usage: scripts/space-package.sh DIR"
  exit 2
fi
out=$1
if [[ -e "$out" && -n "$(ls -A "$out")" ]]; then
  say "$out is not empty: give an absent or empty folder"
  exit 1
fi
mkdir -p "$out"

# The build context paths: the sources of the Dockerfile's COPY lines, those from another stage
# (--from=) aside.
mapfile -t sources < <(awk '$1 == "COPY" && $2 !~ /^--/ { for (i = 2; i < NF; i++) print $i }' \
  space/Dockerfile)
((${#sources[@]})) || { say "space/Dockerfile copies nothing from the build context"; exit 1; }
for source in "${sources[@]}"; do
  [[ -e "$source" ]] || { say "space/Dockerfile copies $source, which this checkout lacks"; exit 1; }
done

# Files as git sees them, tracked or new, so that build outputs and caches stay out; mtimes kept.
count=0
while IFS= read -r -d '' file; do
  [[ -f "$file" ]] || continue  # tracked but deleted in this checkout
  cp -p --parents "$file" "$out/"
  count=$((count + 1))
done < <(git ls-files -z --cached --others --exclude-standard -- "${sources[@]}")
cp -p space/Dockerfile "$out/Dockerfile"
cp -p space/README.md "$out/README.md"
say "$count files and Dockerfile, README.md in $out"
