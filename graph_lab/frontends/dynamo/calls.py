"""Calls in capture mode: which callee is recorded, evaluated, inlined or a graph break.

A call to NumPy or ``F`` is recorded (stand-in arguments) or run now (concrete ones); a pure builtin is evaluated
(on numbers read from the inputs, *derived*); a method of a container the function made runs on it; a plain
Python function, a method or an object with ``__call__`` is inlined: its own bytecode runs in a child frame of
the same capture. Anything else (print, an unknown C function, a builtin given a Python callback) is a break.
``CallCapture`` is the half of ``CaptureContext`` that holds these rules.
"""

from __future__ import annotations

import inspect
import types

import numpy as np

from ...errors import OpError
from ...ir.sizes import symbol_sources
from ...ops import REGISTRY, Op
from ...ops.base import is_tensorlike
from ...ir.symbolic import FUNCTIONS, SymbolicValue, float_op, free_symbols
from .. import control
from ..numpy_api import SIZE_CONSTRUCTORS
from ..symbols import SymFloat
from ..tensor import Tensor
from .frame import BreakGraph, Frame, IterState, Var
from .dynamic_ints import tri_of_sizes
from .int_lists import list_as_array, list_length
from .returned_scalars import returned_scalar
from .guard_set import Guard
from .internal_errors import raises_for_the_program
from .iterators import EnumerateIter, SequenceIter
from .mutation import copyto, store_key
from .modules import dict_view, holds_objects, tensorlike_as_eager
from .nesting import differentiates, grad_call
from .objects import bound_self_source, capture_super
from .sources import AttrSource, CellContentsSource, Const, DerivedSource, ItemSource, ObjectSource
from .values import (DICT_VIEWS, IMMUTABLE, IMPURE_NUMPY, LAZY_ITERATORS, MISSING, PURE_BUILTINS,
                     READ_ONLY_METHODS, TEXT_BUILTINS, TYPE_ONLY_BUILTINS, call_method, is_constant,
                     is_internal_function, is_namedtuple, is_user_object)


CONTROL_FLOW = frozenset({control.cond, control.while_loop, control.fori_loop, control.scan})
ALLOCATORS = {np.zeros: ("shape", "dtype", "order"), np.ones: ("shape", "dtype", "order"),
              np.empty: ("shape", "dtype", "order"), np.full: ("shape", "fill_value", "dtype", "order"),
              np.ndarray: ("shape", "dtype", "buffer", "offset", "strides", "order")}
"""NumPy's allocating functions that capture records as a ``full`` node, with the names of their arguments."""
GETATTR = object()
"""What ``_python_getter`` gives when the type's Python ``__getattr__`` computes the attribute."""


