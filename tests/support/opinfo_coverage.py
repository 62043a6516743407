"""The op sample table, part 2: the ops real NumPy programs need beyond the first table (trigonometry, rounding,
NaN tests, bitwise integers, complex parts, running sums, sorting, the dot family, diagonals, take, statistics,
size constructors, ufunc methods and the registry of library functions).

``opinfo._build`` adds ``SAMPLES`` here to its table, so every test that the first table drives (test_ops,
test_backends, test_symbolic_ops, test_every_graph_round_trips) runs these too. Import ``opinfo``, not this
module, first. References are plain NumPy, called on the same arrays.
"""

from __future__ import annotations

import operator

import numpy as np

from graph_lab import F, Op
from tests.support import opinfo
from tests.support.opinfo import ALL, FLOATS, INTS, NUMBERS, binary_samples, bools, f32, f64, i32, ints, normal, special, unary_samples

RNG = np.random.default_rng(19)  # its own generator: the first table's inputs stay what they were

FOLDED_WHEN_STATIC = frozenset({Op.ARANGE, Op.LINSPACE, Op.EYE, Op.TRI})
"""Constructors that NumPy runs at capture when their sizes are numbers (the graph holds a constant): they are
nodes only with symbolic sizes (test_symbolic_ops and test_ops_coverage check those)."""


def S(op: Op, name: str, ref, fn, *inputs):
    """A sample whose traced function takes its arrays positionally (NumPy functions have positional-only or
    keyword parameters that the trace must not take for tensor names)."""
    return opinfo.S(op, name, ref, lambda *xs: fn(*xs), *inputs)


def cnormal(*shape, dtype=np.complex128) -> np.ndarray:
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def unit(*shape, dtype=f64) -> np.ndarray:
    """Values in [-1, 1]: the domain of arcsin and arccos."""
    return RNG.uniform(-1.0, 1.0, shape).astype(dtype)


UNARY = [
    # op           NumPy reference  NumPy spellings                dtypes     domain
    (Op.ARCTAN,    np.arctan,       [np.arctan],                   NUMBERS,   "any"),
    (Op.SINH,      np.sinh,         [np.sinh],                     NUMBERS,   "any"),
    (Op.COSH,      np.cosh,         [np.cosh],                     NUMBERS,   "any"),
    (Op.LOG2,      np.log2,         [np.log2],                     NUMBERS,   "positive"),
    (Op.LOG10,     np.log10,        [np.log10],                    NUMBERS,   "positive"),
    (Op.EXP2,      np.exp2,         [np.exp2],                     NUMBERS,   "any"),
    (Op.ISNAN,     np.isnan,        [np.isnan],                    ALL,       "any"),
    (Op.ISINF,     np.isinf,        [np.isinf],                    ALL,       "any"),
    (Op.ISFINITE,  np.isfinite,     [np.isfinite],                 ALL,       "any"),
    (Op.RINT,      np.rint,         [np.rint],                     NUMBERS,   "any"),
    (Op.TRUNC,     np.trunc,        [np.trunc],                    NUMBERS,   "any"),
    # (x.conj() of a real array is x itself, no node: the method is sampled on complex values below)
    (Op.CONJ,      np.conjugate,    [np.conj],                     NUMBERS,   "any"),
    (Op.INVERT,    np.invert,       [operator.invert, np.invert], INTS, "any"),
]

BINARY = [
    (Op.ARCTAN2,   np.arctan2,      [np.arctan2],                  NUMBERS,   "any",    "any"),
    (Op.HYPOT,     np.hypot,        [np.hypot],                    NUMBERS,   "any",    "any"),
    (Op.LOGADDEXP, np.logaddexp,    [np.logaddexp],                FLOATS,    "any",    "any"),
]

TRIG_IN_DOMAIN = [
    S(op, f"{name}-{dt}", ref, ref, unit(3, 4, dtype=dt))
    for op, name, ref in [(Op.ARCSIN, "np", np.arcsin), (Op.ARCCOS, "np", np.arccos)] for dt in FLOATS
] + [
    S(Op.ARCSIN, "F-nan-inf", np.arcsin, F.arcsin, special()),
    S(Op.ARCCOS, "F-i32-outside-domain-nan", np.arccos, F.arccos, ints(3, 2, dtype=i32, low=-2, high=3)),
    S(Op.ARCSIN, "size0", np.arcsin, F.arcsin, normal(0, 2)),
]


