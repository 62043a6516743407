"""``Graph.print_tabular()``: a graph as a table, one row per node, as torch.fx prints one.

The SSA text (``print(g)``) is the exact form that parses back; the table is for reading: every field in its own
column, long constants shortened, and columns aligned by display width so Chinese names line up.
"""

from __future__ import annotations

from ..console import display_width, print_table
from .printer import format_attrs, value_name

HEADERS = ("name", "op", "inputs", "attributes", "type", "source")
MAX_CELL_WIDTH = 48  # a 1000-element constant would otherwise make one column a screen wide


def tabular_rows(graph) -> list[list[str]]:
    """The table's rows: one per node, then a ``return`` row naming the graph's outputs."""
    numbering = graph.numbering()
    rows = []
    for node in graph.nodes:
        rows.append([
            ", ".join(value_name(v, numbering) for v in node.outputs),
            str(node.op),
            ", ".join(value_name(v, numbering) for v in node.inputs),
            _cell(format_attrs(node)),
            ", ".join(str(v.type) for v in node.outputs),
            _cell(str(node.loc)) if node.loc is not None else "",
        ])
    rows.append(["", "return", ", ".join(value_name(v, numbering) for v in graph.outputs), "",
                 ", ".join(str(v.type) for v in graph.outputs), ""])
    return rows


def print_tabular(graph) -> None:
    print_table(HEADERS, tabular_rows(graph))


def _cell(text: str) -> str:
    """One line of printable text at most ``MAX_CELL_WIDTH`` columns wide.

    Names and file names come from the user: a newline or a control character in one must not break the
    table's rows, so such characters are shown escaped; and ``**`` must not become bold (``print_table`` reads
    ``**x**`` as markup), so a zero-width space is put between the two stars."""
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text).replace("**", "*\u200b*")
    if display_width(text) <= MAX_CELL_WIDTH:
        return text
    out, width = [], 0
    for ch in text:
        width += display_width(ch)
        if width > MAX_CELL_WIDTH - 1:
            break
        out.append(ch)
    return "".join(out) + "…"
