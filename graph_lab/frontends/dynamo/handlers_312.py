"""Handlers of the opcodes CPython 3.12 added or changed, one table entry per changed opcode (``dis`` of 3.12 is
the spec). Most hold for 3.13 too; what 3.13 changed again is in ``handlers_313.py``.

The largest change is PEP 709: a list, set or dict comprehension no longer is a function of its own but runs
inline, in the frame of the function it is written in. ``LOAD_FAST_AND_CLEAR`` saves the loop variable it
reuses and a ``STORE_FAST`` after the loop puts it back (unbinding it again if it was unbound), so a capture
reads the comprehension's values as the function's own locals, and a graph break inside the loop breaks the
function itself (on 3.11, the call of the comprehension's function).
"""

from __future__ import annotations

import builtins
import operator

from .frame import NULL, NULL_VAR, Unsupported, Var
from .handlers import for_iter_skipping, load_fast, return_from, slice_of
from .opcodes import UNSUPPORTED_ARGUMENTS, handles

SINCE_312 = (12, 13)
ONLY_312 = (12, 12)


# --- locals, and the comprehensions that run inline

handles("LOAD_FAST_CHECK", versions=SINCE_312)(load_fast)  # (for a local that may be unbound: LOAD_FAST checks)


@handles("LOAD_FAST_AND_CLEAR", versions=SINCE_312)
def _load_fast_and_clear(frame, ins):
    var = frame.locals.pop(ins.argval, None)
    frame.stack.append(NULL_VAR if var is None else var)


@handles("STORE_FAST", versions=SINCE_312)
def _store_fast(frame, ins):
    var = frame.stack.pop()
    if var.value is NULL:  # a comprehension's variable put back as it was: unbound
        frame.locals.pop(ins.argval, None)
    else:
        frame.locals[ins.argval] = var


# --- attributes: the method bit of LOAD_ATTR (3.11's LOAD_METHOD), and super()

@handles("LOAD_ATTR", versions=ONLY_312)
def _load_attr(frame, ins):
    obj = frame.pop()
    if ins.arg & 1:  # a method for CALL: NULL below it, the attribute (bound) on top, as 3.11's LOAD_METHOD
        frame.stack.append(NULL_VAR)
    frame.push(frame.ctx.load_attr(obj, ins.argval))


def super_attribute(frame, ins) -> Var:
    """``super().name`` (LOAD_SUPER_ATTR): pops ``super``, the class and ``self``; the attribute of
    ``super(class, self)``. The zero-argument form is that call too (the class is the ``__class__`` cell),
    unless ``super`` is not the builtin: then it is called with no arguments, as CPython does."""
    self_var, cls, global_super = frame.pop(), frame.pop(), frame.pop()
    two_arguments = ins.arg & 2 or frame.ctx.identity(global_super) is builtins.super
    args = [cls, self_var] if two_arguments else []
    return frame.ctx.load_attr(frame.ctx.call(frame, global_super, args, {}), ins.argval)


@handles("LOAD_SUPER_ATTR", versions=ONLY_312)
def _load_super_attr(frame, ins):
    attr = super_attribute(frame, ins)
    if ins.arg & 1:
        frame.stack.append(NULL_VAR)
    frame.push(attr)


# --- slices, returns, loops

@handles("BINARY_SLICE", versions=SINCE_312)
def _binary_slice(frame, ins):
    """``x[a:b]``: 3.11's BUILD_SLICE 2 and BINARY_SUBSCR in one (the same guards on ``a`` and ``b``)."""
    end, start, container = frame.pop(), frame.pop(), frame.pop()
    frame.push(frame.ctx.subscript(container, slice_of(frame, [start, end])))


@handles("STORE_SLICE", versions=SINCE_312)
def _store_slice(frame, ins):
    end, start, container, value = frame.pop(), frame.pop(), frame.pop(), frame.pop()
    frame.ctx.store_subscript(container, slice_of(frame, [start, end]), value)


@handles("RETURN_CONST", versions=SINCE_312)
def _return_const(frame, ins):
    return return_from(frame, Var(ins.argval))


handles("FOR_ITER", versions=ONLY_312)(for_iter_skipping(1))


@handles("END_FOR", versions=ONLY_312)
def _end_for(frame, ins):
    """The clean-up after a loop, which FOR_ITER jumps past (reached only by a jump that CPython never makes
    here): pops the value and the iterator."""
    del frame.stack[-2:]


@handles("END_SEND", versions=SINCE_312)
def _end_send(frame, ins):
    value = frame.pop()
    frame.pop()  # the receiver of SEND
    frame.push(value)


# --- intrinsic functions: opcodes of 3.11 that 3.12 made arguments of CALL_INTRINSIC_1/2

def _stop_iteration_error(frame, exc: Var) -> Var:
    """A generator's StopIteration turned into the RuntimeError that PEP 479 asks for."""
    if isinstance(exc.value, (StopIteration, StopAsyncIteration)):
        error = RuntimeError(f"generator raised {type(exc.value).__name__}")
        error.__cause__ = exc.value
        return Var(error)
    return exc


INTRINSICS_1 = {
    "INTRINSIC_UNARY_POSITIVE": lambda frame, value: frame.ctx.apply(operator.pos, [value]),
    "INTRINSIC_LIST_TO_TUPLE": lambda frame, value: frame.ctx.build(tuple, frame.ctx.iterate(value, as_vars=True)),
    "INTRINSIC_STOPITERATION_ERROR": _stop_iteration_error,
}
"""CALL_INTRINSIC_1's functions that graph_lab runs, by dis's name (the others: module-level ``import *``,
the interactive prompt's print, async generators, and the type parameters of PEP 695)."""


def _set_function_type_params(frame, fn: Var, params: Var) -> Var:
    fn.value.__type_params__ = frame.ctx.use(params)
    return fn


INTRINSICS_2 = {"INTRINSIC_SET_FUNCTION_TYPE_PARAMS": _set_function_type_params}
"""CALL_INTRINSIC_2's functions that graph_lab runs (not ``except*``'s PREP_RERAISE_STAR, as on 3.11)."""


def _unsupported_intrinsic(table: dict):
    def why(ins) -> str | None:
        if ins.argrepr in table:
            return None
        return f"{ins.opname}'s intrinsic function {ins.argrepr} has no handler in graph_lab's bytecode interpreter"
    return why


UNSUPPORTED_ARGUMENTS["CALL_INTRINSIC_1"] = _unsupported_intrinsic(INTRINSICS_1)
UNSUPPORTED_ARGUMENTS["CALL_INTRINSIC_2"] = _unsupported_intrinsic(INTRINSICS_2)


@handles("CALL_INTRINSIC_1", versions=SINCE_312)
def _call_intrinsic_1(frame, ins):
    run = INTRINSICS_1.get(ins.argrepr)
    if run is None:
        raise Unsupported(UNSUPPORTED_ARGUMENTS["CALL_INTRINSIC_1"](ins))
    frame.push(run(frame, frame.pop()))


@handles("CALL_INTRINSIC_2", versions=SINCE_312)
def _call_intrinsic_2(frame, ins):
    run = INTRINSICS_2.get(ins.argrepr)
    if run is None:
        raise Unsupported(UNSUPPORTED_ARGUMENTS["CALL_INTRINSIC_2"](ins))
    second, first = frame.pop(), frame.pop()
    frame.push(run(frame, first, second))
