"""The modules of the graph_lab package, found on disk (never imported), for the tests that hold the package's
structure: its layering (test_layering.py) and its line budgets (test_budgets.py)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "graph_lab"


def package_modules() -> dict[str, Path]:
    """Dotted name -> file of every module: ``graph_lab.ir.graph`` for ``ir/graph.py``, and a package by its
    own name (``graph_lab.ops`` for ``ops/__init__.py``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found
