"""NumPy's dispatch protocols: which NumPy ufunc or function becomes which op.

``np.tanh(t)`` reaches ``Tensor.__array_ufunc__`` and ``np.sum(t, axis=-1)`` reaches ``__array_function__``;
both come here. A NumPy call without an op is a ``TraceError`` that names it: it is never run on the side and
dropped from the graph.
"""

from __future__ import annotations

import numpy as np

from ..ops import Op
from ..ops.elementwise import OUTER_UFUNCS
from ..ops.library import BY_FUNCTION, result_of
from ..ops.indexing import ACCUMULATE
from ..ops.linalg import einsum_is_view, einsum_letters
from .tensor import Tensor, call_op

NOT_COVERED = "is not in the op table or the registry of pure NumPy functions"
"""What a refusal of an unknown NumPy call says (compile() shows it as the reason of the graph break)."""


def numpy_name(func) -> str:
    """The full public name of a NumPy function or ufunc: ``numpy.linalg.solve``, ``numpy.add.outer``."""
    module = getattr(func, "__module__", None) or "numpy"
    name = getattr(func, "__name__", None) or repr(func)
    if not module.startswith("numpy"):
        module = "numpy"
    return f"{module.split('._')[0]}.{name}"

UFUNC_OPS: dict[np.ufunc, Op] = {
    np.add: Op.ADD, np.subtract: Op.SUB, np.multiply: Op.MUL, np.true_divide: Op.DIV,
    np.floor_divide: Op.FLOORDIV, np.remainder: Op.MOD, np.power: Op.POW, np.maximum: Op.MAXIMUM,
    np.minimum: Op.MINIMUM, np.equal: Op.EQ, np.not_equal: Op.NE, np.less: Op.LT, np.less_equal: Op.LE,
    np.greater: Op.GT, np.greater_equal: Op.GE, np.logical_and: Op.LOGICAL_AND, np.logical_or: Op.LOGICAL_OR,
    np.logical_xor: Op.LOGICAL_XOR, np.logical_not: Op.LOGICAL_NOT, np.negative: Op.NEG, np.positive: Op.COPY,
    np.absolute: Op.ABS, np.sign: Op.SIGN, np.exp: Op.EXP, np.log: Op.LOG, np.log1p: Op.LOG1P,
    np.expm1: Op.EXPM1, np.sqrt: Op.SQRT, np.square: Op.SQUARE, np.reciprocal: Op.RECIPROCAL, np.tanh: Op.TANH,
    np.sin: Op.SIN, np.cos: Op.COS, np.floor: Op.FLOOR, np.ceil: Op.CEIL, np.matmul: Op.MATMUL,
    np.arcsin: Op.ARCSIN, np.arccos: Op.ARCCOS, np.arctan: Op.ARCTAN, np.sinh: Op.SINH, np.cosh: Op.COSH,
    np.log2: Op.LOG2, np.log10: Op.LOG10, np.exp2: Op.EXP2, np.isnan: Op.ISNAN, np.isinf: Op.ISINF,
    np.isfinite: Op.ISFINITE, np.rint: Op.RINT, np.trunc: Op.TRUNC, np.conjugate: Op.CONJ,
    np.arctan2: Op.ARCTAN2, np.hypot: Op.HYPOT, np.logaddexp: Op.LOGADDEXP, np.left_shift: Op.LEFT_SHIFT,
    np.right_shift: Op.RIGHT_SHIFT,
}
# Attributes a ufunc adds to its op: np.positive is a copy laid out as ufunc results are.
UFUNC_ATTRS: dict[np.ufunc, dict] = {np.positive: {"ufunc": True}}
_NO_ATTRS: dict = {}
# ufunc.reduce forms that are a reduction op (axis defaults to 0, as in NumPy).
UFUNC_REDUCE_OPS: dict[np.ufunc, Op] = {
    np.add: Op.SUM, np.multiply: Op.PROD, np.maximum: Op.MAX, np.minimum: Op.MIN,
    np.logical_and: Op.ALL, np.logical_or: Op.ANY,
}
# Bitwise ufuncs on booleans are the logical ops; on integers, the bitwise ones.
BOOL_UFUNC_OPS = {np.bitwise_and: Op.LOGICAL_AND, np.bitwise_or: Op.LOGICAL_OR, np.bitwise_xor: Op.LOGICAL_XOR,
                  np.invert: Op.LOGICAL_NOT}
