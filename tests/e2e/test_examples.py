"""The scripts in examples/ run as a user would run them, and what they print holds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tour() -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, str(REPO / "examples" / "tour.py")], cwd=REPO, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_tour_runs_and_matches_eager(tour):
    assert tour.returncode == 0, f"examples/tour.py failed:\n{tour.stderr}"
    m = re.search(r"^max difference graph vs eager: (\S+)$", tour.stdout, re.MULTILINE)
    assert m, f"the tour did not print its graph-vs-eager difference:\n{tour.stdout}"
    assert float(m.group(1)) == 0.0


def test_tour_guard_verdicts(tour):
    assert "check_guards with another large input: True" in tour.stdout
    assert "check_guards with a small input:       False" in tour.stdout
    assert "x.shape: is (5, 3), the graph was built for (2, 3)" in tour.stdout
