"""The rest of a frame as plain Python: a function that starts in the middle of another's bytecode.

A loop that breaks the graph at every iteration (a branch on each element's bits) gains nothing from capture: each
break costs a guard check, a graph call and one instruction run by graph_lab's own interpreter, thousands of times
slower than CPython runs it. After ``BREAK_BUDGET`` breaks in one call, compile() stops there and hands the frame to
CPython, as TorchDynamo's resume functions do: ``resume_function(code, offset, ...)`` is a copy of the function's
code with a short prologue put in front, which stores the frame's locals, pushes its stack (``NULL`` included) and
jumps to ``offset``. Everything after the prologue is the original bytecode, so the exception table (shifted by the
prologue's length) and the source lines stay right; the values are constants of the new code object, made once for
that one call (nothing of them is text).
"""

from __future__ import annotations

import dis
import sys
import types
import warnings

from ... import logs
from ...ir.source import user_stacklevel

BREAK_BUDGET = 256
"""Graph breaks in one call after which the rest of that call runs as plain Python, and so does every later call
of the function: its breaks are in a loop, so capture only slows it down."""
RECAPTURE_BUDGET = 3
"""Captures in one call at one offset that the same call has captured at already, after which the same happens: a
loop that breaks at every iteration and whose guards change each time (a branch on each element's bits) would
otherwise capture at every iteration until the recompile limit."""


class BreakBudgetWarning(UserWarning):
    """A compiled function used up its break budget in one call (``BREAK_BUDGET`` graph breaks, or
    ``RECAPTURE_BUDGET`` captures again at an offset the call had captured at): the rest of that call, and every
    later call, runs as plain Python."""


class CallBudget:
    """The breaks and captures of one call, counted against the budgets above."""

    __slots__ = ("breaks", "recaptures", "captured_at")

    def __init__(self):
        self.breaks = self.recaptures = 0
        self.captured_at: dict[int, int] = {}
        """offset -> captures there in this call; ``recaptures`` is the most captures again at one offset."""

    def captured(self, offset: int) -> None:
        count = self.captured_at[offset] = self.captured_at.get(offset, 0) + 1
        self.recaptures = max(self.recaptures, count - 1)

    def spent(self) -> str:
        """After one more break: why the budget is used up, or ''."""
        self.breaks += 1
        if self.breaks >= BREAK_BUDGET:
            return f"{BREAK_BUDGET} graph breaks in one call"
        if self.recaptures >= RECAPTURE_BUDGET:
            return (f"{RECAPTURE_BUDGET} captures again at one place in one call, after {self.breaks} graph breaks "
                    f"(a loop whose every iteration breaks the graph and changes what its guards check)")
        return ""


def finish_as_python(cf, why: str, offset: int, local_values: dict, stack: list, null):
    """The rest of a call of the compiled function ``cf`` that has used up its budget (``why``), run by CPython
    from ``offset``; every later call runs ``cf.fn`` itself (``cf.eager_fallback`` says why, as explain() does)."""
    fn = cf.fn
    cf.eager_fallback = f"{why}: the rest of the call, and every later call, runs as plain Python"
    cf._set_fast_path(None, "")  # (explain() says why from eager_fallback)
    logs.emit("graph_breaks", f"{fn.__qualname__}: {cf.eager_fallback}")
    warnings.warn(f"graph_lab.compile: {fn.__qualname__}: {cf.eager_fallback}. Move the loop that breaks out of the "
                  f"compiled function, or compile its body", BreakBudgetWarning, stacklevel=user_stacklevel())
    return resume_function(fn, offset, local_values, stack, null)()


_OP = dis.opmap
_CACHES = dis._inline_cache_entries  # (a list indexed by opcode up to 3.12, a dict by name in 3.13)
_NO_LOCATION = 15
"""The location-table code of instructions with no source line (the prologue's)."""


def _caches(name: str) -> int:
    if isinstance(_CACHES, dict):
        return _CACHES.get(name, 0)
    return _CACHES[_OP[name]]


def _emit(out: bytearray, name: str, arg: int = 0) -> None:
    """One instruction, with the EXTENDED_ARG prefixes its argument needs and its inline cache entries."""
    for shift in (24, 16, 8):
        if arg >> shift:
            out += bytes((_OP["EXTENDED_ARG"], (arg >> shift) & 0xFF))
    out += bytes((_OP[name], arg & 0xFF))
    out += bytes(2 * _caches(name))


