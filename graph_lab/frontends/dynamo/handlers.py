"""One handler per opcode family: those every supported Python shares, and 3.11's own.

A handler reads and writes the frame's stack and locals through ``frame.ctx``, which knows the mode: in capture
mode values may be stand-in tensors, reading a value from the segment's inputs adds a guard, and a side effect
raises ``BreakGraph``; in concrete mode everything is real. Each is registered in the opcode table
(``opcodes.py``) with the Python versions it is right for; what 3.12 and 3.13 changed is one entry per changed
opcode, in ``handlers_312.py`` and ``handlers_313.py``.
"""

from __future__ import annotations

import operator
import types

from . import loop_index
from .frame import NULL, NULL_VAR, BreakGraph, IterState, Return, Unsupported, Var
from .internal_errors import raises_for_the_program
# (The table is read through this module, which fills it: importing it registers every handler.)
from .opcodes import HANDLERS, cannot_interpret, handler_for, handles, supported_opnames  # noqa: F401

ONLY_311 = (11, 11)


# --- no-ops and stack shuffling

@handles("NOP", "RESUME", "EXTENDED_ARG", "COPY_FREE_VARS")
@handles("PRECALL", versions=ONLY_311)
def _nop(frame, ins):
    return None


@handles("MAKE_CELL")
def _make_cell(frame, ins):
    frame.ctx.make_cell(frame, ins.argval)


@handles("POP_TOP")
def _pop_top(frame, ins):
    frame.pop()


@handles("PUSH_NULL")
def _push_null(frame, ins):
    frame.stack.append(NULL_VAR)


@handles("COPY")
def _copy(frame, ins):
    frame.push(frame.stack[-ins.arg])


@handles("SWAP")
def _swap(frame, ins):
    s = frame.stack
    s[-1], s[-ins.arg] = s[-ins.arg], s[-1]


# --- loads and stores

@handles("LOAD_CONST")
def _load_const(frame, ins):
    frame.push(Var(ins.argval))


@handles("LOAD_FAST")
def load_fast(frame, ins):
    var = frame.locals.get(ins.argval)  # (a local always holds a Var, never None)
    if var is None:
        var = load_unbound(frame, ins.argval)
    frame.stack.append(var)


def load_unbound(frame, name: str) -> Var:
    """LOAD_FAST of a name the frame's locals do not hold: a free variable's cell (3.13 loads the cells it passes
    on to an inner function with LOAD_FAST, where 3.11 and 3.12 have LOAD_CLOSURE), or an unbound local."""
    if name in frame.code.co_freevars:
        return frame.cell(name)
    raise UnboundLocalError(f"cannot access local variable '{name}' where it is not associated with a value")


@handles("LOAD_CLOSURE", versions=(11, 12))  # (3.13 loads the cell with LOAD_FAST)
def _load_closure(frame, ins):
    frame.push(frame.cell(ins.argval))


@handles("STORE_FAST", versions=ONLY_311)
def _store_fast(frame, ins):
    frame.locals[ins.argval] = frame.stack.pop()


@handles("DELETE_FAST")
def _delete_fast(frame, ins):
    del frame.locals[ins.argval]


@handles("LOAD_DEREF")
def _load_deref(frame, ins):
    frame.push(frame.ctx.load_cell(frame, ins.argval))


@handles("STORE_DEREF")
def _store_deref(frame, ins):
    frame.ctx.store_cell(frame, ins.argval, frame.pop())


@handles("LOAD_GLOBAL", versions=(11, 12))
def _load_global(frame, ins):
    if ins.arg & 1:
        frame.stack.append(NULL_VAR)
    frame.push(frame.ctx.load_global(frame, ins.argval))


@handles("STORE_GLOBAL")
def _store_global(frame, ins):
    frame.ctx.side_effect(f"assignment to the global {ins.argval!r}")
    frame.f_globals[ins.argval] = frame.ctx.real(frame.pop())


@handles("LOAD_ATTR", versions=ONLY_311)
def _load_attr(frame, ins):
    frame.push(frame.ctx.load_attr(frame.pop(), ins.argval))


@handles("LOAD_METHOD", versions=ONLY_311)
def _load_method(frame, ins):
    obj = frame.pop()
    frame.stack.append(NULL_VAR)
    frame.push(frame.ctx.load_attr(obj, ins.argval))


@handles("STORE_ATTR")
def _store_attr(frame, ins):
    obj, value = frame.pop(), frame.pop()
    if frame.ctx.stores_itself(obj, ins.argval, value):  # ``self.a += v``: a write into the array self.a
        return
    frame.ctx.side_effect(f"attribute write {ins.argval!r} on an object the function did not create")
    setattr(obj.value, ins.argval, frame.ctx.real(value))


# --- operators

