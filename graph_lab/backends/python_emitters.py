"""How each node of a graph is written as a line of Python: the context one graph is written in (value names,
the values passed in on the side) and the emitters, by op and by family.

Each node is written by the emitter for its op (``OP_EMITTERS``) or else for its family (``FAMILY_EMITTERS``);
the default calls the op's own implementation, passed in as ``impl_<op>``, so a new op of the table needs no
change here; an implementation that wraps one NumPy call is written as that call (``direct_calls.py``). The same
NumPy calls as ``run``'s, in the same order, so the results agree bit for bit. ``python_source`` puts the lines
together into a function."""

from __future__ import annotations

import keyword
import math
import operator
from typing import Any, Callable

import numpy as np

from ..ir.sizes import bind_attrs, has_symbols, symbol_sources
from ..ir.symbolic import Expr, FloatExpr, substitute, symbol
from ..ops import Op, OpDef, opdef
from ..ops.indexing import At, Slice, Slot
from .direct_calls import direct_emitters
from .reference import impl_attrs


class _Context:
    """What emitters share while one graph is written: value names and the values passed in on the side."""

    def __init__(self, graph, straight_static: bool = False):
        self.numbering = graph.numbering()
        self.input_nodes, self.param_nodes = _source_nodes(graph)
        self.input_index = {id(n): i for i, n in enumerate(self.input_nodes)}
        self.param_index = {id(n): i for i, n in enumerate(self.param_nodes)}
        self.consts: list = []
        self.impls: dict[str, Callable] = {}
        self.sources = {} if straight_static else symbol_sources(graph)
        """Each size symbol's (input name, axis); the source calls the symbol ``s<i>`` in this order."""
        self.size_names = {name: f"s{i}" for i, name in enumerate(self.sources)}

    def numpy_function(self, op) -> str | None:
        return _numpy_function(opdef(op))

    def var(self, v) -> str:
        return f"v{self.numbering[v]}"

    def args(self, node) -> list[str]:
        return [self.var(v) for v in node.inputs]

    def passed_in(self, value) -> str:
        self.consts.append(value)
        return f"consts[{len(self.consts) - 1}]"

    def value(self, value) -> str:
        """A literal for small numbers and tuples of them; anything else passed in through ``consts``."""
        if has_symbols(value):
            return self.symbolic(value)
        text = literal(value)
        return text if text is not None else self.passed_in(value)

    def symbolic(self, value) -> str:
        """Python arithmetic on the sizes for an expression (or a tuple of them and ints); anything else that
        holds sizes is bound at run time by a function passed in: ``consts[3](s0, s1)``."""
        if isinstance(value, (Expr, FloatExpr)):
            return str(self.renamed(value))  # Python arithmetic, whole as an argument or item: no parentheses
        if type(value) is tuple and all(isinstance(v, (int, Expr, FloatExpr)) for v in value):
            parts = [self.symbolic(v) if has_symbols(v) else literal(v) for v in value]
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        names = list(self.sources)
        binder = self.passed_in(lambda *sizes: bind_attrs({"v": value}, dict(zip(names, sizes)))["v"])
        return f"{binder}({', '.join(self.size_names.values())})"

    def renamed(self, x):
        """``x`` with each symbol renamed to its ``s<i>`` (user names never reach the source)."""
        if isinstance(x, FloatExpr):
            return FloatExpr(x.op, tuple(self.renamed(a) for a in x.args))
        return substitute(x, {n: symbol(s) for n, s in self.size_names.items()})

    def kwargs(self, attrs: dict) -> list[str]:
        if all(_is_identifier(k) for k in attrs):
            return [f"{k}={self.value(v)}" for k, v in attrs.items()]
        return ["**" + self.passed_in(dict(attrs))]  # an attribute name that is not a plain identifier

    def impl(self, definition: OpDef) -> str:
        name = f"impl_{definition.op.value}"
        self.impls[name] = definition.impl
        return name


def literal(value) -> str | None:
    """Python source for a bool, None, an int, a finite float or a tuple of them; None for anything else.

    Only exact ``int``/``float`` types: a NumPy scalar or an ``int`` subclass would come back as another type."""
    if value is None or type(value) is bool:
        return repr(value)
    if type(value) is int and abs(value) < 2 ** 63:
        return repr(value)
    if type(value) is float and math.isfinite(value):
        return repr(value)
    if type(value) is tuple:
        parts = [literal(x) for x in value]
        if any(p is None for p in parts):
            return None
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    return None