def _bitwise(op, ref, spelled):
    return [
        S(op, "i64", ref, spelled, ints(3, 4, low=-50, high=50), ints(3, 4, low=0, high=5)),
        S(op, "i32-broadcast", ref, spelled, ints(3, 1, dtype=i32, low=0, high=200), ints(4, dtype=i32, low=0, high=6)),
        S(op, "mixed-i32-i64", ref, spelled, ints(2, 3, dtype=i32, low=0, high=99), ints(2, 3, low=0, high=4)),
        S(op, "i32-and-python-int", lambda x: ref(x, 3), lambda x: spelled(x, 3), ints(2, 3, dtype=i32, high=60)),
        S(op, "python-int-and-i64", lambda x: ref(5, x), lambda x: spelled(5, x), ints(2, 3, low=0, high=4)),
        S(op, "uint8-and-int", lambda x: ref(x, 1), lambda x: spelled(x, 1), ints(6, low=0, high=255).astype(np.uint8)),
        S(op, "size0", ref, spelled, ints(0, 2), ints(2, low=0, high=3)),
    ]


BITWISE = (_bitwise(Op.BITWISE_AND, np.bitwise_and, operator.and_) + _bitwise(Op.BITWISE_OR, np.bitwise_or, operator.or_)
           + _bitwise(Op.BITWISE_XOR, np.bitwise_xor, operator.xor)
           + _bitwise(Op.LEFT_SHIFT, np.left_shift, operator.lshift)
           + _bitwise(Op.RIGHT_SHIFT, np.right_shift, operator.rshift)) + [
    S(Op.BITWISE_AND, "np-function", np.bitwise_and, np.bitwise_and, ints(3, high=40), ints(3, high=40)),
    S(Op.BITWISE_OR, "F", np.bitwise_or, F.bitwise_or, ints(3, high=40), ints(3, high=40)),
    S(Op.BITWISE_XOR, "bool-and-int-is-int", np.bitwise_xor, np.bitwise_xor, bools(4), ints(4)),
    S(Op.LEFT_SHIFT, "np-function", np.left_shift, np.left_shift, ints(3, low=0, high=9), ints(3, low=0, high=3)),
    S(Op.RIGHT_SHIFT, "np-function-uint32", np.right_shift, np.right_shift,
      ints(5, low=0, high=2**31).astype(np.uint32), ints(5, low=0, high=8).astype(np.uint32)),
    S(Op.BITWISE_XOR, "crc-step", lambda c: np.where(c & 1, (c >> 1) ^ 0xEDB88320, c >> 1),
      lambda c: np.where(c & 1, (c >> 1) ^ 0xEDB88320, c >> 1), ints(8, low=0, high=2**32).astype(np.uint32)),
]

