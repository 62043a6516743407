"""The recorder of ``compile()``: stand-ins record into the segment's graph, and what they cannot do is a break.

A value Python needs now (``if t.sum() > 0:``) ends the graph where it is needed, it is never guessed; a write
into an array the function did not create is recorded and written back when the graph ends (``mutation.py``).
"""

from __future__ import annotations

from ...ir.graph import Graph, Node
from ..recorder import Recorder
from ..tensor import Tensor
from .frame import BreakGraph


class DynamoRecorder(Recorder):
    """Records into one graph; a value Python needs now ends the graph (a break), it is never guessed."""

    kind = "compile"

    def __init__(self, graph: Graph, location):
        self.graph = graph
        self.location = location  # the line of the bytecode being interpreted (not Python's own stack)

    def add_node(self, node: Node) -> None:
        self.graph.nodes.append(node)

    def concretize(self, t: Tensor, kind: str):
        node = t._value.node
        raise BreakGraph(f"data-dependent value: the {kind} of a tensor computed by {node.op} is needed by Python",
                         "select with F.where or np.where instead of branching, or accept the break: "
                         "both sides of it are still compiled")

    def check_writable(self, root: Tensor) -> None:
        if root._storage.is_input:  # recorded, and written back when the graph ends (see mutation.py)
            self.writes.allow(root)
