"""Drawing graphs: ``view`` writes a self-contained HTML page, ``to_dot`` gives Graphviz DOT text.

    labels.py    what a node says and how it looks (shared by both writers)
    layout.py    where nodes and edges go: a small layered (Sugiyama-style) layout in pure Python
    page.py      the HTML page with inline SVG: ``view``
    assets.py    the page's fixed CSS and scripts, and its Content-Security-Policy
    dot.py       Graphviz DOT text: ``to_dot``
    chromium.py  headless Chromium, for the render test and the screenshot in docs/ (not imported here)
"""

from .dot import to_dot
from .page import view

__all__ = ["view", "to_dot"]
