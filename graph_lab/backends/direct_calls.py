"""Lines of generated code that call NumPy as the user's code would, without the op's own implementation around it.

The default line of a node calls its op's implementation (``impl_reshape(v3, shape=(2, 8))``), the living
definition the reference interpreter runs. For a few ops that implementation is a thin wrapper of one NumPy
function, itself a Python wrapper of one call into NumPy's C code (``np.reshape`` looks up and calls the array's
``reshape`` method; ``np.sum`` calls ``np.add.reduce``; ``np.stack`` adds an axis to each array and calls
``np.concatenate``), and on a small array the wrappers cost more than the work: a decode step runs dozens of
these. Here they are written as the call the wrappers end in:

    v4 = v3.reshape((2, 8))                                # np.reshape(x, shape)
    v5 = v4.transpose((1, 0))                              # np.transpose(x, perm)
    v6 = np.add.reduce(v5, axis=(1,), keepdims=True)       # np.sum(x, axis=(1,), keepdims=True)
    v7 = np.true_divide(np.add.reduce(v5, axis=(1,), keepdims=True), consts[0])   # np.mean (float64)
    v8 = np.concatenate((v5[:, None], v6[:, None], ), axis=1)                     # np.stack((v5, v6), axis=1)
    v9 = v8.astype(consts[1])                                                     # np.asarray(v8).astype(dtype)
    v10 = np.zeros((8, 5000), consts[2])                   # np.full((8, 5000), 0.0, dtype): the same bits

Each computes what the implementation computes, bit for bit: the same C calls on the same arguments (NumPy's
``_mean`` divides the float64 sum by the count as an ``intp``, which ``consts[0]`` is). The forms that skip
NumPy's wrapper are used only where the wrapper would take that path itself: operands that are ndarrays when the
graph runs (at least one dimension and not a Python number: a 0-d result may be a NumPy scalar, which the
wrappers treat another way), the mean of float64 values over sizes known and not 0. Anything else keeps the
usual line. ``tests/backends/test_direct_calls.py`` compares each form with the op's implementation.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..ops import Op, opdef

METHODS = {Op.RESHAPE: ("reshape", "shape"), Op.TRANSPOSE: ("transpose", "perm")}
"""op -> (the ndarray method its implementation calls, the attribute passed to it)."""

REDUCE_UFUNCS = {Op.SUM: "add", Op.MAX: "maximum", Op.MIN: "minimum", Op.PROD: "multiply"}
"""The reductions whose NumPy function, on an ndarray, is this ufunc's ``reduce`` (``_wrapreduction``)."""
REDUCTIONS = (Op.SUM, Op.MEAN, Op.MAX, Op.MIN, Op.PROD, Op.VAR, Op.STD, Op.ANY, Op.ALL)
"""The reductions whose implementation is ``np.<name>(x, axis=..., keepdims=..., **attrs)`` (``ops/reduce.py``)."""


def _is_array(v) -> bool:
    """A value that is an ndarray when the graph runs: at least one dimension (a 0-d result may be a NumPy
    scalar, and a weak value a Python number)."""
    return v.type.weak is None and v.type.ndim >= 1


def _emit_method(node, ctx, default: Callable) -> str:
    method, attr = METHODS[node.op]
    (x,) = node.inputs
    if x.type.weak is not None or set(node.attrs) != {attr}:
        return default(node, ctx)
    return f"{ctx.var(x)}.{method}({ctx.value(node.attrs[attr])})"


def _emit_reduction(node, ctx, default: Callable) -> str:
    name = opdef(node.op).numpy_name
    if not (name and name.startswith("np.")) or set(node.attrs) - {"axis", "keepdims", "ddof"} or \
            not {"axis", "keepdims"} <= set(node.attrs):
        return default(node, ctx)
    (x,) = node.inputs
    if _is_array(x) and set(node.attrs) == {"axis", "keepdims"}:
        if node.op in REDUCE_UFUNCS:
            name = f"np.{REDUCE_UFUNCS[node.op]}.reduce"
        elif node.op == Op.MEAN and _mean_count(node) is not None:
            # ``np.mean`` of float64 values (``_methods._mean``): the sum, divided by the count as an intp
            total = f"np.add.reduce({', '.join(ctx.args(node) + ctx.kwargs(node.attrs))})"
            return f"np.true_divide({total}, {ctx.passed_in(_mean_count(node))})"
    return f"{name}({', '.join(ctx.args(node) + ctx.kwargs(node.attrs))})"


