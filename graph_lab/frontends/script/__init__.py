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
    kept_between_captures.py  speed-ups: what is kept between captures of a function (measured there)
    analysis.py         questions about a block: which names it assigns, whether it returns or breaks
    values.py           what variables hold: tensors, Python values, Undefined (no single value after an if)
    statements.py       the Converter: statements, and Python control flow decided while converting
    expressions.py      expressions: operators, names, comprehensions, and/or/not in tests
    calls.py            what may be called: F.*, NumPy, pure builtins, and Python functions (scripted and inlined)
    branches.py         if / while / for on tensor data -> cond / while_loop / fori_loop nodes with regions
"""

from __future__ import annotations

import inspect
from types import MethodType
from typing import Any, Callable, Mapping

from ...errors import ScriptError, TraceError
from ...ir.graph import Graph
from ...ir.shape_env import Dim, using
from ...ir.source import SourceLoc, user_location
from ...ops import REGISTRY
from ..recorder import Recorder
from ..recording_shortcuts import gc_paused
from ..tensor import Storage, Tensor
from ..trace import input_type, make_params, new_shape_env, set_outputs
from .calls import Frame
from .expressions import DataDependent
from . import kept_between_captures as kept
from .function_source import FunctionSource
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
    return capture_script(fn, shapes, params, loops, shortcuts=True)


def capture_script(fn: Callable, shapes: Mapping[str, Any], params: Any, loops: str, shortcuts: bool) -> Graph:
    """``script``; with ``shortcuts=False`` on the reference path, everything worked out anew for this capture
    (``kept_between_captures.py`` holds the speed-ups it leaves out)."""
    try:
        if loops not in LOOP_MODES:
            raise TraceError(f"loops must be one of {LOOP_MODES}, got {loops!r}")
        if not (inspect.isfunction(fn) or type(fn) is MethodType and inspect.isfunction(fn.__func__)):
            raise TraceError(f"script() takes a Python function defined with def (or a method of an object), "
                             f"got {type(fn).__name__}")
        if not isinstance(shapes, Mapping) or not shapes:
            raise TraceError(f"shapes must be a non-empty dict mapping each tensor argument of the function to its "
                             f"shape, like {{'x': (4, 8)}}; got {shapes!r}")
        called = fn  # (a method binds its arguments after its object's)
        owner = None
        if type(fn) is MethodType:
            owner, fn = fn.__self__, fn.__func__
        has_params, is_method = params is not None, owner is not None
        if shortcuts:
            prepared = kept.lookup(called, fn, shapes, has_params, is_method)
        else:
            prepared = kept.Prepared(called, fn, shapes, kept.state_of(fn, shapes, has_params, is_method))
    except TraceError as e:
        call_site = user_location(1)  # an argument error is the caller's: point at the script(...) call
        raise TraceError(f"{e}\n  at {call_site.describe() if call_site else 'unknown location'}") from None
    read_source = kept.source_of if shortcuts else FunctionSource
    if prepared.source is None:  # (read here, after the argument errors: its own errors are ScriptErrors)
        prepared.source = read_source(fn)
        prepared.loc = prepared.source.loc(prepared.source.tree)
        if shortcuts:
            kept.keep(fn, prepared)
    if not shortcuts:
        return _convert(fn, owner, prepared, params, loops, read_source, shortcuts)
    with gc_paused():
        return _convert(fn, owner, prepared, params, loops, read_source, shortcuts)


def _input_types(rec: ScriptRecorder, prepared: "kept.Prepared", loc: SourceLoc) -> tuple:
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


def _convert(fn, owner, prepared: "kept.Prepared", params, loops: str, read_source, shortcuts: bool) -> Graph:
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

    converter = Converter(rec, loops, read_source)
    cells = {name: cell.cell_contents for name, cell in zip(fn.__code__.co_freevars, fn.__closure__)
             if _has_contents(cell)} if fn.__closure__ else {}
    frame = Frame(source, Env(arguments), fn.__globals__, cells)
    with using(rec.shape_env):  # shape rules consult this capture's sizes (None: all static)
        _run(converter, frame, fn, rec)
    graph.remove_dead_code()
    if not shortcuts or kept.needs_verify(rec.made_regions, rec.shape_env is not None, graph, unique_names):
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
