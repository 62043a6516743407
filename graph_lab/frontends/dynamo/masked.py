"""Boolean-mask writes inside ``compile()``: ``x[mask] = v``, ``x[mask] += v``, ``x[mask] = y[mask]`` as ``where``.

``x[mask]`` on its own has a data-dependent shape (the number of True values), which no graph can have. But the
commonest use of it is a write back into the same positions: ``dx[dx > L/2] -= L``, ``x[m] = y[m]``. There the
selected elements are never needed as a short array; each one is computed from the element at the same
position. So a read ``x[mask]`` is kept as a *selection*: the full array of values it selects from and the mask.
Elementwise arithmetic with a number (or an array that broadcasts over each selected element, or another
selection by the same mask) gives a selection again, computed on the full arrays; and storing a selection, a
number or such an array into ``x[mask]`` is ``where(mask, value, x)``. Each element gets what NumPy computes
for it, bit for bit, and the graph's shapes stay static.

Anything else done with a selection (``x[mask].sum()``, a function call, a value Python needs) is a graph break
with the reason, and at the break the selection becomes the real ``full[mask]`` that NumPy would have made.
"""

from __future__ import annotations

import operator

import numpy as np

from ...ops import Op
from ...ops.base import same_shape
from ...passes.cse import node_key
from ..tensor import Tensor, call_op
from .frame import BreakGraph

_ELEMENTWISE = {operator.add: Op.ADD, operator.sub: Op.SUB, operator.mul: Op.MUL, operator.truediv: Op.DIV,
                operator.floordiv: Op.FLOORDIV, operator.mod: Op.MOD, operator.eq: Op.EQ, operator.ne: Op.NE,
                operator.lt: Op.LT, operator.le: Op.LE, operator.gt: Op.GT, operator.ge: Op.GE,
                np.add: Op.ADD, np.subtract: Op.SUB, np.multiply: Op.MUL, np.true_divide: Op.DIV,
                np.maximum: Op.MAXIMUM, np.minimum: Op.MINIMUM}
"""The operations a selection takes part in: NumPy rounds each of them correctly element by element, so computing
them on the full arrays gives each selected element the bits it gets in the short array."""
_UNARY = {operator.neg: Op.NEG, operator.abs: Op.ABS, np.negative: Op.NEG, np.absolute: Op.ABS, np.sqrt: Op.SQRT,
          np.floor: Op.FLOOR, np.ceil: Op.CEIL}

_WHY = ("boolean-mask indexing x[mask] has a data-dependent shape (the number of True values), which a graph "
        "cannot have; compile() captures it only in a masked write (x[mask] = v, x[mask] += v, x[mask] = y[mask] "
        "with elementwise arithmetic on numbers and on selections by the same mask)")
_HINT = "use np.where(mask, new, x) to keep the shape, or accept the break"


def is_mask_of(key, x: Tensor) -> bool:
    """Whether ``key`` is a boolean stand-in selecting whole leading dimensions of ``x`` (``x[mask]``)."""
    return isinstance(key, Tensor) and key.dtype == np.bool_ and 1 <= key.ndim <= x.ndim and \
        same_shape(key.type.shape, x.type.shape[:key.ndim])


class Selection:
    """``full[mask]``, not made: ``full`` holds every element's value (the selected ones and the others)."""

    __slots__ = ("full", "mask")

    def __init__(self, full: Tensor, mask: Tensor):
        self.full = Tensor(full._rec, full._value)  # a snapshot: x[mask] is a copy, later writes to x do not show
        self.mask = mask

    def __repr__(self) -> str:
        return f"<selection {self.full.type}[{self.mask.type}]>"

    def _combine(self, op: Op, other, swapped: bool = False):
        other_full = _operand_for(self, other)
        if other_full is None:
            raise BreakGraph(_WHY, _HINT)
        args = (other_full, self.full) if swapped else (self.full, other_full)
        return Selection(call_op(op, *args), self.mask)

    def __getattr__(self, name):
        if name.startswith("_"):  # (protocol lookups: hasattr() must stay false, not break)
            raise AttributeError(name)
        raise BreakGraph(f"{_WHY}; here .{name} of a selection is asked for", _HINT)

    def __pow__(self, other):
        raise BreakGraph(f"{_WHY}; here it is raised to a power", _HINT)

    __rpow__ = __pow__

    def __array__(self, dtype=None, copy=None):
        raise BreakGraph(_WHY, _HINT)

    def __array_function__(self, func, types, args, kwargs):
        raise BreakGraph(f"{_WHY}; here numpy.{func.__name__} is called on a selection", _HINT)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs and len(inputs) == 1 and ufunc in _UNARY:
            return Selection(call_op(_UNARY[ufunc], self.full), self.mask)
        if method == "__call__" and not kwargs and len(inputs) == 2 and ufunc in _ELEMENTWISE:
            return self._combine(_ELEMENTWISE[ufunc], inputs[1], swapped=False) if inputs[0] is self else \
                self._combine(_ELEMENTWISE[ufunc], inputs[0], swapped=True)
        raise BreakGraph(f"{_WHY}; here numpy.{ufunc.__name__} is applied to a selection", _HINT)

    def __len__(self):
        raise BreakGraph(f"{_WHY}; here its length is asked for", _HINT)

    def __bool__(self):
        raise BreakGraph(f"{_WHY}; here its truth value is asked for", _HINT)

    def __iter__(self):
        raise BreakGraph(f"{_WHY}; here it is iterated over", _HINT)

    def __str__(self):
        raise BreakGraph(f"{_WHY}; here its text is asked for", _HINT)

    def __neg__(self):
        return Selection(call_op(Op.NEG, self.full), self.mask)

    def __abs__(self):
        return Selection(call_op(Op.ABS, self.full), self.mask)


