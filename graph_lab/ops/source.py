"""Source ops: graph inputs, named parameters, constants, and the ``*_like`` constructors."""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..ir.literals import format_const, quote
from ..ir.types import TensorType
from .base import Op, OpDef, register


def _no_bind(*args, **kwargs):
    raise OpError("input, param and const nodes are made by the graph builder, not called")


def _no_impl(*args, **kwargs):
    raise OpError("input and param values are supplied by the caller of the graph")


def _infer_declared(types, attrs):
    return (attrs["type"],)


register(OpDef(Op.INPUT, "source", _no_bind, _infer_declared, _no_impl,
               print_attrs=lambda a: quote(a["name"]), doc="a named input of the graph"))
register(OpDef(Op.PARAM, "source", _no_bind, _infer_declared, _no_impl,
               print_attrs=lambda a: quote(a["name"]), doc="a named parameter stored with the graph"))


def _infer_const(types, attrs):
    return (TensorType.of(attrs["value"]),)


def _const(value):
    return value


register(OpDef(Op.CONST, "source", _no_bind, _infer_const, _const,
               print_attrs=lambda a: format_const(a["value"]), doc="a constant value"))


def _like(op: Op, fn, numpy_name: str, doc: str, with_fill: bool):
    # The signatures are NumPy's (positional or keyword): zeros_like(a, dtype), full_like(a, fill_value, dtype).
    def bind_fill(x, fill_value, dtype=None):
        if not isinstance(fill_value, (int, float, bool, np.number)):
            raise OpError(f"{op}: fill_value must be a number known at capture time")
        return [x], {"dtype": None if dtype is None else np.dtype(dtype), "fill": fill_value}

    def bind(x, dtype=None):
        return [x], {"dtype": None if dtype is None else np.dtype(dtype)}

    def impl(x, dtype, **kw):
        return fn(x, *kw.values(), dtype=dtype)

    def infer(types, attrs):
        probe = np.ones((1,) * types[0].ndim, types[0].dtype)
        dtype = impl(probe, **attrs).dtype
        return (TensorType(dtype, types[0].shape),)

    register(OpDef(op, "source", bind_fill if with_fill else bind, infer, impl, numpy_name, doc=doc))


_like(Op.ZEROS_LIKE, np.zeros_like, "np.zeros_like", "zeros of x's shape and dtype", False)
_like(Op.ONES_LIKE, np.ones_like, "np.ones_like", "ones of x's shape and dtype", False)
_like(Op.FULL_LIKE, np.full_like, "np.full_like", "fill_value in x's shape and dtype", True)

