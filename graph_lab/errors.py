"""The error types of graph_lab.

Every error says what went wrong, where (the node and the user's source line), which rule was broken, and what
to do instead. Errors that the course already catches keep the base classes it expects: running a graph raises
a ``ValueError`` subclass, tracing raises ``TraceError``.
"""

from __future__ import annotations


class GraphLabError(Exception):
    """Base class of every error graph_lab raises on purpose."""


class TraceError(GraphLabError):
    """A function could not be captured as it is written (a data-dependent value, an unsupported call, ...)."""


class InternalCaptureError(GraphLabError):
    """``compile()``'s capture raised an exception of graph_lab's own (a bug of graph_lab, not of the program).
    Raised only under ``GRAPH_LAB_STRICT_CAPTURE=1`` (``graph_lab.logs.set_strict_capture``); otherwise the
    capture breaks the graph there and explain() reports the break as an internal error. The exception is chained
    (``__cause__``), with the traceback that shows where."""


class ScriptError(GraphLabError):
    """``script()`` cannot convert a construct of the function's source. The message shows the source line with a
    caret under the construct, names it, and says what to write instead; the same facts are attributes."""

    def __init__(self, message: str, *, filename: str = "", lineno: int = 0, col: int = 0, construct: str = "",
                 hint: str = ""):
        super().__init__(message)
        self.filename = filename
        """The file of the function's source."""
        self.lineno = lineno
        """1-based line of the construct in that file."""
        self.col = col
        """1-based column where the construct starts."""
        self.construct = construct
        """What could not be converted, in words ("a try statement", "print of a tensor", ...)."""
        self.hint = hint
        """What to write instead."""


class GraphInputError(GraphLabError, ValueError):
    """The inputs given to a graph do not match its signature (names, array-ness)."""


class GraphExecutionError(GraphLabError, ValueError):
    """An op failed while a graph ran. The message starts with the node, as in
    ``while executing %5 = reshape(%4) shape=(4, 2, 4) [model.py:23]: ...``."""

    def __init__(self, message: str, node=None):
        super().__init__(message)
        self.node = node


class VerifyError(GraphLabError, ValueError):
    """A graph breaks an invariant of the IR (single definition, use after definition, types that agree with
    the op's rule). The message names the node and the rule."""


class OpError(GraphLabError, ValueError):
    """An op was given arguments its rule rejects (wrong ranks, shapes that do not broadcast, a bad axis...)."""


class GraphEditError(GraphLabError, ValueError):
    """A graph edit was refused because it would break an invariant (erasing a node whose value is still used,
    replacing a value by one of another type, inserting a node before the values it reads)."""


class GraphLoadError(GraphLabError, ValueError):
    """A saved graph (``graph_lab.load``) or a printed IR text (``graph_lab.parse``) could not be read back.

    Loading untrusted files raises this type and no other for anything wrong inside the file: a bad archive,
    unexpected members, forbidden dtypes (object arrays are refused before NumPy would unpickle them), sizes
    over the limits, text that does not parse. Only a path that cannot be opened raises the usual ``OSError``.
    """


class GraphParseError(GraphLoadError):
    """The IR text does not follow the grammar (docs/ir.md), breaks a limit, or describes an invalid graph.

    ``line`` and ``column`` are 1-based; ``found`` is what the parser saw there and ``expected`` what the
    grammar (or the op's type rule) allows. It is a ``GraphLoadError``, so ``except GraphLoadError`` covers
    ``parse`` and ``load`` alike.
    """

    def __init__(self, message: str, *, line: int, column: int, found: str, expected: str):
        super().__init__(message)
        self.line = line
        self.column = column
        self.found = found
        self.expected = expected


class GraphSaveError(GraphLabError, ValueError):
    """A graph cannot be saved so that it loads back exactly (a dtype the IR text cannot write, parameters
    with one name and two different values, ...). Nothing is written when this is raised."""


_FOR_THE_PROGRAM: set = set()
"""Code objects of the functions marked ``raises_for_the_program``."""


def raises_for_the_program(fn):
    """Mark ``fn`` as raising, on purpose, the error eager Python or NumPy raises for the same operation: it runs a
    native operation the program asked for (a builtin, a NumPy call, NumPy asked for a result's dtype), or raises
    that error itself (a stand-in's ``bool()`` of many values, unpacking too few values). compile()'s capture then
    takes what it raises for the program's error, not for a bug of graph_lab (``frontends/dynamo/internal_errors``)."""
    _FOR_THE_PROGRAM.add(fn.__code__)
    return fn


def raises_for_the_program_here(code) -> bool:
    """Whether the function of this code object is marked ``raises_for_the_program``."""
    return code in _FOR_THE_PROGRAM
