"""``Interpreter`` and ``Transformer``: walk a graph node by node, with one method to override per op family.

``Interpreter(g).run(inputs)`` computes what ``run(g, inputs)`` computes (the same implementations, in the same
order), but each step is a method: subclass it to trace, check or count, or register a hook that sees every
node's value as it is made (the course note's section 4.3 forward hooks)::

    interp = Interpreter(g)
    interp.register_hook(lambda node, value: print(node.op, np.shape(value)))
    interp.run({"x": x})

``Transformer(g).transform()`` walks the graph the same way with *new-graph values* in place of arrays and
returns a new graph. By default it copies every node; override a family method to emit something else::

    class NoTanh(Transformer):
        def unary(self, node, args):
            if node.op != "tanh":
                return super().unary(node, args)
            b = self.builder                        # a GraphBuilder on the new graph
            e = b.exp(b.mul(args[0], 2.0))
            return b.div(b.sub(e, 1.0), b.add(e, 1.0))

Dispatch is by ``OpDef.family``, so a new op of the table is handled by its family's method with no change here.
A control-flow node's regions are run by ``run_region``; the ``Transformer`` copies such a node whole (its regions
are shared with the new graph, not walked): override ``control`` to rewrite one.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import Any, Callable, Mapping

import numpy as np

from ..errors import GraphEditError, GraphExecutionError, GraphLabError
from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, Node
from ..ir.shape_env import graph_facts
from ..ir.sizes import bind_attrs, bind_sizes, checked_sizes, is_symbolic_graph
from ..ops import REGISTRY, Op, opdef
from .reference import bind_inputs, impl_attrs

FAMILIES = ("source", "unary", "binary", "reduce", "linalg", "shape", "index", "nn", "control")
_unknown = {d.family for d in REGISTRY.values()} - set(FAMILIES)
assert not _unknown, f"op families without an Interpreter method: {_unknown}"

Hook = Callable[[Node, Any], None]


class HookHandle:
    """Returned by ``register_hook``; ``handle.remove()`` unregisters the hook (as in PyTorch)."""

    def __init__(self, hooks: list[Hook], hook: Hook):
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class Interpreter:
    """Runs a graph one node at a time; every step is a method a subclass may override."""

    def __init__(self, graph: Graph):
        self.graph = graph
        """The graph being run."""
        self.env: dict = {}
        """The value of each IR value computed so far (``Value -> array``)."""
        self.inputs: dict[str, Any] = {}
        """The current run's inputs by name (parameters given here replace their stored values)."""
        self.sizes: dict[str, int] | None = None
        """The current run's value of each size symbol (None for a graph with static shapes)."""
        self._hooks: list[Hook] = []

    def register_hook(self, hook: Hook) -> HookHandle:
        """Call ``hook(node, value)`` after each node runs; ``value`` is a tuple for a node with several outputs."""
        self._hooks.append(hook)
        return HookHandle(self._hooks, hook)

    def run(self, inputs: Mapping[str, Any]) -> list[np.ndarray]:
        """The graph's outputs for ``inputs`` (name -> array), as ``run(graph, inputs)`` returns them."""
        self.inputs = bind_inputs(self.graph, inputs)
        self.sizes = checked_sizes(self.graph, self.inputs) if is_symbolic_graph(self.graph) else None
        self.run_nodes()
        return [np.asarray(self.env[v]) for v in self.graph.outputs]

    def run_nodes(self) -> None:
        """Run every node in order, filling ``env``; a failure names the node it happened in."""
        self.env = {}
        for node in self.graph.nodes:
            args = tuple(self.env[v] for v in node.inputs)
            try:
                result = self.run_node(node, args)
            except GraphLabError as e:
                if getattr(e, "node", None) is not None:
                    raise  # already names its node
                raise self.failure(node, e) from e
            except Exception as e:
                raise self.failure(node, e) from e
            outs = result if opdef(node.op).multi_output else (result,)
            for v, r in zip(node.outputs, outs):
                self.env[v] = r
            for hook in list(self._hooks):
                hook(node, result)

    def run_node(self, node: Node, args: tuple) -> Any:
        """Dispatch to the method named by the op's family (``unary``, ``reduce``, ...)."""
        return getattr(self, opdef(node.op).family)(node, args)

    def failure(self, node: Node, error: Exception) -> Exception:
        """The error raised when ``node`` fails: it names the node, as the reference interpreter does."""
        return GraphExecutionError(f"while executing {self.graph.node_text(node)}: {type(error).__name__}: "
                                   f"{error}", node)

    # --- one method per op family; each defaults to the op's implementation

    def source(self, node: Node, args: tuple) -> Any:
        """``input``, ``param`` and ``const`` read the run's inputs and the graph; ``zeros_like`` & co. compute."""
        reader = {Op.INPUT: self.read_input, Op.PARAM: self.read_param, Op.CONST: self.read_const}.get(node.op)
        return reader(node) if reader is not None else self.call_op(node, args)

    def unary(self, node: Node, args: tuple) -> Any:
        return self.call_op(node, args)

    def binary(self, node: Node, args: tuple) -> Any:
        return self.call_op(node, args)

    def reduce(self, node: Node, args: tuple) -> Any:
        return self.call_op(node, args)

    def linalg(self, node: Node, args: tuple) -> Any:
        return self.call_op(node, args)

    def shape(self, node: Node, args: tuple) -> Any:
        return self.call_op(node, args)

    def index(self, node: Node, args: tuple) -> Any:
        return self.call_op(node, args)

    def nn(self, node: Node, args: tuple) -> Any:
        return self.call_op(node, args)

    def control(self, node: Node, args: tuple) -> Any:
        """``cond``, ``while_loop``, ``fori_loop``, ``scan``: the op's implementation, with each region run by
        ``run_region`` (so hooks and overridden methods see the nodes inside regions too, each time they run)."""
        return self.call_op(node, args)

    # --- the leaves every family method ends in

    def call_op(self, node: Node, args: tuple) -> Any:
        attrs = bind_attrs(node.attrs, self.sizes) if self.sizes else node.attrs
        return opdef(node.op).impl(*args, **impl_attrs(node, lambda region: partial(self.run_region, region), attrs))

    def run_region(self, region: Graph, *values) -> list:
        """Run a region graph on ``values`` with a copy of this interpreter (same class, hooks and state)."""
        sub = copy.copy(self)
        sub.graph, sub.inputs = region, dict(zip(region.input_names, values))
        sub.sizes = bind_sizes(region, sub.inputs)[0] if is_symbolic_graph(region) else None
        sub.run_nodes()
        return [sub.env[v] for v in region.outputs]

    def read_input(self, node: Node) -> Any:
        return self.inputs[node.attrs["name"]]

    def read_param(self, node: Node) -> Any:
        name = node.attrs["name"]
        return self.inputs[name] if name in self.inputs else self.graph.param_values[name]

    def read_const(self, node: Node) -> Any:
        return node.attrs["value"]


