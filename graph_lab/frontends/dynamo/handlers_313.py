"""Handlers of the opcodes CPython 3.13 added or changed, one table entry per changed opcode (``dis`` of 3.13 is
the spec; what 3.12 changed and 3.13 kept is in ``handlers_312.py``).

Two changes run through many opcodes. A call's stack is ``callable, self or NULL, args`` (3.11 and 3.12 had
``NULL or method, callable or self, args``): LOAD_GLOBAL and LOAD_ATTR push their NULL above the value, and
PUSH_NULL comes after the callable. And the truth of a value is asked by TO_BOOL before a conditional jump;
graph_lab leaves the value as it is there and lets the jump ask (as 3.11's jumps do), so that a tensor's truth
breaks the graph at the same instruction, the jump, on every version.
"""

from __future__ import annotations

import types

from .frame import NULL, NULL_VAR, Var
from .handlers import FORMATTERS, call_with_names, for_iter_skipping, format_plain, load_unbound
from .handlers_312 import super_attribute
from .opcodes import handles

ONLY_313 = (13, 13)


# --- the call stack: callable, then self or NULL

@handles("LOAD_GLOBAL", versions=ONLY_313)
def _load_global(frame, ins):
    frame.push(frame.ctx.load_global(frame, ins.argval))
    if ins.arg & 1:
        frame.stack.append(NULL_VAR)


@handles("LOAD_ATTR", versions=ONLY_313)
def _load_attr(frame, ins):
    attr = frame.ctx.load_attr(frame.pop(), ins.argval)
    frame.push(attr)
    if ins.arg & 1:  # a method for CALL: the attribute (bound), and NULL for "no self" above it
        frame.stack.append(NULL_VAR)


@handles("LOAD_SUPER_ATTR", versions=ONLY_313)
def _load_super_attr(frame, ins):
    frame.push(super_attribute(frame, ins))
    if ins.arg & 1:
        frame.stack.append(NULL_VAR)


def _callable_and_args(frame, argc: int) -> tuple[Var, list[Var]]:
    args = frame.popn(argc)
    self_or_null = frame.stack.pop()
    fn = frame.stack.pop()
    return fn, (args if self_or_null.value is NULL else [self_or_null] + args)


@handles("CALL", versions=ONLY_313)
def _call(frame, ins):
    fn, args = _callable_and_args(frame, ins.arg)
    frame.stack.append(frame.ctx.call(frame, fn, args, {}))


@handles("CALL_KW", versions=ONLY_313)
def _call_kw(frame, ins):
    """The keyword names are a tuple on top of the stack (a constant of the code: 3.12 had KW_NAMES)."""
    kw_names = frame.pop().value
    fn, args = _callable_and_args(frame, ins.arg)
    frame.push(call_with_names(frame, fn, args, kw_names))


@handles("CALL_FUNCTION_EX", versions=ONLY_313)
def _call_function_ex(frame, ins):
    kwargs = frame.ctx.keyword_items(frame.pop()) if ins.arg & 1 else {}
    args = frame.ctx.iterate(frame.pop(), as_vars=True)
    frame.pop()  # the NULL above the callable
    fn = frame.pop()
    frame.push(frame.ctx.call(frame, fn, args, kwargs))


# --- functions: MAKE_FUNCTION makes it from the code alone, SET_FUNCTION_ATTRIBUTE adds each part

@handles("MAKE_FUNCTION", versions=ONLY_313)
def _make_function(frame, ins):
    code = frame.pop().value
    # (a function of code with free variables needs a closure of that length: empty cells until its own comes)
    closure = tuple(types.CellType() for _ in code.co_freevars) or None
    frame.push(frame.ctx.created(types.FunctionType(code, frame.f_globals, code.co_name, None, closure)))


@handles("SET_FUNCTION_ATTRIBUTE", versions=ONLY_313)
def _set_function_attribute(frame, ins):
    fn_var = frame.pop()
    value = frame.pop()
    fn = fn_var.value
    if ins.arg == 0x08:  # the closure comes first (it is set before the others): a function made again with it
        fn = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, None, value.value)
        fn_var = frame.ctx.created(fn)
    elif ins.arg == 0x02:
        fn.__kwdefaults__ = frame.ctx.use(value) or None
    elif ins.arg == 0x01:
        fn.__defaults__ = frame.ctx.use(value)
    # 0x04, the annotations: not needed to run (as 3.11's MAKE_FUNCTION)
    frame.push(fn_var)


# --- locals: two loads or stores in one instruction

def _local(frame, name: str) -> Var:
    var = frame.locals.get(name)
    return var if var is not None else load_unbound(frame, name)


@handles("LOAD_FAST_LOAD_FAST", versions=ONLY_313)
def _load_fast_load_fast(frame, ins):
    first, second = ins.argval
    frame.stack += (_local(frame, first), _local(frame, second))


@handles("STORE_FAST_LOAD_FAST", versions=ONLY_313)
def _store_fast_load_fast(frame, ins):
    stored, loaded = ins.argval
    frame.locals[stored] = frame.stack.pop()
    frame.stack.append(_local(frame, loaded))


@handles("STORE_FAST_STORE_FAST", versions=ONLY_313)
def _store_fast_store_fast(frame, ins):
    first, second = ins.argval  # (the top of the stack goes into the first)
    frame.locals[first], frame.locals[second] = frame.stack.pop(), frame.stack.pop()


# --- truth, loops, f-strings

@handles("TO_BOOL", versions=ONLY_313)
def _to_bool(frame, ins):
    """Left to the instruction after it (a conditional jump or UNARY_NOT), which asks the truth itself."""
    return None


handles("FOR_ITER", versions=ONLY_313)(for_iter_skipping(2))


@handles("END_FOR", versions=ONLY_313)
def _end_for(frame, ins):
    """3.13's END_FOR pops only the value (a POP_TOP after it pops the iterator); FOR_ITER jumps past both."""
    frame.pop()


@handles("CONVERT_VALUE", versions=ONLY_313)
def _convert_value(frame, ins):
    """``!s``, ``!r``, ``!a`` of an f-string (3.11's FORMAT_VALUE conversion bits): 1, 2 and 3."""
    frame.push(frame.ctx.apply(FORMATTERS[ins.arg], [frame.pop(), Var("")]))


@handles("FORMAT_SIMPLE", versions=ONLY_313)
def _format_simple(frame, ins):
    frame.push(frame.ctx.apply(format_plain, [frame.pop(), Var("")]))


@handles("FORMAT_WITH_SPEC", versions=ONLY_313)
def _format_with_spec(frame, ins):
    spec = frame.pop()
    frame.push(frame.ctx.apply(format_plain, [frame.pop(), spec]))
