"""The IR's invariants, checked with messages that name the node and the rule it breaks.

The rules, in the order they are checked:

1. a node appears once in ``graph.nodes``, and its op is in the op table;
2. sources (``input``, ``param``, ``const``) read no operands;
3. every operand is defined by an earlier node of this graph (topological order, no dangling values);
4. use-def bookkeeping: a value lists a node among its ``users`` exactly as many times as the node reads it,
   and every user of a value is a node of this graph (not a node of another graph, not an erased node);
5. every value is defined once (SSA), by the node that holds it, at its own output position;
6. input and parameter names are unique, and each parameter has a stored value;
7. output types are what the op's rule gives for the operand types and attributes (with symbolic sizes, the
   facts the rule needs must follow from the graph's shape guards; for a control-flow op, the rule compares its
   regions' signatures: both branches return the same types, a loop body returns the carry's);
8. the graph's outputs are values defined by its nodes;
9. every size symbol in a type or an attribute is exactly one dimension of some input, which binds it at run time;
10. a control-flow node holds each of its regions as a ``Graph``, used by no other node of the text, with no
    parameters and no guards; each region follows these rules itself, and reads only its own inputs (a region is
    isolated: values from outside come in through the node's operands).
"""

from __future__ import annotations

from collections import Counter

from ..errors import VerifyError
from ..ops import REGISTRY, SOURCE_OPS, Op, opdef
from ..ops.type_rule_memo import infer_static
from .graph import Graph
from .shape_env import in_use as shape_env_in_use
from .shape_env import graph_facts
from .sizes import has_symbols, symbol_sources
from .symbolic import free_symbols


def verify(graph) -> None:
    with graph_facts(graph):
        _verify(graph, _Numbering(graph), "", {id(graph)}, set())


class _Numbering:
    """``graph.numbering()`` (``%0, %1, ...``), worked out the first time a message asks for a number: a graph that
    passes every check prints none, and numbering every value would cost as much as some of the checks."""

    __slots__ = ("graph", "_numbers")

    def __init__(self, graph):
        self.graph, self._numbers = graph, None

    def numbers(self) -> dict:
        if self._numbers is None:
            self._numbers = self.graph.numbering()
        return self._numbers

    def __getitem__(self, value) -> int:
        return self.numbers()[value]

    def __contains__(self, value) -> bool:
        return value in self.numbers()


def _verify(graph, numbering, context: str, path: set[int], regions_seen: set[int]) -> None:
    """Check one graph; ``context`` names the region being checked (empty at the top level)."""
    own = {v for node in graph.nodes for v in node.outputs}
    in_graph = {id(n) for n in graph.nodes}
    defined: set = set()
    seen: set[int] = set()
    names: dict[str, str] = {}
    rules_are_pure = shape_env_in_use() is None  # no symbolic facts in play: a rule's answer can be remembered
    for position, node in enumerate(graph.nodes):
        where = _Where(context, position, graph, node, numbering)
        if id(node) in seen:
            raise VerifyError(f"{where}: appears twice in graph.nodes; a node is placed once (copy it with "
                              f"Graph.extract to compute a value twice)")
        seen.add(id(node))
        definition = REGISTRY.get(node.op)
        if definition is None:
            raise VerifyError(f"{where}: op {node.op!r} is not in the op table")
        if node.op in SOURCE_OPS and node.inputs:
            raise VerifyError(f"{where}: a {node.op} node is a source and reads no operands")
        _check_operands(node, where, defined, own, numbering)
        for i, v in enumerate(node.outputs):
            if v in defined:
                raise VerifyError(f"{where}: redefines a value; every value is defined exactly once (SSA)")
            if v.node is not node or v.index != i:
                raise VerifyError(f"{where}: output {i} records another producer or position "
                                  f"(Value.node and Value.index must point back at this node)")
            defined.add(v)
        # (rules 10 and 6 concern few nodes, control-flow ops and named sources: checked only for those)
        if definition.regions:
            _check_regions(node, where, numbering, path, regions_seen)
        _check_types(node, definition, where, rules_are_pure)
        if node.op in _NAMED_OPS:
            _check_name(graph, node, where, names)
    for v in (v for node in graph.nodes for v in node.outputs):
        for user in v.users:
            if id(user) not in in_graph:
                raise VerifyError(f"{context}value %{numbering[v]} is read by {user!r}, which is not a node of this "
                                  f"graph: a node belongs to one graph only (copy with Graph.extract), and a removed "
                                  f"node must drop its inputs (use Graph.erase_node)")
    _check_symbols_bound(graph, numbering)
    for i, v in enumerate(graph.outputs):
        if v not in defined:
            made_by = v.node.op if v.node is not None else "no node"
            raise VerifyError(f"{context}graph output {i} ({v.type} from {made_by}) is not defined by any node of "
                              f"the graph; was its node erased or taken from another graph?")


