"""Reading the guards printed after a graph: ``guard #0: shape T >= 2 at model.py:3`` and
``guard #1: bool(value) == True at model.py:5: `if s > 0:``` followed by the value guard's own graph, indented.

``GuardParser`` is a base of the graph parser (``parser.py``), whose ``graph`` and ``loc_from`` it uses, with
the token and value helpers of ``ValueParser``.
"""

from __future__ import annotations

import numpy as np

from .guard_records import ShapeGuard, ValueGuard
from .lexer import Token
from .parse_values import MAX_DEPTH
from .source import ParsedLoc

GUARD_KINDS = ("bool", "int", "float", "item", "array")
"""How a value guard's value was used (``ValueGuard.kind``)."""


class GuardParser:
    """The guard rules of the grammar (docs/ir.md)."""

    def guard(self, index: int, depth: int) -> ValueGuard:
        """``guard #I: KIND(value) == EXPECTED [at file.py:LINE[: `code`]]`` and, indented, the guard's graph."""
        start = self.expect("guard")
        if depth >= MAX_DEPTH:
            raise self.error(start, f"at most {MAX_DEPTH} levels of guards within guards")
        self.expect("#", "'#' and the guard's number")
        number_tok = self.lex.next()
        if self.int_of(number_tok, "the guard's number") != index:
            raise self.error(number_tok, f"#{index} (guards are numbered in order)")
        self.expect(":")
        kind_tok = self.lex.next()
        if kind_tok.is_("shape"):
            fact = self.relation_()
            loc = self.guard_loc() if self.accept("at") else None
            self.end_line()
            return ShapeGuard(fact, loc)
        if kind_tok.kind != "ident" or kind_tok.text not in GUARD_KINDS:
            raise self.error(kind_tok, f"a guard kind: shape, {', '.join(GUARD_KINDS)}")
        for text in ("(", "value", ")", "=="):
            self.expect(text, f"'{kind_tok.text}(value) =='")
        expected = self.expected_value(kind_tok.text)
        loc = self.guard_loc() if self.accept("at") else None
        self.end_line()
        return ValueGuard(self.graph(depth + 1), kind_tok.text, expected, loc)

    def expected_value(self, kind: str):
        """What ``kind(value)`` gave while tracing: a Python scalar, or for ``array`` a type and a literal."""
        if kind == "array":
            return np.asarray(self.const_literal(self.type_()))
        tok = self.lex.peek()
        value = self.python_scalar()
        wanted = {"bool": bool, "int": int, "float": float}.get(kind)
        if wanted is not None and type(value) is not wanted:
            raise self.error(tok, f"a Python {wanted.__name__} (what {kind}() gives)")
        return value

    def guard_loc(self) -> ParsedLoc:
        rest, line, column = self.lex.rest_of_line()
        head, code = rest, ""
        if rest.endswith("`"):
            cut = rest.find(": `")
            if cut < 0:
                raise self.error(Token("raw", rest, line, column), "' file.py:LINE: `code`'", repr(rest[:40]))
            head, code = rest[:cut], rest[cut + 3:-1]
        return self.loc_from(head, line, column, code)
