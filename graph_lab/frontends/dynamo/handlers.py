"""One handler per opcode family of CPython 3.11, registered with the Python versions it supports.

A handler reads and writes the frame's stack and locals through ``frame.ctx``, which knows the mode: in capture
mode values may be stand-in tensors, reading a value from the segment's inputs adds a guard, and a side effect
raises ``BreakGraph``; in concrete mode everything is real. Adding 3.12 support is one entry per changed opcode.
"""

from __future__ import annotations

import builtins
import dis
import inspect
import operator
import sys
import types

from .frame import NULL, NULL_VAR, BreakGraph, IterState, Return, Unsupported, Var, handlers_of, instructions_of

HANDLERS: dict[str, tuple[tuple[int, int], object]] = {}


def handles(*opnames: str, versions: tuple[int, int] = (11, 11)):
    """Register a handler for opcodes, for CPython 3.x with x in ``versions`` (inclusive)."""
    def register(fn):
        for name in opnames:
            if versions[0] <= sys.version_info.minor <= versions[1] and name not in dis.opmap:
                raise RuntimeError(f"handler {fn.__name__} claims {name}, which is not an opcode of this Python "
                                   f"({sys.version_info.major}.{sys.version_info.minor}): check dis.opmap")
            HANDLERS[name] = (versions, fn)
        return fn
    return register


def handler_for(opname: str):
    entry = HANDLERS.get(opname)
    if entry is None or not entry[0][0] <= sys.version_info.minor <= entry[0][1]:
        return _unhandled
    return entry[1]


def _unhandled(frame, ins):
    raise Unsupported(f"opcode {ins.opname} has no handler in graph_lab's bytecode interpreter for Python "
                      f"{sys.version_info.major}.{sys.version_info.minor}")


def supported_opnames() -> set[str]:
    return {name for name, (v, _) in HANDLERS.items() if v[0] <= sys.version_info.minor <= v[1]}


def cannot_interpret(code) -> str | None:
    """Why a function cannot run through this interpreter at all (so it must run eagerly from the start), or
    None. A graph break runs one instruction of the function itself, so every opcode it has needs a handler."""
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return f"{code.co_name} is a generator or coroutine function"
    # (both cached per code object: a new compile() of the same function asks again)
    for ins, handler in zip(instructions_of(code), handlers_of(code)):
        if handler is _unhandled:
            return (f"opcode {ins.opname} (line {ins.positions.lineno}) has no handler in graph_lab's bytecode "
                    f"interpreter for Python {sys.version_info.major}.{sys.version_info.minor}")
    return None


# --- no-ops and stack shuffling

@handles("NOP", "RESUME", "PRECALL", "EXTENDED_ARG", "COPY_FREE_VARS")
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
def _load_fast(frame, ins):
    var = frame.locals.get(ins.argval)  # (a local always holds a Var, never None)
    if var is None:
        raise UnboundLocalError(f"cannot access local variable '{ins.argval}' where it is not associated with a value")
    frame.stack.append(var)


@handles("LOAD_CLOSURE")
def _load_closure(frame, ins):
    frame.push(frame.cell(ins.argval))


@handles("STORE_FAST")
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


@handles("LOAD_GLOBAL")
def _load_global(frame, ins):
    if ins.arg & 1:
        frame.stack.append(NULL_VAR)
    frame.push(frame.ctx.load_global(frame, ins.argval))


@handles("STORE_GLOBAL")
def _store_global(frame, ins):
    frame.ctx.side_effect(f"assignment to the global {ins.argval!r}")
    frame.f_globals[ins.argval] = frame.ctx.real(frame.pop())


@handles("LOAD_ATTR")
def _load_attr(frame, ins):
    frame.push(frame.ctx.load_attr(frame.pop(), ins.argval))


@handles("LOAD_METHOD")
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


@handles("UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT", "UNARY_NOT")
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
    parts = [frame.ctx.use(v) for v in frame.popn(ins.arg)]
    frame.push(Var(slice(*parts)))


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


@handles("FORMAT_VALUE")
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


@handles("LIST_TO_TUPLE")
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
def _unpack_sequence(frame, ins):
    items = frame.ctx.iterate(frame.pop(), as_vars=True)
    if len(items) != ins.arg:
        raise ValueError(f"expected {ins.arg} values to unpack, got {len(items)}")
    for v in reversed(items):
        frame.push(v)


