"""Capture mode: what each handler does when values may be stand-in tensors.

``CaptureContext`` answers the handlers' questions (read a global, call a function, test a truth value...) by
recording tensor operations into a graph, adding a guard whenever the capture depends on a value read from
the segment's inputs, and raising ``BreakGraph`` where it cannot go on. ``ConcreteContext`` answers the same
questions for real, for the one instruction run at a graph break.

Three rules keep a capture from silently depending on something no guard checks:

- a value read from the inputs keeps its ``Source``; native code (a builtin, a NumPy function) only ever sees it
  through ``use``, which guards it, and sees a container read from the inputs as a copy whose arrays are stand-ins
  and whose elements are guarded (``lift``);
- a number read from the inputs that only flows through Python arithmetic is not guarded but *derived*: its
  source says how to compute it again (``counter + 1``); used by a tensor operation it becomes a graph input;
- an object made during capture must be one that a recipe can make again after a graph break (see
  ``segment.RecipeMaker``); anything else is made by real Python, at a break.
"""

from __future__ import annotations

import builtins
import inspect
import linecache
import operator
import sys
import types

import numpy as np

from ...errors import GraphLabError
from ...ir.graph import Graph, Node
from ...ir.source import SourceLoc
from ...ir.types import TensorType
from ..recorder import Recorder
from ..tensor import Storage, Tensor
from .containers import TrackedContainers
from .frame import BreakGraph, Frame, IterState, Var
from .guards import Guard, GuardSet
from .sources import (AttrSource, CellContentsSource, CellSource, Const, DerivedSource, GlobalSource, ItemSource,
                      ObjectSource, StackSource)

_SCALARS = (bool, int, float, complex, str)
_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), slice, range, np.generic)
_CALLABLES = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type, types.MethodType, np.ufunc,
              types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType)
_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
_LAZY_ITERATORS = {zip, enumerate, reversed, iter, map, filter}
_COMPUTING_OPCODES = {"CALL", "CALL_FUNCTION_EX", "BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP", "LOAD_ATTR",
                      "FORMAT_VALUE", "UNARY_NEGATIVE", "UNARY_NOT", "CONTAINS_OP"}
"""Instructions that leave what they computed on top of the stack (named after their source text)."""
PURE_BUILTINS = {
    len, range, int, float, bool, abs, min, max, sum, tuple, list, dict, zip, enumerate, reversed, sorted, str,
    repr, ascii, format, round, divmod, pow, all, any, slice, iter, map, filter, hash, frozenset, set, chr, ord,
    ValueError, TypeError, KeyError, IndexError, RuntimeError, AssertionError, ZeroDivisionError,
}
TYPE_ONLY_BUILTINS = {isinstance, issubclass, type, callable}
"""Builtins that read only the types of their arguments."""
TEXT_BUILTINS = {str, repr, ascii, format, hash}
"""Builtins that need an array's values (a stand-in's text would be wrong)."""
READ_ONLY_METHODS = {"get", "keys", "values", "items", "index", "count", "copy", "startswith", "endswith", "join",
                     "format", "split", "strip", "lower", "upper", "replace", "__getitem__", "__contains__",
                     "__len__"}
_INTERNAL_MODULE_PREFIXES = ("numpy", "graph_lab")
IMPURE_NUMPY = {np.seterr, np.seterrcall, np.set_printoptions, np.save, np.savez, np.savetxt, np.copyto, np.put,
                np.place, np.putmask, np.fill_diagonal}
"""NumPy functions that change state outside their result: each call is a side effect."""
_OPERATOR_TEXT = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/", operator.floordiv: "//",
    operator.mod: "%", operator.pow: "**", operator.matmul: "@", operator.and_: "&", operator.or_: "|",
    operator.xor: "^", operator.lshift: "<<", operator.rshift: ">>", operator.iadd: "+", operator.isub: "-",
    operator.imul: "*", operator.itruediv: "/", operator.ifloordiv: "//", operator.imod: "%",
    operator.ipow: "**", operator.iand: "&", operator.ior: "|", operator.ixor: "^", operator.ilshift: "<<",
    operator.irshift: ">>", operator.lt: "<", operator.le: "<=", operator.eq: "==", operator.ne: "!=",
    operator.gt: ">", operator.ge: ">=",
}
_UNARY_TEXT = {operator.neg: "-{0}", operator.pos: "+{0}", operator.invert: "~{0}", operator.not_: "not {0}",
               operator.contains: "{1} in {0}"}


class DynamoRecorder(Recorder):
    """Records into one graph; a value Python needs now ends the graph (a break), it is never guessed."""

    kind = "compile"

    def __init__(self, graph: Graph, location):
        self.graph = graph
        self.location = location  # the line of the bytecode being interpreted (not Python's own stack)

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


def is_scalar(value) -> bool:
    return type(value) in _SCALARS or isinstance(value, np.generic)


