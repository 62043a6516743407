"""The partitioner: which nodes a kernel can run, grouped into kernels, and where every other node goes and why.

A node can join a kernel when ``c_kernels`` has an expression for its op, it computes in float32, float64 or bool,
and its operands are values of the group, Python numbers (``kernel_scalars``: written into the C source, or read
from memory when not constants), or arrays that line
up with the loop: the group's shape, one element, a row vector (a bias ``[C]`` under ``[N, C]``) or a column
(``[N, 1]``). Groups grow greedily in graph order: a node joins the group of one of its operands when it has the
group's shape and nothing outside the group would need a group value before the kernel runs (the kernel runs
where its last node was). Whether a group becomes a kernel is the cost model's decision (``cost.decide``); the
rest of the graph stays on the ``codegen`` path. ``Partition.text()`` shows all of it.

A ``softmax``, ``log_softmax`` or ``layer_norm`` over the last axis makes a *row kernel* (``c_row_kernels``): it needs a
whole row before it can write any element, so it ends a group: it joins the group that computes its operand when
that group's loop runs over the same rows (``where`` before a ``softmax``), else it is a group of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ops import SOURCE_OPS, Op, opdef
from . import c_kernels
from .cost import ROW_OP_COSTS, Decision, GroupCost
from .c_integers import INTEGER_OPS, why_not_integer
from .c_row_kernels import ROW_OPS
from .kernel_scalars import is_literal, why_not_weak

MAX_GROUP_NODES = 64
"""A kernel's size limit (a longer chain becomes several kernels)."""
NUMPY_CALLS = {Op.GELU: 9, Op.SIGMOID: 4, Op.VAR: 6, Op.STD: 7}
"""NumPy calls an op makes when not fused (its implementation's ufunc calls); 1 for the others."""
SPREADS = frozenset({Op.VAR, Op.STD})
"""Reductions that NumPy makes in several passes with temporaries (the mean, the deviations, their squares, their
sum): worth a kernel of their own even over a value that no group computes (a graph input, a matmul's result)."""
LIBM_FUNCTION = {Op.EXP: "exp", Op.LOG: "log", Op.LOG1P: "log1p", Op.EXPM1: "expm1", Op.TANH: "tanh", Op.SIN: "sin",
                 Op.COS: "cos", Op.POW: "pow", Op.GELU: "tanh", Op.SIGMOID: "exp"}
"""The libm function an op calls once per element (the cost model measures each one)."""
BLAS_OPS = frozenset({Op.MATMUL, Op.EINSUM, Op.LINEAR, Op.CONV2D, Op.OUTER})
"""Ops that may run NumPy's BLAS (and leave its threads spinning for a while)."""
FLOAT_ONLY = frozenset(c_kernels.C_OPS) - c_kernels.COMPARISONS - c_kernels.LOGICAL - c_kernels.CLASSIFY - \
    {Op.CAST, Op.COPY, Op.WHERE}


