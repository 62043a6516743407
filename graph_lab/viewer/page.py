"""``graph_lab.view``: one self-contained HTML page that draws captured graphs.

The drawing is made here, in Python, as inline SVG (placed by ``layout.py``); the page loads nothing and needs
no network. Its small inline script only highlights a node's edges on hover and writes a render report
(``<div id="render-report" data-nodes=... data-errors=...>``) that the tests read back from headless Chromium.

Every piece of user text (names, constants, file names, source lines) is HTML-escaped. As a second wall, the
page's Content-Security-Policy allows no network request, and no script or style but the page's own (named by
their hashes): text that slipped through unescaped still could not run.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from ..console import display_width
from ..ir.graph import Graph
from .assets import ERROR_WATCH_JS, PAGE_CSS, PAGE_JS, content_security_policy
from .labels import (FAMILY_COLOURS, KIND_COLOURS, node_colours, node_kind, node_label, node_number,
                     node_tooltip, readers)
from .layout import Point, Wire, layered_layout

CHAR_WIDTH = 7.3        # a 12px monospace character is 0.6em = 7.2px wide; a little more for safety
TYPE_CHAR_WIDTH = 6.1   # the same at 10px, for the type labels on edges
BOX_HEIGHT = 26.0
BOX_PADDING = 10.0
TYPE_HEIGHT = 14.0


def escape(text: object) -> str:
    """Text for an HTML text node or a quoted attribute, with ``& < > " '`` escaped."""
    return html.escape(str(text), quote=True)


def graphs_of(what) -> list[Graph]:
    """The graphs to draw: a ``Graph``, a list of them, or a ``LazyRunner`` (the graphs it executed)."""
    if isinstance(what, Graph):
        return [what]
    executed = getattr(what, "executed", None)
    if executed is not None:
        if not executed:
            raise ValueError("this LazyRunner has executed no graph yet; view it after a value was needed "
                             "(bool(t), float(t), lr.materialize(t))")
        return list(executed)
    if isinstance(what, (list, tuple)) and what and all(isinstance(g, Graph) for g in what):
        return list(what)
    raise TypeError(f"view() draws a Graph, a non-empty list of Graphs or a LazyRunner, not {what!r:.80}")


# ---------------------------------------------------------------------------------------------------------
# One graph as SVG


def graph_svg(graph: Graph, gid: str) -> str:
    """The graph drawn as an ``<svg>`` element; its element ids start with ``gid``, unique in the page."""
    numbering = graph.numbering()
    position = {id(node): i for i, node in enumerate(graph.nodes)}
    ret = len(graph.nodes)  # the position of the pseudo-node "return"
    texts = [f"{node_number(node, numbering)} {node_label(node)}" for node in graph.nodes] + ["return"]
    sizes = [(display_width(t) * CHAR_WIDTH + 2 * BOX_PADDING, BOX_HEIGHT) for t in texts]
    values = readers(graph)
    wires = [Wire(position[id(v.node)], users, (_type_width(v), TYPE_HEIGHT)) for v, users in values]
    layout = layered_layout(sizes, wires)
    width, height = round(layout.width), round(layout.height)

    parts = [f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="graph {escape(graph.name)}">',
             f'<defs><marker id="{gid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
             f'markerHeight="7" orient="auto"><path d="M0,1 L9,5 L0,9 z" fill="#6b7280"/></marker></defs>',
             '<g class="edges">']
    for (value, users), routes in zip(values, layout.routes):
        for user, points in zip(users, routes):
            reader = "return" if user == ret else f"{graph.nodes[user].op} {node_number(graph.nodes[user], numbering)}"
            title = f"%{numbering[value]}: {value.type} -> {reader}"
            parts.append(f'<path class="edge" d="{_curve(points)}" marker-end="url(#{gid}-arrow)" '
                         f'data-from="{gid}n{position[id(value.node)]}" data-to="{gid}n{user}">'
                         f"<title>{escape(title)}</title></path>")
    parts.append('</g>\n<g class="types">')
    for (value, _), (x, y) in zip(values, layout.labels):
        w = _type_width(value)
        parts.append(f'<g class="type"><rect x="{x - w / 2:.1f}" y="{y - TYPE_HEIGHT / 2:.1f}" width="{w:.1f}" '
                     f'height="{TYPE_HEIGHT:.0f}" rx="3"/>'
                     f'<text x="{x:.1f}" y="{y:.1f}">{escape(value.type)}</text></g>')
    parts.append('</g>\n<g class="nodes">')
    for i, node in enumerate(graph.nodes):
        parts.append(_box(f"{gid}n{i}", node_kind(node), node_colours(node), layout.boxes[i], sizes[i],
                          node_number(node, numbering), node_label(node), node_tooltip(node, numbering)))
    outputs = ", ".join(f"%{numbering[v]}" for v in graph.outputs)
    parts.append(_box(f"{gid}n{ret}", "return", KIND_COLOURS["return"], layout.boxes[ret], sizes[ret],
                      "", "return", f"the graph's outputs: {outputs}"))
    parts.append("</g>\n</svg>")
    return "\n".join(parts)


