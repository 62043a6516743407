"""Floor division and remainder of symbolic sizes: ``a // b`` and ``a % b`` in canonical form.

Each rule is exact for every integer value of the symbols (Python's floor division and remainder, the sign of
the divisor): ``(b*q + r) // b == q + r // b``, ``(x // m) // n == x // (m*n)`` for positive ``m``, ``n``,
``(k*x) // (k*y) == x // y`` for ``k >= 1``. What no rule simplifies stays an atom of the polynomial
(``d//2``, ``(B+1) % 4``), compared by structure like any other term.
"""

from __future__ import annotations

import math

from .symbolic import Expr, add, atom_key, canonical, terms_of


def _atom(kind: str, num, den) -> Expr:
    monomial = ((kind, num, den),)
    return Expr(((monomial, 1),))


def _split_multiples(a, c: int):
    """``a = c*q + r`` with every coefficient of ``r`` (its constant included) in ``0..c-1`` or not divisible."""
    q, r = {}, {}
    for m, coeff in terms_of(a).items():
        if m == ():
            q[m], r[m] = divmod(coeff, c)
        elif coeff % c == 0:
            q[m] = coeff // c
        else:
            r[m] = coeff
    return canonical(q), canonical(r)


def _divide_exactly(a, b):
    """``a / b`` when ``b`` is one term whose monomial and coefficient divide every term of ``a``; else None."""
    if type(b) is int:
        return _divide_term(a, (), b) if b else None
    if len(b.terms) != 1:
        return None
    (bm, bc), = b.terms
    return _divide_term(a, bm, bc)


def _divide_term(a, bm: tuple, bc: int):
    out = {}
    for m, c in terms_of(a).items():
        rest = list(m)
        for atom in bm:
            if atom not in rest:
                return None
            rest.remove(atom)
        if c % bc:
            return None
        out[tuple(rest)] = c // bc
    return canonical(out)


def _common_factor(a, b) -> tuple | None:
    """``(monomial, coefficient)``: the largest term (positive coefficient) dividing every term of ``a`` and the
    single term or int ``b``; None when that is 1."""
    if isinstance(b, Expr) and len(b.terms) != 1:
        return None
    (bm, bc), = terms_of(b).items()
    atoms, coeff = list(bm), abs(bc)
    for m, c in terms_of(a).items():
        coeff = math.gcd(coeff, c)
        rest = list(m)
        atoms = [x for x in atoms if x in rest and not rest.remove(x)]
    if not atoms and coeff == 1:
        return None
    return tuple(sorted(atoms, key=atom_key)), coeff


def floordiv(a, b):
    """``a // b`` (Python's floor division), simplified where that is exact for every integer value."""
    if type(b) is int:
        if b == 0:
            raise ZeroDivisionError("symbolic size divided by zero")
        if type(a) is int:
            return a // b
        if b == 1:
            return a
        if b < 0:
            return _atom("floordiv", a, b)
        inner = _single_atom(a, "floordiv")
        if inner is not None and type(inner[2]) is int and inner[2] > 0:
            return floordiv(inner[1], inner[2] * b)  # (x // m) // n == x // (m*n) for positive m, n
        q, r = _split_multiples(a, b)  # (b*q + r) // b == q + r // b, exactly
        if q == 0 and type(r) is not int:
            cancelled = _cancelled(r, b)
            return cancelled if cancelled is not None else _atom("floordiv", r, b)
        if type(r) is int:
            return add(q, r // b)
        return add(q, _atom("floordiv", r, b))
    exact = _divide_exactly(a, b)
    if exact is not None:
        return exact
    cancelled = _cancelled(a, b)
    return cancelled if cancelled is not None else _atom("floordiv", a, b)


def _cancelled(a, b):
    """``a // b`` with a common factor divided out of both (exact: (k*x) // (k*y) == x // y for k >= 1)."""
    common = _common_factor(a, b)
    if common is None or a == 0:
        return None
    return floordiv(_divide_term(a, *common), _divide_term(b, *common))


def mod(a, b):
    """``a % b`` (Python's remainder, the sign of ``b``), simplified where that is exact."""
    if type(b) is int:
        if b == 0:
            raise ZeroDivisionError("symbolic size modulo zero")
        if type(a) is int:
            return a % b
        if b in (1, -1):
            return 0
        if b < 0:
            return _atom("mod", a, b)
        inner = _single_atom(a, "mod")
        if inner is not None and inner[2] == b:
            return a
        _, r = _split_multiples(a, b)  # (b*q + r) % b == r % b
        return r % b if type(r) is int else _atom("mod", r, b)
    if _divide_exactly(a, b) is not None:
        return 0
    return _atom("mod", a, b)


def _single_atom(a, kind: str):
    if isinstance(a, Expr) and len(a.terms) == 1:
        (m, c), = a.terms
        if c == 1 and len(m) == 1 and m[0][0] == kind:
            return m[0]
    return None
