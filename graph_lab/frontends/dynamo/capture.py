"""Capture mode: what each handler does when values may be stand-in tensors.

``CaptureContext`` answers the handlers' questions (read a global, call a function, test a truth value...) by
recording tensor operations into a graph, adding a guard whenever the capture depends on a value read from
the segment's inputs, and raising ``BreakGraph`` where it cannot go on. ``ConcreteContext`` answers the same
questions for real, for the one instruction run at a graph break.
"""

from __future__ import annotations

import builtins
import inspect
import operator
import types

import numpy as np

from ...errors import GraphLabError
from ...ir.graph import Graph, Node
from ...ir.shape_env import Dim, ShapeEnv
from ...ir.symbolic import FUNCTIONS, SymbolicValue, float_op
from ...ir.types import TensorType
from ..recorder import Recorder
from ..symbols import SymFloat
from ..tensor import Storage, Tensor
from .frame import BreakGraph, Frame, IterState, Var
from .guards import Guard, GuardSet
from .sources import AttrSource, CellContentsSource, GlobalSource, ItemSource, SizesSource

_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), slice, range)
PURE_BUILTINS = {
    len, range, isinstance, issubclass, int, float, bool, abs, min, max, sum, tuple, list, dict, zip, enumerate,
    reversed, sorted, str, repr, round, divmod, pow, all, any, slice, hasattr, getattr, type, callable, hash,
    frozenset, set, iter, ValueError, TypeError, KeyError, IndexError, RuntimeError, AssertionError, ZeroDivisionError,
}
READ_ONLY_METHODS = {"get", "keys", "values", "items", "index", "count", "copy", "startswith", "endswith", "join",
                     "format", "split", "strip", "lower", "upper", "replace"}
_INTERNAL_MODULE_PREFIXES = ("numpy", "graph_lab")


class DynamoRecorder(Recorder):
    """Records into one graph; a value Python needs now ends the graph (a break), it is never guessed."""

    kind = "compile"

    def __init__(self, graph: Graph):
        self.graph = graph

    def add_node(self, node: Node) -> None:
        self.graph.nodes.append(node)

    def concretize(self, t: Tensor, kind: str):
        node = t._value.node
        raise BreakGraph(f"data-dependent value: the {kind} of a tensor computed by {node.op} is needed by Python",
                         "select with F.where or np.where instead of branching, or accept the break: "
                         "both sides of it are still compiled")

    def check_writable(self, root: Tensor) -> None:
        if root._storage.is_input:
            raise BreakGraph(f"in-place write into {root._storage.is_input}, an array the function did not create",
                             "the write runs as ordinary Python between two graphs; create the array inside the "
                             "function to keep it in one graph")


def is_internal_function(f) -> bool:
    module = getattr(f, "__module__", None) or ""
    return isinstance(f, np.ufunc) or module.split(".")[0] in _INTERNAL_MODULE_PREFIXES


