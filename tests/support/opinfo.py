"""The op sample table: for every op of ``graph_lab.ops.Op``, calls whose result eager NumPy already knows.

A ``Sample`` pairs an independent reference written with plain NumPy (``ref``) with the same computation
written for graph_lab (``fn``: ``F.<op>``, an operator, an ndarray method, or an unmodified ``np.*`` call on
the stand-in tensor) and the input arrays. ``test_ops.py`` traces ``fn``, runs the graph, and checks the
result against ``ref`` bit for bit.

Families with many similar ops (elementwise, reductions) are short tables expanded by small factories; the
rest (shapes, indexing, linear algebra, nn composites, whole NumPy programs) are written out one by one.
Inputs come from one seeded generator, so the table is the same on every run.
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from dataclasses import dataclass
from typing import Callable

import numpy as np

from graph_lab import F, Op

RNG = np.random.default_rng(12)

f64, f32, i64, i32, b1 = (np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.bool_))
FLOATS = (f64, f32)
INTS = (i64, i32)
NUMBERS = FLOATS + INTS
ALL = NUMBERS + (b1,)
LOGIC = (b1, f64, i32)
SHORT = {f64: "f64", f32: "f32", i64: "i64", i32: "i32", b1: "bool"}


@dataclass(frozen=True)
class Sample:
    op: Op
    """The op this sample is about: the traced graph must contain a node of it."""
    name: str
    """What is special about the sample (dtype, shape, spelling); with ``op``, the test id."""
    ref: Callable
    """The eager NumPy reference, written with plain NumPy."""
    fn: Callable
    """The same computation written for graph_lab; traced, and also called eagerly on the arrays."""
    inputs: tuple[np.ndarray, ...]
    """The arrays passed to ``ref`` and ``fn`` (positionally; traced under ``fn``'s parameter names)."""

    @property
    def id(self) -> str:
        return f"{self.op}-{self.name}"


def S(op: Op, name: str, ref: Callable, fn: Callable, *inputs) -> Sample:
    return Sample(op, name, ref, fn, tuple(np.asarray(x) for x in inputs))


# ---------------------------------------------------------------------------------------------------------
# Inputs


def make(dtype, shape, domain: str = "any") -> np.ndarray:
    """Random values of ``dtype`` in a domain where the op under test is defined.

    any: every value; positive: > 0; nonzero: no zeros; base/exponent: for pow (floats: base > 0;
    ints: exponent in 0..3, since NumPy refuses negative integer powers of integers).
    """
    dtype = np.dtype(dtype)
    if dtype == b1:
        values = RNG.random(shape) < 0.5 if domain in ("any", "base", "exponent") else np.ones(shape, bool)
    elif dtype.kind == "i":
        if domain == "positive":
            values = RNG.integers(1, 6, shape)
        elif domain == "nonzero":
            values = RNG.integers(1, 6, shape) * RNG.choice([-1, 1], shape)
        elif domain == "exponent":
            values = RNG.integers(0, 4, shape)
        else:
            values = RNG.integers(-5, 6, shape)
    elif domain in ("positive", "base"):
        values = RNG.uniform(0.1, 4.0, shape)
    else:
        values = RNG.standard_normal(shape) * 2.0
    return np.asarray(values).astype(dtype)


def normal(*shape, dtype=f64) -> np.ndarray:
    return make(dtype, shape)


def ints(*shape, dtype=i64, low=-5, high=6) -> np.ndarray:
    return RNG.integers(low, high, shape).astype(dtype)


def bools(*shape) -> np.ndarray:
    return RNG.random(shape) < 0.5


SPECIAL_VALUES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.5, 3.0]


def special(dtype=f64, shift: int = 0) -> np.ndarray:
    """NaN, infinities and signed zeros (rolled by ``shift`` to pair them differently in binary ops)."""
    return np.roll(np.array(SPECIAL_VALUES), shift).astype(dtype)


# ---------------------------------------------------------------------------------------------------------
# Elementwise, one operand. F.<op> is traced for every dtype and shape; the NumPy spellings listed here
# (operators, np.* called on the stand-in) are traced too, on the first dtype.

UNARY = [
    # op               NumPy reference                 NumPy spellings             dtypes         domain
    (Op.NEG,           np.negative,                    [operator.neg, np.negative], NUMBERS,       "any"),
    (Op.ABS,           np.absolute,                    [abs, np.abs],              ALL,           "any"),
    (Op.SIGN,          np.sign,                        [np.sign],                  NUMBERS,       "any"),
    (Op.EXP,           np.exp,                         [np.exp],                   ALL,           "any"),
    (Op.LOG,           np.log,                         [np.log],                   NUMBERS,       "positive"),
    (Op.LOG1P,         np.log1p,                       [np.log1p],                 NUMBERS,       "positive"),
    (Op.EXPM1,         np.expm1,                       [np.expm1],                 NUMBERS,       "any"),
    (Op.SQRT,          np.sqrt,                        [np.sqrt],                  NUMBERS,       "positive"),
    (Op.SQUARE,        np.square,                      [np.square],                ALL,           "any"),
    (Op.RECIPROCAL,    np.reciprocal,                  [np.reciprocal],            NUMBERS,       "nonzero"),
    (Op.TANH,          np.tanh,                        [np.tanh],                  NUMBERS,       "any"),
    (Op.SIN,           np.sin,                         [np.sin],                   NUMBERS,       "any"),
    (Op.COS,           np.cos,                         [np.cos],                   NUMBERS,       "any"),
    (Op.FLOOR,         np.floor,                       [np.floor],                 NUMBERS,       "any"),
    (Op.CEIL,          np.ceil,                        [np.ceil],                  NUMBERS,       "any"),
    (Op.LOGICAL_NOT,   np.logical_not,                 [operator.invert, np.logical_not, np.invert],
                                                                                   LOGIC,         "any"),
    (Op.COPY,          lambda x: np.array(x, copy=True), [np.copy, operator.pos, lambda x: x.copy()],
                                                                                   ALL,           "any"),
    # composites: the reference formula is written here again, in the same order of NumPy calls
    (Op.SIGMOID,       lambda x: 1.0 / (1.0 + np.exp(-x)), [],                     NUMBERS,       "any"),
    (Op.RELU,          lambda x: np.maximum(x, 0),     [],                         NUMBERS,       "any"),
    (Op.GELU,          lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x))),
                                                       [],                         NUMBERS,       "any"),
]


def _spelling_name(f) -> str:
    if f is abs:
        return "abs"
    if getattr(f, "__module__", None) in ("operator", "_operator"):
        return f"operator.{f.__name__}"
    if getattr(f, "__name__", "") == "<lambda>":
        return "method"
    return f"np.{f.__name__}"


def _unary_fn(f):
    return lambda x: f(x)


def unary_samples(op, ref, spellings, dtypes, domain) -> list[Sample]:
    f = _unary_fn(getattr(F, op.value))
    first = dtypes[0]
    out = [S(op, f"F-{SHORT[dt]}", ref, f, make(dt, (3, 4), domain)) for dt in dtypes]
    out += [S(op, f"{_spelling_name(g)}-{SHORT[first]}", ref, _unary_fn(g), make(first, (3, 4), domain))
            for g in spellings]
    out += [
        S(op, f"F-{SHORT[first]}-0d", ref, f, make(first, (), domain)),
        S(op, f"F-{SHORT[first]}-size0", ref, f, make(first, (0, 3), domain)),
        S(op, f"F-{SHORT[dtypes[-1]]}-size1", ref, f, make(dtypes[-1], (1, 1, 2), domain)),
    ]
    out += [S(op, f"F-{SHORT[dt]}-nan-inf", ref, f, special(dt)) for dt in FLOATS if dt in dtypes]
    return out


# ---------------------------------------------------------------------------------------------------------
# Elementwise, two operands. As above, plus broadcasting, mixed dtypes and Python scalars (weak in NumPy 2:
# ``x * 0.5`` on float32 stays float32, ``int32 + 3`` stays int32).

BINARY = [
    # op              NumPy reference      NumPy spellings                      dtypes         x domain  y domain
    (Op.ADD,          np.add,              [operator.add, np.add],              ALL,           "any",    "any"),
    (Op.SUB,          np.subtract,         [operator.sub, np.subtract],         NUMBERS,       "any",    "any"),
    (Op.MUL,          np.multiply,         [operator.mul, np.multiply],         ALL,           "any",    "any"),
    (Op.DIV,          np.true_divide,      [operator.truediv, np.divide],       ALL,           "any",    "nonzero"),
    (Op.FLOORDIV,     np.floor_divide,     [operator.floordiv, np.floor_divide], NUMBERS,      "any",    "nonzero"),
    (Op.MOD,          np.remainder,        [operator.mod, np.mod],              NUMBERS,       "any",    "nonzero"),
    (Op.POW,          np.power,            [operator.pow, np.power],            NUMBERS,       "base",   "exponent"),
    (Op.MAXIMUM,      np.maximum,          [np.maximum],                        ALL,           "any",    "any"),
    (Op.MINIMUM,      np.minimum,          [np.minimum],                        ALL,           "any",    "any"),
    (Op.EQ,           np.equal,            [operator.eq, np.equal],             ALL,           "any",    "any"),
    (Op.NE,           np.not_equal,        [operator.ne, np.not_equal],         ALL,           "any",    "any"),
    (Op.LT,           np.less,             [operator.lt, np.less],              ALL,           "any",    "any"),
    (Op.LE,           np.less_equal,       [operator.le, np.less_equal],        ALL,           "any",    "any"),
    (Op.GT,           np.greater,          [operator.gt, np.greater],           ALL,           "any",    "any"),
    (Op.GE,           np.greater_equal,    [operator.ge, np.greater_equal],     ALL,           "any",    "any"),
    # on booleans, & | ^ and the bitwise ufuncs are the logical ops (on other dtypes they have no op)
    (Op.LOGICAL_AND,  np.logical_and,      [np.logical_and, operator.and_, np.bitwise_and], LOGIC, "any", "any"),
    (Op.LOGICAL_OR,   np.logical_or,       [np.logical_or, operator.or_, np.bitwise_or],    LOGIC, "any", "any"),
    (Op.LOGICAL_XOR,  np.logical_xor,      [np.logical_xor, operator.xor, np.bitwise_xor],  LOGIC, "any", "any"),
]

