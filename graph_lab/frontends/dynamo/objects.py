"""Objects in capture mode: ``super()``, the object a bound method is bound to, and ``is``.

A method call is inlined with its ``self`` read through a source, so that every attribute the method reads is
guarded and every array it reads is a graph input on later calls. That source must reach the object the method
is bound to, which is not always the object it was looked up on: ``self.make`` of a class method is bound to the
class, ``super().f`` to ``self`` (looked up on a super object), ``self.callback`` perhaps to another object.

``super(cls, obj)`` and the zero-argument ``super()`` (which CPython reads from the frame: the ``__class__``
cell and the first argument) are made during capture as what they are, a view of ``obj`` starting after ``cls``
in its type's MRO; an attribute read through one finds the class attribute Python would find, and a property
found there runs its getter's bytecode on ``obj``, as ``obj.name`` does for a property of its own class.
"""

from __future__ import annotations

import inspect
import types

from ..tensor import Tensor
from .frame import BreakGraph, Frame, Var
from .guard_set import Guard
from .sources import AttrSource, Const, DerivedSource, ObjectSource
from .values import MISSING


def bound_self_source(ctx, method: Var):
    """The source of ``method.value.__self__``: where the method was looked up when that object holds it (the
    usual ``self.f``), else the method's own ``__self__`` (a class method, an object's method stored on
    another object, a method found through ``super()``)."""
    owner = method.value.__self__
    known = ctx.sourced.get(id(owner))
    source = method.source
    if source is None:
        return known
    base = source.base if isinstance(source, AttrSource) else None
    if base is not None and known is not None:
        if known == base:
            return base
        if _is_super_source(base) and known == base.args[1]:  # super(C, self).f: bound to self
            return known
    return AttrSource(source, "__self__")


def _is_super_source(source) -> bool:
    return isinstance(source, DerivedSource) and source.fn is super


def capture_super(ctx, frame: Frame, args: list[Var], kwargs: dict) -> Var:
    """``super()`` or ``super(cls, obj)``: the super object, read on later calls as ``super(cls, obj)`` of the
    sources of ``cls`` and ``obj`` (their identity and type guarded, since the lookup depends on both)."""
    if kwargs or len(args) not in (0, 2):
        raise BreakGraph("super() with one argument or keywords", "it runs as ordinary Python between two graphs")
    cls_var, obj_var = args if args else _zero_argument_super(ctx, frame)
    value = ctx._run(super, (cls_var.value, obj_var.value), {})  # (eager Python's TypeError, if any)
    if obj_var.source is None:
        raise BreakGraph(f"super() of a {type(obj_var.value).__name__} object made during capture",
                         "it runs as ordinary Python between two graphs")
    if cls_var.source is not None:
        ctx.guard(cls_var)
    ctx.guards.add(Guard("type", obj_var.source, type(obj_var.value), ctx.loc()))
    cls_part = cls_var.source if cls_var.source is not None else Const(cls_var.value)
    ctx._keep.append(value)
    return Var(value, DerivedSource(super, (cls_part, obj_var.source), "super({0}, {1})"))


def _zero_argument_super(ctx, frame: Frame) -> tuple[Var, Var]:
    """What CPython's ``super()`` reads from the calling frame: the ``__class__`` cell and the first argument
    (its current value). Its RuntimeErrors are eager Python's, raised here for the break to run again."""
    code = frame.code
    if code.co_argcount + code.co_kwonlyargcount == 0 and not code.co_flags & inspect.CO_VARARGS:
        raise RuntimeError("super(): no arguments")
    if "__class__" not in code.co_freevars:
        raise RuntimeError("super(): __class__ cell not found")
    first = code.co_varnames[0]
    if first in code.co_cellvars:
        obj_var = ctx.load_cell(frame, first)
    elif first in frame.locals:
        obj_var = frame.locals[first]
    else:
        raise RuntimeError("super(): arg[0] deleted")
    return ctx.load_cell(frame, "__class__"), obj_var


def super_attribute(ctx, var: Var, name: str) -> Var:
    """``super(cls, obj).name``: the attribute of the first class after ``cls`` in the MRO that has it. A
    property there runs its getter's bytecode on ``obj``; a custom Python descriptor is a break; anything
    else (a function, a class or static method, a class attribute) is what CPython's lookup gives."""
    sup = var.value
    static, owner = _lookup_after(sup, name)
    if isinstance(static, property) and isinstance(static.fget, types.FunctionType) and _is_super_source(var.source) \
            and sup.__self__ is not sup.__self_class__:  # (a property is found through an instance, not a class)
        obj_var = Var(sup.__self__, var.source.args[1])
        return ctx.inline(ctx.frame, static.fget, [obj_var], {},
                          ObjectSource(static.fget, f"{owner.__qualname__}.{name}"))
    if static is not MISSING and not isinstance(static, (property, types.FunctionType, classmethod, staticmethod)) \
            and isinstance(getattr(type(static), "__get__", None), types.FunctionType):
        raise BreakGraph(f"the attribute {name!r} of {owner.__qualname__} is computed by a Python descriptor",
                         "it runs as ordinary Python between two graphs")
    attr = ctx._run(getattr, (sup, name), {})
    if var.source is None:
        return ctx.created(attr)
    return ctx.wrap(attr, AttrSource(var.source, name))


def _lookup_after(sup: super, name: str):
    """(the class attribute ``super`` finds, the class holding it), or (MISSING, None)."""
    mro = sup.__self_class__.__mro__
    start = mro.index(sup.__thisclass__) + 1 if sup.__thisclass__ in mro else len(mro)
    for klass in mro[start:]:
        if name in klass.__dict__:
            return klass.__dict__[name], klass
    return MISSING, None


class IdentityRules:
    """``is`` in capture mode, for ``CaptureContext``: an object read from the inputs is guarded by identity
    (None and bools by value), and two arrays passed in are guarded to stay distinct (or one) objects."""

    def identity(self, var: Var):
        if var.source is not None and not isinstance(var.value, Tensor):
            if var.value is None or isinstance(var.value, bool):
                self.guards.add(Guard("equals", var.source, var.value, self.loc()))
            else:
                self.guards.add(Guard("id", var.source, var.value, self.loc()))
        return var.value

    def same(self, left: Var, right: Var) -> bool:
        """``left is right``. Two arrays passed in are guarded to stay distinct (or one) objects."""
        a, b = self.identity(left), self.identity(right)
        if isinstance(a, Tensor) and isinstance(b, Tensor) and a is not b:
            sources = [self.writes.source_of(t) for t in (a, b)]
            if None not in sources:
                self.guards.add(Guard("distinct", sources[1], sources[0], self.loc()))
        return a is b