def is_constant(value) -> bool:
    """Immutable all the way down, so that ``==`` on it is a complete guard."""
    if isinstance(value, _IMMUTABLE):
        return True
    return type(value) in (tuple, frozenset) and all(is_constant(x) for x in value)


def is_user_object(value) -> bool:
    """An object whose behaviour (operators, len, iteration...) may be Python code graph_lab would not see."""
    return not isinstance(value, (Tensor, np.ndarray, np.dtype, list, tuple, dict, set, frozenset, IterState,
                                  types.CellType) + _IMMUTABLE + _CALLABLES) and not is_internal_function(value)


def is_rebuildable(value) -> bool:
    """Objects a recipe can make again after a graph break (see ``segment.RecipeMaker``)."""
    return (type(value) in (list, tuple, dict, set, np.ndarray) or is_namedtuple(value)
            or isinstance(value, (IterState, np.dtype, types.CellType, Tensor, types.MethodType) + _CALLABLES
                          + _IMMUTABLE + _DICT_VIEWS))


def is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _text_of(fn, n: int) -> str:
    if fn in _OPERATOR_TEXT:
        return "{0} " + _OPERATOR_TEXT[fn] + " {1}"
    if fn in _UNARY_TEXT:
        return _UNARY_TEXT[fn]
    name = getattr(fn, "__name__", "f")
    return f"{name}({', '.join('{%d}' % i for i in range(n))})"


