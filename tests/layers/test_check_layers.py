"""The layering check catches what it is for: an include or a link that goes up a layer."""
import shutil
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]
CHECK = SOURCE / "tests" / "layers" / "check_layers.py"


def tree(tmp_path):
    shutil.copy(SOURCE / "README.md", tmp_path / "README.md")
    shutil.copytree(SOURCE / "src", tmp_path / "src")
    return tmp_path


def check(root):
    return subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True)


def test_the_tree_as_it_is_passes():
    result = check(SOURCE)
    assert result.returncode == 0, result.stdout


def test_an_upward_include_fails_and_names_it(tmp_path):
    root = tree(tmp_path)
    cache = root / "src" / "hub" / "hf_cache.cc"
    cache.write_text('#include "trial/trial.h"\n' + cache.read_text())
    result = check(root)
    assert result.returncode == 1
    assert "src/hub/hf_cache.cc includes trial/: trial is above hub" in result.stdout


def test_an_upward_link_fails(tmp_path):
    root = tree(tmp_path)
    cmake = root / "src" / "dataset" / "CMakeLists.txt"
    cmake.write_text(cmake.read_text() + "\ntarget_link_libraries(canrun_dataset PUBLIC canrun_serve)\n")
    result = check(root)
    assert result.returncode == 1
    assert "links canrun_dataset to canrun_serve: serve is above dataset" in result.stdout


def test_a_folder_outside_the_order_fails(tmp_path):
    root = tree(tmp_path)
    (root / "src" / "misc").mkdir()
    result = check(root)
    assert result.returncode == 1
    assert "src/misc/ is not in the layer order" in result.stdout
