"""A graph as Graphviz DOT text: ``g.to_dot()``, then ``dot -Tsvg graph.dot > graph.svg`` if you have Graphviz.

Node ids are generated (``n0, n1, ...``); every piece of user text (names, constants, source lines, the graph's
name) goes into a double-quoted DOT string through :func:`dot_string`, so no name can end a string early or
add statements of its own.
"""

from __future__ import annotations

from .labels import KIND_COLOURS, node_colours, node_kind, node_label, node_number, node_tooltip, readers

# Graphviz shapes for the values that enter the graph; operations are rounded boxes.
KIND_SHAPES = {"input": "invhouse", "param": "box", "const": "note", "return": "house"}


def dot_string(text: str) -> str:
    """``text`` as a double-quoted DOT string: quotes and backslashes escaped, line breaks as ``\\n``.

    In DOT labels a backslash starts an escape (``\\n``, ``\\l``, ``\\N``...), so a user's backslash is
    doubled to stay a backslash. Other control characters are written out as ``\\xNN`` text.
    """
    out = ['"']
    for ch in text.replace("\r\n", "\n"):
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\n\r":
            out.append("\\n")
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(f"\\\\x{ord(ch):02x}")
    out.append('"')
    return "".join(out)


def _attributes(pairs: dict[str, str]) -> str:
    return "[" + ", ".join(f"{key}={dot_string(value)}" for key, value in pairs.items()) + "]"


def to_dot(graph) -> str:
    """The graph in Graphviz DOT: nodes coloured by op family, edges labelled with their types."""
    numbering = graph.numbering()
    lines = [f"digraph {dot_string(graph.name)} {{",
             '  graph [rankdir="TB", fontname="monospace", labelloc="t", label=' + dot_string(graph.name) + "];",
             '  node [fontname="monospace", fontsize="11", style="rounded,filled", shape="box"];',
             '  edge [fontname="monospace", fontsize="9"];']
    for i, node in enumerate(graph.nodes):
        fill, stroke, text = node_colours(node)
        attrs = {"label": f"{node_number(node, numbering)} {node_label(node)}", "fillcolor": fill,
                 "color": stroke, "fontcolor": text, "tooltip": node_tooltip(node, numbering)}
        kind = node_kind(node)
        if kind != "op":
            attrs["shape"] = KIND_SHAPES[kind]
            attrs["style"] = "filled"
        lines.append(f"  n{i} {_attributes(attrs)};")
    fill, stroke, text = KIND_COLOURS["return"]
    lines.append(f"  n{len(graph.nodes)} "
                 + _attributes({"label": "return", "shape": KIND_SHAPES["return"], "style": "filled",
                                "fillcolor": fill, "color": stroke, "fontcolor": text}) + ";")
    position = {id(node): i for i, node in enumerate(graph.nodes)}
    for value, users in readers(graph):
        source = position[id(value.node)]
        for user in users:
            lines.append(f"  n{source} -> n{user} {_attributes({'label': str(value.type)})};")
    lines.append("}")
    return "\n".join(lines) + "\n"