BINARY_OPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
    "%": operator.mod, "**": operator.pow, "@": operator.matmul, "&": operator.and_, "|": operator.or_,
    "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "@=": operator.imatmul,
    "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift, ">>=": operator.irshift,
}
COMPARE_OPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
               ">=": operator.ge}


INPLACE_OPS = frozenset(op for op in BINARY_OPS if op.endswith("="))
"""``x += y`` and the like: a list or dict on the left is changed in place (a side effect unless made here)."""


@handles("BINARY_OP")
def _binary_op(frame, ins):
    stack = frame.stack
    right, left = stack.pop(), stack.pop()
    if ins.argrepr in INPLACE_OPS:
        frame.ctx.check_inplace(left, ins.argrepr)
    stack.append(frame.ctx.apply(BINARY_OPS[ins.argrepr], [left, right]))


@handles("COMPARE_OP")
def _compare_op(frame, ins):
    """dis names the comparison in ``argval`` on every version (3.12 moved it to ``arg >> 4``, 3.13 to
    ``arg >> 5``). 3.13's "bool" bit (``bool(<)``) says a conditional jump or ``not`` comes next: the result
    stays as it is, and that instruction asks its truth, as it does on 3.11 (see TO_BOOL in handlers_313)."""
    right, left = frame.pop(), frame.pop()
    frame.push(frame.ctx.apply(COMPARE_OPS[ins.argval], [left, right]))


@handles("IS_OP")
def _is_op(frame, ins):
    right, left = frame.pop(), frame.pop()
    frame.push(Var(frame.ctx.same(left, right) != bool(ins.arg)))


@handles("CONTAINS_OP")
def _contains_op(frame, ins):
    right, left = frame.pop(), frame.pop()
    result = frame.ctx.apply(operator.contains, [right, left])
    frame.push(Var(result.value != bool(ins.arg)) if not frame.ctx.is_tensor(result.value) else result)


@handles("UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_NOT")
@handles("UNARY_POSITIVE", versions=ONLY_311)
def _unary(frame, ins):
    fn = {"UNARY_NEGATIVE": operator.neg, "UNARY_POSITIVE": operator.pos, "UNARY_INVERT": operator.invert,
          "UNARY_NOT": operator.not_}[ins.opname]
    frame.push(frame.ctx.apply(fn, [frame.pop()]))


@handles("BINARY_SUBSCR")
def _binary_subscr(frame, ins):
    key, container = frame.pop(), frame.pop()
    frame.push(frame.ctx.subscript(container, key))


@handles("STORE_SUBSCR")
def _store_subscr(frame, ins):
    key, container, value = frame.pop(), frame.pop(), frame.pop()
    frame.ctx.store_subscript(container, key, value)


@handles("DELETE_SUBSCR")
def _delete_subscr(frame, ins):
    key, container = frame.pop(), frame.pop()
    frame.ctx.delete_subscript(container, key)


# --- building containers

@handles("BUILD_TUPLE")
def _build_tuple(frame, ins):
    frame.push(frame.ctx.build(tuple, frame.popn(ins.arg)))


@handles("BUILD_LIST")
def _build_list(frame, ins):
    frame.push(frame.ctx.build(list, frame.popn(ins.arg)))


@handles("BUILD_MAP")
def _build_map(frame, ins):
    items = frame.popn(2 * ins.arg)
    frame.push(frame.ctx.build(dict, {frame.ctx.use(items[i]): items[i + 1] for i in range(0, len(items), 2)}))


@handles("BUILD_CONST_KEY_MAP")
def _build_const_key_map(frame, ins):
    keys = frame.pop().value
    values = frame.popn(ins.arg)
    frame.push(frame.ctx.build(dict, dict(zip(keys, values))))


@handles("BUILD_SLICE")
def _build_slice(frame, ins):
    frame.push(slice_of(frame, frame.popn(ins.arg)))


def slice_of(frame, parts: list[Var]) -> Var:
    if getattr(frame.ctx, "loop_variables", 0) and (made := loop_index.slice_of(parts)) is not None:
        return made
    return Var(slice(*[frame.ctx.use(v) for v in parts]))


def join_strings(*parts: str) -> str:
    return "".join(parts)


def format_plain(value, spec: str) -> str:
    return format(value, spec)


def format_str(value, spec: str) -> str:
    return format(str(value), spec)


def format_repr(value, spec: str) -> str:
    return format(repr(value), spec)


def format_ascii(value, spec: str) -> str:
    return format(ascii(value), spec)


FORMATTERS = (format_plain, format_str, format_repr, format_ascii)  # by FORMAT_VALUE's conversion bits


@handles("BUILD_STRING")
def _build_string(frame, ins):
    frame.push(frame.ctx.apply(join_strings, frame.popn(ins.arg)))


