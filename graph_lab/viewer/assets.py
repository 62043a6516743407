"""The page's fixed CSS and scripts, the Content-Security-Policy that allows exactly them, and the CSS of a
drawing shown inline in a notebook.

None of this text contains user data: the scripts read the drawing from the DOM, never from the Python side.
"""

from __future__ import annotations

# The drawing's own rules: every selector starts with svg.graph, so they style nothing else in a notebook.
DRAWING_CSS = """
svg.graph text { font: 12px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
                 dominant-baseline: central; text-anchor: middle; }
svg.graph .edge { fill: none; stroke: #9ca3af; stroke-width: 1.3; }
svg.graph .edge.hot { stroke: #dc2626; stroke-width: 2.4; }
svg.graph .type rect { fill: #ffffff; }
svg.graph .type text { font-size: 10px; fill: #4b5563; }
svg.graph rect { stroke-width: 1.4; }
svg.graph .input rect, svg.graph .param rect { stroke-width: 2; }
svg.graph .node:hover rect { stroke-width: 3; }
svg.graph .num { fill: #6b7280; }
svg.graph .input .num, svg.graph .graph-return .num { fill: #bfdbfe; }
"""

PAGE_CSS = """
body { margin: 0; color: #111827; background: #ffffff; font: 14px/1.4 system-ui, sans-serif; }
header { padding: 10px 16px 8px; border-bottom: 1px solid #e5e7eb; }
h1 { margin: 0; font-size: 18px; }
h2 { margin: 10px 0 4px; font-size: 15px; }
h2 small { color: #6b7280; font-weight: normal; }
h3 { margin: 8px 0 2px; font-size: 14px; }
.summary { margin: 2px 0 6px; color: #4b5563; font-size: 13px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px; }
main { padding: 0 16px 16px; }
.canvas { overflow-x: auto; }
svg.swatch text { font: 10px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
                  dominant-baseline: central; text-anchor: middle; }
.graph-break { margin: 14px 0 6px; padding: 6px 0; border-top: 3px dashed #dc2626; color: #991b1b; font-size: 13px; }
.graph-break span { margin-right: 8px; font-weight: bold; text-transform: uppercase; letter-spacing: 0.05em; }
.run { color: #991b1b; }
.reused p { margin: 0; color: #4b5563; }
.guards ul { margin: 2px 0; padding-left: 20px; }
code { padding: 0 3px; background: #f3f4f6; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
pre { padding: 8px; overflow-x: auto; background: #f9fafb; font-size: 12px; }
""" + DRAWING_CSS

# A drawing shown inside a notebook's page (``Graph._repr_html_``): the drawing's rules and a few for the text
# around it, all under .graph-lab-inline so the notebook's own look is left alone.
INLINE_CSS = DRAWING_CSS + """
.graph-lab-inline { color: #111827; font: 13px/1.4 system-ui, sans-serif; }
.graph-lab-inline .graph-lab-title { margin: 4px 0; }
.graph-lab-inline .graph-lab-title small { color: #6b7280; }
.graph-lab-inline .graph-lab-canvas { overflow-x: auto; }
.graph-lab-inline ul, .graph-lab-inline ol { margin: 2px 0; padding-left: 20px; }
.graph-lab-inline code { padding: 0 3px; background: #f3f4f6; font-family: ui-monospace, monospace; }
.graph-lab-inline pre { margin: 4px 0; padding: 6px; overflow-x: auto; background: #f9fafb; font-size: 12px; }
"""

# Runs first (in <head>): counts every error the page meets, including loads its policy blocked.
ERROR_WATCH_JS = """
window.graphLab = {
  errors: [],
  note: function (message) {
    window.graphLab.errors.push(String(message));
    var report = document.getElementById("render-report");
    if (report) {
      report.dataset.errors = String(window.graphLab.errors.length);
      report.textContent = window.graphLab.errors.join("\\n");
    }
  }
};
window.addEventListener("error", function (event) {
  var target = event.target || {};
  window.graphLab.note(event.message || ("could not load " + (target.src || target.href || target.tagName)));
}, true);
document.addEventListener("securitypolicyviolation", function (event) {
  window.graphLab.note("blocked by the page's policy: " + event.violatedDirective + " " + event.blockedURI);
});
(function () {
  var consoleError = console.error;
  console.error = function () {
    window.graphLab.note(Array.prototype.join.call(arguments, " "));
    return consoleError.apply(console, arguments);
  };
})();
"""

# Runs last: hover highlighting, then the render report (what was drawn, what went wrong).
PAGE_JS = """
(function () {
  "use strict";
  function highlight(id, on) {
    var edges = document.querySelectorAll('[data-from="' + id + '"], [data-to="' + id + '"]');
    edges.forEach(function (edge) { edge.classList.toggle("hot", on); });
  }
  var drawn = 0;
  var nodes = document.querySelectorAll("svg.graph .node");
  nodes.forEach(function (node) {
    var box = node.getBBox();
    if (box.width > 0 && box.height > 0) {
      drawn += 1;
    }
    node.addEventListener("mouseenter", function () { highlight(node.id, true); });
    node.addEventListener("mouseleave", function () { highlight(node.id, false); });
  });
  var report = document.getElementById("render-report");
  report.dataset.nodes = String(drawn);
  report.dataset.nodeElements = String(nodes.length);
  report.dataset.edges = String(document.querySelectorAll("svg.graph .edge").length);
  report.dataset.graphs = String(document.querySelectorAll("svg.graph").length);
  report.dataset.errors = String(window.graphLab.errors.length);
  report.textContent = window.graphLab.errors.join("\\n");
})();
"""


def _sha256(text: str) -> str:
    # Imported here, not at the top: `import graph_lab` should not pay for hashing it does not need.
    import base64
    import hashlib
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy() -> str:
    """Nothing from the network; only this module's scripts and style, each named by its hash."""
    return (f"default-src 'none'; script-src {_sha256(ERROR_WATCH_JS)} {_sha256(PAGE_JS)}; "
            f"style-src {_sha256(PAGE_CSS)}; base-uri 'none'; form-action 'none'")