INT_UFUNC_OPS = {np.bitwise_and: Op.BITWISE_AND, np.bitwise_or: Op.BITWISE_OR, np.bitwise_xor: Op.BITWISE_XOR,
                 np.invert: Op.INVERT}
# The binary ops whose ufunc methods (outer, reduce, accumulate) a graph records.
UFUNC_METHOD_OPS = {fn: op for op, fn in OUTER_UFUNCS.items()}


def _all_bool(inputs) -> bool:
    return all(np.result_type(x.dtype if isinstance(x, Tensor) else x) == np.bool_ for x in inputs)


def apply_ufunc(rec, ufunc, method: str, inputs, kwargs):
    if method == "__call__" and not kwargs:  # np.tanh(t), np.add(t, 1)
        op = UFUNC_OPS.get(ufunc)
        if op is not None:
            return call_op(op, *inputs, **UFUNC_ATTRS.get(ufunc, _NO_ATTRS))
    name = f"numpy.{ufunc.__name__}"
    if method == "at" and ufunc.__name__ in ACCUMULATE and isinstance(inputs[0], Tensor) and not kwargs:
        # np.add.at(x, idx, v): unbuffered, a repeated index adds once per occurrence (an accumulating update)
        if len(inputs) != 3:
            raise rec.fail(f"{name}.at needs an array, an index and a value in a graph")
        inputs[0]._write(call_op(Op.INDEX_UPDATE, inputs[0], inputs[1], inputs[2], mode=ufunc.__name__))
        return None
    if method != "__call__":
        return _ufunc_method(rec, ufunc, method, inputs, kwargs)
    op = UFUNC_OPS.get(ufunc)
    if op is None and ufunc in BOOL_UFUNC_OPS:
        op = BOOL_UFUNC_OPS[ufunc] if _all_bool(inputs) else INT_UFUNC_OPS[ufunc]
    if op is None:
        raise rec.fail(f"{name} {NOT_COVERED}, so it cannot be recorded (graph_lab never runs an unknown call on "
                       f"the side and drops it). Rewrite it with supported ops, or compute it outside the captured "
                       f"function")
    out = kwargs.pop("out", None)
    if kwargs:
        raise rec.fail(f"{name} with keyword arguments {sorted(kwargs)} is not supported in a graph; "
                       f"call it without them (and cast with .astype if you need another dtype)")
    result = call_op(op, *inputs, **UFUNC_ATTRS.get(ufunc, {}))
    if out is None:
        return result
    (target,) = out
    if not isinstance(target, Tensor):
        raise rec.fail(f"{name}(..., out=) into a NumPy array cannot be recorded; assign the result instead")
    target[...] = _cast_same_kind(rec, name, result, target)
    return target


def _ufunc_method(rec, ufunc, method: str, inputs, kwargs):
    """``np.add.outer(a, b)``, ``np.add.reduce(x, axis)``, ``np.maximum.accumulate(x, axis)``."""
    name = f"numpy.{ufunc.__name__}.{method}"
    op = UFUNC_METHOD_OPS.get(ufunc)
    if ufunc in BOOL_UFUNC_OPS and ufunc is not np.invert:
        op = BOOL_UFUNC_OPS[ufunc] if _all_bool(inputs) else INT_UFUNC_OPS[ufunc]
    allowed = {"outer": set(), "reduce": {"axis", "keepdims"}, "accumulate": {"axis"}}.get(method)
    if op is None or allowed is None:
        raise rec.fail(f"{name} {NOT_COVERED} (ufunc methods are recorded for outer, reduce and accumulate of the "
                       f"table's binary ops); write it with supported ops")
    if set(kwargs) - allowed:
        raise rec.fail(f"{name} with {sorted(set(kwargs) - allowed)} is not supported in a graph")
    if method == "outer":
        return call_op(Op.UFUNC_OUTER, *inputs, op)
    (x,) = inputs
    axis = kwargs.get("axis", 0)
    if method == "accumulate":
        return call_op(Op.ACCUMULATE, x, op, axis)
    if ufunc in UFUNC_REDUCE_OPS:
        return call_op(UFUNC_REDUCE_OPS[ufunc], x, axis, kwargs.get("keepdims", False))
    return call_op(Op.UFUNC_REDUCE, x, op, axis, kwargs.get("keepdims", False))