class CaptureContext:
    symbolic = True

    def __init__(self, fn_globals: dict):
        self.graph = Graph("compiled")
        self.recorder = DynamoRecorder(self.graph, self.loc)
        self.guards = GuardSet()
        self.fn_globals = fn_globals
        self.input_sources: dict[str, object] = {}  # graph input name -> Source
        self.arrays_by_id: dict[int, tuple[Tensor, object]] = {}  # id(input array) -> (stand-in, first source)
        self.scalar_inputs: dict[object, Tensor] = {}  # Source -> stand-in of a number that is a graph input
        self.sourced: dict[int, object] = {}  # id(obj) -> Source, for objects read from the inputs
        self.created_ids: set[int] = set()
        self.cell_vars: dict[int, Var | None] = {}  # id(cell made during capture) -> what it holds
        self.dict_views: dict[int, tuple] = {}  # id(view made during capture) -> (Var of its dict, method name)
        self._lifted: dict[int, object] = {}
        self.containers = TrackedContainers(self)
        self._keep: list = []  # keeps objects alive so that the ids above stay unique
        self.frame: Frame | None = None  # the innermost frame running, for source lines

    # --- values entering the capture

    def wrap(self, value, source) -> Var:
        if type(value) is np.ndarray:
            return Var(self.tensor_input(value, source), source)
        if isinstance(value, IterState):  # an iterator rebuilt after a break: its items come from the inputs
            return self.created(self._iter_state_input(value, source))
        if not isinstance(value, _IMMUTABLE):
            self.sourced.setdefault(id(value), source)
            self._keep.append(value)
        return Var(value, source)

    def stack_source(self, index: int, depth: int) -> StackSource:
        """The source of a stack entry where capture resumes: the top of the stack is what the instruction Python
        just ran computed, named by its source text (``float(x.sum())``) in guards and graph inputs."""
        frame = self.frame
        if frame is None or frame.ip == 0 or index != depth - 1 or \
                frame.instructions[frame.ip - 1].opname not in _COMPUTING_OPCODES:
            return StackSource(index)
        ins = frame.instructions[frame.ip - 1]
        loc = SourceLoc(frame.code.co_filename, ins.positions.lineno) if ins.positions and \
            ins.positions.lineno else frame.loc()
        code = _expression_text(frame.code.co_filename, ins.positions) if ins.positions else ""
        return StackSource(index, f"`{code}` ({loc})" if code else f"the result of {ins.opname} ({loc})")

    def tensor_input(self, array: np.ndarray, source) -> Tensor:
        known = self.arrays_by_id.get(id(array))
        if known is not None:
            t, first = known
            if first != source:  # one array reached twice: the graph reads it once, so require it again
                self.guards.add(Guard("alias", source, first, self.loc()))
        else:
            name = self._input_name(source)
            value = self.graph.add_input(name, TensorType.of(array), self.loc())
            t = Tensor(self.recorder, value, Storage(f"the array {source.describe()}"))
            self.arrays_by_id[id(array)] = (t, source)
            self.input_sources[name] = source
            self._keep.append(array)
        self.guards.add(Guard("array", source, (array.shape, array.dtype), self.loc()))
        return t

    def scalar_input(self, var: Var) -> Tensor:
        """A number read from the inputs, used by a tensor operation: a graph input, guarded by its type only."""
        t = self.scalar_inputs.get(var.source)
        if t is None:
            name = self._input_name(var.source)
            value = self.graph.add_input(name, TensorType.of(var.value), self.loc())
            t = Tensor(self.recorder, value, Storage(f"the number {var.source.describe()}"))
            self.scalar_inputs[var.source] = t
            self.input_sources[name] = var.source
        self.guards.add(Guard("type", var.source, type(var.value), self.loc()))
        return t

    def _input_name(self, source) -> str:
        name, n = source.describe(), 1
        while name in self.input_sources:
            n += 1
            name = f"{source.describe()}#{n}"
        return name

    def _iter_state_input(self, state: IterState, source) -> IterState:
        items = AttrSource(source, "items")
        self.guards.add(Guard("len", items, len(state.items), self.loc()))
        self.guards.add(Guard("equals", AttrSource(source, "pos"), state.pos, self.loc()))
        return IterState([self.wrap(v.value, AttrSource(ItemSource(items, i), "value"))
                          for i, v in enumerate(state.items)], state.pos)

    def created(self, value) -> Var:
        if isinstance(value, (Tensor,) + _IMMUTABLE):
            return Var(value)
        if not is_rebuildable(value):
            raise BreakGraph(f"a {type(value).__name__} object is made here, which graph_lab could not make again "
                             f"after a graph break", "it is made by ordinary Python, between two graphs")
        self.created_ids.add(id(value))
        self._keep.append(value)
        return Var(value)

    def loc(self):
        return self.frame.loc() if self.frame is not None else None

    # --- using values: every use of an input adds the guard that makes the capture valid

    def use(self, var: Var):
        """The value, for native code to use: guarded, and a container read from the inputs lifted."""
        value = var.value
        if isinstance(value, Tensor):
            return value
        if var.source is None:
            self.containers.settle(value)
            return value
        if is_user_object(value):
            raise BreakGraph(f"a {type(value).__name__} object ({var.source.describe()}) is used by native code, "
                             f"which may run Python methods of it that graph_lab cannot see",
                             "it runs as ordinary Python between two graphs")
        self.guard(var)
        if not is_constant(value) and (type(value) in (list, tuple, dict) or is_namedtuple(value)):
            return self.lift(value, var.source)
        return value

    def operand(self, var: Var):
        """An operand of a tensor operation: a number read from the inputs becomes a graph input."""
        if var.source is not None and is_scalar(var.value) and not isinstance(var.value, (str, complex)):
            return self.scalar_input(var)
        return self.use(var)

    def contained(self, var: Var):
        """A value to store into a container made during capture: a number read from the inputs is guarded now,
        since a container keeps values, not where they came from."""
        if var.source is not None and isinstance(var.value, _IMMUTABLE):
            self.guard(var)
        return var.value

    def guard(self, var: Var) -> None:
        value, source, loc = var.value, var.source, self.loc()
        if is_constant(value):
            self.guards.add(Guard("equals", source, value, loc))
        elif type(value) in (list, tuple) or is_namedtuple(value):
            self.guards.add(Guard("type", source, type(value), loc))
            self.guards.add(Guard("len", source, len(value), loc))
        elif type(value) is dict:
            self.guards.add(Guard("type", source, type(value), loc))
            self.guards.add(Guard("keys", source, tuple(value.keys()), loc))
        elif isinstance(value, np.dtype):
            self.guards.add(Guard("equals", source, value, loc))
        elif isinstance(value, _CALLABLES) or is_internal_function(value):
            self.guards.add(Guard("id", source, value, loc))
        else:
            self.guards.add(Guard("type", source, type(value), loc))

    def lift(self, value, source):
        """A copy of a container read from the inputs, as native code may see it: arrays are stand-ins, numbers
        are guarded, nested containers are lifted too."""
        lifted = self._lifted.get(id(value))
        if lifted is not None:
            return lifted
        if type(value) is dict:
            lifted = {k: self.use(self.wrap(v, ItemSource(source, k))) for k, v in value.items()}
        else:
            items = [self.use(self.wrap(v, ItemSource(source, i))) for i, v in enumerate(value)]
            lifted = items if type(value) is list else type(value)(*items) if is_namedtuple(value) else tuple(items)
        self._lifted[id(value)] = lifted
        self._keep.append(lifted)
        return lifted

    def identity(self, var: Var):
        if var.source is not None and not isinstance(var.value, Tensor):
            if var.value is None or isinstance(var.value, bool):
                self.guards.add(Guard("equals", var.source, var.value, self.loc()))
            else:
                self.guards.add(Guard("id", var.source, var.value, self.loc()))
        return var.value

    def truth(self, var: Var) -> bool:
        value = var.value
        if var.source is None:
            return bool(value)
        if var.source is not None and is_user_object(value):
            if any(hasattr(type(value), m) for m in ("__bool__", "__len__")):
                self.use(var)  # breaks: its __bool__ or __len__ is Python code
            self.guards.add(Guard("type", var.source, type(value), self.loc()))
            return True
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
        if isinstance(left.value, (list, dict, set)):
            self.mutate(left, f"'{op}'")

    # --- operations

    def apply(self, fn, args: list[Var]) -> Var:
        """An operator (or a pure helper such as ``format``) applied to values of the frame."""
        values = [a.value for a in args]
        if fn is operator.add and len(args) == 2 and type(values[0]) is type(values[1]) in (list, tuple):
            left, right = (self.containers.items(v) for v in values)
            if left is not None and right is not None:  # [x] + rest: a new container of the same Vars
                return self.build(type(values[0]), left + right)
        if any(isinstance(v, Tensor) for v in values):
            if fn in (handlers_text_functions()):
                raise BreakGraph("data-dependent value: the text of a tensor is needed by Python",
                                 "format the array after the compiled function returns, or accept the break")
            return self.created(self._run(fn, [self.operand(a) for a in args], {}))
        derived = self._derived(fn, args)
        if derived is not None:
            return derived
        return self.created(self._run(fn, [self.use(a) for a in args], {}))

    def _derived(self, fn, args: list[Var], kwargs: dict | None = None, text: str | None = None) -> Var | None:
        """Python arithmetic on numbers read from the inputs: computed now, guarded only where it is used."""
        if kwargs or not any(a.source is not None for a in args) or not all(is_scalar(a.value) for a in args):
            return None
        result = self._run(fn, [a.value for a in args], {})
        if not is_scalar(result):
            return None
        parts = tuple(a.source if a.source is not None else Const(a.value) for a in args)
        try:
            hash(parts)
        except TypeError:
            return None
        return Var(result, DerivedSource(fn, parts, text or _text_of(fn, len(args))))

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
        if isinstance(c, Tensor):
            k = key.value if isinstance(key.value, Tensor) else self.use(key)
            return self.created(self._run(operator.getitem, (c, k), {}))
        if container.source is not None and (type(c) in (list, tuple, dict) or is_namedtuple(c)):
            k = self.use(key)
            self.guard(container)
            if isinstance(k, (int, str, np.integer)) and not isinstance(k, bool) or type(c) is dict:
                return self.wrap(self._run(operator.getitem, (c, k), {}), ItemSource(container.source, k))
            return self.created(self._run(operator.getitem, (self.lift(c, container.source), k), {}))
        k = self.use(key)
        element = self.containers.get(c, k) if id(c) in self.created_ids else None
        if element is not None:
            return element
        result = self._run(operator.getitem, (self.use(container), k), {})
        return self._from_container(result)

    def store_subscript(self, container: Var, key: Var, value: Var) -> None:
        c = container.value
        if isinstance(c, Tensor):
            k = key.value if isinstance(key.value, Tensor) else self.use(key)
            self._run(operator.setitem, (c, k, self.operand(value)), {})
            return
        self.mutate(container, "item assignment")
        k = self.use(key)
        if not self.containers.set(c, k, value):
            self.containers.settle(c)
            self._run(operator.setitem, (c, k, self.contained(value)), {})

    def iterate(self, var: Var, as_vars: bool = False) -> list:
        value = var.value
        if isinstance(value, IterState):
            items = value.items[value.pos:]
            value.pos = len(value.items)
        elif isinstance(value, Tensor):
            items = [self.created(x) for x in self._run(list, (value,), {})]
        elif var.source is not None and (type(value) in (list, tuple) or is_namedtuple(value)):
            self.guard(var)
            items = [self.wrap(x, ItemSource(var.source, i)) for i, x in enumerate(value)]
        elif var.source is not None and type(value) is dict:
            self.guard(var)
            items = [Var(k) for k in value]
        elif var.source is None and self.containers.items(value) is not None:
            items = self.containers.items(value)
        else:
            items = [self._from_container(x) for x in self._run(list, (self.use(var),), {})]
        return items if as_vars else [v.value for v in items]

    def keyword_items(self, var: Var) -> dict[str, Var]:
        """The items of a mapping passed as ``**kwargs`` (or merged into a dict), as Vars."""
        value = var.value
        tracked = self.containers.tracked(value) if var.source is None else None
        if isinstance(tracked, dict):
            return dict(tracked)
        if var.source is not None and type(value) is dict:
            self.guard(var)
            return {k: self.wrap(v, ItemSource(var.source, k)) for k, v in value.items()}
        return {k: self._from_container(v) for k, v in self._run(dict, (self.use(var),), {}).items()}

    # --- containers made during capture

    def build(self, kind: type, items) -> Var:
        return self.containers.build(kind, items)

    def append(self, container: Var, var: Var) -> None:
        if self.containers.append(container.value, var):
            return
        self.mutate(container, "append")
        self.containers.settle(container.value)
        container.value.append(self.contained(var))

    def _from_container(self, x) -> Var:
        source = self.sourced.get(id(x))
        return Var(x, source) if source is not None else self.created(x)

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

    def make_cell(self, frame: Frame, name: str) -> None:
        cell = types.CellType()
        var = frame.locals.get(name)
        if var is not None:
            cell.cell_contents = var.value
        self.cell_vars[id(cell)] = var
        frame.locals[name] = self.created(cell)

    def load_cell(self, frame: Frame, name: str) -> Var:
        cell_var = frame.cell(name)
        cell = cell_var.value
        if id(cell) in self.cell_vars:  # made during this capture: it holds a Var of the frame
            var = self.cell_vars[id(cell)]
            if var is None:
                raise NameError(f"cannot access free variable '{name}' where it is not associated with a value")
            return var
        try:
            value = cell.cell_contents
        except ValueError:
            raise NameError(f"cannot access free variable '{name}' where it is not associated with a value") \
                from None
        source = frame.closure_sources.get(name)
        if source is None:
            source = AttrSource(cell_var.source, "cell_contents") if cell_var.source is not None else \
                CellSource(cell, name, id(cell))
        return self.wrap(value, source)

    def store_cell(self, frame: Frame, name: str, var: Var) -> None:
        cell = frame.cell(name).value
        if id(cell) not in self.cell_vars:
            self.side_effect(f"assignment to the variable {name!r}, which another function shares")
        self.cell_vars[id(cell)] = var
        cell.cell_contents = var.value

    def delete_cell(self, frame: Frame, name: str) -> None:
        cell = frame.cell(name).value
        if id(cell) not in self.cell_vars:
            self.side_effect(f"del of the variable {name!r}, which another function shares")
        self.cell_vars[id(cell)] = None
        del cell.cell_contents

    def import_module(self, frame: Frame, name: str, fromlist, level: int) -> Var:
        """An import statement inside the function: a lookup when everything it names is imported already."""
        module = sys.modules.get(name) if level == 0 else None
        if module is None or any(not hasattr(module, n) for n in fromlist or ()):
            self.side_effect(f"import of {name}, which runs the module's code the first time")
        result = __import__(name, frame.f_globals, None, fromlist, level)
        return self.wrap(result, ObjectSource(result, f"module {result.__name__}"))

    def load_attr(self, obj: Var, name: str) -> Var:
        value = obj.value
        if isinstance(value, Tensor):
            return self.created(self._run(getattr, (value, name), {}))
        if obj.source is not None:
            if isinstance(value, types.ModuleType):
                self.guard(obj)
            else:  # attribute lookup depends on the object's type (and the attribute, read through its source)
                self.guards.add(Guard("type", obj.source, type(value), self.loc()))
            return self.wrap(self._run(getattr, (value, name), {}), AttrSource(obj.source, name))
        return self._from_container(self._run(getattr, (value, name), {}))

    # --- calls

    def call(self, frame: Frame, fn: Var, args: list[Var], kwargs: dict[str, Var]) -> Var:
        f = fn.value
        if isinstance(f, types.MethodType) and isinstance(f.__self__, Tensor):
            return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
        if f is getattr or f is hasattr:
            return self._getattr(f, args, kwargs)
        if f in TYPE_ONLY_BUILTINS:
            return self._type_only(f, args, kwargs)
        if self._has_callback(args, kwargs) and not (isinstance(f, types.FunctionType) and not
                                                     is_internal_function(f)):
            raise BreakGraph(f"{getattr(f, '__name__', f)} is given a Python function to call, which it would "
                             f"run where graph_lab cannot see", "it runs as ordinary Python between two graphs")
        if is_internal_function(f) and not isinstance(f, type):
            if (getattr(f, "__module__", "") or "").startswith("numpy.random"):
                self.side_effect(f"random number generation ({f.__name__})")
            if f in IMPURE_NUMPY or (isinstance(f, types.MethodType) and not isinstance(f.__self__, Tensor)):
                self.side_effect(f"call to {getattr(f, '__qualname__', f)}, which changes state outside the graph")
            if fn.source is not None:
                self.guard(fn)
            return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
        if isinstance(f, type) and issubclass(f, (np.generic, np.dtype)):
            return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
        if f in PURE_BUILTINS or getattr(f, "__module__", None) == "math":
            return self._pure_builtin(f, args, kwargs)
        if isinstance(f, types.BuiltinFunctionType) and isinstance(getattr(f, "__self__", None), types.ModuleType):
            self.side_effect(f"call to {f.__name__}(), which graph_lab treats as having effects outside the graph")
        if isinstance(f, (types.BuiltinMethodType, types.MethodWrapperType)) and hasattr(f, "__self__"):
            return self._builtin_method(f, fn, args, kwargs)
        target, bound_self, self_source, func_source = self._python_callable(fn)
        if target is not None:
            all_args = ([Var(bound_self, self_source)] if bound_self is not None else []) + list(args)
            return self.inline(frame, target, all_args, kwargs, func_source)
        name = getattr(f, "__qualname__", None) or type(f).__name__
        raise BreakGraph(f"call to {name}, which graph_lab cannot see into (not NumPy, F, a pure builtin, or "
                         f"a plain Python function)",
                         "move the call outside the compiled function, or accept the break: it runs eagerly")

    def _raws(self, values):
        if isinstance(values, dict):
            return {k: self.use(v) for k, v in values.items()}
        return [self.use(v) for v in values]

    @staticmethod
    def _has_callback(args, kwargs) -> bool:
        for v in list(args) + list(kwargs.values()):
            f = v.value
            if isinstance(f, (types.FunctionType, types.MethodType)) and not is_internal_function(f):
                return True
            if is_user_object(f) and callable(f):
                return True
        return False

    def _pure_builtin(self, f, args, kwargs) -> Var:
        if f is len and len(args) == 1 and not kwargs and not isinstance(args[0].value, Tensor):
            value, source = args[0].value, args[0].source
            if source is None:
                return Var(len(value))  # a container made during capture: its length is known
            if type(value) in (list, tuple, dict, str):  # computed again on each call, guarded where it is used
                return Var(len(value), DerivedSource(len, (source,), "len({0})"))
        if f in (zip, enumerate, reversed, iter) and not kwargs and args and all(
                type(a.value) in (list, tuple, dict) or isinstance(a.value, Tensor) for a in args[:1 if f is not zip
                                                                                              else None]):
            return self._iterator(f, args)
        if f in TEXT_BUILTINS and any(isinstance(a.value, Tensor) for a in args):
            raise BreakGraph(f"data-dependent value: {f.__name__}() of a tensor needs its values",
                             "format the array after the compiled function returns, or accept the break")
        derived = self._derived(f, args, kwargs)
        if derived is not None:
            return derived
        result = self._run(f, self._raws(args), self._raws(kwargs))
        if f in _LAZY_ITERATORS:  # an iterator: its items now, as a state a recipe can rebuild
            result = IterState([self._from_container(x) for x in self._run(list, (result,), {})])
        return self.created(result)

    def _iterator(self, f, args) -> Var:
        """zip, enumerate, reversed, iter over lists, tuples, dicts or arrays: an IterState of Vars, so that
        the items keep their sources."""
        if f is zip:
            columns = [self.iterate(a, as_vars=True) for a in args]
            rows = [self.build(tuple, row) for row in zip(*columns)]
        elif f is enumerate:
            start = self.use(args[1]) if len(args) > 1 else 0
            rows = [self.build(tuple, [Var(start + i), v]) for i, v in enumerate(self.iterate(args[0], True))]
        elif f is reversed:
            if type(args[0].value) is dict or len(args) != 1:
                return self.created(self._run(f, self._raws(args), {}))
            rows = self.iterate(args[0], as_vars=True)[::-1]
        else:
            if len(args) != 1:
                return self.created(self._run(f, self._raws(args), {}))
            rows = self.iterate(args[0], as_vars=True)
        return self.created(IterState(rows))

    def _type_only(self, f, args, kwargs) -> Var:
        """isinstance, issubclass, type, callable: only the type of the object is guarded."""
        if kwargs or not args:
            return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
        obj, rest = args[0], [self.use(a) for a in args[1:]]
        if isinstance(obj.value, Tensor):
            kind = np.ndarray
            return self.created(self._run(issubclass, [kind] + rest, {}) if f is isinstance else
                                kind if f is type else self._run(f, [obj.value] + rest, {}))
        if obj.source is not None:
            if f is issubclass:
                self.use(obj)
            else:
                self.guards.add(Guard("type", obj.source, type(obj.value), self.loc()))
        return self.created(self._run(f, [obj.value] + rest, {}))

    def _getattr(self, f, args, kwargs) -> Var:
        """getattr(obj, "name"[, default]) reads an attribute as ``obj.name`` does; hasattr is derived."""
        if kwargs or len(args) not in (2, 3) or not isinstance(args[1].value, str) or args[1].source is not None:
            return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
        obj, name = args[0], args[1].value
        present = hasattr(obj.value, name)
        if obj.source is not None and not isinstance(obj.value, Tensor) and (f is hasattr or not present):
            has = Var(present, DerivedSource(hasattr, (obj.source, Const(name)), "hasattr({0}, {1})"))
            if f is hasattr:
                return has
            self.guard(has)
        if f is hasattr:
            return Var(present)
        if not present and len(args) == 3:
            return args[2]
        return self.load_attr(obj, name)

    def _builtin_method(self, f, fn: Var, args, kwargs) -> Var:
        """A method of a builtin type (list.append, dict.items, str.join...)."""
        owner, name = f.__self__, f.__name__
        owner_var = Var(owner, fn.source.base if isinstance(fn.source, AttrSource) else self.sourced.get(id(owner)))
        if isinstance(owner, types.ModuleType):
            self.side_effect(f"call to {name}(), which graph_lab treats as having effects outside the graph")
        if isinstance(owner, _IMMUTABLE):
            text = "{0}." + name + "(" + ", ".join("{%d}" % (i + 2) for i in range(len(args))) + ")"
            derived = self._derived(call_method, [owner_var, Var(name)] + list(args), kwargs, text)
            if derived is not None:
                return derived
            result = self._run(f if owner_var.source is None else getattr(self.use(owner_var), name),
                               self._raws(args), self._raws(kwargs))
        elif id(owner) in self.created_ids:
            if name == "append" and len(args) == 1 and self.containers.append(owner, args[0]):
                return Var(None)
            if name == "get" and 1 <= len(args) <= 2 and not kwargs:
                element = self.containers.get(owner, self.use(args[0]))
                if element is not None:
                    return element
            self.containers.settle(owner)
            keep = name in ("append", "insert", "setdefault", "__setitem__")  # they store the object itself
            result = self._run(f, [self.contained(a) for a in args] if keep else self._raws(args), self._raws(kwargs))
        elif name in READ_ONLY_METHODS and owner_var.source is not None and (
                type(owner) in (list, tuple, dict) or is_namedtuple(owner)):
            result = self._run(getattr(self.use(owner_var), name), self._raws(args), self._raws(kwargs))
        else:
            self.side_effect(f"call of {type(owner).__name__}.{name} on an object the function did not create")
        if isinstance(result, _DICT_VIEWS):
            self.dict_views[id(result)] = (owner_var, name)
        return self.created(result)

    def _python_callable(self, fn: Var):
        """(function to inline, bound self, source of self, source of the function) or Nones."""
        f = fn.value
        if isinstance(f, types.FunctionType) and not is_internal_function(f):
            if fn.source is not None:
                self._guard_function(f, fn.source)
            return f, None, None, fn.source
        if isinstance(f, types.MethodType) and isinstance(f.__func__, types.FunctionType) \
                and not is_internal_function(f.__func__):
            func_source = AttrSource(fn.source, "__func__") if fn.source is not None else None
            if func_source is not None:
                self._guard_function(f.__func__, func_source)
            self_source = fn.source.base if isinstance(fn.source, AttrSource) else self.sourced.get(id(f.__self__))
            return f.__func__, f.__self__, self_source, func_source
        call = getattr(type(f), "__call__", None)
        if isinstance(call, types.FunctionType) and not isinstance(f, type) and not is_internal_function(call):
            if fn.source is not None:
                self.guards.add(Guard("type", fn.source, type(f), self.loc()))
            return call, f, fn.source, None
        return None, None, None, None

    def _guard_function(self, f: types.FunctionType, source) -> None:
        """What inlining ``f`` depends on: its code, globals and defaults (its closure is read through sources).
        Not the function object: an inner function is a new object on every call, with the same code."""
        loc = self.loc()
        self.guards.add(Guard("id", AttrSource(source, "__code__"), f.__code__, loc))
        self.guards.add(Guard("id", AttrSource(source, "__globals__"), f.__globals__, loc))
        for name, defaults in (("__defaults__", f.__defaults__), ("__kwdefaults__", f.__kwdefaults__)):
            where = AttrSource(source, name)
            if defaults is None:
                self.guards.add(Guard("equals", where, None, loc))
            else:  # the values themselves are read through sources, as arguments are
                self.guards.add(Guard("type", where, type(defaults), loc))
                self.guards.add(Guard("len", where, len(defaults), loc) if type(defaults) is tuple else
                                Guard("keys", where, tuple(defaults), loc))

    def inline(self, frame: Frame, func: types.FunctionType, args: list[Var], kwargs: dict[str, Var], source):
        if frame.depth > 32:
            raise BreakGraph("call depth over 32 (recursion?)")
        code = func.__code__
        local_vars = self._bind(func, args, kwargs, source)
        cells, closure_sources = {}, {}
        for i, (name, cell) in enumerate(zip(code.co_freevars, func.__closure__ or ())):
            cells[name] = cell
            if source is not None:
                closure_sources[name] = CellContentsSource(source, i, name)
        child = Frame(code, func.__globals__, cells, local_vars, self, closure_sources, parent=frame)
        outer, self.frame = self.frame, child
        try:
            return child.run()
        finally:
            self.frame = outer

    def _bind(self, func: types.FunctionType, args: list[Var], kwargs: dict[str, Var], source) -> dict[str, Var]:
        code = func.__code__
        if any(name.startswith(".") for name in code.co_varnames[:code.co_argcount]):
            # a comprehension or generator expression: its argument is named ".0", which inspect renames
            return dict(zip(code.co_varnames, args))
        try:
            bound = inspect.signature(func).bind(*args, **kwargs)
        except TypeError as e:
            raise BreakGraph(f"TypeError while capturing: {e}") from None
        bound.apply_defaults()
        local_vars = {}
        for name, value in bound.arguments.items():
            kind = bound.signature.parameters[name].kind
            if kind == inspect.Parameter.VAR_POSITIONAL:
                local_vars[name] = self.build(tuple, [v if isinstance(v, Var) else Var(v) for v in value])
            elif kind == inspect.Parameter.VAR_KEYWORD:
                local_vars[name] = self.build(dict, {k: v if isinstance(v, Var) else Var(v) for k, v in value.items()})
            elif isinstance(value, Var):
                local_vars[name] = value
            elif source is None and id(func) in self.created_ids:  # made during capture, defaults too
                local_vars[name] = Var(value) if is_constant(value) else self._from_container(value)
            else:  # a default value: read through the function, as an argument is read
                local_vars[name] = self.wrap(value, self._default_source(func, name, source))
        return local_vars

    @staticmethod
    def _default_source(func, name: str, source):
        if source is None:
            source = ObjectSource(func, func.__qualname__)
        code = func.__code__
        positional = code.co_varnames[:code.co_argcount]
        if name in positional:
            first = len(positional) - len(func.__defaults__)
            return ItemSource(AttrSource(source, "__defaults__"), positional.index(name) - first)
        return ItemSource(AttrSource(source, "__kwdefaults__"), name)


