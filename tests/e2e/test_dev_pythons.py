"""dev.py's choice of interpreters and venvs (``--python``, ``--all-pythons``) and its summary of a pytest run.

The interpreters here are small shell scripts that print a version, put where pyenv keeps its versions and on
PATH, so the rules are tested without the real interpreters: the newest patch release first, a pyenv shim that
does not run skipped, an interpreter of another version skipped, a missing version reported.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import dev  # noqa: E402

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the fake interpreters are POSIX shell scripts")


def fake_python(path: Path, prints: str | None) -> Path:
    """A script that answers dev.py's version probe with ``prints`` (None: exits 127, as a pyenv shim of a
    version that is not selected does)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = f"echo {prints}" if prints else "echo 'pyenv: python3.12: command not found' >&2; exit 127"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """An empty pyenv root and a PATH holding only a bin folder, both in tmp_path; dev.py itself is taken to run
    under a Python 3.99 (so that the interpreter running the tests is not found as one of the versions asked)."""
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(dev, "running_interpreter", lambda: dev.Interpreter(Path(sys.executable), "3.99.0"))
    return tmp_path


def test_the_running_python_comes_first_for_its_own_version(machine, monkeypatch):
    fake_python(machine / "pyenv" / "versions" / "3.12.9" / "bin" / "python3.12", "3.12.9")
    running = fake_python(machine / "venv" / "bin" / "python", "3.12.1")
    monkeypatch.setattr(dev, "running_interpreter", lambda: dev.Interpreter(running, "3.12.1"))
    assert dev.find_python("3.12") == dev.Interpreter(running, "3.12.1")


def test_the_newest_pyenv_release_of_the_version_is_chosen(machine):
    for release in ("3.12.1", "3.12.10", "3.12.9"):
        fake_python(machine / "pyenv" / "versions" / release / "bin" / "python3.12", release)
    fake_python(machine / "pyenv" / "versions" / "3.12.11t" / "bin" / "python3.12", "3.12.11")  # free-threaded
    found = dev.find_python("3.12")
    assert found.version == "3.12.10" and found.minor == "3.12"
    assert found.executable == machine / "pyenv" / "versions" / "3.12.10" / "bin" / "python3.12"


def test_an_interpreter_that_does_not_run_or_is_another_version_is_skipped(machine):
    fake_python(machine / "pyenv" / "versions" / "3.13.2" / "bin" / "python3.13", "3.12.4")  # not what it says
    fake_python(machine / "bin" / "python3.13", None)  # a shim that exits 127
    assert dev.find_python("3.13") is None
    fake_python(machine / "pyenv" / "versions" / "3.13.1" / "bin" / "python3.13", "3.13.1")
    assert dev.find_python("3.13").version == "3.13.1"


def test_python_on_path_is_the_last_resort(machine):
    fake_python(machine / "bin" / "python3.13", "3.13.5")
    assert dev.find_python("3.13").executable == machine / "bin" / "python3.13"


def test_a_path_is_taken_as_it_is(machine):
    exe = fake_python(machine / "somewhere" / "python", "3.12.7")
    assert dev.find_python(str(exe)) == dev.Interpreter(exe, "3.12.7")


def test_all_pythons_reports_the_missing_versions(machine):
    fake_python(machine / "pyenv" / "versions" / "3.12.3" / "bin" / "python3.12", "3.12.3")
    choice, rest = dev.choose_pythons(["tests/x.py", "--all-pythons=required", "-n", "2"], allow_all=True)
    assert [p.version for p in choice.interpreters] == ["3.12.3"]
    assert choice.missing == [m for m in dev.SUPPORTED if m != "3.12"]
    assert choice.required and choice.several and rest == ["tests/x.py", "-n", "2"]
    assert dev.finish_versions(choice, [], failed=False) == 1  # a missing version fails when all are required
    choice.required = False
    assert dev.finish_versions(choice, [], failed=False) == 0
    assert dev.finish_versions(choice, [], failed=True) == 1


def test_python_option_forms(machine):
    fake_python(machine / "pyenv" / "versions" / "3.13.0" / "bin" / "python3.13", "3.13.0")
    for args in (["--python", "3.13", "-k", "x"], ["-k", "x", "--python=3.13"]):
        choice, rest = dev.choose_pythons(args, allow_all=False)
        assert [p.version for p in choice.interpreters] == ["3.13.0"] and rest == ["-k", "x"]
    with pytest.raises(SystemExit, match="no working Python 3.12 found"):
        dev.choose_pythons(["--python", "3.12"], allow_all=False)
    with pytest.raises(SystemExit, match="for the test and demo tasks only"):
        dev.choose_pythons(["--all-pythons"], allow_all=False)
    fake_python(machine / "pyenv" / "versions" / "3.10.4" / "bin" / "python3.10", "3.10.4")
    with pytest.raises(SystemExit, match="needs Python 3.11 or newer"):
        dev.choose_pythons(["--python", "3.10"], allow_all=False)


def test_venv_names(tmp_path, monkeypatch):
    monkeypatch.setattr(dev, "ROOT", tmp_path)
    running = dev.running_interpreter()
    other = dev.Interpreter(Path("/x/python"), "3.99.1")
    dev.default_venv_version.cache_clear()
    try:
        assert dev.venv_folder(running) == tmp_path / ".venv"  # no .venv yet: it is the running python's
        assert dev.venv_folder(other) == tmp_path / ".venv-3.99"
        fake_python(dev.venv_python(tmp_path / ".venv"), "3.99.0")  # a .venv made by another python3 earlier
        dev.default_venv_version.cache_clear()
        assert dev.venv_folder(other) == tmp_path / ".venv"
        assert dev.venv_folder(running) == tmp_path / f".venv-{running.minor}"
    finally:
        dev.default_venv_version.cache_clear()


@pytest.mark.parametrize("line, counts", [
    ("9414 passed in 143.11s (0:02:23)", {"passed": 9414}),
    ("167 failed, 9233 passed, 14 errors in 88.57s (0:01:28)", {"failed": 167, "passed": 9233, "error": 14}),
    ("1 failed, 2 passed, 3 skipped, 1 error, 4 warnings in 0.50s", {"failed": 1, "passed": 2, "skipped": 3,
                                                                       "error": 1}),
    ("\x1b[31m\x1b[1m2 failed\x1b[0m, \x1b[32m5 passed\x1b[0m\x1b[31m in 1.02s\x1b[0m", {"failed": 2, "passed": 5}),
    ("no tests ran in 0.01s", None),
    ("........................................................................ [ 65%]", None),
])
def test_pytest_closing_line(line, counts):
    assert dev.closing_counts(line) == counts
