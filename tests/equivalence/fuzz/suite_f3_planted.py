"""F3 planted bugs: plant each deliberately wrong op, rule, guard or emitter (planted_bugs.py) and check that
the oracles catch it: random programs through every way (with identities wrapped around expressions so the
rewrite rules fire), or F5's guard schedules for bugs in guards and caches.

The figure: how many bugs were caught, and how many programs each one took.
"""

from __future__ import annotations

import random

from tests.equivalence.fuzz.fuzz_report import Figure, Timer
from graph_lab.testing.differential import differential
from graph_lab.testing.generator import Options, generate
from graph_lab.testing.metamorphic import rewrite
from graph_lab.testing.ways import WAYS
from tests.equivalence.fuzz.planted_bugs import BUGS, Bug
from tests.equivalence.fuzz.suite_f5_guards import OPTIONS as GUARD_OPTIONS, schedules


def programs_to_catch(bug: Bug, budget: int, seed: int) -> int | None:
    """How many programs the oracle needed to see the bug (None: not caught within ``budget``)."""
    rng = random.Random(seed)
    with bug.plant():
        for k in range(budget):
            if bug.oracle == "guards":
                program = generate(seed + k, GUARD_OPTIONS)
                runs = [differential(program, WAYS, calls) for calls in schedules(program).values() if calls]
            else:
                program, _ = rewrite(generate(seed + k, Options(statements=(4, 12), focus=bug.focus)), rng, how_many=3)
                runs = [differential(program, WAYS)]
            if any(v.failures for v in runs if not v.discarded):
                return k + 1
    return None


def run(budget: int, seed: int = 0) -> Figure:
    figure = Figure("F3 planted bugs")
    caught = {}
    with Timer() as timer:
        for bug in BUGS:
            caught[bug.name] = programs_to_catch(bug, budget, seed)
            if caught[bug.name] is None:
                figure.failures.append(f"not caught within {budget} programs: {bug.name}")
    figure.seconds = timer.seconds
    figure.add("planted bugs", len(BUGS))
    figure.add("caught", sum(1 for v in caught.values() if v is not None))
    for name, programs in caught.items():
        figure.add(name, f"caught after {programs} program(s)" if programs else f"NOT caught in {budget}")
    return figure
