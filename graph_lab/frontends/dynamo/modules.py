"""Objects whose Python code compile() runs as the program's own: ``graph_lab.nn`` modules and their like.

TorchDynamo inlines ``nn.Module.__call__`` and ``forward`` as it inlines any Python code, so that a model's
parameters are graph inputs read from the module on every call, its ``training`` flag and the keys of its
containers are guarded, and its hooks run in eager order. compile() does the same for ``graph_lab.nn`` (which the
capture treats as user code, not as one of graph_lab's own functions), with four rules that any class may meet:

- an ``ndarray`` subclass with a ``_plain_array()`` method (``nn.Parameter``) is read as that plain array, a
  view of the same memory fetched through the attribute on every call: replacing the parameter, or writing into
  it, gives the new result;
- an attribute that normal lookup does not find is computed by the type's ``__getattr__``, whose bytecode is
  inlined (``Module.__getattr__`` reads ``_parameters``, ``_buffers`` and ``_modules``, each guarded by its keys);
- ``obj[key]`` of one of graph_lab.nn's containers inlines its ``__getitem__`` (``blocks[key]`` of a
  ``ModuleDict``: the key guarded by its value);
- ``values()``, ``items()`` and ``keys()`` of a dict read from the inputs whose values are objects (submodules,
  hook functions) give those objects with their sources, so that each one is guarded where it is used.

``is_tensorlike`` (the test that graph_lab's tracers use to refuse what a graph cannot hold) answers as eager
code would: the function sees arrays, and what a graph cannot hold becomes a graph break instead.
"""

from __future__ import annotations

import operator
import types

import numpy as np

from ...ops.base import is_tensorlike
from ..tensor import Tensor
from .frame import Var
from .guard_set import Guard
from .sources import DerivedSource, ItemSource, ObjectSource
from .values import is_internal_function


def plain_array_of(value) -> np.ndarray | None:
    """The plain array an ndarray subclass is read as (``Parameter._plain_array()``), or None."""
    if not isinstance(value, np.ndarray):
        return None
    plain = getattr(type(value), "_plain_array", None)
    return plain(value) if isinstance(plain, types.FunctionType) else None


def as_plain_array(value):
    """What a source of an ndarray subclass fetches on each call: its plain array (anything else as it is, for
    the guards to reject)."""
    plain = getattr(type(value), "_plain_array", None)
    if plain is None or not isinstance(value, np.ndarray) or not isinstance(plain, types.FunctionType):
        return value
    return plain(value)


def plain_array_input(ctx, value: np.ndarray, source) -> Var:
    """A Parameter read from ``source``: a graph input holding its plain array, fetched again on every call."""
    plain = plain_array_of(value)
    return Var(ctx.tensor_input(plain, DerivedSource(as_plain_array, (source,), "{0}")), source)


def getattr_by_python(ctx, obj: Var, name: str) -> Var:
    """``obj.name`` where normal lookup finds nothing and the type's ``__getattr__`` is Python: its bytecode,
    inlined (the type of ``obj`` is guarded by the caller)."""
    method = type(obj.value).__getattr__
    return ctx.inline(ctx.frame, method, [obj, Var(name)], {},
                      ObjectSource(method, f"{type(obj.value).__qualname__}.__getattr__"))


def python_getitem(obj) -> types.FunctionType | None:
    """The ``__getitem__`` of ``obj``'s type when it is one of graph_lab.nn's containers (``ModuleDict``,
    ``Sequential``, ``ModuleList``), else None: another class's Python ``__getitem__`` still runs at a break."""
    method = getattr(type(obj), "__getitem__", None)
    return method if isinstance(method, types.FunctionType) and not is_internal_function(method) and \
        (method.__module__ or "").startswith("graph_lab.") else None


def getitem_by_python(ctx, container: Var, key: Var) -> Var:
    """``container[key]`` by its type's Python ``__getitem__``, inlined; the type is guarded."""
    method = python_getitem(container.value)
    ctx.guards.add(Guard("type", container.source, type(container.value), ctx.loc()))
    return ctx.inline(ctx.frame, method, [container, key], {},
                      ObjectSource(method, f"{type(container.value).__qualname__}.__getitem__"))


def holds_objects(d: dict) -> bool:
    """Whether every value of ``d`` is an object the capture reads through its source (no array, no number)."""
    return bool(d) and all(not isinstance(v, (np.ndarray, Tensor, int, float, complex, str, bytes, tuple, list, dict))
                           and v is not None for v in d.values())


def dict_view(ctx, owner: Var, name: str) -> Var:
    """``d.values()`` / ``items()`` / ``keys()`` of a dict read from the inputs that holds objects: its keys
    guarded, each value known by its item source, so that using one (calling a submodule, a hook) guards it."""
    d = owner.value
    ctx.guard(owner)  # (its type and keys)
    for k, v in d.items():
        ctx.wrap(v, ItemSource(owner.source, k))
    view = getattr(d, name)()
    ctx._keep.append(view)
    return ctx.created(view)


def key_in_dict(ctx, d: Var, key: Var) -> Var:
    """``key in d`` of a dict read from the inputs: guarded by its keys, never lifted (which would hand its values,
    perhaps submodules, to native code)."""
    ctx.guard(d)
    return Var(ctx._run(operator.contains, (d.value, ctx.use(key)), {}))


def tensorlike_as_eager(args: list[Var]) -> Var:
    """``is_tensorlike(x)`` inside compile(): False for a stand-in, which stands for an array."""
    value = args[0].value if len(args) == 1 else None
    return Var(False if isinstance(value, Tensor) else is_tensorlike(value))
