"""Indexing: ``x[key]`` and its functional update ``x[key] = v`` (which returns a new array).

A key is stored as a template: ints, ``Slice``\\ s, ``None`` and ``...`` stay static; every index *array*
(a list, a range, a constant array or an integer tensor) is an operand of the node, named in the template by a
``Slot`` holding its operand position. So ``h[:, [-1], :]`` and ``emb[token_ids]`` are both one ``index`` node
that runs as NumPy's own ``x[key]``, with NumPy's exact semantics.

An int known only when the graph runs (a loop region's index ``i``: ``A[i, 1:-1]``, ``A[:, k:k + 2]``) is an
operand too, named by an ``At`` or a ``Span`` (``ops/int_index.py``): NumPy's integer indexing, not an index
array's.

Slice bounds and integer indices may be symbolic sizes (``x[:T-1]``, ``x[d//2]``): they are bound when the graph
runs. Shapes with symbols follow NumPy's indexing rules written out below (``_symbolic_indexed_shape``); static
shapes ask NumPy itself.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from ..errors import OpError
from ..ir.relations import relation
from ..ir.shape_env import require
from ..ir.symbolic import Expr, unwrap
from ..ir.types import TensorType
from .base import Op, OpDef, broadcast, is_tensorlike, register, same_size, shape_of, shape_text
from .int_index import At, IntIndex, Span, check_spans, has_spans, known_index, span_slice, view_key  # noqa: F401


class Slice(NamedTuple):
    """A static slice ``start:stop:step`` (each may be None). Hashable, unlike ``slice`` in Python 3.11."""

    start: int | None
    stop: int | None
    step: int | None

    def to_slice(self) -> slice:
        return slice(self.start, self.stop, self.step)

    def __str__(self) -> str:
        text = f"{'' if self.start is None else self.start}:{'' if self.stop is None else self.stop}"
        return text + ("" if self.step is None else f":{self.step}")


class Slot(NamedTuple):
    """An index array that is the node's operand number ``pos``."""

    pos: int

    def __str__(self) -> str:
        return f"${self.pos}"


def format_key(key: tuple) -> str:
    return "[" + ", ".join("..." if k is Ellipsis else str(k) for k in key) + "]"


def _static(v, what: str):
    v = unwrap(v)
    if isinstance(v, Expr):
        return v
    if v is None or (isinstance(v, (int, np.integer)) and not isinstance(v, bool)):
        return None if v is None else int(v)
    raise OpError(f"index: {what} must be an int known at capture time, got {type(v).__name__}; slicing with "
                  f"a computed tensor would give a data-dependent shape")


def bind_key(key, first_pos: int, shape: tuple | None = None) -> tuple[tuple, list]:
    """Split a NumPy index into a static template and its index-array operands (numbered from ``first_pos``).
    ``shape``: the indexed array's, against which a constant mask is checked as NumPy checks it."""
    if not isinstance(key, tuple):
        key = (key,)
    template, operands = [], []
    dims = [_dims_indexed(unwrap(k)) for k in key]
    axis = 0  # the dimension of ``shape`` that the entry indexes
    for k, d in zip(key, dims):
        k = unwrap(k)
        if k is Ellipsis and shape is not None:
            axis += len(shape) - sum(dims)
        axis += d
        if k is None or k is Ellipsis or isinstance(k, Expr):
            template.append(k)
        elif isinstance(k, slice):
            template.append(Slice(_static(k.start, "a slice start"), _static(k.stop, "a slice stop"),
                                  _static(k.step, "a slice step")))
        elif type(k) is IntIndex:
            pos = first_pos + len(operands)
            template.append(At(pos) if k.length is None else Span(pos, k.length))
            operands.append(k.value)
        elif isinstance(k, bool) or isinstance(k, np.bool_):
            raise OpError("index: a Python bool as an index is not supported; use a boolean expression with "
                          "F.where instead")
        elif isinstance(k, (int, np.integer)):
            template.append(int(k))
        elif is_tensorlike(k):
            if k.dtype == np.bool_:
                raise OpError("boolean-mask indexing x[mask] has a data-dependent shape (the number of True "
                              "values), which a graph cannot have; use F.where(mask, x, fill) to keep the shape")
            if not np.issubdtype(k.dtype, np.integer):
                raise OpError(f"index: arrays used as indices must be of integer type, got {k.dtype}")
            template.append(Slot(first_pos + len(operands)))
            operands.append(k)
        else:
            arr = np.asarray(list(k) if isinstance(k, range) else k)
            if arr.dtype == np.bool_:  # a constant mask: its True positions are known now
                if shape is not None:
                    _check_mask(shape, axis - d, arr.shape)
                for part in np.nonzero(arr):
                    template.append(Slot(first_pos + len(operands)))
                    operands.append(part)
                continue
            if arr.size == 0 and arr.dtype != np.intp:
                arr = arr.astype(np.intp)
            if not np.issubdtype(arr.dtype, np.integer):
                raise OpError(f"index: only integers, slices, None, ..., and integer arrays are valid indices, "
                              f"got {type(k).__name__} of {arr.dtype}")
            template.append(Slot(first_pos + len(operands)))
            operands.append(arr)
    return tuple(template), operands


