"""docs/ops.md is what docs/make_ops_page.py writes from the op registry today (so a new or changed op
cannot leave the page behind), and the page lists every op of the table."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

from graph_lab.ops import REGISTRY

REPO = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("make_ops_page", REPO / "docs" / "make_ops_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ops_page_is_current():
    written = (REPO / "docs" / "ops.md").read_text(encoding="utf-8")
    assert written == _generator().render(), (
        "docs/ops.md is stale: run `PYTHONPATH=. python3 docs/make_ops_page.py` and commit the page")


def test_ops_page_has_one_row_per_op():
    rows = [line for line in (REPO / "docs" / "ops.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| `")]
    names = [row.split("`")[1] for row in rows]
    assert sorted(names) == sorted(op.value for op in REGISTRY)
    softmax = next(row for row in rows if row.startswith("| `softmax` |"))
    assert "exp(x - max)" in softmax and "`F.softmax`" in softmax


def test_a_changed_doc_makes_the_page_stale(monkeypatch):
    generator = _generator()
    before = generator.render()
    op = next(iter(REGISTRY))
    monkeypatch.setitem(REGISTRY, op, dataclasses.replace(REGISTRY[op], doc="something else"))
    assert generator.render() != before