class CaptureContext:
    symbolic = True

    def __init__(self, fn_globals: dict, dynamic_axes=None):
        self.graph = Graph("compiled")
        self.recorder = DynamoRecorder(self.graph)
        self.guards = GuardSet()
        self.fn_globals = fn_globals
        self.input_sources: dict[str, object] = {}  # graph input name -> Source
        self.inputs_by_id: dict[int, Tensor] = {}
        self.sourced: dict[int, object] = {}  # id(obj) -> Source, for objects read from the inputs
        self.created_ids: set[int] = set()
        self._keep: list = []  # keeps created objects alive so that their ids stay unique
        self.frame: Frame | None = None  # the innermost frame running, for source lines
        self.dynamic_axes = dynamic_axes  # (source, array) -> axes to make symbolic; None: every size static
        self.shape_env = ShapeEnv(hints={}) if dynamic_axes is not None else None
        if self.shape_env is not None:
            self.shape_env.guards = self.graph.guards
            self.shape_env.recorder = self.recorder
            self.shape_env.where = self.loc
            self.recorder.shape_env = self.shape_env
        self.size_dims: list[tuple] = []  # (source, axis) of each size symbol s0, s1, ...
        self.patterns: dict[int, tuple] = {}  # id(array) -> shape with None for symbolic sizes

    # --- values entering the capture

    def wrap(self, value, source) -> Var:
        if isinstance(value, np.ndarray):
            return Var(self.tensor_input(value, source), source)
        if not isinstance(value, _IMMUTABLE):
            self.sourced.setdefault(id(value), source)
        return Var(value, source)

    def tensor_input(self, array: np.ndarray, source) -> Tensor:
        t = self.inputs_by_id.get(id(array))
        if t is None:
            name = source.describe()
            value = self.graph.add_input(name, self._input_type(array, source), self.loc())
            t = Tensor(self.recorder, value, Storage(f"the array {name}"))
            self.inputs_by_id[id(array)] = t
            self.input_sources[name] = source
            self._keep.append(array)
        pattern = self.patterns.get(id(array))
        if pattern is None:
            self.guards.add(Guard("array", source, (array.shape, array.dtype), self.loc()))
        else:
            self.guards.add(Guard("dims", source, (pattern, array.dtype), self.loc()))
        return t

    def _input_type(self, array: np.ndarray, source) -> TensorType:
        """The input's type: a size the policy makes dynamic is a new symbol ``s<i>``, unless it is 0 or 1
        (specialized: such sizes broadcast or hold nothing, see ``ir/shape_env.py``)."""
        axes = self.dynamic_axes(source, array) if self.dynamic_axes is not None else ()
        shape = list(array.shape)
        for axis in sorted(axes):
            if array.shape[axis] >= 2:
                name = f"s{len(self.size_dims)}"
                self.shape_env.hints[name] = array.shape[axis]
                shape[axis] = self.shape_env.declare(Dim(name), self.loc())
                self.size_dims.append((source, axis))
        if len(self.size_dims) and any(type(d) is not int for d in shape):
            self.patterns[id(array)] = tuple(None if type(d) is not int else d for d in shape)
        return TensorType(array.dtype, tuple(shape))

    def size_guard(self) -> None:
        """One guard over all size symbols: the shape guards the capture relied on, checked on each call."""
        from ...guards import ShapeGuard
        facts = [g for g in self.graph.guards if isinstance(g, ShapeGuard)]
        if self.size_dims:
            names = tuple(f"s{i}" for i in range(len(self.size_dims)))
            self.guards.add(Guard("sizes", SizesSource(tuple(self.size_dims)), (names, facts), None))

    def created(self, value) -> Var:
        if not isinstance(value, _IMMUTABLE):
            self.created_ids.add(id(value))
            self._keep.append(value)
        return Var(value)

    def loc(self):
        return self.frame.loc() if self.frame is not None else None

    # --- using values: every use of an input adds the guard that makes the capture valid

    def use(self, var: Var):
        value = var.value
        if var.source is None or isinstance(value, Tensor):
            return value
        self.guard(var)
        return value

    def guard(self, var: Var) -> None:
        value, source, loc = var.value, var.source, self.loc()
        if isinstance(value, (bool, int, float, complex, str, bytes, type(None))) or (
                isinstance(value, tuple) and all(isinstance(x, (bool, int, float, str, type(None))) for x in value)):
            self.guards.add(Guard("equals", source, value, loc))
        elif isinstance(value, (list, tuple)):
            self.guards.add(Guard("type", source, type(value), loc))
            self.guards.add(Guard("len", source, len(value), loc))
        elif isinstance(value, dict):
            self.guards.add(Guard("type", source, type(value), loc))
            self.guards.add(Guard("keys", source, tuple(value.keys()), loc))
        elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type,
                                types.MethodType, np.ufunc)):
            self.guards.add(Guard("id", source, value, loc))
        else:
            self.guards.add(Guard("type", source, type(value), loc))

    def identity(self, var: Var):
        if var.source is not None and not isinstance(var.value, Tensor):
            if var.value is None or isinstance(var.value, bool):
                self.guards.add(Guard("equals", var.source, var.value, self.loc()))
            else:
                self.guards.add(Guard("id", var.source, var.value, self.loc()))
        return var.value

    def truth(self, var: Var) -> bool:
        return bool(self.use(var))

    @staticmethod
    def is_tensor(value) -> bool:
        return isinstance(value, Tensor)

    def real(self, var: Var):
        return var.value

    def side_effect(self, what: str) -> None:
        raise BreakGraph(f"side effect: {what}", "it runs as ordinary Python between two graphs, on every call")

    def mutate(self, container: Var, what: str) -> None:
        if id(container.value) not in self.created_ids:
            self.side_effect(f"{what} on a {type(container.value).__name__} the function did not create")

    def check_inplace(self, left: Var, op: str) -> None:
        if isinstance(left.value, (list, dict)):
            self.mutate(left, f"'{op}'")

    # --- operations

    def apply(self, fn, args: list[Var]) -> Var:
        raws = [self.use(a) for a in args]
        return self.created(self._run(fn, raws, {}))

    def _run(self, fn, args, kwargs):
        try:
            return fn(*args, **kwargs)
        except BreakGraph:
            raise
        except GraphLabError as e:
            raise BreakGraph(f"cannot capture: {e}") from None
        except Exception as e:  # eager Python raises it too: the instruction will run for real
            raise BreakGraph(f"{type(e).__name__} raised while capturing: {e}") from None

    def subscript(self, container: Var, key: Var) -> Var:
        c = container.value
        k = key.value if isinstance(key.value, Tensor) else self.use(key)
        if isinstance(c, Tensor):
            return self.created(self._run(operator.getitem, (c, k), {}))
        if container.source is not None:
            self.guard(container)
            result = self._run(operator.getitem, (c, k), {})
            if isinstance(k, (int, str)) and not isinstance(k, bool):
                return self.wrap(result, ItemSource(container.source, k))
            return self.created(result)
        result = self._run(operator.getitem, (c, k), {})
        source = self.sourced.get(id(result))
        return Var(result, source) if source is not None else self.created(result)

    def store_subscript(self, container: Var, key: Var, value: Var) -> None:
        c = container.value
        k = key.value if isinstance(key.value, Tensor) else self.use(key)
        if isinstance(c, Tensor):
            self._run(operator.setitem, (c, k, value.value), {})
            return
        self.mutate(container, "item assignment")
        c[k] = value.value

    def iterate(self, var: Var, as_vars: bool = False) -> list:
        value = var.value
        if isinstance(value, IterState):
            items = value.items[value.pos:]
            value.pos = len(value.items)
            return items if as_vars else [v.value for v in items]
        if var.source is not None and isinstance(value, (list, tuple)):
            self.guard(var)
            items = [self.wrap(x, ItemSource(var.source, i)) for i, x in enumerate(value)]
        elif var.source is not None and isinstance(value, dict):
            self.guard(var)
            items = [Var(k) for k in value]
        else:
            raw = self.use(var)
            if isinstance(raw, Tensor):
                items = [self.created(x) for x in self._run(list, (raw,), {})]
            else:
                items = [self._from_container(x) for x in self._run(list, (raw,), {})]
        return items if as_vars else [v.value for v in items]

    def _from_container(self, x) -> Var:
        source = self.sourced.get(id(x))
        return Var(x, source) if source is not None else Var(x)

    # --- names

    def load_global(self, frame: Frame, name: str) -> Var:
        namespace = frame.f_globals
        if name in namespace:
            value = namespace[name]
        elif hasattr(builtins, name):
            value = getattr(builtins, name)
        else:
            raise NameError(f"name '{name}' is not defined")
        own = namespace is self.fn_globals
        return self.wrap(value, GlobalSource(name, 0 if own else id(namespace), None if own else namespace))

    def load_cell(self, frame: Frame, name: str) -> Var:
        cell = frame.cells[name]
        try:
            value = cell.cell_contents
        except ValueError:
            raise NameError(f"free variable '{name}' referenced before assignment") from None
        source = frame.closure_sources.get(name)
        if source is not None:
            return self.wrap(value, source)
        src = self.sourced.get(id(value))
        return Var(value, src) if src is not None else Var(value)

    def store_cell(self, frame: Frame, name: str, var: Var) -> None:
        if name in frame.closure_sources:
            self.side_effect(f"assignment to the closure variable {name!r}")
        frame.cells[name].cell_contents = var.value

    def load_attr(self, obj: Var, name: str) -> Var:
        value = obj.value
        if isinstance(value, Tensor):
            return self.created(self._run(getattr, (value, name), {}))
        if isinstance(value, types.ModuleType):
            self.use(obj)
            result = self._run(getattr, (value, name), {})
            return self.wrap(result, AttrSource(obj.source, name)) if obj.source else self.created(result)
        if obj.source is not None:  # attribute lookup depends only on the object's type
            self.guards.add(Guard("type", obj.source, type(value), self.loc()))
            return self.wrap(self._run(getattr, (value, name), {}), AttrSource(obj.source, name))
        result = self._run(getattr, (value, name), {})
        source = self.sourced.get(id(result))
        return Var(result, source) if source is not None else self.created(result)

    # --- calls

    def call(self, frame: Frame, fn: Var, args: list[Var], kwargs: dict[str, Var]) -> Var:
        f = fn.value
        if isinstance(f, types.MethodType) and isinstance(f.__self__, Tensor):
            return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
        if is_internal_function(f) and not isinstance(f, type):
            if (getattr(f, "__module__", "") or "").startswith("numpy.random"):
                self.side_effect(f"random number generation ({f.__name__})")
            if fn.source is not None:
                self.use(fn)
            return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
        if f is isinstance and args and isinstance(args[0].value, Tensor):
            return Var(issubclass(np.ndarray, self.use(args[1])))
        if f is type and len(args) == 1 and isinstance(args[0].value, Tensor):
            return Var(np.ndarray)
        if getattr(f, "__module__", None) == "math" and getattr(f, "__name__", "") in FUNCTIONS and \
                len(args) == 1 and isinstance(args[0].value, SymbolicValue):
            # math.sqrt(d) of a size: a float computed at run time, not a number frozen now
            return self.created(SymFloat(float_op(f.__name__, args[0].value.expr), self.shape_env))
        if f in PURE_BUILTINS or getattr(f, "__module__", None) == "math":
            return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
        if isinstance(f, types.BuiltinFunctionType) and isinstance(getattr(f, "__self__", None), types.ModuleType):
            self.side_effect(f"call to {f.__name__}(), which graph_lab treats as having effects outside the graph")
        if isinstance(f, (types.BuiltinMethodType, types.MethodWrapperType)) and hasattr(f, "__self__"):
            owner = f.__self__
            if id(owner) in self.created_ids or isinstance(owner, _IMMUTABLE):
                return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
            if f.__name__ in READ_ONLY_METHODS:
                return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
            self.side_effect(f"call of {type(owner).__name__}.{f.__name__} on an object the function did not create")
        target, bound_self, self_source = self._python_callable(fn)
        if target is not None:
            if fn.source is not None:
                self.use(fn) if not isinstance(f, types.MethodType) else None
            all_args = ([Var(bound_self, self_source)] if bound_self is not None else []) + list(args)
            return self.inline(frame, target, all_args, kwargs, fn.source)
        name = getattr(f, "__qualname__", None) or type(f).__name__
        raise BreakGraph(f"call to {name}, which graph_lab cannot see into (not NumPy, F, a pure builtin, or "
                         f"a plain Python function)",
                         "move the call outside the compiled function, or accept the break: it runs eagerly")

    def _raws(self, values):
        if isinstance(values, dict):
            return {k: self.use(v) for k, v in values.items()}
        return [self.use(v) for v in values]

    def _python_callable(self, fn: Var):
        f = fn.value
        if isinstance(f, types.FunctionType) and not is_internal_function(f):
            return f, None, None
        if isinstance(f, types.MethodType) and isinstance(f.__func__, types.FunctionType) \
                and not is_internal_function(f.__func__):
            self_source = fn.source.base if isinstance(fn.source, AttrSource) else self.sourced.get(id(f.__self__))
            return f.__func__, f.__self__, self_source
        call = getattr(type(f), "__call__", None)
        if isinstance(call, types.FunctionType) and not isinstance(f, type) and not is_internal_function(call):
            return call, f, fn.source
        return None, None, None

    def inline(self, frame: Frame, func: types.FunctionType, args: list[Var], kwargs: dict[str, Var], source):
        if frame.depth > 32:
            raise BreakGraph("call depth over 32 (recursion?)")
        code = func.__code__
        try:
            bound = inspect.signature(func).bind(*args, **kwargs)
        except TypeError as e:
            raise BreakGraph(f"TypeError while capturing: {e}") from None
        bound.apply_defaults()
        local_vars = {}
        for name, value in bound.arguments.items():
            if isinstance(value, Var):
                local_vars[name] = value
            elif isinstance(value, tuple):
                local_vars[name] = self.created(tuple(v.value if isinstance(v, Var) else v for v in value))
            elif isinstance(value, dict):
                local_vars[name] = self.created({k: v.value if isinstance(v, Var) else v for k, v in value.items()})
            else:
                local_vars[name] = Var(value)
        cells, closure_sources = {}, {}
        for i, (name, cell) in enumerate(zip(code.co_freevars, func.__closure__ or ())):
            cells[name] = cell
            if source is not None:
                closure_sources[name] = CellContentsSource(source, i, name)
            else:
                src = self.sourced.get(id(cell))
                if src is not None:
                    closure_sources[name] = src
        child = Frame(code, func.__globals__, cells, local_vars, self, closure_sources, parent=frame)
        outer, self.frame = self.frame, child
        try:
            return child.run()
        finally:
            self.frame = outer


