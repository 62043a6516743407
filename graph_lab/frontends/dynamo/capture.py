"""Capture mode: what each handler does when values may be stand-in tensors.

``CaptureContext`` answers the handlers' questions (read a global, call a function, test a truth value...) by
recording tensor operations into a graph, adding a guard whenever the capture depends on a value read from
the segment's inputs, and raising ``BreakGraph`` where it cannot go on. Its call rules are in ``calls.py``, how
values enter it (graph inputs, the Vars of what is read from the inputs) in ``capture_inputs.py``;
``concrete.ConcreteContext`` answers the same questions for real, for the one instruction run at a graph break.

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
import operator
import sys
import types

import numpy as np

from ...ir.graph import Graph
from ...ir.shape_env import ShapeEnv
from ..tensor import Tensor
from . import loop_index, loop_regions, masked
from .calls import GETATTR, CallCapture
from .capture_inputs import InputCapture
from .concrete import ConcreteContext
from .containers import TrackedContainers
from .dynamic_ints import index_key, python_key
from .frame import BreakGraph, Frame, IterState, Var, capture_error
from .guard_set import Guard, GuardSet
from .int_lists import dynamic_list_slice
from .internal_errors import raises_for_the_program
from .iterators import SequenceIter, items_left
from .modules import getattr_by_python, getitem_by_python, key_in_dict, python_getitem
from .mutation import InputWrites, store_into, stores_itself
from .objects import IdentityRules, super_attribute
from .recorder import DynamoRecorder
from .sources import AttrSource, CellSource, Const, DerivedSource, GlobalSource, ItemSource, ObjectSource
from .values import (CALLABLES, IMMUTABLE, MISSING, TENSOR_OR_IMMUTABLE, derived_text, handlers_text_functions,
                     is_constant, is_internal_function, is_library_module, is_namedtuple, is_rebuildable, is_scalar,
                     is_user_object)

__all__ = ["CaptureContext", "ConcreteContext", "DynamoRecorder"]  # ConcreteContext lives in concrete.py


_REREADABLE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, np.ufunc, type)
"""Values that a global or module attribute read in a loop gives again as the same Var (see load_global)."""


class CaptureContext(InputCapture, CallCapture, IdentityRules):
    symbolic = True

    def __init__(self, fn_globals: dict, dynamic_axes=None):
        self.graph = Graph("compiled")
        self.recorder = DynamoRecorder(self.graph, self.loc)
        self.guards = GuardSet(counts=(len, items_left))  # (see GuardSet.merge_lower_bounds)
        self.writes = self.recorder.writes = InputWrites(self.guards, self.loc)
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
        self.dynamic_axes = dynamic_axes  # (source, array) -> axes to make symbolic; None: every size static
        self.shape_env: ShapeEnv | None = None  # made when the first size becomes a symbol
        self.size_dims: list[tuple] = []  # (source, axis) of each size symbol s0, s1, ...
        self.patterns: dict[int, tuple] = {}  # id(array) -> its shape with None for symbolic sizes
        self.dynamic_ints: frozenset | set = frozenset()  # sources of the ints read as size symbols (dynamic_ints)
        self.int_symbols: dict = {}  # source -> the SymInt it was read as
        self.loop_variables = 0  # how many loop variables were given a LoopSource (loop_index.py)
        self.loop_roots: set[int] = set()  # id() of the constant node of each, once used (loop_index.graph_value)
        # Work done once per capture rather than at each loop iteration (see load_global, load_attr):
        self._global_vars: dict[tuple, Var] = {}  # (id(namespace), name) -> the Var read, for modules, functions
        self._attr_vars: dict[tuple, tuple] = {}  # (id(module Var), name) -> (module Var, attribute Var)

    # --- values made during capture

    def created(self, value) -> Var:
        if isinstance(value, TENSOR_OR_IMMUTABLE):
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
        if self.loop_variables and (number := loop_index.operand(self, var)) is not None:
            return number
        if var.source is not None and is_scalar(var.value) and not isinstance(var.value, (str, complex)):
            return self.scalar_input(var)
        return self.use(var)

    def contained(self, var: Var):
        """A value to store into a container made during capture: a number read from the inputs is guarded now,
        since a container keeps values, not where they came from."""
        if var.source is not None and isinstance(var.value, IMMUTABLE):
            self.guard(var)
        return var.value

    def guard(self, var: Var) -> None:
        """The guards that make the capture valid for ``var``'s value, read from its source."""
        if self.loop_variables and loop_index.note_python_use(self, var):
            return  # (a number the loop's range decides, which is guarded: loop_index.note_python_use)
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
        elif isinstance(value, CALLABLES) or is_internal_function(value):
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

    def truth(self, var: Var) -> bool:
        value = var.value
        if var.source is None:
            return bool(value)
        if is_user_object(value):
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

    def stores_itself(self, obj: Var, key, value: Var) -> bool:
        return stores_itself(self, obj, key, value)

    def check_inplace(self, left: Var, op: str) -> None:
        if isinstance(left.value, (list, dict, set)):
            self.mutate(left, f"'{op}'")

    # --- operations

    @raises_for_the_program
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
        if fn is operator.contains and type(values[0]) is dict and args[0].source is not None:
            return key_in_dict(self, args[0], args[1])  # (its keys alone: its values may be modules)
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
        return Var(result, DerivedSource(fn, parts, text or derived_text(fn, len(args))))

    @raises_for_the_program
    def _run(self, fn, args, kwargs):
        try:
            return fn(*args, **kwargs)
        except BreakGraph:
            raise
        except Exception as e:
            raise capture_error(e, stand_in_method=isinstance(getattr(fn, "__self__", None), Tensor)) from None

    def subscript(self, container: Var, key: Var) -> Var:
        c = container.value
        if isinstance(c, Tensor):
            k = key.value if isinstance(key.value, Tensor) else loop_index.index_key(self, c, key) or \
                index_key(self, key)
            return Var(masked.select(c, k)) if masked.is_mask_of(k, c) else \
                self.created(self._run(operator.getitem, (c, k), {}))
        if container.source is not None and (type(c) in (list, tuple, dict) or is_namedtuple(c)):
            k = python_key(self.use(key))
            if (part := dynamic_list_slice(self, container, k)) is not None:  # (int_lists.py)
                return part
            self.guard(container)
            if isinstance(k, (int, str, np.integer)) and not isinstance(k, bool) or type(c) is dict:
                return self.wrap(self._run(operator.getitem, (c, k), {}), ItemSource(container.source, k))
            return self.created(self._run(operator.getitem, (self.lift(c, container.source), k), {}))
        if container.source is not None and python_getitem(c) is not None and is_user_object(c):
            return getitem_by_python(self, container, key)  # blocks[key] of an nn.ModuleDict
        k = python_key(self.use(key))
        element = self.containers.get(c, k) if id(c) in self.created_ids else None
        if element is not None:
            return element
        result = self._run(operator.getitem, (self.use(container), k), {})
        return self._from_container(result)

    def delete_subscript(self, container: Var, key: Var) -> None:
        self.mutate(container, "del x[key]")
        self.containers.settle(container.value)
        self._run(operator.delitem, (container.value, self.use(key)), {})

    def store_subscript(self, container: Var, key: Var, value: Var) -> None:
        c = container.value
        if isinstance(c, Tensor):
            return store_into(self, c, key, value)
        if stores_itself(self, container, key.value, value, item=True):
            return
        self.mutate(container, "item assignment")
        k = python_key(self.use(key))
        if not self.containers.set(c, k, value):
            self.containers.settle(c)
            self._run(operator.setitem, (c, k, self.contained(value)), {})

    def get_iter(self, var: Var) -> Var:
        """``iter(value)`` (GET_ITER, the builtin): over a list or tuple of the inputs, lazily."""
        value = var.value
        if isinstance(value, IterState):
            return var
        if var.source is not None and (type(value) in (list, tuple) or is_namedtuple(value)) \
                and (type(value) is list or not is_constant(value)):  # (a list is never a constant)
            self.guards.add(Guard("type", var.source, type(value), self.loc()))
            it = SequenceIter(self, var)
            return self.created(it)
        return self.created(loop_regions.loop_iterator(self, value, self.iterate(var, as_vars=True)))

    def iterate(self, var: Var, as_vars: bool = False) -> list:
        value = var.value
        if isinstance(value, IterState):
            items = value.rest()
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
            if var.source is not None and hasattr(type(value), "__next__"):
                # An iterator made before this graph: taking its items changes it, and a capture that starts
                # again (after a break further on) would find it emptied.
                raise BreakGraph(f"iteration over a {type(value).__name__} iterator made before this graph, "
                                 f"which taking its items would use up", "it runs as ordinary Python")
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
        key = (id(namespace), name)  # (the namespace is a function's globals: alive for the whole capture)
        known = self._global_vars.get(key)
        if known is not None and known.value is value:
            return known  # read before (in a loop): the same Var, whose guards are added once (see guard)
        own = namespace is self.fn_globals
        var = self.wrap(value, GlobalSource(name, 0 if own else id(namespace), None if own else namespace))
        if isinstance(value, _REREADABLE):
            # Wrapping such a value again would give an equal Var and record nothing new (it is no array).
            self._global_vars[key] = var
        return var

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
            # A cell the segment started with (a local of the function, passed on to a comprehension or an inner
            # function) is a new cell on every call: read it through where it came from, not as this one cell.
            where = cell_var.source if cell_var.source is not None else self.sourced.get(id(cell))
            source = AttrSource(where, "cell_contents") if where is not None else CellSource(cell, name, id(cell))
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
        if type(value) is Tensor:
            return self.created(self._run(getattr, (value, name), {}))
        known = self._attr_vars.get((id(obj), name))
        if known is not None and getattr(value, name, MISSING) is known[1].value:
            # ``np.tanh`` read again from the same module Var (a loop): the same Var as the first time, which
            # added the guards; the lookup below would add the same again. (The entry holds ``obj``, so its id
            # stays its own.)
            return known[1]
        var = self._load_attr(obj, name)
        if isinstance(value, types.ModuleType) and obj.source is not None and (
                var.source is None or isinstance(var.value, _REREADABLE)):
            self._attr_vars[(id(obj), name)] = (obj, var)
        return var

    def _load_attr(self, obj: Var, name: str) -> Var:
        value = obj.value
        if isinstance(value, Tensor):
            return self.created(self._run(getattr, (value, name), {}))
        if type(value) is super:
            return super_attribute(self, obj, name)
        if isinstance(value, types.ModuleType) and is_library_module(value) and obj.source is not None:
            self.guard(obj)
            attr, source = self._run(getattr, (value, name), {}), AttrSource(obj.source, name)
            if is_constant(attr):  # math.pi: a constant of the graph (guarded, in case someone assigns it)
                self.guards.add(Guard("equals", source, attr, self.loc()))
                return Var(attr)
            # What the branch below would do for a module guarded just above: the attribute, read once.
            return self.wrap(attr, source)
        if obj.source is not None:
            if isinstance(value, types.ModuleType):
                self.guard(obj)
            else:  # attribute lookup depends on the object's type (and the attribute, read through its source)
                self.guards.add(Guard("type", obj.source, type(value), self.loc()))
                getter = self._python_getter(value, name)
                if getter is GETATTR:
                    return getattr_by_python(self, obj, name)
                if getter is not None:  # a property: its code runs as the function's own code would
                    return self.inline(self.frame, getter, [obj], {},
                                       ObjectSource(getter, f"{type(value).__qualname__}.{name}"))
            return self.wrap(self._run(getattr, (value, name), {}), AttrSource(obj.source, name))
        return self._from_container(self._run(getattr, (value, name), {}))

