"""Lazy tensors: record operations, run them only when a value is needed.

``lr.tensor(array)`` wraps a private copy of an array. Operations on lazy tensors only record nodes. When Python
needs a value (``bool``, ``int``, ``float``, ``.item()``, ``np.asarray``, ``lr.materialize``), the recorded
operations not yet run are cut out as one graph, executed, and their results kept: a *graph break*. A loop that
records the same graph on every iteration finds it in a cache keyed by the graph's structure.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..backends.interpret import execute
from ..guards import to_python
from ..ir.graph import Graph, Node, Value
from ..ir.printer import print_graph
from ..ir.source import user_location
from ..ir.types import TensorType
from ..ops import Op
from .recorder import Recorder, gc_paused
from .tensor import Tensor


class LazyRunner(Recorder):
    """Records lazily, executes on demand; ``graphs`` lists each executed graph's node count."""

    inputs_mutable = True
    kind = "lazy"

    def __init__(self):
        self.graphs: list[int] = []
        """Node count (``Graph.count()``) of each graph executed, in order."""
        self.executed: list[Graph] = []
        """The executed graphs themselves (shared with the cache when one was reused)."""
        self.cache_hits = 0
        """Executions that reused a graph built before."""
        self.cache_misses = 0
        """Executions that had to build a new graph."""
        self._known: weakref.WeakKeyDictionary[Value, object] = weakref.WeakKeyDictionary()
        self._cache: dict[tuple, Graph] = {}
        self._live: list[weakref.ref] = []
        self._counter = 0

    def tensor(self, array) -> Tensor:
        """A lazy tensor holding a copy of ``array`` (later in-place writes to either do not reach the other)."""
        arr = np.array(array, copy=True)
        self._counter += 1
        node = Node(Op.INPUT, (), {"name": f"t{self._counter}", "type": TensorType.of(arr)}, (TensorType.of(arr),),
                    user_location(1))
        self._known[node.output] = arr
        return self._track(Tensor(self, node.output))

    def _track(self, t: Tensor) -> Tensor:
        self._live.append(weakref.ref(t))
        return t

    def emit(self, op, operands, attrs):
        out = super().emit(op, operands, attrs)
        if isinstance(out, tuple):
            self._live.extend([weakref.ref(t) for t in out])
        else:
            self._live.append(weakref.ref(out))
        return out

    def concretize(self, t: Tensor, kind: str):
        t._check_fresh()
        return to_python(self._compute([t._value])[0], kind)

    def materialize(self, t):
        """The value of a lazy tensor (or a list/tuple of them) as NumPy arrays, running what is pending."""
        if isinstance(t, (list, tuple)):
            for x in t:
                x._check_fresh()
            return type(t)(np.asarray(a) for a in self._compute([x._value for x in t]))
        if not isinstance(t, Tensor) or t._rec is not self:
            raise TypeError(f"materialize takes a lazy tensor of this runner, got {type(t).__name__}")
        t._check_fresh()
        return np.asarray(self._compute([t._value])[0])

    # --- running the pending part of the record

    def _compute(self, wanted: list[Value]) -> list:
        pending = [v for v in wanted if v not in self._known]
        if pending:
            with gc_paused():  # slicing and extracting make a graph's worth of objects that all live on
                self._run_pending(pending)
        return [self._known[v] for v in wanted]

    def _run_pending(self, wanted: list[Value]) -> None:
        order, frontier, structure, position = self._slice(wanted)
        in_slice = {v for node in order for v in node.outputs}
        live_values = [t._value for t in self._live_tensors()]
        live = [v for v in live_values if v in in_slice and v not in wanted]
        # Values of this slice that pending work outside it reads (``h = x @ w; g = h * 2; h = h + 1``: the
        # matmul's result has no live tensor, but g needs it) are kept too, so they are never recomputed.
        read_later = self._read_by_pending([v for v in live_values if v not in in_slice], in_slice)
        outputs = list(dict.fromkeys(wanted + live + read_later))
        key = _structure_key(frontier, structure, position, outputs)
        graph = self._cache.get(key)
        if graph is None:
            self.cache_misses += 1
            # (the slice is exactly the nodes the outputs need, in order: copied without extract's search)
            graph = Graph("lazy").copy_nodes(order, outputs, f"lazy{len(self.graphs)}",
                                             cut={v: f"in{i}" for i, v in enumerate(frontier)})
            self._cache[key] = graph
        else:
            self.cache_hits += 1
        results = self._execute(graph, {f"in{i}": self._known[v] for i, v in enumerate(frontier)})
        for v, result in zip(outputs, results):
            self._known[v] = result
        self.graphs.append(graph.count())
        self.executed.append(graph)
        self._forget(order)

    @staticmethod
    def _forget(order: list[Node]) -> None:
        """Cut the nodes just run off from what they read. A later slice stops at known values and never looks
        behind them, and a value of the slice that is not kept has no live tensor and no pending reader, so the
        record behind this point is no longer needed: without the cut, every value ever computed (and its array,
        in ``_known``) would stay alive through the newest node's inputs, and a loop that materializes at each
        step would hold every step's arrays, where eager NumPy holds only the last."""
        for node in order:
            node.inputs = ()

    def _execute(self, graph: Graph, inputs: dict) -> list:
        """Run one cut-out graph and return its outputs in order: the reference interpreter here; a subclass
        may run it another way (``graph_lab.testing.ways`` runs it through each pass pipeline and backend)."""
        env = execute(graph, inputs)
        return [env[out] for out in graph.outputs]

    def _slice(self, wanted: list[Value]) -> tuple[list[Node], list[Value], list, dict]:
        """Nodes still to run for ``wanted``, in a topological order, and the known values they read.

        As it goes it also describes the slice's structure for the cache key (``_structure_key``): each node as
        (op, attributes, where each operand comes from), a position being ``("in", i)`` for the i-th known
        value read and ``(n, i)`` for the i-th output of the n-th node."""
        order: list[Node] = []
        frontier: list[Value] = []
        position: dict[Value, tuple] = {}
        structure: list = []
        visited: set[int] = set()
        known = self._known
        for root in wanted:
            stack = [(root.node, False)]
            while stack:
                node, expanded = stack.pop()
                if expanded:
                    # every operand has a position by now: known, or made by a node already in the order
                    structure.append((node.op, _attrs_key(node.attrs), tuple([position[v] for v in node.inputs])))
                    n = len(order)
                    for i, v in enumerate(node.outputs):
                        position[v] = (n, i)
                    order.append(node)
                    continue
                if id(node) in visited:
                    continue
                visited.add(id(node))
                stack.append((node, True))
                for v in reversed(node.inputs):
                    if v in known:
                        if v not in position:
                            position[v] = ("in", len(frontier))
                            frontier.append(v)
                    elif id(v.node) not in visited:
                        stack.append((v.node, False))
        return order, frontier, structure, position

    def _read_by_pending(self, roots: list[Value], in_slice: set[Value]) -> list[Value]:
        """The values of ``in_slice`` that the not-yet-run ancestors of ``roots`` read."""
        found: list[Value] = []
        visited: set[int] = set()
        stack = [v.node for v in roots if v not in self._known]
        while stack:
            node = stack.pop()
            if id(node) in visited:
                continue
            visited.add(id(node))
            for v in node.inputs:
                if v in in_slice:
                    found.append(v)
                elif v not in self._known:
                    stack.append(v.node)
        return found

    def _live_tensors(self):
        alive = []
        for ref in self._live:
            t = ref()
            if t is not None:
                alive.append(t)
        self._live = [weakref.ref(t) for t in alive]
        return alive


def _structure_key(frontier: list[Value], structure: list, position: dict, outputs: list[Value]) -> tuple:
    """A hashable description of the graph to run: input types, ops, attributes, wiring (from ``_slice``) and
    which values it returns."""
    return (tuple([v.type for v in frontier]), *structure, tuple([position[v] for v in outputs]))


def _attrs_key(attrs: dict) -> tuple:
    if not attrs:
        return ()
    items = []
    for k, v in attrs.items():
        if isinstance(v, (np.ndarray, np.generic)):
            v = ("array", v.dtype.str, v.shape, v.tobytes())  # bytes: -0.0 and 0.0 must differ
        elif isinstance(v, float):
            v = (float, v.hex())
        elif isinstance(v, (int, bool, complex)):
            v = (type(v), v)
        elif isinstance(v, Graph):  # a region of a control-flow node (F.cond, ...): the same when it prints the same
            v = ("region", print_graph(v))
        items.append((k, v))
    return tuple(items)
