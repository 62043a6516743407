"""``script(fn, shapes, params=None)``: capture a function from its source, with its control flow kept.

``trace`` runs the function once and records what happened, so a branch on tensor data is lost: an error, a
silent specialization, or a guard. ``script`` reads the function's source instead (``inspect``, ``ast``), as
TorchScript's ``torch.jit.script`` and TensorFlow's AutoGraph do, and converts it without running it:

    def f(x):                                 %4: f64[4] = cond %3, %0
        if x.sum() > 0:                 ->      graph then { ... tanh ... }
            return np.tanh(x)                   graph else { ... neg ... }
        return -x

The modules, in the order a function goes through them:

    source.py       the function's source, parsed; ScriptError messages with a caret under the construct
    analysis.py     questions about a block: which names it assigns, whether it returns or breaks
    values.py       what variables hold: tensors, Python values, Undefined (no single value after an if)
    statements.py   the Converter: statements, and Python control flow decided while converting
    expressions.py  expressions: operators, names, comprehensions, and/or/not in tests
    calls.py        what may be called: F.*, NumPy, pure builtins, and Python functions (scripted and inlined)
    branches.py     if / while / for on tensor data -> cond / while_loop / fori_loop nodes with regions
"""

from __future__ import annotations

import inspect
import weakref
from types import FunctionType, MethodType
from typing import Any, Callable, Mapping

import numpy as np

from ...errors import ScriptError, TraceError
from ...ir.graph import Graph
from ...ir.shape_env import Dim, using
from ...ir.source import SourceLoc, user_location
from ...ops import REGISTRY, Op
from .. import pytree
from ..recorder import Recorder, gc_paused
from ..tensor import Storage, Tensor
from ..trace import bind_arguments, input_type, new_shape_env, output_value, parse_spec
from .calls import Frame, bind_by_name
from .expressions import DataDependent
from .source import FunctionSource, source_of
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

    ``fn`` may be a method (``model.forward``): its object is read as it is now. ``shapes`` and ``params`` are as
    for ``trace``. ``if``/``elif``/``else`` on a tensor becomes a ``cond`` node,
    ``while`` on a tensor a ``while_loop`` node, ``for i in range(n)`` with a tensor ``n`` a ``fori_loop`` node;
    control flow on Python values known now (shapes, flags, lists of layers) is decided now, and ``for`` loops
    over them are unrolled (``loops="fori"`` makes ``for i in range(n)`` a ``fori_loop`` node instead). Calls to
    plain Python functions are scripted and inlined. Anything that cannot be converted raises ``ScriptError``,
    showing the line with a caret under the construct and saying what to write instead. Dead code is removed.
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
        specs = {}
        for name, spec in shapes.items():
            specs[name] = parse_spec(name, spec)
        called = fn  # (a method binds its arguments after its object's)
        owner, fn = (fn.__self__, fn.__func__) if type(fn) is MethodType else (None, fn)
        prepared = _prepared.get(fn)
        key = (tuple(specs), params is not None, owner is not None)
        if (prepared is not None and prepared[0] is fn.__code__ and prepared[1] == fn.__name__
                and prepared[2] == key and not hasattr(fn, "__signature__") and not hasattr(fn, "__wrapped__")):
            _, _, _, order, params_name, source = prepared
        else:
            order, params_name = bind_arguments(called, list(specs), params is not None)
            source = None
    except TraceError as e:
        call_site = user_location(1)  # an argument error is the caller's: point at the script(...) call
        raise TraceError(f"{e}\n  at {call_site.describe() if call_site else 'unknown location'}") from None
    if source is None:
        source = source_of(fn)
        _prepared[fn] = (fn.__code__, fn.__name__, key, order, params_name, source)
    with gc_paused():  # a capture makes many objects that all live on: collecting during it frees nothing
        return _convert(fn, owner, source, specs, order, params, params_name, loops)


_prepared: "weakref.WeakKeyDictionary[FunctionType, tuple]" = weakref.WeakKeyDictionary()
"""Per function: ``(code, name, (argument names, has params, is a method), order, params name, source)``, what
``bind_arguments`` and ``source_of`` gave for it the last time it was scripted. Both depend only on the code object,
the name and that key (the binding on the parameters' names and kinds, which the code object holds; the parse on
the code object and the name), so while those are the same objects and values the same answers hold. Looking
the function up by identity costs much less than their caches keyed by code object, which hash and compare
code objects field by field. (A function given ``__signature__`` or ``__wrapped__`` is bound by ``inspect``
each time, as ``bind_arguments`` does.)"""


