"""C programs: one C function for a whole run of consecutive slice updates of a graph.

A time-stepped stencil code unrolled into a graph is a sequence of statements, each an in-place update of a slice
computed from slices of the same few arrays::

    B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])      # statement 1
    A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])      # statement 2
    ...                                                 # 40 statements for 20 steps

On small grids each statement alone is too small for a kernel call to pay (``cost.MIN_ELEMENTS``), and NumPy
spends its time dispatching its calls. Here consecutive statements become one C function: one loop nest per
statement, in program order, each reading and writing the arrays (the *buffers*) in place, so that a later
statement sees what an earlier one wrote, as the eager code does. The cost model then judges the whole run.

A statement is an ``index_update`` that ``inplace.py`` writes into its base's memory, with a static key, whose
value any node a fused kernel computes makes (``c_statement_ops``: C's arithmetic is NumPy's bit for bit, in the
same order) from static views of buffers, rolls of them (``roll_reads``), whole buffers, 0-d values and Python
numbers; a running sum is a statement too (``scan_statements``). NumPy computes the right-hand side fully before
it writes: a statement reading the written buffer elsewhere than at the written element computes into scratch
memory, then copies. An update not written in place computes into a copy of its base, and a *temporary* (a value
only statements read) into an array of its own, which the call makes and returns. A value an update writes into
a window and later statements read is read there, as the window, while no statement has written over it since
(``_unread_windows``).

Moving a statement's nodes to the run's one call changes *when* they run. ``_simulate`` replays the graph in that
new order (``reordering``) and keeps a statement only where every node still reads the versions of the buffers
it read in the graph (else the statement is left to NumPy, and the runs are formed again); the C code and the call
are in ``c_program_code``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ops import Op
from .c_kernels import literal_ok
from .c_statement_matmul import MANY_PRODUCTS, PRODUCT_CALLS, MatmulCall, matmul_leaf, operand_views
from .cost import MIN_ELEMENTS, GroupCost
from .program_layouts import Layout, is_buffer, read_layout, view_layout
from .program_memory import interval, needs_scratch, overlap, place_temporaries
from .reordering import SHAPE_ONLY, first_stale
from .c_statement_ops import computes, leaf_dtype, leaves_ok, statement_dtype_ok
from .scan_statements import scan_statements
from .returned_temporaries import leaves_the_call, may_leave
from .roll_reads import reads_rolls, rolled_read
from .stencil import _c_strides, _layout

@dataclass(eq=False)
class Statement:
    """One slice update computed by one loop nest of a program: written in place, into a copy of its base (an
    update not written in place), or a temporary (an array of arithmetic that only statements read)."""

    node: Node
    """The ``index_update``, or the last arithmetic node of a temporary."""
    shape: tuple[int, ...]
    """The written slice's shape: the loop nest's."""
    dtype: np.dtype
    nodes: list[Node]
    """The arithmetic nodes, in graph order."""
    leaves: dict[Value, tuple[Value, Layout]]
    """Each value the arithmetic reads -> (the value it views, or itself, and the layout read)."""
    views: list[Node]
    """The view nodes among the leaves (taken into the program when only programs read them)."""
    literals: dict[Value, float]
    write: Layout
    made: bool = False
    """The result is a new array the call makes (an update not in place, a temporary)."""
    scratch: bool = False
    """The right-hand side reads the written buffer elsewhere: computed into scratch first."""
    matmuls: dict[Value, MatmulCall] = field(default_factory=dict)
    """The products of views of buffers the statement computes first (``c_statement_matmul``), by result."""

    @property
    def base(self) -> Value | None:
        """The array the update writes into (in place) or copies (not in place); None for a temporary."""
        return self.node.inputs[0] if self.node.op == Op.INDEX_UPDATE else None

    @property
    def value(self) -> Value:
        return self.node.inputs[1] if self.node.op == Op.INDEX_UPDATE else self.node.output

    @property
    def result(self) -> Value:
        return self.node.output

    def execution(self) -> list[Node]:
        return self.nodes + ([self.node] if self.base is not None else [])

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def work(self) -> int:
        """The elements the statement computes: its slice's, and its products' multiply-adds."""
        return self.elements + sum(c.work for c in self.matmuls.values())

    def sources(self) -> list[Value]:
        """The buffers and numbers the statement reads (a product's operands for the product)."""
        return [source for leaf, (source, _) in self.leaves.items() if leaf not in self.matmuls] + \
            [source for c in self.matmuls.values() for source, _ in c.operands]

    def ops(self) -> int:
        return sum(1 for n in self.nodes if n.op != Op.ROLL)  # (a roll is read in place; every other node computes)


@dataclass(eq=False)
class Program:
    """A run of statements computed by one C function (``program<index>`` in the generated code)."""

    index: int
    statements: list[Statement]
    buffers: list[Value]
    """The arrays the function reads and writes, each as the value it holds when the run starts (call order)."""
    made: list[Value]
    """The new arrays the call makes and returns (after ``buffers`` in the C function's parameters)."""
    scalars: list[tuple[Value, np.dtype]]
    """0-d values and scalar inputs read, with the dtype they are read in (NumPy converts a Python number to the
    array's dtype): passed as one-element arrays after the buffers."""
    buffer_of: dict[Value, int]
    """Every version or view of a buffer the statements read or write -> its position in ``buffers``."""
    numbers: tuple[int, int] = (0, 0)
    """The first and last statement's number among the graph's slice updates (1-based), for explain()."""
    absorbed: list[Node] = field(default_factory=list)
    """Every node the call computes: the statements' views, arithmetic and updates."""
    decision: object = None
    kernel: object = None
    function: object = None
    """The loaded C function, once compiled."""
    trips: int = 1
    """How many times one call runs the statements (a loop body's program: ``c_loops``)."""
    internal: dict[Value, int] = field(default_factory=dict)
    """The temporaries among ``made`` that only the program reads -> their byte offset in the memory block the
    call allocates for them (``program_memory``): not returned."""
    arena_bytes: int = 0
    table: object = None
    """The statements' integers, as the array the C function reads them from (``c_program_code._Numbers``)."""

    @property
    def call_name(self) -> str:
        return f"program{self.index}"

    @property
    def call_node(self) -> Node:
        return self.statements[-1].node

    @property
    def bases(self) -> list[Value]:
        """The call's arguments."""
        return self.buffers + [v for v, _ in self.scalars]

    def taken(self) -> list[Node]:
        return self.absorbed

    def execution(self) -> list[Node]:
        """The nodes the call computes, in the order it computes them: statement after statement."""
        return [n for s in self.statements for n in s.execution()]

    def make_kernel(self):
        from .c_program_code import program_kernel  # (that module reads this one's records)
        return program_kernel(self)

    def make_call(self, fn, graph: Graph):
        from .c_program_code import program_call
        self.function = fn  # (a loop whose body is this program calls it once for all iterations: c_loops)
        return program_call(fn, self, graph)

    def statement(self, node: Node, ctx) -> tuple[str, str]:
        from .c_program_code import program_statement
        return program_statement(self, node, ctx)

    def results(self) -> list[Value]:
        return [s.result for s in self.statements]

    def worth_a_call(self) -> bool:
        """Enough elements for a C call to pay (``MIN_ELEMENTS``), or products enough that NumPy's calls for them
        cost more than one C call whatever their size."""
        products = sum(len(s.matmuls) for s in self.statements) * self.trips
        return self.elements >= MIN_ELEMENTS or products >= MANY_PRODUCTS

    @property
    def elements(self) -> int:
        """The elements one call computes (a product's multiply-adds count too), over all its iterations."""
        return sum(s.work for s in self.statements) * self.trips

    def cost(self) -> GroupCost:
        """NumPy runs each op and each write as a call over its slice; the function reads each operand and
        writes each result once (a scratch statement twice); all of it once per iteration."""
        size, item = max(self.elements, MIN_ELEMENTS if self.worth_a_call() else 1), self.statements[0].dtype.itemsize
        calls = sum(s.ops() + (s.base is not None) for s in self.statements) * self.trips
        products = [c for s in self.statements for c in s.matmuls.values()]
        calls += sum(PRODUCT_CALLS for _ in products) * self.trips
        product_bytes = sum(c.bytes for c in products) * self.trips
        numpy_bytes = sum((3 * s.ops() + 2) * s.elements * item for s in self.statements) * self.trips + product_bytes
        kernel_bytes = sum((len(s.leaves) + 1 + 2 * s.scratch) * s.elements * item
                           for s in self.statements) * self.trips + product_bytes
        arithmetic = sum(s.ops() * s.elements + s.work - s.elements for s in self.statements) * self.trips / size
        # (each number is made a one-element array and each new array allocated, a NumPy call each, per call)
        return GroupCost(size, calls, numpy_bytes, (), arithmetic, len(self.bases) + len(self.made), kernel_bytes,
                         copies=len(self.scalars) + len(self.made))

    def describe(self) -> str:
        first, last = self.numbers
        span = f"statement {first}" if first == last else f"statements {first}..{last}"
        updates = sum(s.base is not None for s in self.statements)
        temporaries = f", {len(self.statements) - updates} temporary arrays" if updates < len(self.statements) else ""
        rolls = sum(reads_rolls(s.leaves) for s in self.statements)
        temporaries += f", {rolls} rolls read in place" if rolls else ""
        span = span if updates else "arithmetic on rolls"
        return f"one C function for {span} ({updates} slice updates{temporaries}, {self.elements} elements" + (
            f" over {self.trips} iterations)" if self.trips > 1 else ")")


# --- finding statements


def updated_elements(graph: Graph) -> int:
    """An upper bound of the elements all of a graph's statements write (a cheap test before looking for them);
    at least ``MIN_ELEMENTS`` with ``MANY_PRODUCTS`` products, which may be worth one call whatever their size."""
    sizes = (n.inputs[0].type.size for n in graph.nodes if n.op == Op.INDEX_UPDATE)
    products = sum(n.op == Op.MATMUL for n in graph.nodes)
    return sum(size for size in sizes if type(size) is int) + (MIN_ELEMENTS if products >= MANY_PRODUCTS else 0)


def find_statements(graph: Graph, in_place: dict[int, Value], apart: set[Value] = frozenset()) -> dict[int, Statement]:
    """id(node) -> its ``Statement``, for every update a program can compute, then every temporary: arithmetic
    that no statement computes and only arithmetic and updates read. ``apart``: values written into a window that
    the update must not compute itself (a reader cannot read them from the window: ``_unread_windows``)."""
    returned = {id(v) for v in graph.outputs}
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    found, windows = {}, {}
    for node in graph.nodes:
        if node.op == Op.INDEX_UPDATE and node.inputs[0].type.ndim and is_buffer(node.inputs[0]):
            s = _statement(node, returned, position, id(node) not in in_place, windows, apart)
            if s is not None:
                found[id(node)] = s
                if s.value.node in s.nodes:
                    windows[s.value] = node
    claimed = {id(n) for s in found.values() for n in s.nodes} | set(found)
    # (readers first: a temporary is read by statements and temporaries only; a 0-d one too, as durbin's alpha
    # and beta, which statements before and after the one writing them read)
    for node in reversed(graph.nodes):
        if len(node.outputs) == 1 and computes(node.output, node.output.type.shape, node.output.type.dtype) and \
                id(node) not in claimed:
            read_by_statements = id(node.output) not in returned and node.output.users and \
                all(id(u) in claimed for u in node.output.users)
            s = _statement(node, returned, position, True, windows) if read_by_statements or \
                may_leave(node, found) else None
            if s is not None and (read_by_statements or leaves_the_call(s, found)):  # (returned_temporaries)
                found[id(node)] = s
                claimed |= {id(n) for n in s.nodes} | {id(node)}
    found.update(scan_statements(graph, found, claimed, read_layout, Statement))
    return found


def _statement(node: Node, returned: set[int], position: dict[int, int], made: bool, windows: dict[Value, Node],
               apart: set[Value] = frozenset()) -> Statement | None:
    """``windows``: value -> the update before this node that computes it and writes it into a window: a later
    statement reads it there (``window_reads`` makes an op read the value written, not the window)."""
    if node.op == Op.INDEX_UPDATE:
        if len(node.inputs) != 2 or node.attrs.get("mode") is not None:
            return None  # (an index array, or ``np.add.at``'s accumulation: not a plain write)
        base, value = node.inputs
        layout = _layout(base.type.shape, node.attrs["key"])
        if layout is None:
            return None
        write, shape = layout[:2], layout[2]
        update = node
    else:  # a temporary: the whole array, C-ordered
        base, value, update, shape = node.output, node.output, None, node.output.type.shape
        write = (0, _c_strides(shape))
    dtype = base.type.dtype
    if not statement_dtype_ok(dtype) or value.type.dtype != dtype or value.type.weak is not None:
        return None
    if value.type.shape not in (shape, ()):
        return None
    nodes, leaves, literals = [], [], {}
    arithmetic = (lambda v: id(v) not in returned and computes(v, shape, dtype))
    if update is None:
        pending, inside = [node], {id(node)}
    elif arithmetic(value) and (len(value.users) == 1 or _read_in_window(value, update, shape, apart)):
        pending, inside = [value.node], {id(value.node), id(update)}
    else:
        pending, inside, leaves = [], set(), [value]
    shared: dict[Value, None] = {}  # values read by the tree that other nodes may read too
    while pending:
        n = pending.pop()
        nodes.append(n)
        for v in n.inputs:
            if v.type.weak is not None and v.node.op == Op.CONST and literal_ok(v.node.attrs["value"]) \
                    and type(v.node.attrs["value"]) is not bool:
                literals[v] = v.node.attrs["value"]
            elif arithmetic(v) and id(v.node) not in inside:
                shared[v] = None
            elif not arithmetic(v):
                leaves.append(v)
        if not pending:  # a value all of whose readers are in the tree is computed in it (once)
            pending = [v.node for v in shared if all(id(u) in inside for u in v.users)]
            for n in pending:
                inside.add(id(n))
                del shared[n.output]
    leaves += list(shared)
    read, views, matmuls = {}, [], {}
    tree = {id(n) for n in nodes}
    for leaf in dict.fromkeys(leaves):
        own = all(id(u) in tree for u in leaf.users) or (leaf is value and update is not None and
                                                         _read_in_window(value, update, shape, apart))
        call = matmul_leaf(leaf, dtype, is_buffer) if own and leaf not in windows else None
        if isinstance(call, MatmulCall):
            matmuls[leaf] = call
            read[leaf] = (leaf, (0, _c_strides(shape) if leaf.type.shape else (0,) * len(shape)))
            nodes.append(leaf.node)
            views += operand_views(call)
            continue
        writer = windows.get(leaf)
        read_as = leaf_dtype(leaf, dtype)
        rolled = rolled_read(leaf, shape, read_as, read_layout) if leaf.node.op == Op.ROLL and writer is None and \
            leaf.node.inputs[0] not in windows and all(id(u) in inside for u in leaf.users) else None
        if rolled is not None:  # (the roll is computed in the statement: read in place, with its wrap-around)
            read[leaf] = rolled
            nodes.append(leaf.node)
            views += [v.node for v in leaf.node.inputs if v is not rolled[0]]
            continue
        where = read_layout(leaf, shape, read_as) if writer is None else \
            view_layout(writer.output, writer.attrs["key"], leaf.type, shape, read_as)
        if where is None:
            return None
        read[leaf] = where
        if where[0] is not leaf and writer is None:
            views.append(leaf.node)
    if not leaves_ok(nodes, read, dtype):
        return None
    nodes.sort(key=lambda n: position[id(n)])
    return Statement(node, shape, dtype, nodes, read, views, literals, write, made, matmuls=matmuls)


def _read_in_window(value: Value, update: Node, shape: tuple[int, ...], apart: set[Value]) -> bool:
    """The update may compute ``value`` (read by other ops too): they are arithmetic or updates that can read it
    from the window written (checked per run: ``_unread_windows``)."""
    return value not in apart and value.type.shape == shape and \
        all(u is update or u.op == Op.INDEX_UPDATE or computes(u.output, u.output.type.shape, u.output.type.dtype)
            for u in value.users)


# --- runs of statements, checked against the graph's order


def find_programs(graph: Graph, in_place: dict[int, Value], taken: set[int] = frozenset(),
                  trips: int = 1) -> list[Program]:
    """The runs of consecutive statements (no other slice update between them), each as a ``Program`` whose
    re-ordered execution reads what the graph reads; no decision yet. ``trips``: the graph is a loop body one
    call may run that many times (``c_loops``)."""
    numbers = {id(n): i for i, n in enumerate((n for n in graph.nodes if n.op == Op.INDEX_UPDATE), 1)}
    apart: set[Value] = set()
    dropped = set(taken)
    statements = {k: s for k, s in find_statements(graph, in_place).items() if k not in dropped}
    while True:
        runs = _runs(graph, statements)
        unread = _unread_windows(runs)
        if unread:  # (checked first: a reader that read the value itself would seem to read it too early)
            apart |= unread
            statements = {k: s for k, s in find_statements(graph, in_place, apart).items() if k not in dropped}
            continue
        bad = _simulate(graph, in_place, runs)
        if bad is None:
            break
        statements.pop(id(bad.node))
        dropped.add(id(bad.node))
    programs = []
    for run in runs:
        if all(s.base is None and not reads_rolls(s.leaves) for s in run) or \
                not any(s.ops() or s.matmuls for s in run):
            continue  # temporaries alone are the partition's elementwise groups (unless they read rolls, which
            # groups do not); copies alone cost NumPy no more
        programs.append(_program(graph, run, len(programs), numbers))
        programs[-1].trips = trips
    return programs


def _runs(graph: Graph, statements: dict[int, Statement]) -> list[list[Statement]]:
    """Maximal runs of statements with no other slice update, and no node reading a buffer a statement of the
    run wrote before it, between them."""
    runs: list[list[Statement]] = []
    claimed = {id(n) for s in statements.values() for n in s.nodes} | set(statements)
    returned = {id(v) for v in graph.outputs}
    open_run: list[Statement] = []
    written: set[Value] = set()
    roots: dict[Value, Value] = {}
    for node in graph.nodes:
        s = statements.get(id(node))
        if s is not None:
            root = s.result if s.made else roots.get(s.base, s.base)
            roots[s.result] = root
            open_run.append(s)
            written.add(root)
            continue
        if node.op == Op.INDEX_UPDATE:
            roots[node.output] = roots.get(node.inputs[0], node.inputs[0])
        if node.op == Op.INDEX and len(node.inputs) == 1:
            roots[node.output] = roots.get(node.inputs[0], node.inputs[0])
            if id(node.output) not in returned and all(id(u) in claimed for u in node.output.users):
                continue  # (a view reads nothing: its readers do; one read outside is a read here)
        if id(node) in claimed:
            continue
        reads = node.inputs[1:] if node.op in SHAPE_ONLY else node.inputs
        if open_run and (node.op == Op.INDEX_UPDATE or any(roots.get(v, v) in written for v in reads)):
            runs.append(open_run)
            open_run, written = [], set()
    if open_run:
        runs.append(open_run)
    return runs


def _unread_windows(runs: list[list[Statement]]) -> set[Value]:
    """The values an update computes (so no array holds them) that a reader cannot read from the window it wrote:
    the reader is not a later statement of the same run, or a statement between them wrote into that window."""
    unread = set()
    for run in runs:
        statement_of = {id(n): k for k, s in enumerate(run) for n in s.execution()}
        roots: dict[Value, Value] = {}
        for s in run:
            roots[s.result] = s.result if s.made else roots.get(s.base, s.base)
        for i, u in enumerate(run):
            if u.base is None or u.value.node not in u.nodes:
                continue
            window = interval(*u.write, u.shape)
            for reader in u.value.users:
                k = statement_of.get(id(reader), -1)
                if reader is u.node:
                    continue
                if k <= i or run[k].leaves.get(u.value, (None,))[0] is not u.result or any(
                        roots[t.result] is roots[u.result] and overlap(interval(*t.write, t.shape), window)
                        for t in run[i + 1:k]):
                    unread.add(u.value)
    return unread


def _simulate(graph: Graph, in_place: dict[int, Value], runs: list[list[Statement]]) -> Statement | None:
    """Replay the graph with each run's nodes moved to its last update (``reordering``); the first statement that
    would read another version than the graph's, or the first of the run holding back a write a node left in
    place needs (or None)."""
    moves = [([n for s in run for n in s.execution()], run[-1].node) for run in runs]
    stale = first_stale(graph, in_place, moves)
    if stale is None:
        return None
    k, node = stale
    return next((s for s in runs[k] if node is s.node or node in s.nodes), runs[k][0])


def _program(graph: Graph, run: list[Statement], index: int, numbers: dict[int, int]) -> Program:
    buffers, made, scalars, buffer_of = [], [], [], {}
    for s in run:
        for v in [*s.sources(), *([s.base] if s.base is not None else [])]:
            if v in buffer_of:
                continue
            if v.type.ndim == 0:
                if (v, leaf_dtype(v, s.dtype)) not in scalars:
                    scalars.append((v, leaf_dtype(v, s.dtype)))
            else:
                buffer_of[v] = len(buffers)
                buffers.append(v)
        if s.made:
            buffer_of[s.result] = -1 - len(made)  # (numbered after the buffers below)
            made.append(s.result)
        else:
            buffer_of[s.result] = buffer_of[s.base]
        s.scratch = needs_scratch(s, buffer_of)
    for v, k in buffer_of.items():
        if k < 0:
            buffer_of[v] = len(buffers) - 1 - k
    inside = {id(n) for s in run for n in s.execution()}
    views = []
    for s in run:
        for n in s.views:
            if n not in views and all(id(u) in inside for u in n.output.users) and \
                    all(v is not n.output for v in graph.outputs):
                views.append(n)
    order = {id(n): i for i, n in enumerate(graph.nodes)}
    absorbed = sorted(views + [n for s in run for n in s.execution()], key=lambda n: order[id(n)])
    updates = [numbers[id(s.node)] for s in run if s.node.op == Op.INDEX_UPDATE] or [0]
    p = Program(index, run, buffers, made, scalars, buffer_of, (updates[0], updates[-1]), absorbed)
    p.internal, p.arena_bytes = place_temporaries(run, {id(n) for n in absorbed}, {id(v) for v in graph.outputs})
    return p
