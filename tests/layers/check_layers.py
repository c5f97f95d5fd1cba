#!/usr/bin/env python3
"""The layering check: every folder of src/ may include and link only itself and the folders
below it in the layer order that README.md states (its line starting "Layers:"), so no include
or link goes up a layer and no cycle can form. Reads the #include lines of src/ and the
target_link_libraries of src/*/CMakeLists.txt; prints every violation and exits 1, else 0.

Usage: check_layers.py [SOURCE_DIR]   (default: the repository holding this file)
"""
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.MULTILINE)
LINK = re.compile(r"target_link_libraries\(\s*(\S+)([^)]*)\)", re.DOTALL)
LIBRARY = re.compile(r"\bcanrun_([a-z_]+)\b")


def layer_order(root):
    """The folders of src/, lowest first, from README.md's "Layers:" line."""
    for line in (root / "README.md").read_text().splitlines():
        if line.startswith("Layers:"):
            return [name.strip(" `.") for name in line[len("Layers:"):].split("→")]
    sys.exit('README.md has no line starting "Layers:" (the layer order)')


def violations(root):
    order = layer_order(root)
    rank = {name: idx for idx, name in enumerate(order)}
    src = root / "src"
    found = []
    for folder in sorted(p for p in src.iterdir() if p.is_dir()):
        if folder.name not in rank:
            found.append(f"src/{folder.name}/ is not in the layer order of README.md ({' → '.join(order)})")
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc", ".in") or not path.is_file():
            continue
        owner = path.relative_to(src).parts[0]
        if owner not in rank:
            continue
        for used in INCLUDE.findall(path.read_text(errors="replace")):
            if used in rank and rank[used] > rank[owner]:
                found.append(f"src/{path.relative_to(src)} includes {used}/: {used} is above "
                             f"{owner} in the layer order ({' → '.join(order)})")
    for cmake in sorted(src.glob("*/CMakeLists.txt")):
        owner = cmake.parent.name
        if owner not in rank:
            continue
        for target, rest in LINK.findall(cmake.read_text()):
            for used in LIBRARY.findall(rest):
                if used in rank and rank[used] > rank[owner]:
                    found.append(f"src/{owner}/CMakeLists.txt links {target} to canrun_{used}: "
                                 f"{used} is above {owner} in the layer order")
    return found


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    found = violations(root)
    for problem in found:
        print(f"layering: {problem}")
    if found:
        print(f"{len(found)} layering violation(s); the order is README.md's \"Layers:\" line")
        return 1
    print(f"layering: {len(layer_order(root))} layers, no include or link goes up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