def _dims_indexed(k) -> int:
    """How many dimensions of the indexed array a key entry takes (an Ellipsis: counted apart)."""
    if k is None or k is Ellipsis:
        return 0
    if isinstance(k, (list, tuple)) and not is_tensorlike(k):
        try:
            arr = np.asarray(k)
        except ValueError:  # (ragged: bind_key refuses it)
            return 1
        return arr.ndim if arr.dtype == np.bool_ else 1
    return 1


def _check_mask(shape: tuple, axis: int, mask_shape: tuple) -> None:
    """A boolean index covers as many dimensions as it has, each of the indexed array's size (NumPy's rule)."""
    for i, n in enumerate(mask_shape):
        if axis + i < len(shape):
            same_size("index", shape[axis + i], n,
                      f"boolean index did not match indexed array along axis {axis + i}; size of axis is "
                      f"{shape[axis + i]} but size of corresponding boolean axis is {n}")


def fill_key(key: tuple, operands) -> tuple:
    return tuple(operands[k.pos] if isinstance(k, Slot) else k.to_slice() if isinstance(k, Slice) else
                 operator.index(operands[k.pos]) if type(k) is At else span_slice(operands[k.pos], k.length)
                 if type(k) is Span else known_index(k) if type(k) is IntIndex else k for k in key)


def is_basic(key: tuple) -> bool:
    """True when the key has no index arrays: NumPy then returns a view."""
    return not any(isinstance(k, Slot) for k in key)


_NO_BYTES = np.dtype([])  # a dtype whose elements take no memory
_ZERO = bytes(8)


