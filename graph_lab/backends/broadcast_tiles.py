"""An elementwise node reading ``np.tile(x, (n, 1))`` (or its transpose) reads ``x`` broadcast instead.

``dx = np.tile(x, (n, 1)); dx = dx - dx.T`` (the displacement matrix of a Lennard-Jones box) builds an n x m copy
of the vector ``x`` and reads it twice, once transposed: the tile is a full operand of the kernel that computes
``dx``, and its transpose a strided one, copied to C order before each call. But ``tile(x, (n, 1))[i, j]`` is
``x[j]``, ``x`` broadcast along the rows, and its transpose's ``[i, j]`` is ``x[i]``, the column ``x[:, None]``
broadcast: the same numbers, so an elementwise op computes the same bits from ``x`` and from a reshape of it, and a
kernel reads them as a row and a column operand (100 floats instead of two copies of 10,000). An operand is
replaced only when the node's result keeps its shape (``tile - tile.T`` is square); a tile nothing else reads is
then dropped.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ops import Op, opdef
from . import c_kernels


def _broadcast_source(v: Value) -> tuple[Value, bool] | None:
    """``(x, transposed)`` when ``v`` is ``tile(x, (n, 1))`` of a 1-D ``x``, or its transpose; else None."""
    node = v.node
    transposed = node.op == Op.TRANSPOSE and tuple(node.attrs.get("perm", ())) == (1, 0)
    tile = node.inputs[0].node if transposed else node
    if tile.op != Op.TILE or tuple(tile.attrs.get("reps", ())) != (tile.output.type.shape[0], 1):
        return None
    x = tile.inputs[0]
    if x.type.ndim != 1 or x.type.weak is not None or not all(type(d) is int for d in tile.output.type.shape):
        return None
    return x, transposed


def _elementwise(node: Node) -> bool:
    return node.op in c_kernels.C_OPS and opdef(node.op).family in ("unary", "binary")


def broadcast_tiles(graph: Graph) -> int:
    """Make the elementwise readers of tiles read the tiled vector (see the module's docstring); returns how many
    operands changed."""
    columns: dict[Value, Value] = {}  # x -> x reshaped to a column, made once
    changed = 0
    for node in list(graph.nodes):
        if not _elementwise(node):
            continue
        for k, v in enumerate(node.inputs):
            source = _broadcast_source(v)
            if source is None:
                continue
            x, transposed = source
            operand = x
            if transposed:
                if x not in columns:
                    columns[x] = graph.insert_after(x.node, Op.RESHAPE, [x], {"shape": (x.type.shape[0], 1)}).output
                operand = columns[x]
            inputs = list(node.inputs)
            inputs[k] = operand
            shapes = [u.type.shape for u in inputs]
            if np.broadcast_shapes(*shapes) != tuple(node.output.type.shape):
                continue
            node.inputs = inputs
            changed += 1
    if changed:
        graph.remove_dead_code()
    return changed
