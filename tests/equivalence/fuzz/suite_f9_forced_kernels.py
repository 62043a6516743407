"""F9 forced kernels: random programs with every fused kernel and C program forced (``fuse="always"``), vs eager.

F1's fused ways keep the cost model's choice, which leaves the generator's small arrays to NumPy calls. Here each
graph runs its elementwise groups as C kernels and its runs of slice updates as C programs
(``graph_lab/testing/forced_kernels.py``), through compile() with its write-backs donated (the graph writes into
the caller's arrays) and through trace. Two programs in three write in place (``Options.mutation``: slice
updates of arguments in loops, reads of the array being written, overlapping windows, aliasing arguments).
Results and the arguments' final contents are compared bit for bit, except that a program whose graphs call
libm (``TRANSCENDENTAL``) and differs is judged by the fused backend's documented bound (``GRAPH_ULP``), or
failing that by the per-dtype tolerance table (``forced_kernels.judge``).
"""

from __future__ import annotations

from collections import Counter

from tests.equivalence.fuzz.fuzz_report import Figure, Timer
from tests.equivalence.fuzz.suite_f1_differential import add_failures, in_chunks
from graph_lab.testing.differential import default_calls, reproducer
from graph_lab.testing.forced_kernels import FORCED_WAYS, RAN, judge
from graph_lab.testing.generator import Options, generate
from graph_lab.testing.shrink import minimize
from graph_lab.testing.ways import way

PLAIN, WRITING = Options(), Options(mutation=True)


def options_for(seed: int) -> Options:
    return PLAIN if seed % 3 == 1 else WRITING


def run_chunk(seeds: range) -> dict:
    tally: Counter = Counter()
    failures: list[tuple[int, str]] = []
    before = RAN.copy()
    for seed in seeds:
        verdict = judge(generate(seed, options_for(seed)))
        if verdict.discarded:
            tally["discarded"] += 1
            continue
        tally["programs"] += 1
        tally["aliasing programs"] += bool(verdict.program.aliases)
        for o in verdict.outcomes:
            tally[o.status] += 1
            tally[getattr(o, "tolerance", "exact")] += 1
            if o.status in ("mismatch", "crash"):
                failures.append((seed, o.way))
    tally.update(RAN - before)
    return {"tally": tally, "failures": failures}


def run(count: int, seed: int = 0, jobs: int = 1, shrink_at_most: int = 3) -> Figure:
    figure = Figure("F9 forced kernels")
    with Timer() as timer:
        parts = in_chunks(run_chunk, seed, count, jobs, size=50)
        tally = sum((p["tally"] for p in parts), Counter())
        failures = [f for p in parts for f in p["failures"]]
        figure.add("programs generated", count)
        figure.add("programs run (not discarded)", tally["programs"])
        figure.add("discarded (eager raised)", tally["discarded"])
        figure.add("with aliasing arguments", tally["aliasing programs"])
        figure.add("ways", ", ".join(w.name for w in FORCED_WAYS))
        figure.add("program x way runs: bit for bit / within the fused bound / within the table",
                   f"{tally['exact']} / {tally['fused']} / {tally['table']}")
        figure.add("graphs compiled / with C kernels / with C programs",
                   f"{tally['graphs']} / {tally['graphs with C kernels']} / {tally['graphs with C programs']}")
        figure.add("mismatches", tally["mismatch"])
        figure.add("crashes", tally["crash"])
        figure.add("refusals (TraceError)", tally["refused"])
        add_failures(figure, failures, _reproduce, shrink_at_most)
    figure.seconds = timer.seconds
    return figure


def _reproduce(seed: int, way_name: str) -> str:
    w = way(way_name)
    small, outcome = minimize(generate(seed, options_for(seed)), w)
    return reproducer(small, way_name, max(outcome.call, 0) if outcome else 0, default_calls(small))