class CallCapture:
    """Calls, attribute getters and inlining, for ``CaptureContext`` (which provides use, guard, wrap...)."""

    @staticmethod
    def _python_getter(obj, name: str):
        """The getter of a property, GETATTR when the type's Python ``__getattr__`` computes the attribute, or
        None for a plain attribute; breaks when Python code of another kind would compute it (a custom
        descriptor, __getattribute__)."""
        kind = type(obj)
        static = inspect.getattr_static(obj, name, MISSING)
        if isinstance(static, property):
            if isinstance(static.fget, types.FunctionType):
                return static.fget
        elif static is MISSING:
            if isinstance(getattr(kind, "__getattr__", None), types.FunctionType):
                return GETATTR  # computed by that Python code, which is inlined (modules.py)
            return None
        elif isinstance(getattr(type(static), "__get__", None), types.FunctionType):
            raise BreakGraph(f"the attribute {name!r} of {kind.__qualname__} is computed by a Python descriptor",
                             "it runs as ordinary Python between two graphs")
        if isinstance(kind.__getattribute__, types.FunctionType):
            raise BreakGraph(f"{kind.__qualname__}.__getattribute__ is Python code",
                             "it runs as ordinary Python between two graphs")
        return None

    # --- calls

    @raises_for_the_program
    def call(self, frame: Frame, fn: Var, args: list[Var], kwargs: dict[str, Var]) -> Var:
        """``fn(*args, **kwargs)``: recorded, evaluated, inlined or a graph break, by the rules below."""
        f = fn.value
        if isinstance(f, types.MethodType) and isinstance(f.__self__, Tensor):
            return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
        if fn.source is not None and (f in PURE_BUILTINS or f in TYPE_ONLY_BUILTINS or f is getattr or
                                      f is hasattr or f is next or getattr(f, "__module__", None) == "math"):
            # evaluated or decided now: the name must still mean this function (a global may shadow a builtin)
            self.guards.add(Guard("id", fn.source, f, self.loc()))
        if f is getattr or f is hasattr:
            return self._getattr(f, args, kwargs)
        converted = returned_scalar(frame, f, args, kwargs)  # ``return int(t)``: no break (returned_scalars.py)
        if converted is not None:
            if fn.source is not None:  # (the name must still mean the builtin)
                self.guard(fn)
            return Var(converted)
        if f is next and 1 <= len(args) <= 2 and not kwargs and isinstance(args[0].value, IterState):
            var = args[0].value.next_var()  # an iterator graph_lab tracks: its next item is known
            if var is not None:
                return var
            if len(args) == 2:
                return args[1]
            raise BreakGraph("StopIteration raised while capturing")
        if f in TYPE_ONLY_BUILTINS:
            return self._type_only(f, args, kwargs)
        if f is is_tensorlike and not kwargs:
            return tensorlike_as_eager(args)
        if f in CONTROL_FLOW:
            return self._control_flow(frame, fn, args, kwargs)
        if self._has_callback(args, kwargs) and not (isinstance(f, types.FunctionType) and not
                                                     is_internal_function(f)):
            raise BreakGraph(f"{getattr(f, '__name__', f)} is given a Python function to call, which it would "
                             f"run where graph_lab cannot see", "it runs as ordinary Python between two graphs")
        if f in ALLOCATORS:
            made = self._allocate(f, args, kwargs)
            if made is not None:
                if fn.source is not None:
                    self.guard(fn)
                return made
        if f is np.tri:  # with a size symbol: recorded (``tri_of_sizes``), else a constant made by NumPy now
            made = tri_of_sizes(self, self._raws(args), self._raws(kwargs))
            if made is not None:
                return self.created(made)
        if f in (np.array, np.asarray) and len(args) == 1 and not kwargs:  # of a dynamic list of ints
            made = list_as_array(self, args[0])
            if made is not None:
                if fn.source is not None:
                    self.guard(fn)
                return Var(made)
        if f is np.copyto and args and isinstance(args[0].value, Tensor):  # a write into a stand-in: recorded
            if fn.source is not None:
                self.guard(fn)
            return self.created(self._run(copyto, self._raws(args), self._raws(kwargs)))
        if differentiates(f) is not None:  # graph_lab.grad(target): target's bytecode captured here
            return grad_call(self, frame, fn, args, kwargs)
        if is_internal_function(f) and not isinstance(f, type):
            if (getattr(f, "__module__", "") or "").startswith("numpy.random"):
                self.side_effect(f"random number generation ({f.__name__})")
            if f in IMPURE_NUMPY or (isinstance(f, types.MethodType) and not isinstance(f.__self__, Tensor)):
                self.side_effect(f"call to {getattr(f, '__qualname__', f)}, which changes state outside the graph")
            if fn.source is not None:
                # (a ufunc's method is a new object at each read: the ufunc it belongs to is what is guarded)
                self.guard(Var(f.__self__, fn.source.base) if isinstance(getattr(f, "__self__", None), np.ufunc)
                           and isinstance(fn.source, AttrSource) else fn)
            constructor = SIZE_CONSTRUCTORS.get(f) if getattr(f, "__hash__", None) is not None else None
            if constructor is not None and any(isinstance(a.value, SymbolicValue) for a in list(args) +
                                               list(kwargs.values())):  # np.arange(T), np.tri(T) of a symbolic T
                return self.created(self._run(constructor, self._raws(args), self._raws(kwargs)))
            return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
        if isinstance(f, type) and issubclass(f, (np.generic, np.dtype)):
            return self.created(self._run(f, self._raws(args), self._raws(kwargs)))
        if f in PURE_BUILTINS or getattr(f, "__module__", None) == "math":
            return self._pure_builtin(f, args, kwargs)
        if isinstance(f, types.BuiltinFunctionType) and isinstance(getattr(f, "__self__", None), types.ModuleType):
            self.side_effect(f"call to {f.__name__}(), which graph_lab treats as having effects outside the graph")
        if isinstance(f, (types.BuiltinMethodType, types.MethodWrapperType)) and hasattr(f, "__self__"):
            return self._builtin_method(f, fn, args, kwargs)
        if f is super:
            if fn.source is not None:
                self.guards.add(Guard("id", fn.source, f, self.loc()))
            return capture_super(self, frame, args, kwargs)
        if f is np.ndindex and not kwargs:
            if fn.source is not None:
                self.guard(fn)
            return self._ndindex(args)
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
        if getattr(f, "__module__", None) == "math" and getattr(f, "__name__", "") in FUNCTIONS and \
                len(args) == 1 and isinstance(args[0].value, SymbolicValue):
            # math.sqrt(d) of a size: a float computed when the graph runs, not a number frozen now
            return self.created(SymFloat(float_op(f.__name__, args[0].value.expr), self.shape_env))
        if f is len and len(args) == 1 and not kwargs and not isinstance(args[0].value, Tensor):
            value, source = args[0].value, args[0].source
            length = list_length(self, args[0])  # a dynamic list of ints: its size symbol (int_lists.py)
            if length is not None:
                return length
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
        if f in LAZY_ITERATORS:  # an iterator: its items now, as a state a recipe can rebuild
            result = IterState([self._from_container(x) for x in self._run(list, (result,), {})])
        return self.created(result)

    def _allocate(self, f, args: list[Var], kwargs: dict[str, Var]) -> Var | None:
        """``np.zeros(shape)`` and the other ALLOCATORS: a ``full`` node, so that the array is a stand-in and what
        is written into it stays in the graph. None for a call the op does not express (``order="F"``, a
        buffer), which runs as NumPy."""
        names = ALLOCATORS[f]
        if len(args) > len(names) or any(k not in names for k in kwargs):
            return None
        bound = dict(zip(names, args), **kwargs)
        if any(k in bound for k in ("buffer", "offset", "strides")) or \
                bound.get("order") is not None and self.use(bound["order"]) != "C":
            return None
        shape = self.use(bound["shape"])
        fill = self.operand(bound["fill_value"]) if "fill_value" in bound else 1.0 if f is np.ones else 0.0
        dtype = self.use(bound["dtype"]) if "dtype" in bound else None if f is np.full else np.float64
        definition = REGISTRY[Op.FULL]
        try:
            operands, attrs = definition.bind(shape, fill, dtype)
        except OpError as e:
            raise BreakGraph(f"{f.__name__}: {e}") from None
        return Var(self.recorder.emit(Op.FULL, operands, attrs))

    def _ndindex(self, args: list[Var]) -> Var:
        """``np.ndindex(shape)`` of sizes known now: the index tuples, as a state a recipe can rebuild (the NumPy
        object would be made by Python at a break, and iterating it there would give one graph per index)."""
        shape = [self.use(a) for a in args]
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = list(shape[0])
        if not all(type(d) is int for d in shape):
            raise BreakGraph("np.ndindex over sizes that are not ints known at capture (symbolic sizes)",
                             "it runs as ordinary Python between two graphs")
        return self.created(IterState([Var(index) for index in np.ndindex(*shape)]))

    def _iterator(self, f, args) -> Var:
        """zip, enumerate, reversed, iter over lists, tuples, dicts or arrays: an IterState of Vars, so that
        the items keep their sources."""
        if f is zip:
            columns = [self.iterate(a, as_vars=True) for a in args]
            rows = [self.build(tuple, row) for row in zip(*columns)]
        elif f is enumerate:
            start = self.use(args[1]) if len(args) > 1 else 0
            inner = self.get_iter(args[0]).value
            if isinstance(inner, SequenceIter):
                return self.created(EnumerateIter(self, inner, start))
            rows = [self.build(tuple, [Var(start + i), v]) for i, v in enumerate(inner.rest())]
        elif f is reversed:
            if type(args[0].value) is dict or len(args) != 1:
                return self.created(self._run(f, self._raws(args), {}))
            rows = self.iterate(args[0], as_vars=True)[::-1]
        else:
            if len(args) != 1:
                return self.created(self._run(f, self._raws(args), {}))
            return self.get_iter(args[0])
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
            if f is type and not rest:  # the class, read through its source: its attributes are guarded too
                return self.wrap(type(obj.value), AttrSource(obj.source, "__class__"))
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
        if isinstance(owner, np.ufunc) and name == "at" and len(args) == 3 and \
                isinstance(target := self.operand(args[0]), Tensor):
            # np.add.at(x, idx, v) into a stand-in: an accumulating index_update, written back like x[idx] += v
            return self.created(self._run(f, [target, store_key(self, args[1]), self.operand(args[2])],
                                          self._raws(kwargs)))
        if isinstance(owner, IMMUTABLE):
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
        elif name in ("values", "items", "keys") and not args and not kwargs and owner_var.source is not None \
                and type(owner) is dict and holds_objects(owner):
            return dict_view(self, owner_var, name)  # a module's submodules or hooks
        elif name in READ_ONLY_METHODS and owner_var.source is not None and (
                type(owner) in (list, tuple, dict) or is_namedtuple(owner)):
            result = self._run(getattr(self.use(owner_var), name), self._raws(args), self._raws(kwargs))
        else:
            self.side_effect(f"call of {type(owner).__name__}.{name} on an object the function did not create")
        if isinstance(result, DICT_VIEWS):
            self.dict_views[id(result)] = (owner_var, name)
        return self.created(result)

    def _control_flow(self, frame: Frame, fn: Var, args: list[Var], kwargs: dict[str, Var]) -> Var:
        """``F.cond``, ``F.while_loop``, ``F.fori_loop``, ``F.scan``: run with each Python function it is given
        replaced by one that captures that function's bytecode in this capture, as an inlined call is captured.
        Given stand-ins, the op traces each function into a region of one control-flow node, so its ops are
        recorded there, and what it reads from globals, closures and attributes is guarded as anywhere else;
        given numbers known now, it runs the Python branch or loop, inlined. Whatever cannot be captured inside
        (a print, a branch on a tensor's value) makes the whole call a graph break, run as Python."""
        if fn.source is not None:
            self.guard(fn)

        def raw(v: Var):
            if not self._has_callback([v], {}):
                return self.use(v)
            target, bound_self, self_source, func_source = self._python_callable(v)
            if target is None:
                raise BreakGraph(f"{type(v.value).__name__} object given to {fn.value.__name__} is not a Python "
                                 f"function graph_lab can capture", "it runs as ordinary Python between two graphs")
            return self._captured_function(frame, target, bound_self, self_source, func_source)

        first = len(self.graph.nodes)
        result = self._run(fn.value, [raw(v) for v in args], {k: raw(v) for k, v in kwargs.items()})
        for node in self.graph.nodes[first:]:
            why = _unbindable_region(node)
            if why:
                raise BreakGraph(f"{fn.value.__name__} over arrays whose sizes a region cannot read from its "
                                 f"own inputs ({why})", "it runs as ordinary Python between two graphs")
        return self.created(result)

    def _captured_function(self, frame: Frame, target: types.FunctionType, bound_self, self_source, func_source):
        def captured(*values):
            first = [Var(bound_self, self_source)] if bound_self is not None else []
            return self.use(self.inline(frame, target, first + [self.created(v) for v in values], {}, func_source))

        try:  # the region's inputs are named after the function's parameters
            params = list(inspect.signature(target).parameters.values())
            captured.__signature__ = inspect.Signature(params[1:] if bound_self is not None else params)
        except (TypeError, ValueError):
            pass
        return captured

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
            return f.__func__, f.__self__, bound_self_source(self, fn), func_source
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


def _unbindable_region(node) -> str:
    """Why a region of ``node`` (at any depth) could not bind the symbolic sizes of its inputs, or ''. A region
    binds each size symbol from an input dimension that is exactly it; an input of size ``(s0 + 2) // 2`` alone
    gives it no way to know ``s0`` (dynamic shapes after a pooling, say)."""
    for region in node.regions:
        bindable = set(symbol_sources(region))
        for n in region.input_nodes:
            missing = sorted(set().union(*(free_symbols(d) for d in n.attrs["type"].shape)) - bindable)
            if missing:
                return f"input {n.attrs['name']!r} of type {n.attrs['type']} needs {', '.join(missing)}"
        for inner in region.nodes:
            why = _unbindable_region(inner)
            if why:
                return why
    return ""