def _expression_text(filename: str, positions) -> str:
    """The source text an instruction came from (one line only), e.g. ``float(x.sum())``."""
    if positions.lineno is None or positions.lineno != positions.end_lineno or positions.col_offset is None:
        return ""
    line = linecache.getline(filename, positions.lineno)
    return line.encode()[positions.col_offset:positions.end_col_offset].decode(errors="replace").strip()


def call_method(obj, name: str, *args):
    """``obj.name(*args)``: a method of an immutable value, as the function of a ``DerivedSource``."""
    return getattr(obj, name)(*args)


_TEXT_FUNCTIONS: tuple = ()


def handlers_text_functions() -> tuple:
    """The FORMAT_VALUE / BUILD_STRING helpers of ``handlers`` (imported late: handlers imports nothing here)."""
    global _TEXT_FUNCTIONS
    if not _TEXT_FUNCTIONS:
        from .handlers import FORMATTERS, join_strings
        _TEXT_FUNCTIONS = FORMATTERS + (join_strings,)
    return _TEXT_FUNCTIONS


def compilable_callee(f):
    """(function, bound self or None) when ``f`` is a Python function that a call at a graph break may run
    compiled, as TorchDynamo compiles every frame: a module-level function or a method. Functions defined
    inside other functions are new objects on every call, so they run as plain Python."""
    target, bound = f, None
    if isinstance(f, types.MethodType):
        target, bound = f.__func__, f.__self__
    elif not isinstance(f, (types.FunctionType, type)) and isinstance(getattr(type(f), "__call__", None),
                                                                       types.FunctionType):
        target, bound = type(f).__call__, f
    if not isinstance(target, types.FunctionType) or is_internal_function(target) or is_library_code(target) \
            or "<locals>" in target.__qualname__ or target.__code__.co_flags & (
            inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return None
    return target, bound


def is_library_code(f) -> bool:
    """The standard library's or an installed package's function (json.dumps...): never compiled."""
    module = (getattr(f, "__module__", None) or "").split(".")[0]
    filename = f.__code__.co_filename
    return module in sys.stdlib_module_names or "site-packages" in filename or "dist-packages" in filename


class ConcreteContext:
    """Everything real: runs the instruction at a graph break exactly as CPython would. A Python function it
    calls runs through ``compile_callee`` (its own compiled version) when one is given."""

    symbolic = False

    def __init__(self, compile_callee=None):
        self.compile_callee = compile_callee

    def wrap(self, value, source) -> Var:
        return Var(value, source)

    def created(self, value) -> Var:
        return Var(value)

    def use(self, var: Var):
        return var.value

    identity = real = contained = use

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

    def build(self, kind, items):
        if kind is dict:
            return Var({k: v.value for k, v in items.items()})
        return Var(kind(v.value for v in items))

    def append(self, container, var):
        container.value.append(var.value)

    def keyword_items(self, var):
        return {k: Var(v) for k, v in dict(var.value).items()}

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

    def make_cell(self, frame, name):
        cell = types.CellType()
        if name in frame.locals:
            cell.cell_contents = frame.locals[name].value
        frame.locals[name] = Var(cell)

    def load_cell(self, frame, name):
        try:
            return Var(frame.cell(name).value.cell_contents)
        except ValueError:
            raise NameError(f"cannot access free variable '{name}' where it is not associated with a value") \
                from None

    def store_cell(self, frame, name, var):
        frame.cell(name).value.cell_contents = var.value

    def delete_cell(self, frame, name):
        del frame.cell(name).value.cell_contents

    def import_module(self, frame, name, fromlist, level):
        return Var(__import__(name, frame.f_globals, None, fromlist, level))

    def load_attr(self, obj, name):
        return Var(getattr(obj.value, name))

    def call(self, frame, fn, args, kwargs):
        f, args, kwargs = fn.value, [a.value for a in args], {k: v.value for k, v in kwargs.items()}
        callee = compilable_callee(f) if self.compile_callee is not None else None
        if callee is not None:
            compiled = self.compile_callee(callee[0])
            if compiled is not None:
                return Var(compiled(*args, **kwargs) if callee[1] is None else compiled(callee[1], *args, **kwargs))
        return Var(f(*args, **kwargs))
