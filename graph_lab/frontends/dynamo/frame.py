"""A frame of the bytecode interpreter: the value stack, the locals, and the loop that runs instructions.

The same frame runs in two modes. In *capture* mode arrays are stand-in tensors and tensor operations are
recorded into a graph; what cannot be captured raises ``BreakGraph`` at that instruction. In *concrete* mode
every value is real and the frame runs one instruction for real: the instruction at a graph break.
"""

from __future__ import annotations

import dis
import inspect
import types
from dataclasses import dataclass
from typing import Any

from ...errors import GraphLabError
from ...ir.source import SourceLoc
from .internal_errors import INTERNAL_HINT, internal_error


class _Null:
    """The NULL that 3.11 pushes below a callable (``PUSH_NULL``, ``LOAD_GLOBAL`` with the NULL bit)."""

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null()


class Var:
    """A value on the stack or in a local: the value itself (a stand-in tensor in capture mode) and where it
    came from (a ``Source`` when it was read from the segment's inputs, globals or closure; None when made
    during capture)."""

    __slots__ = ("value", "source")

    def __init__(self, value: Any, source=None):
        self.value = value
        self.source = source

    def __repr__(self) -> str:
        return f"Var({self.value!r}, {self.source})"


NULL_VAR = Var(NULL)
"""The NULL as a Var (one for all: a Var never changes)."""


class IterState:
    """An iterator whose position can be saved and rebuilt: every ``GET_ITER`` makes one of these, over Vars.
    It is a real iterator too, for the native code that may meet it at a graph break."""

    __slots__ = ("items", "pos")

    def __init__(self, items: list, pos: int = 0):
        self.items = items
        self.pos = pos

    def next_var(self) -> "Var | None":
        """The next item, or None when the iterator is exhausted."""
        if self.pos >= len(self.items):
            return None
        self.pos += 1
        return self.items[self.pos - 1]

    def pending(self) -> list:
        """The items not taken yet (without taking them)."""
        return self.items[self.pos:]

    def rest(self) -> list:
        """Take every item left."""
        items = self.pending()
        self.pos += len(items)
        return items

    def __iter__(self):
        return self

    def __next__(self):
        var = self.next_var()
        if var is None:
            raise StopIteration
        return var.value


