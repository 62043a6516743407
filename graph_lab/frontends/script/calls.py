"""Converting calls: what ``script`` may call, and how it sees into plain Python functions.

* ``F.*``, NumPy functions and ufuncs, ndarray methods of stand-ins: called on the converted arguments, so they
  record (``F.cond`` and friends receive scripted functions and trace them into regions).
* Plain Python functions (and methods of plain classes) that have source: their source is scripted too and
  inlined, with the arguments bound as Python binds them; ``lambda``\\ s and nested ``def``\\ s of the scripted
  source likewise.
* Builtins that only compute (``len``, ``range``, ``zip``, ``isinstance``, ``math.*``, ...), constructors of
  builtin and NumPy types, and container methods: run now, on Python values.
* Anything else (``print``, random numbers, a C function graph_lab does not know, a callable object) is refused
  with a ``ScriptError``: script never runs what it cannot see into.
"""

from __future__ import annotations

import ast
import inspect
import math
import types

import numpy as np

from ...ops import TensorLike
from .values import Env, ScriptFunction

MAX_CALL_DEPTH = 64
"""Deepest chain of inlined calls (a recursive function is refused when it gets there)."""

PURE_BUILTINS = {len, range, zip, enumerate, isinstance, issubclass, abs, min, max, sum, round, divmod, pow, all,
                 any, sorted, reversed, tuple, list, dict, set, frozenset, int, float, bool, complex, str, repr,
                 slice, hasattr, getattr, type, callable, map, filter, iter, next, hash, id, format, ord, chr}
MUTATING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add", "discard",
                    "sort", "reverse", "popitem"}


def _module_of(fn) -> str:
    module = getattr(fn, "__module__", None) or ""
    if not module and isinstance(fn, types.BuiltinMethodType):
        module = type(getattr(fn, "__self__", None)).__module__ or ""
    return module


def is_library_function(fn) -> bool:
    """NumPy's and graph_lab's own functions: called as they are (on stand-ins they record)."""
    if isinstance(fn, np.ufunc):
        return True
    module = _module_of(fn)
    return module == "numpy" or module.startswith(("numpy.", "graph_lab"))


def signature_of(fn: types.FunctionType) -> inspect.Signature:
    """``inspect.signature(fn)``."""
    return inspect.signature(fn)


class Frame:
    """One function being converted: its source, variables, globals, closure cells, and for a scripted
    ``lambda``/``def`` the frame it was made in (whose variables it reads)."""

    def __init__(self, source, env: Env, globals_: dict, cells: dict, outer: "Frame | None" = None):
        self.source, self.env, self.globals, self.cells, self.outer = source, env, globals_, cells, outer
        self.locs = source.locs
        """``source.locs``: the ``SourceLoc`` of each line of the source."""