@handles("FORMAT_VALUE", versions=(11, 12))
def _format_value(frame, ins):
    spec = frame.pop() if ins.arg & 0x04 else Var("")
    value = frame.pop()
    frame.push(frame.ctx.apply(FORMATTERS[ins.arg & 0x03], [value, spec]))


@handles("LIST_APPEND")
def _list_append(frame, ins):
    value = frame.pop()
    frame.ctx.append(frame.stack[-ins.arg], value)


@handles("LIST_EXTEND")
def _list_extend(frame, ins):
    value = frame.pop()
    target = frame.stack[-ins.arg]
    for v in frame.ctx.iterate(value, as_vars=True):
        frame.ctx.append(target, v)


@handles("LIST_TO_TUPLE", versions=ONLY_311)
def _list_to_tuple(frame, ins):
    frame.push(frame.ctx.build(tuple, frame.ctx.iterate(frame.pop(), as_vars=True)))


@handles("MAP_ADD")
def _map_add(frame, ins):
    value, key = frame.pop(), frame.pop()
    frame.ctx.store_subscript(frame.stack[-ins.arg], key, value)


@handles("DICT_UPDATE", "DICT_MERGE")
def _dict_update(frame, ins):
    other = frame.pop()
    target = frame.stack[-ins.arg]
    for key, v in frame.ctx.keyword_items(other).items():
        frame.ctx.store_subscript(target, Var(key), v)


@handles("UNPACK_SEQUENCE")
@raises_for_the_program
def _unpack_sequence(frame, ins):
    items = frame.ctx.iterate(frame.pop(), as_vars=True)
    if len(items) > ins.arg:  # (CPython's messages)
        raise ValueError(f"too many values to unpack (expected {ins.arg})")
    if len(items) < ins.arg:
        raise ValueError(f"not enough values to unpack (expected {ins.arg}, got {len(items)})")
    for v in reversed(items):
        frame.push(v)


# --- iteration and jumps

@handles("GET_ITER")
def _get_iter(frame, ins):
    stack = frame.stack
    value = stack.pop()
    if isinstance(value.value, IterState):
        stack.append(value)
    elif frame.ctx.symbolic:  # an iterator over Vars, whose state a recipe can rebuild after a break
        stack.append(frame.ctx.get_iter(value))
    else:  # at a break: a real iterator, which yields lazily as Python's does
        stack.append(Var(iter(value.value)))


def for_iter_skipping(skip: int):
    """The FOR_ITER handler of a Python whose loop ends with ``skip`` clean-up instructions at the jump target,
    which CPython's FOR_ITER jumps past when the iterator is done (3.11: none; 3.12: END_FOR; 3.13: END_FOR and
    POP_TOP)."""
    def for_iter(frame, ins):
        it = frame.stack[-1].value
        if isinstance(it, IterState):
            var = it.next_var()
            if var is not None:
                frame.push(var)
                return
        elif frame.ctx.symbolic:
            raise BreakGraph(f"iteration over a {type(it).__name__} made by Python at a graph break",
                             "each step of the loop runs as ordinary Python")
        else:
            try:
                frame.push(Var(next(it)))
                return
            except StopIteration:
                pass
        frame.stack.pop()
        frame.ip = frame.index_of[ins.argval] + skip  # (frame.jump, and past the clean-up)
    return for_iter


handles("FOR_ITER", versions=ONLY_311)(for_iter_skipping(0))


@handles("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT")
def _jump(frame, ins):
    frame.jump(ins.argval)


@handles("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE", versions=ONLY_311)
@handles("POP_JUMP_IF_TRUE", versions=(12, 13))
def _pop_jump_if_true(frame, ins):
    if frame.ctx.truth(frame.pop()):
        frame.jump(ins.argval)


@handles("POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE", versions=ONLY_311)
@handles("POP_JUMP_IF_FALSE", versions=(12, 13))
def _pop_jump_if_false(frame, ins):
    if not frame.ctx.truth(frame.pop()):
        frame.jump(ins.argval)


@handles("POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE", versions=ONLY_311)
@handles("POP_JUMP_IF_NONE", versions=(12, 13))
def _pop_jump_if_none(frame, ins):
    if frame.ctx.identity(frame.pop()) is None:
        frame.jump(ins.argval)


@handles("POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE", versions=ONLY_311)
@handles("POP_JUMP_IF_NOT_NONE", versions=(12, 13))
def _pop_jump_if_not_none(frame, ins):
    if frame.ctx.identity(frame.pop()) is not None:
        frame.jump(ins.argval)


@handles("JUMP_IF_TRUE_OR_POP", versions=ONLY_311)
def _jump_if_true_or_pop(frame, ins):
    if frame.ctx.truth(frame.stack[-1]):
        frame.jump(ins.argval)
    else:
        frame.pop()


