"""Handlers of the less common statements: exceptions, star unpacking, sets, imports, ``with``, ``del``, class
bodies and ``match``. The same on CPython 3.11, 3.12 and 3.13 (registered in the opcode table, ``opcodes.py``).
"""

from __future__ import annotations

import builtins
import types

from .frame import Var
from .internal_errors import raises_for_the_program
from .opcodes import handles


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


# --- star unpacking, sets, imports, with, del, class bodies, match

@handles("UNPACK_EX")
@raises_for_the_program
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
