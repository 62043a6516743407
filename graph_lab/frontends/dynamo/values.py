"""What kind of value is this? The tables and tests capture mode decides by.

Which functions are NumPy's or graph_lab's own (pure, recorded or run now), which builtins are pure, which
objects are constants (an ``==`` guard covers them), which may run Python code graph_lab would not see, which
a recipe can make again after a graph break, and which Python functions a call at a break may run compiled.
"""

from __future__ import annotations

import inspect
import linecache
import operator
import sys
import types

import numpy as np

from ...ir.source import lines_belong_to
from ..tensor import Tensor
from .frame import IterState
from .masked import Selection

SCALARS = (bool, int, float, complex, str)
IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), slice, range, np.generic)
TENSOR_OR_IMMUTABLE = (Tensor, Selection) + IMMUTABLE  # (a selection is a value, as a tensor is)
CALLABLES = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type, types.MethodType, np.ufunc,
              types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType)
DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
LAZY_ITERATORS = {zip, enumerate, reversed, iter, map, filter}
MISSING = object()
COMPUTING_OPCODES = {"CALL", "CALL_FUNCTION_EX", "BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP", "LOAD_ATTR",
                      "FORMAT_VALUE", "UNARY_NEGATIVE", "UNARY_NOT", "CONTAINS_OP",
                      "BINARY_SLICE", "LOAD_SUPER_ATTR", "CALL_KW", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC"}  # (3.12, 3.13)
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
_USER_CODE_PREFIX = "graph_lab.nn"
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


PURE_UFUNC_METHODS = frozenset({"outer", "reduce", "accumulate"})
"""Methods of a ufunc that compute a new array (``np.add.at`` writes into its operand: a side effect)."""


def is_internal_function(f) -> bool:
    module = getattr(f, "__module__", None) or ""
    if type(getattr(f, "__self__", None)) is np.ufunc:
        return getattr(f, "__name__", "") in PURE_UFUNC_METHODS
    # graph_lab.nn is the program's own code to compile(), as torch.nn is to TorchDynamo (see modules.py)
    return isinstance(f, np.ufunc) or module.split(".")[0] in _INTERNAL_MODULE_PREFIXES and \
        not module.startswith(_USER_CODE_PREFIX)


def is_scalar(value) -> bool:
    return type(value) in SCALARS or isinstance(value, np.generic)


def is_constant(value) -> bool:
    """Immutable all the way down, so that ``==`` on it is a complete guard."""
    if isinstance(value, IMMUTABLE):
        return True
    return type(value) in (tuple, frozenset) and all(is_constant(x) for x in value)


def is_user_object(value) -> bool:
    """An object whose behaviour (operators, len, iteration...) may be Python code graph_lab would not see."""
    return not isinstance(value, (Tensor, np.ndarray, np.dtype, list, tuple, dict, set, frozenset, IterState,
                                  types.CellType) + IMMUTABLE + CALLABLES) and not is_internal_function(value)


def is_rebuildable(value) -> bool:
    """Objects a recipe can make again after a graph break (see ``segment.RecipeMaker``)."""
    return (type(value) in (list, tuple, dict, set, np.ndarray) or is_namedtuple(value) or is_internal_function(value)
            or isinstance(value, (IterState, np.dtype, types.CellType, Tensor, types.MethodType) + CALLABLES
                          + IMMUTABLE + DICT_VIEWS))


def is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def derived_text(fn, n: int) -> str:
    if fn in _OPERATOR_TEXT:
        return "{0} " + _OPERATOR_TEXT[fn] + " {1}"
    if fn in _UNARY_TEXT:
        return _UNARY_TEXT[fn]
    name = getattr(fn, "__name__", "f")
    return f"{name}({', '.join('{%d}' % i for i in range(n))})"


def expression_text(filename: str, positions) -> str:
    """The source text an instruction came from (one line only), e.g. ``float(x.sum())``."""
    if positions.lineno is None or positions.lineno != positions.end_lineno or positions.col_offset is None \
            or not lines_belong_to(filename):
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


def is_library_module(module) -> bool:
    """NumPy, graph_lab, or a module of the standard library: its functions and constants are taken as fixed."""
    top = module.__name__.split(".")[0]
    return top in _INTERNAL_MODULE_PREFIXES or top in sys.stdlib_module_names