class ConcreteContext:
    """Everything real: runs the instruction at a graph break exactly as CPython would."""

    symbolic = False

    def wrap(self, value, source) -> Var:
        return Var(value, source)

    def created(self, value) -> Var:
        return Var(value)

    def use(self, var: Var):
        return var.value

    identity = real = use

    def truth(self, var: Var) -> bool:
        return bool(var.value)

    @staticmethod
    def is_tensor(value) -> bool:
        return False

    def side_effect(self, what: str) -> None:
        pass

    def mutate(self, container: Var, what: str) -> None:
        pass

    def check_inplace(self, left: Var, op: str) -> None:
        pass

    def apply(self, fn, args):
        return Var(fn(*[a.value for a in args]))

    def subscript(self, container, key):
        return Var(container.value[key.value])

    def store_subscript(self, container, key, value):
        container.value[key.value] = value.value

    def iterate(self, var, as_vars=False):
        value = var.value
        if isinstance(value, IterState):
            items = value.items[value.pos:]
            value.pos = len(value.items)
        else:
            items = [Var(x) for x in value]
        return items if as_vars else [v.value for v in items]

    def load_global(self, frame, name):
        if name in frame.f_globals:
            return Var(frame.f_globals[name])
        if hasattr(builtins, name):
            return Var(getattr(builtins, name))
        raise NameError(f"name '{name}' is not defined")

    def load_cell(self, frame, name):
        return Var(frame.cells[name].cell_contents)

    def store_cell(self, frame, name, var):
        frame.cells[name].cell_contents = var.value

    def load_attr(self, obj, name):
        return Var(getattr(obj.value, name))

    def call(self, frame, fn, args, kwargs):
        return Var(fn.value(*[a.value for a in args], **{k: v.value for k, v in kwargs.items()}))


