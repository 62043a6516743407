"""F5 guards: change one guarded property between calls and check that no way returns a stale result.

Each program reads Python state (a global ``G``, a closure cell ``k``, a Python argument ``c``, an attribute
``state.scale``, the list ``items`` it loops over) and may branch on tensor data. For each property the
program is called three times: as generated, with the property changed, and as generated again (the first
cache entry must be found again, not a stale one). A change of shape or dtype is only tried on programs that
still run eagerly with the new types.

``trace`` is checked on shapes, dtypes and data-dependent branches only: it bakes Python values into the graph
by design (``Frontend.sees_python_state`` is False), which is the trap the course teaches, not a bug.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

import numpy as np

from tests.equivalence.fuzz.fuzz_report import Figure, Timer
from graph_lab.testing.differential import Call, differential, observe_calls, reproducer
from graph_lab.testing.generator import Options, generate
from graph_lab.testing.program import If, Program
from graph_lab.testing.ways import WAYS

OPTIONS = Options(probes=True, mutation=True)


def _grown(shape: tuple) -> tuple:
    return tuple(d + 1 if d > 1 else d for d in shape)


def _with_types(program: Program, k: int, grow: bool = False, flip_dtype: bool = False) -> list:
    shapes = {a.name: _grown(a.shape) for a in program.args} if grow else None
    dtypes = {a.name: (np.float32 if a.dtype == np.float64 else np.float64)
              for a in program.args if a.dtype.kind == "f"} if flip_dtype else None
    return program.inputs(k, shapes, dtypes)


def _negated(args: list) -> list:
    return [-a if isinstance(a, np.ndarray) and a.dtype.kind in "if" else a for a in args]


def _set(name: str, value) -> Callable[[dict], None]:
    return lambda ns: ns.__setitem__(name, value)


def _closure(value) -> Callable[[dict], None]:
    def mutate(ns):
        fn = ns["program"]
        fn.__closure__[fn.__code__.co_freevars.index("k")].cell_contents = value
    return mutate


def _attribute(value) -> Callable[[dict], None]:
    return lambda ns: setattr(ns["state"], "scale", value)


def _items(n: int) -> Callable[[dict], None]:
    return lambda ns: ns.__setitem__("items", [0.5, 1.25, 0.75][:n])


def schedules(program: Program) -> dict[str, list[Call] | None]:
    """For each property: three calls (as generated, changed, as generated), or None when it does not apply."""
    base = program.inputs(0)
    text = program.source()
    c_changed = base[:-1] + [-0.5]
    data_if = any(isinstance(s, If) and s.data for s in program.body)
    return {
        "shape": [Call(base), Call(_with_types(program, 0, grow=True)), Call(base)],
        "dtype": [Call(base), Call(_with_types(program, 0, flip_dtype=True)), Call(base)]
        if any(a.dtype.kind == "f" for a in program.args) else None,
        "Python argument": [Call(base), Call(c_changed), Call(base)] if " * c" in text else None,
        "global": [Call(base), Call(base, _set("G", -1.5)), Call(base, _set("G", 0.5))] if " * G" in text else None,
        "closure cell": [Call(base), Call(base, _closure(2.0)), Call(base, _closure(0.25))] if " + k" in text else None,
        "attribute": [Call(base), Call(base, _attribute(0.25)), Call(base, _attribute(1.5))]
        if "state.scale" in text else None,
        "container length": [Call(base), Call(base, _items(3)), Call(base, _items(2))] if "in items" in text else None,
        "data-dependent branch": [Call(base), Call(_negated(base)), Call(base)] if data_if else None,
    }


PYTHON_STATE = {"Python argument", "global", "closure cell", "attribute", "container length"}


def run(count: int, seed: int = 0) -> Figure:
    figure = Figure("F5 guards")
    checked, runs, stale, crashes, skipped = Counter(), Counter(), Counter(), Counter(), Counter()
    with Timer() as timer:
        for s in range(seed, seed + count):
            program = generate(s, OPTIONS)
            for prop, calls in schedules(program).items():
                if calls is None:
                    continue
                for call in calls:  # aliasing arguments stay aliasing on every call
                    call.views = program.aliases
                try:
                    observe_calls(program.namespace(), calls)
                except Exception:
                    skipped[prop] += 1  # e.g. a reshape to fixed sizes: eager code itself needs these shapes
                    continue
                ways = [w for w in WAYS if w.frontend.sees_python_state or prop not in PYTHON_STATE]
                verdict = differential(program, ways, calls)
                checked[prop] += 1
                for o in verdict.outcomes:
                    runs[prop] += 1
                    if o.status == "mismatch":
                        stale[prop] += 1
                    if o.status == "crash":
                        crashes[prop] += 1
                    if o.status in ("mismatch", "crash"):
                        figure.failures.append(f"{prop}, {o.way}: {o.detail}\n" + reproducer(program, o.way, o.call,
                                                                                            calls))
    figure.seconds = timer.seconds
    figure.add("programs", count)
    for prop in schedules(generate(seed, OPTIONS)):
        figure.add(f"{prop}: programs / way runs / stale / crashes",
                   f"{checked[prop]} / {runs[prop]} / {stale[prop]} / {crashes[prop]}"
                   + (f"  ({skipped[prop]} not valid eagerly)" if skipped[prop] else ""))
    figure.add("stale results", sum(stale.values()))
    figure.add("crashes", sum(crashes.values()))
    return figure
