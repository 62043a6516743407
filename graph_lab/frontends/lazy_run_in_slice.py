"""A speed-up of ``LazyRunner`` with the reference interpreter: run a slice's own nodes, and make the graph of them.

The reference path (``LazyRunner._run_pending`` with ``_execute`` overridden, or after a failure here) copies the
slice's nodes into a graph (``Graph.copy_nodes``) and runs it with ``reference.execute``. Here the slice's nodes
themselves are run in their order (``run_slice``): the same implementations on the same arrays, in the same order,
as ``execute`` calls them on the copied graph, so the results are the same bits. The graph (for the cache and
``executed``) is then made only on a cache miss, and of the slice's own nodes rather than copies (``move_slice``).
If an op fails, ``run_slice`` says None and the runner takes the reference path, so that the error is the
interpreter's own (it names the node of the graph) and the record is left as it was.

Measured reason (instructions, so the machine's load does not matter: ``PYTHONPATH=. python3
benchmarks/shortcut_instructions.py lazy``): a LazyRunner capture of the W2 chain (record, then run at
``materialize``) takes 1.69M instructions with it and 2.68M on the reference path at 8 layers, 37.1% less; 24.1%
at 1 layer and 34.9% at 64. ``tests/frontends/lazy/test_shortcuts_lazy.py`` checks it against the reference path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from weakref import ref

from ..backends.reference import impl_attrs, region_runner
from ..ir.graph import Graph, Node, Value
from ..ops import REGISTRY, Op

if TYPE_CHECKING:  # (for annotations only)
    from .lazy import _Slice


def run_slice(part: "_Slice", known: dict) -> tuple[dict, int] | None:
    """Run the slice's nodes in order, as ``execute`` runs them: each value's array (the frontier's too) and how
    many nodes are operations (not constants, as ``Graph.count`` counts); None when an op failed."""
    env: dict = {v: known[ref(v)] for v in part.frontier}
    ops = 0
    for node in part.order:
        outputs = node.outputs
        # (a slice's only source nodes are constants: inputs are known, and a lazy runner makes no parameters or
        # size nodes)
        if node.op == Op.CONST:
            env[outputs[0]] = node.attrs["value"]
            continue
        ops += 1
        definition = REGISTRY[node.op]
        attrs = impl_attrs(node, region_runner) if definition.regions else node.attrs
        try:
            result = definition.impl(*[env[v] for v in node.inputs], **attrs)
        except Exception:
            return None
        if definition.multi_output:  # a tuple even when it has one output (np.split(x, 1))
            for v, r in zip(outputs, result):
                env[v] = r
        else:
            env[outputs[0]] = result
    return env, ops


def move_slice(part: "_Slice", outputs: list[Value], name: str) -> Graph:
    """The graph of a slice that has just run, made of the slice's own nodes rather than copies of them.

    The record does not need these nodes any more (``LazyRunner._forget`` would cut them off), except the ones
    making the values it keeps (``outputs``: they stay in the record, known, cut off from their inputs, as
    ``_forget`` leaves them). So the graph takes every other node as it is, a copy of each of those, and an input
    node for each known value read; the readers inside the graph are rewired to the copies and the inputs. The
    result is the graph ``Graph.copy_nodes`` makes (the same nodes in the same order), without a copy per node.
    """
    graph = Graph(name)
    replace: dict[Value, Value] = {}
    for i, v in enumerate(part.frontier):
        replace[v] = graph.add_input(f"in{i}", v.type, v.node.loc)
    copies: dict[Node, Node] = {}
    for v in outputs:
        node = v.node
        if node in copies:
            continue
        outs, ins = node.outputs, node._inputs
        types = (outs[0].type,) if len(outs) == 1 else tuple([o.type for o in outs])
        # (reading the inputs and copies made so far: only a copy reading a node copied later is rewired below)
        copy = copies[node] = Node(node.op, tuple(map(replace.get, ins, ins)), node.attrs, types, node.loc)
        node.inputs = ()  # (so it is no longer among the users of what it read)
        replace.update(zip(outs, copy.outputs))
    nodes = graph.nodes
    nodes.extend(part.order)
    for node, copy in copies.items():
        nodes[nodes.index(node)] = copy
    # Rewire the graph's readers of the replaced values: the slice's nodes and the copies (the record's own
    # readers, pending nodes outside the slice, keep reading the record's values).
    in_slice, copied = part.nodes, set(copies.values())
    readers: dict[Node, None] = {}
    for v in replace:
        for u in v.users:
            if u in in_slice or u in copied:
                readers[u] = None
    for node in readers:
        ins = node._inputs
        node.inputs = tuple(map(replace.get, ins, ins))  # (``replace.get(v, v)`` for each operand)
    # A reader outside the graph of a moved value is a pending node no live tensor reaches (else the value would be
    # among ``outputs``, and copied): garbage, cut off so that the graph's use lists name its own nodes only.
    members = set(nodes)
    for node in part.order:
        if node not in copies:
            for v in node.outputs:
                for u in [u for u in v.users if u not in members]:
                    u.inputs = ()
    graph.outputs = list(map(replace.__getitem__, outputs))
    return graph