ROUNDING_AND_COMPLEX = [
    S(Op.ROUND, "np-decimals=0", np.round, np.round, normal(3, 4) * 3),
    S(Op.ROUND, "np-decimals=2", lambda x: np.round(x, 2), lambda x: np.round(x, 2), normal(3, 4)),
    S(Op.ROUND, "method-decimals=-1-i64", lambda x: np.round(x, -1), lambda x: x.round(-1), ints(5, low=-99, high=99)),
    S(Op.ROUND, "around-f32-halves", lambda x: np.around(x), lambda x: np.around(x),
      np.array([0.5, 1.5, 2.5, -0.5, -1.5], f32)),
    S(Op.ROUND, "F-nan-inf", np.round, F.round, special()),
    S(Op.ROUND, "complex", lambda z: np.round(z, 1), lambda z: z.round(1), cnormal(4)),
    S(Op.REAL, "np-complex", np.real, np.real, cnormal(3, 2)),
    S(Op.REAL, "attribute-complex64", lambda z: z.real, lambda z: z.real, cnormal(3, dtype=np.complex64)),
    S(Op.REAL, "attribute-of-float", lambda x: x.real * 2.0, lambda x: x.real * 2.0, normal(3)),
    S(Op.IMAG, "attribute-complex", lambda z: z.imag, lambda z: z.imag, cnormal(2, 3)),
    S(Op.IMAG, "np-of-float-is-zeros", np.imag, np.imag, normal(3)),
    S(Op.CONJ, "complex-method", lambda z: z.conjugate(), lambda z: z.conjugate(), cnormal(3)),
    S(Op.CONJ, "complex-np", np.conj, np.conj, cnormal(2, 2)),
    S(Op.ANGLE, "complex", np.angle, np.angle, cnormal(3, 2)),
    S(Op.ANGLE, "deg-float", lambda x: np.angle(x, deg=True), lambda x: np.angle(x, deg=True), normal(4)),
    S(Op.ANGLE, "F-complex64", np.angle, F.angle, cnormal(3, dtype=np.complex64)),
    S(Op.MUL, "complex-1j-literal", lambda x: x * 1j + 2.0, lambda x: x * 1j + 2.0, normal(3, 2)),
    S(Op.ADD, "complex-arrays", lambda z, w: z * w + z / w - 1j, lambda z, w: z * w + z / w - 1j,
      cnormal(3), cnormal(3)),
    S(Op.ABS, "complex-magnitude", np.abs, abs, cnormal(4)),
    S(Op.EXP, "complex", np.exp, np.exp, cnormal(3)),
]


def _along(f, **kw):
    return lambda x: f(x, **kw)


SCANS = [
    S(Op.CUMSUM, "axis=None", np.cumsum, np.cumsum, normal(3, 4)),
    S(Op.CUMSUM, "axis=0", _along(np.cumsum, axis=0), _along(np.cumsum, axis=0), normal(3, 4)),
    S(Op.CUMSUM, "method-axis=-1", _along(np.cumsum, axis=-1), lambda x: x.cumsum(axis=-1), normal(2, 3, 4)),
    S(Op.CUMSUM, "i32-promotes", np.cumsum, lambda x: x.cumsum(), ints(5, dtype=i32)),
    S(Op.CUMSUM, "bool", _along(np.cumsum, axis=0), _along(F.cumsum, axis=0), bools(4, 2)),
    S(Op.CUMSUM, "f32-nan-inf", np.cumsum, np.cumsum, special(f32)),
    S(Op.CUMSUM, "size0", _along(np.cumsum, axis=1), _along(np.cumsum, axis=1), normal(0, 3)),
    S(Op.CUMPROD, "axis=1", _along(np.cumprod, axis=1), _along(np.cumprod, axis=1), normal(3, 4)),
    S(Op.CUMPROD, "method-i64", np.cumprod, lambda x: x.cumprod(), ints(6)),
    S(Op.CUMPROD, "F-f32", np.cumprod, F.cumprod, normal(5, dtype=f32)),
    S(Op.ACCUMULATE, "maximum-axis=1", lambda x: np.maximum.accumulate(x, axis=1),
      lambda x: np.maximum.accumulate(x, axis=1), normal(3, 4)),
    S(Op.ACCUMULATE, "add-i32-stays-i32", np.add.accumulate, np.add.accumulate, ints(5, dtype=i32)),
    S(Op.ACCUMULATE, "multiply-f32", np.multiply.accumulate, np.multiply.accumulate, normal(4, 2, dtype=f32)),
    S(Op.ACCUMULATE, "bitwise_or-ints", np.bitwise_or.accumulate, np.bitwise_or.accumulate, ints(6, low=0, high=64)),
    S(Op.ACCUMULATE, "minimum-nan", np.minimum.accumulate, np.minimum.accumulate, special()),
    S(Op.UFUNC_REDUCE, "subtract-axis=1", lambda x: np.subtract.reduce(x, axis=1),
      lambda x: np.subtract.reduce(x, axis=1), normal(3, 4)),
    S(Op.UFUNC_REDUCE, "bitwise_xor-ints", np.bitwise_xor.reduce, np.bitwise_xor.reduce, ints(4, 3, low=0, high=99)),
    S(Op.UFUNC_REDUCE, "hypot-keepdims", lambda x: np.hypot.reduce(x, axis=0, keepdims=True),
      lambda x: np.hypot.reduce(x, axis=0, keepdims=True), normal(3, 2)),
    S(Op.SUM, "add-reduce-is-sum", np.add.reduce, np.add.reduce, normal(3, 4)),
    S(Op.UFUNC_OUTER, "add-1d-1d", np.add.outer, np.add.outer, normal(3), normal(4)),
    S(Op.UFUNC_OUTER, "multiply-2d-1d", np.multiply.outer, np.multiply.outer, normal(2, 3), normal(2)),
    S(Op.UFUNC_OUTER, "subtract-ints", np.subtract.outer, np.subtract.outer, ints(3), ints(2, dtype=i32)),
    S(Op.UFUNC_OUTER, "greater-f32", np.greater.outer, np.greater.outer, normal(3, dtype=f32), normal(3, dtype=f32)),
    S(Op.UFUNC_OUTER, "bitwise_and-ints", np.bitwise_and.outer, np.bitwise_and.outer, ints(3, high=9), ints(2, high=9)),
    S(Op.UFUNC_OUTER, "logical_or-bools", np.logical_or.outer, np.logical_or.outer, bools(2), bools(3)),
]

