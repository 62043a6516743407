"""Where a C program's statement finds the elements it reads: a static view of a buffer, a whole buffer, or a
0-d value passed as a scalar, each as an offset and one stride per loop axis (``c_programs``)."""

from __future__ import annotations

from ..ir.graph import Value
from ..ops import Op
from ..ops.aliasing import returns_fresh
from .stencil import _c_strides, _layout

Layout = tuple[int, tuple[int, ...]]
"""(offset, strides) in elements of a buffer, one stride per loop axis."""


def read_layout(leaf: Value, shape: tuple[int, ...], dtype) -> tuple[Value, Layout] | None:
    """Where a leaf's elements are: a static view of a value, the value itself, or a 0-d scalar."""
    t = leaf.type
    if t.weak is not None:
        return (leaf, (0, (0,) * len(shape))) if t.weak in (int, float) and leaf.node.op == Op.INPUT else None
    if t.dtype != dtype or t.shape not in (shape, ()):
        return None
    if leaf.node.op == Op.INDEX and len(leaf.node.inputs) == 1:
        return view_layout(leaf.node.inputs[0], leaf.node.attrs["key"], t, shape, dtype)
    if not t.shape and not is_buffer(leaf):
        return leaf, (0, (0,) * len(shape))  # a 0-d value: passed as a scalar
    return (leaf, (0, _c_strides(shape) if t.shape else (0,) * len(shape))) if is_buffer(leaf) else None


def view_layout(source: Value, key, t, shape: tuple[int, ...], dtype) -> tuple[Value, Layout] | None:
    """Where ``source[key]`` (of type ``t``) is in ``source``'s buffer, read over a loop nest of ``shape``."""
    layout = _layout(source.type.shape, key)
    if layout is None or layout[2] != t.shape or t.shape not in (shape, ()) or t.dtype != dtype:
        return None
    strides = layout[1] if t.shape else (0,) * len(shape)
    return (source, (layout[0], strides)) if is_buffer(source) else None


def is_buffer(v: Value) -> bool:
    """An array with memory of its own (an input, a constant, a new result, an update of one): never a view."""
    return v.node.op in (Op.INPUT, Op.CONST) or returns_fresh(v.node)
