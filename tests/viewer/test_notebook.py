"""Notebook display: ``Graph._repr_html_`` (the viewer's drawing, inline, loading nothing), ``Graph._repr_pretty_``
(the IR text) and ``ExplainReport._repr_html_``; and the HTML rendered by headless Chromium inside a page as
strict as a notebook's could be (nothing from the network, no script but the test's own).

The Chromium test fails (it does not skip) when Chromium is missing: `.ci/run` installs it.
"""

import base64
import hashlib
import html
import re
from html.parser import HTMLParser

import numpy as np
import pytest

import graph_lab
from graph_lab import F, trace
from graph_lab.viewer import chromium
from graph_lab.viewer.assets import ERROR_WATCH_JS, PAGE_JS
from tests.viewer.test_viewer import EVIL, gelu  # noqa: F401 (gelu is a fixture: a traced MLP with a GELU)


def scaled_then_printed(x):
    y = F.relu(x * 2.0)
    print("a side effect: a graph break")
    return (y + 1.0).sum()


@pytest.fixture
def report():
    return graph_lab.explain(scaled_then_printed)(np.arange(6.0).reshape(2, 3))


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of each <style>."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.styles: list[str] = []
        self._in_style = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)

    def with_class(self, name: str) -> list[dict]:
        return [a for _, a in self.tags if name in a.get("class", "").split()]


def assert_loads_nothing(fragment: str) -> None:
    """No script, no element that fetches, no attribute or style naming a URL (the SVG namespace is a name)."""
    parsed = Elements(fragment)
    assert not [t for t, _ in parsed.tags if t in ("script", "img", "iframe", "link", "object", "embed")]
    for tag, attrs in parsed.tags:
        assert not {"src", "href", "srcset", "style"} & set(attrs), (tag, attrs)
        for name, value in attrs.items():
            if name != "xmlns":
                assert not re.search(r"https?:|//", value or ""), (tag, name, value)
    ids = {a["id"] for _, a in parsed.tags if "id" in a}
    for reference in re.findall(r"url\(([^)]*)\)", fragment):
        assert reference.startswith("#") and reference[1:] in ids, reference  # an element of the fragment
    assert all("@import" not in css and "url(" not in css for css in parsed.styles)


def test_graph_repr_html_is_the_drawing_with_its_ir_and_loads_nothing(gelu):
    fragment = gelu._repr_html_()
    parsed = Elements(fragment)
    assert len(parsed.with_class("graph")) == 1  # the viewer's <svg class="graph">
    assert len(parsed.with_class("node")) == len(gelu.nodes)
    assert len(parsed.with_class("edge")) == sum(len(v.users) for n in gelu.nodes for v in n.outputs) + \
        len(gelu.outputs)
    assert html.escape(str(gelu), quote=True) in fragment  # the IR text, folded under the drawing
    assert f"{gelu.count()} ops, 1 input" in fragment
    assert_loads_nothing(fragment)


def test_two_drawings_in_one_notebook_share_no_element_id(gelu):
    first, second = (Elements(gelu._repr_html_()) for _ in range(2))
    ids = [{a["id"] for _, a in p.tags if "id" in a} for p in (first, second)]
    assert ids[0] and ids[1] and not ids[0] & ids[1]


def test_graph_repr_html_escapes_user_text():
    g = trace(lambda x, p: x @ p[EVIL], {"x": (2, 3)}, {EVIL: np.ones((3, 2))})
    g.name = EVIL
    fragment = g._repr_html_()
    assert EVIL not in fragment and "<script" not in fragment
    assert html.escape(EVIL, quote=True) in fragment


class RecordingPrinter:
    """What IPython's pretty printer offers a ``_repr_pretty_`` (its ``text`` method), recording the text."""

    def __init__(self):
        self.written = []

    def text(self, text: str) -> None:
        self.written.append(text)


def test_graph_repr_pretty_is_the_ir_text(gelu):
    printer = RecordingPrinter()
    gelu._repr_pretty_(printer, False)
    assert "".join(printer.written) == str(gelu)
    assert "".join(printer.written).count("= matmul") == 2


def test_explain_report_repr_html_lists_the_break_and_guards_and_draws_each_graph(report):
    assert report.graph_count == 2 and report.graph_break_count == 1
    fragment = report._repr_html_()
    parsed = Elements(fragment)
    assert len(parsed.with_class("graph")) == 2
    assert len(parsed.with_class("node")) == sum(len(g.nodes) for g in report.graphs)
    assert html.escape(report.breaks[0].reason, quote=True) in fragment
    assert html.escape(report.breaks[0].line, quote=True) in fragment
    assert all(html.escape(g, quote=True) in fragment for g in report.guards)
    assert html.escape(report.code, quote=True) in fragment
    assert "explain(scaled_then_printed): 2 graph(s), 1 graph break(s)" in fragment
    assert_loads_nothing(fragment)


# ---------------------------------------------------------------------------------------------------------
# Rendered by headless Chromium


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def notebook_like_page(fragments: list[str]) -> str:
    """A page holding the fragments as a notebook would, whose policy blocks every fetch: the viewer's error
    watch and render report are its only scripts, the fragments' own <style> blocks its only styles."""
    styles = {css for fragment in fragments for css in Elements(fragment).styles}
    policy = (f"default-src 'none'; script-src {sha256_source(ERROR_WATCH_JS)} {sha256_source(PAGE_JS)}; "
              f"style-src {' '.join(sha256_source(css) for css in sorted(styles))}")
    return "\n".join([
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
        f"<script>{ERROR_WATCH_JS}</script></head><body>",
        *[f'<div class="output">{fragment}</div>' for fragment in fragments],
        '<div id="render-report" hidden></div>', f"<script>{PAGE_JS}</script></body></html>"])


def test_chromium_renders_the_notebook_html_of_a_graph_and_a_report(gelu, report, tmp_path):
    if chromium.find_chromium() is None:
        pytest.fail("Chromium is needed to check that the notebook HTML renders, and it is not installed. On "
                    "Debian/Ubuntu: apt-get update && apt-get install -y chromium (.ci/run does this).")
    page = tmp_path / "notebook.html"
    page.write_text(notebook_like_page([gelu._repr_html_(), report._repr_html_()]), encoding="utf-8")
    rendered = chromium.render_report(page)
    assert rendered["errors"] == "0", rendered["text"]
    drawn = [gelu, *report.graphs]
    assert rendered["graphs"] == str(len(drawn))
    assert rendered["nodes"] == rendered["node-elements"] == str(sum(len(g.nodes) for g in drawn))
