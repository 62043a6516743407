"""``script(fn, shapes, params=None)``: capture a function from its source, with its control flow kept.

``trace`` runs the function once and records what happened, so a branch on tensor data is lost: an error, a
silent specialization, or a guard. ``script`` reads the function's source instead (``inspect``, ``ast``), as
TorchScript's ``torch.jit.script`` and TensorFlow's AutoGraph do, and converts it without running it:

    def f(x):                                 %4: f64[4] = cond %3, %0
        if x.sum() > 0:                 ->      graph then { ... tanh ... }
            return np.tanh(x)                   graph else { ... neg ... }
        return -x

The modules, in the order a function goes through them:

    function_source.py  the function's source, parsed; ScriptError messages with a caret under the construct
    analysis.py         questions about a block: which names it assigns, whether it returns or breaks
    values.py           what variables hold: tensors, Python values, Undefined (no single value after an if)
    statements.py       the Converter: statements, and Python control flow decided while converting
    expressions.py      expressions: operators, names, comprehensions, and/or/not in tests
    calls.py            what may be called: F.*, NumPy, pure builtins, and Python functions (scripted and inlined)
    branches.py         if / while / for on tensor data -> cond / while_loop / fori_loop nodes with regions
"""

from __future__ import annotations

import gc
import inspect
import operator
import weakref
from types import FunctionType, MethodType
from typing import Any, Callable, Mapping

from ...errors import ScriptError, TraceError
from ...ir.graph import Graph
from ...ir.shape_env import Dim, in_use, using
from ...ir.source import SourceLoc, user_location
from ...ops import REGISTRY
from ..recorder import Recorder
from ..tensor import Storage, Tensor
from ..trace import bind_arguments, input_type, make_params, new_shape_env, parse_spec, set_outputs
from .calls import Frame, _signed, bind_by_name
from .expressions import DataDependent
from .function_source import FunctionSource, source_of
from .statements import Converter
from .values import Env

LOOP_MODES = ("unroll", "fori")
REGION_OPS = frozenset(op for op, definition in REGISTRY.items() if definition.regions)
"""The control-flow ops (cond, while_loop, fori_loop, scan): nodes holding regions that script builds itself."""


class ScriptRecorder(Recorder):
    """Records the top-level graph of a script. Nodes get the line being converted, not a Python frame's."""

    kind = "script"

    def __init__(self, graph: Graph):
        self.graph = graph
        self.loc: SourceLoc | None = None
        """The line of the source being converted (set by the converter as it goes)."""
        self.made_regions = False
        """Whether a control-flow node was recorded into the top-level graph (even one removed later as dead)."""

    def add_node(self, node) -> None:
        self.graph.nodes.append(node)
        if node.op in REGION_OPS:
            self.made_regions = True

    def location(self) -> SourceLoc | None:
        return self.loc

    def concretize(self, t: Tensor, kind: str):
        raise DataDependent(t, kind)

    def check_writable(self, root: Tensor) -> None:
        if root._storage.is_input:
            raise self.fail(f"in-place write into the {root._storage.is_input}: the graph returns new arrays and "
                            f"cannot write into the caller's arrays. Copy it first (x = x.copy()) and return it")


