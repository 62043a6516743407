"""graph_lab.view and Graph.to_dot: DOT text, the HTML page (escaping, several graphs, guards), the layout, and
the page rendered by headless Chromium.

The Chromium tests fail (they do not skip) when Chromium is missing: `.ci/run` installs it.
"""

import html
import importlib.util
import math
import re
import struct
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import graph_lab
from graph_lab import F, LazyRunner, trace
from graph_lab.viewer import chromium
from graph_lab.viewer.assets import ERROR_WATCH_JS, PAGE_JS
from graph_lab.viewer.dot import dot_string
from graph_lab.viewer.labels import FAMILY_COLOURS, node_label
from graph_lab.viewer.layout import Wire, fit_in_order, layered_layout
from graph_lab.viewer.page import page_html

REPO = Path(__file__).resolve().parents[2]
EVIL = "<script>alert(1)</script>\"'&"


def gelu_mlp(x, p):
    h = x @ p["W1"]
    g = 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return g @ p["W2"]


GELU_MATMUL_LINE = gelu_mlp.__code__.co_firstlineno + 1


@pytest.fixture
def gelu():
    rng = np.random.default_rng(0)
    params = {"W1": rng.standard_normal((8, 16)) / 3, "W2": rng.standard_normal((16, 8)) / 4}
    return trace(gelu_mlp, {"x": (4, 8)}, params)


def guarded_function(x):
    s = x.sum()
    if s > 0:
        x = x * 2
    if float(x.max()) > 10:
        x = x + 1
    return F.relu(x - 1)


@pytest.fixture
def guarded():
    return trace(guarded_function, {"x": (3,)}, mode="guard", example={"x": np.ones(3)})


@pytest.fixture
def lazy_runner():
    """Three executions: two different graphs, the second one reused from the cache once."""
    lr = LazyRunner()
    t = lr.tensor(np.ones(3))
    for _ in range(3):
        if (t * 2).sum() > 0:
            t = t + 1
    assert len(lr.executed) == 3 and lr.executed[1] is lr.executed[2]
    return lr


