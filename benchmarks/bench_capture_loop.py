"""The capture loop's speed-up, measured: capture time per instruction of compile()'s reference loop
(``capture_loop.capture_once``, one ``Frame.step`` per instruction) and of the inlined loop it runs
(``capture_loop_inlined.capture_once_inlined``), interleaved, and the cost of a cache hit with and without the
generated fast path (``cache_hit_fast_path.py``) beside eager. The figures quoted in those modules' docstrings come
from this script.

    PYTHONPATH=. python3 benchmarks/bench_capture_loop.py [N]
"""

from __future__ import annotations

import statistics
import sys
import timeit

import numpy as np

from harness import machine

import graph_lab
from graph_lab.frontends.dynamo.capture_loop import capture_once
from graph_lab.frontends.dynamo.capture_loop_inlined import capture_once_inlined
from graph_lab.frontends.dynamo.runtime import CompiledFunction


def chain(x, ws):
    for w in ws:
        x = x + np.tanh(x @ w)
    return x


def branchy(x, n):
    for i in range(n):
        if i % 3 == 0:
            x = x * 2.0
        else:
            x = x - np.sin(x)
    return x


def small(x, w):
    return np.tanh(x @ w) + x


def capture_seconds(loop, fn, args) -> tuple[float, int]:
    """Seconds of one capture of ``fn`` (the bytecode interpreted into a graph and guards, no backend) with
    ``loop``, and the number of instructions it ran."""
    CompiledFunction.capture_loop = staticmethod(loop)
    try:
        compiled = graph_lab.compile(fn, backend="interpret")
        compiled(*args)
    finally:
        CompiledFunction.capture_loop = staticmethod(capture_once_inlined)
    seg = compiled.cache[compiled._first][0]
    return seg.compile_seconds, len(seg.step_log)


def capture_costs(n: int, rounds: int = 25) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8))
    ws = [rng.standard_normal((8, 8)) / 3 for _ in range(n)]
    for name, fn, args in ((f"chain of {n} layers", chain, (x, ws)), (f"loop of {n} with a branch", branchy, (x, n))):
        times: dict[str, list[float]] = {"reference": [], "inlined": []}
        for r in range(rounds + 3):
            for which, loop in (("reference", capture_once), ("inlined", capture_once_inlined)):
                seconds, steps = capture_seconds(loop, fn, args)
                if r >= 3:  # (three warm-up rounds)
                    times[which].append(seconds)
        ref, inl = statistics.median(times["reference"]), statistics.median(times["inlined"])
        print(f"{name}: {steps} instructions; reference {ref / steps * 1e6:.2f} us per instruction, "
              f"inlined {inl / steps * 1e6:.2f} us; the inlined loop saves {(ref - inl) / ref * 100:.0f}%")


def hit_costs(rounds: int = 15) -> None:
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 8)), rng.standard_normal((8, 8)) / 3
    ws = [rng.standard_normal((8, 8)) / 3 for _ in range(16)]
    for name, fn, args in (("small (3 ops)", small, (x, w)), ("chain of 16 layers", chain, (x, ws))):
        compiled = graph_lab.compile(fn)
        compiled(*args)
        compiled(*args)  # (the fast path is made on the call after the capture)
        ways = {"eager": lambda: fn(*args), "fast path": lambda: compiled(*args),
                "general path": lambda: compiled._call(args, {})}
        times: dict[str, list[float]] = {k: [] for k in ways}
        for _ in range(rounds):
            for k, f in ways.items():
                times[k].append(min(timeit.repeat(f, number=200, repeat=3)) / 200)
        m = {k: statistics.median(v) for k, v in times.items()}
        print(f"cache hit of {name}: eager {m['eager'] * 1e6:.1f} us, fast path {m['fast path'] * 1e6:.1f} us, "
              f"general path {m['general path'] * 1e6:.1f} us; the fast path saves "
              f"{(m['general path'] - m['fast path']) / m['general path'] * 100:.0f}% of a hit")


if __name__ == "__main__":
    print(f"machine: {machine()}\n")
    capture_costs(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
    hit_costs()