SORTING = [
    S(Op.SORT, "np-last-axis", np.sort, np.sort, normal(3, 4)),
    S(Op.SORT, "axis=0", _along(np.sort, axis=0), _along(np.sort, axis=0), normal(3, 4)),
    S(Op.SORT, "axis=None", _along(np.sort, axis=None), _along(np.sort, axis=None), normal(3, 4)),
    S(Op.SORT, "stable-i32", _along(np.sort, kind="stable"), _along(np.sort, kind="stable"), ints(7, dtype=i32)),
    S(Op.SORT, "nan-inf-last", np.sort, F.sort, special()),
    S(Op.SORT, "bool-f32", np.sort, np.sort, bools(5)),
    S(Op.ARGSORT, "np", np.argsort, np.argsort, normal(3, 4)),
    S(Op.ARGSORT, "method-axis=0-stable-ties", lambda x: np.argsort(x, axis=0, kind="stable"),
      lambda x: x.argsort(axis=0, kind="stable"), ints(5, 3, low=0, high=2)),
    S(Op.ARGSORT, "nan-inf", np.argsort, np.argsort, special(shift=2)),
    S(Op.ARGSORT, "axis=None-f32", _along(np.argsort, axis=None), _along(np.argsort, axis=None), normal(2, 3, dtype=f32)),
    S(Op.DIFF, "np", np.diff, np.diff, normal(3, 5)),
    S(Op.DIFF, "n=2-axis=0", lambda x: np.diff(x, 2, axis=0), lambda x: np.diff(x, 2, axis=0), normal(4, 3)),
    S(Op.DIFF, "i32", np.diff, np.diff, ints(6, dtype=i32)),
    S(Op.DIFF, "bool-is-not-equal", np.diff, np.diff, bools(6)),
    S(Op.DIFF, "n-longer-than-axis", lambda x: np.diff(x, 4), lambda x: np.diff(x, 4), normal(2, 3)),
    S(Op.DIFF, "F-n=0", lambda x: np.diff(x, 0), lambda x: F.diff(x, 0) * 1.0, normal(3)),
]

LINEAR_ALGEBRA = [
    S(Op.DOT, "1d-1d", np.dot, np.dot, normal(4), normal(4)),
    S(Op.DOT, "2d-2d", np.dot, np.dot, normal(2, 3), normal(3, 4)),
    S(Op.DOT, "2d-1d-method", np.dot, lambda a, b: a.dot(b), normal(3, 4), normal(4)),
    S(Op.DOT, "3d-3d", np.dot, np.dot, normal(2, 3, 4), normal(2, 4, 3)),
    S(Op.DOT, "scalar-times-array", np.dot, np.dot, normal(), normal(2, 3)),
    S(Op.DOT, "i64-f32", np.dot, F.dot, ints(2, 3), normal(3, 2, dtype=f32)),
    S(Op.DOT, "size0", np.dot, np.dot, normal(2, 0), normal(0, 3)),
    S(Op.VDOT, "complex-conjugates-first", np.vdot, np.vdot, cnormal(3), cnormal(3)),
    S(Op.VDOT, "2d-flattened", np.vdot, np.vdot, normal(2, 3), normal(3, 2)),
    S(Op.INNER, "1d", np.inner, np.inner, normal(4), normal(4)),
    S(Op.INNER, "2d-3d", np.inner, np.inner, normal(2, 3), normal(4, 2, 3)),
    S(Op.INNER, "0d", np.inner, F.inner, normal(), normal(3)),
    S(Op.TENSORDOT, "axes=2", np.tensordot, np.tensordot, normal(2, 3, 4), normal(3, 4, 5)),
    S(Op.TENSORDOT, "axes=1", lambda a, b: np.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1),
      normal(2, 3), normal(3, 4)),
    S(Op.TENSORDOT, "axes-lists", lambda a, b: np.tensordot(a, b, ([1, 0], [0, 1])),
      lambda a, b: np.tensordot(a, b, axes=([1, 0], [0, 1])), normal(3, 2, 4), normal(2, 3)),
    S(Op.TENSORDOT, "axes=0-outer", lambda a, b: np.tensordot(a, b, 0), lambda a, b: F.tensordot(a, b, 0),
      normal(2), normal(3)),
]

