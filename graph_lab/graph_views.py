"""The views of a ``Graph`` that layers above the IR write, registered into ``ir.graph.VIEWS``.

``g.code`` and ``g.to_python()`` are the generated Python of ``backends/python_source.py``; ``g.to_dot()`` and a
notebook's ``g._repr_html_()`` are drawings of ``viewer/``. The IR may not import those layers (imports point down
the layers of docs/layout.md), so this module, in the top layer, registers them when graph_lab is imported. Each
imports its layer on first use, so that ``import graph_lab`` loads neither the code generator nor the viewer.
"""

from __future__ import annotations

from .ir.graph import VIEWS, Graph


def code(graph: Graph) -> str:
    from .backends.python_source import generate
    return generate(graph).source


def to_python(graph: Graph):
    from .backends.python_source import to_python
    return to_python(graph)


def to_dot(graph: Graph) -> str:
    from .viewer.dot import to_dot
    return to_dot(graph)


def html(graph: Graph) -> str:
    from .viewer.notebook import graph_html
    return graph_html(graph)


VIEWS.update(code=code, to_python=to_python, to_dot=to_dot, html=html)
