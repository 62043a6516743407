"""The loud fallback: a function compile() cannot interpret at all runs eagerly, and says so once.

Such a function (a generator, an opcode without a handler, a Python version the opcode table does not know) is
never captured: every call runs the function itself. That must not look like a compiled function that simply
made no graph, so the first compile() of it warns, with a typed warning that names the function, where it is,
the Python version and the reason, at the user's own line (not one of graph_lab's).
"""

from __future__ import annotations

import os
import sys
import types
import warnings
import weakref

from .opcodes import python_version


class EagerFallbackWarning(UserWarning):
    """compile() cannot interpret this function at all (see the message for why): it runs eagerly, every call."""


_warned: "weakref.WeakSet[types.CodeType]" = weakref.WeakSet()
"""The code of each function warned about: once per function, however often it is compiled."""

_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
"""graph_lab's own directory: frames in it are not the user's."""


def warn_eager_fallback(fn: types.FunctionType, reason: str) -> None:
    code = fn.__code__
    if code in _warned:
        return
    _warned.add(code)
    warnings.warn(f"graph_lab.compile: {fn.__qualname__} ({code.co_filename}:{code.co_firstlineno}) runs eagerly on "
                  f"Python {python_version()}, not compiled: {reason}. Call it without compile(), or move what "
                  f"compile() cannot read into a function of its own and compile the rest",
                  EagerFallbackWarning, stacklevel=_user_stacklevel())


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside graph_lab: the user's line that called compile()."""
    frame, level = sys._getframe(1), 1  # (level 1: the function that calls warnings.warn)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
