"""F6 side effects: programs that print, append to a list, write attributes and a global; every way that keeps
side effects must do the same ones, in the same order, on every call.

After each call the printed text, ``log``, ``state`` and ``COUNTER`` are compared with eager code's. The
programs print ``len(log)`` and ``state.calls`` too, so an effect run out of order changes the text. ``trace``
runs effects once, while tracing: how many programs it would silently change is reported, not failed (it
is the trap the course teaches).
"""

from __future__ import annotations

from collections import Counter

from tests.equivalence.fuzz.fuzz_report import Figure, Timer
from graph_lab.testing.differential import differential, reproducer
from graph_lab.testing.generator import Options, generate
from graph_lab.testing.program import Line
from graph_lab.testing.ways import WAYS

OPTIONS = Options(side_effects=True, mutation=True, statements=(4, 12))


def _effects(body) -> int:
    count = 0
    for s in body:
        if isinstance(s, Line):
            count += s.effect
        else:
            count += _effects(getattr(s, "body", [])) + _effects(getattr(s, "orelse", []))
    return count


def run(count: int, seed: int = 0) -> Figure:
    figure = Figure("F6 side effects")
    tally, lost_by_trace = Counter(), set()
    with Timer() as timer:
        for s in range(seed, seed + count):
            program = generate(s, OPTIONS)
            effects = _effects(program.body)
            if not effects:
                continue
            verdict = differential(program, WAYS)
            if verdict.discarded:
                tally["discarded"] += 1
                continue
            tally["programs"] += 1
            tally["effect statements"] += effects
            for o in verdict.outcomes:
                keeps = next(w for w in WAYS if w.name == o.way).frontend.keeps_side_effects
                if not keeps:
                    if o.status == "mismatch" or o.effects_differ:
                        lost_by_trace.add(s)
                    continue
                tally["runs"] += 1
                tally[o.status] += 1
                if o.status in ("mismatch", "crash"):
                    figure.failures.append(f"{o.way}: {o.detail}\n" + reproducer(program, o.way, max(o.call, 0)))
    figure.seconds = timer.seconds
    figure.add("programs with side effects", tally["programs"])
    figure.add("side-effect statements", tally["effect statements"])
    figure.add("discarded", tally["discarded"])
    figure.add("program x way runs (ways that keep effects)", tally["runs"])
    figure.add("different effects or order", tally["mismatch"])
    figure.add("crashes", tally["crash"])
    figure.add("programs trace changes (effects lost: expected)", len(lost_by_trace))
    return figure
