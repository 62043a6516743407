"""Compile time against graph size: capture + backend time per node, from 100 to 100,000 nodes.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_compile_scaling.py [--max NODES] [--backend auto|codegen]

An unrolled Python loop makes a graph as long as its trip count: each program below is captured by
``graph_lab.compile`` once per size (a fresh compiled function each time), and the time capture took (bytecode to
graph and guards) and the time the backend took (passes, buffer planning, code generation, Python's compile of
the generated code, kernels) are divided by the graph's node count. Flat columns mean compile time linear in the
graph's size; a column that grows with the size is a super-linear step. Times are process CPU time (the machine
may be shared), one run per size after a warm-up on the smallest.

- ``chain``: ``x = x * 1.0001 + 0.5`` (two elementwise ops per iteration, small arrays);
- ``stencil``: ``B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])`` and back, writes into the arguments (slices,
  functionalized updates, write-backs);
- ``scalars``: ``t += np.tanh(a[i % n, i % n])`` (element reads and scalar arithmetic).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time

import numpy as np

from harness import machine

import graph_lab
from graph_lab.console import print_header, print_table
from graph_lab.frontends.dynamo import loop_regions
from graph_lab.frontends.dynamo.runtime import CompiledFunction

# The programs are long unrolled loops on purpose (graph size is what is measured): loop regions off, else chain's
# and stencil's loops would be kept as one fori_loop region of a few nodes (bench_loop_regions.py measures that).
loop_regions.MIN_TRIPS = sys.maxsize


def chain(x, steps):
    for _ in range(steps):
        x = x * 1.0001 + 0.5
    return x


def stencil(A, B, steps):
    for _ in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def scalars(a, steps):
    t = 0.0
    n = a.shape[0]
    for i in range(steps):
        t += np.tanh(a[i % n, i % n])
    return t


PROGRAMS = {
    # name: (function, nodes per step (about), arguments for a number of steps)
    "chain": (chain, 2, lambda steps: (np.ones(16), steps)),
    "stencil": (stencil, 14, lambda steps: (np.ones(64), np.ones(64), steps)),
    "scalars": (scalars, 3, lambda steps: (np.ones((8, 8)), steps)),
}


def compile_once(fn, args, backend: str) -> tuple[int, float, float]:
    """(nodes, capture seconds, backend seconds) of one fresh capture of ``fn(*args)``."""
    cf = CompiledFunction(fn, backend=backend)
    gc.collect()
    started = time.process_time()
    cf(*args)
    total = time.process_time() - started
    segments = [e.segment for e in cf.last_events]
    nodes = sum(len(s.graph.nodes) for s in segments)
    wall_capture = sum(s.compile_seconds for s in segments)
    wall_backend = sum(s.backend_seconds for s in segments)
    wall = max(wall_capture + wall_backend, 1e-12)
    # (the segments' times are wall time: split the call's CPU time in their proportion)
    return nodes, total * wall_capture / wall, total * wall_backend / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=100_000, help="the largest graph, in nodes")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--only", default=None, help="one program: " + ", ".join(PROGRAMS))
    args = parser.parse_args()
    print_header("compile time per node against graph size")
    print(f"machine: {machine()}; graph_lab {graph_lab.__version__}; backend={args.backend}; process CPU time\n")
    rows = []
    for name, (fn, per_step, make) in PROGRAMS.items():
        if args.only and name != args.only:
            continue
        compile_once(fn, make(10), args.backend)  # warm-up: imports, the cost model's calibration
        size = 100
        while size <= args.max:
            nodes, capture, backend = compile_once(fn, make(max(1, size // per_step)), args.backend)
            rows.append([name, f"{nodes:,}", f"{capture * 1e6 / nodes:.1f}", f"{backend * 1e6 / nodes:.1f}",
                         f"{(capture + backend) * 1e6 / nodes:.1f}", f"{capture + backend:.2f} s"])
            size *= 10
    print_table(["program", "nodes", "capture us/node", "backend us/node", "total us/node", "total"], rows)


if __name__ == "__main__":
    main()
