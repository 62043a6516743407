"""``g.code`` and ``g.to_python()``: a graph as readable Python/NumPy source, and that source compiled.

Line by line, the generated function defines ``vN``, the value the IR prints as ``%N``, with its type in a
comment::

    def forward(inputs, params, consts):
        v0 = inputs[0]                # f64[4,8]
        v1 = params[0]                # f64[8,16]
        v2 = np.matmul(v0, v1)        # f64[4,16]
        v3 = 0.5                      # float
        v4 = np.multiply(v3, v2)      # f64[4,16]
        return [v4]

A control-flow node (``cond``, ``while_loop``, ...) is a call of its op's implementation with each region passed in
as a function compiled the same way from the region's own generated code: ``(v5,) = impl_cond(v4, v0, **consts[2])``.

What is compiled is that code written for Python's compiler, whose time grows with the lines and the names it
reads (``PyCode.text``; about half of a compile for a long graph): without the comments, the inputs and the
parameters each bound by one line, a value that only the next line reads nested in it, and NumPy functions called
by names bound once::

    def forward(inputs, params, consts):
        v0, = inputs
        v1, = params
        v2 = np_matmul(v0, v1)
        v4 = np_multiply(0.5, v2)
        return [v4]

The same calls in the same order; a failure inside a nested call is told by node from the columns of the
instruction that raised. ``source`` (``g.code``) is written from the same lines when it is read.

Each node is written by the emitter for its op (``OP_EMITTERS``) or else for its family (``FAMILY_EMITTERS``);
the default calls the op's own implementation, passed in as ``impl_<op>``, so a new op of the table needs no
change here; an implementation that wraps one NumPy call is written as that call (``direct_calls.py``). The same
NumPy calls as ``run``'s, in the same order, so the results agree bit for bit.

Security: the source embeds no text taken from the user. Input and parameter names, string attributes and file
names are user data (and, through the parser, file data), so the function reads inputs and parameters by
position, and every value that is not a small number (arrays, strings, dtypes, attribute dicts) is passed in
through the ``consts`` tuple. The wrapper maps names to positions outside the source, and ``_check_source``
refuses any source with a quote, a backslash or a double underscore, as a last line of defence.

A graph with symbolic sizes reads each size from an input's shape at the top (``s0 = inputs[0].shape[0]``,
the symbol's name only in a comment) and writes symbolic attributes and ``size`` nodes as Python arithmetic on
those (``np.reshape(v4, (s0, 2, s1 // 2))`` is ``(s0, 2, s1//2)``); the wrapper checks the shape guards first.
"""

from __future__ import annotations

import itertools
import keyword
import math
import re
import types
from typing import Any, Callable

import numpy as np

from ..errors import GraphExecutionError
from ..ir.sizes import bind_attrs, checked_sizes, has_symbols, is_symbolic_graph, symbol_sources
from ..ir.symbolic import FUNCTIONS, Expr, FloatExpr, substitute, symbol
from ..ops import Op, OpDef, opdef
from ..ops.indexing import Slice, Slot
from .direct_calls import direct_emitters
from .reference import bind_inputs, impl_attrs
from .lifetimes import dying_names, row_names

FILENAME = "<graph_lab generated>"
COMMENT_COLUMN = 44  # where the type comments start, so they line up
_SAFE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ ()[],.:=+-*/%<>!#\n")
_COMMENT_CHARS = _SAFE_CHARS - {"\n"}


class PyCode:
    """Generated source and what it needs to run."""

    def __init__(self, text: str, consts: tuple, impls: dict[str, Callable], input_names: list[str],
                 param_names: list[str], body: list[tuple[str, str | None, Any]], return_line: str,
                 source: str | None, line_nodes: dict[int, Any], line_spans: dict[int, list[tuple[int, int, Any]]],
                 numpy_calls: frozenset[str]):
        self.text = text
        """What is compiled: ``source``'s code, written for Python's compiler (see ``_text_to_compile``)."""
        self.line_nodes = line_nodes
        """Which node each line of ``text`` computes (for error messages); the outermost, for a line with nested
        calls."""
        self.line_spans = line_spans
        """For each line of ``text`` with nested calls, ``(first column, end column, node)`` of each node's
        expression in it."""
        self.numpy_calls = numpy_calls
        """The NumPy functions ``text`` calls (or reads), each by the name ``np_<name>`` (see ``namespace``)."""
        self.consts = consts
        """Values the source reads as ``consts[i]`` instead of spelling them out."""
        self.impls = impls
        """The op implementations the source calls, by their names in it (``impl_gelu``)."""
        self.input_names = input_names
        """Graph input names in the order of ``inputs``."""
        self.param_names = param_names
        """Parameter names in the order of ``params``."""
        self._body = body  # (code, comment or None for the node's types, node or None) per line after the def
        self._return_line = return_line
        self._source = source

    @property
    def source(self) -> str:
        """The text of ``def forward(inputs, params, consts): ...``, each line with its comment (the types it
        defines, or what the backend did to it). Written when first asked for: compiling needs only ``text``,
        and the comments of a long graph cost as much to write as its code."""
        if self._source is None:
            self._source = _with_comments(self._body, self._return_line)
        return self._source

    def node_at(self, line: int | None, columns: tuple[int, int] | None) -> Any:
        """The node whose code is at ``line`` of ``text`` and, on a line with nested calls, ``columns`` (those of
        the instruction that raised): the innermost node whose expression holds them. None if unknown."""
        spans = self.line_spans.get(line)
        if spans is None:
            return self.line_nodes.get(line)
        if columns is None:
            return None
        start, end = columns
        inside = [(last - first, node) for first, last, node in spans if first <= start and end <= last]
        return min(inside, key=lambda pair: pair[0])[1] if inside else None


