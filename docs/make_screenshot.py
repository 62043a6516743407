"""Regenerate docs/gelu_mlp.png: the course's gelu_mlp traced, drawn by graph_lab.view, shot by headless Chromium.

    python3 docs/make_screenshot.py              writes docs/gelu_mlp.png
    python3 docs/make_screenshot.py --out X.png  writes X.png instead (the tests do this)

Needs Chromium (Debian: apt-get install -y chromium).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from a checkout without installing

import graph_lab  # noqa: E402
from graph_lab import F  # noqa: E402
from graph_lab.viewer import chromium  # noqa: E402


def gelu_mlp(x, p):
    """x @ W1 -> GELU (tanh approximation) -> @ W2."""
    h = x @ p["W1"]
    g = 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return g @ p["W2"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "gelu_mlp.png", help="where to write the PNG")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    params = {"W1": rng.standard_normal((8, 16)) / 3, "W2": rng.standard_normal((16, 8)) / 4}
    graph = graph_lab.trace(gelu_mlp, {"x": (4, 8)}, params)
    with tempfile.TemporaryDirectory(prefix="graph-lab-shot-") as tmp:
        page = graph_lab.view(graph, Path(tmp) / "gelu_mlp.html")
        report = chromium.render_report(page)
        if report.get("errors") != "0" or report.get("nodes") != str(len(graph.nodes)):
            print(f"make_screenshot: the page did not render cleanly: {report}", file=sys.stderr)
            return 1
        chromium.screenshot(page, args.out, width=1400, height=1000)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