# --- iteration and jumps

@handles("GET_ITER")
def _get_iter(frame, ins):
    stack = frame.stack  # (frame.pop and frame.push, inlined: every loop starts here)
    value = stack.pop()
    if isinstance(value.value, IterState):
        stack.append(value)
    elif frame.ctx.symbolic:  # an iterator over Vars, whose state a recipe can rebuild after a break
        stack.append(frame.ctx.get_iter(value))
    else:  # at a break: a real iterator, which yields lazily as Python's does
        stack.append(Var(iter(value.value)))


@handles("FOR_ITER")
def _for_iter(frame, ins):
    it = frame.stack[-1].value
    if isinstance(it, IterState):
        var = it.next_var()
        if var is not None:
            frame.stack.append(var)  # (frame.push, inlined: once per item of every loop)
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
    frame.jump(ins.argval)


@handles("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT")
def _jump(frame, ins):
    frame.jump(ins.argval)


@handles("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE")
def _pop_jump_if_true(frame, ins):
    if frame.ctx.truth(frame.pop()):
        frame.jump(ins.argval)


@handles("POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE")
def _pop_jump_if_false(frame, ins):
    if not frame.ctx.truth(frame.pop()):
        frame.jump(ins.argval)


@handles("POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE")
def _pop_jump_if_none(frame, ins):
    if frame.ctx.identity(frame.pop()) is None:
        frame.jump(ins.argval)


@handles("POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE")
def _pop_jump_if_not_none(frame, ins):
    if frame.ctx.identity(frame.pop()) is not None:
        frame.jump(ins.argval)


@handles("JUMP_IF_TRUE_OR_POP")
def _jump_if_true_or_pop(frame, ins):
    if frame.ctx.truth(frame.stack[-1]):
        frame.jump(ins.argval)
    else:
        frame.pop()


@handles("JUMP_IF_FALSE_OR_POP")
def _jump_if_false_or_pop(frame, ins):
    if not frame.ctx.truth(frame.stack[-1]):
        frame.jump(ins.argval)
    else:
        frame.pop()


@handles("RETURN_VALUE")
def _return_value(frame, ins):
    var = frame.stack.pop()
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

@handles("KW_NAMES")
def _kw_names(frame, ins):
    return None  # read by CALL from the bytecode itself (see keyword_names), so it survives a graph break


def keyword_names(frame, call_index: int) -> tuple:
    """The keyword names of the CALL at ``call_index``: 3.11 puts KW_NAMES right before its PRECALL. Read from
    the bytecode, not from frame state, because a graph break may fall between KW_NAMES and CALL.
    (3.11's dis leaves KW_NAMES's argval unresolved: the names are the tuple co_consts[arg].)"""
    i = call_index - 1
    if i >= 0 and frame.instructions[i].opname == "PRECALL":
        i -= 1
    if i >= 0 and frame.instructions[i].opname == "KW_NAMES":
        return frame.code.co_consts[frame.instructions[i].arg]
    return ()


@handles("CALL")
def _call(frame, ins):
    args = frame.popn(ins.arg)
    stack = frame.stack
    first, second = stack.pop(), stack.pop()
    if second.value is NULL:
        fn = first
    else:
        fn, args = second, [first] + args
    kw_names = keyword_names(frame, frame.ip - 1)
    if kw_names:
        positional = args[:len(args) - len(kw_names)]
        kwargs = dict(zip(kw_names, args[len(args) - len(kw_names):]))
    else:
        positional, kwargs = args, {}
    stack.append(frame.ctx.call(frame, fn, positional, kwargs))


@handles("CALL_FUNCTION_EX")
def _call_function_ex(frame, ins):
    kwargs = frame.ctx.keyword_items(frame.pop()) if ins.arg & 1 else {}
    args = frame.ctx.iterate(frame.pop(), as_vars=True)
    fn = frame.pop()
    if frame.stack and frame.stack[-1].value is NULL:
        frame.pop()
    frame.push(frame.ctx.call(frame, fn, args, kwargs))


@handles("MAKE_FUNCTION")
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


# --- exceptions (reached through the exception table, in concrete mode)

@handles("PUSH_EXC_INFO")
def _push_exc_info(frame, ins):
    exc = frame.pop()
    frame.push(Var(None))  # the previously handled exception (graph_lab keeps none)
    frame.push(exc)


