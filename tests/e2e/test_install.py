"""`pip install .` (not editable) into a fresh virtual environment gives a working package: it imports from
another folder, reports its version from the metadata, ships py.typed and the licence, and declares the
metadata pyproject.toml promises."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
# pip could not reach a package index for the build backend (setuptools): not a failure of the project.
_OFFLINE = ("NewConnectionError", "Failed to establish a new connection", "Temporary failure in name resolution",
            "No matching distribution found for setuptools", "Could not find a version that satisfies the requirement setuptools")

REPORT = """
import json, pathlib, sys
import graph_lab
from importlib.metadata import metadata
meta = metadata("graph-lab")
package = pathlib.Path(graph_lab.__file__).parent
print(json.dumps({
    "version": graph_lab.__version__,
    "file": graph_lab.__file__,
    "py_typed": (package / "py.typed").is_file(),
    "license": meta.get("License-Expression") or meta.get("License"),
    "requires_python": meta.get("Requires-Python"),
    "classifiers": meta.get_all("Classifier"),
    "requires": meta.get_all("Requires-Dist"),
    "urls": meta.get_all("Project-URL"),
    "graph": str(graph_lab.trace(lambda x: x * 2.0, {"x": (2,)})).splitlines()[1].split("#")[0].strip(),
}))
"""


def _copy_project(dest: Path) -> None:
    """What `pip install .` needs, copied, so the build writes nothing into the checkout."""
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, dest / name)
    shutil.copytree(REPO / "graph_lab", dest / "graph_lab", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("install")
    source, venv, elsewhere = root / "src", root / "venv", root / "elsewhere"
    source.mkdir()
    elsewhere.mkdir()
    _copy_project(source)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    # numpy comes from this interpreter (no download of a 20 MB wheel in a test): a path file points the fresh
    # environment at a folder holding only numpy, so nothing else of this environment (graph_lab included)
    # can leak in.
    numpy_only = root / "numpy_only"
    numpy_only.mkdir()
    numpy_dir = Path(np.__file__).parent
    for sibling in numpy_dir.parent.iterdir():
        if sibling.name == "numpy" or sibling.name.startswith(("numpy.libs", "numpy-")):
            (numpy_only / sibling.name).symlink_to(sibling, target_is_directory=sibling.is_dir())
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "numpy_from_test.pth").write_text(str(numpy_only) + "\n")

    done = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "-q",
                           str(source)], capture_output=True, text=True, timeout=600, cwd=elsewhere)
    if done.returncode != 0 and any(sign in done.stderr for sign in _OFFLINE):
        pytest.skip(f"pip could not reach a package index to fetch the build backend:\n{done.stderr[-500:]}")
    assert done.returncode == 0, f"pip install . failed:\n{done.stdout}\n{done.stderr}"
    shutil.rmtree(source)  # the installed copy must not need its source

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    run = subprocess.run([str(python), "-c", REPORT], capture_output=True, text=True, timeout=120, cwd=elsewhere,
                         env=env)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    report["venv"] = str(venv)
    report["python"] = str(python)
    report["elsewhere"] = str(elsewhere)
    report["env"] = env
    return report


def test_the_installed_copy_is_imported_and_works(installed):
    assert installed["file"].startswith(installed["venv"]), installed["file"]
    assert installed["graph"] == '%0: f64[2] = input "x"'


def test_version_and_metadata(installed):
    assert installed["version"] == PROJECT["version"]
    assert installed["license"] == "MIT"
    assert sorted(installed["requires_python"].split(",")) == sorted(PROJECT["requires-python"].split(","))
    for version in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in installed["classifiers"]
    assert any(r.startswith("numpy") for r in installed["requires"])
    assert any(url.startswith("Homepage, https://") for url in installed["urls"])


def test_py_typed_and_license_are_installed(installed):
    assert installed["py_typed"]
    dist_info = list(Path(installed["venv"]).glob("lib*/python*/site-packages/graph_lab-*.dist-info")) + \
        list(Path(installed["venv"]).glob("Lib/site-packages/graph_lab-*.dist-info"))
    assert dist_info, "no dist-info folder for graph_lab"
    assert any(p.name == "LICENSE" for p in dist_info[0].rglob("LICENSE")), "LICENSE not in the dist-info"


def test_python_m_graph_lab_help_when_the_cli_exists(installed):
    if not (REPO / "graph_lab" / "__main__.py").exists():
        pytest.skip("graph_lab/__main__.py (the command line) is not on this branch yet")
    done = subprocess.run([installed["python"], "-m", "graph_lab", "--help"], capture_output=True, text=True,
                          timeout=120, cwd=installed["elsewhere"], env=installed["env"])
    assert done.returncode == 0, done.stderr
    assert "usage" in done.stdout.lower()
