"""``cse(g)``: common-subexpression elimination. Two nodes with the same op, the same operands and equal
attributes compute the same value, so the later one is replaced by the earlier one.

Only pure ops are merged (``OpDef.pure``): two random draws are two different values. Constants merge when they
have the same type and the same bits (``0.0`` and ``-0.0`` stay apart; a Python ``1`` and ``1.0`` too, since
they promote differently). Exact: the graph computes the same bits afterwards. Edits ``g`` in place.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph
from ..ops import Op, opdef


def value_key(x):
    """A hashable stand-in for an attribute or constant: equal keys mean the same type and the same bits."""
    if isinstance(x, (np.ndarray, np.generic)):
        return ("array", type(x).__name__, x.dtype.str, np.shape(x), np.ascontiguousarray(x).tobytes())
    if isinstance(x, float):
        return (float, x.hex())
    if isinstance(x, complex):
        return (complex, x.real.hex(), x.imag.hex())
    if isinstance(x, dict):
        return (dict, tuple((k, value_key(v)) for k, v in x.items()))
    if isinstance(x, (tuple, list)):
        return (type(x), tuple(value_key(v) for v in x))
    return (type(x), x)


_NEVER_MERGED = frozenset({Op.INPUT, Op.PARAM})


def node_key(node) -> tuple | None:
    """What makes two nodes compute the same value; None for nodes that must never be merged."""
    if node.op in _NEVER_MERGED or not opdef(node.op).pure:
        return None
    try:
        attrs = value_key(node.attrs)
        hash(attrs)
    except TypeError:  # an attribute NumPy cannot give bytes for: leave the node alone
        return None
    return (node.op, attrs, tuple(id(v) for v in node.inputs))


def cse(graph: Graph) -> list[str]:
    """Merge each node into the first earlier node with the same key. The merges are made in one walk (each
    later node's operands renamed to the kept values before its own key is taken, the merged nodes dropped at
    the end): a graph of n nodes with many repeated constants is linear to edit, where one ``replace_all_uses_with``
    and ``erase_node`` per merge would walk the whole graph each time."""
    seen: dict[tuple, object] = {}
    report: list[str] = []
    numbering = None  # made at the first change, which is before anything changed
    kept: dict = {}  # a merged node's value -> the earlier node's value it is replaced by
    merged: set[int] = set()
    for node in graph.nodes:
        if kept and any(v in kept for v in node.inputs):
            node.inputs = tuple([kept.get(v, v) for v in node.inputs])
        key = node_key(node)
        if key is None:
            continue
        first = seen.setdefault(key, node)
        if first is node:
            continue
        if numbering is None:
            numbering = graph.numbering()
        report.append(f"{graph.node_text(node, numbering)} is {graph.node_text(first, numbering)}")
        kept.update(zip(node.outputs, first.outputs))
        merged.add(id(node))
    if merged:
        graph.outputs = [kept.get(v, v) for v in graph.outputs]
        for node in graph.nodes:
            if id(node) in merged:
                node.inputs = ()  # (drops its uses of its operands)
        graph.nodes = [n for n in graph.nodes if id(n) not in merged]
    return report

