"""``np.roll`` inside a C program: a rolled operand read in place, with its wrap-around, instead of copied first.

``np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + ...`` (a stencil on a torus) makes NumPy copy ``u`` once per
roll, then add the copies. Element ``p`` of ``np.roll(a, s, axis=d)`` is element ``(p - s) mod n`` of ``a`` along
``d`` (shifts on the same axis add up, as in NumPy): not one strided view of ``a``, but one on each side of the
wrap. So the loop nest of a statement that reads rolled operands is cut, along each axis, at every shift: in each
box of the cut the rolled operands are plain views again, read at an offset and strides in their base array
(``stencil``'s layouts). The box's code is the statement's loop nest with other offsets: a statement computes
what NumPy computes from the rolled copies, bit for bit, reading each element where the copy would have got it.

``c_programs`` takes a roll whose only readers are one statement's arithmetic into that statement
(``rolled_read``); ``c_program_code`` writes one loop nest per box (``boxes``).
"""

from __future__ import annotations

import itertools
from typing import Callable, NamedTuple

from ..ops import Op


class RolledLayout(NamedTuple):
    """Where a rolled operand's elements are: the un-rolled view's offset and strides in its base (in elements, one
    stride per loop axis), and the roll's shift along each loop axis, in ``[0, n)``."""

    offset: int
    strides: tuple[int, ...]
    shifts: tuple[int, ...]


def roll_shifts(node, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Each axis's total shift of a ``roll`` node over an array of ``shape``, modulo the axis's length as NumPy
    takes it (``np.roll(a, (1, 2), axis=(0, 0))`` shifts axis 0 by 3; -1 on 100 elements is 99). None for a roll
    of the flattened array (``axis=None``) of more than one dimension, and for an empty array."""
    shift, axis = node.attrs["shift"], node.attrs["axis"]
    if axis is None:
        if len(shape) != 1:
            return None
        axis = 0
    axes = axis if isinstance(axis, tuple) else (axis,)
    shifts = shift if isinstance(shift, tuple) else (shift,) * len(axes)
    if len(shifts) != len(axes) or not shape or any(n == 0 for n in shape):
        return None
    total = [0] * len(shape)
    for sh, ax in zip(shifts, axes):
        total[ax] += sh
    return tuple(t % n for t, n in zip(total, shape))


def rolled_read(leaf, shape: tuple[int, ...], dtype, read_layout: Callable):
    """``(source, RolledLayout)`` for a leaf that is a roll of a readable operand of the loop's shape
    (``read_layout(value, shape, dtype)``: where that operand's elements are, or None); None otherwise."""
    node = leaf.node
    if node.op != Op.ROLL or leaf.type.shape != shape or leaf.type.dtype != dtype or leaf.type.weak is not None:
        return None
    operand = node.inputs[0]
    shifts = roll_shifts(node, shape)
    if shifts is None or operand.type.shape != shape:
        return None
    where = read_layout(operand, shape, dtype)
    if where is None or len(where[1][1]) != len(shape):
        return None
    source, (offset, strides) = where
    return source, RolledLayout(offset, strides, shifts)


def is_rolled(layout) -> bool:
    return isinstance(layout, RolledLayout) and any(layout.shifts)


def reads_rolls(leaves: dict) -> int:
    """How many of a statement's leaves (value -> (source, layout)) are rolls read in place."""
    return sum(is_rolled(layout) for _, layout in leaves.values())


def boxes(shape: tuple[int, ...], layouts: list) -> list[tuple[tuple[int, ...], list[tuple[int, tuple]]]]:
    """The loop nest over ``shape`` cut at every shift of the rolled ``layouts``: for each box, its shape and each
    layout as ``(offset, strides)`` read from the box's first element. With no rolled layout, one box: the
    whole nest, each layout as it is."""
    cuts = []
    for d, n in enumerate(shape):
        points = {0, n} | {lay.shifts[d] for lay in layouts if is_rolled(lay)}
        ordered = sorted(points)
        cuts.append(list(zip(ordered[:-1], ordered[1:])))
    result = []
    for spans in itertools.product(*cuts):
        starts = [a for a, _ in spans]
        moved = []
        for lay in layouts:
            offset, strides = lay[0], lay[1]
            shifts = lay.shifts if isinstance(lay, RolledLayout) else (0,) * len(shape)
            # (in a box on one side of the cut, the rolled index p - s (mod n) is p - s, or p - s + n throughout)
            offset += sum(((a - s) % n) * st for a, s, n, st in zip(starts, shifts, shape, strides))
            moved.append((offset, tuple(strides)))
        result.append((tuple(b - a for a, b in spans), moved))
    return result