def _is_identifier(name) -> bool:
    return isinstance(name, str) and name.isascii() and name.isidentifier() and not keyword.iskeyword(name) \
        and "__" not in name


# --- emitters: node -> the expression that computes its outputs

def _emit_impl(node, ctx: _Context) -> str:
    """The default: call the op's implementation, exactly as the reference interpreter does."""
    return f"{ctx.impl(opdef(node.op))}({', '.join(ctx.args(node) + ctx.kwargs(node.attrs))})"


def _numpy_function(definition: OpDef) -> str | None:
    """``np.add`` when the op's implementation *is* that NumPy function (not merely a similar one)."""
    name = definition.numpy_name or ""
    if name.startswith("np.") and getattr(np, name[3:], None) is definition.impl:
        return name
    return None


def _emit_numpy(node, ctx: _Context) -> str:
    name = ctx.numpy_function(node.op)
    if name is None or node.attrs:
        return _emit_impl(node, ctx)
    numbering = ctx.numbering
    return f"{name}({', '.join([f'v{numbering[v]}' for v in node.inputs])})"


SCALAR_OPERATORS: dict[Op, str] = {
    Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.DIV: "/",
    Op.EQ: "==", Op.NE: "!=", Op.LT: "<", Op.LE: "<=", Op.GT: ">", Op.GE: ">=",
}
"""The binary ops whose NumPy scalar math gives what their ufunc gives, for real and bool dtypes (complex
division and ``**`` round their own way; tests/test_scalar_math.py checks every dtype)."""


def scalar_operator(node) -> str | None:
    """The Python operator to write for ``node`` when every operand and the result are scalars of a real or bool
    dtype, else None. Eager NumPy computes ``t + a[i, j]`` on NumPy scalars with that operator, many times cheaper
    than a ufunc call on them, and rounds exactly as the ufunc does for these ops and dtypes."""
    symbol = SCALAR_OPERATORS.get(node.op)
    if symbol is None or node.attrs:
        return None
    out = node.outputs[0].type
    if out.shape != () or out.weak is not None or out.dtype.kind not in "biuf":
        return None
    for v in node.inputs:
        if v.type.shape != () or v.type.dtype.kind not in "biuf":
            return None
    return symbol


def _emit_negative(node, ctx: _Context) -> str:
    """``(-v2)`` on a float scalar, as eager code negates ``-a[i]`` (a sign flip, as ``np.negative``'s; integers
    keep the ufunc, whose overflow at the smallest value is silent where the scalar's warns)."""
    (x,) = node.inputs
    out = node.outputs[0].type
    if node.attrs or out.shape != () or out.weak is not None or out.dtype.kind != "f" or x.type.shape != () or \
            x.type.dtype != out.dtype:
        return _emit_numpy(node, ctx)
    return f"(-{ctx.var(x)})"


def _emit_binary(node, ctx: _Context) -> str:
    symbol = scalar_operator(node)
    if symbol is None:
        return _emit_numpy(node, ctx)
    a, b = ctx.args(node)
    return f"({a} {symbol} {b})"


def _emit_input(node, ctx: _Context) -> str:
    return f"inputs[{ctx.input_index[id(node)]}]"


def _emit_param(node, ctx: _Context) -> str:
    return f"params[{ctx.param_index[id(node)]}]"


def _emit_const(node, ctx: _Context) -> str:
    return ctx.value(node.attrs["value"])


def _emit_size(node, ctx: _Context) -> str:
    return str(ctx.renamed(node.attrs["expr"]))


def _emit_subscript(node, ctx: _Context) -> str:
    """``v0[:, -1, v2]``: the key template with its index-array slots filled by operand names."""
    parts = [_key_part(k, node, ctx) for k in node.attrs["key"]]
    if any(p is None for p in parts) or len(node.attrs) != 1:
        return _emit_impl(node, ctx)
    # (one slice, integer, None or ... is written alone: NumPy reads ``x[1:]`` as ``x[1:,]``, and faster)
    alone = len(parts) == 1 and not isinstance(node.attrs["key"][0], Slot)
    inside = ", ".join(parts) + ("," if len(parts) == 1 and not alone else "") if parts else "()"
    return f"{ctx.var(node.inputs[0])}[{inside}]"


