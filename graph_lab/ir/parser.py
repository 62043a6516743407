"""Read printed IR back into a graph: ``parse(str(g))`` rebuilds ``g``, and printing it again gives the same text.

The grammar is written down in docs/ir.md; this is a recursive-descent parser with one method per rule, over the
on-demand tokenizer of ``lexer.py``. Values (types, attributes, constants) are read by ``ValueParser`` in
``parse_values.py``, guards by ``GuardParser`` in ``parse_guards.py``; this module reads the lines: graphs and
nodes.

Nothing in the text is evaluated, imported or unpickled: op names are looked up in the op table
(``ops.REGISTRY``) only, dtype names in the IR's dtype table, and every other word is a keyword of the grammar.
Every node is checked as it is read (its op's type rule must give exactly the printed types) and the finished
graph must pass ``verify()``. Hostile text is held by the limits below: breaking one is a ``GraphParseError`` like
any other mistake, never a crash, a hang or a memory blow-up.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from ..errors import GraphParseError, OpError, VerifyError
from ..ops import REGISTRY, Op, opdef
from .graph import Graph, Node, Value
from .lexer import Token
from .parse_guards import GuardParser
from .parse_values import MAX_DEPTH, ValueParser
from .shape_env import facts_from, using
from .sizes import has_symbols
from .source import ParsedLoc
from .types import TensorType

MAX_TEXT_CHARS = 10 * 2**20
"""Longest text accepted (10 Mi characters)."""
MAX_NODES = 100_000
"""Most nodes in one text, the guards' graphs included (parsing reads about 30 000 node lines a second)."""
MAX_INDEX_ELEMENTS = 10**7
"""Most index-array elements that the type rules of ``index``/``index_update`` nodes may check, summed over the
text: that rule asks NumPy, which visits every element (about 10 ns each), so this keeps a text's checks short."""

_OP_NAMES = frozenset(op.value for op in REGISTRY)


def parse(text: str, params: Mapping[str, np.ndarray] | None = None, *,
          allow_missing_params: bool = False) -> Graph:
    """The graph that ``text`` (as ``str(graph)`` prints it) describes, checked node by node and verified.

    The parser is the printer's inverse: ``str(parse(str(g), g.param_values)) == str(g)``. Its grammar is in
    docs/ir.md; it is bounded against hostile input and never evaluates anything.

    Parameters:
        text: the IR text.
        params: param name -> array. The text holds the types of ``param`` nodes but not their values; each
            array must have exactly the printed dtype and shape.
        allow_missing_params: accept a text whose params are not all given; the graph then lacks those entries
            of ``graph.param_values`` and must get them before it runs (``graph.param_values.update(...)``):
            nothing runs on made-up values.

    Returns:
        The parsed, verified ``Graph``.

    Raises:
        GraphParseError: anything wrong, with ``line``, ``column``, ``found`` and ``expected``.
    """
    if not isinstance(text, str):
        raise GraphParseError(f"line 1, column 1: expected the IR text as a str, found {type(text).__name__}",
                              line=1, column=1, found=type(text).__name__, expected="the IR text as a str")
    if len(text) > MAX_TEXT_CHARS:
        found = f"{len(text)} characters"
        raise GraphParseError(f"line 1, column 1: expected a text of at most {MAX_TEXT_CHARS} characters, found "
                              f"{found}", line=1, column=1, found=found,
                              expected=f"a text of at most {MAX_TEXT_CHARS} characters")
    parser = _GraphParser(text)
    try:
        graph = parser.file()
    except GraphParseError:
        raise
    except (TypeError, ValueError, OpError) as e:
        # A malformed text reached a check written for well-formed values (a size where a dtype belongs, found
        # by F7's mutated texts): it is still this text's fault, reported where the parser had got to.
        tok = parser.lex.peek()
        detail = f"{type(e).__name__}: {e}"
        raise GraphParseError(f"line {tok.line}, column {tok.column}: expected a well-formed text, found "
                              f"{detail[:300]}", line=tok.line, column=tok.column, found=detail[:300],
                              expected="a well-formed text") from None
    parser.attach_params(params, allow_missing_params)
    parser.verify()
    return graph