class Transformer(Interpreter):
    """Walks a graph with values of a new graph in place of arrays; ``transform()`` returns the new graph.

    The leaves copy: ``call_op`` emits the same op with the same attributes, sources become the same sources. New
    nodes carry the source line of the node they replace."""

    def __init__(self, graph: Graph):
        super().__init__(graph)
        self.builder = GraphBuilder(graph.name)
        """Builds the new graph; use it in overridden methods (``self.builder.exp(x)``)."""

    def transform(self) -> Graph:
        """The new graph, verified. Guards and the output structure are kept."""
        new = self.builder.graph
        with graph_facts(self.graph):  # the type rules of symbolic shapes use the graph's shape guards
            self.run_nodes()
        new.outputs = [self.env[v] for v in self.graph.outputs]
        new.out_tree = self.graph.out_tree
        new.guards = list(self.graph.guards)
        new.verify()
        return new

    def run(self, inputs):
        raise TypeError("a Transformer makes a graph: call transform(), then run the graph it returns")

    def run_node(self, node: Node, args: tuple) -> Any:
        self.builder.loc = node.loc
        return super().run_node(node, args)

    def failure(self, node: Node, error: Exception) -> Exception:
        return GraphEditError(f"while transforming {self.graph.node_text(node)}: {type(error).__name__}: {error}")

    def call_op(self, node: Node, args: tuple) -> Any:
        return self.builder.emit(node.op, list(args), node.attrs)

    def read_input(self, node: Node) -> Any:
        t = node.attrs["type"]
        return self.builder.input(node.attrs["name"], t.shape, t.dtype)

    def read_param(self, node: Node) -> Any:
        name = node.attrs["name"]
        return self.builder.param(name, self.graph.param_values[name])

    def read_const(self, node: Node) -> Any:
        return self.builder.const(node.attrs["value"])
