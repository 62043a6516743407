"""Loop regions: a ``for _ in range(n)`` loop kept as one ``fori_loop`` node instead of ``n`` unrolled copies.

compile() runs a loop's bytecode once per iteration, so by default a loop of ``n`` iterations becomes ``n``
copies of its body in the graph: capture, passes and code generation all grow with ``n``. When every iteration
would be captured the same way, the copies are the same computation applied to what the previous iteration left,
and a ``fori_loop`` region holds it once (what JAX users write by hand with ``lax.fori_loop``).

How a loop is kept (``RangeIterator.next_var``, run by ``FOR_ITER``):

1. The loop is over a ``range`` of at least ``MIN_TRIPS`` items (and unrolled it would be at least
   ``MIN_UNROLLED_NODES`` nodes, where a region pays), and its variable is stored by ``STORE_FAST`` and not
   assigned again in the body (``loop_variable``). When the function reads the variable, the body may depend on
   it only as a graph value (``loop_index.py``): ``A[i, 1:-1]``, ``A[i - 1]``, ``x * i`` are index and array
   operations whose int the body receives; a use by Python code that no graph shows (``if i == 5``,
   ``range(i)``, a slice ``A[i, :i]`` whose length changes) keeps the loop unrolled.
2. Iterations 0 and 1 are captured as always (iteration 1 with the loop variable as a graph value, when it is
   read). At the start of iterations 1 and 2 the Python state capture can read is written down
   (``loop_state.LoopState``; the loop variable apart). If the two states match, iteration 2 would be captured
   exactly as iteration 1 was, given the values the state holds and the item ``i`` is (which the graph receives):
   by induction every later iteration too.
3. The values paired by the two states say what the loop carries: a value iteration 1 reads and the state still
   holds at the start of iteration 2 is loop-invariant, one the state holds no more is carried, and what replaced
   it (computed by iteration 1) is its next value. Every value iteration 1 reads must be one of the two (or a
   constant or a size): else the loop stays unrolled.
4. The rewrite: iteration 1's nodes become the region's body, which runs for the iterations ``1 .. n-2``; its
   ``fori_loop`` node is placed before iteration 1's nodes, which are left where they are but read the loop's
   results: they compute the last iteration. So iteration 0 and the last iteration stay unrolled, and the Python
   state (which points at iteration 1's values) is right after the loop without any change. The iterator is
   then finished, as after the last item. The body's input ``i`` takes the range's items (a step of 1), and the
   constant that was iteration 1's ``i`` becomes the last item.

Anything else keeps the loop unrolled, which is always correct: a graph break inside the loop ends the capture
before step 2, a Python side effect breaks the graph, and Python state that changes from one iteration to the next
(a counter, a list that grows) makes the states differ. explain() says which loops were kept and why the others
were not (``loop_notes``).
"""

from __future__ import annotations

import weakref

from ...errors import InternalCaptureError
from ...ir.graph import Graph, Node
from ...ir.sizes import is_symbolic_graph
from ...ir.subgraphs import copy_graph
from ...ir.types import TensorType
from ...ops import SOURCE_OPS, Op, opdef
from ..tensor import TRACING_REGIONS
from .frame import CodeCache, IterState, instructions_of
from .loop_index import constant_indices, loop_variable
from .loop_state import LoopState, NotComparable

MIN_TRIPS = 8
"""The fewest iterations a loop must have to be kept as a region. A region costs a call of its body per iteration
where the unrolled copies run straight through, and it saves compile time in proportion to the iterations: below
this, unrolling is as cheap to compile and a little quicker to run (docs/performance.md has the figures)."""

MIN_UNROLLED_NODES = 1000
"""A loop is kept as a region only when unrolled it would be at least this many nodes. Below, unrolling compiles
in tens of milliseconds, and the unrolled code runs a little faster: a region adds a call per iteration and a
copy of the arrays it carries, and leaves one iteration unrolled (docs/performance.md: 0.77x against 0.95x eager
for a 20-step stencil of 280 nodes, the same speed at 1,000 steps, where compiling it unrolled takes 2 s)."""