@dataclass(eq=False)
class Group:
    """Nodes that one kernel would compute together."""

    index: int
    """Its number in the partition (``kernel<index>`` in the generated code)."""
    nodes: list[Node]
    """The nodes, in graph order (the kernel computes them in this order)."""
    shape: tuple[int, ...]
    """Every node's result shape: what the loop runs over."""
    splits: set[int]
    """Where the loop may split the shape into rows x inner (positions 1..ndim-1); all of them for a flat loop."""
    inputs: list[Value] = field(default_factory=list)
    """Arrays read from outside the group, in first-use order."""
    literals: dict[Value, object] = field(default_factory=dict)
    """Python-number operands, by value: written into the C source."""
    decision: Decision | None = None
    """The cost model's decision (set by the backend)."""
    kernel: c_kernels.CKernel | None = None
    """The generated C function, once the group is fused."""
    reduce: Node | None = None
    """A ``sum``, ``mean``, ``var`` or ``std`` of one of the group's values that ends the group (see
    ``attach_reductions``)."""
    reduce_split: int = 0
    """For ``reduce``: rows x inner with the reduced axis inner (ndim - 1), or 0 for all axes (one row)."""
    row: Node | None = None
    """A ``softmax``, ``log_softmax`` or ``layer_norm`` ending the group (its last node), or None: the kernel is then
    a row kernel (``c_row_kernels``), the elementwise nodes before it computing its operand."""

    @property
    def values(self) -> set:
        """The values the group's nodes compute."""
        return {v for n in self.nodes for v in n.outputs}

    def outputs(self, graph: Graph) -> list[Value]:
        """Group values read outside the group or returned by the graph: the kernel writes these."""
        members = {id(n) for n in self.nodes}
        returned = {id(v) for v in graph.outputs}
        return [v for n in self.nodes for v in n.outputs
                if id(v) in returned or any(id(u) not in members for u in v.users)]

    @property
    def elements(self) -> int:
        return int(np.prod(self.shape))

    def split(self) -> int | None:
        """Rows x inner split used by the kernel (the largest inner loop), or None for one flat loop."""
        if self.reduce is not None:  # one row per reduced result
            return self.reduce_split
        if self.row is not None:  # one row per row of the last axis (a 1-D array is one row)
            return len(self.shape) - 1
        if all(_pattern(v.type.shape, self.shape, 1) in ("full", "scalar") for v in self.inputs):
            return None
        return min(self.splits)

    def spec(self, graph: Graph) -> c_kernels.KernelSpec:
        p = self.split()
        inputs = []
        for v in self.inputs:
            pattern = _pattern(v.type.shape, self.shape, p if p is not None else 0)
            shape = (1,) * (len(self.shape) - len(v.type.shape)) + tuple(v.type.shape)
            period = tile_rows(shape, self.shape, p) if pattern == "tile" else 0
            inputs.append(c_kernels.KernelInput(v, pattern, period))
        return c_kernels.KernelSpec(self.nodes, inputs, self.outputs(graph), p is not None, dict(self.literals),
                               self.reduce, self.row)

    def cost(self, graph: Graph, facts: "GraphFacts | None" = None) -> GroupCost:
        """The group's numbers for the cost model (``facts``: ``graph_facts(graph)``, found once for all groups)."""
        facts = facts or graph_facts(graph)
        calls = numpy_bytes = arithmetic = 0
        libm: list[str] = []
        for node in self.nodes:
            if node is self.row:
                row_cost = ROW_OP_COSTS[node.op]
                affine = node.inputs[1:]  # a layer_norm's weight and bias
                calls += row_cost.numpy_calls + len(affine)
                numpy_bytes += ((row_cost.numpy_passes + 2 * len(affine)) * nbytes(node.output)
                                + sum(map(nbytes, affine)))
                libm += row_cost.libm
                arithmetic += row_cost.arithmetic + len(affine)
                continue
            k = NUMPY_CALLS.get(node.op, 1)
            calls += k
            moved = sum(nbytes(v) for v in node.inputs if v.type.weak is None) + nbytes(node.output)
            if node.op in SPREADS:  # a sum, a subtract and a square (each reading and writing), another sum
                moved = 6 * nbytes(node.inputs[0])
            numpy_bytes += moved if k == 1 or node.op in SPREADS else k * 2 * nbytes(node.output)
            function = None if c_kernels.without_pow(node, self.literals) else LIBM_FUNCTION.get(node.op)
            libm += [function] if function else []
            arithmetic += k - (function is not None)
        outputs = self.outputs(graph)
        kernel_bytes = sum(nbytes(v) for v in self.inputs) + sum(nbytes(v) for v in outputs)
        # (an operand that may be a strided view is copied to C order before each call: see ``fused.kernel_call``)
        copied = [v for v in self.inputs if v.type.ndim > 0 and not facts.c_order.get(v, True)]
        after_blas = facts.first_blas < facts.position[id(self.nodes[-1])]
        return GroupCost(self.elements, calls, numpy_bytes, tuple(libm), arithmetic,
                         len(self.inputs) + len(outputs), kernel_bytes, after_blas,
                         len(copied), sum(nbytes(v) for v in copied))


@dataclass
class GraphFacts:
    """What every group's cost needs to know of the whole graph, found in one walk over it."""

    position: dict[int, int]
    """id(node) -> its index in the graph."""
    first_blas: int
    """The index of the first node that may run BLAS (the number of nodes if none)."""
    c_order: dict[Value, bool]
    """Whether a value is C-contiguous whenever the inputs are (``codegen.c_ordered_values``); a value not in it
    counts as C-ordered."""


