"""Allocation: ``full``, a new array of a given shape filled with one value.

``np.zeros``, ``np.ones``, ``np.full``, ``np.empty`` and ``np.ndarray(shape, dtype)`` inside ``compile()`` are
this op, so that "allocate, then fill in a loop" stays one graph. NumPy leaves ``empty``'s contents undefined; the
graph fills it with zeros. The fill is a number known at capture (an attribute) or a 0-d array (an operand).
"""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..ir.types import TensorType
from .base import Op, OpDef, is_tensorlike, register, static_shape


def _bind_full(shape, fill_value=0.0, dtype=None):
    shape = static_shape("full", shape)
    if any(type(d) is int and d < 0 for d in shape):
        raise OpError(f"full: negative dimensions are not allowed, got {shape}")
    dtype = None if dtype is None else np.dtype(dtype)
    if is_tensorlike(fill_value) or isinstance(fill_value, np.ndarray):
        if fill_value.ndim != 0:
            raise OpError("full: fill_value must be a number or a 0-d array")
        return [fill_value], {"shape": shape, "dtype": dtype}
    if not isinstance(fill_value, (int, float, bool, complex, np.number, np.bool_)):
        raise OpError(f"full: fill_value must be a number known at capture time, got {type(fill_value).__name__}")
    return [], {"shape": shape, "dtype": dtype, "fill": fill_value}


def _infer_full(types, attrs):
    dtype = attrs["dtype"]
    if dtype is None:
        dtype = types[0].dtype if types else np.array(attrs["fill"]).dtype
    return (TensorType(np.dtype(dtype), tuple(attrs["shape"])),)


def _full(*operands, shape, dtype, fill=None):
    return np.full(shape, operands[0] if operands else fill, dtype)


register(OpDef(Op.FULL, "source", _bind_full, _infer_full, _full, "np.full",
               doc="a new array of the shape, every element the fill value"))
