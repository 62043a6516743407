"""Which locals a segment may read: the locals *live* at its first instruction, found by the classic backward
data-flow analysis over the function's bytecode.

A local is live at an offset when some path from there (jumps, loops, and the edges to exception handlers
included) reads it before it is stored again. A segment that starts where a local is dead never looks at its
value: the GPT-2 decode loop resumes after ``ids.append(...)`` holding the previous step's ``logits``, which the
loop body overwrites before reading. Capture passes such a local on as it is, with no guard and no graph input
(``capture_loop.start_capture``), so that a change of its shape or type between calls costs no recompile.

The analysis errs on the side of "live": any local of a code object that reads its frame's locals by name
(``locals()``, ``vars()``, ``dir()``, ``eval``, ``exec``, ``super()``: see ``concrete.FRAME_BUILTINS``), that
keeps a local in a cell, or that uses an instruction on locals this module does not know, is live everywhere.
"""

from __future__ import annotations

import dis
import types

from .frame import CodeCache, instructions_of

READS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "DELETE_FAST", "LOAD_FAST_LOAD_FAST",
                   "STORE_FAST_LOAD_FAST"})
"""Instructions that read (or may raise on) the locals they name. (``STORE_FAST_LOAD_FAST`` also stores: counted
as a read of both names, which can only make more locals live.)"""
WRITES = frozenset({"STORE_FAST", "STORE_FAST_STORE_FAST"})
ENDS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
                  "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE", "JUMP", "JUMP_NO_INTERRUPT"})
"""Instructions after which the next one does not run (every other one is taken to fall through)."""
FRAME_READERS = frozenset({"locals", "vars", "dir", "eval", "exec", "super", "breakpoint"})
"""Names whose call may read every local of the calling frame."""
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs) | frozenset(getattr(dis, "hasjump", ()))

_cache = CodeCache()


def live_locals_at(code: types.CodeType, offset: int) -> frozenset | None:
    """The names of the locals that code starting at ``offset`` may read, or None: every local may be read."""
    live = _cache.get(code)
    if live is None:
        live = _cache.put(code, _analyse(code))
    return None if live is ALL else live.get(offset)


ALL = object()
"""The analysis of a code object whose every local is taken to be live."""


def _names(ins: dis.Instruction) -> tuple:
    return ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)


def _analyse(code: types.CodeType):
    """offset -> frozenset of live locals, for every instruction of ``code`` (or ALL)."""
    if code.co_cellvars or code.co_freevars or FRAME_READERS & set(code.co_names):
        return ALL
    instructions = instructions_of(code)
    index = {ins.offset: i for i, ins in enumerate(instructions)}
    uses, defs, successors = [], [], []
    for i, ins in enumerate(instructions):
        name = ins.opname
        if "FAST" in name and name not in READS and name not in WRITES:
            return ALL  # an instruction on locals this analysis does not know
        uses.append(frozenset(_names(ins)) if name in READS else frozenset())
        defs.append(frozenset(_names(ins)) if name in WRITES else frozenset())
        after = [] if name in ENDS or i + 1 == len(instructions) else [i + 1]
        if ins.opcode in _JUMPS and ins.argval in index:
            after.append(index[ins.argval])
        successors.append(after)
    for entry in dis.Bytecode(code).exception_entries:  # an instruction that raises goes on at the handler
        for i, ins in enumerate(instructions):
            if entry.start <= ins.offset < entry.end and entry.target in index:
                successors[i].append(index[entry.target])
    live_in = [frozenset()] * len(instructions)
    changed = True
    while changed:  # (backward order: a loop-free stretch settles in one pass)
        changed = False
        for i in range(len(instructions) - 1, -1, -1):
            out = frozenset().union(*[live_in[s] for s in successors[i]])
            new = uses[i] | (out - defs[i])
            if new != live_in[i]:
                live_in[i] = new
                changed = True
    return {ins.offset: live_in[i] for i, ins in enumerate(instructions)}