@handles("POP_EXCEPT")
def _pop_except(frame, ins):
    frame.pop()


@handles("CHECK_EXC_MATCH")
def _check_exc_match(frame, ins):
    kind = frame.pop()
    frame.push(frame.ctx.call(frame, Var(isinstance), [frame.stack[-1], kind], {}))  # guards the type caught


@handles("RERAISE")
def _reraise(frame, ins):
    exc = frame.pop().value
    frame.ctx.side_effect("re-raise of an exception")
    raise exc




# --- less common statements: star unpacking, sets, imports, with, del, class bodies, match


@handles("UNPACK_EX")
def _unpack_ex(frame, ins):
    before, after = ins.arg & 0xFF, ins.arg >> 8
    items = frame.ctx.iterate(frame.pop(), as_vars=True)
    if len(items) < before + after:
        raise ValueError(f"not enough values to unpack (expected at least {before + after}, got {len(items)})")
    for v in reversed(items[len(items) - after:]):
        frame.push(v)
    frame.push(frame.ctx.build(list, items[before:len(items) - after]))
    for v in reversed(items[:before]):
        frame.push(v)


@handles("BUILD_SET")
def _build_set(frame, ins):
    frame.push(frame.ctx.created({frame.ctx.contained(v) for v in frame.popn(ins.arg)}))


@handles("SET_ADD")
def _set_add(frame, ins):
    value = frame.pop()
    frame.stack[-ins.arg].value.add(frame.ctx.contained(value))


@handles("SET_UPDATE")
def _set_update(frame, ins):
    other = frame.pop()
    frame.stack[-ins.arg].value.update(frame.ctx.contained(v) for v in frame.ctx.iterate(other, as_vars=True))


@handles("IMPORT_NAME")
def _import_name(frame, ins):
    fromlist, level = frame.ctx.use(frame.pop()), frame.ctx.use(frame.pop())
    frame.push(frame.ctx.import_module(frame, ins.argval, fromlist, level))


@handles("IMPORT_FROM")
def _import_from(frame, ins):
    frame.push(frame.ctx.load_attr(frame.stack[-1], ins.argval))


@handles("BEFORE_WITH")
def _before_with(frame, ins):
    frame.ctx.side_effect("entering a with statement (__enter__)")
    manager = frame.pop().value
    exit_method = types.MethodType(type(manager).__exit__, manager)
    entered = type(manager).__enter__(manager)
    frame.push(Var(exit_method))
    frame.push(Var(entered))


@handles("WITH_EXCEPT_START")
def _with_except_start(frame, ins):
    frame.ctx.side_effect("leaving a with statement on an exception (__exit__)")
    exc = frame.stack[-1].value
    exit_method = frame.stack[-4].value
    frame.push(Var(exit_method(type(exc), exc, exc.__traceback__)))


@handles("LOAD_BUILD_CLASS")
def _load_build_class(frame, ins):
    frame.ctx.side_effect("a class statement")
    frame.push(Var(builtins.__build_class__))


@handles("DELETE_ATTR")
def _delete_attr(frame, ins):
    obj = frame.pop()
    frame.ctx.side_effect(f"del of the attribute {ins.argval!r}")
    delattr(obj.value, ins.argval)


@handles("DELETE_GLOBAL")
def _delete_global(frame, ins):
    frame.ctx.side_effect(f"del of the global {ins.argval!r}")
    del frame.f_globals[ins.argval]


@handles("DELETE_DEREF")
def _delete_deref(frame, ins):
    frame.ctx.delete_cell(frame, ins.argval)


@handles("GET_LEN")
def _get_len(frame, ins):
    frame.push(frame.ctx.call(frame, Var(len), [frame.stack[-1]], {}))


@handles("MATCH_SEQUENCE", "MATCH_MAPPING")
def _match_kind(frame, ins):
    flag = _TPFLAGS_SEQUENCE if ins.opname == "MATCH_SEQUENCE" else _TPFLAGS_MAPPING
    kind = frame.ctx.call(frame, Var(type), [frame.stack[-1]], {})
    frame.push(Var(bool(kind.value.__flags__ & flag)))


_TPFLAGS_SEQUENCE = 1 << 5  # what CPython's MATCH_SEQUENCE and MATCH_MAPPING test on the subject's type
_TPFLAGS_MAPPING = 1 << 6