INDEXED_BODY_FACTOR = 4
"""A loop whose body uses its variable (``A[i, 1:-1]``, ``x[:, 2 * i:2 * i + 2]``) is kept only when unrolled it
would be this many times ``MIN_UNROLLED_NODES``: unrolled, each index is a constant the backend builds C kernels
on, while the region's indices are known only when it runs (docs/performance.md: maxpool_fill, 1,040 nodes, 0.92x
eager as a region against 1.68x unrolled; seidel_rows at 200 rows, 7,524 nodes, the same speed both ways and a
first call 42x faster as a region)."""

_NO_INPUT_OPS = frozenset({Op.CONST, Op.SIZE})
"""Nodes that read nothing and compute the same value wherever they run: a body may read one made before it."""

_NOTES: "weakref.WeakKeyDictionary[Graph, list[str]]" = weakref.WeakKeyDictionary()


def loop_notes(graph: Graph) -> list[str]:
    """What happened to the loops of at least ``MIN_TRIPS`` iterations while ``graph`` was captured."""
    return _NOTES.get(graph, [])


def loop_iterator(ctx, iterable, items: list) -> IterState:
    """The iterator ``GET_ITER`` makes over ``items``: one that may keep its loop as a region when the iterable
    is a ``range`` long enough, else a plain one."""
    if type(iterable) is range and len(items) >= MIN_TRIPS:
        return RangeIterator(ctx, items)
    return IterState(items)