def _check_symbols_bound(graph, numbering) -> None:
    bound = None
    for node in graph.nodes:
        shapes = [v.type.shape for v in node.outputs]
        symbolic = bool(node.attrs) and has_symbols(node.attrs)
        if not symbolic and not all(type(d) is int for s in shapes for d in s):
            symbolic = any(has_symbols(s) for s in shapes)
        if not symbolic:
            continue
        bound = set(symbol_sources(graph)) if bound is None else bound
        unbound = free_symbols((tuple(node.attrs.values()), tuple(shapes))) - bound
        if unbound:
            raise VerifyError(f"{_describe(graph, node, numbering)}: the size {', '.join(sorted(unbound))} is no "
                              f"input's dimension, so no run can bind it (declare it in an input's type)")


class _Where:
    """``node 3 (%3: f64[4,8] = add %1, %2)``, for a message: printed only when a check fails (printing every node
    of a graph that passes would cost more than checking it)."""

    __slots__ = ("context", "position", "graph", "node", "numbering")

    def __init__(self, context: str, position: int, graph, node, numbering):
        self.context, self.position, self.graph, self.node, self.numbering = context, position, graph, node, numbering

    def __str__(self) -> str:
        return f"{self.context}node {self.position} ({_describe(self.graph, self.node, self.numbering)})"


def _describe(graph, node, numbering) -> str:
    try:
        return graph.node_text(node, numbering.numbers())
    except Exception:  # a node too broken to print (missing attributes): still say which one
        return f"a node of op {node.op}"


def _check_operands(node, where: str, defined: set, own: set, numbering) -> None:
    inputs = node.inputs
    # how many times the node reads each value (a Counter only when some value is read twice: rare, and slower)
    uses = Counter(map(id, inputs)) if len(set(map(id, inputs))) != len(inputs) else None
    for i, v in enumerate(inputs):
        if v not in defined:
            if v in own:
                rule = "was used before it has been defined; nodes must be in topological order"
            elif v in numbering:
                rule = (f"(%{numbering[v]}) is defined outside this region; a region is isolated and reads only its "
                        f"own inputs: pass the value in as an operand of the control-flow node")
            else:
                rule = "is not defined by any node of this graph"
            raise VerifyError(f"{where}: operand {i} {rule}")
        listed = sum(1 for u in v.users if u is node)
        reads = uses[id(v)] if uses is not None else 1
        if listed != reads:
            raise VerifyError(f"{where}: operand {i} lists this node {listed} times among its users but the node "
                              f"reads it {reads} times (use-def bookkeeping is out of date; set node.inputs "
                              f"instead of editing it)")


_NAMED_OPS = (Op.INPUT, Op.PARAM)


def _check_name(graph, node, where: str, names: dict[str, str]) -> None:
    name = node.attrs.get("name")
    if not isinstance(name, str):
        raise VerifyError(f"{where}: an {node.op} node needs a string attribute 'name', got {name!r}")
    if name in names:
        raise VerifyError(f"{where}: the name {name!r} is already used by an {names[name]}")
    names[name] = str(node.op)
    if node.op == Op.PARAM and name not in graph.param_values:
        raise VerifyError(f"{where}: parameter {name!r} has no stored value")


def _check_regions(node, where: str, numbering, path: set[int], regions_seen: set[int]) -> None:
    for key in opdef(node.op).regions:
        region = node.attrs.get(key)
        if not isinstance(region, Graph):
            raise VerifyError(f"{where}: a {node.op} node holds its region {key} as a Graph in attrs[{key!r}], "
                              f"found {type(region).__name__}")
        if id(region) in path:
            raise VerifyError(f"{where}: region {key} contains the node that holds it (a region cannot be nested "
                              f"in itself)")
        if id(region) in regions_seen:
            raise VerifyError(f"{where}: region {key} is also a region of another node; each node owns its "
                              f"regions (copy the graph to use it twice)")
        regions_seen.add(id(region))
        if region.param_nodes:
            raise VerifyError(f"{where}: region {key} has a param node; a region reads only its inputs, so pass "
                              f"parameters in as operands of the {node.op} node")
        if region.guards:
            raise VerifyError(f"{where}: region {key} has guards; guards belong to the top-level graph")
        _verify(region, numbering, f"{where}, region {key}: ", path | {id(region)}, regions_seen)


def _check_types(node, definition, where: str, rules_are_pure: bool) -> None:
    """Rule 7. ``rules_are_pure``: no ShapeEnv is active, so the rule's answer depends on its arguments only and
    may come from the memo the captures fill (``infer_static``)."""
    try:
        types = tuple([v.type for v in node.inputs])
        if rules_are_pure:
            expected = infer_static(definition, types, node.attrs)
        else:
            expected = definition.infer(types, node.attrs)
    except Exception as e:  # OpError, or a KeyError for a missing attribute: either way the rule rejects it
        raise VerifyError(f"{where}: its op's rule rejects the operands or attributes: {type(e).__name__}: {e}") \
            from None
    actual = tuple(v.type for v in node.outputs)
    if expected != actual:
        raise VerifyError(f"{where}: output types {', '.join(map(str, actual))} differ from what {node.op}'s "
                          f"rule gives: {', '.join(map(str, expected))}")
