"""Running sums and products (``np.cumsum``, ``np.cumprod``) as statements of a C program.

``c = np.cumsum(x, axis=-1); c[:, w:] = c[:, w:] - c[:, :-w]`` (a moving average) is a scan NumPy makes in one
call, then slice arithmetic and an update on the same array. The scan's loop nest computes each element from the
one before it along the axis, ``c[..., i] = c[..., i - 1] + x[..., i]`` (``*`` for a product), and the first as
``x[..., 0]`` itself: the order and the roundings of NumPy's ``add.accumulate`` (never pairwise), so the running
sum is NumPy's bit for bit, and the update after it reads it in the same C call. Only float32 and float64
scans of a value of the same dtype, along one axis (or a 1-D value): NumPy scans integers in another dtype.

``c_programs`` takes a scan as a statement that makes a new array when only statements read it (``scan_statement``);
``c_program_code`` writes its loop body (``scan_body``).
"""

from __future__ import annotations

from typing import Callable

from ..ops import Op
from .stencil import FLOATS, _c_strides

SCAN_OPS = {Op.CUMSUM: "+", Op.CUMPROD: "*"}
"""The scans a statement computes, with C's operator: NumPy's float arithmetic, one rounding per element."""


def scan_axis(node) -> int | None:
    """The axis a scan runs along, or None when a program cannot compute it (a flattened scan of more than one
    dimension, another dtype than its operand's, an empty array)."""
    x, out = node.inputs[0].type, node.output.type
    axis = node.attrs["axis"]
    if axis is None and x.ndim == 1:
        axis = 0
    if axis is None or x.dtype not in FLOATS or out.dtype != x.dtype or out.shape != x.shape or \
            not all(type(n) is int and n > 0 for n in x.shape):
        return None
    return axis


def scan_statements(graph, found: dict, claimed: set[int], read_layout: Callable, statement: Callable) -> dict:
    """id(node) -> its statement, for each scan whose every reader is a statement's node (``claimed``) or a view
    that only such nodes read (the statements ``found`` so far hold those views)."""
    viewed = {id(n) for s in found.values() for n in s.views if all(id(u) in claimed for u in n.output.users)}
    scans = {}
    for node in graph.nodes:
        if node.op in SCAN_OPS and node.output.users and \
                all(id(u) in claimed or id(u) in viewed for u in node.output.users):
            s = scan_statement(node, read_layout, statement)
            if s is not None:
                scans[id(node)] = s
    return scans


def scan_statement(node, read_layout: Callable, statement: Callable):
    """The scan as ``statement(...)`` (``c_programs.Statement``), computing a new array; None when its operand is
    not one a loop nest reads (``read_layout(value, shape, dtype)``)."""
    if node.op not in SCAN_OPS or scan_axis(node) is None:
        return None
    x, shape, dtype = node.inputs[0], node.output.type.shape, node.output.type.dtype
    where = read_layout(x, shape, dtype)
    if where is None or x.type.weak is not None:
        return None
    views = [x.node] if where[0] is not x else []
    return statement(node, shape, dtype, [node], {x: where}, views, {}, (0, _c_strides(shape)), True)


def scan_body(node, loads: list[str], ctype: str, write: tuple[int, tuple[int, ...]]) -> tuple[list[str], str]:
    """The loop body's lines and the value written, at the element ``write`` (the result's layout in the nest's
    box): the element before along the axis, combined with the operand's (``a0``), or the operand's first."""
    axis = scan_axis(node)
    offset, strides = write
    before = " + ".join([str(offset - strides[axis])] + [f"i{d} * {st}" for d, st in enumerate(strides) if st])
    line = f"{ctype} t0 = i{axis} == 0 ? a0 : ({ctype})(q0[{before}] {SCAN_OPS[node.op]} a0);"
    return loads + [line], "t0"


ROWS_AT_ONCE = 8
"""Running sums along the last axis are computed for this many rows at once: each is a chain of additions that
waits for the one before (about 4 cycles each), and several chains side by side fill the adder's slots."""


def scan_loops(node, shape: tuple[int, ...], body: list[str], indent: str) -> list[str]:
    """The scan's loop nest, every ``i<d>`` as in a plain nest: along the axis in order, and, for a scan along
    the last axis of two or more, the axis before it in blocks of ``ROWS_AT_ONCE`` inside the scan's loop."""
    axis, nd = scan_axis(node), len(shape)
    if axis != nd - 1 or nd < 2:
        order = [f"for (int64_t i{d} = 0; i{d} < {n}; i{d}++) {{" for d, n in enumerate(shape)]
    else:
        rows, block = nd - 2, ROWS_AT_ONCE
        order = [f"for (int64_t i{d} = 0; i{d} < {n}; i{d}++) {{" for d, n in enumerate(shape[:rows])]
        order += [f"for (int64_t r = 0; r < {shape[rows]}; r += {block}) {{",
                  f"for (int64_t i{axis} = 0; i{axis} < {shape[axis]}; i{axis}++) {{",
                  f"for (int64_t i{rows} = r; i{rows} < (r + {block} < {shape[rows]} ? r + {block} : "
                  f"{shape[rows]}); i{rows}++) {{"]
    lines = [indent + "  " * k + line for k, line in enumerate(order)]
    lines += [indent + "  " * len(order) + line for line in body]
    return lines + [indent + "  " * k + "}" for k in reversed(range(len(order)))]