def _cast_same_kind(rec, name, result, target):
    if result.dtype != target.dtype and not np.can_cast(result.dtype, target.dtype, "same_kind"):
        raise rec.fail(f"Cannot cast ufunc '{name}' output from {result.dtype} to {target.dtype} with casting "
                       f"rule 'same_kind'")
    return result


def _ravel(a, order="C"):
    return call_op(Op.RESHAPE, a, -1, order=order)


def _swapaxes(a, axis1, axis2):
    return a.swapaxes(axis1, axis2) if isinstance(a, Tensor) else np.swapaxes(a, axis1, axis2)


def _moveaxis(a, source, destination):
    nd = len(np.shape(a)) if not isinstance(a, Tensor) else a.ndim
    perm = [i for i in range(nd) if i != source % nd]
    perm.insert(destination % nd, source % nd)
    return call_op(Op.TRANSPOSE, a, tuple(perm))


def _where(condition, *xy):
    if len(xy) != 2:
        raise TypeError("np.where(condition) alone returns the indices of True values, a data-dependent shape; "
                        "use np.where(condition, x, y) to select")
    return call_op(Op.WHERE, condition, *xy)


def _array_split(a, indices_or_sections, axis=0):
    return call_op(Op.SPLIT, a, indices_or_sections, axis, equal=False)


def _atleast(a, n: int):
    nd = a.ndim if isinstance(a, Tensor) else np.ndim(a)
    if nd >= n:
        return a
    shape = tuple(a.shape) if isinstance(a, Tensor) else np.shape(a)
    if n == 2:
        return call_op(Op.RESHAPE, a, (1,) * (2 - nd) + shape)
    return call_op(Op.RESHAPE, a, (1,) * (n - nd) + shape)


def hstack(tup):
    arrays = [_atleast(a, 1) for a in tup]
    axis = 0 if arrays and (arrays[0].ndim if isinstance(arrays[0], Tensor) else np.ndim(arrays[0])) == 1 else 1
    return call_op(Op.CONCATENATE, arrays, axis)


def vstack(tup):
    return call_op(Op.CONCATENATE, [_atleast(a, 2) for a in tup], 0)


def _op(op: Op):
    return lambda *args, **kwargs: call_op(op, *args, **kwargs)


def _einsum(subscripts, *operands, **kwargs):
    """``np.einsum``; with one operand whose letters it only permutes (``'ij->ji'``), NumPy returns a transposed
    view, so it is one: a write through it reaches the operand, as in eager code."""
    if len(operands) == 1 and not kwargs and isinstance(subscripts, str) and einsum_is_view(subscripts):
        lhs, rhs = einsum_letters(subscripts)
        if "..." not in lhs and len(set(lhs)) == len(lhs) == np.ndim(operands[0]):
            return call_op(Op.TRANSPOSE, operands[0], tuple(lhs.index(ch) for ch in rhs))
    return call_op(Op.EINSUM, subscripts, *operands, **kwargs)


def _size(a, axis=None):
    """``np.size``: a static property (a SymInt for a symbolic size)."""
    return a.size if axis is None else a.shape[axis]


