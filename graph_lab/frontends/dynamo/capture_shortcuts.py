"""Speed-ups of compile()'s capture: ``CaptureContext`` with its two commonest calls decided by exact type.

``CaptureContextWithShortcuts`` is what compile() captures with (``capture_loop.CAPTURE_CONTEXT``); the reference
is ``capture.CaptureContext``, whose rules every call goes through. The two shortcuts take the last branch of
those rules directly, for the operands where the branches before it do not apply:

- ``apply`` of an operator (BINARY_OP, COMPARE_OP) to a stand-in and a stand-in or a number made in the capture:
  ``x @ w``, ``x * 2``. ``operand`` of such a value is the value itself, so the operator runs on them as they are.
- ``call`` of a NumPy or graph_lab function that is recorded (``np.tanh(h)``, ``F.relu(x)``) on stand-ins only,
  without keywords: no rule before the last one applies to it (``_is_recorded_op``), and no stand-in is a callback.

Measured reason: compile()'s first call of the W2 chain at 8 layers (interpreter backend, so mostly capture) runs
6.4% more instructions without the ``apply`` shortcut and 6.1% more without the ``call`` one (callgrind, the
method of ``benchmarks/shortcut_instructions.py``; its ``dynamo-calls@compile`` case switches both off); its CPU
time, interleaved on a shared machine, is 14.9% and 18.5% longer (25.4% with every dynamo shortcut off).
Measured by that timing and deleted: ``wrap``'s shortcut for lists, dicts, tuples, modules and functions (-6.3%,
noise), ``guard``'s for values guarded by identity (4.0%) and its memo of the Vars already guarded (-0.1%).
``tests/frontends/dynamo/test_dynamo_paths.py`` compares captures with this context and with the reference on
random programs.
"""

from __future__ import annotations

import types

import numpy as np

from ..tensor import Tensor
from . import handlers
from .calls import CONTROL_FLOW
from .capture import CaptureContext
from .frame import BreakGraph, Frame, Var, capture_error
from .internal_errors import raises_for_the_program
from .nesting import differentiates
from .values import IMPURE_NUMPY, PURE_BUILTINS, TYPE_ONLY_BUILTINS, is_internal_function
from ...ops.base import is_tensorlike

_OPERATORS = frozenset(handlers.BINARY_OPS.values()) | frozenset(handlers.COMPARE_OPS.values())
"""The functions of BINARY_OP and COMPARE_OP (never one of the text helpers that ``apply`` refuses tensors)."""
_NUMBERS = frozenset({int, float, bool})


class CaptureContextWithShortcuts(CaptureContext):
    """``CaptureContext`` with the shortcuts of ``apply`` and ``call`` (see the module's docstring)."""

    @raises_for_the_program
    def apply(self, fn, args: list[Var]) -> Var:
        if len(args) == 2 and fn in _OPERATORS:
            left, right = args[0].value, args[1].value
            if type(left) is Tensor and (type(right) is Tensor or type(right) in _NUMBERS and args[1].source is None) \
                    or type(right) is Tensor and type(left) in _NUMBERS and args[0].source is None:
                return self._result(fn, (left, right))
        return super().apply(fn, args)

    @raises_for_the_program
    def call(self, frame: Frame, fn: Var, args: list[Var], kwargs: dict[str, Var]) -> Var:
        f = fn.value
        if not kwargs and _is_recorded_op(f) and all(type(a.value) is Tensor for a in args):
            if fn.source is not None:
                self.guard(fn)
            return self._result(f, [a.value for a in args])
        return super().call(frame, fn, args, kwargs)

    @raises_for_the_program
    def _result(self, fn, values) -> Var:
        """``fn(*values)`` as the reference's ``_run`` and ``created`` make it."""
        try:
            result = fn(*values)
        except BreakGraph:
            raise
        except Exception as e:
            raise capture_error(e) from None
        return Var(result) if type(result) is Tensor else self.created(result)


_NUMPY_FUNCTION = type(np.sum)  # (NumPy 2's functions that dispatch ``__array_function__``)
_RECORDED_OPS: dict[int, tuple] = {}
"""id(function) -> (function, whether it is one ``_is_recorded_op`` accepts); the entry keeps the function alive so
that its id stays its own. Only module-level functions and ufuncs are entered (a few hundred at most)."""


def _is_recorded_op(f) -> bool:
    """A NumPy or graph_lab function that ``CallCapture.call`` records or runs: internal, not a class, not a
    method, and none of the functions it treats apart (builtins it evaluates, control flow, random numbers, NumPy
    functions with side effects)."""
    known = _RECORDED_OPS.get(id(f))
    if known is not None and known[0] is f:
        return known[1]
    if not isinstance(f, (types.FunctionType, types.BuiltinFunctionType, np.ufunc, _NUMPY_FUNCTION)) or \
            isinstance(getattr(f, "__self__", None), (types.ModuleType, type(None))) is False:
        return False  # (a bound method is made anew on each access: not worth remembering)
    try:
        accepted = (is_internal_function(f) and f not in PURE_BUILTINS and f not in TYPE_ONLY_BUILTINS
                    and f is not getattr and f is not hasattr and f is not next and f is not is_tensorlike
                    and differentiates(f) is None
                    and getattr(f, "__module__", None) != "math" and f not in CONTROL_FLOW
                    and not (getattr(f, "__module__", "") or "").startswith("numpy.random")
                    and f not in IMPURE_NUMPY)
    except TypeError:  # unhashable: the general rules decide (and fail as they would)
        return False
    _RECORDED_OPS[id(f)] = (f, accepted)
    return accepted