# Python scalars of each kind used as weak operands, per dtype kind of the array.
WEAK_SCALARS = {"f": 0.5, "i": 3, "b": True}


def _binary_fn(f):
    return lambda x, y: f(x, y)


def _scalar_right(f, scalar):
    return lambda x: f(x, scalar)


def _scalar_left(f, scalar):
    return lambda x: f(scalar, x)


def binary_samples(op, ref, spellings, dtypes, xd, yd) -> list[Sample]:
    f = _binary_fn(getattr(F, op.value))
    first = dtypes[0]
    natural = spellings[0]  # the way NumPy code usually writes it: an operator where there is one
    out = [S(op, f"F-{SHORT[dt]}", ref, f, make(dt, (3, 4), xd), make(dt, (3, 4), yd)) for dt in dtypes]
    out += [S(op, f"{_spelling_name(g)}-{SHORT[first]}", ref, _binary_fn(g), make(first, (3, 4), xd),
              make(first, (3, 4), yd)) for g in spellings]
    out += [
        S(op, "broadcast-(3,1)-(4,)", ref, f, make(first, (3, 1), xd), make(first, (4,), yd)),
        S(op, "broadcast-(2,1,4)-(3,1)", ref, _binary_fn(natural), make(dtypes[-1], (2, 1, 4), xd),
          make(dtypes[-1], (3, 1), yd)),
        S(op, "0d-(2,3)", ref, f, make(first, (), xd), make(first, (2, 3), yd)),
        S(op, "size0-(0,3)-(3,)", ref, f, make(first, (0, 3), xd), make(first, (3,), yd)),
        S(op, "size1-(1,)-(1,1)", ref, f, make(first, (1,), xd), make(first, (1, 1), yd)),
    ]
    for a, b in [(f32, f64), (i32, i64), (i32, f32), (b1, i32), (i64, f64)]:
        if a in dtypes and b in dtypes:
            out.append(S(op, f"mixed-{SHORT[a]}-{SHORT[b]}", ref, f, make(a, (2, 3), xd), make(b, (2, 3), yd)))
    # Weak Python scalars on either side: the array's dtype decides, as in NumPy 2. With the scalar on the left
    # the F spelling is used, since Python turns ``0.5 < x`` into ``x > 0.5`` (another op).
    for dt in dtypes:
        scalar = WEAK_SCALARS[dt.kind]
        out.append(S(op, f"{SHORT[dt]}-and-{scalar!r}", _scalar_right(ref, scalar), _scalar_right(natural, scalar),
                     make(dt, (2, 3), xd)))
        out.append(S(op, f"{scalar!r}-and-{SHORT[dt]}", _scalar_left(ref, scalar),
                     _scalar_left(getattr(F, op.value), scalar), make(dt, (2, 3), yd)))
    if i32 in dtypes:  # an int array with a float scalar becomes float64
        out.append(S(op, "i32-and-0.5", _scalar_right(ref, 0.5), _scalar_right(natural, 0.5), make(i32, (2, 3), xd)))
    for dt in FLOATS:
        if dt in dtypes:
            out.append(S(op, f"{SHORT[dt]}-nan-inf", ref, f, special(dt), special(dt, shift=3)))
    return out


# ---------------------------------------------------------------------------------------------------------
# Reductions: every axis form (None, int, negative int, tuple) with and without keepdims.

REDUCTIONS = [
    # op         NumPy reference  dtypes  tuple axes
    (Op.SUM,     np.sum,          ALL,     True),
    (Op.MEAN,    np.mean,         ALL,     True),
    (Op.MAX,     np.max,          ALL,     True),
    (Op.MIN,     np.min,          ALL,     True),
    (Op.PROD,    np.prod,         ALL,     True),
    (Op.VAR,     np.var,          ALL,     True),
    (Op.STD,     np.std,          ALL,     True),
    (Op.ANY,     np.any,          ALL,     True),
    (Op.ALL,     np.all,          ALL,     True),
    (Op.ARGMAX,  np.argmax,       ALL,     False),
    (Op.ARGMIN,  np.argmin,       ALL,     False),
]
AXES = [None, 0, 1, -1, (0, 2), (-1, -3), (2, 0, 1)]
NEEDS_IDENTITY = {Op.MAX, Op.MIN, Op.ARGMAX, Op.ARGMIN}


def _over(f, axis, keepdims=False):
    """``f`` reducing over ``axis``: used for the reference (np.sum...) and the traced spelling (F.sum...)."""
    return lambda x: f(x, axis=axis, keepdims=keepdims)


def reduction_samples(op, ref, dtypes, tuple_axes) -> list[Sample]:
    f = getattr(F, op.value)
    out = []
    for axis in [a for a in AXES if tuple_axes or not isinstance(a, tuple)]:
        for keepdims in (False, True):
            name = f"F-axis={axis}-keepdims={keepdims}".replace(" ", "")
            out.append(S(op, name, _over(ref, axis, keepdims), _over(f, axis, keepdims), normal(2, 3, 4)))
    for dt in dtypes[1:]:
        out.append(S(op, f"F-{SHORT[dt]}-axis=-1", _over(ref, -1), _over(f, -1), make(dt, (3, 4))))
        out.append(S(op, f"F-{SHORT[dt]}-axis=None", _over(ref, None), _over(f, None), make(dt, (3, 4))))
    np_fn = getattr(np, op.value)  # np.sum, np.argmax, ... called on the stand-in
    method = op.value  # x.sum(...), x.argmax(...)
    out += [
        S(op, "np-function", lambda x: ref(x, axis=1), lambda x: np_fn(x, axis=1), normal(3, 4)),
        S(op, "np-function-no-axis", lambda x: ref(x), lambda x: np_fn(x), ints(3, 4)),
        S(op, "method-keepdims", lambda x: ref(x, axis=-1, keepdims=True),
          lambda x: getattr(x, method)(axis=-1, keepdims=True), normal(3, 4)),
        S(op, "F-0d", _over(ref, None), _over(f, None), normal()),
        S(op, "F-0d-keepdims", _over(ref, None, True), _over(f, None, True), normal()),
        S(op, "F-size1", _over(ref, 0), _over(f, 0), normal(1, 3)),
        # a size-0 input reduced over a non-empty axis: the result is size-0 too
        S(op, "F-size0-keep-empty", _over(ref, 0), _over(f, 0), normal(3, 0)),
        S(op, "F-nan-inf", _over(ref, -1), _over(f, -1), special().reshape(2, 4)),
        S(op, "F-f32-nan-inf", _over(ref, 0, True), _over(f, 0, True), special(f32).reshape(4, 2)),
        S(op, "F-i32-ties", _over(ref, 1), _over(f, 1), ints(3, 6, dtype=i32, low=0, high=2)),
    ]
    if op not in NEEDS_IDENTITY:  # reducing an empty axis gives the identity (sum 0, prod 1, any False...)
        out.append(S(op, "F-size0-reduce-empty", _over(ref, 0), _over(f, 0), normal(0, 3)))
        out.append(S(op, "F-size0-all-axes", _over(ref, None), _over(f, None), normal(0)))
    if op in (Op.VAR, Op.STD):
        out += [
            S(op, "F-ddof=1", lambda x: ref(x, axis=0, ddof=1), lambda x: f(x, axis=0, ddof=1), normal(4, 3)),
            S(op, "method-ddof=1", lambda x: ref(x, axis=-1, ddof=1, keepdims=True),
              lambda x: getattr(x, method)(axis=-1, ddof=1, keepdims=True), make(f32, (4, 3))),
        ]
    return out


# ---------------------------------------------------------------------------------------------------------
# where, clip, cast, and the *_like constructors