class RangeIterator(IterState):
    """The items of a ``range``, taken by ``FOR_ITER``, watching its loop's first iterations (module docstring)."""

    __slots__ = ("ctx", "frame", "for_iter", "variable", "reads_variable", "states", "marks", "refused", "root",
                 "kept")

    def __init__(self, ctx, items: list):
        super().__init__(items)
        self.ctx = ctx
        self.frame = None  # the frame and instruction index of the FOR_ITER taking the items
        self.for_iter = -1
        self.variable = None
        self.reads_variable = False  # (then iteration 1 gives it a LoopSource: loop_index.py)
        self.refused: str | None = None  # why iteration 1's use of the loop variable keeps the loop unrolled
        self.root = None  # the graph value of iteration 1's loop variable, once used (loop_index.graph_value)
        self.kept = False
        self.states: list[LoopState | None] = []  # the states at the start of iterations 0, 1 and 2
        self.marks: list[int] = []  # len(graph.nodes) at the start of iterations 0, 1 and 2

    def next_var(self):
        if self.ctx is not None and self.pos in (0, 1, 2):
            try:
                self._watch()
            except (NotKept, NotComparable) as refused:
                self._note(f"unrolled ({len(self.items)} iterations): {refused}")
                if self.root is not None:  # (unrolled, iteration 1 indexes with constants as the others do)
                    constant_indices(self.ctx, self.ctx.graph.nodes[self.marks[1]:], self.root)
                self.ctx = None
        var = super().next_var()
        if self.pos == 2 and self.ctx is not None and self.reads_variable and var is not None:
            var = loop_variable(self.ctx, self, var)
        return var

    def refuse(self, reason: str) -> None:
        """Iteration 1 used the loop variable in a way one body cannot hold: the loop stays unrolled."""
        if self.kept:  # (the states matched, so no value made from iteration 1's variable is left to use)
            raise InternalCaptureError(f"the loop variable of a loop kept as a region is used after it: {reason}")
        if self.refused is None:
            self.refused = reason

    def _watch(self) -> None:
        ctx, frame = self.ctx, self.ctx.frame
        if self.pos == 0:
            self.frame, self.for_iter = frame, frame.ip - 1
            if frame.instructions[self.for_iter].opname != "FOR_ITER":
                raise NotKept("the range is not iterated by a for statement")
            self.variable, self.reads_variable = loop_variable_stored(frame.code, self.for_iter)
        elif frame is not self.frame or frame.ip - 1 != self.for_iter:
            raise NotKept("the range is iterated by more than one loop")
        if TRACING_REGIONS:
            raise NotKept("the loop is inside a region being traced (F.cond, F.fori_loop...)")
        self.marks.append(len(ctx.graph.nodes))
        if self.pos == 0:  # (a state before the loop that cannot be compared only means iteration 0 stays unrolled)
            try:
                self.states.append(LoopState(ctx, self, self.variable))
            except NotComparable:
                self.states.append(None)
            return
        self.states.append(LoopState(ctx, self, self.variable))
        if self.pos == 1:
            return
        if self.refused is not None:
            raise NotKept(self.refused)
        start, first, second = self.states
        difference = first.difference(second)
        if difference is not None:
            raise NotKept(f"the Python state changes from one iteration to the next ({difference}), so later "
                          f"iterations may be captured differently")
        unrolled_nodes = len(self.items) * sum(node.op not in SOURCE_OPS for node in ctx.graph.nodes[self.marks[1]:])
        least = MIN_UNROLLED_NODES * (INDEXED_BODY_FACTOR if self.root is not None else 1)
        if unrolled_nodes < least:
            whose = " whose body uses the loop variable" if self.root is not None else ""
            raise NotKept(f"unrolled it is about {unrolled_nodes} nodes, under the {least} where a region{whose} "
                          f"pays for its cost per iteration")
        index = None
        if self.root is not None:
            values = [var.value for var in self.items]
            if any(b - a != 1 for a, b in zip(values, values[1:])):
                raise NotKept("the loop variable is read and the range's step is not 1")
            index = (self.root, values[0])
        from_start = start is not None and start.difference(first) is None
        body, peeled = keep_as_region(ctx.graph, self.marks, start if from_start else None, first, second,
                                      len(self.items), ctx.loc(), index)
        if self.root is not None:  # (iteration 1's nodes compute the last iteration)
            self.root.node.attrs["value"] = self.items[-1].value
        self.kept = True
        self.pos = len(self.items)
        frame.locals[self.variable] = self.items[-1]
        unrolled = "the last" if peeled == 1 else "the first and the last"
        self._note(f"kept as a fori_loop region: {len(self.items)} iterations ({unrolled} unrolled, "
                   f"{len(self.items) - peeled} in the region), body {body.count()} nodes")

    def _note(self, text: str) -> None:
        loc = self.frame.locations[self.for_iter + 1] if self.frame is not None else self.ctx.loc()
        notes = _NOTES.setdefault(self.ctx.graph, [])
        note = f"loop at {loc} {text}"
        if note not in notes:  # (an inner loop is met again on each iteration of the loop around it)
            notes.append(note)


class NotKept(Exception):
    """The loop stays unrolled; the message says why (explain() shows it)."""


_READS_A_LOCAL = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "DELETE_FAST"})
_READS_EVERY_LOCAL = frozenset({"locals", "vars", "eval", "exec"})
_variable_cache = CodeCache()


def loop_variable_stored(code, for_iter: int) -> tuple[str, bool]:
    """The name the loop at instruction ``for_iter`` stores its item in, and whether any instruction of ``code``
    reads it; raises ``NotKept`` when the body assigns it again (after the loop it would hold what the last
    iteration made it, not the last item) or the function may read every local at once."""
    key = (code, for_iter)
    known = _variable_cache.get(key)
    if known is None:
        known = _variable_cache.put(key, _loop_variable(code, for_iter))
    if isinstance(known, NotKept):
        raise known
    return known