def script(fn: Callable, shapes: Mapping[str, Any], params: Any = None, *, loops: str = "unroll") -> Graph:
    """Convert ``fn``'s source into a graph, without running ``fn``; control flow on tensor data is kept.

    ``if``/``elif``/``else`` on a tensor becomes a ``cond`` node, ``while`` on a tensor a ``while_loop`` node,
    ``for i in range(n)`` with a tensor ``n`` a ``fori_loop`` node; control flow on Python values known now
    (shapes, flags, lists of layers) is decided now. Calls to plain Python functions are scripted and inlined.
    Dead code is removed.

    Parameters:
        fn: the function to convert; its source must be available (``inspect.getsource``). It may be a method
            (``model.forward``): its object is read as it is now.
        shapes: as for ``trace``: each tensor argument's name -> a shape tuple, or ``(shape, dtype)``.
        params: as for ``trace``: a nest of arrays passed as the next positional argument, stored with the graph.
        loops: ``"unroll"`` unrolls ``for`` loops over known ranges; ``"fori"`` makes every
            ``for i in range(n)`` a ``fori_loop`` node.

    Returns:
        The converted ``Graph``.

    Raises:
        ScriptError: a construct cannot be converted (``try``, ``with``, ``print``, a variable with different
            types in two branches, ...); the message shows the line with a caret under the construct and says
            what to write instead.
        TraceError: bad ``shapes`` or ``loops``, or an op whose rule rejects its operands.
    """
    try:
        if loops not in LOOP_MODES:
            raise TraceError(f"loops must be one of {LOOP_MODES}, got {loops!r}")
        # (``type(fn) is FunctionType`` first: the common case told without inspect's two calls; a method's type
        # is exactly MethodType, which cannot be subclassed)
        if not (type(fn) is FunctionType or inspect.isfunction(fn)
                or type(fn) is MethodType and inspect.isfunction(fn.__func__)):
            raise TraceError(f"script() takes a Python function defined with def (or a method of an object), "
                             f"got {type(fn).__name__}")
        if not (type(shapes) is dict or isinstance(shapes, Mapping)) or not shapes:
            raise TraceError(f"shapes must be a non-empty dict mapping each tensor argument of the function to its "
                             f"shape, like {{'x': (4, 8)}}; got {shapes!r}")
        called = fn  # (a method binds its arguments after its object's)
        owner = None
        if type(fn) is MethodType:
            owner, fn = fn.__self__, fn.__func__
        # (what Prepared's answers depend on: see there; the ids stand for the objects, which it keeps alive)
        state = (id(fn.__code__), fn.__name__, id(fn.__defaults__), id(fn.__kwdefaults__), tuple(shapes),
                 params is not None, owner is not None)
        prepared = _prepared.get(weakref.ref(fn))
        if (prepared is None or prepared.state != state or hasattr(fn, "__signature__")
                or hasattr(fn, "__wrapped__")):
            prepared = Prepared(called, fn, shapes, state)
        elif not all(map(operator.is_, shapes.values(), prepared.spec_values)):
            prepared.read_specs(shapes)  # the same names, other objects for their shapes: parsed again
    except TraceError as e:
        call_site = user_location(1)  # an argument error is the caller's: point at the script(...) call
        raise TraceError(f"{e}\n  at {call_site.describe() if call_site else 'unknown location'}") from None
    if prepared.source is None:  # (read here, after the argument errors: its own errors are ScriptErrors)
        prepared.source = source_of(fn)
        prepared.loc = prepared.source.locs[prepared.source.tree.lineno]  # source.loc(source.tree)
        if prepared.reusable:
            _prepared[weakref.ref(fn, _forget)] = prepared
    # A capture makes many objects that all live on, so collecting during it would free nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _convert(fn, owner, prepared, params, loops)
    finally:
        if collecting:
            gc.enable()


