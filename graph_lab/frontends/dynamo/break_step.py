"""Running Python at a graph break: the one instruction after a segment, run for real by the frame
interpreter in concrete mode (``concrete.ConcreteContext``), or, past the recompile limit, the rest of the call.

A Python function that instruction calls runs compiled too (``CompiledFunction._compile_callee``), as TorchDynamo
compiles every frame it meets. An exception it raises goes to the function's own ``try`` when one covers the
instruction, as in CPython.
"""

from __future__ import annotations

import builtins
import dis
import sys
import types

import numpy as np

from .concrete import FRAME_BUILTINS, ConcreteContext
from .frame import NULL, CodeCache, Frame, Return, Var, instructions_of
from .opcodes import JUMPS_IF_FALSE, JUMPS_IF_TRUE
from .resume import resumable, resume_function


def concrete_step(cf, offset: int, local_vars: dict, stack: list):
    """Run the one instruction of ``cf`` at ``offset`` for real. Returns (next offset, locals, stack, done, value).

    When the next instruction calls a builtin on what is on the stack (``ids.append(int(t))``: the append after
    the ``int`` that broke the graph), it runs here too: the segment a capture would make of it would compute
    nothing, and the call runs for real either way."""
    cf.body_runs += 1
    result = _one_step(cf, offset, local_vars, stack)
    calls = plain_calls_of(cf.code)
    while not result[3] and result[0] in calls:
        chained = builtin_call(cf, result[1], result[2], *calls[result[0]])
        if chained is None:
            break
        result = chained
    return result


def _one_step(cf, offset: int, local_vars: dict, stack: list):
    jump = cf._conditional_jumps.get(offset)
    if jump is not None and stack and type(stack[-1]) in _PLAIN_TRUTH:
        # ``if tensor_expr:``, the most common break: the truth of an array or a number has no side effect
        # and reads nothing else, so the jump is decided here without a Frame. (When bool() raises, the Frame
        # below raises it again, and looks for the function's own exception handler.)
        jump_if, target, fall_through = jump
        try:
            taken = bool(stack[-1]) is jump_if
        except Exception:
            pass
        else:
            return (target if taken else fall_through), local_vars, stack[:-1], False, None
    call = plain_calls_of(cf.code).get(offset)
    if call is not None:  # ``int(t)``, ``ids.append(token)``: a builtin called with positional arguments
        done = builtin_call(cf, local_vars, stack, *call)
        if done is not None:
            return done
    frame = concrete_frame(cf, offset, local_vars, stack)
    frame.ctx.compile_callee = cf._compile_callee
    try:
        result = frame.step()
    except Exception as exc:
        if not to_handler(cf.code, frame, offset, exc):
            raise
        result = None
    if isinstance(result, Return):
        return None, None, None, True, result.var.value
    next_offset = frame.instructions[frame.ip].offset
    return (next_offset, {k: v.value for k, v in frame.locals.items()}, [v.value for v in frame.stack],
            False, None)


def builtin_call(cf, local_vars: dict, stack: list, argc: int, offset: int, next_offset: int):
    """The CALL at a break, run without a Frame when what it calls is a builtin function or method (``len``,
    ``ids.append``, or ``int``, ``float``, ``bool``), which reads nothing of the frame and is not compiled
    (``ConcreteContext.call`` would call it just so); None when it is anything else. An exception it raises goes
    to the function's own handler, as ``concrete_step`` sends it."""
    if len(stack) < argc + 2:
        return None
    first, second, args = stack[-argc - 2], stack[-argc - 1], stack[len(stack) - argc:]
    # 3.11 and 3.12 put NULL and the callable, or the method and its object, below the arguments; 3.13 puts the
    # callable and NULL, or the method and its object
    if (second if _CALLABLE_FIRST else first) is NULL:
        fn = first if _CALLABLE_FIRST else second
    else:
        fn, args = first, [second] + args
    kind = type(fn)
    if not (kind is types.BuiltinFunctionType and (fn.__self__ is not builtins or fn not in FRAME_BUILTINS)
            or kind is types.MethodDescriptorType or fn is int or fn is float or fn is bool):
        return None
    try:
        result = fn(*args)
    except Exception as exc:
        frame = concrete_frame(cf, offset, local_vars, stack)
        if not to_handler(cf.code, frame, offset, exc):
            raise
        return (frame.instructions[frame.ip].offset, {k: v.value for k, v in frame.locals.items()},
                [v.value for v in frame.stack], False, None)
    return next_offset, local_vars, stack[:len(stack) - argc - 2] + [result], False, None


