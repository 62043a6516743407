"""Writes through a view: ``u = U[1:-1, 1:-1]; u += r`` computed in ``U``'s memory, as eager code computes it.

Functionalization records the write through the view as a new value and an update of the base::

    %1 = index %0 key=[1:-1, 1:-1]          u, a view of U
    %5 = add %1, %4                          u + r, a new array
    %6 = index_update %0, %5 key=[1:-1, 1:-1]

``inplace.py`` writes ``%6`` into ``U``'s memory, but ``%5`` is still a new array that is then copied into the
window; eager code's ``u += r`` adds into the window directly. The new value (a ufunc result, or a ``where`` of
the view: ``u[u > 1] = 0``) is written into the view itself (``np.add(v1, v4, out=v1)``, ``np.copyto(v1, v4,
where=v3)``) and the update then has nothing left to copy, when

- the view is a window of basic slices and integers of a value ``B``, and the update writes the same window of
  the same ``B`` with the new value, the new value's only reader;
- ``B`` holds its buffer and may be written (the rules of ``inplace.py``: fresh, or donated with this update on
  the chain to its final value);
- nothing reads that buffer between the new value and the update (the write happens at the new value now);
- for a ``where``, neither the mask nor the value shares the buffer (a ufunc reads an operand that overlaps its
  ``out`` as if it had been copied first).

The values are those of the same NumPy call, so bit for bit the same; later readers read the window again
(``tensor._view_again``), so the layout they see is eager's too.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ops import SOURCE_OPS, Op
from .python_source import numpy_ufunc


def find_view_writes(graph: Graph) -> dict[int, tuple[Value, Node]]:
    """``id(new value's node) -> (view, update)`` for each update of a window with a value computed from that
    window by a ufunc or a ``where`` (the form alone; ``writes_through`` decides)."""
    found: dict[int, tuple[Value, Node]] = {}
    returned = {id(v) for v in graph.outputs}
    for update in graph.nodes:
        if update.op != Op.INDEX_UPDATE or len(update.inputs) != 2 or update.attrs.get("mode") is not None:
            continue
        base, new = update.inputs
        node = new.node
        if node.op in SOURCE_OPS or len(new.users) != 1 or id(new) in returned or len(node.outputs) != 1:
            continue
        for view in _window_operands(node):
            v = view.node
            if v.op == Op.INDEX and len(v.inputs) == 1 and v.inputs[0] is base and \
                    v.attrs["key"] == update.attrs["key"] and view.type == new.type and view.type.ndim > 0:
                found[id(node)] = (view, update)
                break
    return found


def _window_operands(node: Node) -> list[Value]:
    """The operands ``node`` could compute its result into: the base of a ``where`` of a bool mask, any operand
    of a ufunc line."""
    if node.op == Op.WHERE:
        mask, _, base = node.inputs
        ok = mask.type.weak is None and mask.type.dtype.kind == "b" and casts_alike(node.inputs[1], base.type.dtype)
        return [base] if ok else []
    ufunc = numpy_ufunc(node)
    if ufunc is None or ufunc.nout != 1 or len(node.inputs) != ufunc.nin:
        return []
    return [v for v in node.inputs if v.type.weak is None]


def writes_through(node: Node, view: Value, update: Node, i: int, position, roots, holder, members, last_use,
                   writers) -> Value | None:
    """The buffer ``node`` (at position ``i``) may compute its result in through ``view``, or None (see the
    module doc; ``position``: id(node) -> where it reads its operands)."""
    base = update.inputs[0]
    rs = roots[base]
    if len(rs) != 1:
        return None
    (root,) = rs
    if holder.get(root) is not base:
        return None
    if root.node.op in SOURCE_OPS and writers.get(id(update)) is not root:
        return None
    for v in members[root]:
        if v is base:
            if any(position.get(id(n), i + 1) > i for n in base.users if n is not update):
                return None
        elif last_use.get(v, -1) > i:
            return None
    if node.op == Op.WHERE and any(root in roots[v] for v in node.inputs[:2]):
        return None
    return root


def casts_alike(value: Value, dtype: np.dtype) -> bool:
    """``np.copyto`` converts ``value`` to ``dtype`` as ``np.where`` does: an array (cast to the result's dtype by
    both), a Python number a float dtype holds whatever its value, or a constant int the int dtype holds
    (``np.where`` wraps an int out of range, where ``copyto`` raises)."""
    weak = value.type.weak
    if weak is None or (weak in (int, float) and dtype.kind in "fc") or (weak is bool and dtype.kind == "b"):
        return True
    if weak is int and dtype.kind in "iu" and value.node.op == Op.CONST:
        info = np.iinfo(dtype)
        return int(info.min) <= value.node.attrs["value"] <= int(info.max)
    return False
