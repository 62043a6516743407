"""``window_reads(g)``: an elementwise op that reads a window just written reads the value written instead. Run by
compile() on each captured graph (``capture_loop.finish_segment``).

After ``u = U[1:-1, 1:-1]; u += r``, capture reads ``u`` again as the window of the new ``U``
(``index(index_update(U, w, key), key)``, ``frontends/tensor.py``), as eager code does: the window is strided, and
a sum over it adds in the order of that layout. An elementwise op computes each element from the same elements
whatever their layout, so it may read ``w`` itself, a contiguous array (faster to read than a strided window of
the base, and the layout NumPy gives its result is the same: C order). Exact: every value is the same, bit for
bit. The window stays for the readers whose result depends on the layout (a sum, a matmul, an output).
"""

from __future__ import annotations

from ..ir.graph import Graph
from ..ops import Op, opdef

_ELEMENTWISE = frozenset({"unary", "binary"})


def window_reads(graph: Graph) -> list[str]:
    report: list[str] = []
    numbering = None
    for node in graph.nodes:
        written = _written_value(node)
        if written is None:
            continue
        window = node.output
        for user in list(window.users):
            if user.op != Op.WHERE and opdef(user.op).family not in _ELEMENTWISE:
                continue
            numbering = numbering or graph.numbering()
            report.append(f"{graph.node_text(user, numbering)} reads %{numbering[written]}, the value written "
                          f"into the window %{numbering[window]}")
            user.inputs = [written if v is window else v for v in user.inputs]
    return report


def _written_value(node):
    """For a window of basic slices of an update that wrote that window, the value written; else None."""
    if node.op != Op.INDEX or len(node.inputs) != 1:
        return None
    update = node.inputs[0].node
    if update is None or update.op != Op.INDEX_UPDATE or len(update.inputs) != 2 or update.attrs.get("mode"):
        return None
    written = update.inputs[1]
    if update.attrs["key"] != node.attrs["key"] or written.type != node.output.type:
        return None
    return written
