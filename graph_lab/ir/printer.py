"""The text form of a graph: one line per node, each value ``%N`` defined once, its type beside it.

    graph gelu_mlp {
      %0: f64[4,8] = input "x"
      %1: f64[8,16] = param "p['W1']"
      %2: f64[4,16] = matmul %0, %1                          # 01_tracing.py:36
      ...
      return %12
    }

A control-flow node's regions follow its line, each a nested ``graph`` block named after the region, indented
one step deeper; value numbers continue through them, so each ``%N`` is still defined once in the whole text::

      %4: f64[4] = cond %3, %0                               # model.py:3
        graph then {
          %5: f64[4] = input "x"
          %6: f64[4] = tanh %5                               # model.py:4
          return %6
        }
        graph else {
          ...
        }

The grammar of this text is written down in docs/ir.md; ``parser.py`` reads it back (print -> parse -> print gives
the same text). How each literal value is written (floats, NaN, strings, constants) is in ``literals.py``.
"""

from __future__ import annotations

from ..ops import opdef
from .guard_records import ShapeGuard
from .literals import format_attr_value, format_name

LOC_COLUMN = 60  # where the "# file:line" comments start, so they line up


def value_name(v, numbering) -> str:
    n = numbering.get(v)
    return f"%{n}" if n is not None else "%?"


def format_attrs(node) -> str:
    """The attributes as printed on the node's line; regions are printed as blocks after it, not here."""
    definition = opdef(node.op)
    if definition.print_attrs is not None:
        return definition.print_attrs(node.attrs)
    return " ".join(f"{k}={format_attr_value(v)}" for k, v in node.attrs.items() if k not in definition.regions)


def format_node(node, numbering, loc_column: int = LOC_COLUMN) -> str:
    outs = ", ".join(f"{value_name(v, numbering)}: {v.type}" for v in node.outputs)
    ins = ", ".join(value_name(v, numbering) for v in node.inputs)
    attrs = format_attrs(node)
    text = f"{outs} = {node.op}"
    if ins:
        text += " " + ins
    if attrs:
        text += " " + attrs
    if node.loc is not None:
        text = text.ljust(loc_column) + f"  # {node.loc}"
    return text


def body_lines(graph, numbering, indent: str) -> list[str]:
    """The node lines and the return line of ``graph``, each region as a nested block under its node."""
    lines = []
    for node in graph.nodes:
        # the "# file:line" comments of nested lines stay in the same column as the top level's
        lines.append(indent + format_node(node, numbering, LOC_COLUMN + 2 - len(indent)))
        for key in opdef(node.op).regions:
            lines.append(f"{indent}  graph {key} {{")
            lines += body_lines(node.attrs[key], numbering, indent + "    ")
            lines.append(f"{indent}  }}")
    lines.append(indent + "return " + ", ".join(value_name(v, numbering) for v in graph.outputs))
    return lines


def graph_lines(graph, indent: str = "  ") -> list[str]:
    numbering = graph.numbering()
    lines = [f"graph {format_name(graph.name)} {{"]
    lines += body_lines(graph, numbering, indent)
    lines.append("}")
    for i, guard in enumerate(graph.guards):
        lines += guard_lines(guard, i)
    return lines


def guard_lines(guard, index: int) -> list[str]:
    """A guard after its graph: ``guard #0: shape T >= 2 at ...``; a value guard is followed by its graph."""
    if isinstance(guard, ShapeGuard):
        return [f"guard #{index}: shape {guard.describe()}"]
    return [f"guard #{index}: {guard.describe(whole=True)}"] + ["  " + line for line in graph_lines(guard.graph)]


def print_graph(graph) -> str:
    return "\n".join(graph_lines(graph))
