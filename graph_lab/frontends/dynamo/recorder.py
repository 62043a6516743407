"""The recorder of ``compile()``: stand-ins record into the segment's graph, and what they cannot do is a break.

A value Python needs now (``if t.sum() > 0:``) ends the graph where it is needed, it is never guessed; a write
into an array the function did not create is recorded and written back when the graph ends (``mutation.py``).
"""

from __future__ import annotations

from ...ir.graph import Graph, Node
from ..recorder import Recorder
from ..tensor import Tensor
from .frame import BreakGraph


MAX_GRAPH_NODES = 10_000
"""compile()'s default ``max_graph_nodes``: the largest kernel of the benchmark corpus (an unrolled Cholesky
factorization, ~8,000 nodes) stays one graph; a graph of this size takes seconds to compile."""


class DynamoRecorder(Recorder):
    """Records into one graph; a value Python needs now ends the graph (a break), it is never guessed."""

    kind = "compile"
    max_nodes = MAX_GRAPH_NODES

    def __init__(self, graph: Graph, location):
        self.graph = graph
        self.location = location  # the line of the bytecode being interpreted (not Python's own stack)

    def add_node(self, node: Node) -> None:
        if len(self.graph.nodes) >= self.max_nodes:
            raise BreakGraph(f"graph size limit: the graph has {self.max_nodes} nodes (compile's max_graph_nodes), "
                             f"a loop unrolled this far would take longer to compile than to run",
                             "the next graph starts here; raise max_graph_nodes for one longer graph")
        self.graph.nodes.append(node)

    def concretize(self, t: Tensor, kind: str):
        node = t._value.node
        raise BreakGraph(f"data-dependent value: the {kind} of a tensor computed by {node.op} is needed by Python",
                         "select with F.where or np.where instead of branching, or accept the break: "
                         "both sides of it are still compiled")

    def check_writable(self, root: Tensor) -> None:
        if root._storage.is_input:  # recorded, and written back when the graph ends (see mutation.py)
            self.writes.allow(root)