def _zero_stride(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A read-only array of ``shape`` whose elements all share one zero: no memory per element."""
    return np.ndarray(shape, dtype, buffer=_ZERO, strides=(0,) * len(shape))


def indexed_shape(shape: tuple[int, ...], key: tuple, operands) -> tuple[int, ...]:
    """The shape of ``x[key]`` for an ``x`` of ``shape``, found by indexing a zero-stride dummy array.

    Operands may be arrays (their values are bounds-checked) or types (zeros of that shape are used). The dummy
    has zero-byte elements and the zeros are zero-stride views, so no memory grows with the shapes: a type
    rule must stay cheap even for the huge shapes a hand-written or hostile IR text may declare."""
    if _any_symbolic(shape, key, operands):
        return _symbolic_indexed_shape(shape, key, operands)
    dummy = _zero_stride(shape, _NO_BYTES)
    fills = [_zero_stride(o.shape, np.dtype(np.intp)) if isinstance(o, TensorType) else o for o in operands]
    if any(type(k) is At for k in key):  # (the shape does not depend on which item an int index takes)
        key = tuple(0 if type(k) is At else k for k in key)
    try:
        return np.shape(dummy[fill_key(key, fills)])
    except IndexError as e:
        raise OpError(f"index: {e} (indexing an array of shape {shape} with {format_key(key)})") from None


def _any_symbolic(shape, key, operands) -> bool:
    if any(type(d) is not int for d in shape) or any(isinstance(k, Expr) or type(k) is Span for k in key):
        return True
    if any(isinstance(k, Slice) and any(isinstance(v, Expr) for v in k) for k in key):
        return True
    return any(isinstance(o, TensorType) and any(type(d) is not int for d in o.shape) for o in operands)


def _symbolic_indexed_shape(shape: tuple, key: tuple, operands) -> tuple:
    """NumPy's indexing rule on symbolic sizes. Basic items map dimension to dimension (``None`` adds a 1, an
    int removes one, a slice keeps its length); with index arrays, they and the ints are *advanced* indices:
    their shapes broadcast to one block, placed where they stand if they are adjacent, else first."""
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise OpError("index: an index can only have a single ellipsis ('...')")
    if consumed > len(shape):
        raise OpError(f"index: too many indices for array: array is {len(shape)}-dimensional, but {consumed} "
                      f"were indexed")
    full = Slice(None, None, None)
    fill = [full] * (len(shape) - consumed)
    items = [x for k in key for x in (fill if k is Ellipsis else [k])] + ([] if Ellipsis in key else fill)
    advanced = any(isinstance(k, Slot) for k in items)
    out: list = []
    blocks, where, first = [], [], None
    dims = iter(shape)
    for position, k in enumerate(items):
        if k is None:
            out.append(1)
            continue
        n = next(dims)
        if isinstance(k, Slice):
            out.append(slice_length(n, k))
            continue
        if type(k) is Span:
            if type(n) is int and n < k.length:
                raise OpError(f"index: a slice of {k.length} items from an axis of size {n}")
            out.append(k.length)
            continue
        if isinstance(k, Slot):
            blocks.append(_index_array_shape(n, operands[k.pos]))
        else:
            if type(k) is not At:  # (an int known when the graph runs: NumPy checks it then)
                _check_int_index(n, k)
            if not advanced:
                continue
            blocks.append(())
        where.append(position)
        if first is None:
            first = len(out)
            out.append(None)  # where the broadcast block goes if the advanced indices are adjacent
    if blocks:
        try:
            block = broadcast("index", *blocks)
        except ValueError as e:
            raise OpError(f"index: shape mismatch: indexing arrays could not be broadcast together ({e})") from None
        out.remove(None)
        adjacent = where == list(range(where[0], where[0] + len(where)))
        out = out[:first] + list(block) + out[first:] if adjacent else list(block) + out
    return tuple(out)


def _index_array_shape(n, operand) -> tuple:
    if isinstance(operand, TensorType):
        return operand.shape
    arr = np.asarray(operand)
    if arr.size:
        hi, lo = int(arr.max()), int(arr.min())
        _check_int_index(n, hi)
        _check_int_index(n, lo)
    return arr.shape


def _check_int_index(n, i) -> None:
    """``-n <= i < n``, as NumPy checks it: ints against a static size raise NumPy's message."""
    if type(n) is int and type(i) is int:
        if not -n <= i < n:
            raise OpError(f"index: index {i} is out of bounds for axis with size {n}")
        return
    fact = relation(">=", i, -n) if type(i) is int and i < 0 else relation(">=", n - 1, i)
    require(fact, f"index {i} must be within an axis of size {n}")


def slice_length(n, s: Slice):
    """How many items ``range(n)[s]`` has, for a symbolic ``n`` or symbolic bounds (comparisons decide)."""
    step = 1 if s.step is None else s.step
    if type(step) is not int:
        raise OpError(f"index: a slice step must be an int known at capture time, got {step}")
    if step == 0:
        raise OpError("index: slice step cannot be zero")
    if step > 0:
        start = _clamp(s.start, n, 0, 0, n)
        stop = _clamp(s.stop, n, n, 0, n)
        return (stop - start + step - 1) // step if stop > start else 0
    start = _clamp(s.start, n, n - 1, -1, n - 1)
    stop = _clamp(s.stop, n, -1, -1, n - 1)
    return (start - stop - step - 1) // -step if start > stop else 0


def _clamp(v, n, default, lower, upper):
    """Python's slice bound rule: None is the default, a negative bound counts from the end, then clamp."""
    if v is None:
        return default
    if v < 0:
        v = v + n
        return v if v >= lower else lower
    return v if v <= upper else upper


def _index(*operands, key):
    if has_spans(key):
        check_spans(operands[0], key, operands)
    return operands[0][fill_key(key, operands)]


def _bind_index(x, key):
    template, idx = bind_key(key, 1, shape_of(x))
    indexed_shape(shape_of(x), template, [None] + [_concrete_or_type(o) for o in idx])
    return [x] + idx, {"key": template}


