"""F8 code-generation injection: names, attribute values and strings holding quotes, newlines and Python code
go through every place graph_lab writes text others read, and none of them ever runs.

Each payload, if it were executed as Python, would create a canary file. It is used as an input name, a
parameter name (a nested dict key), a graph name, a source file name, a dict key that compile() guards on, an
einsum subscript, and a name in IR text handed to ``parse``. Each graph then goes through ``str`` and
``parse`` (the names must come back exactly), ``to_python`` (generated code, compiled and called), ``view``
(HTML: the payload's ``<`` must be escaped), ``to_dot``, ``save``/``load``, ``print_tabular``, guard messages
and ``explain``. Afterwards no canary file may exist.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import warnings

import numpy as np

from tests.equivalence.fuzz.fuzz_report import Figure, Timer
import graph_lab
from graph_lab import F, GraphLabError, failing_guards, load, parse, save, trace, view


def payloads(canary: str) -> list[str]:
    """Texts that create ``canary`` (a file path) if anything executes them, plus quoting and markup tricks."""
    c = canary.replace("\\", "/")
    code = f"open({c!r}, 'w').close()"
    return [
        f"x'); {code}; ('",
        f'x"); {code}; ("',
        f"x\n{code}\n#",
        f"x\\\n{code}",
        f"__import__('os').system('touch {c}')",
        "{" + code + "}",
        f"x''' + str({code}) + '''",
        f'x""" + str({code}) + """',
        f"</script><script>fetch('/?{c}')</script><img src=x onerror=\"{code}\">",
        f"x\r\n    {code}\u2028{code}\x0b",
        f"%0 = input \"{c}\"\n  return %0\n}}",
        "\\u0027); " + code + " #",
        "名字 " + code,
        "a" * 300 + code,
    ]


def _graphs(p: str) -> list:
    """Graphs carrying ``p`` as an input name, a parameter name, a graph name and a source file name."""
    def by_varargs(*xs):
        return F.tanh(xs[0]) * 2.0 + xs[1]

    def with_params(x, params):
        return x @ params["w"][p] + params["b"]

    by_varargs.__name__ = p
    namespace: dict = {"np": np}
    exec(compile("def from_file(x):\n    return np.exp(x) - 1.0\n", p, "exec"), namespace)  # our own code;
    # the payload is only its file name
    w = np.ones((3, 2))
    return [
        trace(by_varargs, {p: (3,), "y": (3,)}),
        trace(with_params, {"x": (4, 3)}, {"w": {p: w}, "b": np.zeros(2)}),
        trace(namespace["from_file"], {"x": (3,)}),
        trace(lambda x: np.einsum("ij->ji", x), {"x": (2, 3)}),
    ]


def _channels(g, p: str, folder: str, tally, figure) -> None:
    text = str(g)
    back = parse(text, dict(g.param_values))
    if str(back) != text or back.input_names != g.input_names or sorted(back.param_values) != sorted(g.param_values):
        figure.failures.append(f"names did not round-trip through the IR text: {p!r:.80}")
    inputs = {n: np.ones(t.shape, t.dtype) for n, t in g.input_types().items()}
    forward = g.to_python()
    if not all(np.array_equal(a, b) for a, b in zip(forward(**inputs), graph_lab.run(g, inputs))):
        figure.failures.append(f"to_python changed a result with the payload {p!r:.80}")
    html = view(g, os.path.join(folder, "page.html")).read_text(encoding="utf-8")
    if "<" in p and (p in html or "<script>fetch" in html or "<img src=x" in html):
        figure.failures.append(f"unescaped markup in the HTML page: {p!r:.80}")
    dot = g.to_dot()
    if '"' in p and p in dot:
        figure.failures.append(f"unescaped quotes in DOT: {p!r:.80}")
    path = os.path.join(folder, "saved.npz")
    save(g, path)
    if str(load(path)) != text:
        figure.failures.append(f"save/load changed the graph: {p!r:.80}")
    with contextlib.redirect_stdout(io.StringIO()):
        g.print_tabular()
    [str(f) for f in failing_guards(g, {name: np.ones(1) for name in g.input_names})]
    tally["channels"] += 7


def _compile_with_key(p: str) -> None:
    """compile() guards on a dict key that is the payload; explain() prints the guards and stitching code."""
    def model(x, cfg):
        h = np.tanh(x) * cfg[p]
        if h.sum() > 0:
            return h
        return -h

    cfg = {p: 0.5}
    compiled = graph_lab.compile(model)
    compiled(np.ones(3), cfg)
    cfg[p] = 0.25
    compiled(np.ones(3), cfg)
    str(graph_lab.explain(model)(-np.ones(3), cfg))


def _parse_hostile_text(p: str) -> None:
    """IR text written by hand with the payload in quoted names: parsed, printed, generated code."""
    from graph_lab.ir.literals import quote
    text = (f"graph {quote(p)} {{\n  %0: f64[3] = input {quote(p)}\n  %1: f64[3] = neg %0\n  return %1\n}}\n")
    g = parse(text)
    assert g.input_names == [p]
    g.to_python()(**{p: np.ones(3)})


def run(rounds: int = 1, seed: int = 0) -> Figure:
    figure = Figure("F8 code-generation injection")
    tally = {"payloads": 0, "channels": 0, "graphs": 0}
    with Timer() as timer, tempfile.TemporaryDirectory(prefix="graph-lab-f8-") as folder, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        canary = os.path.join(folder, "CANARY")
        exec(f"open({canary!r}, 'w').close()")  # the control: the payloads' code does make the canary when run
        live = os.path.exists(canary)
        os.remove(canary)
        if not live:
            figure.failures.append("the canary control did not create the file: the check would prove nothing")
        for _ in range(rounds):
            for p in payloads(canary):
                tally["payloads"] += 1
                try:
                    for g in _graphs(p):
                        tally["graphs"] += 1
                        _channels(g, p, folder, tally, figure)
                    _compile_with_key(p)
                    _parse_hostile_text(p)
                except GraphLabError:  # a refusal is allowed (and counted); running the payload never is
                    tally["refused"] = tally.get("refused", 0) + 1
                if os.path.exists(canary):
                    figure.failures.append(f"the payload ran: {p!r:.120}")
                    os.remove(canary)
    figure.seconds = timer.seconds
    figure.add("payloads", tally["payloads"])
    figure.add("graphs carrying them", tally["graphs"])
    figure.add("channel checks (text, parse, to_python, view, dot, save/load, tabular)", tally["channels"])
    figure.add("refusals (GraphLabError)", tally.get("refused", 0))
    figure.add("canary files created", sum(1 for f in figure.failures if f.startswith("the payload ran")))
    return figure
