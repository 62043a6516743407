"""The IR's invariants, checked with messages that name the node and the rule it breaks."""

from __future__ import annotations

from ..errors import OpError, VerifyError
from ..ops import Op, opdef


def verify(graph) -> None:
    defined: set = set()
    numbering = graph.numbering()
    names: dict[str, str] = {}
    for position, node in enumerate(graph.nodes):
        where = f"node {position} ({graph.node_text(node, numbering)})"
        for i, v in enumerate(node.inputs):
            if v not in defined:
                seen_later = v in numbering
                rule = ("was used before it has been defined; nodes must be in topological order"
                        if seen_later else "is not defined by any node of this graph")
                raise VerifyError(f"{where}: operand {i} {rule}")
            if node not in v.users:
                raise VerifyError(f"{where}: operand {i} does not list this node among its users "
                                  f"(use-def bookkeeping is out of date; set node.inputs instead of editing it)")
        for v in node.outputs:
            if v in defined:
                raise VerifyError(f"{where}: redefines a value; every value is defined exactly once (SSA)")
            if v.node is not node:
                raise VerifyError(f"{where}: an output's producer is another node")
            defined.add(v)
        if node.op in (Op.INPUT, Op.PARAM):
            name = node.attrs["name"]
            if name in names:
                raise VerifyError(f"{where}: the name {name!r} is already used by an {names[name]}")
            names[name] = str(node.op)
            if node.op == Op.PARAM and name not in graph.param_values:
                raise VerifyError(f"{where}: parameter {name!r} has no stored value")
        try:
            expected = opdef(node.op).infer(tuple(v.type for v in node.inputs), node.attrs)
        except OpError as e:
            raise VerifyError(f"{where}: its op's rule rejects the operands: {e}") from None
        actual = tuple(v.type for v in node.outputs)
        if expected != actual:
            raise VerifyError(f"{where}: output types {', '.join(map(str, actual))} differ from what {node.op}'s "
                              f"rule gives: {', '.join(map(str, expected))}")
    for i, v in enumerate(graph.outputs):
        if v not in defined:
            made_by = v.node.op if v.node is not None else "no node"
            raise VerifyError(f"graph output {i} ({v.type} from {made_by}) is not defined by any node of the "
                              f"graph; every output must be a value defined in graph.nodes")