def _concrete_or_type(o):
    return TensorType(np.dtype(np.intp), tuple(o.shape)) if is_tensorlike(o) else o


def _infer_index(types, attrs):
    _check_slots(types, attrs["key"])
    shape = indexed_shape(types[0].shape, attrs["key"], types)
    return (TensorType(types[0].dtype, shape),)


def _check_slots(types, key):
    for k in key:
        if isinstance(k, Slot):
            if not 0 < k.pos < len(types) or not np.issubdtype(types[k.pos].dtype, np.integer):
                raise OpError(f"index: slot ${k.pos} must name an integer operand")
        elif type(k) is At or type(k) is Span:
            if not 0 < k.pos < len(types) or not np.issubdtype(types[k.pos].dtype, np.integer) or \
                    types[k.pos].shape != () or types[k.pos].dtype == np.bool_:
                raise OpError(f"index: @{k.pos} must name a 0-d integer operand (an int index)")
            if type(k) is Span and (type(k.length) is not int or k.length < 0):
                raise OpError(f"index: the length of {k} must be an int >= 0")


register(OpDef(Op.INDEX, "index", _bind_index, _infer_index, _index, "ndarray.__getitem__",
               print_attrs=lambda a: f"key={format_key(a['key'])}", doc="x[key]"))


ACCUMULATE = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
              "minimum": np.minimum}
"""The ``mode`` of an accumulating ``index_update``: ``np.add.at(x, idx, v)`` and its siblings, unbuffered, so a
repeated index applies the ufunc once per occurrence (plain ``x[idx] = v`` keeps the last value written)."""


def _index_update(*operands, key, mode=None):
    if has_spans(key):
        check_spans(operands[0], key, operands)
    out = np.array(operands[0], copy=True)
    if mode is None:
        out[fill_key(key, operands)] = operands[1]
    else:
        ACCUMULATE[mode].at(out, fill_key(key, operands), operands[1])
    return out


def index_update_in_place(*operands, key, mode=None):
    """``index_update`` written into its base array itself, which is returned: for a backend that knows nothing
    reads the base's old value any more (``backends/inplace.py``). The same assignment, so the same values."""
    base = operands[0]
    if has_spans(key):
        check_spans(base, key, operands)
    if mode is None:
        base[fill_key(key, operands)] = operands[1]
    else:
        ACCUMULATE[mode].at(base, fill_key(key, operands), operands[1])
    return base


def _bind_index_update(x, key, value, mode=None):
    template, idx = bind_key(key, 2, shape_of(x))
    target = indexed_shape(shape_of(x), template, [None, None] + [_concrete_or_type(o) for o in idx])
    _check_assignable(shape_of(value), target)
    return [x, value] + idx, ({"key": template} if mode is None else {"key": template, "mode": mode})


def _check_assignable(value_shape, target):
    vs = tuple(value_shape)
    while len(vs) > len(target) and vs[0] == 1:  # NumPy drops leading size-1 dims of the value
        vs = vs[1:]
    message = (f"index_update: could not broadcast input array from shape {shape_text(value_shape)} into "
               f"shape {shape_text(target)}")
    if len(vs) > len(target):
        raise OpError(message)
    for v, t in zip(vs, tuple(target)[len(target) - len(vs):]):  # each size of the value: 1, or the target's
        if v != 1:
            same_size("index_update", v, t, message)


def _check_mode(mode) -> None:
    if mode is None:
        return
    if mode not in ACCUMULATE:
        raise OpError(f"index_update: mode must be one of {', '.join(ACCUMULATE)}, got {mode!r}")


def _infer_index_update(types, attrs):
    _check_slots(types, attrs["key"])
    _check_mode(attrs.get("mode"))
    target = indexed_shape(types[0].shape, attrs["key"], types)
    _check_assignable(types[1].shape, target)
    return (TensorType(types[0].dtype, types[0].shape),)


def _print_index_update(attrs) -> str:
    text = f"key={format_key(attrs['key'])}"
    return text if attrs.get("mode") is None else f"{text} mode={attrs['mode']!r}".replace("'", '"')


register(OpDef(Op.INDEX_UPDATE, "index", _bind_index_update, _infer_index_update, _index_update,
               "ndarray.__setitem__", print_attrs=_print_index_update,
               doc="a copy of x with x[key] = value (mode \"add\" and others: numpy.add.at(x, key, value))"))
