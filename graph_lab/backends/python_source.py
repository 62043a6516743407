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
instruction that raised (``compiler_text.py`` writes that text). ``source`` (``g.code``) is written from the same
lines when it is read.

Each node's line is written by the emitter for its op or its family (``python_emitters.py``); every call is the
very function ``run`` calls, in the same order, so the results agree bit for bit. This module puts the lines
together into one function, checks the text and compiles it.

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
import sys
import types
from typing import Any, Callable

import numpy as np

from ..errors import GraphExecutionError
from ..ir.sizes import checked_sizes, is_symbolic_graph
from ..ir.symbolic import FUNCTIONS
from ..ops import opdef
from .compiler_text import NESTING, _text_to_compile, _VARIABLE
from .lifetimes import dying_names, row_names
from .python_emitters import (_Context, _emit_binary, _emit_input, _emit_numpy, _emit_param, _emitter,
                              _emitter_of, _numpy_function, scalar_operator)
from .python_emitters import _emit_subscript, _source_nodes  # noqa: F401  (codegen and compiled read them here)
from .reference import bind_inputs

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
    returned_names = [ctx.var(v) for v in graph.outputs]
    return_line = f"    return [{', '.join(returned_names)}]"
    if NESTING and custom_code:  # (a constant also read by a kernel, as a number in its C: the text reads it once)
        nest |= _read_by_the_next_line_only(body, rows, set(returned_names))
    if nest and custom_code:  # a line written by the backend may read a value by its name as well (out=v6)
        named = set(_VARIABLE.findall("\n".join(custom_code)))
        nest = {i for i in nest if body[i][0].split(" = ", 1)[0] not in named}
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




def _loaded_module(name, globals=None, locals=None, fromlist=(), level=0):
    """The only builtin of generated code: ``__import__`` of a module already loaded, for the interpreter's own
    use (on Python 3.12 and later a warning raised while generated code runs imports through the builtins of its
    frame). Generated code has no import statement, and nothing can load a module through this."""
    module = sys.modules.get(name if fromlist else name.partition(".")[0])
    if module is None or level != 0:
        raise ImportError(f"generated code imports nothing (asked for {name!r})")
    return module


def namespace(code: "PyCode", extra: dict[str, Callable] | None = None) -> dict[str, Any]:
    """What the compiled ``code`` reads besides its arguments: NumPy, its ``np_<name>`` functions, the size
    functions, the op implementations it calls and ``extra`` (a backend's kernels); no builtins but an
    ``__import__`` of modules already loaded (``_loaded_module``)."""
    names: dict[str, Any] = {"__builtins__": {"__import__": _loaded_module}, "np": np, **FUNCTIONS, **code.impls,
                             **(extra or {})}
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


def _read_by_the_next_line_only(body: list, rows: dict[int, str], returned: set[str]) -> set[int]:
    """The usual rows binding one name that no row but the next (a usual one) names: what the graph's users
    cannot tell when some of them are computed inside a kernel and never read the name."""
    counts: dict[str, int] = {}
    for code, _, _ in body:
        for name in _VARIABLE.findall(code):
            counts[name] = counts.get(name, 0) + 1
    found = set()
    for i in range(len(body) - 1):
        (code, comment, node), (after, after_comment, _) = body[i], body[i + 1]
        name, _, _ = code.partition(" = ")
        read = after.partition(" = ")[2]
        if comment is None and after_comment is None and i not in rows and i + 1 not in rows and \
                _VARIABLE.fullmatch(name) and counts.get(name) == 2 and name in _VARIABLE.findall(read) and \
                name not in returned:
            found.add(i)
    return found


def _safe_comment(text: str) -> str:
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
