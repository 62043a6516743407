"""``trace``: call a function on stand-in tensors and record the tensor operations it performs.

Everything that is not a tensor operation runs as ordinary Python at trace time: loops unroll, ``if`` on
Python values picks one branch, ``math.sqrt(2 / math.pi)`` becomes a constant. A tensor needed as a Python value
(``if x.sum() > 0:``) is where tracing cannot follow the data; ``mode`` says what to do there.

A size in ``shapes`` may be a name (``{"x": ("T", 8)}``) or a ``Dim``: the graph then holds for every size of
it (see ``symbols.py`` for what happens to ``x.shape`` inside the function, and ``ir/shape_env.py`` for the
shape guards).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping

import numpy as np

from ..backends.reference import impl_attrs, region_runner
from ..errors import OpError, TraceError
from ..guards import ShapeGuard, ValueGuard, to_python
from ..ir.graph import Graph, Node, Value
from ..ir.shape_env import Dim, ShapeEnv, using
from ..ir.sizes import bind_attrs
from ..ir.source import user_location
from ..ir.symbolic import SymbolicValue
from ..ir.types import TensorType, dtype_name
from ..ops import Op, opdef
from . import pytree
from .randomness import watching_random
from .recorder import Recorder
from .recording_shortcuts import gc_paused
from .tensor import Storage, Tensor

MODES = ("error", "specialize", "guard")
MAX_RANK = 64
"""NumPy's limit on the number of dimensions."""


class Tracer(Recorder):
    """Records into one graph; ``example`` inputs let it compute concrete values when ``mode`` allows."""

    def __init__(self, graph: Graph, mode: str, example: Mapping[str, np.ndarray] | None):
        self.graph = graph
        self.mode = mode
        self.example = example
        self.known: dict[Value, Any] = {}  # concrete values computed from the example, by value

    def add_node(self, node: Node) -> None:
        self.graph.nodes.append(node)

    def concretize(self, t: Tensor, kind: str):
        loc = user_location(2)
        t._check_fresh(loc)
        value = t._value
        if self.mode == "error":
            code = loc.describe() if loc else "unknown location"
            numbering = self.graph.numbering()
            raise TraceError(
                f"data-dependent value: {self.graph.node_text(value.node, numbering).split(' [')[0]} "
                f"({value.type}) is needed as a Python {kind} at {code}. A trace records operations, not values, so a "
                f"branch or a number computed from tensor data cannot be captured. Select with "
                f"F.where(cond, a, b), use a control-flow op, or trace with mode='guard' and an example "
                f"(the graph is then valid only while this value comes out the same)")
        result = to_python(self._evaluate(value), kind)
        if self.mode == "guard":
            guard_graph = self.graph.extract([value], name=f"guard{len(self.graph.guards)}")
            guard_graph.guards = [g for g in self.graph.guards if isinstance(g, ShapeGuard)]
            self.graph.guards.append(ValueGuard(guard_graph, kind, result, loc))
        return result

    def _evaluate(self, value: Value):
        """Compute ``value`` from the example inputs, running only nodes not computed before."""
        if value in self.known:
            return self.known[value]
        needed: set[int] = set()
        stack = [value]
        while stack:
            v = stack.pop()
            if v in self.known or id(v.node) in needed:
                continue
            needed.add(id(v.node))
            stack.extend(v.node.inputs)
        for node in self.graph.nodes:
            if id(node) not in needed:
                continue
            if node.op == Op.INPUT:
                result = self.example[node.attrs["name"]]
            elif node.op == Op.PARAM:
                result = self.graph.param_values[node.attrs["name"]]
            elif node.op == Op.CONST:
                result = node.attrs["value"]
            else:
                attrs = bind_attrs(node.attrs, self.shape_env.hints) if self.shape_env else node.attrs
                result = opdef(node.op).impl(*[self.known[v] for v in node.inputs],
                                             **impl_attrs(node, region_runner, attrs))
            outs = result if opdef(node.op).multi_output else (result,)
            for v, r in zip(node.outputs, outs):
                self.known[v] = r
        return self.known[value]


def parse_spec(name: str, spec) -> tuple[tuple, np.dtype]:
    """``(4, 8)`` -> ((4, 8), f64);  ``(("B", 8), "float32")`` -> ((Dim("B"), 8), f32)."""
    shape, dtype = spec, np.float64
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], (tuple, list)):
        shape, dtype = spec
    if not isinstance(shape, (tuple, list)) or not all(_is_size(d) for d in shape):
        raise TraceError(f"shapes[{name!r}] must be a tuple of sizes like (4, 8) or ('B', 8) (a size is a "
                         f"non-negative int, a name, or a Dim), or (shape, dtype) like ((4, 8), 'float32'); "
                         f"got {spec!r}")
    if len(shape) > MAX_RANK:
        raise TraceError(f"shapes[{name!r}] has {len(shape)} dimensions; NumPy arrays have at most {MAX_RANK}")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TraceError(f"shapes[{name!r}]: {dtype!r} is not a NumPy dtype; give one like 'float32' or "
                         f"np.int64") from None
    if dt.kind not in "biufc":
        raise TraceError(f"shapes[{name!r}]: dtype {dt} is not numeric; graph_lab's tensors are bool, integer, "
                         f"float or complex")
    try:
        dims = tuple(Dim(d) if isinstance(d, str) else d if isinstance(d, Dim) else int(d) for d in shape)
    except ValueError as e:
        raise TraceError(f"shapes[{name!r}]: {e}") from None
    return dims, dt