def graph_facts(graph: Graph, c_order: dict[Value, bool] | None = None) -> GraphFacts:
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    first_blas = next((i for i, n in enumerate(graph.nodes) if n.op in BLAS_OPS), len(graph.nodes))
    return GraphFacts(position, first_blas, c_order or {})


def _pattern(shape: tuple[int, ...], loop: tuple[int, ...], split: int) -> str | None:
    """How an operand of ``shape`` lines up with a loop over ``loop`` split at ``split`` (rows = loop[:split])."""
    shape = (1,) * (len(loop) - len(shape)) + tuple(shape)
    if shape == loop:
        return "full"
    if all(d == 1 for d in shape):
        return "scalar"
    outer, inner = shape[:split], shape[split:]
    if all(d == 1 for d in outer) and inner == loop[split:]:
        return "row"
    if outer == loop[:split] and all(d == 1 for d in inner):
        return "col"
    if tile_rows(shape, loop, split):
        return "tile"
    return None


def tile_rows(shape: tuple[int, ...], loop: tuple[int, ...], split: int) -> int:
    """For an operand that repeats along the loop's leading axes and matches it on the others (a [128, 128] mask
    under [8, 128, 128] scores, split before the last axis): how many rows of the loop it has, R, so that row i
    reads its row i % R. 0 when ``shape`` (padded with leading 1s) is not such an operand, or a size is symbolic."""
    for k in range(1, split):
        if all(d == 1 for d in shape[:k]) and shape[k:] == loop[k:]:
            rows = 1
            for d in loop[k:split]:
                if type(d) is not int:
                    return 0
                rows *= d
            return rows if rows > 1 else 0
    return 0


def _splits(shape: tuple[int, ...], loop: tuple[int, ...]) -> set[int]:
    """The split positions at which an operand of ``shape`` lines up with the loop."""
    return {p for p in range(1, len(loop)) if _pattern(shape, loop, p) is not None}


def nbytes(v: Value) -> int:
    return v.type.size * v.type.dtype.itemsize


def why_not(node: Node) -> str | None:
    """Why ``node`` cannot be in a kernel, or None when it can."""
    if node.op in ROW_OPS:
        return why_not_row(node)
    if node.op not in c_kernels.C_OPS and node.op not in INTEGER_OPS:
        return f"no kernel expression for {node.op} ({c_kernels.NOT_FUSED.get(node.op, opdef(node.op).family)})"
    if node.op == Op.ROUND and node.attrs["decimals"] != 0:
        return "round to decimals other than 0 (NumPy scales, rounds and scales back: not written as a kernel)"
    out = node.output.type
    if out.ndim == 0 or out.size == 0:
        return "a scalar or empty result: nothing to loop over"
    compute = c_kernels.compute_dtype(node)  # (the result's, or a comparison's operands', e.g. complex or float16)
    if out.dtype not in c_kernels.C_TYPES or compute not in c_kernels.C_TYPES:
        return f"computes in {compute} (kernels compute in float32, float64, bool and the integers)"
    if node.op in c_kernels.CLASSIFY and compute.kind != "f":
        return f"{node.op} of {compute} (kernels classify float32 and float64)"
    why = why_not_integer(node, compute, [v.node.attrs["value"] for v in node.inputs if is_literal(v)])
    if why is not None or node.op in FLOAT_ONLY and out.dtype.kind == "b":
        return why or f"{node.op} on {out.dtype} (kernels do arithmetic on floats and integers only)"
    for v in node.inputs:
        if v.type.weak is not None and why_not_weak(v) is not None:
            return why_not_weak(v)
        elif v.type.weak is None and v.type.dtype not in c_kernels.C_TYPES:
            return f"an operand of dtype {v.type.dtype}"
    if node.op == Op.CLIP and any(v.type.size != 1 for v in node.inputs[1:]):
        return "clip with array bounds (only scalar bounds are fused: NumPy's two clip loops differ on ties)"
    return None


