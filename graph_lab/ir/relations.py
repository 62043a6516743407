"""Facts about sizes (``B == T``, ``d%2 == 0``, ``T >= 2``) and the two tools that prove them: interval bounds
over the symbols' ranges, and exact rational arithmetic once some divisions are known to be exact.

A ``Rel`` is kept in one normal form (``diff == 0``, ``diff != 0`` or ``diff >= 0``), so the same fact written two
ways is one object, and it prints the way a person writes it: positive terms on the left.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .symbolic import INF, Expr, atom_key, canonical, terms_of, add, evaluate, mul


_FLIP = {"==": "==", "!=": "!=", ">=": "<=", "<=": ">="}


@dataclass(frozen=True)
class Rel:
    """A fact about sizes in normal form: ``diff == 0``, ``diff != 0`` or ``diff >= 0``."""

    op: str
    """One of ``==``, ``!=``, ``>=``."""
    diff: object
    """An Expr (or int): the left side minus the right side. For ``==``/``!=`` its first coefficient is
    positive, so ``B == T`` and ``T == B`` are one fact."""

    def negate(self) -> "Rel":
        if self.op == ">=":
            return normalize(">=", add(mul(self.diff, -1), -1))
        return normalize("!=" if self.op == "==" else "==", self.diff)

    def holds(self, sizes: dict) -> bool:
        value = evaluate(self.diff, sizes)
        return value == 0 if self.op == "==" else value != 0 if self.op == "!=" else value >= 0

    def __str__(self) -> str:
        """``B == T``, ``d%2 == 0``, ``T >= 2``, ``B <= 512``: positive terms on the left."""
        terms = terms_of(self.diff)
        const = terms.pop((), 0)
        left = {m: c for m, c in terms.items() if c > 0}
        right = {m: -c for m, c in terms.items() if c < 0}
        right[()] = -const
        op = self.op
        if not left and right != {(): 0}:
            left, right, op = right, left, _FLIP[op]
            left.pop((), None)
            right = {(): const}
        return f"{_side(left)} {op} {_side(right)}"


def _side(terms: dict) -> str:
    value = canonical(terms)
    return str(value)


def normalize(op: str, diff) -> Rel:
    if op in ("==", "!=") and isinstance(diff, Expr) and diff.terms[0][1] < 0:
        diff = mul(diff, -1)
    return Rel(op, diff)


def relation(op: str, lhs, rhs) -> Rel:
    """The fact ``lhs op rhs`` (op one of ``== != < <= > >=``) in normal form."""
    if op == "<":
        return normalize(">=", add(add(rhs, mul(lhs, -1)), -1))
    if op == ">":
        return normalize(">=", add(add(lhs, mul(rhs, -1)), -1))
    if op == "<=":
        return normalize(">=", add(rhs, mul(lhs, -1)))
    if op in ("==", "!=", ">="):
        return normalize(op, add(lhs, mul(rhs, -1)))
    raise ValueError(f"unknown comparison {op!r}")



# --- proofs


def bounds(x, ranges: dict) -> tuple:
    """An interval ``(lo, hi)`` holding every value of ``x`` when each symbol stays within ``ranges``
    (name -> (lo, hi); ``hi`` may be ``math.inf``; a symbol not listed is any size, 0 and up)."""
    if not isinstance(x, Expr):
        return (x, x)
    lo = hi = 0
    for m, c in x.terms:
        a, b = (c, c)
        for atom in m:
            a, b = _interval_mul((a, b), _atom_bounds(atom, ranges))
        lo, hi = lo + a, hi + b
    return (lo, hi)


def _atom_bounds(atom: tuple, ranges: dict) -> tuple:
    if atom[0] == "sym":
        return ranges.get(atom[1], (0, INF))
    num, den = bounds(atom[1], ranges), atom[2]
    if type(den) is not int or den <= 0:
        return (-INF, INF)
    if atom[0] == "mod":
        return (0, den - 1)
    return (_floor_div(num[0], den), _floor_div(num[1], den))


def _floor_div(a, c: int):
    return a if a in (INF, -INF) else a // c


def _interval_mul(p: tuple, q: tuple) -> tuple:
    products = [_times(x, y) for x in p for y in q]
    return (min(products), max(products))


def _times(x, y):
    if x == 0 or y == 0:
        return 0  # an infinite bound times zero is zero here: the size is finite
    return x * y


def rational_terms(x, divisible: set) -> dict:
    """``x`` as a polynomial with Fraction coefficients, where each ``e // c`` and ``e % c`` known to divide
    exactly (``(e, c)`` in ``divisible``) is replaced by ``e / c`` and 0. Zero (an empty dict) proves ``x == 0``
    under those facts: the proof of ``T*d == 2*T*(d//2)`` once ``d % 2 == 0`` is known."""
    out: dict = {}
    for m, c in terms_of(x).items():
        part = {(): Fraction(c)}
        for atom in m:
            if atom[0] != "sym" and (atom[1], atom[2]) in divisible:
                factor = {} if atom[0] == "mod" else {k: v / atom[2] for k, v in
                                                      rational_terms(atom[1], divisible).items()}
            else:
                factor = {(atom,): Fraction(1)}
            part = _rational_mul(part, factor)
        for k, v in part.items():
            out[k] = out.get(k, 0) + v
    return {k: v for k, v in out.items() if v}


def _rational_mul(a: dict, b: dict) -> dict:
    out: dict = {}
    for m1, c1 in a.items():
        for m2, c2 in b.items():
            m = tuple(sorted(m1 + m2, key=atom_key))
            out[m] = out.get(m, 0) + c1 * c2
    return out


def relaxed_bounds(x, ranges: dict) -> tuple:
    """Bounds of ``x`` with each ``e // c`` written as ``(e - r) / c`` and each ``e % c`` as ``r``, for a fresh
    ``r`` in ``0..c-1``: exact identities, after which like terms cancel (``B//2 - B`` is ``-B/2 - r/2``), so the
    bounds are tighter than those of the atoms taken apart."""
    fresh: dict = {}
    terms = _relaxed_terms(x, fresh)
    box = dict(ranges)
    box.update({name: (0, c - 1) for name, c in fresh.items()})
    lo = hi = Fraction(0)
    for m, c in terms.items():
        a, b = (c, c)
        for atom in m:
            a, b = _interval_mul((a, b), box.get(atom[1], (0, INF)) if atom[0] == "sym" else (-INF, INF))
        lo, hi = lo + a, hi + b
    return (lo, hi)


def _relaxed_terms(x, fresh: dict) -> dict:
    out: dict = {}
    for m, c in terms_of(x).items():
        part = {(): Fraction(c)}
        for atom in m:
            if atom[0] != "sym" and type(atom[2]) is int and atom[2] > 0:
                r = {(("sym", f"%r{len(fresh)}"),): Fraction(1)}
                fresh[f"%r{len(fresh)}"] = atom[2]
                if atom[0] == "mod":
                    factor = r
                else:
                    factor = {k: v / atom[2] for k, v in _relaxed_terms(atom[1], fresh).items()}
                    for k, v in r.items():
                        factor[k] = factor.get(k, 0) - v / atom[2]
            else:
                factor = {(atom,): Fraction(1)}
            part = _rational_mul(part, factor)
        for k, v in part.items():
            out[k] = out.get(k, 0) + v
    return {k: v for k, v in out.items() if v}
