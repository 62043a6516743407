"""Metamorphic rewrites: wrap a program's expressions in identities that change the graph, not the result.

``x * 1``, ``-(-x)``, a double transpose, a reshape split in two... each keeps every bit of the value (NaN,
infinities and the sign of zero included), so the rewritten program must give exactly what the original gave,
eagerly and through every way, while its graphs have more to simplify. ``x + 0.0`` is *not* one of them for
floats: ``-0.0 + 0.0`` is ``+0.0``; the float form is ``x - 0.0``.
"""

from __future__ import annotations

import dataclasses
import random
import re
from typing import Callable

from .program import If, Line, Loop, Program, Var

_ASSIGNMENT = re.compile(r"^(h\d+) = (.+)$")


def _perm(v: Var, rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...]]:
    perm = list(range(v.ndim))
    rng.shuffle(perm)
    inverse = [0] * v.ndim
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(perm), tuple(inverse)


def _double_transpose(e: str, v: Var, rng: random.Random) -> str:
    perm, inverse = _perm(v, rng)
    return f"np.transpose(np.transpose({e}, {perm}), {inverse})"


def _three_transposes(e: str, v: Var, rng: random.Random) -> str:
    """By p, then by q, then by the inverse of the two together: the identity, however they compose."""
    p, _ = _perm(v, rng)
    q, _ = _perm(v, rng)
    both = [p[i] for i in q]  # axis i of the result is axis p[q[i]] of e
    inverse = [0] * v.ndim
    for i, axis in enumerate(both):
        inverse[axis] = i
    return f"np.transpose(np.transpose(np.transpose({e}, {p}), {q}), {tuple(inverse)})"


# (name, applies to the variable's type, rewrite of the expression text)
IDENTITIES: list[tuple[str, Callable[[Var], bool], Callable[[str, Var, random.Random], str]]] = [
    ("x * 1", lambda v: v.dtype.kind in "iuf", lambda e, v, rng: f"({e}) * 1"),
    ("1 * x", lambda v: v.dtype.kind in "iuf", lambda e, v, rng: f"1 * ({e})"),
    ("x / 1", lambda v: v.dtype.kind == "f", lambda e, v, rng: f"({e}) / 1"),
    ("x - 0.0", lambda v: v.dtype.kind == "f", lambda e, v, rng: f"({e}) - 0.0"),
    ("x + (-0.0)", lambda v: v.dtype.kind == "f", lambda e, v, rng: f"({e}) + (-0.0)"),
    ("(-0.0) + x", lambda v: v.dtype.kind == "f", lambda e, v, rng: f"(-0.0) + ({e})"),
    ("x + 0", lambda v: v.dtype.kind in "iu", lambda e, v, rng: f"({e}) + 0"),
    ("0 + x", lambda v: v.dtype.kind in "iu", lambda e, v, rng: f"0 + ({e})"),
    ("-(-x)", lambda v: v.dtype.kind in "if", lambda e, v, rng: f"-(-({e}))"),
    ("~(~x)", lambda v: v.dtype.kind == "b", lambda e, v, rng: f"~(~({e}))"),
    ("-(x * -1)", lambda v: v.dtype.kind in "if", lambda e, v, rng: f"-(({e}) * -1)"),
    ("double transpose", lambda v: v.ndim >= 2, _double_transpose),
    ("three transposes", lambda v: v.ndim >= 3, _three_transposes),
    (".T.T", lambda v: v.ndim >= 2, lambda e, v, rng: f"({e}).T.T"),
    ("reshape split in two", lambda v: v.ndim >= 1, lambda e, v, rng: f"({e}).reshape(-1).reshape({v.shape})"),
    ("reshape to its own shape", lambda v: True, lambda e, v, rng: f"np.reshape({e}, {v.shape})"),
    ("expand_dims then squeeze", lambda v: True, lambda e, v, rng: f"np.squeeze(np.expand_dims({e}, 0), 0)"),
]


def rewrite(program: Program, rng: random.Random, how_many: int = 3) -> tuple[Program, list[str]]:
    """``program`` with up to ``how_many`` assignments wrapped in identities; the names of those applied."""
    sites = [s for s in _lines(program.body) if _ASSIGNMENT.match(s.code[0]) and len(s.code) == 1
             and len(s.defines) == 1 and not s.defines[0].scalar]
    chosen = rng.sample(sites, min(how_many, len(sites)))
    applied: list[str] = []
    replacements: dict[int, Line] = {}
    for line in chosen:
        v = line.defines[0]
        options = [(name, make) for name, applies, make in IDENTITIES if applies(v)]
        name, make = rng.choice(options)
        target, expr = _ASSIGNMENT.match(line.code[0]).groups()
        replacements[id(line)] = dataclasses.replace(line, code=[f"{target} = {make(expr, v, rng)}"])
        applied.append(name)
    return dataclasses.replace(program, body=_replace(program.body, replacements)), applied


def _lines(body: list) -> list[Line]:
    out = []
    for s in body:
        if isinstance(s, Line):
            out.append(s)
        elif isinstance(s, If):
            out += _lines(s.body) + _lines(s.orelse)
        elif isinstance(s, Loop):
            out += _lines(s.body)
    return out


def _replace(body: list, replacements: dict[int, Line]) -> list:
    out = []
    for s in body:
        if isinstance(s, Line):
            out.append(replacements.get(id(s), s))
        elif isinstance(s, If):
            out.append(dataclasses.replace(s, body=_replace(s.body, replacements),
                                           orelse=_replace(s.orelse, replacements)))
        elif isinstance(s, Loop):
            out.append(dataclasses.replace(s, body=_replace(s.body, replacements)))
    return out