def _is_size(d) -> bool:
    if isinstance(d, (str, Dim)):
        return True
    return isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0


def _parameters(fn: Callable) -> list | None:
    """``fn``'s parameters (None when ``inspect`` cannot tell)."""
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None


def bind_arguments(fn: Callable, names: list[str], has_params: bool) -> tuple[list[str], str | None]:
    """The positional order of the tensor arguments and the name of the params argument."""
    params_list = _parameters(fn)
    if params_list is None:
        return names, "params" if has_params else None
    positional = [p.name for p in params_list
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    has_varargs = any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in params_list)
    unknown = [n for n in names if n not in positional]
    if unknown and not has_varargs:
        raise TraceError(f"shapes has names {unknown} that are not arguments of {getattr(fn, '__name__', fn)}; "
                         f"its arguments are {positional}: key shapes by those names")
    order = [n for n in positional if n in names] + unknown
    if order != positional[:len(order)] and not has_varargs:
        raise TraceError(f"the tensor arguments {names} must be the first positional arguments of "
                         f"{getattr(fn, '__name__', fn)} (its arguments are {positional})")
    params_name = None
    if has_params:
        rest = positional[len(order):]
        if not rest and not has_varargs:
            raise TraceError(f"params were given but {getattr(fn, '__name__', fn)} takes no argument after "
                             f"{order} to receive them")
        params_name = rest[0] if rest else "params"
    return order, params_name


def trace(fn: Callable, shapes: Mapping[str, Any], params: Any = None, *, mode: str = "error",
          example: Mapping[str, np.ndarray] | None = None, size_branch: str = "guard") -> Graph:
    """Capture ``fn`` as a graph by calling it once on stand-in tensors.

    Tensor operations on the stand-ins (operators, ndarray methods, NumPy functions, ``F.*``) are recorded;
    everything else runs as ordinary Python while tracing, so loops unroll and Python ``if``s choose a branch.
    Dead code is removed, so a specialized ``if`` leaves only the branch taken.

    Parameters:
        fn: the function to capture; its tensor arguments come first, then (with ``params``) one more.
        shapes: each tensor argument's name -> a shape tuple (float64), or ``(shape, dtype)``. A size may be a
            name (``("B", 128)``) or a ``Dim`` to make it symbolic.
        params: any nest of dicts, lists and tuples of arrays, passed as ``fn``'s next positional argument;
            each array becomes a named parameter stored with the graph. ``None``: ``fn`` takes no such argument.
        mode: what a tensor needed as a Python ``bool``/``int``/``float`` does: ``"error"`` raises
            ``TraceError`` naming the value and the line; ``"specialize"`` silently uses the value computed
            from ``example``; ``"guard"`` does the same and records a guard in ``graph.guards``.
        example: argument name -> array, the concrete inputs that ``"specialize"`` and ``"guard"`` compute
            with; with symbolic sizes, also the sizes that decide a branch on a size.
        size_branch: how a branch on a symbolic size is decided from ``example``: ``"guard"`` records a shape
            guard, ``"specialize"`` pins the sizes to the example's.

    Returns:
        The captured ``Graph``.

    Raises:
        TraceError: the function cannot be captured as written (a data-dependent value in ``mode="error"``,
            a NumPy call with no op, an op whose shape rule rejects its operands, bad ``shapes``/``example``).
    """
    loc = user_location(1)
    try:
        if mode not in MODES:
            raise TraceError(f"mode must be one of {MODES}, got {mode!r}")
        if size_branch not in SIZE_BRANCHES:
            raise TraceError(f"size_branch must be one of {SIZE_BRANCHES}, got {size_branch!r}")
        if not isinstance(shapes, Mapping) or not shapes:
            raise TraceError(f"shapes must be a non-empty dict mapping each tensor argument of the function to "
                             f"its shape, like {{'x': (4, 8)}}; got {shapes!r}")
        specs = {name: parse_spec(name, spec) for name, spec in shapes.items()}
        order, params_name = bind_arguments(fn, list(specs), params is not None)
        symbolic = _any_symbolic(specs)
        if mode != "error" or (symbolic and example is not None):
            _check_example(specs, example, mode)
        hints = _hints(specs, example) if symbolic and example is not None else None
    except TraceError as e:
        # An argument error is the caller's: point at the trace(...) call.
        raise TraceError(f"{e}\n  at {loc.describe() if loc else 'unknown location'}") from None
    tracer = Tracer(Graph(getattr(fn, "__name__", "graph").replace("<lambda>", "lambda")), mode, example)
    if symbolic:
        tracer.shape_env = new_shape_env(tracer, hints, size_branch)
    with gc_paused():
        graph = tracer.graph
        args = [Tensor(tracer, graph.add_input(name, input_type(tracer, name, *specs[name], loc), loc),
                       Storage(f"input {name!r}")) for name in order]
        if params is not None:
            args.append(make_params(tracer, params, params_name, loc))
        return finish(tracer, fn, args)