ELEMENTWISE_OTHER = [
    S(Op.WHERE, "np-f64", lambda c, x, y: np.where(c, x, y), lambda c, x, y: np.where(c, x, y),
      bools(3, 4), normal(3, 4), normal(3, 4)),
    S(Op.WHERE, "F-broadcast", lambda c, x, y: np.where(c, x, y), lambda c, x, y: F.where(c, x, y),
      bools(3, 1), normal(4), normal(2, 1, 1)),
    S(Op.WHERE, "F-mixed-i32-f32", lambda c, x, y: np.where(c, x, y), lambda c, x, y: F.where(c, x, y),
      bools(3), ints(3, dtype=i32), normal(3, dtype=f32)),
    S(Op.WHERE, "f32-and-weak-0.0", lambda c, x: np.where(c, x, 0.0), lambda c, x: np.where(c, x, 0.0),
      bools(2, 3), normal(2, 3, dtype=f32)),
    S(Op.WHERE, "i32-and-weak-1", lambda x: np.where(x > 0, x, -1), lambda x: np.where(x > 0, x, -1),
      ints(2, 3, dtype=i32)),
    S(Op.WHERE, "cond-from-compare-nan", lambda x, y: np.where(x > y, x, y), lambda x, y: F.where(x > y, x, y),
      special(), special(shift=5)),
    S(Op.WHERE, "0d-cond", lambda c, x, y: np.where(c, x, y), lambda c, x, y: F.where(c, x, y),
      np.array(True), normal(2), normal(2)),
    S(Op.WHERE, "size0", lambda c, x, y: np.where(c, x, y), lambda c, x, y: F.where(c, x, y),
      bools(0, 2), normal(2), normal(1)),

    S(Op.CLIP, "np-scalars", lambda x: np.clip(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), normal(3, 4)),
    S(Op.CLIP, "method-f32-weak", lambda x: np.clip(x, -1.0, 1.0), lambda x: x.clip(-1.0, 1.0),
      normal(3, 4, dtype=f32)),
    S(Op.CLIP, "F-max-only", lambda x: np.clip(x, None, 1.0), lambda x: F.clip(x, a_max=1.0), normal(5)),
    S(Op.CLIP, "F-min-only", lambda x: np.clip(x, 0.0, None), lambda x: F.clip(x, 0.0), normal(5)),
    S(Op.CLIP, "i32-int-bounds", lambda x: np.clip(x, -2, 3), lambda x: x.clip(-2, 3), ints(4, 3, dtype=i32)),
    S(Op.CLIP, "tensor-bounds-broadcast", lambda x, lo, hi: np.clip(x, lo, hi),
      lambda x, lo, hi: np.clip(x, lo, hi), normal(3, 4), normal(4) - 1.0, normal(3, 1) + 1.0),
    S(Op.CLIP, "nan-inf", lambda x: np.clip(x, -1.0, 2.0), lambda x: F.clip(x, -1.0, 2.0), special()),
    S(Op.CLIP, "0d", lambda x: np.clip(x, 0.0, 1.0), lambda x: F.clip(x, 0.0, 1.0), normal()),

    S(Op.CAST, "f64-to-f32", lambda x: x.astype(np.float32), lambda x: x.astype(np.float32), normal(3, 4)),
    S(Op.CAST, "f64-to-i32-truncates", lambda x: x.astype(np.int32), lambda x: F.cast(x, np.int32), normal(3, 4)),
    S(Op.CAST, "i64-to-bool", lambda x: x.astype(bool), lambda x: F.astype(x, bool), ints(3, 4)),
    S(Op.CAST, "bool-to-f32", lambda x: x.astype(np.float32), lambda x: np.astype(x, np.float32), bools(3, 4)),
    S(Op.CAST, "i32-to-f64-0d", lambda x: x.astype("float64"), lambda x: x.astype("float64"), ints(dtype=i32)),
    S(Op.CAST, "f32-nan-inf-to-f64", lambda x: x.astype(np.float64), lambda x: x.astype(np.float64), special(f32)),
    S(Op.CAST, "size0", lambda x: x.astype(np.int64), lambda x: x.astype(np.int64), normal(0, 2)),

    S(Op.FULL, "0d-fill", lambda x: np.full((2, 3), x), lambda x: F.full((2, 3), x), normal()),
    S(Op.FULL, "0d-fill-i32-dtype-f32", lambda x: np.full(4, x, np.float32), lambda x: F.full(4, x, np.float32),
      ints(dtype=i32)),
    S(Op.ZEROS_LIKE, "np", lambda x: np.zeros_like(x), lambda x: np.zeros_like(x), normal(3, 4, dtype=f32)),
    S(Op.ZEROS_LIKE, "F-dtype", lambda x: np.zeros_like(x, dtype=np.int32), lambda x: F.zeros_like(x, dtype=np.int32),
      normal(2, 3)),
    S(Op.ZEROS_LIKE, "0d-bool", lambda x: np.zeros_like(x), lambda x: F.zeros_like(x), bools()),
    S(Op.ZEROS_LIKE, "np-positional-dtype", lambda x: np.zeros_like(x, np.float32),
      lambda x: np.zeros_like(x, np.float32), ints(3)),
    S(Op.ONES_LIKE, "np-i32", lambda x: np.ones_like(x), lambda x: np.ones_like(x), ints(2, 0, dtype=i32)),
    S(Op.ONES_LIKE, "F-dtype-plus-x", lambda x: np.ones_like(x, dtype=bool) & (x > 0),
      lambda x: F.ones_like(x, dtype=bool) & (x > 0), normal(3)),
    S(Op.FULL_LIKE, "np-f32", lambda x: np.full_like(x, 2.5), lambda x: np.full_like(x, 2.5), normal(3, 2, dtype=f32)),
    S(Op.FULL_LIKE, "np-int-truncates-fill", lambda x: np.full_like(x, 2.7), lambda x: np.full_like(x, 2.7),
      ints(4)),
    S(Op.FULL_LIKE, "np-fill_value-keyword", lambda x: np.full_like(x, fill_value=-1),
      lambda x: np.full_like(x, fill_value=-1), normal(2, 2)),
    S(Op.FULL_LIKE, "np-positional-dtype", lambda x: np.full_like(x, 1.5, np.float32),
      lambda x: np.full_like(x, 1.5, np.float32), normal(3)),
    S(Op.FULL_LIKE, "F-dtype", lambda x: np.full_like(x, 7, dtype=np.float32),
      lambda x: F.full_like(x, 7, dtype=np.float32), bools(2, 2)),
]


# ---------------------------------------------------------------------------------------------------------
# Python scalars are weak operands (NumPy 2, NEP 50): the array's dtype wins when the scalar's kind fits it.
# (The factories above also pair every binary op with scalars; these are the cases worth reading.)

WEAK_SCALARS_EXAMPLES = [
    S(Op.MUL, "weak-f32-times-0.5-stays-f32", lambda x: np.multiply(x, 0.5), lambda x: x * 0.5,
      normal(3, dtype=f32)),
    S(Op.ADD, "weak-i32-plus-1-stays-i32", lambda x: np.add(x, 1), lambda x: x + 1, ints(3, dtype=i32)),
    S(Op.SUB, "weak-1-minus-f32-stays-f32", lambda x: np.subtract(1, x), lambda x: 1 - x, normal(3, dtype=f32)),
    S(Op.POW, "weak-f32-squared-stays-f32", lambda x: np.power(x, 2), lambda x: x ** 2, normal(3, dtype=f32)),
    S(Op.MUL, "weak-i32-times-0.5-is-f64", lambda x: np.multiply(x, 0.5), lambda x: x * 0.5, ints(3, dtype=i32)),
    S(Op.DIV, "weak-i32-over-2-is-f64", lambda x: np.true_divide(x, 2), lambda x: x / 2, ints(3, dtype=i32)),
    S(Op.ADD, "weak-bool-plus-1-is-i64", lambda x: np.add(x, 1), lambda x: x + 1, bools(3)),
    S(Op.ADD, "strong-0d-f64-array-makes-f64", lambda x, y: np.add(x, y), lambda x, y: x + y,
      normal(3, dtype=f32), normal()),
]


# ---------------------------------------------------------------------------------------------------------
# Constants made by NumPy inside the traced function (np.zeros, np.arange, np.eye, ...) fold into the graph.

CONSTANTS = [
    S(Op.ADD, "np.zeros-const", lambda x: x + np.zeros((3, 4)), lambda x: x + np.zeros(x.shape), normal(3, 4)),
    S(Op.MUL, "np.arange-const-i64-times-f32", lambda x: x * np.arange(4), lambda x: x * np.arange(4),
      normal(3, 4, dtype=f32)),
    S(Op.SUB, "np.ones-f32-const", lambda x: np.ones(3, np.float32) - x, lambda x: np.ones(3, np.float32) - x,
      normal(2, 3, dtype=f32)),
    S(Op.MATMUL, "np.eye-const", lambda x: x @ np.eye(4), lambda x: x @ np.eye(x.shape[-1]), normal(3, 4)),
    S(Op.INDEX, "np.arange-index", lambda x: x[np.arange(2)], lambda x: x[np.arange(2)], normal(3, 4)),
    S(Op.WHERE, "np.triu-mask-const", lambda x: np.where(np.triu(np.ones((3, 3), bool), 1), -np.inf, x),
      lambda x: np.where(np.triu(np.ones((3, 3), bool), 1), -np.inf, x), normal(2, 3, 3)),
    S(Op.ADD, "list-operand", lambda x: x + np.asarray([1.0, 2.0, 3.0]), lambda x: x + [1.0, 2.0, 3.0], normal(2, 3)),
    S(Op.MUL, "np.float32-scalar-is-strong", lambda x: x * np.float32(0.5), lambda x: x * np.float32(0.5),
      ints(3, dtype=i32)),
]


# ---------------------------------------------------------------------------------------------------------
# Shapes and data movement


def _swapaxes_ref(x):
    return np.swapaxes(x, 0, -1)


