"""Source ops: graph inputs, named parameters, constants, sizes, and the ``*_like`` constructors."""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..ir.literals import format_const, quote
from ..ir.symbolic import Expr, FloatExpr
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


# size: a number computed from the input sizes at run time (``%3: int = size d//2``, ``%4: float = size
# 1.0/d**0.5``). Its attribute is bound like every symbolic attribute (ir/sizes.py), so the implementation only
# returns it: a Python int or float, weak in NumPy's promotion exactly as the number eager code computed.

def _infer_size(types, attrs):
    expr = attrs["expr"]
    if isinstance(expr, Expr):
        return (TensorType.of(0),)
    if isinstance(expr, FloatExpr):
        return (TensorType.of(0.0),)
    raise OpError(f"size: expr must be a symbolic size expression (a constant is a const node), got {expr!r}")


def _size(expr):
    return expr


register(OpDef(Op.SIZE, "source", _no_bind, _infer_size, _size, print_attrs=lambda a: str(a["expr"]),
               doc="a number computed from the input sizes when the graph runs"))


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