def why_not_row(node: Node) -> str | None:
    """Why a ``softmax``, ``log_softmax`` or ``layer_norm`` cannot be a row kernel, or None when it can."""
    out = node.output.type
    if out.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        return f"{node.op} in {out.dtype} (row kernels compute in float32 or float64)"
    if out.size == 0:
        return "an empty result: nothing to loop over"
    if node.op != Op.LAYER_NORM and node.attrs["axis"] != out.ndim - 1:
        return (f"{node.op} over axis {node.attrs['axis']} of {out.ndim}: a row kernel runs over the last "
                f"(contiguous) axis")
    for v in node.inputs:
        if v.type.weak is not None or v.type.dtype != out.dtype:
            return f"an operand of {v.type} (a row kernel reads arrays of its result's dtype, {out.dtype})"
        if _pattern(v.type.shape, out.shape, out.ndim - 1) is None:
            return f"an operand of shape {list(v.type.shape)} that does not line up with the rows"
    if node.op == Op.LAYER_NORM and not c_kernels.literal_ok(node.attrs["eps"]):
        return "eps is NaN"
    return None


@dataclass
class Partition:
    """The groups of a graph and where each node runs."""

    graph: Graph
    groups: list[Group]
    reasons: dict[int, str]
    """id(node) -> why it is not in any group."""

    def kernels(self) -> list[Group]:
        return [g for g in self.groups if g.decision is not None and g.decision.fuse]

    def text(self) -> str:
        """Which nodes went where, and why (one line per node, then one per group)."""
        g = self.graph
        numbering = g.numbering()
        where: dict[int, Group] = {id(n): grp for grp in self.groups for n in grp.nodes}
        lines = [f"partition of {g.name}: {len(self.kernels())} kernel(s) from {len(self.groups)} candidate "
                 f"group(s); {g.count()} ops"]
        for node in g.nodes:
            if node.op in SOURCE_OPS:
                continue
            grp = where.get(id(node))
            name = f"%{numbering[node.outputs[0]]} {node.op}"
            if grp is not None and grp.decision is not None and grp.decision.fuse:
                lines.append(f"  {name:<24} -> kernel {grp.index}")
            elif grp is not None:
                lines.append(f"  {name:<24} -> codegen (group {grp.index} not fused)")
            else:
                lines.append(f"  {name:<24} -> codegen: {self.reasons.get(id(node), '')}")
        for grp in self.groups:
            ops = ", ".join(str(n.op) for n in grp.nodes)
            dtype = ",".join(sorted({str(n.output.type.dtype) for n in grp.nodes}))
            if grp.row is not None:
                rows = int(np.prod(grp.shape[:-1]))
                loop = f"row kernel ({rows} row{'s' if rows > 1 else ''} of {grp.shape[-1]})"
            else:
                loop = "flat loop" if grp.split() is None else f"rows x inner at axis {grp.split()}"
            decision = grp.decision.reason if grp.decision is not None else "not decided"
            lines.append(f"  group {grp.index}: {len(grp.nodes)} ops ({ops}) on {grp.elements} {dtype} elements, "
                         f"{loop}, {len(grp.inputs)} input array(s): {decision}")
        return "\n".join(lines)


def partition(graph: Graph, taken: dict[int, str] | None = None, runs_at: dict[int, Node] | None = None) -> Partition:
    """Group the graph's kernel-able nodes (no decision yet: see ``cost.decide``). ``taken``: id(node) -> the C
    program computing it already; ``runs_at``: id(node) -> the node where that program's call runs."""
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    position.update({k: position[id(n)] for k, n in (runs_at or {}).items()})
    groups: list[Group] = []
    group_of: dict[int, Group] = {}
    reasons: dict[int, str] = {}
    taken = taken or {}
    for node in graph.nodes:
        if node.op in SOURCE_OPS:
            continue
        reason = taken.get(id(node)) or why_not(node)
        if reason is not None:
            reasons[id(node)] = reason
            continue
        if node.op in ROW_OPS:  # it ends a group, which nothing joins afterwards (see the module's docstring)
            owner = group_of.get(id(node.inputs[0].node))
            if owner is not None and _can_end_with_row(owner, node, position):
                _add(owner, node)
                owner.row, owner.splits = node, {node.output.type.ndim - 1}
            else:
                groups.append(Group(len(groups), [node], node.output.type.shape, {node.output.type.ndim - 1},
                                    list(dict.fromkeys(node.inputs)), row=node))
            continue
        owners = list(dict.fromkeys(group_of[id(v.node)] for v in node.inputs if id(v.node) in group_of))
        joined = None
        if len(owners) > 1 and _can_merge(owners, node, position):
            joined = _merge(owners, group_of, position)  # gelu(x) * sigmoid(x): both chains and the product
            groups[:] = [g for g in groups if g is joined or g not in owners]
        for grp in reversed(owners):
            if joined is None and _can_join(grp, node, position):
                joined = grp
        if joined is None:
            fresh = Group(len(groups), [], node.output.type.shape, set(range(1, node.output.type.ndim)))
            if not _can_join(fresh, node, position):
                reasons[id(node)] = "an operand broadcasts against the result in a way kernels do not loop over"
                continue
            joined = fresh
            groups.append(joined)
        _add(joined, node)
        group_of[id(node)] = joined
    attach_reductions(graph, group_of, reasons, position, groups)
    for i, grp in enumerate(groups):
        grp.index = i
    return Partition(graph, groups, reasons)


