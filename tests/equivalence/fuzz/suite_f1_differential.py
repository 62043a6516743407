"""F1 differential: random programs x 3 inputs through every way (frontend x pipeline x backend) vs eager NumPy.

Counts mismatches (a call whose result differs), crashes (an exception eager code did not raise), refusals
(the documented TraceError) and discarded programs (eager code raised: a generator bug). Each failure is
shrunk to a small standalone reproducer.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from tests.equivalence.fuzz.fuzz_report import Figure, Timer
from graph_lab.ops import SOURCE_OPS, Op
from graph_lab.testing.differential import default_calls, differential, reproducer
from graph_lab.testing.generator import Options, generate
from graph_lab.testing.program import If, Line
from graph_lab.testing.shrink import minimize
from graph_lab.testing.ways import USER_WAYS, WAYS, way

ALL_WAYS = WAYS + USER_WAYS
"""Every frontend x pipeline x backend, and ``graph_lab.compile(fn)`` called as a user calls it, compared
strictly (types, aliasing, flags: ``graph_lab/testing/strict.py``)."""

CALLS_PER_PROGRAM = 3
MUTATION = Options(mutation=True)
"""Every third program writes in place (into its arguments, fresh arrays, views) and may get aliasing arguments;
their final contents are compared too."""


def options_for(seed: int, options: Options = Options()) -> Options:
    """The generator's options for ``seed``: a third of the default programs write in place."""
    return MUTATION if seed % 3 == 0 and options == Options() else options


def run_chunk(seeds: range, options: Options = Options()) -> dict:
    """Plain counts for some seeds (picklable, so chunks can run in worker processes)."""
    tally: Counter = Counter()
    ops: set[str] = set()
    failures: list[tuple[int, str]] = []
    for seed in seeds:
        program = generate(seed, options_for(seed, options))
        verdict = differential(program, ALL_WAYS)
        if verdict.discarded:
            tally["discarded"] += 1
            continue
        tally["programs"] += 1
        tally["data-dependent programs"] += any(isinstance(s, If) and s.data for s in program.body)
        tally["writing programs"] += any(isinstance(s, Line) and "write" in s.ops for s in program.body)
        tally["aliasing programs"] += bool(program.aliases)
        for o in verdict.outcomes:
            tally[o.status] += 1
            tally["calls compared"] += CALLS_PER_PROGRAM if o.status == "ok" else max(o.call, 0)
            tally[f"{o.status} {o.way.split('/')[0]}"] += 1
            if o.way.startswith("user/"):
                tally[f"strict {o.status}"] += 1
                tally["strict calls compared"] += CALLS_PER_PROGRAM if o.status == "ok" else max(o.call, 0)
            ops |= o.ops
            if o.status in ("mismatch", "crash"):
                failures.append((seed, o.way))
    return {"tally": tally, "ops": ops, "failures": failures}


def run(count: int, seed: int = 0, jobs: int = 1, shrink_at_most: int = 3) -> Figure:
    figure = Figure("F1 differential")
    with Timer() as timer:
        parts = in_chunks(run_chunk, seed, count, jobs)
        tally = sum((p["tally"] for p in parts), Counter())
        ops = set().union(*(p["ops"] for p in parts))
        failures = [f for p in parts for f in p["failures"]]
        table_ops = {op.value for op in Op if op not in SOURCE_OPS}
        figure.add("programs generated", count)
        figure.add("programs run (not discarded)", tally["programs"])
        figure.add("discarded (eager raised)", tally["discarded"])
        figure.add("with a data-dependent if", tally["data-dependent programs"])
        figure.add("with in-place writes / aliasing arguments",
                   f"{tally['writing programs']} / {tally['aliasing programs']}")
        figure.add("ways", f"{len(ALL_WAYS)} ({', '.join(w.name for w in WAYS[:2])}, ..., "
                           f"{', '.join(w.name for w in USER_WAYS)})")
        figure.add("program x way runs", tally["ok"] + tally["mismatch"] + tally["crash"] + tally["refused"])
        figure.add("calls compared", tally["calls compared"])
        figure.add("mismatches", tally["mismatch"])
        figure.add("crashes", tally["crash"])
        figure.add("strict ways: calls compared / mismatches / crashes",
                   f"{tally['strict calls compared']} / {tally['strict mismatch']} / {tally['strict crash']}")
        figure.add("refusals (TraceError, ScriptError)", tally["refused"])
        figure.add("refusals by frontend", ", ".join(f"{w.frontend.name} {tally['refused ' + w.frontend.name]}"
                                                     for w in WAYS if w.pipeline.name == "none" and
                                                     w.backend.name == "interpret"))
        figure.add("ops of the table exercised", f"{len(ops & table_ops)} of {len(table_ops)}")
        add_failures(figure, failures, _reproduce, shrink_at_most)
    figure.seconds = timer.seconds
    return figure


def in_chunks(work, seed: int, count: int, jobs: int, size: int = 250) -> list:
    """``work(seeds)`` over the seeds from ``seed`` in chunks of ``size``, in ``jobs`` worker processes."""
    chunks = [range(s, min(s + size, seed + count)) for s in range(seed, seed + count, size)]
    if jobs <= 1:
        return [work(c) for c in chunks]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(work, chunks))


def add_failures(figure: Figure, failures: list[tuple[int, str]], reproduce, shrink_at_most: int) -> None:
    """The first failures as shrunk reproducers (``reproduce(seed, way name)``), the others by seed and way."""
    for failure_seed, way_name in failures[:shrink_at_most]:
        figure.failures.append(reproduce(failure_seed, way_name))
    figure.failures += [f"seed {s}: {w}" for s, w in failures[shrink_at_most:]]


def _reproduce(seed: int, way_name: str) -> str:
    w = way(way_name)
    small, outcome = minimize(generate(seed, options_for(seed)), w)
    return reproducer(small, way_name, max(outcome.call, 0) if outcome else 0, default_calls(small))
