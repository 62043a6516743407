"""Guards: the conditions under which a captured graph may be reused.

A graph is valid for inputs of the shapes and dtypes it was traced with, and, when tracing had to turn a tensor
into a Python value (``if s > 0:``), only while that value comes out the same. Such a ``ValueGuard`` keeps the
small graph that computes the value from the inputs, the outcome seen, and the user's source line.

A graph with symbolic sizes (``f64[T,8]``) is valid for every input whose sizes bind its symbols consistently
and meet its shape guards (``ShapeGuard``): the facts about sizes its capture relied on (``T >= 2``, ``d%2 == 0``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from .ir.literals import format_expected
from .ir.symbolic import free_symbols
from .ir.source import SourceLoc
from .ir.types import TensorType

if TYPE_CHECKING:  # (for annotations only)
    from .ir.graph import Graph


def to_python(arr, kind: str):
    """A concrete array as the Python value that ``bool()``/``int()``/``float()``/``.item()`` give."""
    if kind == "bool":
        return bool(arr)
    if kind == "int":
        return int(arr)
    if kind == "float":
        return float(arr)
    if kind == "item":
        return np.asarray(arr).item()
    return np.array(arr, copy=True)


def same_outcome(a, b) -> bool:
    """The value Python needed came out the same: equal, where NaN is NaN and -0.0 is not 0.0 (a graph
    specialized on -0.0 computes ``1 / x`` as -inf)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and \
            a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")) and \
            (a.dtype.kind != "f" or bool(np.array_equal(np.signbit(a), np.signbit(b))))
    if isinstance(a, float) and isinstance(b, float):
        return type(a) is type(b) and ((a == b and math.copysign(1.0, a) == math.copysign(1.0, b)) or
                                       (a != a and b != b))
    return type(a) is type(b) and a == b


@dataclass
class ValueGuard:
    """``kind(value) == expected``, where ``graph`` computes ``value`` from the graph's inputs."""

    graph: Any
    """A graph with the same input names whose single output is the guarded value."""
    kind: str
    """How the value was used: 'bool', 'int', 'float', 'item' or 'array'."""
    expected: Any
    """The outcome seen while tracing."""
    loc: SourceLoc | None
    """The user's line that needed the value."""

    def evaluate(self, inputs: Mapping[str, object]):
        from .backends.interpret import execute
        needed = {k: v for k, v in inputs.items() if k in self.graph.input_names or k in self.graph.param_values}
        env = execute(self.graph, needed)
        return to_python(env[self.graph.outputs[0]], self.kind)

    def check(self, inputs: Mapping[str, object]) -> bool:
        try:
            return same_outcome(self.evaluate(inputs), self.expected)
        except Exception:
            return False

    def describe(self, whole: bool = False) -> str:
        """``kind(value) == expected at file.py:12: `code```. Messages show an expected array by its type only;
        ``whole=True`` writes all of it, as the printed IR must for the parser to read the guard back."""
        code = self.loc.text() if self.loc else ""
        where = f" at {self.loc}" if self.loc else ""
        if isinstance(self.expected, np.ndarray) and not whole:
            shown = f"{TensorType.of(self.expected)} [...]"
        else:
            shown = format_expected(self.expected)
        return f"{self.kind}(value) == {shown}{where}" + (f": `{code}`" if code else "")

    def lines(self, index: int) -> list[str]:
        from .ir.printer import graph_lines
        body = graph_lines(self.graph)
        return [f"guard #{index}: {self.describe(whole=True)}"] + ["  " + line for line in body]


@dataclass
class ShapeGuard:
    """A fact about the input sizes that the graph's shapes rely on, with the user's line that needed it."""

    fact: Any
    """The fact (``ir.relations.Rel``): ``d%2 == 0``, ``B == T``, ``T >= 2``."""
    loc: SourceLoc | None
    """The user's line whose capture needed the fact (None for a symbol's declared range)."""
    why: str = ""
    """The rule that needed it, in words (not part of the printed IR)."""

    def check(self, sizes: Mapping[str, int]) -> bool:
        return self.fact.holds(sizes)

    def describe(self, whole: bool = False) -> str:
        """``d%2 == 0 at model.py:12: `code```."""
        code = self.loc.text() if self.loc else ""
        where = f" at {self.loc}" if self.loc else ""
        return f"{self.fact}{where}" + (f": `{code}`" if code else "")

    def lines(self, index: int) -> list[str]:
        return [f"guard #{index}: shape {self.describe()}"]


@dataclass
class GuardFailure:
    """One reason a graph may not be reused for some inputs."""

    what: str
    """The guarded thing: an input's shape or dtype, or a value guard."""
    reason: str
    """Why it fails, in words."""
    loc: SourceLoc | None = None
    """The user's line the guard came from, if any."""

    def __str__(self) -> str:
        return f"{self.what}: {self.reason}" + (f" (guard from {self.loc})" if self.loc else "")


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
    from .backends.interpret import is_input_value
    from .ir.sizes import bind_sizes, failing_shape_guards, is_symbolic_graph, sizes_text
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
            got = guard.evaluate(inputs)
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
