"""The IR records: ``Value``, ``Node`` and ``Graph``.

A graph is a list of nodes in execution order (typed SSA): each node reads values made by earlier nodes and
defines new ones. Inputs, parameters and constants are nodes too (ops ``input``, ``param``, ``const``), so
every value has exactly one producer. Values have no names in the data: the printer numbers them ``%0, %1, ...``
at print time.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from ..ops import REGISTRY, SOURCE_OPS, Op, opdef
from .shape_env import graph_facts
from .source import SourceLoc
from .types import TensorType


REGION_OPS = frozenset(op for op, definition in REGISTRY.items() if definition.regions)
"""The ops whose definition names regions (``cond``, ``while_loop``, ...): only their nodes can have any. The op
table is complete once ``ops`` is imported (``Op`` is a closed set, and an op is registered once)."""


class Value:
    """One SSA value: the ``index``-th output of its producer node."""

    __slots__ = ("type", "node", "index", "users", "__weakref__")

    def __init__(self, type: TensorType, node: "Node | None" = None, index: int = 0):
        self.type = type
        """Static type (dtype, shape, weak)."""
        self.node = node
        """The node that defines this value."""
        self.index = index
        """Position among the producer's outputs."""
        self.users: list[Node] = []
        """Nodes that read this value, once per use, kept up to date as inputs change."""

    def __repr__(self) -> str:
        op = self.node.op if self.node is not None else "?"
        return f"<Value {self.type} from {op}>"


class Node:
    """One operation: ``outputs = op(inputs, **attrs)``."""

    __slots__ = ("op", "_inputs", "attrs", "outputs", "loc")

    def __init__(self, op: Op, inputs: Iterable[Value], attrs: dict[str, Any], out_types: Iterable[TensorType],
                 loc: SourceLoc | None = None):
        self.op = op
        """Name of the op (an ``Op``, which compares equal to its string: ``node.op == "matmul"``)."""
        self.attrs = attrs
        """Static attributes (axis, shape, constant value, ...), normalized by the op's bind rule."""
        self.loc = loc
        """The user's source line that made this node, if known."""
        if type(out_types) is not tuple:
            out_types = tuple(out_types)
        # (one output is by far the most common case: made without the comprehension, as captures make many)
        self.outputs = ((Value(out_types[0], self, 0),) if len(out_types) == 1 else
                        tuple([Value(t, self, i) for i, t in enumerate(out_types)]))
        """The values this node defines."""
        if type(inputs) is not tuple:
            inputs = tuple(inputs)
        self._inputs: tuple[Value, ...] = inputs
        for v in inputs:  # (what the ``inputs`` setter does, for a node that had none)
            v.users.append(self)

    @property
    def inputs(self) -> tuple[Value, ...]:
        """The values read, in operand order. Setting it updates each value's ``users``."""
        return self._inputs

    @inputs.setter
    def inputs(self, new: tuple[Value, ...]) -> None:
        for v in self._inputs:
            v.users.remove(self)
        self._inputs = tuple(new)
        for v in self._inputs:
            v.users.append(self)

    @property
    def output(self) -> Value:
        """The single output (most ops have one)."""
        (out,) = self.outputs
        return out

    @property
    def regions(self) -> tuple["Graph", ...]:
        """The nested graphs of a control-flow node (``cond``: then, else), kept in its attributes under the
        names ``opdef(op).regions`` lists; ``()`` for every other op."""
        definition = REGISTRY.get(self.op)  # (an op missing from the table is for verify() to report)
        if definition is None or not definition.regions:  # most ops (asked for every node by every walk)
            return ()
        return tuple(self.attrs[k] for k in definition.regions if isinstance(self.attrs.get(k), Graph))

    def __repr__(self) -> str:
        return f"<Node {self.op} at {self.loc}>"