def _binary(op: Op):
    return (lambda self, other: self._combine(op, other)), (lambda self, other: self._combine(op, other, True))


for _name, _op in [("add", Op.ADD), ("sub", Op.SUB), ("mul", Op.MUL), ("truediv", Op.DIV),
                   ("floordiv", Op.FLOORDIV), ("mod", Op.MOD)]:
    _forward, _reflected = _binary(_op)
    setattr(Selection, f"__{_name}__", _forward)
    setattr(Selection, f"__r{_name}__", _reflected)
for _name, _op in [("eq", Op.EQ), ("ne", Op.NE), ("lt", Op.LT), ("le", Op.LE), ("gt", Op.GT), ("ge", Op.GE)]:
    setattr(Selection, f"__{_name}__", _binary(_op)[0])
Selection.__hash__ = None


def same_mask(a: Tensor, b: Tensor, depth: int = 6) -> bool:
    """Whether two masks are the same values: one value, or the same pure op on the same values (``x > 0``
    written twice, as in ``x[x > 0] = y[x > 0]``)."""
    va, vb = a._value if isinstance(a, Tensor) else a, b._value if isinstance(b, Tensor) else b
    if va is vb:
        return True
    na, nb = va.node, vb.node
    if depth == 0 or na is None or nb is None or na.op == Op.INPUT or len(na.inputs) != len(nb.inputs):
        return False
    key_a, key_b = node_key(na), node_key(nb)
    if key_a is None or key_b is None or key_a[:2] != key_b[:2]:
        return False
    if na.outputs.index(va) != nb.outputs.index(vb):
        return False
    return all(same_mask(x, y, depth - 1) for x, y in zip(na.inputs, nb.inputs))


def _operand_for(sel: Selection, other):
    """What ``other`` is at each position of ``sel.full``, when that gives each selected element the value NumPy
    gives it: a number, an array broadcasting over each selected element, or a selection by the same mask."""
    if isinstance(other, Selection):
        return other.full if same_mask(other.mask, sel.mask) else None
    if isinstance(other, (int, float, bool, np.generic)):
        return other
    if isinstance(other, (Tensor, np.ndarray)):
        rest = sel.full.type.shape[sel.mask.ndim:]
        shape = tuple(other.shape)
        while len(shape) > len(rest) and shape[:1] == (1,):
            shape = shape[1:]
        if len(shape) <= len(rest) and all(d == 1 or same_shape((d,), (r,))
                                           for d, r in zip(shape, rest[len(rest) - len(shape):])):
            return call_op(Op.RESHAPE, other, shape) if shape != tuple(other.shape) else other
    return None


def select(x: Tensor, mask: Tensor) -> Selection:
    """``x[mask]``, kept as a selection."""
    return Selection(x, mask)


def store(x: Tensor, mask: Tensor, value) -> bool:
    """``x[mask] = value`` as a ``where``; False when ``value`` is not one that can be (the caller goes on as
    NumPy indexing, which breaks the graph with its reason)."""
    if isinstance(value, Selection) and not same_mask(value.mask, mask):
        return False
    new = value.full if isinstance(value, Selection) else _operand_for(Selection(x, mask), value)
    if new is None:
        return False
    if not isinstance(new, Tensor):
        new = np.asarray(new).astype(x.dtype)  # (cast first: an int64 array keeps its other elements exactly)
    elif new.dtype != x.dtype:
        new = call_op(Op.CAST, new, x.dtype)
    if mask.ndim < x.ndim:
        mask = call_op(Op.RESHAPE, mask, tuple(mask.type.shape) + (1,) * (x.ndim - mask.ndim))
    result = call_op(Op.WHERE, mask, new, x)
    if not same_shape(result.type.shape, x.type.shape):
        return False
    x._write(result)
    return True
