"""Loop regions against unrolled loops: compile time and run time of the corpus's loop kernels.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_loop_regions.py [--quick] [--cpu-time] [--only NAME]

For each corpus kernel whose ``for i in range(n)`` loop compile() can keep as a ``fori_loop`` region (and two
stencils with many more steps), the kernel is compiled twice: with the loop a region whatever its size
(``loop_regions.MIN_UNROLLED_NODES`` set to 0) and with loop regions turned off (``loop_regions.MIN_TRIPS`` set
past any trip count: the loop unrolled, as before loop regions). The last column says what compile() does by
default (a region only where unrolled the loop would be ``MIN_UNROLLED_NODES`` nodes or more). Both must give eager's results bit for bit (checked first). Then the first call of each (capture
and backend, the compile time) and the cache hits, eager and both compiled versions interleaved in one run (median
of single calls, each from the same inputs restored untimed), as bench_corpus.py times them.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # (as bench_corpus.py: BLAS on one thread)

from harness import fmt_time, interleaved, machine

import graph_lab
from corpus import CORPUS, Kernel
from corpus import stencils as st
from corpus.check import quietly, restore, verdict
from graph_lab.console import print_header, print_table
from graph_lab.frontends.dynamo import loop_regions

LONG = [
    Kernel("jacobi_1d, 1000 steps", "stencil", st.jacobi_1d, lambda n, rng: st.jacobi_1d_inputs(n, rng)[:2] + (1000,),
           400, 40),
    Kernel("heat_3d, 100 steps", "stencil", st.heat_3d, lambda n, rng: st.heat_3d_inputs(n, rng)[:2] + (100,),
           24, 8),
    Kernel("seidel_rows, 200 rows", "stencil", st.seidel_rows, st.seidel_rows_inputs, 200, 8),
]


class Setting:
    """One of loop_regions' thresholds set while capturing."""

    def __init__(self, name: str, value: int):
        self.name, self.value = name, value

    def __enter__(self):
        self.saved = getattr(loop_regions, self.name)
        setattr(loop_regions, self.name, self.value)

    def __exit__(self, *exc):
        setattr(loop_regions, self.name, self.saved)


def Unrolled() -> Setting:
    """Loop regions off (every loop unrolled, as compile() did before them)."""
    return Setting("MIN_TRIPS", sys.maxsize)


def AnySize() -> Setting:
    """A loop kept as a region however small it is unrolled."""
    return Setting("MIN_UNROLLED_NODES", 0)


def keeps_a_region(kernel: Kernel) -> bool:
    report = graph_lab.explain(kernel.fn)(*kernel.inputs())
    return any("kept as a fori_loop region" in note for note in report.loops)


def first_call(kernel: Kernel, unrolled: bool) -> tuple[object, float]:
    """A compiled function of the kernel, after its first call, and how long that call took."""
    cf = graph_lab.compile(kernel.fn)
    args = kernel.inputs()
    start = time.perf_counter()
    with Unrolled() if unrolled else AnySize():
        quietly(cf, args)
    return cf, time.perf_counter() - start


def measure(kernel: Kernel, quick: bool, clock) -> list[str]:
    region, region_first = first_call(kernel, unrolled=False)
    unrolled, unrolled_first = first_call(kernel, unrolled=True)
    by_default = "region" if keeps_a_region(kernel) else "unrolled"
    with AnySize():
        status = verdict(kernel, region)
    with Unrolled():
        status_unrolled = verdict(kernel, unrolled)
    variants = {"eager": kernel.fn, "unrolled": unrolled, "region": region}
    pristine = kernel.inputs()
    working = {name: kernel.inputs() for name in variants}
    calls = {name: (lambda fn=fn, args=working[name]: quietly(fn, args)) for name, fn in variants.items()}
    before = {name: (lambda args=working[name]: restore(args, pristine)) for name in variants}
    medians = interleaved(calls, rounds=7 if quick else 15, number=1, before=before, clock=clock)
    with AnySize():
        nodes = [sum(g.count() for g in graph_lab.explain(kernel.fn)(*kernel.inputs()).graphs)]
    with Unrolled():
        nodes.append(sum(g.count() for g in graph_lab.explain(kernel.fn)(*kernel.inputs()).graphs))
    ratio = medians["eager"] / medians["region"], medians["eager"] / medians["unrolled"]
    return [kernel.name, f"{nodes[1]} -> {nodes[0]}", fmt_time(unrolled_first), fmt_time(region_first),
            f"{unrolled_first / region_first:.1f}x", fmt_time(medians["eager"]), f"{ratio[1]:.2f}x",
            f"{ratio[0]:.2f}x", status if status == status_unrolled else f"{status} / unrolled: {status_unrolled}",
            by_default]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cpu-time", action="store_true")
    parser.add_argument("--only", help="the kernels whose names start with one of these (separated by commas)")
    opts = parser.parse_args(argv)
    clock = time.process_time if opts.cpu_time else time.perf_counter
    print(f"loop regions against unrolled loops\nmachine: {machine()}")
    prefixes = tuple((opts.only or "").split(","))
    kernels = [k for k in CORPUS + LONG if k.name.startswith(prefixes) and not k.data_dependent]
    with AnySize():
        kernels = [k for k in kernels if keeps_a_region(k)]
    rows = [measure(k, opts.quick, clock) for k in kernels]
    print_header("compile() with loops as regions and unrolled")
    print_table(["kernel", "ops unrolled -> region", "first call unrolled", "first call region", "compile speed-up",
                 "eager", "eager/unrolled", "eager/region", "status", "by default"], rows)
    speedups = [float(r[4][:-1]) for r in rows]
    print(f"geometric mean compile speed-up: {math.exp(sum(map(math.log, speedups)) / len(speedups)):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