SHAPE = [
    S(Op.RESHAPE, "method-minus1", lambda x: np.reshape(x, (6, 4)), lambda x: x.reshape(6, -1), normal(2, 3, 4)),
    S(Op.RESHAPE, "method-tuple", lambda x: np.reshape(x, (4, 6)), lambda x: x.reshape((4, 6)), normal(2, 3, 4)),
    S(Op.RESHAPE, "np-i32", lambda x: np.reshape(x, (3, 2, 4)), lambda x: np.reshape(x, (3, 2, -1)),
      ints(6, 4, dtype=i32)),
    S(Op.RESHAPE, "F-0d-to-(1,1)", lambda x: np.reshape(x, (1, 1)), lambda x: F.reshape(x, (1, 1)), normal()),
    S(Op.RESHAPE, "to-0d", lambda x: np.reshape(x, ()), lambda x: x.reshape(()), normal(1, 1)),
    S(Op.RESHAPE, "size0", lambda x: np.reshape(x, (3, 0)), lambda x: x.reshape(3, 0), normal(0, 3)),
    S(Op.RESHAPE, "ravel", lambda x: np.reshape(x, -1), lambda x: x.ravel(), bools(2, 3)),
    S(Op.RESHAPE, "np.ravel", lambda x: np.reshape(x, -1), lambda x: np.ravel(x), normal(2, 3)),
    S(Op.RESHAPE, "flatten", lambda x: np.reshape(x, -1).copy(), lambda x: x.flatten(), normal(2, 3, dtype=f32)),

    S(Op.TRANSPOSE, ".T-2d", lambda x: np.transpose(x), lambda x: x.T, normal(3, 4)),
    S(Op.TRANSPOSE, ".T-3d", lambda x: np.transpose(x, (2, 1, 0)), lambda x: x.T, normal(2, 3, 4)),
    S(Op.TRANSPOSE, ".T-1d", lambda x: np.transpose(x), lambda x: x.T, normal(3)),
    S(Op.TRANSPOSE, ".T-0d", lambda x: np.transpose(x), lambda x: x.T, normal()),
    S(Op.TRANSPOSE, "method-varargs", lambda x: np.transpose(x, (1, 0, 2)), lambda x: x.transpose(1, 0, 2),
      normal(2, 3, 4)),
    S(Op.TRANSPOSE, "np-tuple", lambda x: np.transpose(x, (2, 0, 1)), lambda x: np.transpose(x, (2, 0, 1)),
      ints(2, 3, 4, dtype=i32)),
    S(Op.TRANSPOSE, "F-negative-axes", lambda x: np.transpose(x, (2, 0, 1)), lambda x: F.transpose(x, (-1, 0, 1)),
      normal(2, 3, 4)),
    S(Op.TRANSPOSE, "swapaxes", _swapaxes_ref, lambda x: x.swapaxes(0, -1), normal(2, 3, 4)),
    S(Op.TRANSPOSE, "np.swapaxes", _swapaxes_ref, lambda x: np.swapaxes(x, 0, -1), normal(2, 3, 4)),
    S(Op.TRANSPOSE, "np.moveaxis", lambda x: np.transpose(x, (1, 2, 0)), lambda x: np.moveaxis(x, 0, -1),
      normal(2, 3, 4)),
    S(Op.TRANSPOSE, "size0", lambda x: np.transpose(x), lambda x: x.T, normal(0, 3)),

    S(Op.BROADCAST_TO, "np-(3,)-to-(2,3)", lambda x: np.broadcast_to(x, (2, 3)),
      lambda x: np.broadcast_to(x, (2, 3)), normal(3)),
    S(Op.BROADCAST_TO, "F-0d", lambda x: np.broadcast_to(x, (2, 2)), lambda x: F.broadcast_to(x, (2, 2)),
      ints(dtype=i32)),
    S(Op.BROADCAST_TO, "F-(3,1)-to-(2,3,4)", lambda x: np.broadcast_to(x, (2, 3, 4)),
      lambda x: F.broadcast_to(x, (2, 3, 4)), normal(3, 1, dtype=f32)),
    S(Op.BROADCAST_TO, "to-size0", lambda x: np.broadcast_to(x, (0, 3)), lambda x: np.broadcast_to(x, (0, 3)),
      normal(1, 3)),

    S(Op.EXPAND_DIMS, "np-axis0", lambda x: np.expand_dims(x, 0), lambda x: np.expand_dims(x, 0), normal(3, 4)),
    S(Op.EXPAND_DIMS, "np-axis-1", lambda x: np.expand_dims(x, -1), lambda x: np.expand_dims(x, -1), normal(3, 4)),
    S(Op.EXPAND_DIMS, "F-axis-tuple", lambda x: np.expand_dims(x, (0, 2)), lambda x: F.expand_dims(x, (0, 2)),
      bools(3, 4)),
    S(Op.EXPAND_DIMS, "F-0d", lambda x: np.expand_dims(x, 0), lambda x: F.expand_dims(x, 0), normal()),

    S(Op.SQUEEZE, "method-all", lambda x: np.squeeze(x), lambda x: x.squeeze(), normal(1, 3, 1)),
    S(Op.SQUEEZE, "method-axis-1", lambda x: np.squeeze(x, -1), lambda x: x.squeeze(-1), normal(1, 3, 1)),
    S(Op.SQUEEZE, "np-axis-tuple", lambda x: np.squeeze(x, axis=(0, 2)), lambda x: np.squeeze(x, axis=(0, 2)),
      ints(1, 3, 1)),
    S(Op.SQUEEZE, "F-size0", lambda x: np.squeeze(x), lambda x: F.squeeze(x), normal(1, 0, 1)),
    S(Op.SQUEEZE, "F-to-0d", lambda x: np.squeeze(x), lambda x: F.squeeze(x), normal(1, 1)),

    S(Op.CONCATENATE, "np-axis0", lambda x, y: np.concatenate([x, y]), lambda x, y: np.concatenate([x, y]),
      normal(2, 3), normal(4, 3)),
    S(Op.CONCATENATE, "np-axis-1", lambda x, y: np.concatenate([x, y], axis=-1),
      lambda x, y: np.concatenate((x, y), axis=-1), normal(2, 3), normal(2, 1)),
    S(Op.CONCATENATE, "np-axis-None", lambda x, y: np.concatenate([x, y], axis=None),
      lambda x, y: np.concatenate([x, y], axis=None), normal(2, 3), normal(4)),
    S(Op.CONCATENATE, "F-three", lambda x, y, z: np.concatenate([x, y, z], axis=1),
      lambda x, y, z: F.concatenate([x, y, z], axis=1), normal(2, 1), normal(2, 2), normal(2, 3)),
    S(Op.CONCATENATE, "mixed-f32-i32", lambda x, y: np.concatenate([x, y]), lambda x, y: F.concatenate([x, y]),
      normal(2, dtype=f32), ints(3, dtype=i32)),
    S(Op.CONCATENATE, "size0-piece", lambda x, y: np.concatenate([x, y]), lambda x, y: np.concatenate([x, y]),
      normal(0, 3), normal(2, 3)),
    S(Op.CONCATENATE, "with-const", lambda x: np.concatenate([x, np.ones((1, 3))]),
      lambda x: np.concatenate([x, np.ones((1, 3))]), normal(2, 3)),
    S(Op.CONCATENATE, "bool", lambda x, y: np.concatenate([x, y]), lambda x, y: F.concatenate([x, y]),
      bools(3), bools(1)),
    S(Op.CONCATENATE, "hstack-1d", lambda x, y: np.concatenate([x, y]), lambda x, y: np.hstack([x, y]),
      normal(2), normal(3)),
    S(Op.CONCATENATE, "hstack-2d", lambda x, y: np.concatenate([x, y], axis=1), lambda x, y: np.hstack((x, y)),
      normal(2, 2), normal(2, 3)),
    S(Op.CONCATENATE, "hstack-0d", lambda x, y: np.concatenate([x.reshape(1), y]), lambda x, y: F.hstack([x, y]),
      normal(), normal(2)),
    S(Op.CONCATENATE, "vstack-1d", lambda x, y: np.concatenate([x.reshape(1, 3), y.reshape(1, 3)]),
      lambda x, y: np.vstack([x, y]), normal(3), normal(3)),
    S(Op.CONCATENATE, "vstack-2d", lambda x, y: np.concatenate([x, y]), lambda x, y: F.vstack([x, y]),
      ints(1, 3), ints(2, 3)),

    S(Op.STACK, "np-axis0", lambda x, y: np.stack([x, y]), lambda x, y: np.stack([x, y]), normal(2, 3), normal(2, 3)),
    S(Op.STACK, "np-axis-1", lambda x, y: np.stack([x, y], axis=-1), lambda x, y: np.stack([x, y], axis=-1),
      normal(2, 3), normal(2, 3)),
    S(Op.STACK, "F-axis1-three", lambda x, y, z: np.stack([x, y, z], axis=1),
      lambda x, y, z: F.stack([x, y, z], axis=1), ints(2, 3), ints(2, 3), ints(2, 3)),
    S(Op.STACK, "0d", lambda x, y: np.stack([x, y]), lambda x, y: F.stack([x, y]), normal(), normal()),
    S(Op.STACK, "mixed-i32-f32", lambda x, y: np.stack([x, y]), lambda x, y: np.stack((x, y)),
      ints(3, dtype=i32), normal(3, dtype=f32)),
    S(Op.STACK, "size0", lambda x, y: np.stack([x, y], axis=1), lambda x, y: np.stack([x, y], axis=1),
      normal(0, 2), normal(0, 2)),

    S(Op.SPLIT, "np-sections", lambda x: np.split(x, 3), lambda x: np.split(x, 3), normal(6, 4)),
    S(Op.SPLIT, "np-indices-axis-1", lambda x: np.split(x, [1, 3], axis=-1),
      lambda x: np.split(x, [1, 3], axis=-1), normal(2, 5)),
    S(Op.SPLIT, "np-indices-past-end", lambda x: np.split(x, [2, 10]), lambda x: np.split(x, [2, 10]), ints(4)),
    S(Op.SPLIT, "np-indices-decreasing", lambda x: np.split(x, [3, 1]), lambda x: np.split(x, [3, 1]), normal(4)),
    S(Op.SPLIT, "np-negative-index", lambda x: np.split(x, [-1]), lambda x: np.split(x, [-1]), normal(4, 2)),
    S(Op.SPLIT, "np.array_split-uneven", lambda x: np.array_split(x, 4), lambda x: np.array_split(x, 4), normal(6)),
    S(Op.SPLIT, "F-split-axis1", lambda x: np.split(x, 2, axis=1), lambda x: F.split(x, 2, axis=1),
      bools(3, 4)),
    S(Op.SPLIT, "F-array_split-axis-1", lambda x: np.array_split(x, 3, axis=-1),
      lambda x: F.array_split(x, 3, axis=-1), normal(2, 5, dtype=f32)),
    S(Op.SPLIT, "size0", lambda x: np.split(x, 2, axis=1), lambda x: np.split(x, 2, axis=1), normal(0, 4)),
    S(Op.SPLIT, "one-section", lambda x: np.split(x, 1), lambda x: np.split(x, 1), normal(4, 2)),
    S(Op.SPLIT, "no-indices", lambda x: np.split(x, [], axis=1), lambda x: np.split(x, [], axis=1), normal(4, 2)),
    S(Op.SPLIT, "F-array_split-one", lambda x: np.array_split(x, 1), lambda x: F.array_split(x, 1), ints(3)),
    S(Op.SPLIT, "array_split-more-than-length", lambda x: np.array_split(x, 6), lambda x: np.array_split(x, 6),
      normal(4)),
    S(Op.SPLIT, "unpack-and-use", lambda x: np.split(x, 2)[0] * np.split(x, 2)[1],
      lambda x: F.mul(*np.split(x, 2)), normal(4, 3)),

    S(Op.REPEAT, "np-flat", lambda x: np.repeat(x, 2), lambda x: np.repeat(x, 2), normal(2, 3)),
    S(Op.REPEAT, "np-axis1", lambda x: np.repeat(x, 3, axis=1), lambda x: np.repeat(x, 3, axis=1), normal(2, 3)),
    S(Op.REPEAT, "method-per-element", lambda x: np.repeat(x, [1, 0, 2], axis=0),
      lambda x: x.repeat([1, 0, 2], axis=0), ints(3, 2)),
    S(Op.REPEAT, "F-axis-1", lambda x: np.repeat(x, 2, axis=-1), lambda x: F.repeat(x, 2, axis=-1), bools(2, 2)),
    S(Op.REPEAT, "F-0d", lambda x: np.repeat(x, 3), lambda x: F.repeat(x, 3), normal()),
    S(Op.REPEAT, "zero-times", lambda x: np.repeat(x, 0, axis=0), lambda x: np.repeat(x, 0, axis=0), normal(2, 3)),

    S(Op.TILE, "np-int", lambda x: np.tile(x, 2), lambda x: np.tile(x, 2), normal(2, 3)),
    S(Op.TILE, "np-longer-reps", lambda x: np.tile(x, (2, 1, 3)), lambda x: np.tile(x, (2, 1, 3)), normal(2, 3)),
    S(Op.TILE, "F-shorter-reps", lambda x: np.tile(x, (2,)), lambda x: F.tile(x, (2,)), ints(2, 3, dtype=i32)),
    S(Op.TILE, "F-0d", lambda x: np.tile(x, (2, 3)), lambda x: F.tile(x, (2, 3)), bools()),
    S(Op.TILE, "size0", lambda x: np.tile(x, (2, 2)), lambda x: np.tile(x, (2, 2)), normal(0, 2)),

    S(Op.PAD, "np-scalar-width", lambda x: np.pad(x, 1), lambda x: np.pad(x, 1), normal(2, 3)),
    S(Op.PAD, "np-per-axis", lambda x: np.pad(x, ((1, 2), (0, 3))), lambda x: np.pad(x, ((1, 2), (0, 3))),
      normal(2, 3)),
    S(Op.PAD, "np-value", lambda x: np.pad(x, ((0, 1), (2, 0)), constant_values=-1.5),
      lambda x: np.pad(x, ((0, 1), (2, 0)), constant_values=-1.5), normal(2, 3)),
    S(Op.PAD, "i32-int-value", lambda x: np.pad(x, 2, constant_values=7), lambda x: F.pad(x, 2, constant_values=7),
      ints(3, dtype=i32)),
    S(Op.PAD, "f32-value-cast", lambda x: np.pad(x, (1, 2), constant_values=0.1),
      lambda x: F.pad(x, (1, 2), constant_values=0.1), normal(3, dtype=f32)),
    S(Op.PAD, "0d", lambda x: np.pad(x, 1), lambda x: np.pad(x, 1), normal()),
    S(Op.PAD, "bool-True", lambda x: np.pad(x, 1, constant_values=True), lambda x: F.pad(x, 1, constant_values=True),
      bools(2, 2)),
    S(Op.PAD, "size0", lambda x: np.pad(x, ((1, 1), (0, 0))), lambda x: np.pad(x, ((1, 1), (0, 0))), normal(0, 3)),
    S(Op.PAD, "F-mode-constant", lambda x: np.pad(x, ((0, 0), (2, 1)), mode="constant"),
      lambda x: F.pad(x, ((0, 0), (2, 1)), mode="constant"), normal(2, 2)),

    S(Op.TRIU, "np", lambda x: np.triu(x), lambda x: np.triu(x), normal(4, 4)),
    S(Op.TRIU, "np-k=1", lambda x: np.triu(x, 1), lambda x: np.triu(x, k=1), normal(3, 5)),
    S(Op.TRIU, "F-k=-1-batched", lambda x: np.triu(x, -1), lambda x: F.triu(x, -1), normal(2, 4, 3)),
    S(Op.TRIU, "bool", lambda x: np.triu(x), lambda x: F.triu(x), bools(3, 3)),
    S(Op.TRIL, "np", lambda x: np.tril(x), lambda x: np.tril(x), normal(4, 4)),
    S(Op.TRIL, "np-k=-1", lambda x: np.tril(x, -1), lambda x: np.tril(x, k=-1), ints(3, 5, dtype=i32)),
    S(Op.TRIL, "F-k=2-batched", lambda x: np.tril(x, 2), lambda x: F.tril(x, 2), normal(2, 3, 4, dtype=f32)),
    S(Op.TRIL, "size0", lambda x: np.tril(x), lambda x: F.tril(x), normal(0, 3)),
]