def _convert(fn, owner, source: FunctionSource, specs: dict, order: list[str], params, params_name: str | None,
             loops: str) -> Graph:
    """Make the inputs and parameters, convert the body, and return the graph without dead code (verified when
    script's own code shaped it: see the end)."""
    graph = Graph(fn.__name__)
    rec = ScriptRecorder(graph)
    rec.loc = source.locs[source.tree.lineno]  # source.loc(source.tree)
    for dims, _ in specs.values():  # (loops, not any(...) over a generator: a capture of a small function
        for d in dims:              # costs little more than its set-up, which this is part of)
            if type(d) is not int and isinstance(d, Dim):
                break
        else:
            continue
        rec.shape_env = new_shape_env(rec, None, "guard")
        break
    args = {}
    for name in order:
        t = input_type(rec, name, *specs[name], rec.loc)
        args[name] = Tensor(rec, graph.add_input(name, t, rec.loc), Storage(f"input {name!r}"))
    if params is not None:
        def make_param(path: str, leaf):
            if isinstance(leaf, np.ndarray):
                return Tensor(rec, graph.add_param(path, leaf, rec.loc), Storage(f"parameter {path}"))
            return leaf
        args[params_name] = pytree.tree_map(make_param, params, params_name)
    # Every input and parameter has its own name, unless two paths of the params print alike (dict keys of one
    # repr) or a parameter is named as an input: then add_param kept one value for two nodes, which verify reports.
    # (The graph holds the input nodes, then one node per parameter.)
    made_params = len(graph.nodes) - len(order)
    unique_names = not graph.param_values and not made_params or (
        len(graph.param_values) == made_params and not any(n in graph.param_values for n in order))
    arguments = bind_by_name(fn, [owner] if owner is not None else [], args)

    converter = Converter(rec, loops)
    cells = {name: cell.cell_contents for name, cell in zip(fn.__code__.co_freevars, fn.__closure__)
             if _has_contents(cell)} if fn.__closure__ else {}
    frame = Frame(source, Env(arguments), fn.__globals__, cells)
    with using(rec.shape_env):  # shape rules consult this capture's sizes (None: all static)
        result = converter.run_frame(frame, source.tree.body)
        if type(result) is Tensor:  # one array returned: what pytree.flatten gives for a leaf, without its walk
            leaves, graph.out_tree = [("", result)], _LEAF
        else:
            leaves, graph.out_tree = pytree.flatten(result)
        try:
            outputs = []
            for path, leaf in leaves:  # (a loop, not a comprehension: in Python 3.11 each makes a function)
                outputs.append(output_value(rec, path, leaf))
            graph.outputs = outputs
        except TraceError as e:
            raise ScriptError(f"{e} (script of {fn.__name__})", filename=source.filename, lineno=source.first_line,
                              construct="the return value", hint="return arrays, numbers, and nests of them") \
                from None
    # What script shapes itself is verified: control-flow regions (lifted values, carries, branch outputs) and
    # captures with symbolic sizes (guards, facts, size symbols). A graph without them is made by the shared Recorder
    # alone (emit, const) and Graph.add_input / add_param, as trace makes its graphs (which it does not verify), and
    # passes verify() by construction, which would cost as much as converting it: each node is new and appended
    # once; sources read nothing; operands are values of this capture's stand-ins (Recorder.operand_value refuses
    # others), made by earlier nodes; output types come from the op's rule on the operand types and attributes, with
    # no shape facts in play; the names are unique (checked above); the outputs are this capture's values; and
    # remove_dead_code keeps every node a kept node reads. (tests/test_script_speed_invariants.py checks that the
    # graphs of this path pass verify().)
    built_by_recorder = not (rec.made_regions or rec.shape_env is not None or graph.guards or not unique_names)
    if not (built_by_recorder and _nothing_dead(graph)):
        graph.remove_dead_code()
    if not built_by_recorder:
        graph.verify()
    return graph


_LEAF = pytree.flatten(None)[1]
"""The structure of a single leaf (``("leaf", None, ())``; a tuple, shared by the graphs that return one array)."""


def _nothing_dead(graph: Graph) -> bool:
    """Whether ``graph.remove_dead_code()`` would remove nothing, told in one pass without the walk it makes: every
    node but the inputs has an output that some node reads or that the graph returns. Then every node is needed:
    follow readers forward from it, and (the nodes being in order) the chain ends at a node whose outputs nobody
    reads, which therefore makes a graph output. Valid when every reader of a value is a node of the graph, as in
    a graph the recorder made (a value's ``users`` lists each node made with it; none is dropped or erased)."""
    returned = set(graph.outputs)
    for node in graph.nodes:
        for v in node.outputs:
            if v.users or v in returned:
                break
        else:
            if node.op != Op.INPUT:
                return False
    return True


def _has_contents(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


__all__ = ["script", "ScriptError"]