MOVEMENT = [
    S(Op.DIAGONAL, "np", np.diagonal, np.diagonal, normal(3, 4)),
    S(Op.DIAGONAL, "method-offset=1", lambda x: x.diagonal(1), lambda x: x.diagonal(1), normal(3, 4)),
    S(Op.DIAGONAL, "offset=-2-axes", lambda x: np.diagonal(x, -2, 1, 2), lambda x: np.diagonal(x, -2, 1, 2),
      normal(2, 4, 3)),
    S(Op.DIAGONAL, "offset-past-the-end", lambda x: np.diagonal(x, 5) + 0.0, lambda x: np.diagonal(x, 5) + 0.0,
      normal(3, 3)),
    S(Op.DIAG, "of-1d", np.diag, np.diag, normal(3)),
    S(Op.DIAG, "of-1d-k=-1", lambda v: np.diag(v, -1), lambda v: np.diag(v, -1), ints(3)),
    S(Op.DIAG, "of-2d-k=1", lambda x: np.diag(x, 1) * 1.0, lambda x: np.diag(x, 1) * 1.0, normal(3, 4)),
    S(Op.TRACE, "np", np.trace, np.trace, normal(3, 4)),
    S(Op.TRACE, "method-offset-i32", lambda x: x.trace(1), lambda x: x.trace(1), ints(3, 3, dtype=i32)),
    S(Op.TRACE, "3d-axes", lambda x: np.trace(x, 0, 1, 2), lambda x: np.trace(x, 0, 1, 2), normal(2, 3, 3)),
    S(Op.FLIP, "np-all-axes", lambda x: np.flip(x) * 1.0, lambda x: np.flip(x) * 1.0, normal(2, 3)),
    S(Op.FLIP, "axis=1", lambda x: np.flip(x, 1) + 0, lambda x: np.flip(x, 1) + 0, ints(2, 3)),
    S(Op.FLIP, "fliplr-flipud", lambda x: np.fliplr(x) - np.flipud(x), lambda x: np.fliplr(x) - np.flipud(x),
      normal(3, 3)),
    S(Op.FLIP, "reversed-slice-too", lambda x: np.flip(x, (0, 1)) * 2.0, lambda x: F.flip(x, (0, 1)) * 2.0,
      normal(2, 2, 2)),
    S(Op.ROLL, "flat", lambda x: np.roll(x, 2), lambda x: np.roll(x, 2), normal(3, 4)),
    S(Op.ROLL, "axis=1-negative", lambda x: np.roll(x, -1, axis=1), lambda x: np.roll(x, -1, axis=1), normal(3, 4)),
    S(Op.ROLL, "two-axes", lambda x: np.roll(x, (1, 2), (0, 1)), lambda x: np.roll(x, (1, 2), (0, 1)), ints(3, 4)),
    S(Op.ROLL, "size0", lambda x: np.roll(x, 1, 0), lambda x: np.roll(x, 1, 0), normal(0, 2)),
    S(Op.TAKE, "flat-list", lambda x: np.take(x, [0, 5, -1]), lambda x: np.take(x, [0, 5, -1]), normal(3, 4)),
    S(Op.TAKE, "method-axis=1", lambda x: x.take([2, 0, 2], axis=1), lambda x: x.take([2, 0, 2], axis=1),
      normal(3, 4)),
    S(Op.TAKE, "tensor-indices-2d", lambda x, i: np.take(x, i, axis=0), lambda x, i: np.take(x, i, axis=0),
      normal(4, 3), ints(2, 2, low=0, high=4)),
    S(Op.TAKE, "F-bool", lambda x, i: np.take(x, i), lambda x, i: F.take(x, i), bools(5), ints(3, low=-5, high=5)),
    S(Op.TAKE_ALONG_AXIS, "argsort-rows", lambda x: np.take_along_axis(x, np.argsort(x, axis=1), axis=1),
      lambda x: np.take_along_axis(x, np.argsort(x, axis=1), axis=1), normal(3, 4)),
    S(Op.TAKE_ALONG_AXIS, "argmax-keepdims", lambda x: np.take_along_axis(x, x.argmax(0, keepdims=True), 0),
      lambda x: np.take_along_axis(x, x.argmax(0, keepdims=True), 0), normal(3, 4)),
    S(Op.TAKE_ALONG_AXIS, "axis=None", lambda x, i: np.take_along_axis(x, i, None),
      lambda x, i: np.take_along_axis(x, i, None), normal(2, 3), ints(4, low=0, high=6)),
]

