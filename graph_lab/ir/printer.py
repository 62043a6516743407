"""The text form of a graph: one line per node, each value ``%N`` defined once, its type beside it.

    graph gelu_mlp {
      %0: f64[4,8] = input "x"
      %1: f64[8,16] = param "p['W1']"
      %2: f64[4,16] = matmul %0, %1                          # 01_tracing.py:36
      ...
      return %12
    }

The grammar of this text is written down in docs/ir.md; ``parser.py`` reads it back (print -> parse -> print gives
the same text). How each literal value is written (floats, NaN, strings, constants) is in ``literals.py``.
"""

from __future__ import annotations

from ..ops import opdef
from .literals import format_attr_value, format_name

LOC_COLUMN = 60  # where the "# file:line" comments start, so they line up


def value_name(v, numbering) -> str:
    n = numbering.get(v)
    return f"%{n}" if n is not None else "%?"


def format_attrs(node) -> str:
    custom = opdef(node.op).print_attrs
    if custom is not None:
        return custom(node.attrs)
    return " ".join(f"{k}={format_attr_value(v)}" for k, v in node.attrs.items())


def format_node(node, numbering) -> str:
    outs = ", ".join(f"{value_name(v, numbering)}: {v.type}" for v in node.outputs)
    ins = ", ".join(value_name(v, numbering) for v in node.inputs)
    attrs = format_attrs(node)
    text = f"{outs} = {node.op}"
    if ins:
        text += " " + ins
    if attrs:
        text += " " + attrs
    if node.loc is not None:
        text = text.ljust(LOC_COLUMN) + f"  # {node.loc}"
    return text


def graph_lines(graph, indent: str = "  ") -> list[str]:
    numbering = graph.numbering()
    lines = [f"graph {format_name(graph.name)} {{"]
    lines += [indent + format_node(n, numbering) for n in graph.nodes]
    lines.append(indent + "return " + ", ".join(value_name(v, numbering) for v in graph.outputs))
    lines.append("}")
    for i, guard in enumerate(graph.guards):
        lines += guard.lines(i)
    return lines


def print_graph(graph) -> str:
    return "\n".join(graph_lines(graph))