# ---------------------------------------------------------------------------------------------------------
# Linear algebra


def _einsum(subscripts):
    return lambda *xs: np.einsum(subscripts, *xs)


def _F_einsum(subscripts):
    return lambda *xs: F.einsum(subscripts, *xs)


def _einsum_sample(subscripts, *inputs, spelled_with_F=False):
    fn = _F_einsum(subscripts) if spelled_with_F else _einsum(subscripts)
    return S(Op.EINSUM, subscripts.replace("->", "=").replace("...", "(ellipsis)"), _einsum(subscripts), fn,
             *inputs)


LINALG = [
    S(Op.MATMUL, "1d@1d", lambda a, b: np.matmul(a, b), lambda a, b: a @ b, normal(4), normal(4)),
    S(Op.MATMUL, "1d@2d", lambda a, b: np.matmul(a, b), lambda a, b: a @ b, normal(3), normal(3, 5)),
    S(Op.MATMUL, "2d@1d", lambda a, b: np.matmul(a, b), lambda a, b: a @ b, normal(2, 3), normal(3)),
    S(Op.MATMUL, "2d@2d", lambda a, b: np.matmul(a, b), lambda a, b: a @ b, normal(2, 3), normal(3, 5)),
    S(Op.MATMUL, "np-batched", lambda a, b: np.matmul(a, b), lambda a, b: np.matmul(a, b),
      normal(2, 3, 4), normal(2, 4, 5)),
    S(Op.MATMUL, "batched@2d", lambda a, b: np.matmul(a, b), lambda a, b: a @ b, normal(2, 3, 4), normal(4, 5)),
    S(Op.MATMUL, "2d@batched", lambda a, b: np.matmul(a, b), lambda a, b: a @ b, normal(3, 4), normal(2, 4, 5)),
    S(Op.MATMUL, "broadcast-batch", lambda a, b: np.matmul(a, b), lambda a, b: F.matmul(a, b),
      normal(2, 1, 3, 4), normal(5, 4, 2)),
    S(Op.MATMUL, "1d@batched", lambda a, b: np.matmul(a, b), lambda a, b: a @ b, normal(4), normal(2, 4, 3)),
    S(Op.MATMUL, "f32", lambda a, b: np.matmul(a, b), lambda a, b: F.matmul(a, b),
      normal(3, 4, dtype=f32), normal(4, 2, dtype=f32)),
    S(Op.MATMUL, "i64", lambda a, b: np.matmul(a, b), lambda a, b: a @ b, ints(3, 4), ints(4, 2)),
    S(Op.MATMUL, "i32@f32", lambda a, b: np.matmul(a, b), lambda a, b: a @ b,
      ints(3, 4, dtype=i32), normal(4, 2, dtype=f32)),
    S(Op.MATMUL, "bool", lambda a, b: np.matmul(a, b), lambda a, b: a @ b, bools(2, 3), bools(3, 2)),
    S(Op.MATMUL, "size0-inner", lambda a, b: np.matmul(a, b), lambda a, b: a @ b, normal(3, 0), normal(0, 4)),
    S(Op.MATMUL, "size0-batch", lambda a, b: np.matmul(a, b), lambda a, b: a @ b, normal(0, 3, 2), normal(2, 4)),
    S(Op.MATMUL, "rmatmul-const", lambda a: np.matmul(np.ones((2, 3)), a), lambda a: np.ones((2, 3)) @ a,
      normal(3, 4)),
    S(Op.MATMUL, "nan-inf", lambda a, b: np.matmul(a, b), lambda a, b: a @ b,
      special().reshape(2, 4), special(shift=1).reshape(4, 2)),

    _einsum_sample("ij,jk->ik", normal(2, 3), normal(3, 4)),
    _einsum_sample("bij,bjk->bik", normal(2, 2, 3), normal(2, 3, 4)),
    _einsum_sample("ij->ji", normal(2, 3), spelled_with_F=True),  # (np.einsum records it as the transpose it is)
    _einsum_sample("ij,kj->ik", normal(2, 3), normal(4, 3), spelled_with_F=True),
    _einsum_sample("...ij,...jk->...ik", normal(2, 2, 3), normal(3, 4)),
    _einsum_sample("bhqd,bhkd->bhqk", normal(1, 2, 3, 4), normal(1, 2, 5, 4)),
    _einsum_sample("i,i->", normal(5), normal(5)),
    _einsum_sample("ii->i", normal(3, 3)),
    _einsum_sample("ij,jk", ints(2, 3, dtype=i32), ints(3, 2, dtype=i32)),
    _einsum_sample("i,j->ij", normal(3, dtype=f32), normal(2, dtype=f32), spelled_with_F=True),
    _einsum_sample("...i->...", normal(2, 3, 4)),
    _einsum_sample("ij,j->i", normal(0, 3), normal(3)),

    S(Op.OUTER, "np-1d", lambda a, b: np.outer(a, b), lambda a, b: np.outer(a, b), normal(3), normal(4)),
    S(Op.OUTER, "np-flattens", lambda a, b: np.outer(a, b), lambda a, b: np.outer(a, b), normal(2, 3), normal(4)),
    S(Op.OUTER, "F-i32-f32", lambda a, b: np.outer(a, b), lambda a, b: F.outer(a, b),
      ints(3, dtype=i32), normal(2, dtype=f32)),
    S(Op.OUTER, "size0", lambda a, b: np.outer(a, b), lambda a, b: F.outer(a, b), normal(0), normal(3)),
    S(Op.OUTER, "0d", lambda a, b: np.outer(a, b), lambda a, b: F.outer(a, b), normal(), normal(3)),
]


# ---------------------------------------------------------------------------------------------------------
# Indexing: basic keys (views), advanced keys (copies), integer tensors as gathers