def make_params(tracer: Recorder, params, prefix: str, loc) -> Any:
    """``params`` as the function is given them: each array a stand-in of a new ``param`` node named by its path
    (``ws[0]``, ``p['W1']``), anything else as it is."""
    graph = tracer.graph

    def make_param(path: str, leaf):
        if isinstance(leaf, np.ndarray):
            return Tensor(tracer, graph.add_param(path, leaf, loc), Storage(f"parameter {path}"))
        return leaf
    return pytree.tree_map(make_param, params, prefix)


SIZE_BRANCHES = ("guard", "specialize")


def new_shape_env(tracer: Recorder, hints: dict | None, size_branch: str) -> ShapeEnv:
    """The ShapeEnv of a symbolic capture: its guards go into the graph's guard list, in the order made."""
    env = ShapeEnv(hints=hints, size_branch=size_branch)
    env.guards = tracer.graph.guards
    env.recorder = tracer
    return env


def _any_symbolic(specs: dict) -> bool:
    for dims, _ in specs.values():
        for d in dims:
            if type(d) is not int:
                return True
    return False


def input_type(tracer: Recorder, name: str, dims: tuple, dtype: np.dtype, loc) -> TensorType:
    """The type of an input, each ``Dim`` declared in the capture's ShapeEnv (its range becomes a guard)."""
    env = tracer.shape_env
    try:
        return TensorType(dtype, tuple(env.declare(d, loc) if isinstance(d, Dim) else d for d in dims))
    except OpError as e:
        raise TraceError(f"input {name!r}: {e}\n  at {loc.describe() if loc else 'unknown location'}") from None


def finish(tracer: Recorder, fn: Callable, args: list) -> Graph:
    """Call ``fn`` on the stand-ins, then make its results the graph's outputs and remove dead code."""
    graph = tracer.graph
    env = tracer.shape_env
    with watching_random(getattr(tracer, "mode", "error"), fn):  # a draw at trace time would be frozen
        with using(env):  # shape rules consult this capture's sizes
            set_outputs(tracer, graph, fn(*args))
    graph.remove_dead_code()
    return graph


def set_outputs(tracer: Recorder, graph: Graph, result) -> None:
    """Make what the function returned (a nest of stand-ins and Python values) the graph's outputs and
    ``out_tree``; a ``TraceError`` for a result that cannot be one (``output_value``)."""
    leaves, graph.out_tree = pytree.flatten(result)
    graph.outputs = [output_value(tracer, path, leaf) for path, leaf in leaves]


def _check_example(specs, example, mode):
    if not isinstance(example, Mapping):
        raise TraceError(f"mode={mode!r} computes the values the function branches on, so it needs "
                         f"example={{name: array}} for the inputs {list(specs)}")
    for name, (dims, dtype) in specs.items():
        x = example.get(name)
        shown = "[" + ",".join(d.name if isinstance(d, Dim) else str(d) for d in dims) + "]"
        conforms = isinstance(x, np.ndarray) and x.ndim == len(dims) and x.dtype == dtype and all(
            isinstance(d, Dim) or n == d for n, d in zip(x.shape, dims))
        if not conforms:
            got = str(TensorType.of(x)) if isinstance(x, np.ndarray) else type(x).__name__
            if name not in example:
                got = "nothing (the name is missing)"
            raise TraceError(f"example[{name!r}] must be an array of {dtype_name(dtype)}{shown} (as in shapes), "
                             f"got {got}")


def _hints(specs, example) -> dict[str, int]:
    """The example's size of each symbol; a symbol given two different sizes is an error."""
    hints: dict[str, int] = {}
    for name, (dims, _) in specs.items():
        for axis, d in enumerate(dims):
            if isinstance(d, Dim):
                size = example[name].shape[axis]
                if hints.setdefault(d.name, size) != size:
                    raise TraceError(f"example[{name!r}].shape[{axis}] is {size}, but {d.name} is "
                                     f"{hints[d.name]} in another input")
    return hints


def output_value(tracer: Recorder, path: str, leaf) -> Value:
    if isinstance(leaf, Tensor):
        return tracer.operand_value(leaf, leaf._value.node.loc)
    if isinstance(leaf, SymbolicValue):
        return tracer.operand_value(leaf, user_location(1))
    if isinstance(leaf, (np.ndarray, np.generic, bool, int, float)):
        return tracer.const(leaf, None)
    raise TraceError(f"the traced function returned {type(leaf).__name__} at output{path}; a graph can "
                     f"return arrays, numbers, and dicts/lists/tuples of them")