@handles("JUMP_IF_FALSE_OR_POP", versions=ONLY_311)
def _jump_if_false_or_pop(frame, ins):
    if not frame.ctx.truth(frame.stack[-1]):
        frame.jump(ins.argval)
    else:
        frame.pop()


@handles("RETURN_VALUE")
def _return_value(frame, ins):
    return return_from(frame, frame.stack.pop())


def return_from(frame, var: Var) -> Return:
    if frame.yielded is not None:  # a generator run to completion: its values, as an iterator
        return Return(frame.ctx.created(IterState(frame.yielded)))
    return Return(var)


@handles("RETURN_GENERATOR")
def _return_generator(frame, ins):
    if frame.parent is None and frame.ctx.symbolic:
        raise BreakGraph("the compiled function is itself a generator")
    frame.push(Var(None))


@handles("YIELD_VALUE")
def _yield_value(frame, ins):
    if frame.yielded is None or frame.parent is None:
        raise Unsupported("yield outside an inlined generator expression")
    frame.yielded.append(frame.pop())
    frame.push(Var(None))


# --- calls and functions

@handles("KW_NAMES", versions=(11, 12))
def _kw_names(frame, ins):
    return None  # read by CALL from the bytecode itself (see keyword_names), so it survives a graph break


def keyword_names(frame, call_index: int) -> tuple:
    """The keyword names of the CALL at ``call_index``: 3.11 puts KW_NAMES right before its PRECALL, 3.12 right
    before the CALL (3.13 passes them on the stack, to CALL_KW). Read from the bytecode, not from frame state,
    because a graph break may fall between KW_NAMES and CALL. (3.11's dis leaves KW_NAMES's argval unresolved:
    the names are the tuple co_consts[arg].)"""
    i = call_index - 1
    if i >= 0 and frame.instructions[i].opname == "PRECALL":
        i -= 1
    if i >= 0 and frame.instructions[i].opname == "KW_NAMES":
        return frame.code.co_consts[frame.instructions[i].arg]
    return ()


@handles("CALL", versions=(11, 12))
def _call(frame, ins):
    args = frame.popn(ins.arg)
    stack = frame.stack
    first, second = stack.pop(), stack.pop()
    if second.value is NULL:
        fn = first
    else:
        fn, args = second, [first] + args
    stack.append(call_with_names(frame, fn, args, keyword_names(frame, frame.ip - 1)))


def call_with_names(frame, fn: Var, args: list[Var], kw_names: tuple) -> Var:
    """Call ``fn`` with ``args``, of which the last ``len(kw_names)`` are passed by those names."""
    if not kw_names:
        return frame.ctx.call(frame, fn, args, {})
    positional = args[:len(args) - len(kw_names)]
    return frame.ctx.call(frame, fn, positional, dict(zip(kw_names, args[len(args) - len(kw_names):])))


@handles("CALL_FUNCTION_EX", versions=(11, 12))
def _call_function_ex(frame, ins):
    kwargs = frame.ctx.keyword_items(frame.pop()) if ins.arg & 1 else {}
    args = frame.ctx.iterate(frame.pop(), as_vars=True)
    fn = frame.pop()
    if frame.stack and frame.stack[-1].value is NULL:
        frame.pop()
    frame.push(frame.ctx.call(frame, fn, args, kwargs))


@handles("MAKE_FUNCTION", versions=(11, 12))
def _make_function(frame, ins):
    code = frame.pop().value
    closure = frame.pop().value if ins.arg & 0x08 else None
    if ins.arg & 0x04:
        frame.pop()  # annotations: not needed to run
    kwdefaults = frame.ctx.use(frame.pop()) if ins.arg & 0x02 else None
    defaults = frame.ctx.use(frame.pop()) if ins.arg & 0x01 else None
    fn = types.FunctionType(code, frame.f_globals, code.co_name, defaults, closure)
    if kwdefaults:
        fn.__kwdefaults__ = kwdefaults
    frame.push(frame.ctx.created(fn))


@handles("LOAD_ASSERTION_ERROR")
def _load_assertion_error(frame, ins):
    frame.push(Var(AssertionError))


@handles("RAISE_VARARGS")
def _raise_varargs(frame, ins):
    frame.ctx.side_effect("raise statement")
    if ins.arg == 0:
        raise RuntimeError("No active exception to reraise")
    cause = frame.pop().value if ins.arg == 2 else None
    exc = frame.pop().value
    if cause is not None:
        raise exc from cause
    raise exc


# The less common statements' handlers, and those of the opcodes 3.12 and 3.13 changed, go in the same table
# (each module imports this one: the names above are defined by now).
from . import handlers_statements, handlers_312, handlers_313  # noqa: E402,F401
