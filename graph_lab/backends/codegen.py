"""The ``codegen`` backend: the graph written once as straight-line NumPy source, run with no per-node dispatch,
and with the buffers of dead intermediates reused through ``out=``.

The source is ``g.code``'s (``python_source.generate``), plus ``out=`` where the buffer planner found a dead array
of the same shape and dtype::

    v5 = np.multiply(v3, v4)                  # f32[512,4096]
    v6 = np.tanh(v5, out=v3)                  # f32[512,4096]   v3 is dead here: its memory is reused

Reuse must never change a result, so the planner is conservative:

- Only ufunc calls and ``matmul`` write into a given buffer (NumPy computes the same bits with or without
  ``out=``), and only when every array operand has the result's shape (no broadcasting) and is C-contiguous.
  The buffer is C-contiguous too, so the result has the memory order it would have had: a later reduction sums
  in the same order.
- A buffer is reused only after the last use of its value *and of every value that may share its memory* (a
  reshape, a transpose, an index or a split of it may be a view). An op not known to return fresh memory is
  assumed to alias all its operands.
- Inputs, parameters and constants are never written; neither is anything a graph output may alias.
- Whether an input is C-contiguous is known only at run time, so two functions are generated: with ``out=``
  (called when every input and parameter is C-contiguous) and without.

Arrays smaller than ``min_bytes`` are left alone: NumPy's allocator is cheap for them and the keyword costs time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ir.sizes import is_symbolic_graph
from ..ops import SOURCE_OPS, Op
from ..ops.aliasing import FRESH_FAMILIES, FRESH_OPS, returns_fresh  # noqa: F401  (codegen's names too)
from . import python_source
from .inplace import copied_update_statement, in_place_statement, in_place_updates, writes_in_place
from .options import MIN_BUFFER_BYTES


# Views whose result is C-contiguous whenever their operand is.
C_VIEW_OPS = frozenset({Op.RESHAPE, Op.EXPAND_DIMS, Op.SQUEEZE})


@dataclass
class Step:
    """One line of the generated function: a node, or a fused kernel standing for several nodes."""

    node: Node
    """The node the line is written for (a kernel's last node)."""
    inputs: tuple[Value, ...]
    outputs: tuple[Value, ...]
    fresh: bool
    """Its results are new C-ordered arrays (when its operands are C-ordered) sharing memory with nothing."""
    takes_out: str | None = None
    """"ufunc", "matmul" or "kernel" when the line may write into a given buffer."""
    into: Value | None = None
    """The operand an update written in place writes into (``inplace.py``): its result is that operand's memory."""
    same_element: bool = False
    """A kernel line that reads element k of its operands only to write element k of its results, as a ufunc
    does: an operand of its shape may be its output buffer, if no other operand is a view of it."""


@dataclass
class BufferPlan:
    """Which lines write into which dead buffers."""

    out: dict[int, Value] = field(default_factory=dict)
    """id(step node) -> the value whose array the line writes into."""
    reused_bytes: int = 0
    """Bytes of allocation saved per call."""
    workspace: dict[int, tuple] = field(default_factory=dict)
    """id(step node) -> (shape, dtype) of a buffer kept between calls that the line writes into: a large
    intermediate for which no dead buffer is free (its memory is then reused by later lines like any other)."""
    workspace_bytes: int = 0
    outs: dict[int, dict[int, Value]] = field(default_factory=dict)
    """id(step node) -> {output position: donated input} for a kernel line with several results, some of which
    it computes in the caller's arrays they are copied into."""

    def describe(self, graph: Graph) -> list[str]:
        numbering = graph.numbering()
        by_id = {id(n): n for n in graph.nodes}
        return [f"{graph.node_text(by_id[i], numbering)} writes into the buffer of %{numbering[v]}"
                for i, v in self.out.items()] + \
               [f"{graph.node_text(by_id[i], numbering)} writes into a buffer kept between calls"
                for i in self.workspace] + \
               [f"{graph.node_text(by_id[i], numbering)} computes result {k} in the array of input %{numbering[x]}"
                for i, outs in self.outs.items() for k, x in outs.items()]


def node_steps(graph: Graph, in_place: dict[int, Value] | None = None) -> list[Step]:
    """One step per operation node (what ``codegen`` writes). ``in_place``: the updates written into their base
    (``inplace.in_place_updates``), whose results are not new memory."""
    steps = []
    in_place = in_place or {}
    for node in graph.nodes:
        if node.op in SOURCE_OPS:
            continue
        takes = "ufunc" if python_source.numpy_ufunc(node) is not None else None
        if node.op == Op.MATMUL and not node.attrs:
            takes = "matmul"
        fresh = returns_fresh(node) and id(node) not in in_place
        steps.append(Step(node, node.inputs, node.outputs, fresh, takes, into=in_place.get(id(node))))
    return steps


def _nbytes(v: Value) -> int:
    return v.type.size * v.type.dtype.itemsize


def largest_result_bytes(graph: Graph) -> int:
    """The size in bytes of the graph's largest operation result (0 for a graph with no operation)."""
    return largest_result(graph, lambda t: t.size * t.dtype.itemsize)


def largest_results(graph: Graph) -> tuple[int, int]:
    """``(largest_result(graph, elements), largest_result_bytes(graph))`` in one walk, for a graph whose sizes
    are all static (the fused backend asks both of the same graph)."""
    elements = nbytes = 0
    prod = math.prod  # (``TensorType.size``, without a call of the property per type)
    for t in result_types(graph):
        size = prod(t.shape)
        if size > elements:
            elements = size
        size *= t.dtype.itemsize
        if size > nbytes:
            nbytes = size
    return elements, nbytes


def largest_result(graph: Graph, measure: Callable) -> int:
    """The largest ``measure(type)`` of the graph's operation results (0 for a graph with no operation)."""
    largest = 0
    for t in result_types(graph):
        largest = max(largest, measure(t))
    return largest


def result_types(graph: Graph) -> list:
    """The types of the graph's operation results, each type object once (nodes share them: a type rule gives
    the same object for the same operands)."""
    types, measured = [], set()
    for node in graph.nodes:
        if node.op in SOURCE_OPS:
            continue
        for v in node.outputs:
            t = v.type
            if id(t) not in measured:
                measured.add(id(t))
                types.append(t)
    return types


def plan_buffers(graph: Graph, steps: list[Step], min_bytes: int = MIN_BUFFER_BYTES,
                 workspace: bool = True, donated: dict[str, int] | None = None) -> BufferPlan:
    """Give lines that can write into a buffer the buffer of a value nothing reads any more, or (``workspace``)
    a buffer kept between calls when none is free. An input *donated* to the graph (``donated``: input name ->
    the output copied into its array when the graph has run, see ``compile_captured``) takes that output and the
    chain of elementwise lines that leads to it from the input's last reader (``_spines``): for ``v *= m;
    v -= lr * g`` the lines ``np.multiply(v8, v12, out=v8)`` and ``np.subtract(v13, v15, out=v8)``, as eager
    NumPy writes into ``v`` itself, and the copy back finds nothing to do."""
    finals = _donated_finals(graph, donated)  # the written-back output -> the input array it may be computed in
    never = 1 << 60
    position = {id(s.node): i for i, s in enumerate(steps)}
    last_use: dict[Value, int] = {}
    for i, s in enumerate(steps):
        for v in s.inputs:
            last_use[v] = i
    for v in graph.outputs:
        last_use[v] = never

    c_order = c_ordered_values(graph, steps)
    roots: dict[Value, frozenset] = {}  # the buffers (fresh values) a value may share memory with
    for node in graph.nodes:
        if node.op in SOURCE_OPS:
            roots[node.output] = frozenset()
    for x in finals.values():  # (tracked as buffers, to know when the last view of one is read)
        roots[x] = frozenset([x])
    for s in steps:
        for v in s.outputs:
            roots[v] = frozenset([v]) if s.fresh else roots[s.into] if s.into is not None else \
                frozenset().union(*(roots[u] for u in s.inputs))

    live_until: dict[Value, int] = {}
    for v, rs in roots.items():
        for r in rs:
            live_until[r] = max(live_until.get(r, -1), last_use.get(v, position.get(id(v.node), -1)))

    def big_enough(v: Value) -> bool:
        return c_order[v] and v.type.ndim > 0 and _nbytes(v) >= min_bytes

    def reusable(r: Value) -> bool:  # a buffer whose memory may be taken over once it is dead
        return big_enough(r) and live_until.get(r, never) < never and r.node.op not in SOURCE_OPS

    def fits(s: Step, out: Value | None, smallest: int = min_bytes) -> bool:
        # (a matmul or a kernel writes a C-ordered result whatever its operands' layout; a ufunc's result order
        # follows its operands', so it takes a buffer only when they all have its shape and C order)
        return bool(s.takes_out) and out is not None and c_order[out] and out.type.ndim > 0 and \
            _nbytes(out) >= smallest and (s.takes_out != "ufunc" or _operands_fit(s, out, c_order))

    plan = BufferPlan()
    free: dict[tuple, list[Value]] = {}
    # (into a donated array at any size: that saves the call copying it back, which costs more than the keyword)
    into, in_donated = _spines(steps, finals, live_until, last_use, lambda s, o: fits(s, o, 0), roots)
    for i, s in enumerate(steps):
        out = s.outputs[0] if len(s.outputs) == 1 else None
        if s.takes_out == "kernel" and out is None:
            donated_outs = {k: x for k, o in enumerate(s.outputs) if fits(s, o, 0)
                            and (x := _donated_buffer(s, o, i, finals.get(o), live_until, roots)) is not None}
            if donated_outs:
                plan.outs[id(s.node)] = donated_outs
        if fits(s, out) or i in into:
            key = (out.type.shape, out.type.dtype)
            buffer = into.get(i)
            if buffer is None and s.takes_out == "ufunc":
                buffer = _in_place_operand(s, out, i, live_until, roots, reusable)
            if buffer is None and free.get(key):
                buffer = free[key].pop()
            if buffer is not None:
                plan.out[id(s.node)] = buffer
                plan.reused_bytes += _nbytes(out)
        for r in {r for v in s.inputs for r in roots[v]}:
            if live_until.get(r) == i and reusable(r) and r is not plan.out.get(id(s.node)) and r not in in_donated:
                free.setdefault((r.type.shape, r.type.dtype), []).append(r)
    if workspace:
        _keep_between_calls(plan, steps, fits, reusable)
    return plan


def _keep_between_calls(plan: BufferPlan, steps: list[Step], fits, reusable) -> None:
    """Give a buffer kept between calls to each fresh array whose memory, through the lines that write into it
    afterwards, never becomes a result: a result must be new memory on every call (the next call would overwrite
    it), while an intermediate that NumPy would allocate again on every call need not be."""
    holder: dict[Value, Value] = {}  # value -> the value that first got its memory
    chains: dict[Value, list[Value]] = {}
    for s in steps:
        out = s.outputs[0] if len(s.outputs) == 1 else None
        if out is None:
            continue
        buffer = plan.out.get(id(s.node))
        first = holder.get(buffer, buffer) if buffer is not None else out
        holder[out] = first
        chains.setdefault(first, []).append(out)
    for s in steps:
        out = s.outputs[0] if len(s.outputs) == 1 else None
        if out is None or id(s.node) in plan.out or not fits(s, out):
            continue
        if all(reusable(v) for v in chains.get(out, [out])):
            plan.workspace[id(s.node)] = (out.type.shape, out.type.dtype)
            plan.workspace_bytes += _nbytes(out)


def c_ordered_values(graph: Graph, steps: list[Step]) -> dict[Value, bool]:
    """Which values are C-contiguous whenever the inputs and parameters are (a test checks this claim on every
    sample): fresh results of C-ordered operands, and reshapes, expand_dims and squeezes of C-ordered values."""
    c_order: dict[Value, bool] = {}
    for node in graph.nodes:
        if node.op in SOURCE_OPS:
            value = node.attrs.get("value")
            c_order[node.output] = (node.op != Op.CONST or not isinstance(value, np.ndarray)
                                    or value.flags.c_contiguous)
    for s in steps:
        operands_c = all(c_order[v] for v in s.inputs)
        for v in s.outputs:
            c_order[v] = operands_c and (s.fresh or s.node.op in C_VIEW_OPS)
    return c_order


def _operands_fit(s: Step, out: Value, c_order: dict[Value, bool]) -> bool:
    """Every array operand has the result's shape and is C-ordered; scalars may be anything."""
    for v in s.inputs:
        if v.type.ndim == 0:
            continue
        if v.type.shape != out.type.shape or not c_order[v]:
            return False
    return True


def _donated_finals(graph: Graph, donated: dict[str, int] | None) -> dict[Value, Value]:
    """``final output -> donated input`` for the outputs copied into an input's array that appear once among the
    outputs (an update chain is written in the array already: ``inplace.py``)."""
    if not donated:
        return {}
    inputs = {n.attrs["name"]: n.output for n in graph.nodes if n.op == Op.INPUT}
    count: dict[Value, int] = {}
    for v in graph.outputs:
        count[v] = count.get(v, 0) + 1
    finals = {}
    for name, index in donated.items():
        x, final = inputs.get(name), graph.outputs[index] if 0 <= index < len(graph.outputs) else None
        if x is not None and final is not None and count[final] == 1 and final.node.op not in SOURCE_OPS and \
                final.type.shape == x.type.shape and final.type.dtype == x.type.dtype:
            finals[final] = x
    return finals


def _donated_buffer(s: Step, out: Value, i: int, x: Value | None, live_until, roots) -> Value | None:
    """The donated input ``x`` for the line computing its final value ``out``, if nothing reads ``x`` or a view of
    it later (an elementwise line may read it itself: NumPy's ufuncs write in place element by element)."""
    if x is None or not s.fresh:
        return None
    last = live_until.get(x, -1)
    return x if last < i or (last == i and _writes_over_operands(s, x, roots)) else None


def _writes_over_operands(s: Step, x: Value, roots) -> bool:
    """May line ``s``, which reads ``x``, write its result into ``x``'s array? A ufunc may (NumPy copies overlapping
    operands itself); an elementwise kernel when it reads ``x`` itself and no view of it."""
    if s.takes_out == "ufunc":
        return True
    return s.same_element and all(u is x or x not in roots[u] for u in s.inputs)


def _spines(steps: list[Step], finals: dict[Value, Value], live_until, last_use, fits, roots
            ) -> tuple[dict[int, Value], set[Value]]:
    """For each donated input ``x`` and its final value: the lines that may compute in ``x``'s array (line index ->
    ``x``), and the values they make (whose memory is then never free). They are the final value's line and,
    back from it, the ufunc lines each of whose results only the next of them reads, up to one that reads ``x``
    (``v13 = v8 * m`` in ``v16 = v13 - v15``); nothing may read ``x`` or a view of it after the first of them."""
    producer = {v: i for i, s in enumerate(steps) for v in s.outputs}
    into: dict[int, Value] = {}
    in_donated: set[Value] = set()
    for final, x in finals.items():
        if final not in producer:
            continue
        chain = [producer[final]]
        while x not in steps[chain[-1]].inputs and steps[chain[-1]].takes_out == "ufunc":
            here, value = chain[-1], steps[chain[-1]].outputs[0]
            before = [u for u in steps[here].inputs if u in producer and last_use.get(u) == here and
                      u.type.shape == value.type.shape and u.type.dtype == value.type.dtype and
                      steps[producer[u]].fresh and steps[producer[u]].takes_out == "ufunc"]
            if not before:
                break
            chain.append(producer[next((u for u in before if x in steps[producer[u]].inputs), before[0])])
        first, last_read = chain[-1], live_until.get(x, -1)
        if last_read > first or (last_read == first and not _writes_over_operands(steps[first], x, roots)):
            continue
        if all(len(steps[j].outputs) == 1 and fits(steps[j], steps[j].outputs[0]) for j in chain):
            for j in chain:
                into[j] = x
                in_donated.add(steps[j].outputs[0])
    return into, in_donated


def _in_place_operand(s: Step, out: Value, i: int, live_until, roots, reusable) -> Value | None:
    """An operand that dies at this very line, is its own buffer, and is read by no other operand's view."""
    for v in s.inputs:
        if roots[v] != frozenset([v]) or live_until.get(v) != i or not reusable(v):
            continue
        if v.type.shape != out.type.shape or v.type.dtype != out.type.dtype:
            continue
        others = [u for u in s.inputs if u is not v]
        if any(v in roots[u] for u in others):
            continue
        return v
    return None


# Binary ufuncs whose Python-number operand is passed as a 0-d array of the result's dtype (see scalar_operands).
SCALAR_OPERAND_OPS = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.DIV})
SCALAR_OPERAND_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32),
                                   np.dtype(np.int64)})