REDUCIBLE = frozenset({Op.SUM, Op.MEAN, Op.VAR, Op.STD})


def attach_reductions(graph: Graph, group_of: dict[int, Group], reasons: dict[int, str],
                      position: dict[int, int], groups: list[Group]) -> None:
    """End a group with a ``sum``, ``mean``, ``var`` or ``std`` of one of its values, over the last axis or all
    axes: the kernel computes each row's elements into a scratch row, then sums it the way NumPy's own reduction
    loop does (``c_kernels.PAIRWISE``), so the reduced value never goes through memory and the result is NumPy's bit
    for bit (``var``/``std``: a second pass over the row sums the squared deviations from that mean). A ``var``
    or ``std`` of a value no group computes is a group of its own, reading that value."""
    for node in graph.nodes:
        if node.op not in REDUCIBLE:
            continue
        v = node.inputs[0]
        grp = group_of.get(id(v.node))
        if grp is None:
            if node.op not in SPREADS:
                continue  # (its reason stays: no group computes its operand)
            grp = Group(-1, [], v.type.shape, set(range(1, v.type.ndim)), [v])
            why = _why_not_reduce(graph, grp, node, position, external=True)
            if why is not None:
                reasons[id(node)] = f"a {node.op} of a value no group computes is a kernel of its own only if {why}"
                continue
            groups.append(grp)
        else:
            why = _why_not_reduce(graph, grp, node, position)
            if why is not None:
                reasons[id(node)] = f"a reduction fuses into the group that computes its operand only if {why}"
                continue
        ndim, axes = v.type.ndim, node.attrs["axis"]
        # all axes, however they are spelled (None, or every axis: a normalized tuple), reduce to one value: one row
        grp.reduce_split = 0 if axes is None or axes == tuple(range(ndim)) or ndim == 1 else ndim - 1
        grp.splits = {grp.reduce_split}
        grp.reduce = node
        grp.nodes.append(node)
        group_of[id(node)] = grp
        reasons.pop(id(node), None)


def _why_not_reduce(graph: Graph, grp: Group, node: Node, position: dict[int, int],
                    external: bool = False) -> str | None:
    """Why ``node`` cannot end ``grp`` (None: it can). ``external``: ``grp`` is new and only reads the operand,
    which others may read too."""
    v = node.inputs[0]
    if grp.reduce is not None:
        return "the group has no reduction yet"
    if grp.row is not None:
        return f"the group does not end with a {grp.row.op} already"
    if set(node.attrs) != ({"axis", "keepdims", "ddof"} if node.op in SPREADS else {"axis", "keepdims"}):
        return "it has no other attribute"
    if node.output.type.dtype != v.type.dtype or v.type.dtype.kind != "f":
        return "it keeps its float32 or float64 operand's dtype"
    if v.type.size == 0:
        return "it reduces at least one element"
    if not external and (len(v.users) != 1 or any(out is v for out in graph.outputs)):
        return "nothing else reads the value it reduces"
    if external and not all(type(d) is int for d in v.type.shape):
        return "its operand's sizes are static"
    ndim, axes = v.type.ndim, node.attrs["axis"]
    if node.op in SPREADS:
        count = v.type.size if axes is None or axes == tuple(range(ndim)) else v.type.shape[-1]
        ddof = node.attrs["ddof"]
        if type(ddof) is not int or not 0 <= ddof < count:
            return "its ddof is an int from 0 to the count of values less one (NumPy warns otherwise)"
    if axes is None or axes == tuple(range(ndim)):
        if not all(_pattern(u.type.shape, grp.shape, 1) in ("full", "scalar") for u in grp.inputs):
            return "(over all axes) every operand of the group is whole arrays or single elements"
    elif axes != (ndim - 1,) or ndim - 1 not in grp.splits and grp.split() is not None:
        return "it reduces the last axis or all axes, and the group's operands line up with that axis"
    members = {id(n) for n in grp.nodes}
    here = position[id(node)]
    for member in grp.nodes:  # the kernel now runs at the reduction: every value of the group must wait
        for out in member.outputs:
            if any(id(u) not in members and u is not node and position[id(u)] < here for u in out.users):
                return "no value of the group is read outside it before the reduction"
    return None


