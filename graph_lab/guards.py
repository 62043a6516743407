"""Checking guards: may a captured graph be reused for these inputs?

The guard records (``ValueGuard``, ``ShapeGuard``, ``GuardFailure``) are ``ir/guard_records.py``; they are
re-exported here, their public home. Checking a value guard runs its small graph on the reference interpreter,
which is why this module sits above the backends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import numpy as np

from .backends.reference import execute, is_input_value
from .ir.guard_records import GuardFailure, ShapeGuard, ValueGuard, same_outcome, to_python
from .ir.sizes import bind_sizes, failing_shape_guards, is_symbolic_graph, sizes_text
from .ir.symbolic import free_symbols

if TYPE_CHECKING:  # (for annotations only)
    from .ir.graph import Graph

__all__ = ["GuardFailure", "ShapeGuard", "ValueGuard", "check_guards", "evaluate", "failing_guards",
           "same_outcome", "to_python"]


def evaluate(guard: ValueGuard, inputs: Mapping[str, object]):
    """The value ``guard`` is about, computed from ``inputs`` by its graph, as Python saw it (``kind``)."""
    graph = guard.graph
    needed = {k: v for k, v in inputs.items() if k in graph.input_names or k in graph.param_values}
    env = execute(graph, needed)
    return to_python(env[graph.outputs[0]], guard.kind)


def failing_guards(graph: Graph, inputs: Mapping[str, object]) -> list[GuardFailure]:
    """Every guard of ``graph`` that ``inputs`` break, each saying what failed and why.

    Input names, shapes and dtypes are checked first (symbolic sizes bound, shape guards checked); value
    guards only when the inputs fit, by running each guard's small graph.

    Parameters:
        graph: a graph from any frontend.
        inputs: input name -> array, as for ``run``.

    Returns:
        The failures, in checking order; empty when the graph may be reused for ``inputs``.
    """
    symbolic = is_symbolic_graph(graph)
    failures = []
    for name, t in graph.input_types().items():
        if name not in inputs:
            failures.append(GuardFailure(f"input {name!r}", "missing"))
            continue
        x = inputs[name]
        if not is_input_value(x, t):
            failures.append(GuardFailure(f"input {name!r}", f"is a {type(x).__name__}, not an array"))
            continue
        if tuple(np.shape(x)) != t.shape and not symbolic:
            failures.append(GuardFailure(f"{name}.shape", f"is {tuple(np.shape(x))}, the graph was built for "
                                                          f"{t.shape}"))
        if np.asarray(x).dtype != t.dtype:
            failures.append(GuardFailure(f"{name}.dtype", f"is {np.asarray(x).dtype}, the graph was built for "
                                                          f"{t.dtype}"))
    if symbolic and not failures:
        sizes, problems = bind_sizes(graph, inputs)
        failures += [GuardFailure(what, why) for what, why in problems]
        for i, g in ([] if problems else failing_shape_guards(graph, sizes)):
            now = sizes_text(free_symbols(g.fact), sizes)
            failures.append(GuardFailure(f"shape guard #{i} {g.fact}", f"fails for {now}", g.loc))
    if failures:
        return failures  # value guards assume the inputs' types hold
    for i, guard in enumerate(graph.guards):
        if isinstance(guard, ShapeGuard):
            continue
        try:
            got = evaluate(guard, inputs)
        except Exception as e:
            failures.append(GuardFailure(f"guard #{i}", f"could not be evaluated: {e}", guard.loc))
            continue
        if not same_outcome(got, guard.expected):
            failures.append(GuardFailure(f"guard #{i} {guard.describe()}", f"now gives {got!r}", guard.loc))
    return failures


def check_guards(graph: Graph, inputs: Mapping[str, object]) -> bool:
    """True when ``graph`` may be reused for ``inputs``: names, shapes, dtypes and every guard hold.

    Parameters:
        graph: a graph from any frontend.
        inputs: input name -> array, as for ``run``.

    Returns:
        ``not failing_guards(graph, inputs)``; ``failing_guards`` says which guard failed and why.
    """
    return not failing_guards(graph, inputs)
