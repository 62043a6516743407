"""The shape guards of a symbolic segment as one generated Python function of its sizes.

A segment whose sizes are symbols (a decode position, a growing sequence) keeps the facts its capture relied on
(``s0 >= 2``, ``s0 + s1 <= 64``) and checks them on every call. Evaluating each fact's expression tree for a
dict of sizes (``ShapeGuard.check``) costs microseconds; this writes them once as Python arithmetic instead,
``lambda n0, n1: n0 - 2 >= 0 and 64 - n0 - n1 >= 0``, which is what a call then runs. The text is the
expressions' own printed form (``ir/symbolic.py``: valid Python with ``//`` and ``%`` as in ``evaluate``), with
each symbol renamed to its position, so no name from the user's program reaches the source; a fact whose text
would hold anything else is checked through ``ShapeGuard.check``.
"""

from __future__ import annotations

import re

from ...ir.symbolic import Expr, free_symbols, substitute, symbol

_ARITHMETIC = re.compile(r"(n[0-9]+|[0-9+\-*/% ()])*")
"""What the text of a renamed fact may contain: positions ``n0``, integers, operators and parentheses."""


def sizes_check(expected: tuple):
    """A function of the sizes (one argument per symbol, in order) that is True when every fact of
    ``expected = (names, facts)`` (a ``sizes`` guard's) holds: ``ShapeGuard.check`` of each, written out as arithmetic."""
    names, facts = expected
    renaming = {name: symbol(f"n{i}") for i, name in enumerate(names)}
    tests = []
    for g in facts:
        rel = g.fact
        if type(rel.diff) is int:
            text = str(rel.diff)
        elif isinstance(rel.diff, Expr) and free_symbols(rel.diff) <= renaming.keys():
            text = str(substitute(rel.diff, renaming))
        else:
            return _by_dict(expected)
        if rel.op not in ("==", "!=", ">=") or not _ARITHMETIC.fullmatch(text):
            return _by_dict(expected)
        tests.append(f"({text}) {rel.op} 0")
    params = ", ".join(f"n{i}" for i in range(len(names)))
    source = f"def holds({params}):\n    return {' and '.join(tests) or 'True'}\n"
    namespace: dict = {"__builtins__": {}}
    exec(compile(source, "<graph_lab size guards>", "exec"), namespace)
    holds = namespace["holds"]
    holds.source_text = source
    return holds


def _by_dict(expected: tuple):
    names, facts = expected
    return lambda *sizes: all(g.check(dict(zip(names, sizes))) for g in facts)