STATISTICS = [
    S(Op.AVERAGE, "np-no-weights", np.average, np.average, normal(3, 4)),
    S(Op.AVERAGE, "axis-1d-weights", lambda x, w: np.average(x, axis=1, weights=w),
      lambda x, w: np.average(x, axis=1, weights=w), normal(3, 4), np.abs(normal(4)) + 0.1),
    S(Op.AVERAGE, "full-weights-i32", lambda x, w: np.average(x, weights=w), lambda x, w: np.average(x, weights=w),
      ints(2, 3, dtype=i32), ints(2, 3, dtype=i32, low=1, high=4)),
    S(Op.AVERAGE, "keepdims-f32", lambda x: np.average(x, 0, keepdims=True),
      lambda x: np.average(x, 0, keepdims=True), normal(3, 2, dtype=f32)),
    S(Op.COV, "rows", np.cov, np.cov, normal(3, 6)),
    S(Op.COV, "columns-bias", lambda x: np.cov(x, rowvar=False, bias=True), lambda x: np.cov(x, rowvar=False, bias=True),
      normal(6, 2)),
    S(Op.COV, "1d-is-0d", np.cov, np.cov, normal(5)),
    S(Op.COV, "x-and-y-ddof=0", lambda x, y: np.cov(x, y, ddof=0), lambda x, y: np.cov(x, y, ddof=0),
      normal(2, 5), normal(5)),
    S(Op.COV, "i64", np.cov, np.cov, ints(2, 4)),
    S(Op.CORRCOEF, "rows", np.corrcoef, np.corrcoef, normal(3, 6)),
    S(Op.CORRCOEF, "x-and-y", np.corrcoef, np.corrcoef, normal(5), normal(5)),
    S(Op.CORRCOEF, "columns-f32", lambda x: np.corrcoef(x, rowvar=False), lambda x: np.corrcoef(x, rowvar=False),
      normal(5, 2, dtype=f32)),
    S(Op.HISTOGRAM, "bins=5", lambda x: np.histogram(x, bins=5), lambda x: np.histogram(x, bins=5), normal(20)),
    S(Op.HISTOGRAM, "default-bins-2d", np.histogram, np.histogram, normal(4, 6)),
    S(Op.HISTOGRAM, "range-weights", lambda x, w: np.histogram(x, 4, (-1.0, 1.0), weights=w),
      lambda x, w: np.histogram(x, 4, (-1.0, 1.0), weights=w), normal(10), normal(10)),
    S(Op.HISTOGRAM, "density-f32", lambda x: np.histogram(x, 3, density=True),
      lambda x: np.histogram(x, 3, density=True), normal(8, dtype=f32)),
    S(Op.HISTOGRAM, "ints", lambda x: np.histogram(x, 6), lambda x: np.histogram(x, 6), ints(12)),
]

