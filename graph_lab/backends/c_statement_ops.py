"""Which nodes a C program's statement computes (``c_programs``), beyond the float arithmetic of a stencil.

A stencil statement began as ``+ - * /`` on arrays of the written buffer's float dtype. Real stencil codes also
select with a mask and count on integer grids::

    phi[1:-1, 1:-1] = np.where(fixed[1:-1, 1:-1], phi[1:-1, 1:-1], new)        # a bool mask, read in place
    grid[1:-1, 1:-1] = ((n == 3) | (alive & (n == 2))).astype(np.int8)         # int8 sums, compares, a cast

Any node a fused kernel computes element by element (``partition.why_not``: comparisons, ``where``, the logical
ops, casts, the integer ops of ``c_integers``) is computed by a statement too, with the C expression a kernel
writes for it (``c_kernels.node_line``), on leaves of any dtype a kernel reads. Only the float arithmetic keeps
its 0-d and Python-number operands (converted to the statement's dtype once per call, as NumPy converts them):
a Python number read by any other node is converted to the dtype that node computes in, which only a literal
written into the source does (``c_kernels.c_number``).
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Node, Value
from ..ops import Op
from .c_kernels import C_TYPES
from .partition import why_not
from .stencil import FLOATS, STENCIL_OPS


def statement_dtype_ok(dtype: np.dtype) -> bool:
    """A written buffer's dtype a statement can compute and store."""
    return dtype in C_TYPES


def float_arithmetic(node: Node, dtype: np.dtype) -> bool:
    """``+ - * /`` in the statement's float dtype: what a stencil statement always computed."""
    return node.op in STENCIL_OPS and dtype in FLOATS and node.output.type.dtype == dtype


def computes(v: Value, shape: tuple[int, ...], dtype: np.dtype) -> bool:
    """A statement of ``shape`` writing ``dtype`` may compute the node making ``v`` (element by element)."""
    if v.type.weak is not None or v.node.op == Op.INPUT or len(v.node.outputs) != 1:
        return False
    if float_arithmetic(v.node, dtype):
        return v.type.shape in (shape, ())
    return v.type.shape == shape and v.type.dtype in C_TYPES and why_not(v.node) is None and \
        all(u.type.weak is not None or u.type.dtype in C_TYPES for u in v.node.inputs)


def leaf_dtype(leaf: Value, dtype: np.dtype) -> np.dtype:
    """The dtype a leaf is read in: its own, or the statement's for a Python number."""
    return dtype if leaf.type.weak is not None else leaf.type.dtype


def leaves_ok(nodes: list[Node], leaves, dtype: np.dtype) -> bool:
    """Every array read is of a dtype C reads; every Python number read from memory is read by float arithmetic
    in the statement's dtype only."""
    weak = {leaf for leaf in leaves if leaf.type.weak is not None}
    return all(leaf in weak or leaf.type.dtype in C_TYPES for leaf in leaves) and \
        all(float_arithmetic(n, dtype) for n in nodes if any(v in weak for v in n.inputs))