def _mean_count(node) -> "np.intp | None":
    """The number of values each mean of ``node`` divides by, when its sum is an array of float64 (NumPy's
    ``_mean`` then divides it by this count, an intp) and the count is known and not 0; else None."""
    (x,) = node.inputs
    axes = node.attrs["axis"]
    out = node.outputs[0].type
    if x.type.dtype != np.float64 or out.dtype != np.float64 or out.ndim == 0 or axes is None:
        return None
    sizes = [x.type.shape[a] for a in axes]
    if not all(type(n) is int for n in sizes) or 0 in sizes:
        return None
    return np.intp(math.prod(sizes))


def _emit_stack(node, ctx, default: Callable) -> str:
    """``np.stack``'s own steps for arrays: each with a new axis of length 1 at ``axis``, concatenated there."""
    axis = node.attrs.get("axis")
    if set(node.attrs) != {"axis"} or type(axis) is not int or axis < 0 or \
            not all(_is_array(v) for v in node.inputs):
        return default(node, ctx)
    key = ", ".join([":"] * axis + ["None"])
    arrays = "".join(f"{a}[{key}], " for a in ctx.args(node))
    return f"np.concatenate(({arrays}), axis={axis})"
def _emit_cast(node, ctx, default: Callable) -> str:
    """``x.astype(dtype)``, the call ``np.asarray(x).astype(dtype)`` makes for an ndarray."""
    (x,) = node.inputs
    if not _is_array(x) or set(node.attrs) != {"dtype"}:
        return default(node, ctx)
    return f"{ctx.var(x)}.astype({ctx.passed_in(node.attrs['dtype'])})"


def _emit_full(node, ctx, default: Callable) -> str:
    """An array of zeros as ``np.zeros``: the same bits as ``np.full(shape, 0, dtype)`` (every byte 0 is 0, False
    and +0.0), without writing them where the allocator hands out memory the system zeroed. ``np.empty`` is this op
    too, filled with zeros: an array of rows filled one by one, made with ``np.empty`` in eager code, took 25 us
    with ``np.full`` and 14 us with ``np.zeros`` (320 KB, where eager's ``np.empty`` takes none)."""
    fill, dtype = node.attrs.get("fill"), node.outputs[0].type.dtype
    zero = isinstance(fill, (bool, int, float, np.bool_, np.integer, np.floating)) and fill == 0 and \
        not np.signbit(fill)
    if node.inputs or not zero or set(node.attrs) != {"shape", "dtype", "fill"} or dtype.kind not in "biuf":
        return default(node, ctx)
    return f"np.zeros({ctx.value(tuple(node.attrs['shape']))}, {ctx.passed_in(dtype)})"


def direct_emitters(default: Callable[[Any, Any], str]) -> dict[Op, Callable[[Any, Any], str]]:
    """The emitters of these ops for ``python_source.OP_EMITTERS``; ``default`` writes the usual line."""
    table: dict[Op, Callable[[Any, Any], str]] = {}
    for op in METHODS:
        table[op] = lambda node, ctx: _emit_method(node, ctx, default)
    for op in REDUCTIONS:
        table[op] = lambda node, ctx: _emit_reduction(node, ctx, default)
    table[Op.STACK] = lambda node, ctx: _emit_stack(node, ctx, default)
    table[Op.CAST] = lambda node, ctx: _emit_cast(node, ctx, default)
    table[Op.FULL] = lambda node, ctx: _emit_full(node, ctx, default)
    return table
