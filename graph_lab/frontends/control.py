"""Explicit control flow for every frontend: ``F.cond``, ``F.while_loop``, ``F.fori_loop`` and ``F.scan``.

On NumPy arrays each runs now, with jax.lax semantics. On stand-in tensors (``trace``, ``LazyRunner``,
``compile``, ``script``) each becomes one node of a control-flow op whose regions hold the traced functions: every
branch and loop body is called once on stand-ins of its own (a ``RegionRecorder``), so both branches of a ``cond``
are in the graph, and a loop's trip count is decided when the graph runs, not when it is captured.

A region is isolated (see ``ops/control.py``). When a traced function reads a tensor of the enclosing capture
that it was not given (a closure: ``lambda h: h @ w``), the region gets an input for it and the node an extra
operand: the value is *lifted*, as JAX's closure conversion does. A loop carries lifted values along unchanged.

One rule keeps eager and captured runs identical: a Python number that enters or leaves a region (an operand, a
carry, a branch's result) becomes a NumPy scalar of its default dtype (``0`` -> ``np.int64(0)``), eagerly too,
since a graph value has an array type.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Any, Callable

import numpy as np

from ..errors import TraceError
from ..ir.graph import Graph, Value
from ..ir.source import SourceLoc
from ..ir.types import TensorType
from ..ops import Op
from ..ops.control import RegionFn, _fori_loop, _scan, _while_loop
from . import pytree
from .recorder import TRACING_REGIONS, Recorder
from .tensor import Storage, Tensor

_PYTHON_NUMBERS = (bool, int, float, complex)


class RegionRecorder(Recorder):
    """Records one region of a control-flow node into its own graph, inside the capture ``parent``."""

    inputs_mutable = False

    def __init__(self, parent: Recorder, op: Op, key: str):
        self.parent = parent
        """The capture the node is recorded into (a trace, a lazy runner, a script, or another region)."""
        self.op, self.key = op, key
        self.kind = parent.kind
        self.depth = parent.depth + 1
        self.shape_env = parent.shape_env
        self.graph = Graph(key)
        """The region graph being recorded: its inputs are the node's operands, in order."""
        self.captured: list[Tensor] = []
        """Tensors of ``parent`` this region read without being given them, in order of first use."""
        self.names_outside: Callable[[Tensor], str | None] = lambda t: None
        """Names a lifted tensor (for its input node); the frontend sets it (closure variables, script names)."""
        self._lifted: dict[Value, Tensor] = {}

    def add_node(self, node) -> None:
        self.graph.nodes.append(node)

    def location(self) -> SourceLoc | None:
        return self.parent.location()

    def inside(self, rec) -> bool:
        """Whether this region is inside the capture ``rec`` (at any depth)."""
        outer = self.parent
        while True:
            if outer is rec:
                return True
            if not isinstance(outer, RegionRecorder):
                return False
            outer = outer.parent

    # --- inputs

    def add_input(self, name: str, type: TensorType) -> Tensor:
        """A new input of the region, and the stand-in the traced function is given for it."""
        taken = set(self.graph.input_names)
        unique, n = name, 1
        while unique in taken:
            unique, n = f"{name}_{n}", n + 1
        value = self.graph.add_input(unique, type)  # (its line is the control-flow node's, printed above it)
        return Tensor(self, value, Storage(f"input {unique!r} of region {self.key} of {self.op}"))

    def lift(self, t: Tensor, name: str | None = None) -> Tensor:
        """This region's stand-in for ``t``, a tensor of an enclosing capture: an input fed from outside."""
        outer = t if t._rec is self.parent else self.parent.lift(t)
        inner = self._lifted.get(outer._value)
        if inner is None:
            source = outer._value.node  # an input or parameter of the graph around keeps its name
            named = source.attrs["name"] if source is not None and source.op in (Op.INPUT, Op.PARAM) else None
            inner = self.add_input(name or self.names_outside(outer) or named or "captured", outer.type)
            self._lifted[outer._value] = inner
            self.captured.append(outer)
        return inner

    def operand_value(self, x, loc: SourceLoc | None) -> Value:
        if isinstance(x, Tensor) and x._rec is not self and self.inside(x._rec):
            x._check_fresh(loc)
            return self.lift(x)._value
        return super().operand_value(x, loc)

    # --- what a region cannot do

    def concretize(self, t: Tensor, kind: str):
        loc = self.location()
        raise TraceError(f"a tensor ({t.type}) is needed as a Python {kind} inside region {self.key} of {self.op}, "
                         f"at {loc.describe() if loc else 'unknown location'}; a region is traced once for all "
                         f"the values it will see, so it cannot branch on one. Use F.where, or a nested F.cond / "
                         f"F.while_loop")

    def check_writable(self, root: Tensor) -> None:
        if root._rec is not self or root._storage.is_input:
            what = f"the {root._storage.is_input}" if root._rec is self else "an array from outside the region"
            raise self.fail(f"in-place write into {what} inside region {self.key} of {self.op}: a region cannot "
                            f"write into a value that comes from outside it (eagerly the write would change that "
                            f"array; in a graph it would be lost). Copy it first (y = x.copy()) or return a new "
                            f"value")

    # --- finishing

    def output(self, leaf) -> Value:
        """A region output: one of its tensors, a lifted tensor from outside, or a constant (a Python number
        stays one: a cond whose branches both give Python floats gives a Python float, as eager code does)."""
        return self.operand_value(leaf, self.location())

    def lifted_name(self, t: Tensor) -> str | None:
        inner = self._lifted.get(t._value)
        return inner._value.node.attrs["name"] if inner is not None else None

    def order_inputs(self, first: list[Tensor], union: list[Tensor], last: list[Tensor] = (),
                     siblings: tuple["RegionRecorder", ...] = ()) -> None:
        """Make the inputs ``first``, then one per tensor of ``union`` (lifted by any region of the node, so each
        region gets an input for each, used or not, named as the region that lifted it named it), then ``last``."""
        names = [next((n for n in (r.lifted_name(t) for r in siblings) if n), None) for t in union]
        lifted = [self.lift(t, name) for t, name in zip(union, names)]
        inputs = [t._value.node for t in [*first, *lifted, *last]]
        others = [n for n in self.graph.nodes if n.op != Op.INPUT]
        self.graph.nodes = inputs + others


