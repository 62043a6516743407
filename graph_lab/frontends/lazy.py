"""Lazy tensors: record operations, run them only when a value is needed.

``lr.tensor(array)`` wraps a private copy of an array. Operations on lazy tensors only record nodes. When Python
needs a value (``bool``, ``int``, ``float``, ``.item()``, ``np.asarray``, ``lr.materialize``), the recorded
operations not yet run are cut out as one graph, executed, and their results kept: a *graph break*. A loop that
records the same graph on every iteration finds it in a cache keyed by the graph's structure.
"""

from __future__ import annotations

import weakref
from weakref import ref

import numpy as np

from ..backends.reference import execute
from ..guards import to_python
from ..ir.graph import Graph, Node, Value
from ..ir.printer import print_graph
from ..ir.source import user_location
from ..ir.types import TensorType
from ..ops import Op
from .lazy_run_in_slice import move_slice, run_slice
from .recorder import Recorder
from .recording_shortcuts import gc_paused
from .tensor import Tensor


_PRUNE_MIN = 256
"""How many tensor references the runner lets accumulate before dropping the dead ones (at least)."""


class LazyRunner(Recorder):
    """Records lazily, executes on demand; ``graphs`` lists each executed graph's node count."""

    inputs_mutable = True
    kind = "lazy"
    # (counters and fields that start out the same in every runner are read from the class until first set)
    cache_hits = 0
    """Executions that reused a graph built before."""
    cache_misses = 0
    """Executions that had to build a new graph."""
    _unkeyed: tuple[Graph, int] | None = None
    """The one graph made while the cache was empty, not keyed yet (a key is made only when there is something
    to look up: a runner that runs one graph never makes one); keyed from the graph itself when needed."""
    _counter = 0
    tensor_refs_limit = _PRUNE_MIN

    def __init__(self):
        self.graphs: list[int] = []
        """Node count (``Graph.count()``) of each graph executed, in order."""
        self.executed: list[Graph] = []
        """The executed graphs themselves (shared with the cache when one was reused)."""
        # The array of each value computed (the inputs, and the values kept from graphs run), keyed by a weak
        # reference to the value, so that an entry goes when its value does (looked up with ``ref(v)``, which
        # hashes as ``v`` and equals any reference to it). A key is ``ref(v, self._drop_known)``: its
        # callback drops the entry, reaching the runner through a weak reference (no cycle keeps it alive).
        self._known: dict[weakref.ref, object] = {}
        self._drop_known = _known_dropper(ref(self))
        self._cache: dict[tuple, tuple[Graph, int]] = {}
        self.tensor_refs = []  # (``emit`` adds each stand-in it makes; ``tensor`` too)

    def tensor(self, array) -> Tensor:
        """A lazy tensor holding a copy of ``array`` (later in-place writes to either do not reach the other)."""
        arr = np.array(array, copy=True)
        self._counter += 1
        type_ = TensorType.of(arr)
        value = Node(Op.INPUT, (), {"name": f"t{self._counter}", "type": type_}, (type_,), user_location(1)).outputs[0]
        self._known[ref(value, self._drop_known)] = arr
        t = Tensor(self, value)
        self.tensor_refs.append(weakref.ref(t))
        return t

    def prune_tensor_refs(self) -> None:
        # Most tensors die young (``x + np.tanh(x @ w)`` makes two that live for one line): dropping their
        # references now and then keeps the list as short as the live tensors, not as long as the record.
        self._live_tensors()

    def concretize(self, t: Tensor, kind: str):
        t._check_fresh()
        return to_python(self._compute([t._value])[0], kind)

    def materialize(self, t):
        """The value of a lazy tensor (or a list/tuple of them) as NumPy arrays, running what is pending."""
        if type(t) is not Tensor and isinstance(t, (list, tuple)):
            for x in t:
                x._check_fresh()
            return type(t)(np.asarray(a) for a in self._compute([x._value for x in t]))
        if not isinstance(t, Tensor) or t._rec is not self:
            raise TypeError(f"materialize takes a lazy tensor of this runner, got {type(t).__name__}")
        t._check_fresh()
        return np.asarray(self._compute([t._value])[0])

    # --- running the pending part of the record

    def _compute(self, wanted: list[Value]) -> list:
        known = self._known
        pending = []
        for v in wanted:
            if not _is_known(v, known):
                pending.append(v)
        if not pending:
            return [known[ref(v)] for v in wanted]
        with gc_paused():  # (slicing and extracting make a graph's worth of objects that all live on)
            made = self._run_pending(pending)
        results = []
        for v in wanted:
            results.append(made[v] if v in made else known[ref(v)])
        return results

    def _run_pending(self, wanted: list[Value]) -> dict:
        """Run what computing ``wanted`` needs and keep the values that must be (``wanted`` among them); returns
        each value kept and its array."""
        part = self._slice(wanted)
        # With the reference interpreter (``_execute`` not overridden), the speed-up of ``lazy_run_in_slice``:
        # the slice's own nodes are run, and the graph is made of them; None when an op failed, so that the
        # graph is run again by ``_execute`` and the error is the interpreter's own.
        ran = run_slice(part, self._known) if type(self)._execute is LazyRunner._execute else None
        # The values to keep: those wanted, those of the slice a live tensor holds, and those of the slice that
        # pending work outside it reads (``h = x @ w; g = h * 2; h = h + 1``: the matmul's result has no live
        # tensor, but g needs it), so that they are never recomputed.
        in_slice, known = part.nodes, self._known
        keep = dict.fromkeys(wanted)
        pending_live = []
        for t in self._live_tensors():
            v = t._value
            node = v.node
            if node in in_slice:
                keep[v] = None
            elif node._inputs or ref(v) not in known:  # (``not _is_known(v, known)``)
                pending_live.append(v)
        if pending_live:
            keep.update(dict.fromkeys(self._read_by_pending(pending_live, in_slice)))
        outputs = list(keep)
        key, cached = self._lookup(part, outputs) if self._cache or self._unkeyed else (None, None)
        moved = False
        if cached is not None:
            self.cache_hits += 1
            graph, count = cached
        else:
            self.cache_misses += 1
            name = f"lazy{len(self.graphs)}"
            if ran is not None:  # already run: the slice's nodes can become the graph's
                graph, count, moved = move_slice(part, outputs, name), ran[1], True
            else:
                # (the slice is exactly the nodes the outputs need, in order: copied without extract's search)
                graph = Graph("lazy").copy_nodes(part.order, outputs, name,
                                                 cut={v: f"in{i}" for i, v in enumerate(part.frontier)})
                count = graph.count()
            if key is None:
                self._unkeyed = graph, count
            else:
                self._cache[key] = graph, count
        if ran is not None:
            env = ran[0]
            results = [env[v] for v in outputs]
        else:
            results = self._execute(graph, {f"in{i}": known[ref(v)] for i, v in enumerate(part.frontier)})
        made = dict(zip(outputs, results))
        drop = self._drop_known
        for v, result in made.items():
            known[ref(v, drop)] = result
        self.graphs.append(count)
        self.executed.append(graph)
        if not moved:  # (moved nodes belong to the graph now; ``move_slice`` cut the ones the record keeps)
            self._forget(part.order)
        return made

    def _lookup(self, part: "_Slice", outputs: list[Value]) -> tuple[tuple | None, tuple[Graph, int] | None]:
        """The slice's key and the (graph, count) the cache holds for it (None on a miss). The graph not keyed
        yet (``_unkeyed``) is keyed first, from its own nodes."""
        if self._unkeyed is not None:
            graph, count = self._unkeyed
            inputs = [node.outputs[0] for node in graph.nodes if node.op == Op.INPUT]  # (they come first)
            self._cache[_key(inputs, graph.nodes[len(inputs):], graph.outputs)] = graph, count
            self._unkeyed = None
        key = _key(part.frontier, part.order, outputs)
        return key, self._cache.get(key)

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

    def _slice(self, wanted: list[Value]) -> "_Slice":
        """The nodes still to run for ``wanted``, in a topological order, and the known values they read."""
        part = _Slice()
        order, frontier, visited = part.order, part.frontier, part.nodes
        known = self._known
        met: set[Value] = set()  # the frontier values found so far
        for root in wanted:
            stack = [(root.node, False)]
            while stack:
                node, expanded = stack.pop()
                if expanded:  # every operand is known or made by a node already in the order
                    order.append(node)
                    continue
                if node in visited:
                    continue
                visited.add(node)
                stack.append((node, True))
                for v in reversed(node._inputs):
                    producer = v.node
                    if producer in visited or v in met:  # (placed or on the stack; or a frontier value)
                        continue
                    if _is_known(v, known):
                        frontier.append(v)
                        met.add(v)
                    else:
                        stack.append((producer, False))
        return part

    def _read_by_pending(self, roots: list[Value], in_slice: set[Node]) -> list[Value]:
        """The values made by nodes of ``in_slice`` that the pending ``roots`` and their pending ancestors read."""
        known = self._known
        found: list[Value] = []
        visited: set[Node] = set()
        stack = [v.node for v in roots]
        while stack:
            node = stack.pop()
            if node in visited:
                continue
            visited.add(node)
            for v in node.inputs:
                if v.node in in_slice:
                    found.append(v)
                elif not _is_known(v, known):
                    stack.append(v.node)
        return found

    def _live_tensors(self) -> list[Tensor]:
        """The tensors of this runner still alive (references to the dead ones are dropped)."""
        alive, refs = [], []
        for ref in self.tensor_refs:
            t = ref()
            if t is not None:
                alive.append(t)
                refs.append(ref)
        self.tensor_refs = refs
        self.tensor_refs_limit = max(_PRUNE_MIN, 2 * len(refs))
        return alive