class Prepared:
    """What ``script`` works out about a function before converting it: the parsed shapes, the order of the tensor
    arguments and the name of the params argument (``bind_arguments``), the parsed source (``source_of``), the
    input types, and how the arguments are bound (``bind_by_name``).

    One is kept per function object (``_prepared``) and used again while its ``state`` is the function's: its
    answers depend on the function's code object (the parameters' names and kinds; the source it was compiled
    from), its name (shown in messages), its defaults (given to the parameters not passed), the names in
    ``shapes``, whether params are given and whether the function is called as a method. ``state`` holds those,
    the objects by their ids: it keeps the objects themselves too, so no other object can have their ids while
    it lives, and an equal id means the very same object (an equal but other code object, or defaults tuple,
    makes a new ``Prepared``). The shapes' values are parsed again (``read_specs``) whenever they are not the very
    objects parsed last time: a tuple of ints cannot change, so the same object parses the same way, but an equal
    one may not (``(4.0, 8) == (4, 8)``, and only the second is a shape). Globals and closure cells are read by
    every capture, never kept. A function given ``__signature__`` or ``__wrapped__`` is bound by ``inspect``
    each time, as ``bind_arguments`` does: nothing is kept for it."""

    __slots__ = ("state", "kept", "reusable", "specs", "spec_values", "inputs", "order", "params_name", "source",
                 "loc", "self_name", "rest")

    def __init__(self, called, fn: FunctionType, shapes: Mapping, state: tuple):
        self.state = state
        """``(id(code), name, id(defaults), id(kwdefaults), names in shapes, has params, is a method)``."""
        self.kept = (fn.__code__, fn.__defaults__, fn.__kwdefaults__)  # (what the ids of ``state`` stand for)
        self.reusable = not hasattr(fn, "__signature__") and not hasattr(fn, "__wrapped__")
        has_params, is_method = state[5], state[6]
        self.read_specs(shapes)  # (first: a bad shape is reported before a bad argument name)
        self.order, self.params_name = bind_arguments(called, list(self.specs), has_params)
        self.source: FunctionSource | None = None
        """Set by ``script`` once the arguments are found good."""
        self.loc: SourceLoc | None = None
        """The ``SourceLoc`` of the ``def`` line (set with ``source``): the inputs' and parameters'."""
        self.self_name, self.rest = self._binding(fn, has_params, is_method)

    def read_specs(self, shapes: Mapping) -> None:
        specs = {}
        for name, spec in shapes.items():
            specs[name] = parse_spec(name, spec)
        self.specs, self.spec_values = specs, tuple(shapes.values())
        self.inputs = None
        """``(name, type, storage label)`` for each input, in argument order: made by the first capture (see
        ``_input_types``) when every size is static, else None."""

    def bind(self, fn: FunctionType, owner, args: dict) -> dict:
        """``bind_by_name(fn, [owner] or [], args)``: the variables the function's body starts with. ``args`` are
        the inputs then the params, in ``order``; it may be used for the result."""
        if self.rest is None:
            return bind_by_name(fn, [owner] if owner is not None else [], args)
        arguments = {self.self_name: owner, **args} if owner is not None else args  # (see _binding)
        if self.rest:
            arguments.update(self.rest)
        return arguments

    def _binding(self, fn: FunctionType, has_params: bool, is_method: bool) -> tuple:
        """``(self_name, rest)`` when the arguments ``bind_by_name`` binds are, in this order: the object of a
        method (under ``self_name``), the inputs, the params, then ``rest``, a dict of the parameters not given
        that have a default, with their defaults. Else ``(None, None)``: ``bind_by_name`` binds them in each
        capture. Worked out by asking ``bind_by_name`` itself, with a marker object for each value given; only
        for a function whose parameters are all ordinary ones, whose bound values are the given values and the
        defaults themselves (``*args`` and ``**kwargs`` get a new tuple or dict each time)."""
        if _signed(fn)[1] is None:
            return None, None
        first = [object()] if is_method else []
        given = {name: object() for name in self.order}
        if has_params:
            given[self.params_name] = object()
        try:
            bound = list(bind_by_name(fn, first, given).items())
        except TypeError:  # (raised again by bind_by_name in the capture, as before)
            return None, None
        self_name = bound[0][0] if first else None
        rest = dict(bound[len(first) + len(given):])
        expected = ([(self_name, first[0])] if first else []) + list(given.items()) + list(rest.items())
        if len(expected) != len(bound) or any(a[0] != b[0] or a[1] is not b[1] for a, b in zip(expected, bound)):
            return None, None
        return self_name, rest


_prepared: "dict[weakref.ref, Prepared]" = {}
"""The ``Prepared`` of each function scripted, by a weak reference to the function (the entry goes when the
function does). Looked up with ``weakref.ref(fn)``, which equals the key while the function lives: the lookup
hashes the function by identity, as ``WeakKeyDictionary`` does, without its Python-level ``get``."""


def _forget(ref: weakref.ref) -> None:
    _prepared.pop(ref, None)