def _loop_variable(code, for_iter: int):
    instructions = instructions_of(code)
    store = instructions[for_iter + 1]
    if store.opname == "STORE_FAST":
        name = store.argval
    elif store.opname == "STORE_FAST_LOAD_FAST":
        name = store.argval[0]
    else:
        return NotKept(f"the loop variable is stored by {store.opname}, not as a plain local")
    end = next((k for k, ins in enumerate(instructions) if ins.offset == instructions[for_iter].argval),
               len(instructions))
    read = False
    for k, ins in enumerate(instructions):
        stored = ins.argval if ins.opname in ("STORE_FAST", "DELETE_FAST") else \
            ins.argval[0] if ins.opname in ("STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST") else None
        also = ins.argval[1] if ins.opname == "STORE_FAST_STORE_FAST" else None
        if for_iter + 1 < k < end and name in (stored, also):
            return NotKept(f"the loop variable {name!r} is assigned in the loop's body "
                           f"({ins.positions.lineno if ins.positions else '?'})")
    for ins in instructions:
        read_now = ()
        if ins.opname in _READS_A_LOCAL:
            read_now = (ins.argval,)
        elif ins.opname == "LOAD_FAST_LOAD_FAST":
            read_now = ins.argval
        elif ins.opname == "STORE_FAST_LOAD_FAST":
            read_now = (ins.argval[1],)
        elif ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval in _READS_EVERY_LOCAL:
            return NotKept(f"the function calls {ins.argval}(), which may read the loop variable")
        if name in read_now:
            read = True
    return name, read


def keep_as_region(graph: Graph, marks: list[int], start: LoopState | None, first: LoopState,
                   second: LoopState, trips: int, loc, index=None) -> tuple[Graph, int]:
    """Rewrite the graph so that iteration 1's nodes (``graph.nodes[marks[1]:]``) compute the last iteration,
    after a ``fori_loop`` node running the iterations before it (see the module docstring). With ``start`` (the
    state before iteration 0, matching ``first``), the region runs iteration 0 too, and iteration 0's nodes are
    left unread (dead code, removed when the capture ends). ``index``: (the graph value of iteration 1's loop
    variable, the range's first item), when the body reads it: the body's ``i`` is then the item. Returns the
    body and how many iterations stay unrolled (1 or 2)."""
    body_nodes = graph.nodes[marks[1]:]
    made = {v for node in body_nodes for v in node.outputs}
    carried, invariant = _carried_and_invariant(first, second, made)
    for node in body_nodes:
        if node.op in (Op.INPUT, Op.PARAM) or not opdef(node.op).pure:
            raise NotKept(f"the body has a {node.op} node, which is not pure graph work")
    reads, read = [], set()
    for node in body_nodes:
        for v in node.inputs:
            if v in made or v in carried or v in read:
                continue
            if v not in invariant and v.node.op not in _NO_INPUT_OPS:
                raise NotKept(f"the body reads a value ({graph.node_text(v.node)}) the loop's Python state does "
                              f"not hold, so whether it changes from one iteration to the next is unknown")
            reads.append(v)
            read.add(v)
    carry = list(carried)
    body = _body_graph(body_nodes, carry, [carried[v] for v in carry], reads, loc,
                       None if index is None else index[0])
    if is_symbolic_graph(body):  # (a region's sizes are bound from its own inputs: not written for loops yet)
        raise NotKept("the body has symbolic sizes")
    initial = _initial_values(graph, marks, start, first, carry, reads) if start is not None else None
    at, lower, values = (marks[0], 0, [initial[v] for v in carry]) if initial is not None else (marks[1], 1, carry)
    while initial is not None and at < len(graph.nodes) and graph.nodes[at].op in _NO_INPUT_OPS and \
            any(v in read for v in graph.nodes[at].outputs):  # (past the nodes _initial_values moved there)
        at += 1
    first_item = 0 if index is None else index[1]
    bounds = [Node(Op.CONST, (), {"value": first_item + n}, (TensorType.of(n),), loc) for n in (lower, trips - 1)]
    operands = (bounds[0].output, bounds[1].output, *values, *reads)
    attrs = {"body": body}
    loop = Node(Op.FORI_LOOP, operands, attrs, opdef(Op.FORI_LOOP).infer(tuple(v.type for v in operands), attrs), loc)
    graph.nodes[at:at] = [*bounds, loop]
    final = dict(zip(carry, loop.outputs))
    for node in body_nodes:
        if any(v in final for v in node.inputs):
            node.inputs = tuple(final.get(v, v) for v in node.inputs)
    return body, 1 if initial is not None else 2