def resume_function(fn: types.FunctionType, offset: int, local_values: dict, stack: list, null) -> types.FunctionType:
    """A function of no arguments that runs ``fn``'s frame from the instruction at ``offset`` with these locals and
    this value stack (``null`` stands for the NULL that calls push), to its return or exception, as CPython."""
    code = fn.__code__
    consts = list(code.co_consts)
    n_locals = len(code.co_varnames) + len(code.co_cellvars)
    slot: dict[str, int] = {}
    for i, name in enumerate((code.co_varnames + code.co_cellvars)):  # (an argument that is a cell: its first slot)
        slot.setdefault(name, i)
    prologue = bytearray()
    if code.co_freevars:
        _emit(prologue, "COPY_FREE_VARS", len(code.co_freevars))
    _emit(prologue, "RESUME", 0)
    # A cell variable's slot gets its cell itself, as MAKE_CELL left it: the functions made before share it.
    stored = [(slot[name], value) for name, value in local_values.items() if name in slot and slot[name] < n_locals]
    if stored:
        _load_values(prologue, consts, [value for _, value in stored])
        for index, _ in stored:
            _emit(prologue, "STORE_FAST", index)
    start = 0
    while start < len(stack):
        if stack[start] is null:
            _emit(prologue, "PUSH_NULL")
            start += 1
            continue
        end = start
        while end < len(stack) and stack[end] is not null:
            end += 1
        _load_values(prologue, consts, list(reversed(stack[start:end])))
        start = end
    _emit(prologue, "JUMP_FORWARD", offset // 2)  # (relative to the end of the prologue: the original offset)
    units = len(prologue) // 2
    new_code = code.replace(
        co_code=bytes(prologue) + code.co_code, co_consts=tuple(consts),
        co_exceptiontable=_shifted_exception_table(code.co_exceptiontable, units),
        co_linetable=_no_location(units) + code.co_linetable,
        co_argcount=0, co_posonlyargcount=0, co_kwonlyargcount=0,
        co_flags=code.co_flags & ~(_CO_VARARGS | _CO_VARKEYWORDS),
        co_stacksize=code.co_stacksize + len(stored) + len(stack) + 1)
    return types.FunctionType(new_code, fn.__globals__, fn.__name__, None, fn.__closure__)


_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08


def _load_values(out: bytearray, consts: list, values: list) -> None:
    """Push ``values`` so that the first is on top: one constant tuple, unpacked."""
    _emit(out, "LOAD_CONST", len(consts))
    consts.append(tuple(values))  # (UNPACK_SEQUENCE leaves the tuple's first item on top)
    _emit(out, "UNPACK_SEQUENCE", len(values))


def _no_location(units: int) -> bytes:
    """Location-table entries saying that ``units`` code units have no source line (each entry covers <= 8)."""
    out = bytearray()
    while units:
        n = min(units, 8)
        out.append(0x80 | (_NO_LOCATION << 3) | (n - 1))
        units -= n
    return bytes(out)


def _varints(table: bytes) -> list[tuple[int, bool]]:
    """The exception table's numbers, each with whether it starts an entry (its first byte has bit 7 set)."""
    numbers, i = [], 0
    while i < len(table):
        first = table[i] & 0x80
        value = table[i] & 63
        while table[i] & 64:
            i += 1
            value = (value << 6) | (table[i] & 63)
        numbers.append((value, bool(first)))
        i += 1
    return numbers


def _varint(value: int, first: bool) -> bytes:
    chunks = [value & 63]
    while value >> 6:
        value >>= 6
        chunks.append(value & 63)
    chunks.reverse()
    out = bytearray(c | 64 for c in chunks[:-1]) + bytes((chunks[-1],))
    if first:
        out[0] |= 0x80
    return bytes(out)


def _shifted_exception_table(table: bytes, units: int) -> bytes:
    """The exception table with every start and target moved by ``units`` code units (entries are (start, size,
    target, depth and lasti), see CPython's Objects/exception_handling_notes.txt)."""
    numbers = _varints(table)
    out = bytearray()
    for i in range(0, len(numbers), 4):
        (start, _), (size, _), (target, _), (depth_lasti, _) = numbers[i:i + 4]
        out += _varint(start + units, True) + _varint(size, False) + _varint(target + units, False) + \
            _varint(depth_lasti, False)
    return bytes(out)


def resumable(fn: types.FunctionType) -> bool:
    """Whether ``resume_function`` can continue ``fn``'s frames (not a generator or coroutine: their frames are
    objects of their own)."""
    return not fn.__code__.co_flags & (0x20 | 0x80 | 0x100 | 0x200) and sys.version_info < (3, 14)
