"""Structural equivalence: the same nodes and the same edges, whatever the order the nodes were recorded in.

``canonical_form(g)`` numbers the nodes the same way for any two isomorphic graphs: inputs first, in signature
order, then every node reached from the outputs (in output order) by a depth-first walk over its operands (in
operand order), numbered when all its operands are. The text lists each node by its op, attributes, operand
numbers and output types, so two graphs are isomorphic exactly when their canonical forms are equal.

What counts: ops, attributes (constant values by their bits), types, operand order, output order, inputs by
position. What does not: the order of independent nodes, value numbers, names of inputs and parameters,
parameter values, source lines, and nodes no output depends on. ``x + y`` and ``y + x`` differ (operand order
is part of an edge).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ..ir.graph import Graph, Node
from ..ops import Op

_NAMED_ATTRS = {Op.INPUT: ("name", "type"), Op.PARAM: ("name", "type")}


def canonical_form(graph: Graph) -> str:
    """The graph as text that isomorphic graphs share, one node per line."""
    number: dict[int, int] = {}
    lines: list[str] = []

    def emit(node: Node) -> None:
        number[id(node)] = len(lines)
        operands = ", ".join(f"v{number[id(v.node)]}.{v.index}" for v in node.inputs)
        types = ", ".join(str(v.type) for v in node.outputs)
        skip = _NAMED_ATTRS.get(node.op, ())
        attrs = " ".join(f"{k}={_canon(v)}" for k, v in sorted(node.attrs.items()) if k not in skip)
        lines.append(f"v{len(lines)} = {node.op}({operands}){' ' + attrs if attrs else ''} : {types}")

    for node in graph.input_nodes:
        emit(node)
    for out in graph.outputs:
        stack = [(out.node, False)]
        while stack:
            node, ready = stack.pop()
            if id(node) in number:
                continue
            if ready:
                emit(node)
                continue
            stack.append((node, True))
            stack.extend((v.node, False) for v in reversed(node.inputs) if id(v.node) not in number)
    lines.append("return " + ", ".join(f"v{number[id(v.node)]}.{v.index}" for v in graph.outputs))
    return "\n".join(lines)


def structural_hash(graph: Graph) -> str:
    """A short hash of ``canonical_form(graph)``: equal for isomorphic graphs (16 hex digits)."""
    return hashlib.sha256(canonical_form(graph).encode()).hexdigest()[:16]


def isomorphic(g1: Graph, g2: Graph) -> bool:
    """True when the two graphs have the same nodes and edges (see the module docstring for what counts)."""
    return canonical_form(g1) == canonical_form(g2)


def _canon(value: Any) -> str:
    """Attribute values as text that is equal exactly when the values are (floats and arrays by their bits)."""
    if isinstance(value, (np.ndarray, np.generic)):
        a = np.asarray(value)
        digest = hashlib.sha256(a.tobytes()).hexdigest()[:16]
        return f"array({a.dtype.str}, {a.shape}, {digest})"
    if isinstance(value, float):
        return value.hex()
    if value is Ellipsis:
        return "..."
    if isinstance(value, (tuple, list)):
        tag = type(value).__name__ if hasattr(value, "_fields") else ""
        return f"{tag}(" + ", ".join(_canon(v) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_canon(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, (bool, int, str, type(None), complex)):
        return repr(value)
    return str(value)