FUNCTIONS = {
    np.sum: _op(Op.SUM), np.mean: _op(Op.MEAN), np.max: _op(Op.MAX), np.amax: _op(Op.MAX), np.min: _op(Op.MIN),
    np.amin: _op(Op.MIN), np.prod: _op(Op.PROD), np.var: _op(Op.VAR), np.std: _op(Op.STD),
    np.argmax: _op(Op.ARGMAX), np.argmin: _op(Op.ARGMIN), np.any: _op(Op.ANY), np.all: _op(Op.ALL),
    np.where: _where, np.clip: _op(Op.CLIP), np.reshape: _op(Op.RESHAPE), np.transpose: _op(Op.TRANSPOSE),
    np.broadcast_to: _op(Op.BROADCAST_TO), np.expand_dims: _op(Op.EXPAND_DIMS), np.squeeze: _op(Op.SQUEEZE),
    np.concatenate: _op(Op.CONCATENATE), np.stack: _op(Op.STACK), np.split: _op(Op.SPLIT),
    np.array_split: _array_split, np.hstack: hstack, np.vstack: vstack, np.repeat: _op(Op.REPEAT),
    np.tile: _op(Op.TILE), np.pad: _op(Op.PAD), np.triu: _op(Op.TRIU), np.tril: _op(Op.TRIL),
    np.einsum: _einsum, np.outer: _op(Op.OUTER), np.zeros_like: _op(Op.ZEROS_LIKE), np.empty_like: _op(Op.ZEROS_LIKE),
    np.ones_like: _op(Op.ONES_LIKE), np.full_like: _op(Op.FULL_LIKE), np.copy: _op(Op.COPY),
    np.ravel: _ravel, np.swapaxes: _swapaxes, np.moveaxis: _moveaxis, np.astype: _op(Op.CAST),
    np.shape: lambda a: tuple(a.shape), np.ndim: lambda a: a.ndim, np.size: _size,
    np.cumsum: _op(Op.CUMSUM), np.cumprod: _op(Op.CUMPROD), np.sort: _op(Op.SORT), np.argsort: _op(Op.ARGSORT),
    np.diff: _op(Op.DIFF), np.trace: _op(Op.TRACE), np.average: _op(Op.AVERAGE), np.cov: _op(Op.COV),
    np.corrcoef: _op(Op.CORRCOEF), np.histogram: _op(Op.HISTOGRAM), np.dot: _op(Op.DOT), np.vdot: _op(Op.VDOT),
    np.inner: _op(Op.INNER), np.tensordot: _op(Op.TENSORDOT), np.real: _op(Op.REAL), np.imag: _op(Op.IMAG),
    np.angle: _op(Op.ANGLE), np.round: _op(Op.ROUND), np.around: _op(Op.ROUND), np.flip: _op(Op.FLIP),
    np.fliplr: lambda m: call_op(Op.FLIP, m, 1), np.flipud: lambda m: call_op(Op.FLIP, m, 0),
    np.roll: _op(Op.ROLL), np.diagonal: _op(Op.DIAGONAL), np.diag: _op(Op.DIAG), np.take: _op(Op.TAKE),
    np.take_along_axis: _op(Op.TAKE_ALONG_AXIS),
}

SIZE_CONSTRUCTORS = {
    np.arange: _op(Op.ARANGE), np.linspace: _op(Op.LINSPACE), np.eye: _op(Op.EYE),
    np.identity: lambda n, dtype=None: call_op(Op.EYE, n, dtype=float if dtype is None else dtype),
    np.tri: _op(Op.TRI),
}
"""NumPy constructors whose sizes may be symbolic. NumPy does not dispatch them to stand-ins (no array operand),
so compile() calls these in their place when an argument is a symbolic size; ``F.arange`` & co. do it too."""


def library_call(func, *args, **kwargs):
    """A function of the registry of pure NumPy functions: one ``library_call`` node, its result as NumPy's."""
    name = BY_FUNCTION[func].name
    return result_of(name, call_op(Op.LIBRARY_CALL, name, *args, **kwargs))


def apply_function(rec, func, args, kwargs):
    handler = FUNCTIONS.get(func)
    name = numpy_name(func)
    if handler is None and func in BY_FUNCTION:
        handler = lambda *a, **k: library_call(func, *a, **k)  # noqa: E731
    if handler is None:
        raise rec.fail(f"{name} {NOT_COVERED}, so it cannot be recorded (graph_lab never runs an unknown call on "
                       f"the side and drops it). Rewrite it with supported ops, or compute it outside the captured "
                       f"function")
    out = kwargs.pop("out", None)
    try:
        result = handler(*args, **kwargs)
    except TypeError as e:
        raise rec.fail(f"{name} was called with arguments graph_lab's op does not take: {e}") from None
    return result if out is None else _write_out(rec, name, result, out)


def _write_out(rec, name, result, out):
    """``out=`` of a NumPy function: the result written into ``out`` (a stand-in), which is returned."""
    if not isinstance(out, Tensor):
        raise rec.fail(f"{name}(..., out=) into a NumPy array cannot be recorded; assign the result instead")
    if tuple(out.shape) != tuple(result.shape):
        raise rec.fail(f"{name}: output parameter has shape {tuple(out.shape)}, the result {tuple(result.shape)}")
    out[...] = _cast_same_kind(rec, name, result, out)
    return out