def scalar_operands(graph: Graph) -> dict[int, dict[int, np.ndarray]]:
    """``id(node) -> {operand position: 0-d array}`` for the lines that may take their Python number as a 0-d
    array: ``np.multiply(consts[2], v2)`` instead of ``np.multiply(0.5, v2)``.

    Under NumPy 2's rules (NEP 50) a Python number next to an array is *weak*: it is converted to the array's dtype
    and the same loop runs. A 0-d array of that dtype holding the converted value runs that loop too, bit for bit,
    and skips the conversion of a Python object on every call (about 0.1 us, a quarter of a small ufunc call).
    Only where nothing else can change: ``+ - * /`` with one Python number and one array operand, the array's
    dtype the result's (float32, float64, int32 or int64), a float for a float array and an int for an int array,
    and a value that converts without overflow."""
    table: dict[int, dict[int, np.ndarray]] = {}
    const = Op.CONST
    for node in graph.nodes:
        # (the cheap tests first: most nodes are not + - * / of a constant)
        if node.op not in SCALAR_OPERAND_OPS or node.attrs or len(node.inputs) != 2 or \
                (node.inputs[0].node.op != const and node.inputs[1].node.op != const):
            continue
        ufunc = python_source.numpy_ufunc(node)
        if ufunc is None or getattr(np, ufunc.__name__, None) is not ufunc:
            continue
        dtype = node.output.type.dtype
        if dtype not in SCALAR_OPERAND_DTYPES:
            continue
        for pos, (v, other) in enumerate([(node.inputs[0], node.inputs[1]), (node.inputs[1], node.inputs[0])]):
            if v.node.op != Op.CONST or other.type.ndim == 0 or other.type.dtype != dtype:
                continue
            value = v.node.attrs.get("value")
            if type(value) is float and dtype.kind == "f":
                fits = not math.isfinite(value) or abs(value) <= float(np.finfo(dtype).max)
            elif type(value) is int and dtype.kind == "i":
                fits = int(np.iinfo(dtype).min) <= value <= int(np.iinfo(dtype).max)
            else:
                fits = False
            if fits:
                table.setdefault(id(node), {})[pos] = np.array(value, dtype)
    return table