def _type_width(value) -> float:
    return display_width(str(value.type)) * TYPE_CHAR_WIDTH + 6


def _outline(kind: str, height: float) -> str:
    """How a node's kind shows in its outline: inputs, parameters and the return are pills, constants dashed."""
    radius = height / 2 if kind in ("input", "param", "return") else min(5.0, height / 4)
    return f'rx="{radius:.0f}"' + (' stroke-dasharray="3 2"' if kind == "const" else "")


def _box(element_id: str, kind: str, colours: tuple[str, str, str], centre: Point, size: tuple[float, float],
         number: str, label: str, tooltip: str) -> str:
    """One node: its outline and ``%N label`` inside, its tooltip in a ``<title>``. IR nodes have class "node"."""
    fill, stroke, text_colour = colours
    (x, y), (w, h) = centre, size
    css_class = "graph-return" if kind == "return" else f"node {kind}"
    number_part = f'<tspan class="num">{escape(number)} </tspan>' if number else ""
    return (f'<g class="{css_class}" id="{element_id}"><title>{escape(tooltip)}</title>'
            f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w:.1f}" height="{h:.0f}" {_outline(kind, h)} '
            f'fill="{fill}" stroke="{stroke}"/>'
            f'<text x="{x:.1f}" y="{y:.1f}" fill="{text_colour}">{number_part}{escape(label)}</text></g>')


def _curve(points: list[Point]) -> str:
    """An SVG path through the points: each step a cubic curve leaving and arriving vertically."""
    (x0, y0), *rest = points
    d = [f"M{x0:.1f},{y0:.1f}"]
    for x1, y1 in rest:
        middle = (y0 + y1) / 2
        d.append(f"C{x0:.1f},{middle:.1f} {x1:.1f},{middle:.1f} {x1:.1f},{y1:.1f}")
        x0, y0 = x1, y1
    return " ".join(d)


# ---------------------------------------------------------------------------------------------------------
# The page


def _legend() -> str:
    """A swatch per op family, then the kinds of values that enter a graph."""
    items = [_swatch(name, "op", (fill, stroke, "#111827")) for name, (fill, stroke) in FAMILY_COLOURS.items()]
    items += [_swatch(kind, kind, KIND_COLOURS[kind]) for kind in ("input", "param", "const")]
    return '<div class="legend">' + "".join(items) + "</div>"


def _swatch(name: str, kind: str, colours: tuple[str, str, str]) -> str:
    fill, stroke, text = colours
    return (f'<svg class="swatch" width="58" height="18" viewBox="0 0 58 18"><rect x="1" y="1" width="56" '
            f'height="16" {_outline(kind, 16)} fill="{fill}" stroke="{stroke}"/>'
            f'<text x="29" y="9" fill="{text}">{name}</text></svg>')


