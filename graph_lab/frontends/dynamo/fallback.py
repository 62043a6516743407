"""The loud fallback: a function compile() cannot interpret at all runs eagerly, and says so once.

Such a function (a generator, an opcode without a handler, a Python version the opcode table does not know) is
never captured: every call runs the function itself. That must not look like a compiled function that simply
made no graph, so the first compile() of it warns, with a typed warning that names the function, where it is,
the Python version and the reason, at the user's own line (not one of graph_lab's).
"""

from __future__ import annotations

import types
import warnings
import weakref

from ...ir.source import user_stacklevel
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
