"""The tokenizer of the printed IR: text -> tokens with line and column, one token at a time, on demand.

Tokens are read lazily because two places of the grammar are raw text to the end of the line, not tokens: the
``# file.py:12`` location and a guard's ``at file.py:12: `code``` tail. The parser asks for those with
:meth:`Lexer.rest_of_line` right after the ``#`` or ``at`` token, before anything past it was tokenized.

Every token is one match of one regular expression, written without nested repetition, so tokenizing is linear
in the input even for hostile text; numbers longer than ``MAX_NUMBER_CHARS`` are refused before conversion.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..errors import GraphParseError

MAX_NUMBER_CHARS = 100
"""Longest number token: any float the printer writes is under 30 characters, an int64 is 20 digits."""

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r]++)
  | (?P<newline>\n[ \t\r\n]*+)
  | (?P<number>nan\(0x[0-9a-fA-F]++\)|-?(?:\d++(?:\.\d++)?(?:[eE][+-]?\d++)?|inf\b|nan\b))
  | (?P<ident>[^\W\d]\w*+)
  | (?P<value>%\d++)
  | (?P<slot>[$@]\d++)
  | (?P<string>"[^"\\\n]*+(?:\\[^\n][^"\\\n]*+)*+")
  | (?P<punct>\.\.\.|==|!=|>=|<=|\*\*|//|[{}\[\](),:=\#+\-*/%<>])
""", re.VERBOSE)

_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))")
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}


class Token(NamedTuple):
    """One token (a named tuple: the parser makes one per word, number and comma, so it must be cheap)."""

    kind: str
    """One of: number, ident, value (``%3``), slot (``$1``, ``@1``), string, punct, newline (with any blank lines after
    it), eof."""
    text: str
    """The token as written (a string token with its quotes and escapes)."""
    line: int
    """1-based line of its first character."""
    column: int
    """1-based column of its first character."""

    def is_(self, text: str) -> bool:
        """True for the punctuation or word ``text`` (``tok.is_("{")``, ``tok.is_("return")``)."""
        return self.text == text and self.kind in ("punct", "ident")

    def describe(self) -> str:
        """How an error message shows this token."""
        if self.kind == "eof":
            return "end of input"
        if self.kind == "newline":
            return "end of line"
        shown = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return repr(shown)


class Lexer:
    """Reads ``text`` token by token; ``peek`` looks at the next token without taking it."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.line = 1
        self.line_start = 0
        self._peeked: Token | None = None

    def peek(self) -> Token:
        if self._peeked is None:
            self._peeked = self._scan()
        return self._peeked

    def next(self) -> Token:
        tok = self.peek()
        self._peeked = None
        return tok

    def push_back(self, tok: Token) -> None:
        """Undo the last ``next()``: ``tok`` is the next token again (one token of lookahead, no more)."""
        assert self._peeked is None, "push_back needs the lexer right after next()"
        self._peeked = tok

    def rest_of_line(self) -> tuple[str, int, int]:
        """The raw text from here to the end of the line (not included), with its line and column."""
        assert self._peeked is None, "rest_of_line needs the lexer right after the token before it"
        end = self.text.find("\n", self.pos)
        end = len(self.text) if end < 0 else end
        rest, column = self.text[self.pos:end], self.pos - self.line_start + 1
        self.pos = end
        return rest, self.line, column

    def match_raw(self, pattern: re.Pattern) -> re.Match | None:
        """Match ``pattern`` right here, without moving; ``skip_to(m.end())`` then steps past the match. The
        parser reads long rows of plain numbers this way: one match instead of a token per number."""
        assert self._peeked is None, "match_raw needs the lexer right after the token before it"
        return pattern.match(self.text, self.pos)

    def skip_to(self, end: int) -> None:
        """Step past raw text matched by ``match_raw`` (which must not cross a line)."""
        self.pos = end

    def _scan(self) -> Token:
        while True:
            column = self.pos - self.line_start + 1
            if self.pos >= len(self.text):
                return Token("eof", "", self.line, column)
            m = _TOKEN.match(self.text, self.pos)
            if m is None:
                self._fail_at_character(column)
            kind, text = m.lastgroup, m.group()
            self.pos = m.end()
            if kind == "space":
                continue
            token = Token(kind, text, self.line, column)
            if kind == "newline":  # blank lines and the next line's indentation are part of it
                self.line += text.count("\n")
                self.line_start = m.start() + text.rindex("\n") + 1
            elif kind in ("number", "value", "slot") and len(text) > MAX_NUMBER_CHARS:
                raise self.error(token, f"a number of at most {MAX_NUMBER_CHARS} characters",
                                 f"one of {len(text)} characters")
            return token

    def _fail_at_character(self, column: int):
        ch = self.text[self.pos]
        at = Token("punct", ch, self.line, column)
        if ch == '"':
            raise self.error(at, 'a closing " on the same line', "an unterminated string")
        raise self.error(at, "a token of the IR (%N, a word, a number, a string, or one of { } [ ] ( ) , : = #)",
                         f"the character {ch!r}")

    def decode_string(self, tok: Token) -> str:
        """The value of a string token: escapes ``\\" \\\\ \\n \\t \\r \\uXXXX \\UXXXXXXXX`` resolved."""
        def replace(m: re.Match) -> str:
            short, long, simple = m.group(1), m.group(2), m.group(3)
            code = int(short or long, 16) if (short or long) else None
            if code is not None and code <= 0x10FFFF:
                return chr(code)
            if simple in _SIMPLE_ESCAPES:
                return _SIMPLE_ESCAPES[simple]
            at = Token("string", m.group(), tok.line, tok.column + m.start() + 1)
            raise self.error(at, r'an escape \" \\ \n \t \r \uXXXX or \UXXXXXXXX (at most 10FFFF)', repr(m.group()))
        return _ESCAPE.sub(replace, tok.text[1:-1])

    def error(self, at: Token, expected: str, found: str | None = None, detail: str = "") -> GraphParseError:
        """A ``GraphParseError`` at ``at``'s position, showing the line and a caret under the column."""
        found = at.describe() if found is None else found
        message = f"line {at.line}, column {at.column}: expected {expected}, found {found}"
        if detail:
            message += f" ({detail})"
        message += "\n" + self._excerpt(at.line, at.column)
        return GraphParseError(message, line=at.line, column=at.column, found=found, expected=expected)

    def _excerpt(self, line: int, column: int, width: int = 100) -> str:
        """The line, cut to ``width`` characters around the column, with a ``^`` under it."""
        start = 0
        for _ in range(line - 1):
            start = self.text.find("\n", start) + 1
        end = self.text.find("\n", start)
        text = self.text[start:len(self.text) if end < 0 else end]
        first = max(0, min(column - 1 - width // 2, len(text) - width))
        shown = text[first:first + width].replace("\t", " ")
        return f"  {shown}\n  {' ' * (column - 1 - first)}^"