_CALLABLE_FIRST = sys.version_info >= (3, 13)
_calls_cache = CodeCache()


def plain_calls_of(code: types.CodeType) -> dict[int, tuple[int, int, int]]:
    """offset -> (number of arguments, offset of the CALL, offset of the instruction after it) of each CALL of
    ``code`` that passes no keyword names, under its own offset and, on 3.11, under its PRECALL's (which only
    prepares the same call). Made once per code object."""
    calls = _calls_cache.get(code)
    if calls is None:
        instructions = instructions_of(code)
        calls = {}
        for i, (ins, after) in enumerate(zip(instructions, instructions[1:])):
            before = [instructions[j].opname for j in range(max(i - 2, 0), i)]
            if ins.opname == "CALL" and "KW_NAMES" not in before:
                calls[ins.offset] = (ins.arg, ins.offset, after.offset)
                if before and before[-1] == "PRECALL":
                    calls[instructions[i - 1].offset] = calls[ins.offset]
        _calls_cache.put(code, calls)
    return calls


def concrete_frame(cf, offset: int, local_vars: dict, stack: list) -> Frame:
    """A frame of ``cf``'s code at ``offset`` holding these real values, in concrete mode."""
    cells = dict(cf._cells)  # (a copy: the frame is the instruction's to change)
    frame = Frame(cf.code, cf.fn.__globals__, cells, {k: Var(v) for k, v in local_vars.items()},
                  ConcreteContext())
    frame.stack = [Var(v) for v in stack]
    frame.jump(offset)
    return frame


def to_handler(code: types.CodeType, frame: Frame, offset: int, exc: BaseException) -> bool:
    """Send ``exc``, raised by the instruction at ``offset``, to the function's own handler for it (as CPython's
    exception table says); False when no handler covers the instruction."""
    for entry in dis.Bytecode(code).exception_entries:
        if entry.start <= offset < entry.end:
            del frame.stack[entry.depth:]
            if entry.lasti:
                frame.push(Var(offset))
            frame.push(Var(exc))
            frame.jump(entry.target)
            return True
    return False


def run_rest(cf, offset: int, local_vars: dict, stack: list):
    """Finish a call whose next segment may not be captured (recompile limit): as plain Python from there
    (``resume``), or for a generator's frame, every instruction by this interpreter, for real."""
    if resumable(cf.fn):
        return resume_function(cf.fn, offset, local_vars, stack, NULL)()
    frame = concrete_frame(cf, offset, local_vars, stack)
    while True:
        at = frame.instructions[frame.ip].offset
        try:
            result = frame.step()
        except Exception as exc:
            if not to_handler(cf.code, frame, at, exc):
                raise
            continue
        if isinstance(result, Return):
            return result.var.value


_PLAIN_TRUTH = (np.ndarray, np.bool_, np.float64, np.float32, np.int64, np.int32, bool, int, float)
"""Types whose bool() only looks at the value: a conditional jump on one is decided by ``concrete_step`` itself."""

_jumps_cache = CodeCache()


def conditional_jumps_of(code: types.CodeType) -> dict[int, tuple[bool, int, int]]:
    """``_conditional_jumps(code)``, made once per code object (as ``instructions_of``): every compile() of the
    same function asks again, and nothing writes to the map."""
    jumps = _jumps_cache.get(code)
    if jumps is None:
        jumps = _jumps_cache.put(code, _conditional_jumps(code))
    return jumps


def _conditional_jumps(code: types.CodeType) -> dict[int, tuple[bool, int, int]]:
    """offset -> (jump when the value's truth is this, target offset, offset after it) for each
    ``POP_JUMP_*IF_TRUE/FALSE`` of ``code``, the instructions of ``if tensor_expr:`` (handlers.py runs them
    the same way: pop the value, jump on its truth)."""
    instructions = instructions_of(code)
    jumps = {}
    for ins, after in zip(instructions, instructions[1:]):
        if ins.opname in JUMPS_IF_TRUE:
            jumps[ins.offset] = (True, ins.argval, after.offset)
        elif ins.opname in JUMPS_IF_FALSE:
            jumps[ins.offset] = (False, ins.argval, after.offset)
    return jumps