CONSTRUCTORS = [
    S(Op.ARANGE, "F-stop", lambda x: x + np.arange(x.shape[0]), lambda x: x + F.arange(x.shape[0]), normal(5)),
    S(Op.ARANGE, "F-start-stop-step", lambda x: x[: len(np.arange(1, x.shape[0], 2))] * np.arange(1, x.shape[0], 2),
      lambda x: x[: len(np.arange(1, x.shape[0], 2))] * F.arange(1, x.shape[0], 2), normal(7)),
    S(Op.LINSPACE, "F", lambda x: x * np.linspace(0.0, 1.0, x.shape[-1]),
      lambda x: x * F.linspace(0.0, 1.0, x.shape[-1]), normal(2, 5)),
    S(Op.EYE, "F", lambda x: x @ np.eye(x.shape[1]), lambda x: x @ F.eye(x.shape[1]), normal(3, 4)),
    S(Op.EYE, "F-rect-k", lambda x: x + np.eye(x.shape[0], x.shape[1], 1),
      lambda x: x + F.eye(x.shape[0], x.shape[1], 1), normal(3, 4)),
    S(Op.TRI, "F-causal-mask", lambda x: np.where(np.tri(x.shape[0], dtype=bool), x, -np.inf),
      lambda x: np.where(F.tri(x.shape[0], dtype=bool), x, -np.inf), normal(4, 4)),
]


def _library(name):
    return lambda *xs: name(*xs)


def _spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


