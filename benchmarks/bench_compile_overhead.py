"""Added cost of a cache hit: the compiled gelu_mlp on [4, 8] inputs vs calling it eagerly.

Interleaved rounds, median of 7; each round times 2000 calls of each. Prints microseconds per call and the ratio,
for compile()'s fast path (one generated function: guards, graph, result) and, for comparison, for its general
path (the same cache entry reached through FrameInputs, the entry's guard function, the segment and its recipes).
Then the same for a function with a graph break (an ``if`` on data, and a ``print`` before it: cache hits of
those take the general path, graph by graph, with the break instructions run as Python).
"""

from __future__ import annotations

import math
import platform
import statistics
import time

import numpy as np

import graph_lab
from graph_lab import F
from graph_lab.console import print_table


def gelu_mlp(x, p):
    h = x @ p["W1"]
    g = 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return g @ p["W2"]


def branchy(x, w):
    h = np.tanh(x @ w)
    if h.sum() > 0:  # a branch on data: two graphs, the jump decided in Python
        return h * 2.0
    return -h


class Quiet:
    """A stand-in for sys.stdout whose write does nothing (the print stays a call, as in eager code)."""

    def write(self, text):
        return len(text)


QUIET = Quiet()


def logged(x, w):
    print("step", file=QUIET)  # a side effect: one more break
    h = np.tanh(x @ w)
    if h.sum() > 0:
        return h * 2.0
    return -h


def per_call_us(fn, args, n=2000) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    rng = np.random.default_rng(0)
    p = {"W1": rng.standard_normal((8, 16)), "W2": rng.standard_normal((16, 8))}
    x = rng.standard_normal((4, 8))
    compiled = graph_lab.compile(gelu_mlp)
    general = graph_lab.compile(gelu_mlp)
    for cf in (compiled, general):  # 64 elements: no kernel, the same NumPy calls in the same order
        assert np.array_equal(cf(x, p), gelu_mlp(x, p))
    assert compiled.fast_path_source.startswith("def make(")
    general._set_fast_path(None, "turned off to compare")  # (it is made again only by a capture)
    eager_t, compiled_t, general_t = [], [], []
    for _ in range(7):
        eager_t.append(per_call_us(gelu_mlp, (x, p)))
        compiled_t.append(per_call_us(compiled, (x, p)))
        general_t.append(per_call_us(general, (x, p)))
    e, c, g = (statistics.median(t) for t in (eager_t, compiled_t, general_t))
    print(f"compile() cache hit, gelu_mlp [4,8] float64 ({platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, NumPy {np.__version__})")
    print_table(["", "us per call (median of 7)", "ratio to eager"],
                [["eager NumPy", f"{e:.1f}", "1.00"], ["graph_lab.compile (cache hit)", f"{c:.1f}", f"{c / e:.2f}"],
                 ["  the same hit on the general path", f"{g:.1f}", f"{g / e:.2f}"]])
    w = rng.standard_normal((8, 8)) / 3
    rows = []
    for fn, label in ((branchy, "if on data (1 break, 2 graphs)"), (logged, "print, then if on data (2 breaks)")):
        cf = graph_lab.compile(fn)
        for sign in (1.0, -1.0, 1.0):
            assert np.array_equal(cf(sign * x, w), fn(sign * x, w))
        eager_t, compiled_t = [], []
        for _ in range(7):
            eager_t.append(per_call_us(fn, (x, w)))
            compiled_t.append(per_call_us(cf, (x, w)))
        e, c = statistics.median(eager_t), statistics.median(compiled_t)
        rows.append([label, f"{e:.1f}", f"{c:.1f}", f"{c / e:.2f}"])
    print("\ncache hits of functions with graph breaks (the general path), [4, 8] float64:")
    print_table(["function", "eager us", "compile() us", "ratio to eager"], rows)


if __name__ == "__main__":
    main()