def to_array_scalar(x):
    """A Python number as a NumPy scalar of its default dtype (what a graph value holds); anything else as is."""
    if type(x) in _PYTHON_NUMBERS:
        return np.asarray(x)[()]
    return x


def type_of(x) -> TensorType:
    if isinstance(x, Tensor):
        return x.type
    try:
        return TensorType.of(to_array_scalar(x))
    except TypeError:
        raise TraceError(f"an operand of a control-flow op must be an array or a number, got "
                         f"{type(x).__name__}") from None


# --- finding the capture to record into


def _closure_values(fn) -> list:
    cells = getattr(fn, "__closure__", None) or ()
    values = []
    for cell in cells:
        try:
            values.append(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    extra = getattr(fn, "closure_values", None)  # script's functions, which are not Python closures
    return values + (list(extra()) if callable(extra) else [])


def _tensors_in(values) -> list[Tensor]:
    found = []
    for leaf in (leaf for _, leaf in pytree.flatten(list(values))[0]):
        if isinstance(leaf, Tensor):
            found.append(leaf)
    return found


def recorder_of(values, functions=()) -> Recorder | None:
    """The innermost capture among the stand-ins in ``values`` and in the closures of ``functions``."""
    tensors = _tensors_in(values) + _tensors_in(v for f in functions for v in _closure_values(f))
    recorders = {id(t._rec): t._rec for t in tensors}.values()
    return max(recorders, key=lambda r: r.depth, default=None)


def input_names(fn, arg_trees: list) -> list[str]:
    """Names for the flattened arguments of ``fn``: its parameter names, with paths into nested arguments
    (``val[0]``, ``p['w']``)."""
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    params += [f"arg{i}" for i in range(len(params), len(arg_trees))]
    return [path for name, tree in zip(params, arg_trees) for path in _paths(tree, name)]


def _paths(tree, prefix: str) -> list[str]:
    kind, keys, children = tree
    if kind == "leaf":
        return [prefix]
    labels = keys if kind == "dict" else range(len(children))
    return [path for label, child in zip(labels, children) for path in _paths(child, f"{prefix}[{label!r}]")]


def closure_namer(fn) -> Callable[[Tensor], str | None]:
    """Names an outer tensor after the closure variable of ``fn`` that holds it, if one does."""
    code = getattr(fn, "__code__", None)
    cells = dict(zip(code.co_freevars, getattr(fn, "__closure__", None) or ())) if code is not None else {}

    def name(t: Tensor) -> str | None:
        for var, cell in cells.items():
            try:
                if isinstance(cell.cell_contents, Tensor) and cell.cell_contents._value is t._value:
                    return var
            except ValueError:  # an empty cell
                pass
        return None
    return name


# --- tracing one region


class Traced:
    """A function traced into a region: its recorder (and graph), its explicit inputs and its output structure."""

    def __init__(self, rec: RegionRecorder, inputs: list[Tensor], out_tree: Any):
        self.rec, self.inputs, self.out_tree = rec, inputs, out_tree

    @property
    def graph(self) -> Graph:
        return self.rec.graph


def trace_region(parent: Recorder, op: Op, key: str, fn: Callable[..., Any], types: list[TensorType],
                 names: list[str], namer: Callable[[Tensor], str | None] | None = None) -> Traced:
    """Call ``fn(*stand_ins)`` with one stand-in per type and record what it does into a new region graph.

    ``fn`` returns the region's result (any nest of tensors, arrays and numbers); its leaves become the region's
    outputs, and its structure is kept in ``Traced.out_tree``. Dead code inside the region is removed."""
    rec = RegionRecorder(parent, op, key)
    if namer is not None:
        rec.names_outside = namer
    inputs = [rec.add_input(name, t) for name, t in zip(names, types)]
    with tracing(rec):
        result = fn(*inputs)
    leaves, out_tree = pytree.flatten(result)
    rec.graph.outputs = [rec.output(leaf) for _, leaf in leaves]
    rec.graph.remove_dead_code()
    return Traced(rec, inputs, out_tree)


@contextmanager
def tracing(rec: RegionRecorder):
    """While the body runs, ``rec`` is the innermost region being traced (see ``current_recorder``)."""
    TRACING_REGIONS.append(rec)
    try:
        yield rec
    finally:
        TRACING_REGIONS.remove(rec)


def lifted_union(*regions: Traced) -> list[Tensor]:
    """Every tensor any of the regions lifted, once each, in order of first use."""
    seen, union = set(), []
    for r in regions:
        for t in r.rec.captured:
            if t._value not in seen:
                seen.add(t._value)
                union.append(t)
    return union


def predicate(value, where: str):
    """A branch or loop condition as a bool scalar, as Python's ``bool(value)`` reads it."""
    if not isinstance(value, Tensor):
        return np.bool_(bool(value))
    if value.size != 1:
        raise value._rec.fail(f"the truth value of an array with more than one element is ambiguous ({value.type}, "
                              f"{where}); reduce it first with .any() or .all()")
    if value.shape != ():
        value = value.reshape(())
    return value if value.dtype == np.bool_ else value != 0


# --- F.cond, F.while_loop, F.fori_loop, F.scan


def _same_tree(what: str, expected, got, detail: str) -> None:
    if expected != got:
        raise TraceError(f"{what}: {detail} (the structure of nested tuples, lists and dicts must match; "
                         f"got {got!r}, expected {expected!r})")


def cond(pred, true_fn: Callable, false_fn: Callable, *operands):
    """``true_fn(*operands) if pred else false_fn(*operands)``; on a stand-in ``pred``, a ``cond`` node holding both
    branches, traced on stand-ins of the operands (which must be arrays or numbers, or nests of them)."""
    leaves, tree = pytree.flatten(operands)
    values = [to_array_scalar(leaf) for _, leaf in leaves]
    rec = recorder_of([pred, *values], (true_fn, false_fn)) if isinstance(pred, Tensor) else None
    if rec is None:  # a predicate known now: Python's own if, as eager code runs it
        args = pytree.unflatten(tree, values)
        return true_fn(*args) if pred else false_fn(*args)
    types = [type_of(v) for v in values]
    branches = [trace_region(rec, Op.COND, key, lambda *ins, fn=fn: fn(*pytree.unflatten(tree, list(ins))), types,
                             input_names(fn, tree[2]), closure_namer(fn))
                for key, fn in (("then", true_fn), ("else", false_fn))]
    then, orelse = branches
    _same_tree("F.cond", then.out_tree, orelse.out_tree, "the two branches return different structures")
    union = lifted_union(then, orelse)
    for b in branches:
        b.rec.order_inputs(b.inputs, union, siblings=(then.rec, orelse.rec))
    outs = rec.emit(Op.COND, [predicate(pred, "the predicate of F.cond"), *values, *union],
                    {"then": then.graph, "else": orelse.graph})
    return pytree.unflatten(then.out_tree, list(outs))


def _flat(value, tree, what: str) -> list:
    leaves, got = pytree.flatten(value)
    _same_tree(what, tree, got, "the loop body must return the carry's structure")
    return [to_array_scalar(leaf) for _, leaf in leaves]


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """``val = init_val; while cond_fun(val): val = body_fun(val)``; returns ``val`` (any nest of arrays)."""
    leaves, tree = pytree.flatten(init_val)
    values = [to_array_scalar(leaf) for _, leaf in leaves]

    def test(*carry):
        return [cond_fun(pytree.unflatten(tree, list(carry)))]

    def body(*carry):
        return _flat(body_fun(pytree.unflatten(tree, list(carry))), tree, "F.while_loop")

    rec = recorder_of(values, (cond_fun, body_fun))
    if rec is None:
        return pytree.unflatten(tree, list(_while_loop(*values, cond=RegionFn(test), body=RegionFn(body))))
    types = [type_of(v) for v in values]
    cond_r = trace_region(rec, Op.WHILE_LOOP, "cond", lambda *c: predicate(test(*c)[0], "the loop condition"),
                          types, input_names(cond_fun, [tree]), closure_namer(cond_fun))
    body_r = trace_region(rec, Op.WHILE_LOOP, "body", body, types, input_names(body_fun, [tree]),
                          closure_namer(body_fun))
    union = carry_lifted(cond_r, body_r)
    outs = rec.emit(Op.WHILE_LOOP, [*values, *union], {"cond": cond_r.graph, "body": body_r.graph})
    return pytree.unflatten(tree, list(outs[:len(values)]))


def carry_lifted(*regions: Traced, inputs_before: int | None = None, outputs_before: int | None = None) \
        -> list[Tensor]:
    """Make what the regions of a loop lifted part of its carry. Every region gets an input for each lifted value
    after its first ``inputs_before`` inputs (default: after all), and the body, the last region, returns each
    unchanged after its first ``outputs_before`` outputs (default: after all). Returns the lifted outer tensors."""
    union = lifted_union(*regions)
    for r in regions:
        cut = len(r.inputs) if inputs_before is None else inputs_before
        r.rec.order_inputs(r.inputs[:cut], union, r.inputs[cut:], tuple(x.rec for x in regions))
    body = regions[-1]
    cut = len(body.graph.outputs) if outputs_before is None else outputs_before
    passed = [body.rec.lift(t)._value for t in union]
    body.graph.outputs = body.graph.outputs[:cut] + passed + body.graph.outputs[cut:]
    return union


def fori_loop(lower, upper, body_fun: Callable, init_val):
    """``val = init_val; for i in range(lower, upper): val = body_fun(i, val)``; returns ``val``. ``i`` has the
    type of ``lower``: a Python int for a Python bound, as ``range`` gives."""
    leaves, tree = pytree.flatten(init_val)
    values = [to_array_scalar(leaf) for _, leaf in leaves]

    def body(i, *carry):
        return _flat(body_fun(i, pytree.unflatten(tree, list(carry))), tree, "F.fori_loop")

    rec = recorder_of([lower, upper, *values], (body_fun,))
    if rec is None:
        return pytree.unflatten(tree, list(_fori_loop(lower, upper, *values, body=RegionFn(body))))
    index_type = lower.type if isinstance(lower, Tensor) else TensorType.of(lower)
    names = input_names(body_fun, [("leaf", None, ()), tree])
    body_r = trace_region(rec, Op.FORI_LOOP, "body", body, [index_type] + [type_of(v) for v in values], names,
                          closure_namer(body_fun))
    union = carry_lifted(body_r)
    outs = rec.emit(Op.FORI_LOOP, [lower, upper, *values, *union], {"body": body_r.graph})
    return pytree.unflatten(tree, list(outs[:len(values)]))


def scan(f: Callable, init, xs=None, length: int | None = None):
    """``carry = init; for x in xs: carry, y = f(carry, x)``; returns ``(carry, ys)`` with the ys stacked along a
    new first axis. ``xs`` is an array or a nest of arrays scanned along their first axis (or None: give
    ``length``)."""
    c_leaves, c_tree = pytree.flatten(init)
    carry = [to_array_scalar(leaf) for _, leaf in c_leaves]
    x_leaves, x_tree = pytree.flatten(xs) if xs is not None else ([], None)
    xs_flat = [leaf for _, leaf in x_leaves]
    if length is None:
        if not xs_flat:
            raise TraceError("F.scan: give length= when there is nothing to scan over (xs is None)")
        length = xs_flat[0].shape[0] if isinstance(xs_flat[0], Tensor) else int(np.shape(xs_flat[0])[0])
    y_tree: list = []

    def body(*values):
        x = pytree.unflatten(x_tree, list(values[len(carry):])) if x_tree is not None else None
        result = f(pytree.unflatten(c_tree, list(values[:len(carry)])), x)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise TraceError("F.scan: f(carry, x) must return a pair (new carry, y)")
        y_leaves, tree = pytree.flatten(result[1])
        y_tree[:] = [tree]
        return _flat(result[0], c_tree, "F.scan") + [to_array_scalar(leaf) for _, leaf in y_leaves]

    in_types = [type_of(v) for v in carry] + [_slice_type(x) for x in xs_flat]
    rec = recorder_of([*carry, *xs_flat], (f,))
    if rec is None:
        region = RegionFn(body, lambda *values: _abstract_types(body, [type_of(v) for v in values]))
        out = _scan(*carry, *xs_flat, body=region, n_carry=len(carry), length=length)
        return pytree.unflatten(c_tree, list(out[:len(carry)])), pytree.unflatten(y_tree[0], list(out[len(carry):]))
    names = input_names(f, [c_tree] + ([x_tree] if x_tree is not None else []))
    body_r = trace_region(rec, Op.SCAN, "body", body, in_types, names, closure_namer(f))
    union = carry_lifted(body_r, inputs_before=len(carry), outputs_before=len(carry))
    n_carry = len(carry) + len(union)
    outs = rec.emit(Op.SCAN, [*carry, *union, *xs_flat], {"n_carry": n_carry, "length": length,
                                                           "body": body_r.graph})
    return pytree.unflatten(c_tree, list(outs[:len(carry)])), pytree.unflatten(y_tree[0], list(outs[n_carry:]))


def _slice_type(x) -> TensorType:
    t = type_of(x)
    if t.ndim == 0:
        raise TraceError(f"F.scan: xs must be arrays with a first axis to scan along, got {t}")
    return TensorType(t.dtype, t.shape[1:])


def _abstract_types(call: Callable, types: list[TensorType]) -> tuple[TensorType, ...]:
    """The output types of ``call`` on values of ``types``, found by tracing it (for a scan of length 0)."""
    from .trace import Tracer
    graph = Graph("scan_body")
    tracer = Tracer(graph, "error", None)
    inputs = [Tensor(tracer, graph.add_input(f"a{i}", t)) for i, t in enumerate(types)]
    return tuple(tracer.operand_value(v, None).type for v in call(*inputs))

