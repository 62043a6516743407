"""``GraphBuilder``: write a graph by hand, one call per node, as the course note's section 1.1 does with its
``Tensor`` and ``Operation`` classes::

    b = GraphBuilder("linear_relu")
    x = b.input("x", (32, 128), "float32")
    W = b.param("W", w)                        # an array: the parameter's stored value
    bias = b.param("b", b0)
    y = b.relu(b.add(b.matmul(x, W), bias))    # one method per op of the table
    g = b.output(y)                            # verified

Each op method binds its arguments through the op's own ``bind`` rule, so ``b.sum(x, axis=-1)`` and
``b.reshape(x, (2, -1))`` are normalized exactly as when a traced function calls ``x.sum(axis=-1)``; arrays and
numbers among the operands become ``const`` nodes. The methods are made from the op table: adding an op adds one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import SOURCE_OPS, Op, TensorLike, opdef
from .graph import Graph, Value
from .source import SourceLoc, user_location
from .symbolic import Expr
from .types import TensorType

_CALLER = object()  # "use the caller's source line", the default location of new nodes


class _Operand(TensorLike):
    """A ``Value`` as an op's bind rule sees it: something with an array's ``shape``, ``ndim`` and ``dtype``."""

    __slots__ = ("value",)

    def __init__(self, value: Value):
        self.value = value

    shape = property(lambda self: self.value.type.shape)
    ndim = property(lambda self: self.value.type.ndim)
    size = property(lambda self: self.value.type.size)
    dtype = property(lambda self: self.value.type.dtype)


class GraphBuilder:
    """Appends nodes to ``graph``; every value it returns is a ``Value`` of that graph."""

    def __init__(self, name: str = "graph", graph: Graph | None = None):
        self.graph = graph if graph is not None else Graph(name)
        """The graph being built (a new one unless given)."""
        self.loc: Any = _CALLER
        """Source location given to new nodes; by default the line of user code that called the builder."""

    # --- sources

    def input(self, name: str, shape: tuple, dtype: Any = "float64") -> Value:
        """A named input of the graph; a size may be a symbolic expression (``symbol("B")``)."""
        dims = tuple(d if isinstance(d, Expr) else int(d) for d in shape)
        return self.graph.add_input(name, TensorType(np.dtype(dtype), dims), self._loc())

    def param(self, name: str, value: np.ndarray) -> Value:
        """A named parameter; ``value`` is stored with the graph (``graph.param_values[name]``)."""
        return self.graph.add_param(name, np.asarray(value), self._loc())

    def const(self, value) -> Value:
        """A constant: a Python number (weak, as in NumPy 2) or an array."""
        return self.graph.add_const(value, self._loc())

    # --- operations

    def call(self, op: Op | str, *args, **kwargs) -> Value | tuple[Value, ...]:
        """``op`` applied to ``args`` as a user writes it (``call("sum", x, axis=-1)``), bound by the op's rule."""
        definition = opdef(op)
        operands, attrs = definition.bind(*_wrap(args), **{k: _wrap(v) for k, v in kwargs.items()})
        values = [x.value if isinstance(x, _Operand) else x if isinstance(x, Value) else self.const(x)
                  for x in operands]
        return self.emit(definition.op, values, attrs)

    def emit(self, op: Op | str, inputs: list[Value], attrs: dict | None = None) -> Value | tuple[Value, ...]:
        """Append ``op(inputs, **attrs)`` with attributes already in the op's normalized form (as in the IR)."""
        node = self.graph.add_node(opdef(op).op, inputs, dict(attrs or {}), self._loc())
        return node.outputs if opdef(op).multi_output else node.output

    def output(self, *values) -> Graph:
        """Finish: the graph returns ``values`` (numbers and arrays become constants). Verified before returned."""
        self.graph.outputs = [v if isinstance(v, Value) else self.const(v) for v in values]
        self.graph.verify()
        return self.graph

    def _loc(self) -> SourceLoc | None:
        return user_location(1) if self.loc is _CALLER else self.loc


def _wrap(x):
    """Values (also inside lists and tuples, as in ``concatenate([a, b])`` or ``x[i, :]``) seen as operands."""
    if isinstance(x, Value):
        return _Operand(x)
    if type(x) in (list, tuple):
        return type(x)(_wrap(v) for v in x)
    return x


def _op_method(op: Op):
    def method(self: GraphBuilder, *args, **kwargs):
        return self.call(op, *args, **kwargs)
    method.__name__ = method.__qualname__ = op.value
    method.__doc__ = f"Append a ``{op.value}`` node: {opdef(op).doc}."
    return method


for _op in Op:
    if _op not in SOURCE_OPS:
        assert not hasattr(GraphBuilder, _op.value), f"op {_op.value} would hide GraphBuilder.{_op.value}"
        setattr(GraphBuilder, _op.value, _op_method(_op))
