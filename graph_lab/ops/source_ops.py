"""Source ops: graph inputs, named parameters, constants, sizes, and the ``*_like`` constructors."""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..ir.literals import format_const, quote
from ..ir.relations import relation
from ..ir.shape_env import decide
from ..ir.symbolic import Expr, FloatExpr, unwrap
from ..ir.types import TensorType
from .base import Op, OpDef, register, static_int


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



# Constructors of a size given by numbers: ``arange``, ``linspace``, ``eye`` (and ``identity``), ``tri``. With
# static numbers NumPy runs them at capture and the result is a constant; a node is made when a size is
# symbolic (``F.arange(T)``, ``np.tri(T)`` under compile()), bound when the graph runs.

def _number(op: Op, what: str, v):
    v = unwrap(v)
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    if isinstance(v, Expr):
        return v
    if isinstance(v, (float, np.floating)):
        return float(v)
    raise OpError(f"{op}: {what} must be a number known when the graph is captured (or a size), got {v!r}")


def _dtype_attr(dtype):
    return None if dtype is None else np.dtype(dtype)


def _concrete(attrs: dict) -> dict:
    """The attributes with every size replaced by 2: what the dtype of the result does not depend on."""
    return {k: (2 if isinstance(v, Expr) else v) for k, v in attrs.items()}


def _constructor(op: Op, bind, impl, shape_rule, numpy_name: str, doc: str):
    def infer(types, attrs):
        return (TensorType(np.asarray(impl(**_concrete(attrs))).dtype, shape_rule(attrs)),)
    register(OpDef(op, "source", bind, infer, impl, numpy_name, doc=doc))


def _bind_arange(start, stop=None, step=None, dtype=None):
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    attrs = {"start": _number(Op.ARANGE, "start", start), "stop": _number(Op.ARANGE, "stop", stop),
             "step": _number(Op.ARANGE, "step", step), "dtype": _dtype_attr(dtype)}
    if not isinstance(attrs["step"], int) and any(isinstance(v, Expr) for v in attrs.values()):
        raise OpError("arange: with a symbolic start or stop, the step must be an int known at capture")
    if attrs["step"] == 0:
        raise OpError("arange: step must not be zero (Maximum allowed size exceeded)")
    return [], attrs


def _arange(start, stop, step, dtype):
    return np.arange(start, stop, step, dtype=dtype)


def _arange_length(attrs):
    start, stop, step = attrs["start"], attrs["stop"], attrs["step"]
    if not any(isinstance(v, Expr) for v in (start, stop)):
        return len(_arange(start, stop, step, None))
    span = stop - start if step > 0 else start - stop
    if not decide(relation(">=", span, 0), f"arange from {start} to {stop}: whether it is empty"):
        return 0
    return (span + abs(step) - 1) // abs(step)


_constructor(Op.ARANGE, _bind_arange, _arange, lambda a: (_arange_length(a),), "np.arange",
             "evenly spaced values in [start, stop) (sizes may be symbolic)")


def _bind_linspace(start, stop, num=50, endpoint=True, dtype=None):
    for v in (start, stop):
        if not isinstance(unwrap(v), (int, float, np.integer, np.floating)) or isinstance(v, bool):
            raise OpError("linspace: start and stop must be numbers known when the graph is captured")
    num = static_int(Op.LINSPACE, "num", num)
    if type(num) is int and num < 0:
        raise OpError(f"linspace: Number of samples, {num}, must be non-negative.")
    return [], {"start": float(start), "stop": float(stop), "num": num, "endpoint": bool(endpoint),
                "dtype": _dtype_attr(dtype)}


def _linspace(start, stop, num, endpoint, dtype):
    return np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)


_constructor(Op.LINSPACE, _bind_linspace, _linspace, lambda a: (a["num"],), "np.linspace",
             "num evenly spaced values from start to stop (num may be symbolic)")


def _matrix_bind(op: Op):
    def bind(N, M=None, k=0, dtype=float):
        return [], {"N": static_int(op, "N", N), "M": None if M is None else static_int(op, "M", M),
                    "k": static_int(op, "k", k, symbolic=False), "dtype": np.dtype(dtype)}
    return bind


def _matrix_shape(attrs):
    return (attrs["N"], attrs["N"] if attrs["M"] is None else attrs["M"])


def _eye(N, M, k, dtype):
    return np.eye(N, M, k, dtype=dtype)


def _tri(N, M, k, dtype):
    return np.tri(N, M, k, dtype=dtype)


_constructor(Op.EYE, _matrix_bind(Op.EYE), _eye, _matrix_shape, "np.eye",
             "ones on the k-th diagonal of an N x M matrix, zeros elsewhere (np.identity too)")
_constructor(Op.TRI, _matrix_bind(Op.TRI), _tri, _matrix_shape, "np.tri",
             "ones at and below the k-th diagonal of an N x M matrix, zeros above")