def _external(grp: Group, node: Node) -> list[Value]:
    members = grp.values
    return [v for v in node.inputs if v not in members and not is_literal(v)]


def _read_early(grp: Group, node: Node, position: dict[int, int]) -> bool:
    """Is a value of the group read outside it before ``node``? (The kernel runs where its last node is: if
    ``node`` joined, that reader would run before the value exists.)"""
    here = position[id(node)]
    members = {id(n) for n in grp.nodes}
    return any(id(u) not in members and u is not node and position[id(u)] < here
               for member in grp.nodes for v in member.outputs for u in v.users)


def _can_end_with_row(grp: Group, node: Node, position: dict[int, int]) -> bool:
    """Can the row op ``node`` end ``grp``, the group computing its operand? Only if the group's loop can run over
    the same rows (every operand lines up with them) and its weight and bias come from outside the group."""
    split = node.output.type.ndim - 1
    return (grp.row is None and grp.reduce is None and grp.shape == node.output.type.shape
            and len(grp.nodes) < MAX_GROUP_NODES and not _read_early(grp, node, position)
            and all(_pattern(v.type.shape, grp.shape, split) is not None for v in grp.inputs)
            and not any(v in grp.values for v in node.inputs[1:]))


def _can_join(grp: Group, node: Node, position: dict[int, int]) -> bool:
    if node.output.type.shape != grp.shape or len(grp.nodes) >= MAX_GROUP_NODES or grp.row is not None:
        return False
    if _read_early(grp, node, position):  # a user outside the group that runs before the kernel would miss it
        return False
    splits = set(grp.splits)
    for v in _external(grp, node):
        if _pattern(v.type.shape, grp.shape, 1) not in ("full", "scalar"):
            splits &= _splits(v.type.shape, grp.shape)
    needs_2d = any(_pattern(v.type.shape, grp.shape, 1) not in ("full", "scalar")
                   for v in grp.inputs + _external(grp, node))
    return bool(splits) or not needs_2d


def _can_merge(owners: list[Group], node: Node, position: dict[int, int]) -> bool:
    """Can the groups that ``node`` reads from become one group, with ``node`` in it?"""
    if any(g.shape != owners[0].shape or g.row is not None for g in owners):
        return False
    combined = Group(-1, sorted((n for g in owners for n in g.nodes), key=lambda n: position[id(n)]),
                     owners[0].shape, set.intersection(*(g.splits for g in owners)),
                     list(dict.fromkeys(v for g in owners for v in g.inputs)))
    members = combined.values
    combined.inputs = [v for v in combined.inputs if v not in members]
    return _can_join(combined, node, position)


def _merge(owners: list[Group], group_of: dict[int, Group], position: dict[int, int]) -> Group:
    first = owners[0]
    for other in owners[1:]:
        for n in other.nodes:
            group_of[id(n)] = first
        first.nodes += other.nodes
        first.splits &= other.splits
        first.literals.update(other.literals)
        first.inputs += [v for v in other.inputs if v not in first.inputs]
    first.nodes.sort(key=lambda n: position[id(n)])
    members = first.values
    first.inputs = [v for v in first.inputs if v not in members]
    return first


def _add(grp: Group, node: Node) -> None:
    for v in _external(grp, node):
        if v not in grp.inputs:
            grp.inputs.append(v)
            if _pattern(v.type.shape, grp.shape, 1) not in ("full", "scalar"):
                grp.splits &= _splits(v.type.shape, grp.shape)
    for v in node.inputs:
        if is_literal(v):
            grp.literals[v] = v.node.attrs["value"]
    grp.nodes.append(node)
