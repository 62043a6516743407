"""``keep_outputs_apart(before, after)``: the outputs of an optimized graph share memory only where the graph's
outputs did before the passes.

Eager code that makes two arrays (``np.zeros_like(b)`` twice, ``x.copy()`` twice) gets two arrays, and a write
into one is not seen through the other. CSE merges the two computations into one value, folding turns a result
into a constant that every call would hand back, and simplification can turn ``x.reshape(4, 1) * 1`` into a view
of the input: each is exact for the values, but not for the memory, and a caller (or ``compile()``, which writes
into arrays at a graph break) that writes into one output would change another, an input, or the next call's
result. This step runs after a pipeline and gives each such output a ``copy``.

Memory is followed conservatively: a node that may be a view (``ops.aliasing.may_be_view``) shares the memory of
all its operands. Outputs are compared by position and inputs by name, which both graphs share.
"""

from __future__ import annotations

from ..ir.editing import copy_where_made
from ..ir.graph import Graph, Value
from ..ops import Op
from ..ops.aliasing import may_be_view

_SOURCES = frozenset({Op.INPUT, Op.PARAM, Op.CONST, Op.SIZE})


def _roots(graph: Graph) -> dict[Value, frozenset]:
    """For each value of the top-level graph, the memory it may share: ("input", name), ("param", name), "const"
    or the fresh value that made it."""
    roots: dict[Value, frozenset] = {}
    for node in graph.nodes:
        if node.op in _SOURCES:
            key = "const" if node.op in (Op.CONST, Op.SIZE) else (str(node.op), node.attrs["name"])
            roots[node.outputs[0]] = frozenset([key])
        elif may_be_view(node):
            shared = frozenset().union(*(roots.get(v, frozenset()) for v in node.inputs))
            for v in node.outputs:
                roots[v] = shared
        else:
            for v in node.outputs:
                roots[v] = frozenset([v])
    return roots


def _memory_groups(graph: Graph) -> tuple[list[frozenset], list[int]]:
    """The roots of each output, and for each output the smallest position of an output it may share memory
    with (through any chain of shared roots): outputs with one group number may alias each other."""
    roots = _roots(graph)
    out_roots = [roots.get(v, frozenset()) for v in graph.outputs]
    group = list(range(len(out_roots)))

    def find(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    first_with: dict = {}
    for i, rs in enumerate(out_roots):
        for r in rs:
            j = first_with.setdefault(r, i)
            a, b = find(i), find(j)
            if a != b:
                group[max(a, b)] = min(a, b)
    return out_roots, [find(i) for i in range(len(out_roots))]


def keep_outputs_apart(before: Graph, after: Graph) -> list[str]:
    """Copy each output of ``after`` that may share memory with an input, a constant or another output where
    the same output of ``before`` could not. ``after`` is edited in place; one line per copy."""
    if len(before.outputs) != len(after.outputs):
        return []
    before_roots, before_group = _memory_groups(before)
    roots = _roots(after)
    report: list[str] = []
    taken: dict = {}  # root -> an earlier output of ``after`` that holds it
    for i, value in enumerate(after.outputs):
        if value.type.weak is not None:  # a Python number: no memory to share
            continue
        rs = roots.get(value, frozenset())
        allowed_sources = {r for r in before_roots[i] if not isinstance(r, Value)}
        new_source = any(not isinstance(r, Value) and r not in allowed_sources for r in rs)
        same_as = next((j for j in range(i) if after.outputs[j] is value), None)
        merged = same_as is not None and before.outputs[same_as] is not before.outputs[i]
        shared = next((taken[r] for r in rs if r in taken and before_group[taken[r]] != before_group[i]), None)
        if new_source or merged or shared is not None:
            copy = copy_where_made(after, value)
            after.outputs[i] = copy
            rs = frozenset([copy])
            why = "an input or a constant" if new_source else f"output {same_as if merged else shared}"
            report.append(f"output {i} copied: after the passes it would share memory with {why}")
        for r in rs:
            taken.setdefault(r, i)
    return report