def out_statement(plan: BufferPlan | None, scalars: dict[int, dict[int, np.ndarray]] | None = None,
                  in_place: dict[int, Value] | None = None
                  ) -> Callable[[Any, python_source._Context], tuple[str, str] | None] | None:
    """The ``statement`` hook of ``python_source.generate`` that adds ``out=`` to the planned lines (``plan``), passes
    the Python numbers of ``scalars`` (``scalar_operands``) as 0-d arrays and writes the updates of ``in_place``
    into their base (and the other updates into a copy of it, by subscript)."""
    outs = plan.out if plan is not None else {}
    scalars = scalars or {}
    in_place = in_place or {}

    kept = plan.workspace if plan is not None else {}

    def statement(node, ctx):
        if id(node) in in_place and node.op in (Op.INDEX_UPDATE, Op.WHERE):
            return in_place_statement(node, ctx, in_place)
        if node.op == Op.INDEX_UPDATE:
            return copied_update_statement(node, ctx)
        buffer, zero_d = outs.get(id(node)), scalars.get(id(node))
        if id(node) in kept:
            buffer = workspace_buffer(kept[id(node)], ctx)
        if id(node) in in_place:  # a ufunc computed in the window it updates (``view_writes.py``)
            buffer = in_place[id(node)]
        if buffer is None and zero_d is None:
            return None
        if zero_d is None:
            call = python_source.expression(node, ctx)
        else:
            args = [ctx.passed_in(zero_d[i]) if i in zero_d else ctx.var(v) for i, v in enumerate(node.inputs)]
            call = f"np.{python_source.numpy_ufunc(node).__name__}({', '.join(args)})"
        assert call.endswith(")")
        comment = f"{node.output.type}"
        if zero_d is not None:
            comment += "".join(f"   {repr(a.item())} as a 0-d {a.dtype} array" for a in zero_d.values())
        if buffer is None:
            return f"{ctx.var(node.output)} = {call}", comment
        target = buffer if isinstance(buffer, str) else ctx.var(buffer)
        code = f"{ctx.var(node.output)} = {call[:-1]}, out={target})"
        return code, f"{comment}   {'kept between calls' if isinstance(buffer, str) else 'reuses ' + target}"
    return statement


