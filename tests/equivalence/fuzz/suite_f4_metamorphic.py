"""F4 metamorphic: wrap expressions in identities (``x * 1``, ``-(-x)``, a double transpose, a reshape split in
two...) and check that the rewritten program, run eagerly and through every way, gives exactly what the
original program gives eagerly.

The identities keep every bit (metamorphic.py says why ``x + 0.0`` is not one for floats), so the comparison
is as strict as the way allows: bit for bit for the exact ways.
"""

from __future__ import annotations

import random
from collections import Counter

from tests.equivalence.fuzz.fuzz_report import Figure, Timer
from graph_lab.equivalence import compare
from graph_lab.testing.differential import default_calls, differential, observe_calls, reproducer
from graph_lab.testing.generator import generate
from graph_lab.testing.metamorphic import rewrite
from graph_lab.testing.ways import WAYS, Way


def run(count: int, seed: int = 0, ways: list[Way] | None = None) -> Figure:
    figure = Figure("F4 metamorphic")
    ways = ways or WAYS
    rng = random.Random(seed)
    applied, tally = Counter(), Counter()
    with Timer() as timer:
        for s in range(seed, seed + count):
            original = generate(s)
            rewritten, names = rewrite(original, rng, how_many=3)
            if not names:
                continue
            applied.update(names)
            calls = default_calls(original)
            try:
                want = observe_calls(original.namespace(), calls)
                got = observe_calls(rewritten.namespace(), calls)
            except Exception:
                tally["discarded"] += 1
                continue
            for w_call, g_call in zip(want, got):  # the identities hold in NumPy itself, bit for bit
                mismatch = compare(w_call.result, g_call.result, exact=True)
                if mismatch:
                    figure.failures.append(f"{', '.join(names)} is not an identity in eager NumPy: {mismatch}")
                    break
            verdict = differential(rewritten, ways, reference=original)
            tally["variants"] += 1
            for o in verdict.outcomes:
                tally[o.status] += 1
                if o.status in ("mismatch", "crash"):
                    figure.failures.append(f"{', '.join(names)} under {o.way}: {o.detail}\n"
                                           + reproducer(rewritten, o.way, max(o.call, 0)))
    figure.seconds = timer.seconds
    figure.add("programs rewritten", tally["variants"])
    figure.add("discarded (the rewritten program raised eagerly)", tally["discarded"])
    figure.add("identities applied", sum(applied.values()))
    figure.add("variant x way runs", tally["ok"] + tally["mismatch"] + tally["crash"] + tally["refused"])
    figure.add("mismatches against the original", tally["mismatch"])
    figure.add("crashes", tally["crash"])
    figure.add("refusals (TraceError, ScriptError)", tally["refused"])
    figure.add("identities used", ", ".join(f"{n} {c}" for n, c in applied.most_common()))
    return figure