def _input_types(rec: ScriptRecorder, prepared: Prepared, loc: SourceLoc) -> tuple:
    """``(name, type, storage label)`` for each input, each symbolic size declared in a new ShapeEnv of the capture
    (its ranges become guards). Static types do not depend on the capture: they are kept for the next ones."""
    specs = prepared.specs
    for dims, _ in specs.values():
        for d in dims:
            if type(d) is not int and isinstance(d, Dim):
                rec.shape_env = new_shape_env(rec, None, "guard")
                break
        if rec.shape_env is not None:
            break
    inputs = tuple([(name, input_type(rec, name, *specs[name], loc), f"input {name!r}") for name in prepared.order])
    if rec.shape_env is None:
        prepared.inputs = inputs
    return inputs


def _convert(fn, owner, prepared: Prepared, params, loops: str) -> Graph:
    """Make the inputs and parameters, convert the body, and return the graph without dead code (verified when
    script's own code shaped it: see the end)."""
    graph = Graph(fn.__name__)
    rec = ScriptRecorder(graph)
    source = prepared.source
    loc = rec.loc = prepared.loc
    inputs = prepared.inputs
    if inputs is None:
        inputs = _input_types(rec, prepared, loc)
    args = {}
    for name, t, label in inputs:
        args[name] = Tensor(rec, graph.add_input(name, t, loc), Storage(label))
    if params is not None:
        args[prepared.params_name] = make_params(rec, params, prepared.params_name, loc)
    # Every input and parameter has its own name, unless two paths of the params print alike (dict keys of one
    # repr) or a parameter is named as an input: then add_param kept one value for two nodes, which verify reports.
    # (The graph holds the input nodes, then one node per parameter.)
    made_params = len(graph.nodes) - len(inputs)
    unique_names = len(graph.param_values) == made_params and graph.param_values.keys().isdisjoint(prepared.order)
    arguments = prepared.bind(fn, owner, args)

    converter = Converter(rec, loops)
    cells = {name: cell.cell_contents for name, cell in zip(fn.__code__.co_freevars, fn.__closure__)
             if _has_contents(cell)} if fn.__closure__ else {}
    frame = Frame(source, Env(arguments), fn.__globals__, cells)
    if rec.shape_env is None and in_use() is None:  # using(None) would change nothing: skipped
        _run(converter, frame, fn, rec)
    else:
        with using(rec.shape_env):  # shape rules consult this capture's sizes (None: all static)
            _run(converter, frame, fn, rec)
    # What script shapes itself is verified: control-flow regions (lifted values, carries, branch outputs) and
    # captures with symbolic sizes (guards, facts, size symbols). A graph without them is made by the shared Recorder
    # alone (emit, const) and Graph.add_input / add_param, as trace makes its graphs (which it does not verify), and
    # passes verify() by construction, which would cost as much as converting it: each node is new and appended
    # once; sources read nothing; operands are values of this capture's stand-ins (Recorder.operand_value refuses
    # others), made by earlier nodes; output types come from the op's rule on the operand types and attributes, with
    # no shape facts in play; the names are unique (checked above); the outputs are this capture's values; and
    # remove_dead_code keeps every node a kept node reads. (tests/frontends/script/test_script_speed_invariants.py
    # checks that the graphs of this path pass verify().)
    built_by_recorder = not (rec.made_regions or rec.shape_env is not None or graph.guards or not unique_names)
    graph.remove_dead_code()
    if not built_by_recorder:
        graph.verify()
    return graph


def _run(converter: Converter, frame: Frame, fn, rec: ScriptRecorder) -> None:
    """Convert the body and make what it returns the graph's outputs."""
    graph, source = rec.graph, frame.source
    result = converter.run_frame(frame, source.tree.body)
    try:
        set_outputs(rec, graph, result)
    except TraceError as e:
        raise ScriptError(f"{e} (script of {fn.__name__})", filename=source.filename, lineno=source.first_line,
                          construct="the return value", hint="return arrays, numbers, and nests of them") from None


def _has_contents(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


__all__ = ["script", "ScriptError"]
