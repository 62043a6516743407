"""``nothing_dead(graph)``: whether ``remove_dead_code`` would change a recorded graph, told in one pass.

Kept for compile()'s capture (``frontends/dynamo/runtime.py``), which asks it before removing dead code; whether it
pays there is for the dynamo layer to measure. trace() and script() no longer ask it: it saved 1% of a trace()
capture of the W2 chain at 8 layers and 7% at 64 (``remove_dead_code`` against ``nothing_dead`` on the captured
graph, each timed alone, best of 30, on a shared machine), below the tenth a speed-up must save to stay.
"""

from __future__ import annotations

from ..ir.graph import Graph
from ..ops import Op


def nothing_dead(graph: Graph) -> bool:
    """Whether ``graph.remove_dead_code()`` would change nothing, told in one pass without its walks: every node
    but the inputs has an output that some node reads or that the graph returns. Then every node is needed:
    follow readers forward from it, and (the nodes being in order) the chain ends at a node whose outputs nobody
    reads, which therefore makes a graph output. (And every parameter stored has its node, which stays.)

    Valid only when every reader of the graph's values is a node of the graph, as in a graph a ``Recorder`` made
    (``trace``'s and ``script``'s without control-flow regions):
    a value's ``users`` lists each node made with it, each node is appended to the graph and none is dropped,
    and nodes of other graphs never read its values (a stand-in of another capture is refused as an operand, a
    control-flow region reads copies of them as its own inputs, a guard's graph is made of copies)."""
    returned = set(graph.outputs)
    for node in graph.nodes:
        for v in node.outputs:
            if v.users or v in returned:
                break
        else:
            if node.op != Op.INPUT:
                return False
    return True
