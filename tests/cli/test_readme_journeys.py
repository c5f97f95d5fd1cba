"""The README's user journeys, run as written on the demo's data.

README.md's section "The user journeys on the demo's data" shows its commands in ```console
blocks: a `$` line is a command, the lines under it are key lines of what it prints, and
`[exit N]` its exit status when not 0. Each command runs here as a user would run it from the
repository root after `make demo`, in a folder laid out like one: `build/canrun` is the binary
under test, `out/demo` the suite's demo output (demo_run), `.venv`, `.cache` and `demo/` the
repository's. The `export` lines run before every command. A command whose exit status or key
lines drift from the README fails, naming the command.
"""
import os
import re
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("CANRUN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SECTION = "### The user journeys on the demo's data"


def blocks_of(readme: str):
    """The console blocks of the journeys section: lists of (command, key lines, exit status)."""
    start = readme.index(SECTION)
    end = readme.find("\n### ", start + len(SECTION))
    section = readme[start:end if end != -1 else None]
    commands = []
    for block in re.findall(r"```console\n(.*?)```", section, flags=re.S):
        for line in (line.strip() for line in block.splitlines()):
            if line.startswith("$ "):
                commands.append({"command": line[2:], "lines": [], "exit": 0})
            elif m := re.fullmatch(r"\[exit (\d+)\]", line):
                commands[-1]["exit"] = int(m.group(1))
            elif line:
                commands[-1]["lines"].append(line)
    return commands


JOURNEYS = blocks_of((SOURCE / "README.md").read_text())


def test_the_section_has_its_commands():
    assert len([c for c in JOURNEYS if not c["command"].startswith("export ")]) >= 8, JOURNEYS


@pytest.fixture(scope="module")
def repository_after_make_demo(tmp_path_factory):
    """A folder laid out as the repository root after `make demo`, on the suite's demo."""
    root = tmp_path_factory.mktemp("repository")
    (root / "build").mkdir()
    (root / "build" / "canrun").symlink_to(os.environ["CANRUN_BIN"])
    (root / "out").mkdir()
    (root / "out" / "demo").symlink_to(os.environ["CANRUN_DEMO_OUT"])
    for name in (".venv", ".cache", "demo"):
        (root / name).symlink_to(SOURCE / name)
    return root


def squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("journey", [c for c in JOURNEYS if not c["command"].startswith("export ")],
                         ids=lambda c: c["command"][:60])
def test_the_command_does_what_the_readme_says(journey, repository_after_make_demo):
    exports = "; ".join(c["command"] for c in JOURNEYS if c["command"].startswith("export "))
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("HF_", "CANRUN_CACHE"))}
    env["NO_COLOR"] = "1"
    ran = subprocess.run(["bash", "-c", f"{exports}; {journey['command']}"],
                         cwd=repository_after_make_demo, env=env, capture_output=True, text=True,
                         timeout=600)
    said = ran.stdout + ran.stderr
    assert ran.returncode == journey["exit"], (journey["command"], ran.returncode, said[-3000:])
    for line in journey["lines"]:
        assert squeezed(line) in squeezed(said), (journey["command"], line, said[-3000:])


def subcommands(canrun_bin, *path):
    """PATH and the commands below it that `canrun PATH --help` lists, as paths."""
    shown = subprocess.run([str(canrun_bin), *path, "--help"], capture_output=True, text=True,
                           timeout=60).stdout
    if "Subcommands:" not in shown:
        return [path]
    names = re.findall(r"^  ([a-z][a-z-]*)\s", shown.split("Subcommands:", 1)[1], flags=re.M)
    return [path] + [below for name in names for below in subcommands(canrun_bin, *path, name)]


def test_every_option_the_help_lists_is_in_the_readme(canrun_bin):
    """README's option lists keep up with --help: each option of each command is named there."""
    readme = (SOURCE / "README.md").read_text()
    missing = []
    for path in subcommands(canrun_bin):
        shown = subprocess.run([str(canrun_bin), *path, "--help"], capture_output=True,
                               text=True, timeout=60).stdout
        for option in sorted(set(re.findall(r"^\s+(?:-\w,)?(--[a-z0-9-]+)", shown, flags=re.M))):
            if option != "--help" and not re.search(re.escape(option) + r"\b", readme):
                missing.append(f"canrun {' '.join(path)} {option}")
    assert len(subcommands(canrun_bin)) >= 20
    assert not missing, missing
