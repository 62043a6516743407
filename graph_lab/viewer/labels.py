"""What a drawn node says and how it looks: its label, its tooltip, its kind and colours.

Shared by the HTML viewer and the DOT writer, so both draw a graph the same way. Everything here returns plain
text; escaping it for HTML or DOT is the writer's job.
"""

from __future__ import annotations

import numpy as np

from ..ir.printer import format_attrs, value_name
from ..ir.types import TensorType
from ..ops import Op, opdef
from ..ops.source_ops import format_const

MAX_LABEL = 22
MAX_TOOLTIP_LINE = 160

# (fill, stroke) of each op family. Light fills keep black text readable; strokes tell families apart.
FAMILY_COLOURS = {
    "source": ("#f3f4f6", "#4b5563"),
    "unary": ("#fef3c7", "#b45309"),
    "binary": ("#dbeafe", "#1d4ed8"),
    "reduce": ("#ede9fe", "#6d28d9"),
    "linalg": ("#fee2e2", "#b91c1c"),
    "shape": ("#dcfce7", "#15803d"),
    "index": ("#fce7f3", "#be185d"),
    "nn": ("#ccfbf1", "#0f766e"),
    "control": ("#fff7ed", "#c2410c"),
}

# Values that enter the graph are drawn apart from operations: (fill, stroke, text colour).
KIND_COLOURS = {
    "input": ("#1e3a8a", "#1e3a8a", "#ffffff"),
    "param": ("#ffffff", "#1e3a8a", "#1e3a8a"),
    "const": ("#f9fafb", "#9ca3af", "#374151"),
    "return": ("#111827", "#111827", "#ffffff"),
}


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def node_kind(node) -> str:
    """'input', 'param' or 'const' for values entering the graph, else 'op'."""
    if node.op == Op.INPUT:
        return "input"
    if node.op == Op.PARAM:
        return "param"
    if node.op == Op.CONST:
        return "const"
    return "op"


def node_family(node) -> str:
    return opdef(node.op).family


def node_colours(node) -> tuple[str, str, str]:
    """(fill, stroke, text colour)."""
    kind = node_kind(node)
    if kind != "op":
        return KIND_COLOURS[kind]
    fill, stroke = FAMILY_COLOURS.get(node_family(node), FAMILY_COLOURS["source"])
    return fill, stroke, "#111827"


def node_number(node, numbering) -> str:
    """``%3``, or ``%3..%5`` for an op with several outputs."""
    names = [value_name(v, numbering) for v in node.outputs]
    return names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}"


def node_label(node) -> str:
    """The short text inside the box: the input or parameter name, the constant, or the op. A control-flow node
    is one box that counts its regions' operations: ``cond {3 | 2}``."""
    kind = node_kind(node)
    if kind in ("input", "param"):
        return shorten(node.attrs["name"], MAX_LABEL)
    if kind == "const":
        return const_label(node.attrs["value"])
    if node.regions:
        return f"{node.op} {{{' | '.join(str(r.count()) for r in node.regions)}}}"
    return str(node.op)


def const_label(value) -> str:
    """A constant in a few characters: ``0.5``, ``0.797885`` (6 significant digits), ``f64[3,3] array``.

    The exact value is in the tooltip and in the printed IR.
    """
    if isinstance(value, np.ndarray) and value.size > 1:
        return f"{TensorType.of(value)} array"
    if isinstance(value, (float, np.floating)):
        text = repr(float(value))
        if len(text) > 10:
            text = f"{float(value):.6g}"
        return text if any(c in text for c in ".enia") else text + ".0"  # keep 2.0 from looking like 2
    return shorten(format_const(value), MAX_LABEL)


def node_tooltip(node, numbering) -> str:
    """Several lines: the node as the printed IR shows it, its type(s), family, and the user's source line."""
    line = ", ".join(value_name(v, numbering) for v in node.outputs) + f" = {node.op}"
    operands = ", ".join(value_name(v, numbering) for v in node.inputs)
    attrs = format_attrs(node)
    lines = [line + (f" {operands}" if operands else "") + (f" {attrs}" if attrs else ""),
             "type: " + ", ".join(str(v.type) for v in node.outputs),
             f"family: {node_family(node)}" if node_kind(node) == "op" else f"kind: {node_kind(node)}"]
    for key in opdef(node.op).regions:
        region = node.attrs[key]
        lines.append(f"region {key}: " + ", ".join(str(n.op) for n in region.nodes if n.op != Op.INPUT) +
                     f" -> {', '.join(str(v.type) for v in region.outputs)}")
    if node.loc is not None:
        lines.append(f"source: {node.loc.describe()}")
        lines.append(f"file: {node.loc.filename}")
    return "\n".join(shorten(line, MAX_TOOLTIP_LINE) for line in lines)


def readers(graph) -> list[tuple[object, list[int]]]:
    """Each value that something reads, with the positions of its readers in ``graph.nodes``, each once
    (``x * x`` reads x twice, drawn as one edge). Position ``len(graph.nodes)`` stands for the graph's return."""
    read_by: dict = {}
    for position, node in enumerate(graph.nodes):
        for v in dict.fromkeys(node.inputs):
            read_by.setdefault(v, []).append(position)
    for v in dict.fromkeys(graph.outputs):
        read_by.setdefault(v, []).append(len(graph.nodes))
    return [(v, read_by[v]) for node in graph.nodes for v in node.outputs if v in read_by]