def guard_items(graph: Graph) -> list[str]:
    """The conditions under which ``graph`` may be reused: input types first, then value guards."""
    items = [f'<li class="guard input-guard"><code>{escape(name)}</code> is <code>{escape(t)}</code></li>'
             for name, t in graph.input_types().items()]
    for i, guard in enumerate(graph.guards):
        # describe() says what is checked and where: "bool(value) == True at model.py:12: `if s > 0:`"
        file = f' title="{escape(guard.loc.filename)}"' if guard.loc is not None else ""
        if not hasattr(guard, "graph"):  # a shape guard: a fact about the input sizes
            items.append(f'<li class="guard shape-guard"{file}>guard #{i}: shape <code>{escape(guard.describe())}'
                         f"</code></li>")
            continue
        items.append(f'<li class="guard value-guard"{file}>guard #{i}: <code>{escape(guard.describe())}</code>'
                     f"<details><summary>how the value is computed</summary><pre>{escape(guard.graph)}</pre>"
                     f"</details></li>")
    return items


def ops_text(graph: Graph) -> str:
    count = graph.count()
    return f"{count} op{'s' if count != 1 else ''}"


def page_html(graphs: list[Graph], title: str | None = None) -> str:
    """The whole page for ``graphs``, drawn in order with a graph break between consecutive ones.

    A graph that appears again (a ``LazyRunner`` that reused a cached graph) is drawn once and then listed as
    reused.
    """
    title = title if title is not None else ", ".join(dict.fromkeys(g.name for g in graphs))
    sections, guard_sections, drawn = [], [], {}
    for run, graph in enumerate(graphs):
        if run > 0:
            sections.append('<div class="graph-break" role="separator"><span>graph break</span> the capture '
                            'stopped here (Python needed a value, so the graph above ran); the next graph starts '
                            'below</div>')
        heading = f"graph {escape(graph.name)} <small>{ops_text(graph)}</small>"
        if len(graphs) > 1:
            heading = f'<span class="run">run {run + 1}</span> ' + heading
        if id(graph) in drawn:
            sections.append(f'<section class="capture reused"><h2>{heading}</h2><p>the same graph as run '
                            f"{drawn[id(graph)] + 1}, reused from the cache; not drawn again</p></section>")
            continue
        drawn[id(graph)] = run
        sections.append(f'<section class="capture" id="graph-{run}"><h2>{heading}</h2>\n'
                        f'<div class="canvas">{graph_svg(graph, f"g{run}")}</div>\n'
                        f"<details><summary>graph_lab IR</summary><pre>{escape(graph)}</pre></details></section>")
        guard_sections.append(f'<h3>graph {escape(graph.name)}{f" (run {run + 1})" if len(graphs) > 1 else ""}'
                              f'</h3><ul>{"".join(guard_items(graph)) or "<li>none</li>"}</ul>')
    distinct = list({id(g): g for g in graphs}.values())
    n_nodes = sum(len(g.nodes) for g in distinct)
    n_guards = sum(len(g.guards) for g in distinct)
    summary = (f"{len(graphs)} graph{'s' if len(graphs) != 1 else ''} · {n_nodes} nodes · "
               f"{n_guards} value guard{'s' if n_guards != 1 else ''} · hover a node for its source line")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy()}">',
        f"<title>graph_lab: {escape(title)}</title>",
        f"<style>{PAGE_CSS}</style>",
        f"<script>{ERROR_WATCH_JS}</script>",
        "</head><body>",
        f'<header><h1>{escape(title)}</h1><p class="summary">{summary}</p>{_legend()}</header>',
        "<main>", *sections,
        '<section class="guards"><h2>Guards</h2><p>A graph is reused only while all of these hold.</p>',
        *guard_sections, "</section></main>",
        '<div id="render-report" hidden></div>',
        f"<script>{PAGE_JS}</script>",
        "</body></html>",
    ]) + "\n"


def view(what: Any, path: str | os.PathLike = "graph.html", *, title: str | None = None) -> Path:
    """Write one self-contained HTML page drawing ``what``.

    Open it in any browser, offline. Nodes are coloured by op family; inputs, parameters and constants are set
    apart; each edge carries its type; hovering a node shows its IR line and the source line that made it.
    Several graphs are drawn in order with the graph breaks between them marked, followed by their guards.

    Parameters:
        what: a ``Graph``, a list of graphs, or a ``LazyRunner`` (its executed graphs).
        path: the HTML file to write.
        title: the page's title; by default the graph's name.

    Returns:
        The path written.
    """
    out = Path(path)
    out.write_text(page_html(graphs_of(what), title), encoding="utf-8")
    return out