INDEX_KEYS = [
    # name              key
    ("int",             1),
    ("negative-int",    -1),
    ("two-ints",        (1, -2)),
    ("slice",           slice(1, 3)),
    ("slice-step",      slice(None, None, 2)),
    ("slice-reversed",  slice(None, None, -1)),
    ("slice-neg-steps", (slice(-1, 0, -2), slice(None, None, -2))),
    ("slice-past-end",  slice(2, 10)),
    ("slice-empty",     slice(2, 2)),
    ("None",            None),
    ("None-middle",     (slice(None), None, 2)),
    ("Ellipsis-int",    (Ellipsis, 0)),
    ("int-Ellipsis-int", (0, Ellipsis, -1)),
    ("Ellipsis-None",   (Ellipsis, None)),
    ("Ellipsis-alone",  Ellipsis),
    ("empty-tuple",     ()),
    ("list",            [0, 2]),
    ("list-negative",   [-1, 0, -1]),
    ("nested-list",     [[0, 1], [2, 3]]),
    ("int-array",       np.array([3, 1])),
    ("range",           range(1, 3)),
    ("list-axis1",      (slice(None), [1, -1])),
    ("last-kept",       (slice(None), [-1], slice(None))),
    ("two-lists",       ([0, 1], [2, 3])),
    ("separated-lists", ([0, 1], slice(None), [2, 3])),
    ("int-list-slice",  (1, [0, 2], slice(1, 3))),
    ("list-None",       ([0, 2], None)),
    ("bool-list-const", [True, False, True, False]),
    ("empty-list",      []),
]


def _getitem(key):
    """``x[key]``: the same code indexes the array (the reference) and the stand-in."""
    return lambda x: x[key]


INDEXING = [S(Op.INDEX, f"key-{name}", _getitem(key), _getitem(key), normal(4, 5, 6)) for name, key in INDEX_KEYS]
INDEXING += [
    S(Op.INDEX, "0d-empty-tuple", lambda x: x[()], lambda x: x[()], normal()),
    S(Op.INDEX, "0d-None", lambda x: x[None], lambda x: x[None], normal()),
    S(Op.INDEX, "0d-Ellipsis", lambda x: x[...], lambda x: x[...], ints(dtype=i32)),
    S(Op.INDEX, "size0-slice", lambda x: x[:, 1:], lambda x: x[:, 1:], normal(0, 3)),
    S(Op.INDEX, "size0-list", lambda x: x[[]], lambda x: x[[]], normal(3, 2)),
    S(Op.INDEX, "bool-values", lambda x: x[1:, [0, 0]], lambda x: x[1:, [0, 0]], bools(3, 2)),
    S(Op.INDEX, "iterate-rows", lambda x: [row * 2 for row in x], lambda x: [row * 2 for row in x], normal(3, 2)),
    # integer tensors: a gather whose indices are graph inputs
    S(Op.INDEX, "gather-emb[ids]", lambda emb, ids: emb[ids], lambda emb, ids: emb[ids],
      normal(10, 4), ints(6, low=0, high=10)),
    S(Op.INDEX, "gather-2d-ids-i32", lambda emb, ids: emb[ids], lambda emb, ids: emb[ids],
      normal(10, 4, dtype=f32), ints(2, 3, dtype=i32, low=-10, high=10)),
    S(Op.INDEX, "gather-axis1", lambda x, ids: x[:, ids], lambda x, ids: x[:, ids],
      normal(3, 5), ints(4, low=0, high=5)),
    S(Op.INDEX, "gather-pairs", lambda x, i, j: x[i, j], lambda x, i, j: x[i, j], normal(3, 5),
      ints(4, low=0, high=3), ints(4, low=0, high=5)),
    S(Op.INDEX, "gather-tensor-and-slice", lambda x, ids: x[ids, 1:3], lambda x, ids: x[ids, 1:3], normal(3, 5),
      ints(2, 2, low=-3, high=3)),
    S(Op.INDEX, "gather-tensor-and-list", lambda x, ids: x[ids, [0, 4]], lambda x, ids: x[ids, [0, 4]], normal(3, 5),
      ints(2, low=0, high=3)),
    S(Op.INDEX, "gather-0d-id", lambda x, i: x[i], lambda x, i: x[i], normal(3, 5), ints(low=0, high=3)),
    S(Op.INDEX, "gather-size0-ids", lambda x, ids: x[ids], lambda x, ids: x[ids], normal(3, 5), ints(0)),
]


# In-place updates written the NumPy way: the traced function and the reference are the same code, run on
# stand-ins and on arrays. They become index_update nodes (functional updates) in the graph.

def set_slice(x, v):
    x = x.copy()
    x[1:3] = v
    return x


def issue_example(x, v):
    x = x.copy()
    x[1:3] = v
    x += 1
    x[:, 0] *= 2
    return x


def write_through_view(x):
    x = x.copy()
    v = x[0]
    v[...] = 5
    return x


def write_through_transposed_view(x):
    x = x.copy()
    x.T[1] += 2.5
    return x, x * 2


def write_through_reshaped_view(x):
    x = x.copy()
    blocks = x.reshape(2, 2, 3)  # splits the first dimension: always a view in NumPy
    blocks[:, 0] = 0.0
    return x


def chained_view_writes(x):
    x = x.copy()
    row = x[1]
    row[1:] = -1.0
    row *= 3
    return x, row


def read_after_write(x):
    x = x.copy()
    x[0] = 0.0
    y = x.sum(axis=0)
    x[-1, -1] = y[0]
    return x, y


def scatter_with_tensor_ids(x, ids, v):
    x = x.copy()
    x[ids] = v
    return x


def add_at_advanced(x):
    x = x.copy()
    x[[0, 2], 1] += 10.0
    return x


def f32_update_keeps_dtype(x):
    x = x.copy()
    x *= 0.5
    x[...] -= 1
    x[0, ::2] = 3
    return x


def i32_update_keeps_dtype(x):
    x = x.copy()
    x += 1
    x[1] //= 2
    x[:, -1] = 7
    return x


def bool_mask_update(x):
    x = x.copy()
    x[[True, False, True]] = 0.0
    return x


def fill_and_setitem_none(x):
    x = x.copy()
    x[None, 1] = 4.0
    x[2].fill(1.5)
    return x


def nested_views(x):
    x = x.copy()
    rows = x[1:3]
    corner = rows[:, 1:]
    corner *= 10
    return x, rows, corner


def write_through_expand_dims_and_squeeze(x):
    x = x.copy()
    np.expand_dims(x, 0)[0, 0, 0] = 5.0
    x[None].squeeze(0)[1] += 1.0
    return x


def cast_on_assignment(x, v):
    y = x.astype(np.float32)
    y[0] = v  # float64 values stored into float32
    k = x.astype(np.int32)
    k[1] = 2.7  # truncated, as NumPy does
    return y, k


def swap_rows(x):
    y = x.copy()
    y[0] = x[2]
    y[2] = x[0]
    return y


def overlapping_self_update(x):
    y = x.copy()
    y[1:] += y[:-1]
    return y


def reverse_through_view(x):
    y = x.copy()
    row = y[0]
    row[:] = row[::-1]
    return y


def add_through_its_own_view(x):
    y = x.copy()
    y += y.T[:4, :3].T
    return y


def scatter_add_duplicate_ids(x, ids):
    y = x.copy()
    y[ids] += 1.0  # NumPy's buffered semantics: a duplicated id is incremented once
    return y


def int_in_place_ops(x):
    y = x.astype(np.int64)
    y //= 2
    y %= 3
    y **= 2
    y -= 1
    return y


def bool_in_place_ops(x):
    y = x > 0
    y &= x < 1
    y |= x < -1
    y ^= True
    return y


def ufunc_out(x, y):
    out = np.zeros_like(x)
    np.add(x, y, out=out)
    return out


IN_PLACE = [
    S(Op.INDEX_UPDATE, "set-slice", set_slice, set_slice, normal(4, 3), normal(3)),
    S(Op.INDEX_UPDATE, "issue-example", issue_example, issue_example, normal(4, 3), normal(2, 3)),
    S(Op.INDEX_UPDATE, "write-through-view", write_through_view, write_through_view, normal(3, 4)),
    S(Op.INDEX_UPDATE, "write-through-.T", write_through_transposed_view, write_through_transposed_view, normal(2, 3)),
    S(Op.INDEX_UPDATE, "write-through-reshape", write_through_reshaped_view, write_through_reshaped_view,
      normal(4, 3)),
    S(Op.INDEX_UPDATE, "chained-view-writes", chained_view_writes, chained_view_writes, normal(3, 4)),
    S(Op.INDEX_UPDATE, "read-after-write", read_after_write, read_after_write, normal(3, 4)),
    S(Op.INDEX_UPDATE, "scatter-tensor-ids", scatter_with_tensor_ids, scatter_with_tensor_ids,
      normal(5, 3), ints(2, low=0, high=5), normal(2, 3)),
    S(Op.INDEX_UPDATE, "add-at-advanced", add_at_advanced, add_at_advanced, normal(3, 3)),
    S(Op.INDEX_UPDATE, "f32-keeps-dtype", f32_update_keeps_dtype, f32_update_keeps_dtype, normal(2, 3, dtype=f32)),
    S(Op.INDEX_UPDATE, "i32-keeps-dtype", i32_update_keeps_dtype, i32_update_keeps_dtype, ints(3, 4, dtype=i32)),
    S(Op.INDEX_UPDATE, "bool-mask-const", bool_mask_update, bool_mask_update, normal(3, 2)),
    S(Op.INDEX_UPDATE, "fill-and-None", fill_and_setitem_none, fill_and_setitem_none, normal(3, 2)),
    S(Op.INDEX_UPDATE, "ufunc-out", ufunc_out, ufunc_out, normal(3, 2), normal(2)),
    S(Op.INDEX_UPDATE, "nested-views", nested_views, nested_views, normal(3, 4)),
    S(Op.INDEX_UPDATE, "expand_dims-squeeze-views", write_through_expand_dims_and_squeeze,
      write_through_expand_dims_and_squeeze, normal(3, 4)),
    S(Op.INDEX_UPDATE, "cast-on-assignment", cast_on_assignment, cast_on_assignment, normal(3, 4), normal(4)),
    S(Op.INDEX_UPDATE, "swap-rows", swap_rows, swap_rows, normal(3, 4)),
    S(Op.INDEX_UPDATE, "overlapping-self-update", overlapping_self_update, overlapping_self_update, normal(4, 3)),
    S(Op.INDEX_UPDATE, "reverse-through-view", reverse_through_view, reverse_through_view, normal(2, 5)),
    S(Op.ADD, "in-place-through-own-view", add_through_its_own_view, add_through_its_own_view, normal(3, 4)),
    S(Op.INDEX_UPDATE, "scatter-add-duplicate-ids", scatter_add_duplicate_ids, scatter_add_duplicate_ids,
      normal(4, 2), np.array([0, 3, 0])),
    S(Op.FLOORDIV, "in-place-i64-ops", int_in_place_ops, int_in_place_ops, normal(3, 4) * 5),
    S(Op.LOGICAL_XOR, "in-place-bool-ops", bool_in_place_ops, bool_in_place_ops, normal(3, 4)),
]