LIBRARY = [
    S(Op.LIBRARY_CALL, "linalg.solve", np.linalg.solve, np.linalg.solve, _spd(3), normal(3, 2)),
    S(Op.LIBRARY_CALL, "linalg.solve-vector", np.linalg.solve, np.linalg.solve, _spd(4), normal(4)),
    S(Op.LIBRARY_CALL, "linalg.solve-batched", np.linalg.solve, np.linalg.solve, _spd(3, (2,)), normal(2, 3, 1)),
    S(Op.LIBRARY_CALL, "linalg.inv", np.linalg.inv, np.linalg.inv, _spd(3)),
    S(Op.LIBRARY_CALL, "linalg.inv-f32", np.linalg.inv, np.linalg.inv, _spd(2).astype(f32)),
    S(Op.LIBRARY_CALL, "linalg.cholesky", np.linalg.cholesky, np.linalg.cholesky, _spd(4)),
    S(Op.LIBRARY_CALL, "linalg.det", np.linalg.det, np.linalg.det, normal(3, 3)),
    S(Op.LIBRARY_CALL, "linalg.det-batched", np.linalg.det, np.linalg.det, normal(2, 3, 3)),
    S(Op.LIBRARY_CALL, "linalg.slogdet", lambda a: tuple(np.linalg.slogdet(a)),
      lambda a: tuple(np.linalg.slogdet(a)), normal(3, 3)),
    S(Op.LIBRARY_CALL, "linalg.qr", lambda a: tuple(np.linalg.qr(a)), lambda a: tuple(np.linalg.qr(a)), normal(4, 3)),
    S(Op.LIBRARY_CALL, "linalg.qr-attribute-R", lambda a: np.linalg.qr(a).R, lambda a: np.linalg.qr(a).R, normal(3, 5)),
    S(Op.LIBRARY_CALL, "linalg.qr-complete", lambda a: tuple(np.linalg.qr(a, mode="complete")),
      lambda a: tuple(np.linalg.qr(a, mode="complete")), normal(4, 2)),
    S(Op.LIBRARY_CALL, "linalg.eigh", lambda a: tuple(np.linalg.eigh(a)), lambda a: tuple(np.linalg.eigh(a)), _spd(3)),
    S(Op.LIBRARY_CALL, "linalg.eigh-eigenvalues", lambda a: np.linalg.eigh(a).eigenvalues,
      lambda a: np.linalg.eigh(a).eigenvalues, _spd(4)),
    S(Op.LIBRARY_CALL, "linalg.eigvalsh", np.linalg.eigvalsh, np.linalg.eigvalsh, _spd(3)),
    S(Op.LIBRARY_CALL, "linalg.svd", lambda a: tuple(np.linalg.svd(a)), lambda a: tuple(np.linalg.svd(a)), normal(4, 3)),
    S(Op.LIBRARY_CALL, "linalg.svd-reduced", lambda a: tuple(np.linalg.svd(a, full_matrices=False)),
      lambda a: tuple(np.linalg.svd(a, full_matrices=False)), normal(2, 5)),
    S(Op.LIBRARY_CALL, "linalg.svd-values", lambda a: np.linalg.svd(a, compute_uv=False),
      lambda a: np.linalg.svd(a, compute_uv=False), normal(3, 3)),
    S(Op.LIBRARY_CALL, "linalg.pinv", np.linalg.pinv, np.linalg.pinv, normal(4, 2)),
    S(Op.LIBRARY_CALL, "linalg.norm", np.linalg.norm, np.linalg.norm, normal(3, 4)),
    S(Op.LIBRARY_CALL, "linalg.norm-axis", lambda x: np.linalg.norm(x, axis=1), lambda x: np.linalg.norm(x, axis=1),
      normal(3, 4)),
    S(Op.LIBRARY_CALL, "linalg.norm-ord-keepdims", lambda x: np.linalg.norm(x, 1, -1, True),
      lambda x: np.linalg.norm(x, 1, -1, True), normal(2, 3, dtype=f32)),
    S(Op.LIBRARY_CALL, "linalg.norm-fro", lambda x: np.linalg.norm(x, "fro"), lambda x: np.linalg.norm(x, "fro"),
      normal(3, 3)),
    S(Op.LIBRARY_CALL, "linalg.matrix_power", lambda a: np.linalg.matrix_power(a, 3),
      lambda a: np.linalg.matrix_power(a, 3), normal(3, 3)),
    S(Op.LIBRARY_CALL, "fft.fft", np.fft.fft, np.fft.fft, normal(8)),
    S(Op.LIBRARY_CALL, "fft.fft-n-axis", lambda x: np.fft.fft(x, 6, axis=0), lambda x: np.fft.fft(x, 6, axis=0),
      normal(4, 3)),
    S(Op.LIBRARY_CALL, "fft.ifft-complex", np.fft.ifft, np.fft.ifft, cnormal(5)),
    S(Op.LIBRARY_CALL, "fft.rfft", np.fft.rfft, np.fft.rfft, normal(3, 8)),
    S(Op.LIBRARY_CALL, "fft.rfft-f32", np.fft.rfft, np.fft.rfft, normal(7, dtype=f32)),
    S(Op.LIBRARY_CALL, "fft.irfft", np.fft.irfft, np.fft.irfft, cnormal(5)),
    S(Op.LIBRARY_CALL, "fft.irfft-n", lambda z: np.fft.irfft(z, 9), lambda z: np.fft.irfft(z, 9), cnormal(5)),
    S(Op.LIBRARY_CALL, "fft.fft2", np.fft.fft2, np.fft.fft2, normal(3, 4)),
    S(Op.LIBRARY_CALL, "fft.ifft2-s", lambda x: np.fft.ifft2(x, s=(2, 5)), lambda x: np.fft.ifft2(x, s=(2, 5)),
      cnormal(3, 4)),
    S(Op.LIBRARY_CALL, "fft.fftn", np.fft.fftn, np.fft.fftn, normal(2, 3, 2)),
    S(Op.LIBRARY_CALL, "fft.ifftn", np.fft.ifftn, np.fft.ifftn, cnormal(2, 2)),
    S(Op.LIBRARY_CALL, "fft.fftshift", np.fft.fftshift, np.fft.fftshift, normal(5)),
    S(Op.LIBRARY_CALL, "fft.ifftshift-axes", lambda x: np.fft.ifftshift(x, axes=1),
      lambda x: np.fft.ifftshift(x, axes=(1,)), normal(2, 5)),
]


def _build() -> list:
    samples = []
    for row in UNARY:
        samples += unary_samples(*row)
    for row in BINARY:
        samples += binary_samples(*row)
    samples += TRIG_IN_DOMAIN + BITWISE + ROUNDING_AND_COMPLEX + SCANS + SORTING + LINEAR_ALGEBRA + MOVEMENT
    samples += STATISTICS + CONSTRUCTORS + LIBRARY
    return samples


SAMPLES = _build()
