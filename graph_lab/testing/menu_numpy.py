"""The op menu, part 3: the NumPy that real programs use beyond the first menus (trigonometry, rounding, NaN tests,
bitwise integers, complex parts, running sums, sorting, the dot family, diagonals, take, statistics, ufunc
methods and the registry of library functions). One small template per op, spelled as NumPy code spells it.

``arange``, ``linspace``, ``eye`` and ``tri`` have no template: with the static sizes of a generated program NumPy
runs them when the program is captured (a constant), so no template could make their node.
"""

from __future__ import annotations

import math

from ..ops import Op
from .picker import Expr, Picker, magnitude

STATIC_CONSTANT_OPS = frozenset({Op.ARANGE, Op.LINSPACE, Op.EYE, Op.TRI})
"""Ops that are constants in a program with static sizes (see above)."""


def _template(op: Op, kinds: str, make, pred=lambda v: True):
    """``make(picker, var) -> (text, lo, hi)`` or None, for an array variable of a dtype kind in ``kinds``."""
    def template(p: Picker) -> Expr | None:
        v = p.array(lambda v: v.dtype.kind in kinds and pred(v))
        if v is None:
            return None
        made = make(p, v)
        if made is None:
            return None
        text, lo, hi = made
        return Expr(text, (op.value,), lo, hi)
    return template


def _call(spellings, interval, prepare=None):
    def make(p, v):
        text, lo, hi = prepare(p, v) if prepare else (v.name, v.lo, v.hi)
        return (p.choice(spellings).format(text), *interval(lo, hi))
    return make


def _unit(p, v):
    return f"np.clip({v.name}, -1.0, 1.0)", max(v.lo, -1.0), min(v.hi, 1.0)


def _bounded(limit):
    return lambda p, v: p.bounded(v, limit)


def _axis(p: Picker, v) -> int:
    return p.rng.randrange(v.ndim)


def _n(v) -> int:
    return max(v.size, 1)


def _mag(v) -> float:
    return magnitude(v.lo, v.hi)


def _bitwise(symbol: str, function: str):
    def make(p, v):
        x, _, _ = p.bounded(v, 1000)
        y = p.choice((1, 3, 6))
        text = f"({x} {symbol} {y})" if p.chance(0.6) else f"{function}({x}, {y})"
        return text, -1024.0, 1024.0
    return make


def _shift(symbol: str, function: str):
    def make(p, v):
        x, _, _ = p.bounded(v, 1000)
        y = p.choice((0, 1, 2, 3))
        text = f"({x} {symbol} {y})" if p.chance(0.6) else f"{function}({x}, {y})"
        return text, -8000.0, 8000.0
    return make


def _two_floats(function: str, interval):
    def make(p, v):
        y = p.partner(v, lambda w: w.dtype.kind in "iuf")
        yt, ylo, yhi = (y.name, y.lo, y.hi) if y is not None else ("1.5", 1.5, 1.5)
        return f"{function}({v.name}, {yt})", *interval(v, (ylo, yhi))
    return make


def _along(function: str, interval):
    def make(p, v):
        axis = p.choice((None, _axis(p, v))) if v.ndim else None
        return function.format(v.name, axis), *interval(v)
    return make


def _square(p, v):
    return v.ndim >= 2


def _library(p, v):
    if v.ndim and p.chance(0.5):
        return f"np.fft.rfft({v.name}, axis=-1).real", -_n(v) * _mag(v), _n(v) * _mag(v)
    return f"np.linalg.norm({v.name})", 0.0, _n(v) * _mag(v)


def _histogram(p, v):
    bins = p.choice((2, 4, 5))
    return f"np.histogram({v.name}, {bins})[0]", 0.0, float(v.size)


def _ufunc_method(kind: str):
    def make(p, v):
        if kind == "outer":
            y = p.array(lambda w: w.dtype.kind in "iuf" and w.size <= 8)
            if y is None or v.size > 8:
                return None
            return f"np.{p.choice(('add', 'subtract', 'maximum'))}.outer({v.name}, {y.name})", \
                -2 * _mag(v) - _mag(y), 2 * _mag(v) + _mag(y)
        if not v.ndim:
            return None
        axis = _axis(p, v)
        ufunc = p.choice(("maximum", "minimum")) if kind == "accumulate" else "subtract"
        bound = _mag(v) if kind == "accumulate" else v.shape[axis] * _mag(v)
        return f"np.{ufunc}.{kind}({v.name}, axis={axis})", -bound, bound
    return make


