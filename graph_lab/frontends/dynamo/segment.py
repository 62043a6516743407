"""A segment: the graph captured from one bytecode offset up to a graph break or a return.

At the end of a capture, every live value of the frame (locals, stack, the returned value) gets a *recipe*
that rebuilds it on later calls: a graph output, a view of another rebuilt value, an object read again through
its source, a container rebuilt from recipes, or a constant. ``Segment.execute`` checks nothing (the guards were
checked before): it fetches the graph's inputs, runs the graph, and rebuilds the frame.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...backends.interpret import prepare
from ...ir.graph import Graph, Value
from ...ops import Op
from ...ops.indexing import fill_key
from ..tensor import Tensor
from .frame import NULL, IterState, Var
from .sources import FrameInputs, Source


@dataclass
class Segment:
    start: int
    """Bytecode offset where capture started."""
    graph: Graph
    """The captured graph (its inputs are named by their sources)."""
    input_sources: list[Source]
    """Source of each graph input, in graph-input order."""
    guards: Any
    """The GuardSet that must hold for the segment's state."""
    local_recipes: dict[str, tuple]
    stack_recipes: list[tuple]
    end: str
    """'return' or 'break'."""
    result_recipe: tuple | None = None
    """For 'return': the returned value's recipe."""
    break_offset: int | None = None
    """For 'break': offset of the instruction that runs as ordinary Python."""
    break_reason: str = ""
    break_hint: str = ""
    break_loc: Any = None
    break_instruction: str = ""
    compile_seconds: float = 0.0
    check: Any = None
    """The compiled guard function: check(FrameInputs) -> index of the first failing guard, or -1."""
    runner: Any = None
    hits: int = field(default=0)
    steps: list = field(default_factory=list)
    """(offset, opname, argrepr, what capture did) for each instruction captured."""

    def execute(self, inputs: FrameInputs):
        self.hits += 1
        args = {n.attrs["name"]: s.fetch(inputs) for n, s in zip(self.graph.input_nodes, self.input_sources)}
        outs = self.runner(args) if self.graph.outputs else []
        rebuild = Rebuilder(inputs, outs)
        if self.end == "return":
            return rebuild(self.result_recipe), None, None
        local_vars = {name: rebuild(r) for name, r in self.local_recipes.items()}
        stack = [rebuild(r) for r in self.stack_recipes]
        return None, local_vars, stack


def interpret_runner(graph: Graph):
    """Run a graph with the reference interpreter (prepared once), returning its outputs in order."""
    return prepare(graph)


def backend_runner(graph: Graph, backend: str):
    """Run a graph with ``compile(backend=...)``'s backend: ``auto`` (fused where a C compiler is found, which
    leaves small graphs to codegen), ``fused``, ``codegen`` or ``interpret``. Same calling convention."""
    if backend == "interpret":
        return interpret_runner(graph)
    from ...backends.compiled import compile_graph
    return compile_graph(graph, backend=backend, passes="exact", verify=False).run


class RecipeMaker:
    """Turns the live values at the end of a capture into recipes, adding graph outputs as needed."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.outputs: list[Value] = []
        self._out_index: dict[Value, int] = {}
        self._memo: dict[int, tuple] = {}

    def var(self, var: Var) -> tuple:
        if var.source is not None and not isinstance(var.value, Tensor):
            return ("source", var.source)
        return self.value(var.value)

    def value(self, x) -> tuple:
        if isinstance(x, Tensor):
            return self.tensor(x)
        source = self.ctx.sourced.get(id(x))
        if source is not None:
            return ("source", source)
        if x is NULL:
            return ("null",)
        if isinstance(x, list):
            return ("list", [self.value(v) for v in x])
        if isinstance(x, tuple):
            return ("tuple", [self.value(v) for v in x])
        if isinstance(x, dict):
            return ("dict", list(x.keys()), [self.value(v) for v in x.values()])
        if isinstance(x, IterState):
            return ("iter", [self.var(v) for v in x.items], x.pos)
        if isinstance(x, np.ndarray):
            return ("array", x.copy())
        return ("const", x)

    def tensor(self, t: Tensor) -> tuple:
        t._check_fresh()
        node = t._value.node
        if node.op == Op.INPUT:
            return ("source", self.ctx.input_sources[node.attrs["name"]])
        if t._view is not None:
            base, op, attrs = t._view
            return ("view", self.tensor(base), op, attrs)
        if t._value not in self._out_index:
            self._out_index[t._value] = len(self.outputs)
            self.outputs.append(t._value)
        return ("out", self._out_index[t._value])


class Rebuilder:
    """Follows recipes on a new call: real arrays and objects, with NumPy's own aliasing for views."""

    def __init__(self, inputs: FrameInputs, outs: list):
        self.inputs = inputs
        self.outs = outs

    def __call__(self, recipe: tuple):
        kind = recipe[0]
        if kind == "out":
            return self.outs[recipe[1]]
        if kind == "source":
            return recipe[1].fetch(self.inputs)
        if kind == "const":
            return recipe[1]
        if kind == "array":
            return recipe[1].copy()
        if kind == "null":
            return NULL
        if kind == "list":
            return [self(r) for r in recipe[1]]
        if kind == "tuple":
            return tuple(self(r) for r in recipe[1])
        if kind == "dict":
            return dict(zip(recipe[1], (self(r) for r in recipe[2])))
        if kind == "iter":
            return IterState([Var(self(r)) for r in recipe[1]], recipe[2])
        if kind == "view":
            _, base_recipe, op, attrs = recipe
            return apply_view(self(base_recipe), op, attrs)
        raise ValueError(f"unknown recipe {kind}")


def apply_view(base: np.ndarray, op: Op, attrs: dict) -> np.ndarray:
    if op == Op.INDEX:
        return base[fill_key(attrs["key"], [base])]
    if op == Op.TRANSPOSE:
        return np.transpose(base, attrs["perm"])
    if op == Op.RESHAPE:  # only reshapes that split dimensions are views of their base here
        return np.reshape(base, attrs["shape"])
    if op == Op.EXPAND_DIMS:
        return np.expand_dims(base, attrs["axis"])
    if op == Op.SQUEEZE:
        return np.squeeze(base, attrs["axis"])
    if op == Op.BROADCAST_TO:
        return np.broadcast_to(base, attrs["shape"])
    raise ValueError(f"{op} is not a view op")


def now() -> float:
    return time.perf_counter()