# ---------------------------------------------------------------------------------------------------------
# Neural-network composites: the reference formulas are written here again, with plain NumPy.


def softmax_ref(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax_ref(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def layer_norm_ref(x, weight=None, bias=None, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    y = centered / np.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def linear_ref(x, weight, bias=None):
    y = np.matmul(x, weight.T)
    return y if bias is None else y + bias


NN = [
    S(Op.SOFTMAX, "last-axis", softmax_ref, lambda x: F.softmax(x), normal(3, 5)),
    S(Op.SOFTMAX, "axis0", lambda x: softmax_ref(x, 0), lambda x: F.softmax(x, axis=0), normal(3, 5)),
    S(Op.SOFTMAX, "axis-2-3d", lambda x: softmax_ref(x, -2), lambda x: F.softmax(x, -2), normal(2, 3, 4)),
    S(Op.SOFTMAX, "f32", softmax_ref, lambda x: F.softmax(x), normal(4, 6, dtype=f32)),
    S(Op.SOFTMAX, "nan-inf", softmax_ref, lambda x: F.softmax(x), special().reshape(2, 4)),
    S(Op.SOFTMAX, "size0-rows", softmax_ref, lambda x: F.softmax(x), normal(0, 4)),
    S(Op.SOFTMAX, "size1", softmax_ref, lambda x: F.softmax(x), normal(3, 1)),
    S(Op.SOFTMAX, "i64", softmax_ref, lambda x: F.softmax(x), ints(2, 3)),
    S(Op.LOG_SOFTMAX, "last-axis", log_softmax_ref, lambda x: F.log_softmax(x), normal(3, 5)),
    S(Op.LOG_SOFTMAX, "axis0-f32", lambda x: log_softmax_ref(x, 0), lambda x: F.log_softmax(x, axis=0),
      normal(3, 5, dtype=f32)),
    S(Op.LOG_SOFTMAX, "nan-inf", log_softmax_ref, lambda x: F.log_softmax(x), special().reshape(4, 2)),
    S(Op.LOG_SOFTMAX, "1d", log_softmax_ref, lambda x: F.log_softmax(x), normal(6)),
    S(Op.LAYER_NORM, "plain", layer_norm_ref, lambda x: F.layer_norm(x), normal(3, 8)),
    S(Op.LAYER_NORM, "weight-bias", layer_norm_ref, lambda x, w, b: F.layer_norm(x, w, b),
      normal(2, 3, 8), normal(8), normal(8)),
    S(Op.LAYER_NORM, "weight-only-eps", lambda x, w: layer_norm_ref(x, w, eps=1e-3),
      lambda x, w: F.layer_norm(x, w, eps=1e-3), normal(3, 8), normal(8)),
    S(Op.LAYER_NORM, "bias-only", lambda x, b: layer_norm_ref(x, bias=b), lambda x, b: F.layer_norm(x, bias=b),
      normal(3, 8), normal(8)),
    S(Op.LAYER_NORM, "f32", layer_norm_ref, lambda x, w, b: F.layer_norm(x, w, b),
      normal(4, 16, dtype=f32), normal(16, dtype=f32), normal(16, dtype=f32)),
    S(Op.LAYER_NORM, "1d", layer_norm_ref, lambda x: F.layer_norm(x), normal(5)),
    S(Op.LINEAR, "with-bias", linear_ref, lambda x, w, b: F.linear(x, w, b), normal(3, 4), normal(5, 4), normal(5)),
    S(Op.LINEAR, "no-bias", linear_ref, lambda x, w: F.linear(x, w), normal(3, 4), normal(5, 4)),
    S(Op.LINEAR, "1d-input", linear_ref, lambda x, w, b: F.linear(x, w, b), normal(4), normal(2, 4), normal(2)),
    S(Op.LINEAR, "batched", linear_ref, lambda x, w, b: F.linear(x, w, b), normal(2, 3, 4), normal(5, 4), normal(5)),
    S(Op.LINEAR, "f32", linear_ref, lambda x, w, b: F.linear(x, w, b),
      normal(3, 4, dtype=f32), normal(2, 4, dtype=f32), normal(2, dtype=f32)),
]


# Convolution, pooling, batch normalization. The references repeat the op's NumPy sequence (windows as a strided
# view, then tensordot / max / mean); one convolution is also checked against a plain loop on integer-valued
# floats, where every order of summation gives the same bits.


def _windows_ref(x, kh, kw, sh=1, sw=1, dh=1, dw=1):
    view = np.lib.stride_tricks.sliding_window_view(x, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(-2, -1))
    return view[..., ::sh, ::sw, ::dh, ::dw]


def conv2d_ref(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    if padding != (0, 0):
        x = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])))
    win = _windows_ref(x, w.shape[2], w.shape[3], *stride, *dilation)
    cg, og = w.shape[1], w.shape[0] // groups
    parts = [np.tensordot(win[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], axes=((1, 4, 5), (1, 2, 3)))
             for g in range(groups)]
    y = np.ascontiguousarray(np.moveaxis(parts[0] if groups == 1 else np.concatenate(parts, axis=-1), -1, 1))
    return y if b is None else y + b.reshape(-1, 1, 1)


def conv2d_loop(x, w, b):
    """Stride 1, no padding, one group: the definition, one output element at a time."""
    n, _, h, wd = x.shape
    o, c, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1), dtype=np.result_type(x, w))
    for i in np.ndindex(*out.shape):
        out[i] = np.sum(x[i[0], :, i[2]:i[2] + kh, i[3]:i[3] + kw] * w[i[1]]) + b[i[1]]
    return out


def integer_valued(*shape, dtype=f64):
    return RNG.integers(-3, 4, shape).astype(dtype)


def batch_norm_ref(x, mean, var, weight=None, bias=None, eps=1e-5):
    shape = (-1,) + (1,) * (x.ndim - 2)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def positive(*shape, dtype=f64):
    return make(dtype, shape, "positive")


def _lowest_ref(x):
    return -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min


CONV = [
    S(Op.CONV2D, "f64-bias", conv2d_ref, lambda x, w, b: F.conv2d(x, w, b), normal(2, 3, 5, 6), normal(4, 3, 3, 3),
      normal(4)),
    S(Op.CONV2D, "f32-no-bias", conv2d_ref, lambda x, w: F.conv2d(x, w), normal(1, 2, 4, 4, dtype=f32),
      normal(3, 2, 2, 2, dtype=f32)),
    S(Op.CONV2D, "stride-padding-dilation", lambda x, w: conv2d_ref(x, w, None, (2, 1), (1, 2), (2, 1)),
      lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(1, 2), dilation=(2, 1)), normal(2, 2, 7, 6),
      normal(3, 2, 3, 2)),
    S(Op.CONV2D, "groups-2", lambda x, w, b: conv2d_ref(x, w, b, padding=(1, 1), groups=2),
      lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2), normal(1, 4, 5, 5, dtype=f32),
      normal(6, 2, 3, 3, dtype=f32), normal(6, dtype=f32)),
    S(Op.CONV2D, "depthwise", lambda x, w: conv2d_ref(x, w, groups=3), lambda x, w: F.conv2d(x, w, groups=3),
      normal(2, 3, 4, 4), normal(3, 1, 2, 2)),
    S(Op.CONV2D, "plain-loop-integer-valued", conv2d_loop, lambda x, w, b: F.conv2d(x, w, b),
      integer_valued(2, 3, 5, 4), integer_valued(2, 3, 2, 3), integer_valued(2)),
    S(Op.CONV2D, "nan-inf", conv2d_ref, lambda x, w: F.conv2d(x, w), special().reshape(1, 2, 2, 2),
      normal(1, 2, 1, 1)),
    S(Op.MAX_POOL2D, "2x2", lambda x: np.max(_windows_ref(x, 2, 2, 2, 2), axis=(-2, -1)),
      lambda x: F.max_pool2d(x, 2), normal(2, 3, 4, 6)),
    S(Op.MAX_POOL2D, "3x3-stride1-padding1-f32",
      lambda x: np.max(_windows_ref(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf), 3, 3),
                       axis=(-2, -1)),
      lambda x: F.max_pool2d(x, 3, stride=1, padding=1), normal(1, 2, 5, 5, dtype=f32)),
    S(Op.MAX_POOL2D, "i32-padding", lambda x: np.max(_windows_ref(np.pad(x, ((0, 0), (1, 1), (1, 1)),
                                                                         constant_values=_lowest_ref(x)), 2, 2, 2, 2),
                                                     axis=(-2, -1)),
      lambda x: F.max_pool2d(x, 2, padding=1), ints(2, 3, 3, dtype=i32)),
    S(Op.MAX_POOL2D, "nan-propagates", lambda x: np.max(_windows_ref(x, 2, 2, 2, 2), axis=(-2, -1)),
      lambda x: F.max_pool2d(x, 2), special().reshape(1, 2, 4)),
    S(Op.AVG_POOL2D, "2x2", lambda x: np.mean(_windows_ref(x, 2, 2, 2, 2), axis=(-2, -1)),
      lambda x: F.avg_pool2d(x, 2), normal(2, 3, 4, 4)),
    S(Op.AVG_POOL2D, "3x3-stride2-padding1-f32",
      lambda x: np.mean(_windows_ref(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), 3, 3, 2, 2), axis=(-2, -1)),
      lambda x: F.avg_pool2d(x, 3, stride=2, padding=1), normal(1, 2, 5, 6, dtype=f32)),
    S(Op.AVG_POOL2D, "i64-gives-f64", lambda x: np.mean(_windows_ref(x, 2, 1, 1, 1), axis=(-2, -1)),
      lambda x: F.avg_pool2d(x, (2, 1), stride=1), ints(3, 4)),
    S(Op.BATCH_NORM, "f32-affine", batch_norm_ref, lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b),
      normal(2, 3, 4, 4, dtype=f32), normal(3, dtype=f32), positive(3, dtype=f32), normal(3, dtype=f32),
      normal(3, dtype=f32)),
    S(Op.BATCH_NORM, "no-affine-eps", lambda x, m, v: batch_norm_ref(x, m, v, eps=1e-3),
      lambda x, m, v: F.batch_norm(x, m, v, eps=1e-3), normal(2, 3, 2, 2), normal(3), positive(3)),
    S(Op.BATCH_NORM, "2d-input-weight-only", lambda x, m, v, w: batch_norm_ref(x, m, v, w),
      lambda x, m, v, w: F.batch_norm(x, m, v, w), normal(5, 4), normal(4), positive(4), normal(4)),
    S(Op.BATCH_NORM, "f64-stats-promote-f32", batch_norm_ref, lambda x, m, v: F.batch_norm(x, m, v),
      normal(1, 2, 3, 3, dtype=f32), normal(2), positive(2)),
    S(Op.BATCH_NORM, "nan-inf", batch_norm_ref, lambda x, m, v: F.batch_norm(x, m, v),
      special().reshape(1, 2, 4), normal(2), positive(2)),
]

