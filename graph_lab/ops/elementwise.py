"""Elementwise ops: NumPy ufuncs of one or two operands, ``where``, ``clip``, ``cast``, and activations.

Families come from two small factories. Shapes broadcast as NumPy broadcasts; dtypes are NumPy's own (asked of
NumPy on size-1 samples, see ``probe_dtype``), so Python scalars stay weak as in NumPy 2.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OpError
from ..ir.types import TensorType
from .base import Op, OpDef, broadcast_shapes, probe_dtype, register


def _elementwise_infer(op: Op, fn):
    def infer(types, attrs):
        shape = broadcast_shapes(op, types)
        dtype = probe_dtype(fn, types, tuple(sorted(attrs.items())) if attrs else (), **attrs)
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


def copy(x, contiguous=False, ufunc=False):
    """A copy of x in memory of its own. Its layout can matter (matmul and sums pick their summation order by
    strides), so the spelling is kept: ``np.copy(x)`` keeps x's order, ``x.copy()`` is C order
    (``contiguous=True``), and ``+x`` (``np.positive``) is laid out as a ufunc lays out its result."""
    return np.positive(x) if ufunc else np.array(x, copy=True, order="C" if contiguous else "K")


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
    return np.asarray(x).astype(dtype)


def _infer_cast(types, attrs):
    return (TensorType(attrs["dtype"], types[0].shape),)


register(OpDef(Op.CAST, "unary", _bind_cast, _infer_cast, _cast, "ndarray.astype", doc="x converted to dtype"))