class BreakGraph(Exception):
    """Capture cannot go on at this instruction (a data-dependent branch, an unknown call, a side effect)."""

    def __init__(self, reason: str, hint: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.hint = hint


def capture_error(e: Exception, stand_in_method: bool = False) -> BreakGraph:
    """The break for an exception that native code raised running on the capture's values (``_run``). Eager
    Python raises it too: the instruction will run for real, at the break. (Unless graph_lab's own code raised
    it: an internal error, see ``internal_errors``; ``stand_in_method``: the native code was a stand-in's method.)"""
    internal = internal_error(e, stand_in_method)
    if internal is not None:
        return BreakGraph(internal, INTERNAL_HINT)
    if isinstance(e, GraphLabError):
        return BreakGraph(f"cannot capture: {e}")
    return BreakGraph(f"{type(e).__name__} raised while capturing: {e}")


def step_error(e: Exception) -> BreakGraph:
    """The break for an exception a handler raised while capturing (eager Python raises it too, at the break),
    or for an internal error of graph_lab (``internal_errors``)."""
    internal = internal_error(e)
    if internal is not None:
        return BreakGraph(internal, INTERNAL_HINT)
    return BreakGraph(f"{type(e).__name__} raised while capturing: {e}")


class Unsupported(Exception):
    """Even running the instruction for real is not possible here (an opcode without a handler)."""


@dataclass
class Return:
    var: Var


class Frame:
    """One function activation being interpreted."""

    def __init__(self, code: types.CodeType, f_globals: dict, cells: dict, local_vars: dict, ctx,
                 closure_sources: dict | None = None, parent: "Frame | None" = None):
        self.code = code
        self.f_globals = f_globals
        # name -> real cell object, for the free variables. A cell variable (one that inner functions capture)
        # lives in ``locals`` as its cell after MAKE_CELL, as in CPython, so that it crosses graph breaks.
        self.cells = cells
        self.closure_sources = closure_sources or {}  # freevar name -> Source of its cell contents
        self.locals = local_vars  # name -> Var
        self.ctx = ctx
        self.parent = parent
        self.stack: list[Var] = []
        tables = _frame_cache.get(code)
        if tables is None:
            tables = _frame_cache.put(code, (instructions_of(code), locations_of(code), handlers_of(code),
                                             index_of(code)))
        self.instructions, self.locations, self.handlers, self.index_of = tables
        self.ip = 0
        self.yielded: list[Var] | None = [] if code.co_flags & inspect.CO_GENERATOR else None

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1

    def loc(self) -> SourceLoc:
        return self.locations[self.ip]  # (the running instruction's line: see ``locations_of``)

    def jump(self, offset: int) -> None:
        self.ip = self.index_of[offset]

    def push(self, var: Var) -> None:
        self.stack.append(var)

    def pop(self) -> Var:
        return self.stack.pop()

    def popn(self, n: int) -> list[Var]:
        if n == 0:
            return []
        out = self.stack[-n:]
        del self.stack[-n:]
        return out

    def cell(self, name: str) -> Var:
        """The Var holding the cell of a cell or free variable."""
        if name in self.code.co_cellvars:
            return self.locals[name]
        return Var(self.cells[name])

    def step(self):
        """Run the instruction at ``ip``; returns a ``Return`` when the frame returns."""
        ins = self.instructions[self.ip]
        handler = self.handlers[self.ip]
        self.ip += 1
        if not self.ctx.symbolic:
            return handler(self, ins)
        try:
            return handler(self, ins)
        except (BreakGraph, Unsupported):
            raise
        except Exception as e:  # eager Python raises it too: the instruction runs for real, at a break
            raise step_error(e) from None

    def run(self) -> Var:
        """Run to the end (used for inlined calls)."""
        while True:
            result = self.step()
            if isinstance(result, Return):
                return result.var


class CodeCache(dict):
    """Facts about code objects that depend on the code alone (its instructions, their lines, handlers...), made
    once per code object. At most ``LIMIT`` entries: a process that makes code objects without end (``exec``,
    generated functions) would otherwise keep every one alive; when full it starts again, empty."""

    LIMIT = 1024

    def put(self, code: types.CodeType, value):
        if len(self) >= self.LIMIT:
            self.clear()
        self[code] = value
        return value


_instruction_cache = CodeCache()
_frame_cache = CodeCache()
"""code -> (instructions_of, locations_of, handlers_of, index_of) of it, for Frame."""


def instructions_of(code: types.CodeType) -> list[dis.Instruction]:
    ins = _instruction_cache.get(code)
    if ins is None:
        ins = _instruction_cache.put(code, [i for i in dis.get_instructions(code) if i.opname != "CACHE"])
    return ins


_index_cache = CodeCache()


def index_of(code: types.CodeType) -> dict[int, int]:
    """offset -> position in ``instructions_of(code)``, made once per code object: every graph break on every
    call builds a Frame, and the map never changes (nothing writes to it)."""
    index = _index_cache.get(code)
    if index is None:
        index = _index_cache.put(code, {ins.offset: i for i, ins in enumerate(instructions_of(code))})
    return index


_location_cache = CodeCache()


def locations_of(code: types.CodeType) -> list[SourceLoc]:
    """The user's line at each ``ip``, made once per code object: ``Frame.step``
    advances ``ip`` before it runs the instruction's handler, so entry ``i`` is the line of instruction ``i - 1``,
    the one running (entry 0, before any has run, the first instruction's)."""
    locations = _location_cache.get(code)
    if locations is None:
        lines = [SourceLoc(code.co_filename, ins.positions.lineno if ins.positions and ins.positions.lineno
                           else code.co_firstlineno) for ins in instructions_of(code)]
        locations = lines[:1] + lines
        _location_cache.put(code, locations)
    return locations


_handler_cache = CodeCache()


def handlers_of(code: types.CodeType) -> list:
    """The handler of each instruction of ``instructions_of(code)``, looked up once per code object (not on each
    step: a loop runs the same instructions many times)."""
    handlers = _handler_cache.get(code)
    if handlers is None:
        from .handlers import handler_for  # (handlers.py imports this module)
        handlers = _handler_cache.put(code, [handler_for(ins.opname) for ins in instructions_of(code)])
    return handlers
