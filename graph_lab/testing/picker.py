"""What every template of the op menu needs: a random source, the variables in scope, and ways to make an
operand safe for an op (bounded for ``exp``, positive for ``log`` and divisors) by wrapping it in more ops.

Each variable carries an interval holding all its values (``Var.lo``, ``Var.hi``), worked out by the templates
with interval arithmetic; the wrappers below use it to decide whether an operand needs wrapping.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .program import Var

LIMIT = 1e4
"""Largest magnitude any generated value may reach (float32 stays exact enough, nothing overflows)."""

FLOAT_LITERALS = (0.5, 1.5, 2.0, -0.75, 0.25, 3.0, -1.0, 0.0)
INT_LITERALS = (1, 2, 3, -1, -2, 0)


@dataclass
class Expr:
    """One template's result: the source text, the ops it exercises, and the interval of its values."""

    text: str
    ops: tuple[str, ...]
    lo: float
    hi: float


@dataclass
class Block:
    """A template that needs a statement of its own: source lines in which ``{0}``, ``{1}``... stand for the
    names of the new variables (``{0}, {1} = np.split(h2, 2)``; ``{0} = h1.copy()`` then ``{0}[1:] += 2.0``)."""

    lines: list[str]
    targets: int
    ops: tuple[str, ...]
    lo: float
    hi: float


class Picker:
    def __init__(self, rng: random.Random, scope: list[Var]):
        self.rng = rng
        self.scope = scope

    # --- choosing

    def choice(self, options):
        return self.rng.choice(list(options))

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def array(self, pred: Callable[[Var], bool] = lambda v: True) -> Var | None:
        """An array variable satisfying ``pred``, recent ones more likely (programs become chains)."""
        found = [v for v in self.scope if not v.scalar and pred(v)]
        if not found:
            return None
        if self.chance(0.6):
            return self.rng.choice(found[-3:])
        return self.rng.choice(found)

    def numeric(self, pred: Callable[[Var], bool] = lambda v: True) -> Var | None:
        """A non-boolean array."""
        return self.array(lambda v: v.dtype.kind in "iuf" and pred(v))

    def floating(self, pred: Callable[[Var], bool] = lambda v: True) -> Var | None:
        return self.array(lambda v: v.dtype.kind == "f" and pred(v))

    def boolean(self) -> Var | None:
        return self.array(lambda v: v.dtype.kind == "b")

    def partner(self, x: Var, pred: Callable[[Var], bool] = lambda v: True) -> Var | None:
        """An array whose shape broadcasts with ``x``'s to ``x``'s shape."""
        return self.array(lambda v: pred(v) and broadcasts_to(v.shape, x.shape))

    def scalar_var(self) -> Var | None:
        found = [v for v in self.scope if v.scalar]
        return self.rng.choice(found) if found else None

    def literal(self, integer: bool) -> tuple[str, float, float]:
        """A Python number; a third of the time one that rewrite rules look for (0, -0.0, 1, -1)."""
        if self.chance(1 / 3):
            value = self.choice((0, 1, -1) if integer else (0.0, -0.0, 1.0, -1.0))
        else:
            value = self.choice(INT_LITERALS if integer else FLOAT_LITERALS)
        return repr(value), value, value

    def other_operand(self, x: Var, numeric: bool = True) -> tuple[str, float, float]:
        """A second operand for ``x``: another array, a Python number, a scalar taken from a tensor, or a
        constant array made by NumPy in the program."""
        roll = self.rng.random()
        if roll < 0.5:
            y = self.partner(x, lambda v: v.dtype.kind in "iuf") if numeric else self.partner(x)
            if y is not None:
                return y.name, y.lo, y.hi
        if roll < 0.6 and x.dtype.kind == "f":
            s = self.scalar_var()
            if s is not None:
                return s.name, s.lo, s.hi
        if roll < 0.7 and x.ndim and x.shape[-1]:
            n = x.shape[-1]
            return f"np.linspace(-1.0, 1.0, {n})", -1.0, 1.0
        return self.literal(integer=x.dtype.kind in "iub")

    # --- making operands safe

    def bounded(self, v: Var, limit: float) -> tuple[str, float, float]:
        """``v``, or ``np.clip(v, -limit, limit)`` when its interval reaches beyond."""
        if -limit <= v.lo and v.hi <= limit:
            return v.name, v.lo, v.hi
        bound = int(limit) if v.dtype.kind in "iu" else float(limit)
        return f"np.clip({v.name}, {-bound!r}, {bound!r})", max(v.lo, -limit), min(v.hi, limit)

    def positive(self, v: Var, limit: float = 100.0) -> tuple[str, float, float]:
        """An expression of ``v`` whose values are all > 0 (and <= about ``limit``)."""
        text, lo, hi = self.bounded(v, limit)
        if lo > 0:
            return text, lo, hi
        shift = 1 if v.dtype.kind in "iub" else 0.5
        return f"(np.abs({text}) + {shift!r})", shift, max(abs(lo), abs(hi)) + shift


def broadcasts_to(small: tuple, big: tuple) -> bool:
    try:
        return np.broadcast_shapes(small, big) == big
    except ValueError:
        return False


def corners(f: Callable[[float, float], float], a: tuple[float, float], b: tuple[float, float]) -> tuple:
    """The interval of ``f(x, y)`` for x, y in the intervals ``a`` and ``b`` (f monotone in each argument)."""
    values = [f(x, y) for x in a for y in b]
    return min(values), max(values)


def spread(*intervals: tuple[float, float]) -> tuple[float, float]:
    """The smallest interval holding all of ``intervals``."""
    return min(i[0] for i in intervals), max(i[1] for i in intervals)


def magnitude(lo: float, hi: float) -> float:
    return max(abs(lo), abs(hi))


def finite(x: float) -> float:
    return x if math.isfinite(x) else math.copysign(1e300, x)
