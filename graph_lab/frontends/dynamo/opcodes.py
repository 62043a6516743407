"""The opcode table: which handler runs each opcode, on which Python.

Each handler is registered for the opcodes it runs and the minor versions of Python 3 it is right for
(``@handles("CALL", versions=(11, 12))``); an opcode whose meaning changed has one entry per meaning. The table
checks itself against ``dis.opmap`` of the running Python as it is filled: a handler cannot claim an opcode
that its versions do not have. ``handlers.py`` holds the handlers every version shares (and 3.11's),
``handlers_statements.py`` the less common statements, ``handlers_312.py`` and ``handlers_313.py`` what
3.12 and 3.13 changed.
"""

from __future__ import annotations

import dis
import inspect
import sys

from .frame import Unsupported, handlers_of, instructions_of, locations_of

KNOWN_VERSIONS = (11, 13)
"""The minor versions of Python 3 whose bytecode the table covers (inclusive)."""

PYTHON = tuple(sys.version_info[:2])
"""The Python whose bytecode is interpreted: the running one. (A test sets another to see what an unknown
version does; the lookups below read it on each call.)"""

JUMPS_IF_TRUE = ("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_IF_TRUE")
JUMPS_IF_FALSE = ("POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_IF_FALSE")
"""The conditional jumps on a value's truth: 3.11's forward and backward forms, and 3.12's one."""

HANDLERS: dict[str, list[tuple[tuple[int, int], object]]] = {}
"""opname -> [((first minor version, last minor version), handler), ...]: ranges of one opname never overlap."""


def handles(*opnames: str, versions: tuple[int, int] = KNOWN_VERSIONS):
    """Register a handler for opcodes, for CPython 3.x with x in ``versions`` (inclusive)."""
    def register(fn):
        for name in opnames:
            if versions[0] <= sys.version_info.minor <= versions[1] and name not in dis.opmap:
                raise RuntimeError(f"handler {fn.__name__} claims {name}, which is not an opcode of this Python "
                                   f"({sys.version_info.major}.{sys.version_info.minor}): check dis.opmap")
            entries = HANDLERS.setdefault(name, [])
            for (low, high), other in entries:
                if low <= versions[1] and versions[0] <= high:
                    raise RuntimeError(f"handlers {other.__name__} and {fn.__name__} both claim {name} for "
                                       f"Python 3.{max(low, versions[0])}: give each its own versions")
            entries.append((versions, fn))
        return fn
    return register


def _minor() -> int:
    """The minor version of ``PYTHON`` when it is a Python 3, else -1 (which no entry covers)."""
    return PYTHON[1] if PYTHON[0] == 3 else -1


def handler_for(opname: str):
    minor = _minor()
    for (low, high), fn in HANDLERS.get(opname, ()):
        if low <= minor <= high:
            return fn
    return _unhandled


def _unhandled(frame, ins):
    raise Unsupported(f"opcode {ins.opname} has no handler in graph_lab's bytecode interpreter for Python "
                      f"{python_version()}")


def python_version() -> str:
    return ".".join(str(part) for part in PYTHON)


def supported_opnames() -> set[str]:
    minor = _minor()
    return {name for name, entries in HANDLERS.items() if any(low <= minor <= high for (low, high), _ in entries)}


def unknown_version() -> str | None:
    """Why the running Python's bytecode cannot be read at all (a version the table does not know), or None."""
    if PYTHON[0] == 3 and KNOWN_VERSIONS[0] <= PYTHON[1] <= KNOWN_VERSIONS[1]:
        return None
    return (f"Python {python_version()} is not a version graph_lab's bytecode interpreter knows (3.{KNOWN_VERSIONS[0]} "
            f"to 3.{KNOWN_VERSIONS[1]}): its opcodes may mean something else there")


UNSUPPORTED_ARGUMENTS: dict[str, object] = {}
"""opname -> ``why(ins)``: for an opcode whose handler runs only some of its arguments (``CALL_INTRINSIC_1``
runs some intrinsic functions), why it cannot run this one, or None. Filled by the handler modules."""


def cannot_interpret(code) -> str | None:
    """Why a function cannot run through this interpreter at all (so it must run eagerly from the start), or
    None. A graph break runs one instruction of the function itself, so every opcode it has needs a handler."""
    reason = unknown_version()
    if reason is not None:
        return reason
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return f"{code.co_name} is a generator or coroutine function"
    # (both cached per code object: a new compile() of the same function asks again)
    for ins, handler, where in zip(instructions_of(code), handlers_of(code), locations_of(code)):
        if handler is _unhandled:
            return (f"opcode {ins.opname} (line {where.lineno}) has no handler in graph_lab's bytecode "
                    f"interpreter for Python {python_version()}")
        why = UNSUPPORTED_ARGUMENTS.get(ins.opname)
        if why is not None and why(ins) is not None:
            return f"{why(ins)} (line {where.lineno}), for Python {python_version()}"
    return None