TEMPLATES = {
    Op.ARCSIN: _template(Op.ARCSIN, "f", _call(("np.arcsin({})",), lambda lo, hi: (-1.6, 1.6), _unit)),
    Op.ARCCOS: _template(Op.ARCCOS, "f", _call(("np.arccos({})",), lambda lo, hi: (0.0, 3.2), _unit)),
    Op.ARCTAN: _template(Op.ARCTAN, "iuf", _call(("np.arctan({})",), lambda lo, hi: (-1.6, 1.6))),
    Op.SINH: _template(Op.SINH, "f", _call(("np.sinh({})",), lambda lo, hi: (math.sinh(lo), math.sinh(hi)),
                                           _bounded(8.0))),
    Op.COSH: _template(Op.COSH, "f", _call(("np.cosh({})",), lambda lo, hi: (1.0, math.cosh(magnitude(lo, hi))),
                                           _bounded(8.0))),
    Op.LOG2: _template(Op.LOG2, "f", _call(("np.log2({})",), lambda lo, hi: (math.log2(lo), math.log2(hi)),
                                           lambda p, v: p.positive(v))),
    Op.LOG10: _template(Op.LOG10, "f", _call(("np.log10({})",), lambda lo, hi: (math.log10(lo), math.log10(hi)),
                                             lambda p, v: p.positive(v))),
    Op.EXP2: _template(Op.EXP2, "f", _call(("np.exp2({})",), lambda lo, hi: (2.0 ** lo, 2.0 ** hi), _bounded(8.0))),
    Op.ISNAN: _template(Op.ISNAN, "iuf", _call(("np.isnan({})",), lambda lo, hi: (0.0, 1.0))),
    Op.ISINF: _template(Op.ISINF, "iuf", _call(("np.isinf({})",), lambda lo, hi: (0.0, 1.0))),
    Op.ISFINITE: _template(Op.ISFINITE, "iuf", _call(("np.isfinite({})",), lambda lo, hi: (0.0, 1.0))),
    Op.RINT: _template(Op.RINT, "f", _call(("np.rint({})",), lambda lo, hi: (math.floor(lo), math.ceil(hi)))),
    Op.TRUNC: _template(Op.TRUNC, "f", _call(("np.trunc({})",), lambda lo, hi: (math.floor(lo), math.ceil(hi)))),
    Op.ROUND: _template(Op.ROUND, "f", _call(("np.round({}, 2)", "{}.round()", "np.around({}, 1)"),
                                             lambda lo, hi: (math.floor(lo), math.ceil(hi)))),
    Op.CONJ: _template(Op.CONJ, "iuf", _call(("np.conj({})", "{}.conj()"), lambda lo, hi: (lo, hi))),
    Op.ANGLE: _template(Op.ANGLE, "f", _call(("np.angle({})",), lambda lo, hi: (0.0, 3.2))),
    Op.REAL: _template(Op.REAL, "iuf", _call(("{}.real * 1", "np.real({}) * 1"), lambda lo, hi: (lo, hi))),
    Op.IMAG: _template(Op.IMAG, "f", _call(("{}.imag + 1.0", "np.imag({}) + 1.0"), lambda lo, hi: (1.0, 1.0))),
    Op.INVERT: _template(Op.INVERT, "i", _call(("~{}", "np.invert({})"), lambda lo, hi: (-hi - 1, -lo - 1))),
    Op.ARCTAN2: _template(Op.ARCTAN2, "f", _two_floats("np.arctan2", lambda v, y: (-3.2, 3.2))),
    Op.HYPOT: _template(Op.HYPOT, "f", _two_floats("np.hypot", lambda v, y: (0.0, _mag(v) + magnitude(*y)))),
    Op.LOGADDEXP: _template(Op.LOGADDEXP, "f", _two_floats(
        "np.logaddexp", lambda v, y: (min(v.lo, y[0]), max(v.hi, y[1]) + 1.0))),
    Op.BITWISE_AND: _template(Op.BITWISE_AND, "i", _bitwise("&", "np.bitwise_and")),
    Op.BITWISE_OR: _template(Op.BITWISE_OR, "i", _bitwise("|", "np.bitwise_or")),
    Op.BITWISE_XOR: _template(Op.BITWISE_XOR, "i", _bitwise("^", "np.bitwise_xor")),
    Op.LEFT_SHIFT: _template(Op.LEFT_SHIFT, "i", _shift("<<", "np.left_shift")),
    Op.RIGHT_SHIFT: _template(Op.RIGHT_SHIFT, "i", _shift(">>", "np.right_shift")),
    Op.UFUNC_OUTER: _template(Op.UFUNC_OUTER, "iuf", _ufunc_method("outer")),
    Op.ACCUMULATE: _template(Op.ACCUMULATE, "iuf", _ufunc_method("accumulate")),
    Op.UFUNC_REDUCE: _template(Op.UFUNC_REDUCE, "f", _ufunc_method("reduce")),
    Op.CUMSUM: _template(Op.CUMSUM, "iuf", _along("np.cumsum({}, axis={})", lambda v: (-_n(v) * _mag(v),
                                                                                       _n(v) * _mag(v)))),
    Op.CUMPROD: _template(Op.CUMPROD, "f", _along("np.cumprod(np.clip({}, -1.0, 1.0), axis={})",
                                                  lambda v: (-1.0, 1.0))),
    Op.SORT: _template(Op.SORT, "iuf", _along("np.sort({}, axis={})", lambda v: (v.lo, v.hi))),
    Op.ARGSORT: _template(Op.ARGSORT, "iuf", _along("np.argsort({}, axis={}, kind='stable')",
                                                    lambda v: (0.0, float(_n(v))))),
    Op.DIFF: _template(Op.DIFF, "iuf", lambda p, v: (f"np.diff({v.name}, axis={_axis(p, v)})", v.lo - v.hi,
                                                     v.hi - v.lo), lambda v: v.ndim >= 1),
    Op.TRACE: _template(Op.TRACE, "iuf", lambda p, v: (f"np.trace({v.name})", -_n(v) * _mag(v), _n(v) * _mag(v)),
                        lambda v: v.ndim >= 2),
    Op.DIAGONAL: _template(Op.DIAGONAL, "iuf", lambda p, v: (f"({v.name}.diagonal() + 0)", v.lo, v.hi),
                           lambda v: v.ndim >= 2),
    Op.DIAG: _template(Op.DIAG, "iuf", lambda p, v: (f"np.diag({v.name})", min(v.lo, 0.0), max(v.hi, 0.0)),
                       lambda v: v.ndim == 1 and v.size <= 8),
    Op.FLIP: _template(Op.FLIP, "iuf", lambda p, v: (f"(np.flip({v.name}) + 0)", v.lo, v.hi)),
    Op.ROLL: _template(Op.ROLL, "iuf", lambda p, v: (f"np.roll({v.name}, {p.choice((1, -2, 3))})", v.lo, v.hi)),
    Op.TAKE: _template(Op.TAKE, "iuf", lambda p, v: (f"np.take({v.name}, [0, -1])", v.lo, v.hi),
                       lambda v: v.size > 0),
    Op.TAKE_ALONG_AXIS: _template(Op.TAKE_ALONG_AXIS, "iuf", lambda p, v: (
        f"np.take_along_axis({v.name}, np.argsort({v.name}, axis=-1), axis=-1)", v.lo, v.hi),
        lambda v: v.ndim >= 1),
    Op.DOT: _template(Op.DOT, "iuf", lambda p, v: (f"np.dot({v.name}, {v.name}.T)", -_n(v) * _mag(v) ** 2,
                                                   _n(v) * _mag(v) ** 2), lambda v: v.ndim == 2 and _mag(v) < 1e3),
    Op.VDOT: _template(Op.VDOT, "f", lambda p, v: (f"np.vdot({v.name}, {v.name})", 0.0, _n(v) * _mag(v) ** 2),
                       lambda v: _mag(v) < 1e3),
    Op.INNER: _template(Op.INNER, "f", lambda p, v: (f"np.inner({v.name}, {v.name})", -_n(v) * _mag(v) ** 2,
                                                     _n(v) * _mag(v) ** 2), lambda v: v.ndim <= 2 and _mag(v) < 1e3),
    Op.TENSORDOT: _template(Op.TENSORDOT, "f", lambda p, v: (f"np.tensordot({v.name}, {v.name}, {v.ndim})", 0.0,
                                                             _n(v) * _mag(v) ** 2), lambda v: _mag(v) < 1e3),
    Op.AVERAGE: _template(Op.AVERAGE, "iuf", lambda p, v: (f"np.average({v.name})", v.lo, v.hi),
                          lambda v: v.size > 0),
    Op.COV: _template(Op.COV, "f", lambda p, v: (f"np.cov({v.name})", -(v.hi - v.lo) ** 2 * 4, (v.hi - v.lo) ** 2 * 4),
                      lambda v: v.ndim == 2 and v.shape[1] >= 2 and _mag(v) < 1e3),
    Op.CORRCOEF: _template(Op.CORRCOEF, "f", lambda p, v: (
        f"np.corrcoef({v.name} + np.linspace(0.0, 1.0, {v.shape[-1]}))", -1.0, 1.0),
                           lambda v: v.ndim == 2 and v.shape[1] >= 2 and _mag(v) < 1e3),
    Op.HISTOGRAM: _template(Op.HISTOGRAM, "iuf", _histogram, lambda v: v.size > 0),
    Op.LIBRARY_CALL: _template(Op.LIBRARY_CALL, "f", _library, lambda v: _mag(v) < 1e6),
}
