"""The guard records a capture writes into ``Graph.guards``: the conditions under which the graph may be reused.

A graph is valid for inputs of the shapes and dtypes it was traced with, and, when tracing had to turn a tensor
into a Python value (``if s > 0:``), only while that value comes out the same. Such a ``ValueGuard`` keeps the
small graph that computes the value from the inputs, the outcome seen, and the user's source line.

A graph with symbolic sizes (``f64[T,8]``) is valid for every input whose sizes bind its symbols consistently
and meet its shape guards (``ShapeGuard``): the facts about sizes its capture relied on (``T >= 2``, ``d%2 == 0``).

These are records, in the IR's lowest layer, because the shape rules, the parser and the printer make and read
them; checking them for some inputs runs a value guard's graph, and so is ``graph_lab.guards``, above the
backends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from .literals import format_expected
from .source import SourceLoc
from .types import TensorType


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