class _Scope:
    """What one graph's lines have defined so far: values by printed number, input and param names."""

    def __init__(self, graph: Graph, numbers: set[int], region: str | None, depth: int, deferred: list[tuple]):
        self.graph = graph
        self.depth = depth
        """How deeply this graph is nested in regions and guards."""
        self.values: dict[int, Value] = {}
        self.names: set[str] = set()
        self.numbers = numbers
        """Every value number defined so far in this graph and the graphs around and beside it (regions
        continue their parent's numbering, so each %N is defined once in the whole printed graph)."""
        self.region = region
        """The region's name when this graph is a region of a control-flow node, else None."""
        self.deferred = deferred
        """Type checks of nodes with symbolic sizes: they need the graph's shape guards, read after its body (a
        region's checks wait for the guards of the graph it is in)."""


class _GraphParser(GuardParser, ValueParser):
    def __init__(self, text: str):
        super().__init__(text)
        self.node_count = 0
        self.index_budget = MAX_INDEX_ELEMENTS
        self.params: list[tuple[Graph, Node, Token]] = []
        """Every param node read, with its op token (for error positions)."""
        self.graphs: list[tuple[Graph, Token]] = []
        """Every graph read (the main one first), with its ``graph`` token; regions are checked with their
        graph."""

    # --- file and graph

    def file(self) -> Graph:
        graph = self.graph(depth=0)
        self.skip_blank_lines()
        tok = self.lex.next()
        if tok.kind != "eof":
            raise self.error(tok, "end of input after the graph and its guards")
        return graph

    def graph(self, depth: int, region: str | None = None, numbers: set[int] | None = None,
              deferred: list[tuple] | None = None) -> Graph:
        """``graph NAME {`` node lines, ``return ...``, ``}``, then the guards written at the same indentation.
        A region (``region`` names it) is the same block without guards, its name the region's."""
        self.skip_blank_lines()
        start = self.expect("graph", "'graph NAME {'" if region is None else f"'graph {region} {{' (the {region} "
                                                                               f"region of the node above)")
        if depth > MAX_DEPTH:
            raise self.error(start, f"at most {MAX_DEPTH} levels of regions within regions")
        name_tok = self.lex.next()
        if name_tok.kind == "string":
            name = self.lex.decode_string(name_tok)
        elif name_tok.kind == "ident":
            name = name_tok.text
        else:
            raise self.error(name_tok, "the graph's name (a word or a quoted string)")
        if region is not None and name != region:
            raise self.error(name_tok, f"the region name {region} (the op's regions come in a fixed order)")
        self.expect("{", "'{' after the graph's name")
        self.end_line()
        scope = _Scope(Graph(name), set() if numbers is None else numbers, region, depth,
                       [] if deferred is None else deferred)
        if region is None:
            self.graphs.append((scope.graph, start))
        while True:
            self.skip_blank_lines()
            tok = self.lex.peek()
            if tok.is_("return"):
                break
            if tok.kind != "value":
                raise self.error(tok, "a node line '%N: TYPE = OP ...' or 'return'")
            self.node(scope)
        self.lex.next()
        if self.lex.peek().kind == "value":
            scope.graph.outputs.append(self.use(scope))
            while self.accept(","):
                scope.graph.outputs.append(self.use(scope))
        self.end_line()
        self.skip_blank_lines()
        self.expect("}", "'}' closing the graph")
        self.end_line()
        while region is None:
            self.skip_blank_lines()
            tok = self.lex.peek()
            if not (tok.is_("guard") and tok.column == start.column):
                break
            scope.graph.guards.append(self.guard(len(scope.graph.guards), depth))
        if region is None:
            with using(facts_from(scope.graph.guards)):
                for check in scope.deferred:
                    self.check_types(*check)
        return scope.graph

    def use(self, scope: _Scope) -> Value:
        tok = self.lex.next()
        if tok.kind != "value":
            raise self.error(tok, "a value %N")
        number = int(tok.text[1:])
        value = scope.values.get(number)
        if value is None:
            if scope.region is not None and number in scope.numbers:
                raise self.error(tok, f"a value of region {scope.region} (a region is isolated: it reads only "
                                      f"its own inputs, so a value from outside comes in as an operand)")
            raise self.error(tok, "a value defined on an earlier line of this graph")
        return value

    # --- node lines

    def node(self, scope: _Scope) -> None:
        """``%N: TYPE[, %M: TYPE] = OP [operands] [attributes]  [# file.py:LINE]``."""
        outs: list[tuple[Token, int, TensorType]] = []
        while True:
            tok = self.lex.next()
            if tok.kind != "value":
                raise self.error(tok, "a value name %N")
            number = int(tok.text[1:])
            if number in scope.numbers or any(number == n for _, n, _ in outs):
                raise self.error(tok, "a value not defined before (each %N is defined once)")
            self.expect(":", "':' and the value's type")
            outs.append((tok, number, self.type_()))
            if not self.accept(","):
                break
        self.expect("=", "'=' after the node's types")
        op_tok = self.lex.next()
        op = self.op_named(op_tok)
        types = tuple(t for _, _, t in outs)
        inputs, attrs = self.op_body(op, op_tok, types, scope)
        loc = self.node_loc() if self.accept("#") else None
        self.end_line()
        self.count_node(op_tok)
        scope.numbers.update(number for _, number, _ in outs)
        for key in opdef(op).regions:  # a control-flow node's regions: nested graphs on the lines below it
            attrs[key] = self.graph(scope.depth + 1, key, scope.numbers, scope.deferred)
        if has_symbols(attrs) or any(has_symbols(t.shape) for t in types + tuple(v.type for v in inputs)):
            scope.deferred.append((op, op_tok, inputs, attrs, outs))
        else:
            self.check_types(op, op_tok, inputs, attrs, outs)
        node = Node(op, inputs, attrs, types, loc)
        scope.graph.nodes.append(node)
        for (_, number, _), value in zip(outs, node.outputs):
            scope.values[number] = value
        if op == Op.PARAM:
            self.params.append((scope.graph, node, op_tok))

    def op_named(self, tok: Token) -> Op:
        if tok.kind == "ident" and tok.text in _OP_NAMES:
            return Op(tok.text)
        raise self.error(tok, "an op name from the op table (graph_lab.ops.Op)")

    def op_body(self, op: Op, op_tok: Token, types: tuple[TensorType, ...], scope: _Scope):
        """Operands and attributes; ``input``/``param`` take a quoted name and ``const`` a literal instead."""
        if op in (Op.INPUT, Op.PARAM, Op.CONST) and len(types) != 1:
            raise self.error(op_tok, f"one output for {op}", f"{len(types)}")
        if op in (Op.INPUT, Op.PARAM):
            name_tok = self.lex.next()
            if name_tok.kind != "string":
                raise self.error(name_tok, f"the {op}'s name as a quoted string")
            name = self.lex.decode_string(name_tok)
            if name in scope.names:
                raise self.error(name_tok, "a name no other input or param of this graph has", repr(name))
            scope.names.add(name)
            return (), {"name": name, "type": types[0]}
        if op == Op.CONST:
            return (), {"value": self.const_literal(types[0])}
        if op == Op.SIZE:
            return (), {"expr": self.size_expr()}
        inputs = []
        if self.lex.peek().kind == "value":
            inputs.append(self.use(scope))
            while self.accept(","):
                inputs.append(self.use(scope))
        attrs = {}
        while self.lex.peek().kind == "ident":
            name_tok = self.lex.next()
            if name_tok.text in attrs:
                raise self.error(name_tok, "each attribute once", f"a second {name_tok.text}=")
            self.expect("=", f"'=' after the attribute name {name_tok.text}")
            attrs[name_tok.text] = self.attr_value(depth=0)
        return tuple(inputs), attrs

    def node_loc(self) -> ParsedLoc:
        rest, line, column = self.lex.rest_of_line()
        return self.loc_from(rest.rstrip(" \t\r"), line, column, "")

    def loc_from(self, text: str, line: int, column: int, code: str) -> ParsedLoc:
        """`` file.py:12`` (after ``#`` or ``at``) as a location; the printer keeps only the file's basename."""
        filename, colon, number = text[1:].rpartition(":")
        if not text.startswith(" ") or not colon or not number.isascii() or not number.isdigit() \
                or len(number) > 18:
            at = Token("raw", text, line, column)
            raise self.error(at, "' file.py:LINE' (a location)", repr(text[:40]))
        return ParsedLoc(filename, int(number), code)

    def count_node(self, at: Token) -> None:
        self.node_count += 1
        if self.node_count > MAX_NODES:
            raise self.error(at, f"at most {MAX_NODES} nodes in one text (guards' graphs included)",
                             f"node number {self.node_count}")

    def check_types(self, op: Op, op_tok: Token, inputs, attrs: dict, outs) -> None:
        """The op's type rule, run on the operands' types and the attributes, must give the printed types."""
        in_types = tuple(v.type for v in inputs)
        if op in (Op.INDEX, Op.INDEX_UPDATE):
            self.charge_index_checks(op_tok, in_types[1 if op == Op.INDEX else 2:])
        try:
            inferred = tuple(opdef(op).infer(in_types, attrs))
        except Exception as e:  # a rule given malformed attributes may fail in any way: all are this text's fault
            detail = f"{type(e).__name__}: {e}"
            raise self.error(op_tok, f"operands and attributes that {op}'s type rule accepts",
                             f"{op}({', '.join(map(str, in_types))})",
                             detail if len(detail) < 300 else detail[:297] + "...") from None
        printed = tuple(t for _, _, t in outs)
        if inferred != printed:
            raise self.error(outs[0][0], f"the type{'s' if len(inferred) > 1 else ''} {op}'s rule gives: "
                                         f"{', '.join(map(str, inferred))}", ", ".join(map(str, printed)))

    def charge_index_checks(self, at: Token, index_types: tuple[TensorType, ...]) -> None:
        shapes = [tuple(d if type(d) is int else 1 for d in t.shape) for t in index_types]  # a symbol counts 1
        try:
            count = math.prod(np.broadcast_shapes(*shapes))
        except ValueError:
            return  # the type rule reports shapes that do not broadcast
        self.index_budget -= count
        if self.index_budget < 0:
            raise self.error(at, f"index arrays of at most {MAX_INDEX_ELEMENTS} elements in all, over the text",
                             f"{MAX_INDEX_ELEMENTS - self.index_budget} elements so far")

    # --- after the text: parameter values and verification

    def attach_params(self, params: Mapping[str, np.ndarray] | None, allow_missing: bool) -> None:
        given = {} if params is None else params
        header = self.graphs[0][1]
        if not isinstance(given, Mapping):
            raise self.error(header, "params as a dict of name -> ndarray", type(given).__name__)
        used = set()
        for graph, node, tok in self.params:
            name, printed = node.attrs["name"], node.output.type
            used.add(name)
            if name in given:
                value = given[name]
                if not isinstance(value, np.ndarray) or TensorType.of(value) != printed:
                    found = str(TensorType.of(value)) if isinstance(value, np.ndarray) else type(value).__name__
                    raise self.error(tok, f"params[{name!r}] to be an ndarray of the printed type {printed}", found)
                graph.param_values[name] = value
            elif not allow_missing:
                raise self.error(tok, f"a value for param {name!r} in params (or allow_missing_params=True)",
                                 "none")
        unused = [name for name in given if name not in used]
        if unused:
            shown = ", ".join(repr(n) for n in unused[:5]) + (", ..." if len(unused) > 5 else "")
            raise self.error(header, "params only for the param nodes of the text", f"params {shown}")

    def verify(self) -> None:
        """Run ``verify()`` on every graph read. A param left without a value (allowed by the caller) gets a
        stand-in for that check only, so the graph never runs with made-up values."""
        for graph, start in self.graphs:
            missing = [n for n in graph.param_nodes if n.attrs["name"] not in graph.param_values]
            for n in missing:
                t = n.output.type
                graph.param_values[n.attrs["name"]] = np.broadcast_to(np.zeros((), t.dtype), t.shape)
            try:
                graph.verify()
            except VerifyError as e:
                raise self.error(start, "a graph that passes verify()", "one that does not", str(e)) from None
            finally:
                for n in missing:
                    del graph.param_values[n.attrs["name"]]