# ---------------------------------------------------------------------------------------------------------
# Unmodified NumPy programs: only np.* calls, operators and ndarray methods; traced through NumPy's protocols.


def attention(x, wq, wk, wv, wo):
    """Causal multi-head self-attention, as a NumPy tutorial writes it."""
    seq, dim = x.shape
    heads = 2
    head_dim = dim // heads
    q = (x @ wq).reshape(seq, heads, head_dim).transpose(1, 0, 2)
    k = (x @ wk).reshape(seq, heads, head_dim).transpose(1, 0, 2)
    v = np.matmul(x, wv).reshape(seq, heads, head_dim).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(head_dim)
    causal = np.triu(np.ones((seq, seq), dtype=bool), k=1)
    scores = np.where(causal, -np.inf, scores)
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / np.sum(weights, axis=-1, keepdims=True)
    out = (weights @ v).transpose(1, 0, 2).reshape(seq, dim)
    return out @ wo


def mlp(x, w1, b1, w2, b2):
    """A two-layer MLP with a tanh-GELU and a ReLU head, weights stored [in, out] and [out, in]."""
    h = x @ w1 + b1
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
    y = np.maximum(h @ w2.T + b2, 0.0)
    return y, np.mean(y, axis=-1)


PROGRAMS = [
    S(Op.MATMUL, "program-attention-f64", attention, attention,
      normal(5, 8), normal(8, 8), normal(8, 8), normal(8, 8), normal(8, 8)),
    S(Op.MATMUL, "program-attention-f32", attention, attention, *(normal(4, 6, dtype=f32),
      *(normal(6, 6, dtype=f32) for _ in range(4)))),
    S(Op.MATMUL, "program-mlp-f64", mlp, mlp, normal(4, 3), normal(3, 8), normal(8), normal(2, 8), normal(2)),
    S(Op.MATMUL, "program-mlp-f32", mlp, mlp, normal(4, 3, dtype=f32), normal(3, 8, dtype=f32),
      normal(8, dtype=f32), normal(2, 8, dtype=f32), normal(2, dtype=f32)),
]


# ---------------------------------------------------------------------------------------------------------
# Structured control flow (F.cond, F.while_loop, F.fori_loop, F.scan): the reference is plain Python control
# flow; the inputs are chosen so that each branch, and each loop count including zero, is taken.

_CF_RNG = np.random.default_rng(34)  # its own generator: the inputs above stay what they were


def cf_normal(*shape, dtype=f64, scale=1.0) -> np.ndarray:
    return (_CF_RNG.standard_normal(shape) * scale).astype(dtype)


def cond_ref(x, y):
    return np.tanh(x) * y if x.sum() > 0 else x - y


def cond_fn(x, y):
    return F.cond(x.sum() > 0, lambda a, b: np.tanh(a) * b, lambda a, b: a - b, x, y)


def cond_closure_ref(x, w):
    h = x @ w
    return (h, h.max()) if h.mean() > 0 else (-h, h.min())


def cond_closure_fn(x, w):
    h = x @ w
    return F.cond(h.mean() > 0, lambda: (h, h.max()), lambda: (-h, h.min()))


def nested_cond_ref(x):
    if x[0] > 0:
        return x * 2.0 if x[1] > 0 else x * 3.0
    return -x


def nested_cond_fn(x):
    inner = lambda v: F.cond(v[1] > 0, lambda a: a * 2.0, lambda a: a * 3.0, v)
    return F.cond(x[0] > 0, inner, lambda a: -a, x)


def while_ref(x):
    n = np.int64(0)
    while np.abs(x).sum() > 1.0:
        x, n = x * 0.5, n + 1
    return x, n


def while_fn(x):
    return F.while_loop(lambda c: np.abs(c[0]).sum() > 1.0, lambda c: (c[0] * 0.5, c[1] + 1), (x, 0))


def fori_ref(x, lower, upper):
    acc = x
    for i in range(lower, upper):
        acc = acc * 0.5 + x[i]
    return acc


def scan_ref(x, y):
    carry, ys, zs = x[0] * 0.0, [], []
    for a, b in zip(x, y):
        carry = carry + a * b
        ys.append(carry)
        zs.append(a.sum())
    return carry, np.stack(ys), np.stack(zs)


def scan_fn(x, y):
    def step(c, ab):
        a, b = ab
        c = c + a * b
        return c, (c, a.sum())
    carry, (ys, zs) = F.scan(step, x[0] * 0.0, (x, y))
    return carry, ys, zs


def scan_empty_ref(x):
    return x.sum(axis=0), np.zeros((0, 3))


CONTROL = [
    S(Op.COND, "then-taken", cond_ref, cond_fn, np.abs(cf_normal(3, 4)), cf_normal(3, 4)),
    S(Op.COND, "else-taken", cond_ref, cond_fn, -np.abs(cf_normal(3, 4)), cf_normal(3, 4)),
    S(Op.COND, "f32", cond_ref, cond_fn, np.abs(cf_normal(2, 3, dtype=f32)), cf_normal(2, 3, dtype=f32)),
    S(Op.COND, "closures-two-outputs-then", cond_closure_ref, cond_closure_fn, np.abs(cf_normal(2, 3)),
      np.abs(cf_normal(3, 3))),
    S(Op.COND, "closures-two-outputs-else", cond_closure_ref, cond_closure_fn, np.abs(cf_normal(2, 3)),
      -np.abs(cf_normal(3, 3))),
    S(Op.COND, "nested-inner-else", nested_cond_ref, nested_cond_fn, np.array([1.0, -2.0, 3.0])),
    S(Op.COND, "nested-inner-then", nested_cond_ref, nested_cond_fn, np.array([1.0, 2.0, 3.0])),
    S(Op.COND, "nested-outer-else", nested_cond_ref, nested_cond_fn, np.array([-1.0, 2.0, 3.0])),
    S(Op.WHILE_LOOP, "zero-iterations", while_ref, while_fn, cf_normal(4, scale=0.01)),
    S(Op.WHILE_LOOP, "several-iterations", while_ref, while_fn, cf_normal(4, scale=10.0)),
    S(Op.FORI_LOOP, "index-in-body", fori_ref,
      lambda x, lower, upper: F.fori_loop(lower, upper, lambda i, acc: acc * 0.5 + x[i], x),
      cf_normal(4), np.int64(1), np.int64(4)),
    S(Op.FORI_LOOP, "empty-range", fori_ref,
      lambda x, lower, upper: F.fori_loop(lower, upper, lambda i, acc: acc * 0.5 + x[i], x),
      cf_normal(4), np.int64(3), np.int64(3)),
    S(Op.SCAN, "pairs-of-xs-and-ys", scan_ref, scan_fn, cf_normal(5, 3), cf_normal(5, 3)),
    S(Op.SCAN, "f32", scan_ref, scan_fn, cf_normal(4, 2, dtype=f32), cf_normal(4, 2, dtype=f32)),
    S(Op.SCAN, "length-0", scan_empty_ref,
      lambda x: F.scan(lambda c, row: (c + row, row * 2.0), x.sum(axis=0), x[:0]), cf_normal(2, 3)),
]


# A leaf module's call (graph_lab.nn.record_call, what symbolic_trace records): eagerly the module runs; traced,
# one call_module node whose region is the module's forward.

def _module_call_fn(x):
    from graph_lab import nn
    return nn.record_call(_MODULE_FC, "fc", (x,))


def _make_fc():
    from graph_lab import nn
    return nn.Linear(4, 3, generator=np.random.default_rng(5))


_MODULE_FC = _make_fc()
MODULES = [
    S(Op.CALL_MODULE, "linear-leaf", lambda x: np.matmul(x, np.transpose(np.asarray(_MODULE_FC.weight)))
      + np.asarray(_MODULE_FC.bias), _module_call_fn, cf_normal(2, 4)),
]


# ---------------------------------------------------------------------------------------------------------
# The table


def _build() -> list[Sample]:
    samples: list[Sample] = []
    for row in UNARY:
        samples += unary_samples(*row)
    for row in BINARY:
        samples += binary_samples(*row)
    for row in REDUCTIONS:
        samples += reduction_samples(*row)
    samples += ELEMENTWISE_OTHER + WEAK_SCALARS_EXAMPLES + CONSTANTS + SHAPE + LINALG
    samples += INDEXING + IN_PLACE + NN + CONV + PROGRAMS + CONTROL + MODULES
    from tests.support import opinfo_coverage  # the second part of the table (it reads this module's helpers, defined by now)
    samples += opinfo_coverage.SAMPLES
    duplicates = sorted(i for i, n in Counter(s.id for s in samples).items() if n > 1)
    assert not duplicates, f"sample ids must be unique: {duplicates}"
    return samples


SAMPLES = _build()