class _Slice:
    """What ``LazyRunner._slice`` finds: the pending nodes a computation needs and how they connect."""

    __slots__ = ("order", "nodes", "frontier")

    def __init__(self):
        self.order: list[Node] = []
        """The nodes to run, in a topological order."""
        self.nodes: set[Node] = set()
        """The same nodes, as a set (nodes hash by identity)."""
        self.frontier: list[Value] = []
        """The known values they read, in the order first met."""


def _is_known(v: Value, known: dict) -> bool:
    """Whether the runner holds the array of ``v``. A known value's node never has inputs (an input node, or a
    node cut off after it ran), so a value whose node has some is pending, without a lookup (which makes a weak
    reference each time)."""
    return not v.node._inputs and ref(v) in known


def _known_dropper(runner_ref: weakref.ref):
    """The callback of the keys of a runner's ``_known``: when a value dies, its entry goes (if the runner is
    still alive)."""
    def drop(key: weakref.ref) -> None:
        runner = runner_ref()
        if runner is not None:
            runner._known.pop(key, None)
    return drop


def _key(frontier: list[Value], order: list[Node], outputs: list[Value]) -> tuple:
    """A hashable description of the graph computing ``outputs`` with the nodes ``order`` from the known values
    ``frontier``: their types, each node as (op, attributes, where each operand comes from: ``-1 - i`` for the
    i-th known value, ``n`` for the n-th value the nodes make), and where each output comes from. A slice and
    the graph made of it (``_move``, ``Graph.copy_nodes``) have the same key."""
    position = {v: -1 - i for i, v in enumerate(frontier)}
    structure = []
    made = 0
    for node in order:
        attrs = node.attrs
        structure.append((node.op, _attrs_key(attrs) if attrs else (), *[position[v] for v in node.inputs]))
        for v in node.outputs:
            position[v] = made
            made += 1
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
