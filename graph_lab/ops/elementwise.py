"""Elementwise ops: NumPy ufuncs of one or two operands, ``where``, ``clip``, ``cast``, and activations.

Families come from two small factories. Shapes broadcast as NumPy broadcasts; dtypes are NumPy's own (asked of
NumPy on size-1 samples, see ``probe_dtype``), so Python scalars stay weak as in NumPy 2.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OpError
from ..ir.types import TensorType
from .base import Op, OpDef, broadcast_shapes, probe_dtype, register, static_int


def _elementwise_infer(op: Op, fn):
    def infer(types, attrs):
        shape = broadcast_shapes(op, types)
        try:
            dtype = probe_dtype(fn, types, tuple(sorted(attrs.items())) if attrs else (), **attrs)
        except TypeError as e:  # e.g. a bitwise op on floats: NumPy has no loop for these types
            shown = ", ".join(str(t) for t in types)
            raise OpError(f"{op}: NumPy does not take these operand types ({shown}): {e}") from None
        return (TensorType(dtype, shape),)
    return infer


def _bind_operands(*operands):
    return list(operands), {}


def _unary(op: Op, fn, numpy_name: str | None, doc: str) -> OpDef:
    def bind(x):
        return [x], {}
    return register(OpDef(op, "unary", bind, _elementwise_infer(op, fn), fn, numpy_name, doc=doc))


def _binary(op: Op, fn, numpy_name: str, doc: str) -> OpDef:
    def bind(x, y):
        return [x, y], {}
    return register(OpDef(op, "binary", bind, _elementwise_infer(op, fn), fn, numpy_name, doc=doc))


# --- activations: composites of NumPy calls, written once here and used by eager F.* and by graphs alike.

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def relu(x):
    return np.maximum(x, 0)


def gelu(x):
    """GELU, tanh approximation (as in GPT-2 and the course's gelu_mlp)."""
    return 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


def copy(x, contiguous=False, ufunc=False, keep_scalar=False):
    """A copy of x in memory of its own. Its layout can matter (matmul and sums pick their summation order by
    strides), so the spelling is kept: ``np.copy(x)`` keeps x's order, ``x.copy()`` is C order
    (``contiguous=True``), and ``+x`` (``np.positive``) is laid out as a ufunc lays out its result.
    A number has no memory to share: ``x.copy()`` of a NumPy scalar is that scalar, as NumPy gives it, and so are
    the copies the passes add to keep outputs apart (``keep_scalar``: a NumPy or Python number stays itself)."""
    if ufunc:
        return np.positive(x)
    if not isinstance(x, np.ndarray) and (keep_scalar or (contiguous and isinstance(x, np.generic))):
        return x
    return np.array(x, copy=True, order="C" if contiguous else "K")


def _bind_copy(x, order="K", ufunc=False):
    if order not in ("K", "C"):
        raise OpError(f"copy: order={order!r} is not supported; a graph copies in C order (x.copy()) or in the "
                      f"input's order (np.copy(x))")
    attrs = {"contiguous": True} if order == "C" else {}
    return [x], ({**attrs, "ufunc": True} if ufunc else attrs)

for _op, _fn, _name, _doc in [
    (Op.NEG, np.negative, "np.negative", "-x"),
    (Op.ABS, np.absolute, "np.abs", "|x|"),
    (Op.SIGN, np.sign, "np.sign", "sign of x (-1, 0, 1)"),
    (Op.EXP, np.exp, "np.exp", "e ** x"),
    (Op.LOG, np.log, "np.log", "natural logarithm"),
    (Op.LOG1P, np.log1p, "np.log1p", "log(1 + x), accurate near 0"),
    (Op.EXPM1, np.expm1, "np.expm1", "exp(x) - 1, accurate near 0"),
    (Op.SQRT, np.sqrt, "np.sqrt", "square root"),
    (Op.SQUARE, np.square, "np.square", "x * x"),
    (Op.RECIPROCAL, np.reciprocal, "np.reciprocal", "1 / x (integer division for ints, as NumPy)"),
    (Op.TANH, np.tanh, "np.tanh", "hyperbolic tangent"),
    (Op.SIN, np.sin, "np.sin", "sine"),
    (Op.COS, np.cos, "np.cos", "cosine"),
    (Op.FLOOR, np.floor, "np.floor", "round towards -inf"),
    (Op.CEIL, np.ceil, "np.ceil", "round towards +inf"),
    (Op.LOGICAL_NOT, np.logical_not, "np.logical_not", "not x"),
    (Op.SIGMOID, sigmoid, None, "1 / (1 + exp(-x))"),
    (Op.RELU, relu, None, "max(x, 0)"),
    (Op.GELU, gelu, None, "GELU, tanh approximation"),
    (Op.ARCSIN, np.arcsin, "np.arcsin", "inverse sine"),
    (Op.ARCCOS, np.arccos, "np.arccos", "inverse cosine"),
    (Op.ARCTAN, np.arctan, "np.arctan", "inverse tangent"),
    (Op.SINH, np.sinh, "np.sinh", "hyperbolic sine"),
    (Op.COSH, np.cosh, "np.cosh", "hyperbolic cosine"),
    (Op.LOG2, np.log2, "np.log2", "base-2 logarithm"),
    (Op.LOG10, np.log10, "np.log10", "base-10 logarithm"),
    (Op.EXP2, np.exp2, "np.exp2", "2 ** x"),
    (Op.ISNAN, np.isnan, "np.isnan", "x is NaN"),
    (Op.ISINF, np.isinf, "np.isinf", "x is +inf or -inf"),
    (Op.ISFINITE, np.isfinite, "np.isfinite", "x is neither NaN nor infinite"),
    (Op.RINT, np.rint, "np.rint", "round to the nearest integer, halves to even"),
    (Op.TRUNC, np.trunc, "np.trunc", "round towards zero"),
    (Op.CONJ, np.conjugate, "np.conjugate", "complex conjugate (x itself for real dtypes)"),
    (Op.INVERT, np.invert, "np.invert", "bitwise not ~x of integers"),
]:
    _unary(_op, _fn, _name, _doc)

for _op, _fn, _name, _doc in [
    (Op.ADD, np.add, "np.add", "x + y"),
    (Op.SUB, np.subtract, "np.subtract", "x - y"),
    (Op.MUL, np.multiply, "np.multiply", "x * y"),
    (Op.DIV, np.true_divide, "np.divide", "x / y"),
    (Op.FLOORDIV, np.floor_divide, "np.floor_divide", "x // y"),
    (Op.MOD, np.remainder, "np.remainder", "x % y (sign of y, as Python)"),
    (Op.MAXIMUM, np.maximum, "np.maximum", "elementwise max (NaN wins)"),
    (Op.MINIMUM, np.minimum, "np.minimum", "elementwise min (NaN wins)"),
    (Op.EQ, np.equal, "np.equal", "x == y"),
    (Op.NE, np.not_equal, "np.not_equal", "x != y"),
    (Op.LT, np.less, "np.less", "x < y"),
    (Op.LE, np.less_equal, "np.less_equal", "x <= y"),
    (Op.GT, np.greater, "np.greater", "x > y"),
    (Op.GE, np.greater_equal, "np.greater_equal", "x >= y"),
    (Op.LOGICAL_AND, np.logical_and, "np.logical_and", "x and y"),
    (Op.LOGICAL_OR, np.logical_or, "np.logical_or", "x or y"),
    (Op.LOGICAL_XOR, np.logical_xor, "np.logical_xor", "x xor y"),
    (Op.ARCTAN2, np.arctan2, "np.arctan2", "arctan(x / y) in the quadrant of the point (y, x)"),
    (Op.HYPOT, np.hypot, "np.hypot", "sqrt(x * x + y * y) without overflow"),
    (Op.LOGADDEXP, np.logaddexp, "np.logaddexp", "log(exp(x) + exp(y)) without overflow"),
    (Op.BITWISE_AND, np.bitwise_and, "np.bitwise_and", "x & y of integers"),
    (Op.BITWISE_OR, np.bitwise_or, "np.bitwise_or", "x | y of integers"),
    (Op.BITWISE_XOR, np.bitwise_xor, "np.bitwise_xor", "x ^ y of integers"),
    (Op.LEFT_SHIFT, np.left_shift, "np.left_shift", "x << y of integers"),
    (Op.RIGHT_SHIFT, np.right_shift, "np.right_shift", "x >> y of integers"),
]:
    _binary(_op, _fn, _name, _doc)


register(OpDef(Op.COPY, "unary", _bind_copy, _elementwise_infer(Op.COPY, copy), copy, "np.copy",
               doc="a copy of x (no aliasing); contiguous=True for x.copy(), ufunc=True for +x"))

# pow: Python's ``**`` on NumPy scalars (what a ufunc returns for 0-d arrays) runs NumPy's scalar math, which
# rounds differently from the np.power ufunc in the last bit now and then. The graph does what the spelling did.

def _bind_pow(x, y, operator=False):
    return [x, y], ({"operator": True} if operator else {})


def power(x, y, operator=False):
    return x ** y if operator else np.power(x, y)


register(OpDef(Op.POW, "binary", _bind_pow, _elementwise_infer(Op.POW, power), power, "np.power",
               doc="x ** y (operator=True: spelled with Python's ** rather than np.power)"))


def _bind_where(cond, x, y):
    return [cond, x, y], {}


register(OpDef(Op.WHERE, "binary", _bind_where, _elementwise_infer(Op.WHERE, np.where), np.where, "np.where",
               doc="x where cond else y"))


# clip: the bounds are optional operands; which ones are present is an attribute.

def _bind_clip(x, a_min=None, a_max=None):
    if a_min is None and a_max is None:
        raise ValueError("clip: give at least one of a_min and a_max")
    operands = [x] + [b for b in (a_min, a_max) if b is not None]
    return operands, {"has_min": a_min is not None, "has_max": a_max is not None}


def _clip(x, *bounds, has_min, has_max):
    it = iter(bounds)
    lo = next(it) if has_min else None
    hi = next(it) if has_max else None
    return np.clip(x, lo, hi)


register(OpDef(Op.CLIP, "binary", _bind_clip, _elementwise_infer(Op.CLIP, _clip), _clip, "np.clip",
               doc="x limited to [a_min, a_max]"))


def _bind_cast(x, dtype):
    return [x], {"dtype": np.dtype(dtype)}


def _cast(x, dtype):
    if isinstance(x, np.generic):  # a NumPy scalar stays one, as ``x.astype`` and ``np.astype`` give it
        return x.astype(dtype)
    return np.asarray(x).astype(dtype)


def _infer_cast(types, attrs):
    return (TensorType(attrs["dtype"], types[0].shape),)


register(OpDef(Op.CAST, "unary", _bind_cast, _infer_cast, _cast, "ndarray.astype", doc="x converted to dtype"))


# round and angle: one operand and a static attribute, each NumPy's own function.

def _bind_round(x, decimals=0):
    return [x], {"decimals": static_int(Op.ROUND, "decimals", decimals, symbolic=False)}


def _round(x, decimals):
    return np.round(x, decimals)


register(OpDef(Op.ROUND, "unary", _bind_round, _elementwise_infer(Op.ROUND, _round), _round, "np.round",
               doc="round to the given number of decimals, halves to even"))


def _bind_angle(z, deg=False):
    if not isinstance(deg, (bool, np.bool_)):
        raise OpError(f"angle: deg must be True or False, got {deg!r}")
    return [z], {"deg": bool(deg)}


def _angle(z, deg):
    return np.angle(z, deg)


register(OpDef(Op.ANGLE, "unary", _bind_angle, _elementwise_infer(Op.ANGLE, _angle), _angle, "np.angle",
               doc="the argument of a complex number (radians, or degrees with deg=True)"))


# ufunc.outer of a binary op of the table: ``np.add.outer(a, b)[i..., j...] == a[i...] + b[j...]``.

OUTER_UFUNCS = {op: fn for op, fn in [
    (Op.ADD, np.add), (Op.SUB, np.subtract), (Op.MUL, np.multiply), (Op.DIV, np.true_divide),
    (Op.FLOORDIV, np.floor_divide), (Op.MOD, np.remainder), (Op.POW, np.power), (Op.MAXIMUM, np.maximum),
    (Op.MINIMUM, np.minimum), (Op.EQ, np.equal), (Op.NE, np.not_equal), (Op.LT, np.less),
    (Op.LE, np.less_equal), (Op.GT, np.greater), (Op.GE, np.greater_equal), (Op.LOGICAL_AND, np.logical_and),
    (Op.LOGICAL_OR, np.logical_or), (Op.LOGICAL_XOR, np.logical_xor), (Op.ARCTAN2, np.arctan2),
    (Op.HYPOT, np.hypot), (Op.LOGADDEXP, np.logaddexp), (Op.BITWISE_AND, np.bitwise_and),
    (Op.BITWISE_OR, np.bitwise_or), (Op.BITWISE_XOR, np.bitwise_xor), (Op.LEFT_SHIFT, np.left_shift),
    (Op.RIGHT_SHIFT, np.right_shift)]}
"""The binary ops whose NumPy ufunc has ``outer``, ``reduce`` and ``accumulate`` methods a graph records."""


def ufunc_of(what: str, name) -> np.ufunc:
    """The ufunc of a binary op named in an attribute; only the table's own (a saved file names no other)."""
    try:
        return OUTER_UFUNCS[Op(name)]
    except (ValueError, KeyError):
        raise OpError(f"{what}: {name!r} is not a binary op of the table with a NumPy ufunc; the ones that are: "
                      f"{', '.join(sorted(OUTER_UFUNCS))}") from None


def _bind_ufunc_outer(a, b, ufunc):
    return [a, b], {"ufunc": Op(ufunc).value}


def _ufunc_outer(a, b, ufunc):
    return ufunc_of("ufunc_outer", ufunc).outer(a, b)


def _infer_ufunc_outer(types, attrs):
    fn = ufunc_of("ufunc_outer", attrs["ufunc"])
    try:
        dtype = probe_dtype(fn, types, ())
    except TypeError as e:
        raise OpError(f"{attrs['ufunc']}.outer: NumPy does not take these operand types: {e}") from None
    return (TensorType(dtype, types[0].shape + types[1].shape),)


register(OpDef(Op.UFUNC_OUTER, "binary", _bind_ufunc_outer, _infer_ufunc_outer, _ufunc_outer, None,
               doc="ufunc.outer(a, b) of a binary op: every element of a with every element of b"))