class Calls:
    """The call half of the converter."""

    def call(self, node: ast.Call):
        fn = self.expr(node.func)
        args = self.elements(node.args)
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.expr(kw.value))
            else:
                kwargs[kw.arg] = self.expr(kw.value)
        self.at(node)
        return self.apply(fn, args, kwargs, node)

    def apply(self, fn, args: list, kwargs: dict, node: ast.AST):
        if isinstance(fn, np.ufunc):
            return fn(*args, **kwargs)  # the commonest call (np.tanh, np.exp, ...): a library function, as below
        if fn is print:
            shown = "a tensor" if any(isinstance(a, TensorLike) for a in args) else "a value"
            raise self.fail(node, f"print of {shown}: script() never runs the function, so print would run once "
                                  f"now, while converting, and never when the graph runs",
                            "remove the print; to watch values as the graph runs, register a hook: "
                            "graph_lab.Interpreter(g).register_hook(fn)", "print")
        if isinstance(fn, ScriptFunction):
            return fn(*args, **kwargs)
        if inspect.ismethod(fn) and inspect.isfunction(fn.__func__) and not is_library_function(fn.__func__):
            return self.inline(fn.__func__, [fn.__self__, *args], kwargs, node)
        if inspect.isfunction(fn) and not is_library_function(fn):
            return self.inline(fn, args, kwargs, node)
        if _module_of(fn).startswith("numpy.random") or isinstance(getattr(fn, "__self__", None),
                                                                  np.random.Generator):
            raise self.fail(node, "random numbers: a graph computes the same thing every time it runs",
                            "draw the random array outside and pass it in as an input", "random number generation")
        if self.allowed(fn, node):
            result = fn(*args, **kwargs)
            if fn in (list, dict, set) or (isinstance(result, (list, dict, set)) and not args and not kwargs):
                self.made(result)
            return result
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        raise self.fail(node, f"call to {name}, which script() cannot see into (not F.*, NumPy, a builtin that only "
                              f"computes, or a Python function with source)",
                        "compute it outside the scripted function and pass the result in, or write it as a plain "
                        "Python function (its source is scripted too)", f"a call to {name}")

    def allowed(self, fn, node: ast.AST) -> bool:
        """Calls run as they are: library functions, pure builtins, math, builtin and NumPy types, and methods
        of containers and stand-ins (a container method that mutates is refused inside a converted region)."""
        if is_library_function(fn) or getattr(fn, "__module__", None) == "math" or fn in PURE_BUILTINS:
            return True
        if isinstance(fn, type):
            return fn.__module__ == "builtins" or fn.__module__.startswith("numpy")
        owner = getattr(fn, "__self__", None)
        if isinstance(fn, (types.BuiltinMethodType, types.MethodWrapperType)) and \
                isinstance(owner, (list, dict, set, tuple, str, int, float, range, slice)):
            if fn.__name__ in MUTATING_METHODS:
                self.check_container_write(owner, node)
            return True
        return inspect.ismethod(fn) and isinstance(owner, TensorLike) or fn is math

    # --- seeing into Python functions

    def inline(self, fn, args: list, kwargs: dict, node: ast.AST):
        """Script ``fn``'s source with the arguments bound, as if its body were written here."""
        if self.call_depth >= MAX_CALL_DEPTH:
            raise self.fail(node, f"calls nested more than {MAX_CALL_DEPTH} deep (recursion?)",
                            "script() inlines every call; write recursion on data as a while loop",
                            "deep or recursive calls")
        source = self.read_source(fn)
        try:
            bound = signature_of(fn).bind(*args, **kwargs)
        except TypeError as e:
            raise self.fail(node, f"TypeError: {e}", "call it with the arguments it takes", "a call") from None
        bound.apply_defaults()
        cells = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                cells[name] = cell.cell_contents
            except ValueError:
                pass
        frame = Frame(source, Env(bound.arguments), fn.__globals__, cells)
        return self.run_frame(frame, source.tree.body)

    def call_script_function(self, f: ScriptFunction, args, kwargs):
        try:
            bound = f.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise self.fail(f.node, f"TypeError calling {f.__name__}: {e}", "call it with the arguments it takes",
                            "a call") from None
        bound.apply_defaults()
        frame = Frame(f.frame.source, Env(bound.arguments), f.frame.globals, {}, outer=f.frame)
        if isinstance(f.node, ast.Lambda):
            return self.run_frame(frame, None, expression=f.node.body)
        return self.run_frame(frame, f.node.body)

    def make_function(self, node, name: str) -> ScriptFunction:
        """A scripted ``lambda`` or ``def``: its defaults are evaluated now, as Python evaluates them."""
        a = node.args
        positional = a.posonlyargs + a.args
        defaults = [None] * (len(positional) - len(a.defaults)) + [self.expr(d) for d in a.defaults]
        params = []
        kind = inspect.Parameter.POSITIONAL_ONLY
        for i, (arg, default) in enumerate(zip(positional, defaults)):
            if i == len(a.posonlyargs):
                kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            empty = i < len(positional) - len(a.defaults)
            params.append(inspect.Parameter(arg.arg, kind, default=inspect.Parameter.empty if empty else default))
        if a.vararg:
            params.append(inspect.Parameter(a.vararg.arg, inspect.Parameter.VAR_POSITIONAL))
        for arg, default in zip(a.kwonlyargs, a.kw_defaults):
            params.append(inspect.Parameter(arg.arg, inspect.Parameter.KEYWORD_ONLY,
                                            default=inspect.Parameter.empty if default is None else
                                            self.expr(default)))
        if a.kwarg:
            params.append(inspect.Parameter(a.kwarg.arg, inspect.Parameter.VAR_KEYWORD))
        return ScriptFunction(self, node, self.frame, inspect.Signature(params), name)