@pytest.fixture
def evil(tmp_path):
    """A graph whose parameter name, graph name, file name and source lines all carry markup and quotes."""
    source = tmp_path / "<img src=x onerror=alert(2)>\"'.py"
    source.write_text(
        f"KEY = {EVIL!r}\n"
        "def model(x, p):\n"
        "    y = x @ p[KEY]  # </script><script>alert(3)</script>\n"
        "    if y.sum() > 0:  # \"quoted\" <b>bold</b> & more\n"
        "        y = y * 2\n"
        "    return y\n")
    spec = importlib.util.spec_from_file_location("evil_model", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    g = trace(module.model, {"x": (2, 3)}, {EVIL: np.ones((3, 2))}, mode="guard",
              example={"x": np.ones((2, 3))})
    g.name = EVIL
    assert len(g.guards) == 1
    return g


# ---------------------------------------------------------------------------------------------------------
# DOT


def test_dot_string_escapes_quotes_backslashes_and_newlines():
    assert dot_string('a"b') == '"a\\"b"'
    assert dot_string("a\\b") == '"a\\\\b"'
    assert dot_string("a\nb\r\nc") == '"a\\nb\\nc"'
    assert dot_string("bell\x07") == '"bell\\\\x07"'
    assert dot_string("<b>") == '"<b>"'  # inside quotes DOT reads no HTML


DOT_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
DOT_STATEMENT = re.compile(r'\s*(?:digraph S \{|(?:graph|node|edge) \[.*\];|n\d+ \[.*\];|n\d+ -> n\d+ \[.*\];|\})')


def assert_well_formed_dot(text: str) -> None:
    """Every line is one statement once its strings are taken out, and no quote is left over."""
    for line in text.splitlines():
        bare = DOT_STRING.sub("S", line)
        assert '"' not in bare and "<" not in bare, line
        assert DOT_STATEMENT.fullmatch(bare), line


def test_to_dot_of_gelu_mlp(gelu):
    dot = gelu.to_dot()
    assert dot.startswith('digraph "gelu_mlp" {\n') and dot.endswith("}\n")
    assert_well_formed_dot(dot)
    nodes = re.findall(r"^  n(\d+) \[", dot, re.M)
    assert len(nodes) == len(gelu.nodes) + 1  # and the return
    edges = re.findall(r"^  n(\d+) -> n(\d+) \[label=\"([^\"]*)\"\];$", dot, re.M)
    assert len(edges) == 22
    assert ("0", "3", "f64[4,8]") in edges and ("3", "5", "f64[4,16]") in edges and ("4", "5", "float") in edges
    assert ("17", str(len(gelu.nodes)), "f64[4,8]") in edges  # the output goes to the return node
    matmul = re.search(r"^  n3 \[(.*)\];$", dot, re.M).group(1)
    assert 'label="%3 matmul"' in matmul and f'fillcolor="{FAMILY_COLOURS["linalg"][0]}"' in matmul
    assert f"test_viewer.py:{GELU_MATMUL_LINE}" in matmul  # the source line, in the tooltip
    assert 'shape="invhouse"' in re.search(r"^  n0 \[(.*)\];$", dot, re.M).group(1)  # the input stands apart


def test_to_dot_escapes_user_text(evil):
    dot = evil.to_dot()
    assert_well_formed_dot(dot)
    assert dot.startswith('digraph "<script>alert(1)</script>\\"\'&" {')
    param = evil.param_nodes[0]
    assert "<script>alert(1)</script>\"" in param.attrs["name"]
    assert f"label={dot_string('%1 ' + node_label(param))}" in dot


# ---------------------------------------------------------------------------------------------------------
# The page


def test_view_writes_one_self_contained_page(gelu, tmp_path):
    out = graph_lab.view(gelu, str(tmp_path / "graph.html"))
    assert out == tmp_path / "graph.html"
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert page.count('<svg class="graph"') == 1
    # Nothing to fetch: no src/href attributes, no stylesheet links, no URLs but the SVG namespace.
    assert not re.search(r"\b(?:src|href)\s*=", page)
    assert "<link" not in page and "@import" not in page and "https://" not in page
    assert set(re.findall(r"http://[^\"' ]+", page)) == {"http://www.w3.org/2000/svg"}
    assert "default-src 'none'" in page  # and the policy says so to the browser


def node_elements(page: str) -> dict[str, str]:
    """id -> the SVG text of each drawn IR node."""
    return dict(re.findall(r'<g class="node [a-z]+" id="(g\d+n\d+)">(.*?)</g>', page, re.S))


def test_page_draws_nodes_by_family_kind_types_and_source_lines(gelu):
    page = page_html([gelu])
    nodes = node_elements(page)
    assert len(nodes) == len(gelu.nodes)
    assert f'fill="{FAMILY_COLOURS["linalg"][0]}"' in nodes["g0n3"] and ">matmul</text>" in nodes["g0n3"]
    assert f'fill="{FAMILY_COLOURS["unary"][0]}"' in nodes["g0n13"] and ">tanh</text>" in nodes["g0n13"]
    assert f'fill="{FAMILY_COLOURS["binary"][0]}"' in nodes["g0n5"]
    assert '<g class="node input" id="g0n0">' in page and '<g class="node param" id="g0n1">' in page
    assert '<g class="node const" id="g0n4">' in page
    # Types on the edges: one label per value that something reads.
    types = re.findall(r'<g class="type">.*?<text [^>]*>([^<]*)</text></g>', page)
    assert sorted(set(types)) == ["f64[16,8]", "f64[4,16]", "f64[4,8]", "f64[8,16]", "float"]
    assert len(types) == len(gelu.nodes)  # here every node's value is read once or more
    # The source line on hover: the node's <title> holds the IR line and the user's code.
    title = html.unescape(re.search(r"<title>(.*?)</title>", nodes["g0n3"], re.S).group(1))
    assert title.splitlines()[0] == "%3 = matmul %0, %1"
    assert f'source: test_viewer.py:{GELU_MATMUL_LINE}: `h = x @ p["W1"]`' in title


def test_page_escapes_every_piece_of_user_text(evil):
    page = page_html([evil])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#x27;&amp;" in page  # graph and param names
    assert "&lt;img src=x onerror=alert(2)&gt;" in page  # the file name
    assert "&lt;/script&gt;&lt;script&gt;alert(3)&lt;/script&gt;" in page  # a source line, in a tooltip
    assert "&quot;quoted&quot; &lt;b&gt;bold&lt;/b&gt; &amp; more" in page  # the guard's source line
    for raw in ("<script>alert", "</script><script>", "<img", "<b>bold", "alert(1)</script>\"'"):
        assert raw not in page, raw

    class Elements(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.attributes, self.scripts, self.in_script = set(), set(), [], False

        def handle_starttag(self, tag, attrs):
            self.tags.add(tag)
            self.attributes.update(name for name, _ in attrs)
            self.in_script = tag == "script"

        def handle_data(self, data):
            if self.in_script:
                self.scripts.append(data)
                self.in_script = False

    parsed = Elements()
    parsed.feed(page)
    assert parsed.scripts == [ERROR_WATCH_JS, PAGE_JS]  # the page's own scripts and nothing else
    assert not {name for name in parsed.attributes if name.startswith("on")}
    assert parsed.tags <= {"html", "head", "meta", "title", "style", "script", "body", "header", "h1", "h2", "h3",
                           "p", "div", "main", "section", "small", "span", "svg", "defs", "marker", "path", "g",
                           "rect", "text", "tspan", "details", "summary", "pre", "ul", "li", "code"}


def test_view_of_a_list_of_graphs_marks_breaks_and_lists_guards(guarded, gelu):
    page = page_html([guarded, gelu])
    assert page.count('<svg class="graph"') == 2
    assert page.count('class="graph-break"') == 1
    assert page.index("graph guarded_function") < page.index('class="graph-break"') < page.index("graph gelu_mlp")
    guards = page[page.index('<section class="guards">'):]
    assert guards.count('class="guard value-guard"') == 2
    for guard in guarded.guards:
        assert html.escape(guard.describe()) in guards  # what is checked, and the source line
    assert "if s &gt; 0:" in guards and "if float(x.max()) &gt; 10:" in guards
    assert "<code>x</code> is <code>f64[3]</code>" in guards  # the input's type is a guard too
    assert "<code>x</code> is <code>f64[4,8]</code>" in guards


def test_view_of_a_lazy_runner_draws_each_executed_graph_in_order(lazy_runner, tmp_path):
    page = graph_lab.view(lazy_runner, tmp_path / "lazy.html").read_text(encoding="utf-8")
    runs = re.findall(r'<span class="run">run (\d)</span> graph (\w+)', page)
    assert runs == [("1", "lazy0"), ("2", "lazy1"), ("3", "lazy1")]
    assert page.count('class="graph-break"') == 2
    assert page.count('<svg class="graph"') == 2  # the reused graph is drawn once
    assert "the same graph as run 2, reused from the cache" in page
    assert len(node_elements(page)) == len(lazy_runner.executed[0].nodes) + len(lazy_runner.executed[1].nodes)


def test_view_rejects_what_it_cannot_draw(tmp_path):
    with pytest.raises(TypeError, match="Graph, a non-empty list of Graphs or a LazyRunner"):
        graph_lab.view(np.ones(3), tmp_path / "x.html")
    with pytest.raises(ValueError, match="executed no graph yet"):
        graph_lab.view(LazyRunner(), tmp_path / "x.html")
    assert not (tmp_path / "x.html").exists()


def test_view_is_exported_and_import_stays_light():
    assert "view" in graph_lab.__all__ and graph_lab.view is graph_lab.viewer.view
    code = "import sys, graph_lab; print(sorted(m for m in ('hashlib', 'subprocess', 'graph_lab.viewer.chromium') " \
           "if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert "chromium" not in out.stdout and "hashlib" not in out.stdout


# ---------------------------------------------------------------------------------------------------------
# The layout


def test_fit_in_order_keeps_order_and_gaps_and_fits_least_squares():
    assert fit_in_order([0.0, 0.0, 0.0], [10.0, 10.0], [1, 1, 1]) == [-10.0, 0.0, 10.0]
    assert fit_in_order([0.0, 50.0], [10.0], [1, 1]) == [0.0, 50.0]  # nothing to push
    assert fit_in_order([0.0, 0.0], [10.0], [1, 3]) == [-7.5, 2.5]  # the heavier node moves less


def gelu_layout_input(graph):
    from graph_lab.viewer.labels import readers
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    sizes = [(60.0 + 7 * i % 30, 26.0) for i in range(len(graph.nodes) + 1)]
    wires = [Wire(position[id(v.node)], users, (60.0, 14.0)) for v, users in readers(graph)]
    return sizes, wires


def test_layout_is_deterministic_and_nothing_overlaps(gelu):
    sizes, wires = gelu_layout_input(gelu)
    layout = layered_layout(sizes, wires)
    assert layout == layered_layout(sizes, wires)
    items = [(x, y, w, h) for (x, y), (w, h) in zip(layout.boxes, sizes)]
    items += [(x, y, w.label_size[0], w.label_size[1]) for (x, y), w in zip(layout.labels, wires)]
    for i, (x1, y1, w1, h1) in enumerate(items):
        assert w1 / 2 <= x1 <= layout.width - w1 / 2 and h1 / 2 <= y1 <= layout.height - h1 / 2
        for x2, y2, w2, h2 in items[i + 1:]:
            assert abs(x1 - x2) >= (w1 + w2) / 2 or abs(y1 - y2) >= (h1 + h2) / 2, "boxes overlap"
    for wire, routes in zip(wires, layout.routes):
        assert len(routes) == len(wire.users)
        for points in routes:
            ys = [y for _, y in points]
            assert ys == sorted(ys), "an edge goes up"
    # A constant sits on the row just above the op that reads it (0.5 is %4, read by %5).
    assert layout.boxes[5][1] - layout.boxes[4][1] == pytest.approx(26 + 16 + 14 + 16)


def test_layout_rejects_edges_that_go_back():
    with pytest.raises(ValueError, match="topological order"):
        layered_layout([(10, 10), (10, 10)], [Wire(1, [0], (5, 5))])


# ---------------------------------------------------------------------------------------------------------
# Rendered by headless Chromium


@pytest.fixture(scope="module")
def browser():
    path = chromium.find_chromium()
    if path is None:
        pytest.fail("Chromium is needed to check that the viewer's page renders, and it is not installed. On "
                    "Debian/Ubuntu: apt-get update && apt-get install -y chromium (.ci/run does this).")
    return path


@pytest.mark.parametrize("case", ["gelu", "lazy_runner", "evil"])
def test_chromium_renders_every_node_without_errors(browser, case, request, tmp_path):
    what = request.getfixturevalue(case)
    graphs = list(dict.fromkeys(what.executed)) if isinstance(what, LazyRunner) else [what]
    page = graph_lab.view(what, tmp_path / "page.html")
    start = time.monotonic()
    report = chromium.render_report(page)
    assert time.monotonic() - start < chromium.TIMEOUT_SECONDS
    assert report["errors"] == "0", report["text"]
    assert report["nodes"] == report["node-elements"] == str(sum(len(g.nodes) for g in graphs))
    assert report["graphs"] == str(len(graphs))


def test_screenshot_script_writes_the_gelu_mlp_png(browser, tmp_path):
    png = tmp_path / "gelu_mlp.png"
    result = subprocess.run([sys.executable, str(REPO / "docs" / "make_screenshot.py"), "--out", str(png)],
                            capture_output=True, text=True, timeout=2 * chromium.TIMEOUT_SECONDS)
    assert result.returncode == 0, result.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1400, 1000)
    assert len(data) > 20_000  # a drawing, not a blank page