def _initial_values(graph: Graph, marks: list[int], start: LoopState, first: LoopState, carry: list,
                    reads: list) -> dict | None:
    """What each carried value was before iteration 0, when the region can run iteration 0 too: iteration 0's
    nodes are pure, and what the body reads as it is was there before iteration 0 (constants and sizes made by
    iteration 0 are moved before it). None when it cannot."""
    iteration_0 = graph.nodes[marks[0]:marks[1]]
    if any(not opdef(node.op).pure for node in iteration_0):
        return None
    initial: dict = {}
    for before, after in zip(start.values, first.values):
        if initial.setdefault(after, before) is not before or before.type != after.type:
            return None
    if any(initial.get(v, v) is not v for v in reads):  # a value the body reads as it is changed in iteration 0
        return None
    made_in_0 = {id(node) for node in iteration_0}
    hoisted = [v.node for v in reads if id(v.node) in made_in_0]
    if any(node.op not in _NO_INPUT_OPS for node in hoisted):
        return None
    if any(v not in initial for v in carry):
        return None
    for node in hoisted:  # (they read nothing: running them earlier changes nothing)
        graph.nodes.remove(node)
        graph.nodes.insert(marks[0], node)
    return initial


def _carried_and_invariant(first: LoopState, second: LoopState, made: set) -> tuple[dict, set]:
    """The values the loop carries (value at the start of iteration 1 -> at the start of iteration 2) and those
    it leaves as they are."""
    carried, invariant = {}, set()
    for before, after in zip(first.values, second.values):
        if before is after:
            invariant.add(before)
        elif carried.setdefault(before, after) is not after:
            raise NotKept("one value at the start of iteration 1 is replaced by two different ones at the start "
                          "of iteration 2")
        elif after not in made:
            raise NotKept("a value carried to the next iteration is not computed by the iteration (values swapped "
                          "or passed along, as in `a, b = b, a`)")
        elif before.type != after.type:
            raise NotKept(f"a carried value changes type from {before.type} to {after.type}")
    both = invariant.intersection(carried)
    if both:
        raise NotKept("a value is both carried to the next iteration and kept as it is (two names for it, one "
                      "rebound in the loop)")
    return carried, invariant


def _body_graph(body_nodes: list[Node], carry: list, carry_out: list, reads: list, loc, index=None) -> Graph:
    """The region: inputs ``(i, *carry, *reads)``, iteration 1's nodes copied, outputs ``(*next carry, *reads)``;
    ``index``, iteration 1's loop variable, is the input ``i``."""
    body = Graph("loop_body")
    i = body.add_input("i", TensorType.of(1), loc)
    mapping = {v: body.add_input(f"carry{k}", v.type, loc) for k, v in enumerate(carry)}
    if index is not None:
        mapping[index] = i
    mapping.update({v: body.add_input(f"read{k}", v.type, loc) for k, v in enumerate(reads)})
    for node in body_nodes:
        if index is not None and node is index.node:
            continue
        copy = Node(node.op, tuple(mapping[v] for v in node.inputs), _own_regions(node),
                    tuple(v.type for v in node.outputs), node.loc)
        body.nodes.append(copy)
        mapping.update(zip(node.outputs, copy.outputs))
    body.outputs = [mapping[v] for v in carry_out] + [mapping[v] for v in reads]
    body.remove_dead_code()
    return body


def _own_regions(node: Node) -> dict:
    """``node``'s attributes for a copy of it: its regions copied too (the original stays in the last iteration,
    and a region belongs to one node), at every depth."""
    if not node.regions:
        return node.attrs
    attrs = dict(node.attrs)
    for key in opdef(node.op).regions:
        region = copy_graph(attrs[key])
        for inner in region.nodes:
            inner.attrs = _own_regions(inner)
        attrs[key] = region
    return attrs