def _key_part(k, node, ctx: _Context) -> str | None:
    if k is Ellipsis:
        return "..."
    if isinstance(k, Slot):
        return ctx.var(node.inputs[k.pos]) if 0 < k.pos < len(node.inputs) else None
    if type(k) is At:  # (a Python int when weak; a NumPy integer or a 0-d array made an int, as fill_key does)
        if not 0 < k.pos < len(node.inputs):
            return None
        v = node.inputs[k.pos]
        return ctx.var(v) if v.type.weak is int else f"{ctx.passed_in(operator.index)}({ctx.var(v)})"
    if isinstance(k, Expr):
        return ctx.symbolic(k)
    if isinstance(k, Slice):
        ends = ["" if x is None else literal(x) if type(x) is int else ctx.symbolic(x) if isinstance(x, Expr)
                else None for x in k]
        if any(e is None for e in ends):
            return None
        return f"{ends[0]}:{ends[1]}" + (f":{ends[2]}" if k.step is not None else "")
    return literal(k) if k is None or type(k) is int else None


def _emit_pow(node, ctx: _Context) -> str:
    """``(v0 ** v1)`` when the user wrote ``**`` (NumPy scalars round it their own way), else ``np.power``."""
    a, b = ctx.args(node)
    return f"({a} ** {b})" if node.attrs.get("operator") else f"np.power({a}, {b})"


def _emit_control(node, ctx: _Context) -> str:
    """The op's implementation, given each region as a function compiled from the region's generated code."""
    from .python_source import compiled_region  # (the region's own generated function: python_source writes it)
    attrs = impl_attrs(node, compiled_region)
    return f"{ctx.impl(opdef(node.op))}({', '.join(ctx.args(node) + ctx.kwargs(attrs))})"


# How each node is written, by op, then by family (two tables: the op "index" and the family "index" differ).
OP_EMITTERS: dict[Op, Callable[[Any, _Context], str]] = {
    Op.INPUT: _emit_input,        # v0 = inputs[0]            (names are mapped to positions outside)
    Op.PARAM: _emit_param,        # v1 = params[0]
    Op.CONST: _emit_const,        # v4 = 0.5                  (or consts[i] for arrays and the like)
    Op.SIZE: _emit_size,          # v9 = s1 // 2              (sizes read from input shapes at the top)
    Op.INDEX: _emit_subscript,    # v5 = v3[:, -1]
    Op.POW: _emit_pow,            # v6 = (v4 ** v5)          (or np.power(v4, v5))
    Op.NEG: _emit_negative,       # v3 = (-v2)                (float scalars; else np.negative(v2))
    **direct_emitters(_emit_impl),  # v7 = v6.reshape((2, 8)), np.mean(v7, axis=(1,), keepdims=True), np.stack
}
FAMILY_EMITTERS: dict[str, Callable[[Any, _Context], str]] = {
    "unary": _emit_numpy,         # v6 = np.tanh(v5)          (impl_<op>(...) when impl is not a NumPy function)
    "binary": _emit_binary,       # v7 = np.add(v5, v6)       (or (v5 + v6) on scalars)
    "linalg": _emit_numpy,        # v8 = np.matmul(v0, v1)
    "control": _emit_control,     # (v9,) = impl_cond(v8, v0, **consts[0])   (regions compiled on their own)
}


def _emitter(node) -> Callable[[Any, _Context], str]:
    return _emitter_of(opdef(node.op))


def _emitter_of(definition: OpDef) -> Callable[[Any, _Context], str]:
    return OP_EMITTERS.get(definition.op) or FAMILY_EMITTERS.get(definition.family) or _emit_impl


def _source_nodes(graph) -> tuple[list, list]:
    """``(graph.input_nodes, graph.param_nodes)`` in one walk over the nodes."""
    inputs, params = [], []
    input_op, param_op = Op.INPUT, Op.PARAM
    for n in graph.nodes:
        op = n.op
        if op == input_op:
            inputs.append(n)
        elif op == param_op:
            params.append(n)
    return inputs, params
