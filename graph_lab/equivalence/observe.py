"""Side effects a call can have, made comparable: what it printed, and the state it appended to or assigned.

The state watched is the Python objects a function can reach by name: the globals its code reads or writes,
its closure cells, and any non-array arguments. ``describe`` turns an object into plain nested tuples (arrays
by dtype, shape and bytes), so two states compare with ``==``. To run eager and captured code from the same
state, ``save`` deep-copies the watched objects' contents and ``restore`` puts them back *in place* (a list
keeps its identity, so a guard on it still means the same list).
"""

from __future__ import annotations

import contextlib
import copy
import io
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

MISSING = object()
_PLAIN = (type(None), bool, int, float, complex, str, bytes)


@dataclass
class Root:
    """One watched name: a global, a closure cell or an argument."""

    label: str
    """How it is shown: ``global log``, ``closure scale``, ``argument 2``."""
    get: Callable[[], Any]
    set: Callable[[Any], None] | None


def watched_roots(fn: Callable, extra_args: tuple = ()) -> list[Root]:
    """The globals ``fn`` names (in its code and nested code), its closure cells, and non-array arguments."""
    fn = getattr(fn, "__wrapped__", fn)
    roots: list[Root] = []
    code = getattr(fn, "__code__", None)
    if code is not None:
        g = fn.__globals__
        for name in sorted(_names(code)):
            value = g.get(name, MISSING)
            if value is MISSING or _is_code_like(value):
                continue
            roots.append(Root(f"global {name}", lambda g=g, n=name: g.get(n, MISSING),
                              lambda v, g=g, n=name: g.__setitem__(n, v)))
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            roots.append(Root(f"closure {name}", lambda c=cell: _cell_value(c),
                              lambda v, c=cell: setattr(c, "cell_contents", v)))
    for i, arg in enumerate(extra_args):
        if not isinstance(arg, (np.ndarray, np.generic)):
            roots.append(Root(f"argument {i}", lambda a=arg: a, None))
    return roots


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _is_code_like(value) -> bool:
    """Modules, functions and classes: read, not state that a call changes."""
    return isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)) or \
        callable(value) and not hasattr(value, "__dict__")


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return MISSING


def describe(x: Any, depth: int = 0) -> Any:
    """A plain, comparable description of ``x``'s value (arrays by bytes; objects by their attributes)."""
    if depth > 6:
        return ("...",)
    if isinstance(x, (np.ndarray, np.generic)):  # NumPy scalars too (np.float64 is a float): as 0-d arrays
        a = np.asarray(x)
        return ("array", a.dtype.str, a.shape, a.tobytes()) if a.dtype.kind != "O" else ("object array",)
    if isinstance(x, _PLAIN):
        return (type(x).__name__, repr(x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(describe(v, depth + 1) for v in x))
    if isinstance(x, dict):
        return ("dict", tuple((repr(k), describe(v, depth + 1)) for k, v in x.items()))
    if isinstance(x, (set, frozenset)):
        return (type(x).__name__, tuple(sorted(repr(v) for v in x)))
    if isinstance(x, np.random.Generator):  # drawing numbers is a side effect: it moves the generator on
        return ("random generator", repr(x.bit_generator.state))
    if hasattr(x, "__array__") and hasattr(x, "shape"):  # a lazy tensor that escaped: its value
        try:
            return describe(np.asarray(x), depth)
        except Exception:
            return ("unreadable", type(x).__name__)
    if hasattr(x, "__dict__") and not _is_code_like(x):
        return ("object", type(x).__qualname__, tuple((k, describe(v, depth + 1)) for k, v in vars(x).items()))
    return ("object", type(x).__qualname__)


def snapshot(roots: list[Root]) -> dict[str, Any]:
    return {r.label: describe(r.get()) for r in roots}


def save(roots: list[Root]) -> list[tuple[Root, Any, Any]]:
    """Each root's object and a deep copy of its contents (None when it cannot be copied)."""
    saved = []
    for r in roots:
        obj = r.get()
        try:
            contents = copy.deepcopy(_contents(obj))
        except Exception:
            contents = None
        saved.append((r, obj, contents))
    return saved


def restore(saved: list[tuple[Root, Any, Any]]) -> None:
    """Bind each root to its saved object again and put the saved contents back into it, in place."""
    for root, obj, contents in saved:
        if root.set is not None and obj is not MISSING:
            root.set(obj)
        if contents is None:
            continue
        if isinstance(obj, list):
            obj[:] = contents
        elif isinstance(obj, dict):
            obj.clear()
            obj.update(contents)
        elif isinstance(obj, set):
            obj.clear()
            obj.update(contents)
        elif isinstance(obj, np.ndarray) and obj.flags.writeable:
            obj[...] = contents
        elif isinstance(obj, np.random.Generator):
            obj.bit_generator.state = contents
        elif isinstance(contents, dict) and hasattr(obj, "__dict__"):
            vars(obj).clear()
            vars(obj).update(contents)


def _contents(obj):
    if isinstance(obj, (list, dict, set, np.ndarray)):
        return obj
    if isinstance(obj, np.random.Generator):
        return obj.bit_generator.state
    if hasattr(obj, "__dict__") and not _is_code_like(obj):
        return dict(vars(obj))
    return None


@contextlib.contextmanager
def printed():
    """Capture what is printed inside the block: ``with printed() as out: ...; out.getvalue()``."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        yield buffer
