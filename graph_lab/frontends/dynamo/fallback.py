"""The loud fallback: a function compile() cannot interpret at all runs eagerly, and says so once.

Such a function (a generator, an opcode without a handler, a Python version the opcode table does not know) is
never captured: every call runs the function itself. That must not look like a compiled function that simply
made no graph, so the first compile() of it warns, with a typed warning that names the function, where it is,
the Python version and the reason, at the user's own line (not one of graph_lab's).

A compiled function called on the stand-ins of another capture (inside ``grad`` or ``trace``) runs itself too,
silently and rightly: the capture around it records its ops (``called_in_another_capture``).
"""

from __future__ import annotations

import types
import warnings
import weakref

from ...ir.source import user_stacklevel
from ..tensor import Tensor
from .opcodes import python_version


class EagerFallbackWarning(UserWarning):
    """compile() cannot interpret this function at all (see the message for why): it runs eagerly, every call."""


_warned: "weakref.WeakSet[types.CodeType]" = weakref.WeakSet()
"""The code of each function warned about: once per function, however often it is compiled."""


def warn_eager_fallback(fn: types.FunctionType, reason: str) -> None:
    code = fn.__code__
    if code in _warned:
        return
    _warned.add(code)
    warnings.warn(f"graph_lab.compile: {fn.__qualname__} ({code.co_filename}:{code.co_firstlineno}) runs eagerly on "
                  f"Python {python_version()}, not compiled: {reason}. Call it without compile(), or move what "
                  f"compile() cannot read into a function of its own and compile the rest",
                  EagerFallbackWarning, stacklevel=user_stacklevel())


def holds_stand_ins(value) -> bool:
    """Whether a list, tuple or dict holds stand-in tensors (at any depth)."""
    if type(value) in (list, tuple):
        return any(isinstance(v, Tensor) or holds_stand_ins(v) for v in value)
    if type(value) is dict:
        return any(isinstance(v, Tensor) or holds_stand_ins(v) for v in value.values())
    return False


def called_in_another_capture(args: tuple, kwargs: dict) -> bool:
    """Whether a compiled function is given stand-ins of another capture (at the top or one container down)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, Tensor) or type(value) in (list, tuple, dict) and holds_stand_ins(value):
            return True
    return False
