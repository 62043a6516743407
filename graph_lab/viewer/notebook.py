"""Graphs and ``explain()`` reports shown in a notebook: ``Graph._repr_html_`` and ``ExplainReport._repr_html_``.

A notebook puts this HTML inside its own page, so it is a fragment, not a page: the drawing is the viewer's
inline SVG (``page.graph_svg``), styled by rules scoped to the fragment (``assets.INLINE_CSS``), with no script
and nothing loaded from anywhere; a node's tooltip is the SVG's own ``<title>``. Every piece of user text is
HTML-escaped, as on the page.
"""

from __future__ import annotations

import itertools

from ..ir.graph import Graph
from .assets import INLINE_CSS
from .page import escape, graph_svg, guard_items, ops_text

# Element ids must be unique in the notebook's page, which shows many drawings: each drawing takes a new prefix.
_drawings = itertools.count()


def _drawing(graph: Graph) -> str:
    """The graph's title line and its SVG."""
    inputs = len(graph.input_nodes)
    title = (f'<p class="graph-lab-title">graph <b>{escape(graph.name)}</b> <small>{ops_text(graph)}, '
             f"{inputs} input{'s' if inputs != 1 else ''}, {len(graph.guards)} guard"
             f"{'s' if len(graph.guards) != 1 else ''} · hover a node for its source line</small></p>")
    return f'{title}<div class="graph-lab-canvas">{graph_svg(graph, f"nb{next(_drawings)}")}</div>'


def _fragment(body: str) -> str:
    return f'<div class="graph-lab-inline"><style>{INLINE_CSS}</style>{body}</div>'


def graph_html(graph: Graph) -> str:
    """One graph: its drawing, then its IR text and its guards, folded."""
    guards = "".join(guard_items(graph))
    return _fragment(_drawing(graph) +
                     f"<details><summary>graph_lab IR</summary><pre>{escape(graph)}</pre></details>" +
                     (f"<details><summary>guards</summary><ul>{guards}</ul></details>" if guards else ""))


def explain_html(report) -> str:
    """An ``ExplainReport``: the summary line, each graph break with its reason and hint, the guards, each graph
    drawn, and the stitching code."""
    summary, *_ = str(report).splitlines()
    parts = [f'<p class="graph-lab-title"><b>{escape(summary)}</b></p>']
    if report.breaks:
        items = []
        for b in report.breaks:
            code = f" <code>{escape(b.code)}</code>" if b.code else ""
            hint = f"<br>hint: {escape(b.hint)}" if b.hint else ""
            items.append(f"<li>at {escape(b.line)} ({escape(b.instruction)}): {escape(b.reason)}{code}{hint}</li>")
        parts.append(f"<p>graph breaks:</p><ol>{''.join(items)}</ol>")
    guards = "".join(f"<li><code>{escape(g)}</code></li>" for g in report.guards)
    parts.append(f"<details><summary>guards ({len(report.guards)})</summary><ul>{guards}</ul></details>")
    parts += [_drawing(graph) for graph in report.graphs]
    parts.append(f"<details><summary>stitching code</summary><pre>{escape(report.code)}</pre></details>")
    return _fragment("".join(parts))
