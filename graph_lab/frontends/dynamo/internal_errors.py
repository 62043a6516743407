"""Capture never hides its own errors: an exception graph_lab's code raised while capturing is a bug, said so.

Capture turns an exception into a graph break when eager Python raises it too (``xs[10]`` on a short list, a
NumPy call on arrays of the wrong shapes): the instruction then runs for real at the break and raises it there,
where the program expects it. An exception raised by graph_lab's own code (a stand-in without some method, a
handler that mishandles a value) would be turned into a break just the same, and the function would go on
running, slowly and silently. So such a break says so, in explain() and in the ``graph_breaks`` log:
"internal error in graph_lab while capturing: ... (please report)"; with the switch ``GRAPH_LAB_STRICT_CAPTURE=1``
(``graph_lab.logs.set_strict_capture``) it is raised as ``InternalCaptureError``. The test suite sets it, so no
test can pass over one.

Which exceptions are graph_lab's: one of Python's usual error types (a typed ``GraphLabError`` is a refusal, not a
bug), raised in a frame of the graph_lab package, the innermost one its traceback passes through (for a builtin
that raised, the graph_lab function that called it). The few graph_lab functions that run the program's own
operation, or raise the program's own error as eager Python would (``_run``, unpacking with too few values), are
marked ``raises_for_the_program``: an error raised there is the program's.
"""

from __future__ import annotations

import os

from ... import logs
from ...errors import GraphLabError, InternalCaptureError, raises_for_the_program, raises_for_the_program_here

__all__ = ["raises_for_the_program", "internal_error", "graph_lab_frame", "INTERNAL_HINT"]

_INTERNAL_TYPES = (TypeError, ValueError, AttributeError, KeyError, IndexError, AssertionError, RecursionError)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
def graph_lab_frame(e: BaseException, stand_in_method: bool = False):
    """The traceback entry of graph_lab's own code that raised ``e``, or None when ``e`` is the program's.
    ``stand_in_method``: the function that caught ``e`` (one marked ``raises_for_the_program``) called a method of
    a stand-in tensor, so an error raised right there (the method does not take these arguments) is graph_lab's:
    a stand-in should behave as the array it stands for."""
    if not isinstance(e, _INTERNAL_TYPES) or isinstance(e, GraphLabError):
        return None
    last, tb = None, e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(_PACKAGE):
            last = tb
        tb = tb.tb_next
    if last is None or raises_for_the_program_here(last.tb_frame.f_code) and not (stand_in_method and
                                                                          last is e.__traceback__):
        return None
    return last


INTERNAL_HINT = ("the instruction runs as ordinary Python; this is a bug of graph_lab, please report it with the "
                 "function that shows it")


def internal_error(e: Exception, stand_in_method: bool = False) -> str | None:
    """The reason of the graph break for ``e``, raised while capturing, when graph_lab's code raised it (an
    internal error, raised as ``InternalCaptureError`` under the strict switch); None when it is the program's
    own error. An ``InternalCaptureError`` of a capture nested in this one goes on up as it is."""
    if isinstance(e, InternalCaptureError):
        raise e
    where = graph_lab_frame(e, stand_in_method)
    if where is None:
        return None
    code = where.tb_frame.f_code
    place = f"{os.path.relpath(code.co_filename, _PACKAGE)}:{where.tb_lineno} in {code.co_name}"
    text = f"internal error in graph_lab while capturing: {type(e).__name__}: {e} ({place}; please report)"
    if logs.strict_capture():
        raise InternalCaptureError(text) from e
    return text