def workspace_buffer(key: tuple, ctx) -> str:
    """A buffer kept between calls, made now (``np.empty`` touches no memory until the first call writes it) and
    passed to the generated code as a constant: ``consts[4]``."""
    shape, dtype = key
    return ctx.passed_in(np.empty(shape, dtype))


@dataclass
class Generated:
    """The source of the two functions and what they need."""

    plain: python_source.PyCode
    """Without ``out=``: valid for any inputs."""
    reusing: python_source.PyCode
    """With ``out=``: valid when every input and parameter is C-contiguous."""
    plan: BufferPlan
    in_place: int = 0
    """How many updates write into their base's memory (``inplace.in_place_updates``)."""


def generate(graph: Graph, min_bytes: int = MIN_BUFFER_BYTES, *, straight_static: bool = False,
             largest_bytes: int | None = None, donated: dict[str, int] | None = None) -> Generated:
    """The two functions for ``graph`` (``straight_static``: as ``python_source.generate``'s; ``largest_bytes``:
    ``largest_result_bytes(graph)`` when the caller knows it already; ``donated``: as ``in_place_updates``')."""
    scalars = scalar_operands(graph)
    in_place = in_place_updates(graph, donated)
    plain = python_source.generate(graph, out_statement(None, scalars, in_place), straight_static=straight_static)
    # (a symbolic graph's buffer sizes are known only at run time, and a graph whose results are all smaller than
    # min_bytes has no line that may write into a buffer, unless into a donated array: neither gets a plan)
    if (not straight_static and is_symbolic_graph(graph)) or not donated and \
            (largest_result_bytes(graph) if largest_bytes is None else largest_bytes) < min_bytes:
        plan = BufferPlan()
    else:
        plan = plan_buffers(graph, node_steps(graph, in_place), min_bytes, donated=donated)
    reusing = (python_source.generate(graph, out_statement(plan, scalars, in_place), straight_static=straight_static)
               if plan.out or plan.workspace else plain)
    return Generated(plain, reusing, plan, writes_in_place(in_place))


def compile_source(code: python_source.PyCode, extra: dict[str, Callable] | None = None) -> Callable:
    """``forward(inputs, params, consts)`` from generated source (checked by ``python_source`` to hold no user text)."""
    namespace = python_source.namespace(code, extra)
    exec(compile(code.text, python_source.FILENAME, "exec"), namespace)
    return namespace["forward"]
