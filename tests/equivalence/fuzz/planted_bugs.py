"""Deliberately wrong op implementations, rewrite rules, guards and emitters, planted only while a test runs.

Each ``Bug`` monkeypatches one thing inside graph_lab (and puts it back), and names the oracle that must catch
it. Op bugs are planted only in ops whose eager NumPy spelling does not go through graph_lab's op table
(``a - b``, ``np.sum``, ``x.astype``...), so eager code stays right while every graph goes wrong. (A bug in a
composite such as ``F.softmax`` would change eager ``F.softmax`` too; the OpInfo table, which checks every op
against plain NumPy formulas, is the oracle for those.)
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from graph_lab.backends import python_emitters
from graph_lab.frontends import lazy
from graph_lab.frontends.dynamo.capture import CaptureContext
from graph_lab import guards
from graph_lab.ops import REGISTRY, Op
from graph_lab.passes import simplify_rules
from graph_lab.passes.simplify_rules import Rule, first, is_const, second


@contextlib.contextmanager
def patched(owner, name: str, value) -> Iterator[None]:
    """``owner.name = value`` (or ``owner[name]`` for a dict or list) for the duration of the block."""
    indexed = isinstance(owner, (dict, list))
    old = owner[name] if indexed else getattr(owner, name)
    if indexed:
        owner[name] = value
    else:
        setattr(owner, name, value)
    try:
        yield
    finally:
        if indexed:
            owner[name] = old
        else:
            setattr(owner, name, old)


def op_impl(op: Op, impl: Callable):
    return lambda: patched(REGISTRY, op, dataclasses.replace(REGISTRY[op], impl=impl))


def rule(name: str, rewrite: Callable):
    index = next(i for i, r in enumerate(simplify_rules.RULES) if r.name == name)
    return lambda: patched(simplify_rules.RULES, index, Rule(simplify_rules.RULES[index].op, name, rewrite))


@dataclass(frozen=True)
class Bug:
    name: str
    plant: Callable[[], contextlib.AbstractContextManager]
    oracle: str
    """'differential' (random programs through every way) or 'guards' (F5's schedules)."""
    focus: tuple[str, ...] = ()
    """Ops the programs should call often to reach the bug (the generator's ``Options.focus``)."""


# --- wrong op implementations

def _argmax_last_on_ties(x, axis, keepdims):
    n = x.size if axis is None else x.shape[axis]
    flipped = np.ravel(x)[::-1] if axis is None else np.flip(x, axis)
    index = (n - 1) - np.argmax(flipped, axis=axis, keepdims=keepdims and axis is not None)
    return np.reshape(index, (1,) * x.ndim) if axis is None and keepdims else index


def _mean_over_n_minus_1(x, axis, keepdims, **kw):
    right = np.mean(x, axis=axis, keepdims=keepdims)
    n = np.size(x) // max(np.size(right), 1)
    return (right * n / max(n - 1, 1)).astype(right.dtype)


def _floordiv_truncates(x, y):
    return np.trunc(np.true_divide(x, y)).astype(np.floor_divide(x, y).dtype)


def _exp_in_float32(x):
    return np.exp(np.asarray(x, np.float32)).astype(np.exp(x).dtype)


def _matmul_in_float32(a, b):
    return np.matmul(np.asarray(a, np.float32), np.asarray(b, np.float32)).astype(np.matmul(a, b).dtype)


def _cast_rounds(x, dtype):
    x = np.asarray(x)
    if x.dtype.kind == "f" and np.dtype(dtype).kind in "iu":
        x = np.rint(x)
    return x.astype(dtype)


def _clip_forgets_min(x, *bounds, has_min, has_max):
    return np.clip(x, None, bounds[-1]) if has_max else np.asarray(x).copy()


# --- wrong rewrite rules (each passes simplify's type check)

def _const_value(v):
    return np.asarray(v.node.attrs["value"]) if v.node.op == Op.CONST else None


def _minus_any_constant(n, g):  # forgot to check that the constant is 0.0
    return first(n) if second(n).node.op == Op.CONST else None


def _times_minus_one(n, g):  # |c| == 1 instead of c == 1
    c = _const_value(second(n))
    return first(n) if c is not None and c.dtype.kind in "iuf" and c.size and np.all(np.abs(c) == 1) else None


def _drops_one_negation(n, g):  # -(f(x)) -> x: looked at the wrong node
    inner = first(n).node
    return inner.inputs[0] if inner.inputs and inner.op != Op.CONST else None


def _plus_any_zero(n, g):  # x + 0.0 -> x: but -0.0 + 0.0 is +0.0, so only x + (-0.0) is an identity
    return first(n) if is_const(second(n), 0) else None


# --- wrong capture, guards and code generation

def _guard_skips_numbers(original):
    def guard(self, var):
        if isinstance(var.value, (int, float)) and not isinstance(var.value, bool):
            return  # "numbers never change": the classic stale-constant bug
        return original(self, var)
    return guard


def _emit_swapped(node, ctx):
    text = python_emitters._emit_numpy(node, ctx)
    if len(node.inputs) == 2 and not node.attrs and text.count(", ") == 1 and text.startswith("np."):
        name, args = text.split("(", 1)
        a, b = args[:-1].split(", ")
        return f"{name}({b}, {a})"
    return text


BUGS = [  # name, how it is planted, oracle, ops the programs should call often
    Bug("sub computes y - x", op_impl(Op.SUB, lambda x, y: np.subtract(y, x)), "differential", ("sub",)),
    Bug("sum drops keepdims", op_impl(Op.SUM, lambda x, axis, keepdims, **kw: np.sum(x, axis=axis)),
        "differential", ("sum",)),
    Bug("mean divides by n - 1", op_impl(Op.MEAN, _mean_over_n_minus_1), "differential", ("mean",)),
    Bug("argmax takes the last of ties", op_impl(Op.ARGMAX, _argmax_last_on_ties), "differential", ("argmax",)),
    Bug("floordiv truncates toward zero", op_impl(Op.FLOORDIV, _floordiv_truncates), "differential",
        ("floordiv",)),
    Bug("transpose ignores perm", op_impl(Op.TRANSPOSE, lambda x, perm: np.transpose(x)), "differential",
        ("transpose",)),
    Bug("exp computed in float32", op_impl(Op.EXP, _exp_in_float32), "differential", ("exp",)),
    Bug("matmul accumulates in float32", op_impl(Op.MATMUL, _matmul_in_float32), "differential", ("matmul",)),
    Bug("cast to int rounds", op_impl(Op.CAST, _cast_rounds), "differential", ("cast",)),
    Bug("clip forgets a_min", op_impl(Op.CLIP, _clip_forgets_min), "differential", ("clip",)),
    Bug("pad ignores constant_values", op_impl(Op.PAD, lambda x, pad_width, value: np.pad(x, pad_width or 0)),
        "differential", ("pad",)),
    Bug("rule x - c -> x for any constant", rule("x - 0.0 -> x", _minus_any_constant), "differential",
        ("sub",)),
    Bug("rule x * c -> x for |c| == 1", rule("x * 1 -> x", _times_minus_one), "differential", ("mul",)),
    Bug("rule -(f(x)) -> x", rule("-(-x) -> x", _drops_one_negation), "differential", ("neg",)),
    Bug("rule x + 0.0 -> x (the sign of zero)", rule("x + (-0.0) -> x", _plus_any_zero), "differential",
        ("add", "neg", "mul", "ceil")),
    Bug("compile: no guard on Python numbers",
        lambda: patched(CaptureContext, "guard", _guard_skips_numbers(CaptureContext.guard)), "guards"),
    Bug("lazy: cache key ignores attribute values", lambda: patched(lazy, "_attrs_key", lambda attrs: tuple(attrs)),
        "guards"),
    Bug("trace: value guards always hold", lambda: patched(guards, "same_outcome", lambda a, b: True), "guards"),
    Bug("to_python: binary operands swapped", lambda: patched(python_emitters.FAMILY_EMITTERS, "binary", _emit_swapped),
        "differential"),
]