class Graph:
    """A captured computation: nodes in execution order, outputs, and the guards under which it is valid."""

    def __init__(self, name: str = "graph"):
        self.name = name
        """Name shown when printed (the captured function's name)."""
        self.nodes: list[Node] = []
        """All nodes in execution order, inputs, parameters and constants included."""
        self.outputs: list[Value] = []
        """The values the graph returns, flattened."""
        self.out_tree: Any = None
        """How to rebuild the function's return structure from ``outputs`` (see ``frontends.pytree``)."""
        self.param_values: dict[str, np.ndarray] = {}
        """Stored values of the ``param`` nodes, by name."""
        self.guards: list = []
        """Value guards recorded while tracing (``guards.ValueGuard``), checked by ``check_guards``."""

    # --- building

    def add_node(self, op: Op, inputs: Iterable[Value], attrs: dict[str, Any] | None = None,
                 loc: SourceLoc | None = None) -> Node:
        """Append a node; its output types come from the op's rule (which raises ``OpError`` on bad input)."""
        inputs = tuple(inputs)
        attrs = {} if attrs is None else attrs
        if self.guards:  # shape rules may need the facts the graph's shape guards state
            with graph_facts(self):
                out_types = opdef(op).infer(tuple([v.type for v in inputs]), attrs)
        else:
            out_types = opdef(op).infer(tuple([v.type for v in inputs]), attrs)
        node = Node(op, inputs, attrs, out_types, loc)
        self.nodes.append(node)
        return node

    def add_input(self, name: str, type: TensorType, loc: SourceLoc | None = None) -> Value:
        # (made directly: the type rule of input and param nodes returns the declared type, and captures make
        # many of them)
        node = Node(Op.INPUT, (), {"name": name, "type": type}, (type,), loc)
        self.nodes.append(node)
        return node.outputs[0]

    def add_param(self, name: str, value: np.ndarray, loc: SourceLoc | None = None) -> Value:
        self.param_values[name] = value
        type = TensorType.of(value)
        node = Node(Op.PARAM, (), {"name": name, "type": type}, (type,), loc)
        self.nodes.append(node)
        return node.outputs[0]

    def add_const(self, value, loc: SourceLoc | None = None) -> Value:
        return self.add_node(Op.CONST, (), {"value": value}, loc).output

    # --- queries

    @property
    def input_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.op == Op.INPUT]

    @property
    def param_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.op == Op.PARAM]

    @property
    def input_names(self) -> list[str]:
        return [n.attrs["name"] for n in self.input_nodes]

    def input_types(self) -> dict[str, TensorType]:
        return {n.attrs["name"]: n.attrs["type"] for n in self.input_nodes}

    def count(self) -> int:
        """Number of operation nodes: inputs, parameters and constants are not counted."""
        return sum(1 for n in self.nodes if n.op not in SOURCE_OPS)

    def has_regions(self) -> bool:
        """Whether any node has regions: ``any(node.regions for node in self.nodes)``, asked of the nodes of the
        ops in ``REGION_OPS`` only (an op compares and hashes as its name, so a node whose op is a plain string is
        found as well)."""
        for node in self.nodes:
            if node.op in REGION_OPS and node.regions:
                return True
        return False

    def producer(self, value: Value) -> Node:
        """The node that defines ``value``."""
        return value.node

    def users(self, value: Value) -> list[Node]:
        """The nodes that read ``value`` (each once, in graph order)."""
        seen = set(map(id, value.users))
        return [n for n in self.nodes if id(n) in seen]

    def numbering(self) -> dict[Value, int]:
        """The printed number of each value: ``%0, %1, ...`` in definition order. A control-flow node's outputs
        come first, then the values of its regions, so every number of the printed text is defined once."""
        out: dict[Value, int] = {}
        self._number(out, {id(self)})
        return out

    def _number(self, out: dict[Value, int], path: set[int]) -> None:
        for node in self.nodes:
            for v in node.outputs:
                out[v] = len(out)
            for region in node.regions:
                if id(region) not in path:  # a region holding itself is for verify() to report
                    region._number(out, path | {id(region)})

    def node_text(self, node: Node, numbering: dict[Value, int] | None = None) -> str:
        """One node as in error messages: ``%5 = reshape(%4) shape=(4, 2, 4) [model.py:23]``."""
        from .printer import format_attrs, value_name
        numbering = numbering if numbering is not None else self.numbering()
        outs = ", ".join(value_name(v, numbering) for v in node.outputs)
        ins = ", ".join(value_name(v, numbering) for v in node.inputs)
        attrs = format_attrs(node)
        where = f" [{node.loc}]" if node.loc else ""
        return f"{outs} = {node.op}({ins}){' ' + attrs if attrs else ''}{where}"

    # --- editing (ir/editing.py): each keeps the use-def bookkeeping (``Value.users``) up to date

    def insert_before(self, anchor: Node, op: Op | str, inputs: Iterable[Value], attrs: dict[str, Any] | None = None,
                      loc: SourceLoc | None = None) -> Node:
        """A new node ``op(inputs, **attrs)`` placed just before ``anchor``; its types come from the op's rule."""
        from .editing import insert_node, position_of
        return insert_node(self, position_of(self, anchor), op, inputs, attrs, loc)

    def insert_after(self, anchor: Node, op: Op | str, inputs: Iterable[Value], attrs: dict[str, Any] | None = None,
                     loc: SourceLoc | None = None) -> Node:
        """A new node ``op(inputs, **attrs)`` placed just after ``anchor``; its types come from the op's rule."""
        from .editing import insert_node, position_of
        return insert_node(self, position_of(self, anchor) + 1, op, inputs, attrs, loc)

    def replace_all_uses_with(self, old: Value, new: Value) -> int:
        """Make every node (and graph output) that reads ``old`` read ``new`` instead; returns how many uses moved.

        ``new`` must have ``old``'s type (else every user's type would be wrong) and be defined before the first
        user (else the graph would read a value before it exists). The node defining ``new`` keeps reading ``old``,
        so ``new = f(old)`` inserted after ``old`` can take its place."""
        from .editing import replace_all_uses_with
        return replace_all_uses_with(self, old, new)

    def erase_node(self, node: Node) -> None:
        """Remove a node whose outputs nothing reads any more, and drop its own uses of its inputs."""
        from .editing import erase_node
        erase_node(self, node)

    # --- views

    def print_tabular(self) -> None:
        """Print one row per node: name, op, inputs, attributes, type and source line (as torch.fx does)."""
        from .tabular import print_tabular
        print_tabular(self)

    @property
    def code(self) -> str:
        """The graph as readable Python/NumPy source, one line per node, each value's type in a comment (written
        by ``backends.python_source``)."""
        return _view("code")(self)

    def to_python(self):
        """A Python function compiled from ``self.code``: ``f(x=...)`` returns what ``run`` returns, bit for bit."""
        return _view("to_python")(self)

    def verify(self) -> None:
        """Check the IR's invariants; raise ``VerifyError`` naming the node and the rule."""
        from .verify import verify
        verify(self)

    def __str__(self) -> str:
        from .printer import print_graph
        return print_graph(self)

    def to_dot(self) -> str:
        """The graph as Graphviz DOT text (``dot -Tsvg``); ``graph_lab.view`` draws it with no Graphviz."""
        return _view("to_dot")(self)

    def __repr__(self) -> str:
        return f"<Graph {self.name}: {self.count()} ops, {len(self.input_nodes)} inputs>"

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """IPython's pretty printer (a notebook's text output) shows the IR text, as ``print(g)`` does."""
        printer.text(str(self))

    def _repr_html_(self) -> str:
        """A notebook shows the viewer's drawing inline (loading nothing), then the IR text and guards, folded."""
        return _view("html")(self)

    # --- derived graphs

    def extract(self, outputs: list[Value], name: str | None = None, cut: dict[Value, str] | None = None) -> "Graph":
        """A new graph computing ``outputs`` with only the nodes they need, in the same order.

        A control-flow node is copied whole: its regions are isolated graphs, shared with the copy, not copied
        (no pass edits a region in place; one that changes a region builds a new one).

        Values in ``cut`` become inputs of the new graph with the given names (used to run part of a graph whose
        earlier values are already known). Parameters keep their names and stored values.
        """
        from .subgraphs import extract
        return extract(self, outputs, name, cut)

    def copy_nodes(self, nodes: list[Node], outputs: list[Value], name: str | None = None,
                   cut: dict[Value, str] | None = None) -> "Graph":
        """What ``extract`` makes, for a caller that already knows the nodes ``outputs`` need, in order (the lazy
        runner's slice): each copied into a new graph, ``cut`` values as its named inputs, parameters with their
        stored values."""
        from .subgraphs import copy_nodes
        return copy_nodes(self, nodes, outputs, name, cut)

    def needed_by(self, roots) -> set[int]:
        """``id()`` of every node that computing the values ``roots`` needs (following operands back)."""
        live: set[int] = set()
        stack = list(roots)
        while stack:
            node = stack.pop().node
            if id(node) in live:
                continue
            live.add(id(node))
            stack.extend(node._inputs)
        return live

    def remove_dead_code(self) -> int:
        """Drop nodes whose outputs nothing needs (inputs stay: they are the signature). Returns how many.

        A control-flow node is one node here: kept whole while any of its outputs is needed, dropped when none
        is (its regions compute nothing else). Dead code inside a region is removed when the region is built.
        An op that is not pure (``OpDef.pure``: a random draw, an effect) stays, with what it reads, as ``dce``
        keeps it: eager code runs it whether or not its result is read."""
        live = self.needed_by(self.outputs)
        impure = [v for node in self.nodes if id(node) not in live and not opdef(node.op).pure
                  for v in node.outputs]  # (asked of the dead only: usually none)
        if impure:
            live = self.needed_by(list(self.outputs) + impure)
        keep, dropped = [], 0
        for node in reversed(self.nodes):
            if id(node) in live or node.op == Op.INPUT:
                keep.append(node)
            else:
                node.inputs = ()
                dropped += 1
        self.nodes = keep[::-1]
        param = Op.PARAM
        used_params = {n.attrs["name"] for n in keep if n.op == param}
        if used_params != self.param_values.keys():
            self.param_values = {k: v for k, v in self.param_values.items() if k in used_params}
        return dropped


VIEWS: dict[str, Callable[[Graph], Any]] = {}
"""The views of a graph that upper layers write: ``code`` and ``to_python`` (the backends' generated Python),
``to_dot`` and ``html`` (the viewer's drawings). ``ir/`` may not import those layers, so they register here:
``graph_lab/graph_views.py`` installs all four when graph_lab is imported."""


def _view(name: str) -> Callable[[Graph], Any]:
    try:
        return VIEWS[name]
    except KeyError:
        raise LookupError(f"no {name!r} view of a Graph is registered; graph_lab/graph_views.py registers it "
                          f"when graph_lab is imported") from None
