"""Shared by the lecture tests: run one lecture-12 script from a temporary copy of ``lectures/`` and split what
it printed into its demos, so each test can check a claim against the rest of the output."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.lectures.test_seed_lecture import split_demos

REPO = Path(__file__).resolve().parents[2]


def run_lecture(tmp: Path, script: str) -> dict[int, list[str]]:
    """Run ``lectures/lecture12/<script>`` (stdout not a terminal: plain text) and return demo -> lines."""
    shutil.copytree(REPO / "lectures", tmp / "lectures", ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONIOENCODING="utf-8")
    result = subprocess.run([sys.executable, script], cwd=tmp / "lectures" / "lecture12", env=env,
                            capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr
    return split_demos(result.stdout)


def find_text(lines: list[str], pattern: str) -> re.Match:
    """Search a section with its wrapped lines joined (observations are wrapped at display width)."""
    m = re.search(pattern, "".join(line.strip() for line in lines))
    assert m, f"no match for {pattern!r}"
    return m