def failing_node(tb: types.TracebackType | None, codes: dict) -> Any:
    """The node a failure happened in: from the innermost frame of the traceback ``tb`` that runs generated code
    in ``codes`` (a function's code object -> its ``PyCode``), its line and the columns of the instruction that
    raised. None when no such frame is found."""
    found = None
    while tb is not None:
        code = codes.get(tb.tb_frame.f_code)
        if code is not None:
            found = (code, tb)
        tb = tb.tb_next
    if found is None:
        return None
    code, tb = found
    # (one position per 2-byte unit of bytecode; tb_lasti is the offset of the instruction that raised)
    position = next(itertools.islice(tb.tb_frame.f_code.co_positions(), tb.tb_lasti // 2, None), None)
    columns = (position[2], position[3]) if position is not None and position[2] is not None else None
    return code.node_at(tb.tb_lineno, columns)


class _Context:
    """What emitters share while one graph is written: value names and the values passed in on the side."""

    def __init__(self, graph, straight_static: bool = False):
        # (graph.numbering() numbers the values of a node's regions after its outputs; with no region anywhere it
        # is each value's position in definition order, made here in one comprehension)
        self.numbering = graph.numbering() if not straight_static and graph.has_regions() else \
            {v: i for i, v in enumerate([v for n in graph.nodes for v in n.outputs])}
        self.input_nodes, self.param_nodes = _source_nodes(graph)
        self.input_index = {id(n): i for i, n in enumerate(self.input_nodes)}
        self.param_index = {id(n): i for i, n in enumerate(self.param_nodes)}
        self.consts: list = []
        self.impls: dict[str, Callable] = {}
        self.sources = {} if straight_static else symbol_sources(graph)
        """Each size symbol's (input name, axis); the source calls the symbol ``s<i>`` in this order."""
        self.size_names = {name: f"s{i}" for i, name in enumerate(self.sources)}
        self._numpy_names: dict = {}

    def numpy_function(self, op) -> str | None:
        """``_numpy_function`` of the op, asked once per op while this graph is written."""
        name = self._numpy_names.get(op, False)  # (not try/except: each op misses once per graph)
        if name is False:
            name = self._numpy_names[op] = _numpy_function(opdef(op))
        return name

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
division and ``**`` round their own way; tests/backends/test_scalar_math.py checks every dtype)."""


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


# --- the whole function

Statement = Callable[[Any, _Context], "tuple[str, str] | None"]


def generate(graph, statement: Statement | None = None, *, straight_static: bool = False) -> PyCode:
    """The source of ``forward(inputs, params, consts)`` computing ``graph``'s outputs as a list.

    ``statement(node, ctx)``, when given, may write a node differently: it returns ``(code, comment)`` for the
    node's line (``("", "")`` leaves the node out), or None for the usual line. The code backends use it to
    add ``out=`` buffers and calls of fused kernels; everything else is written here, once.

    One walk over the nodes writes the code of each line; the type comments are written only when ``source`` is
    read (see ``PyCode``). The emitter of each op is looked up once per call (not per node): the tables may be
    edited between calls, never during one.

    ``straight_static``: the caller has checked that ``graph`` has no control-flow region and no symbolic size
    (``has_regions``, ``is_symbolic_graph``), so that they are not asked again."""
    ctx = _Context(graph, straight_static)
    numbering = ctx.numbering
    per_op: dict[Any, tuple[Callable, bool]] = {}  # op -> (emitter, multi_output)
    body: list[tuple[str, str | None, Any]] = [
        (f"{ctx.size_names[name]} = inputs[{graph.input_names.index(source[0])}].shape[{source[1]}]",
         _safe_comment(name), None) for name, source in ctx.sources.items()]
    rows: dict[int, str] = {}  # the rows of body that read an input or a parameter: inputs[i], params[i]
    # the rows whose value only the next row reads (once): written inside it in the text (see _text_to_compile)
    nest: set[int] = set()
    returned = {id(v) for v in graph.outputs} if NESTING else None
    custom_code: list[str] = []  # the code of the lines the statement hook wrote
    lives: list[tuple] = [((), (), False)] * len(body)  # per row of body: see lifetimes.row_names
    unpacked = {"inputs": ["_"] * len(ctx.input_index), "params": ["_"] * len(ctx.param_index)}  # their names
    for node in graph.nodes:
        if statement is not None:
            custom = statement(node, ctx)
            if custom is not None:
                if custom[0]:
                    body.append((custom[0], _safe_comment(custom[1]), node))
                    lives.append(row_names(node, custom[0], numbering, True))
                    custom_code.append(custom[0])
                continue
        op = node.op
        known = per_op.get(op)
        if known is None:
            definition = opdef(op)
            known = per_op[op] = (_emitter_of(definition), definition.multi_output)
        emit, multi_output = known
        outputs = node.outputs
        if len(outputs) == 1:
            lhs = f"(v{numbering[outputs[0]]},)" if multi_output else f"v{numbering[outputs[0]]}"
        else:
            lhs = ", ".join([f"v{numbering[v]}" for v in outputs])
        if (emit is _emit_input or emit is _emit_param) and not multi_output:
            tuple_name, index = (("inputs", ctx.input_index) if emit is _emit_input else ("params", ctx.param_index))
            rows[len(body)] = tuple_name
            unpacked[tuple_name][index[id(node)]] = lhs
            lives.append(((), (), False))
        elif NESTING and body and body[-1][1] is None and len(body) - 1 not in rows:  # the row before: a usual one
            before = body[-1][2].outputs
            if len(before) == 1 and len(before[0].users) == 1 and before[0].users[0] is node and \
                    id(before[0]) not in returned and body[-1][0].startswith("v"):
                nest.add(len(body) - 1)
        body.append((f"{lhs} = {emit(node, ctx)}", None, node))
        if len(lives) < len(body):
            lives.append(row_names(node, "", numbering, False))
    if nest and custom_code:  # a line written by the backend may read a value by its name as well (out=v6)
        named = set(_VARIABLE.findall("\n".join(custom_code)))
        nest = {i for i in nest if body[i][0].split(" = ", 1)[0] not in named}
    returned_names = [ctx.var(v) for v in graph.outputs]
    return_line = f"    return [{', '.join(returned_names)}]"
    dying = dying_names(lives, set(returned_names))
    text, line_nodes, line_spans, numpy_calls = _text_to_compile(body, return_line, rows, unpacked, nest, dying)
    # (the source holds what the text holds plus the comments: the comments given now are checked with it; the
    # type comments written later hold only dtype names, digits, commas and brackets, except for symbolic
    # sizes, whose names come from the user: then the whole source is written and checked now, as it runs)
    source = _with_comments(body, return_line) if ctx.sources else None
    _check_source(text)
    # (with no size symbol, the comments given now are those of the lines the statement hook wrote: none when it
    # wrote none)
    _check_source(source if source is not None else
                  "\n".join([comment for _, comment, _ in body if comment is not None]) if custom_code else "")
    return PyCode(text, tuple(ctx.consts), ctx.impls, [n.attrs["name"] for n in ctx.input_nodes],
                  [n.attrs["name"] for n in ctx.param_nodes], body, return_line, source, line_nodes, line_spans,
                  numpy_calls)


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


_NUMPY_NAME = re.compile(r"np\.(\w+)")
_VARIABLE = re.compile(r"\bv\d+\b")


def _text_to_compile(body: list[tuple[str, str | None, Any]], return_line: str, rows: dict[int, str],
                     unpacked: dict[str, list[str]], nest: set[int], dying: dict[int, list[str]] | None = None
                     ) -> tuple[str, dict[int, Any], dict[int, list[tuple[int, int, Any]]], frozenset[str]]:
    """The code of ``body`` written for Python's compiler, whose time grows with the lines and the names read:

    - the lines that read an input or a parameter (``rows``: the row of ``body`` -> ``"inputs"`` or
      ``"params"``) become one line each for the inputs and the parameters, where the first of them was:
      ``v0, v1, v5 = inputs`` (each tuple holds one value per input or parameter, in order; ``unpacked`` names
      them, ``_`` for one whose line is written otherwise);
    - a value that only the next line reads (the rows ``nest``) is written inside it, in place of its name:
      ``v4 = np.add(v0, np.tanh(np.matmul(v0, v1)))`` for three lines. The calls run in the same order (the
      nested call is the only call among the arguments of the line it is nested in: the others are names,
      numbers and ``consts[i]``), and a failure is still told by node, from the columns of the instruction
      that raised (``PyCode.node_at``);
    - each NumPy function is read by a name bound once outside the function: ``np_matmul(v0, v1)`` for
      ``np.matmul(v0, v1)``, the same function;
    - after the line that reads an array last, ``del`` drops its name (``dying``: row -> names; see
      ``lifetimes``), so that its memory is freed when eager code would free it.

    Returns the text, the node of each of its lines, the nodes of the lines with nested calls (``(first column,
    end column, node)``, for each node written in the line) and the NumPy names read."""
    lines = ["def forward(inputs, params, consts):"]
    line_nodes: dict[int, Any] = {}
    line_spans: dict[int, list[tuple[int, int, Any]]] = {}
    where: dict[str, int] = {}  # "inputs"/"params" -> the line that unpacks it

    def add(lhs: str, rhs: str, spans: list[tuple[int, int, Any]]) -> None:
        lines.append(f"    {lhs} = {rhs}")
        assigned.update(_VARIABLE.findall(lhs))
        line_nodes[len(lines)] = spans[-1][2]  # (line numbers count from 1)
        if len(spans) > 1:
            at = 4 + len(lhs) + 3
            line_spans[len(lines)] = [(first + at, last + at, node) for first, last, node in spans]

    carry = None  # (name, expression, spans) of the row to write inside this one
    dying = dying or {}
    assigned: set[str] = set()  # the names the lines so far bind (a name written inside another line is none)
    pending: list[str] = []  # names to drop after the next line written

    def drop() -> None:
        names = sorted([name for name in pending if name in assigned], key=lambda name: int(name[1:]))
        pending.clear()
        if names:
            lines.append(f"    del {', '.join(names)}")
            assigned.difference_update(names)

    for i, (code, _, node) in enumerate(body):
        pending += dying.get(i, ())
        tuple_name = rows.get(i)
        if tuple_name is not None:
            if tuple_name not in where:
                where[tuple_name] = len(lines)
                lines.append("")
            continue
        if carry is None and i not in nest:
            lines.append("    " + code)
            line_nodes[len(lines)] = node
            assigned.update(_VARIABLE.findall(code.partition(" = ")[0]))
            drop()
            continue
        lhs, rhs = code.split(" = ", 1)
        spans = []
        if carry is not None:
            name, inner, inner_spans = carry
            carry = None
            # (nested only where the line calls nothing else among its arguments but the nested call: a symbolic
            # attribute is bound by a call, consts[3](s0, s1), that must not run before it)
            at = _read_once(rhs, name) if "](" not in rhs else -1
            if at < 0:  # (not read once by its name after all: written on a line of its own)
                add(name, inner, inner_spans)
            else:
                rhs = rhs[:at] + inner + rhs[at + len(name):]
                spans = [(first + at, last + at, n) for first, last, n in inner_spans]
        spans.append((0, len(rhs), node))
        if i in nest and len(spans) < NESTED_CALLS:
            carry = (lhs, rhs, spans)
        else:
            add(lhs, rhs, spans)
            drop()
    if carry is not None:
        add(*carry)
    for tuple_name, line in where.items():
        names = unpacked[tuple_name]
        lines[line] = f"    {', '.join(names)}{',' if len(names) == 1 else ''} = {tuple_name}"
    lines.append(return_line)
    text = "\n".join(lines) + "\n"
    # ("np." is in generated code only as the NumPy module: every other name there is vN, sN, inputs, params,
    # consts, impl_<op>, kernelN or an attribute's keyword, none of them followed by a dot; "np_" has its length,
    # so the columns stand)
    return text.replace("np.", "np_"), line_nodes, line_spans, frozenset(_NUMPY_NAME.findall(text))


def _read_once(code: str, name: str) -> int:
    """Where ``code`` reads the variable ``name``, if it reads it exactly once; else -1."""
    found, start = -1, 0
    while True:
        at = code.find(name, start)
        if at < 0:
            return found
        end = at + len(name)
        if (at == 0 or not (code[at - 1].isalnum() or code[at - 1] == "_")) and \
                (end == len(code) or not (code[end].isalnum() or code[end] == "_")):
            if found >= 0:
                return -1
            found = at
        start = end


def _columns_in_tracebacks() -> bool:
    """Python records the columns of each instruction (not under ``-X no_debug_ranges``): a failure inside a
    nested call can then be told from one around it."""
    code = compile("f(g(x))", "<check>", "eval")
    return all(position[2] is not None for position in code.co_positions())


NESTING = _columns_in_tracebacks()
"""Whether the text may nest a call inside the next line (see ``_text_to_compile``)."""
NESTED_CALLS = 8
"""At most this many calls in one line of the text: Python's parser refuses an expression nested 200 deep."""


def namespace(code: "PyCode", extra: dict[str, Callable] | None = None) -> dict[str, Any]:
    """What the compiled ``code`` reads besides its arguments: NumPy, its ``np_<name>`` functions, the size
    functions, the op implementations it calls and ``extra`` (a backend's kernels); no builtins."""
    names: dict[str, Any] = {"__builtins__": {}, "np": np, **FUNCTIONS, **code.impls, **(extra or {})}
    for name in code.numpy_calls:
        names["np_" + name] = getattr(np, name)
    return names


def _with_comments(body: list[tuple[str, str | None, Any]], return_line: str) -> str:
    """The viewable source: each line of ``body`` with its comment (the node's output types when None), the
    comments lined up at the column after the longest code shorter than ``COMMENT_COLUMN``."""
    width = max([len(code) for code, _, _ in body if len(code) < COMMENT_COLUMN] + [0])
    lines = ["def forward(inputs, params, consts):"]
    for code, comment, node in body:
        if comment is None:
            comment = ", ".join(_safe_comment(str(v.type)) for v in node.outputs)
        lines.append(f"    {code.ljust(width)}  # {comment}")
    lines.append(return_line)
    return "\n".join(lines) + "\n"


def _safe_comment(text: str) -> str:
    if _COMMENT_CHARS.issuperset(text):  # the usual case (a type, f64[4,8]), checked without a Python loop
        return text
    return "".join(ch if ch in _COMMENT_CHARS else "_" for ch in text)


def _check_source(source: str) -> None:
    bad = sorted(set(source) - _SAFE_CHARS)
    if bad or "__" in source:
        raise RuntimeError(f"generated code would contain {bad or '__'}; refusing to compile it (this is a bug "
                           f"in graph_lab's code generator: user text must never reach the source)")


def to_python(graph) -> Callable[..., list[np.ndarray]]:
    """Compile ``generate(graph)``; the result is called like ``run`` but with keyword arguments: ``f(x=x)``.

    Parameters may be passed too, by name, to replace their stored values for this call. Compile again after
    editing the graph."""
    code = generate(graph)
    symbolic = is_symbolic_graph(graph)
    forward = _compile(code)
    codes = {forward.__code__: code}

    def compiled(**named) -> list[np.ndarray]:
        bound = bind_inputs(graph, named)
        if symbolic:
            checked_sizes(graph, bound)
        inputs = tuple(bound[name] for name in code.input_names)
        params = tuple(bound[name] if name in bound else graph.param_values[name] for name in code.param_names)
        try:
            outputs = forward(inputs, params, code.consts)
        except Exception as e:
            node = failing_node(e.__traceback__, codes)
            if node is None:
                raise
            raise GraphExecutionError(f"while executing {graph.node_text(node)}: {type(e).__name__}: {e}",
                                      node) from e
        return [np.asarray(v) for v in outputs]

    compiled.__name__ = compiled.__qualname__ = "forward"
    compiled.code = code
    return compiled


def _compile(code: PyCode) -> Callable:
    names = namespace(code)
    exec(compile(code.text, FILENAME, "exec"), names)
    return names["forward"]


def compiled_region(region) -> Callable[..., list]:
    """A region graph as a function of its inputs (in order) returning its outputs, from its generated code."""
    code = generate(region)
    forward = _compile(code)
    return lambda *values: forward(values, (), code.consts)


def expression(node, ctx: _Context) -> str:
    """The right-hand side ``generate`` writes for ``node`` (``np.add(v1, v2)``, ``impl_gelu(v3)``...)."""
    return _emitter(node)(node, ctx)


def numpy_ufunc(node) -> "np.ufunc | None":
    """The NumPy ufunc a node's line calls directly (so it takes ``out=``), or None."""
    definition = opdef(node.op)
    if _emitter(node) not in (_emit_numpy, _emit_binary) or scalar_operator(node) is not None or node.attrs \
            or _numpy_function(definition) is None:
        return None
    return definition.impl if isinstance(definition.impl, np.ufunc) else None
