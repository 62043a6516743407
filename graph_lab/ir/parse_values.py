"""Reading the values of the printed IR: types, attribute values and index keys (constant literals and numbers
are ``parse_literals.py``, symbolic sizes ``parse_sizes.py``, both bases of ``ValueParser``).

The inverse of ``literals.py`` (how values are written) and of ``TensorType.__str__``. ``parser.py`` builds the
line grammar on top of this class.
"""

from __future__ import annotations

import numpy as np

from ..ops.indexing import At, Slice, Slot, Span
from .lexer import Lexer, Token
from .parse_literals import INT, Elements, LiteralParser
from .parse_sizes import Paren, SizeParser, is_dtype_name
from .symbolic import FUNCTIONS, Expr, FloatExpr
from .types import TensorType, dtype_from_name, weak_type_of

MAX_DEPTH = 64
"""Deepest nesting of tuples, lists and guards (each level is a few Python frames, far below the recursion
limit)."""
MAX_RANK = 64
"""Most dimensions of a type (NumPy's own limit)."""
MAX_ELEMENTS = 10**8
"""Most elements of one printed type, each size counted as at least 1 (so ``f64[0,99999999999]`` is refused
too): type rules build views and probes of these shapes, which must stay cheap."""

_WORDS = {"True": True, "False": False, "None": None}


class ValueParser(SizeParser, LiteralParser):
    """Token helpers and the value rules of the grammar (docs/ir.md)."""

    def __init__(self, text: str):
        self.lex = Lexer(text)

    # --- token helpers

    def error(self, at: Token, expected: str, found: str | None = None, detail: str = ""):
        return self.lex.error(at, expected, found, detail)

    def expect(self, text: str, expected: str | None = None) -> Token:
        tok = self.lex.next()
        if not tok.is_(text):
            raise self.error(tok, expected or repr(text))
        return tok

    def accept(self, text: str) -> bool:
        if self.lex.peek().is_(text):
            self.lex.next()
            return True
        return False

    def end_line(self) -> None:
        tok = self.lex.next()
        if tok.kind not in ("newline", "eof"):
            raise self.error(tok, "end of line")

    def skip_blank_lines(self) -> None:
        while self.lex.peek().kind == "newline":
            self.lex.next()

    def int_of(self, tok: Token, expected: str) -> int:
        if tok.kind != "number" or not INT.fullmatch(tok.text):
            raise self.error(tok, expected)
        return int(tok.text)

    def check_depth(self, at: Token, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise self.error(at, f"at most {MAX_DEPTH} levels of nesting", f"level {depth}")

    # --- types

    def type_(self) -> TensorType:
        """``f64[4,8]``, ``bool[]``, or a weak scalar type ``float``/``int``/``bool``/``complex``."""
        tok = self.lex.next()
        if tok.kind == "ident" and not self.lex.peek().is_("["):
            weak = weak_type_of(tok.text)
            if weak is not None:
                return TensorType.of(weak())  # the weak type of a Python scalar of that class
        if tok.kind != "ident":
            raise self.error(tok, "a type (f64[4,8], bool[], or float, int, bool, complex)")
        dtype = self.dtype_named(tok)
        self.expect("[", f"'[' and the shape after {tok.text}")
        dims: list = []
        size = 1
        if self.accept("]"):
            return TensorType(dtype, ())
        while True:
            dim_tok = self.lex.peek()
            dim = self.size_expr()
            if isinstance(dim, FloatExpr) or (type(dim) is int and dim < 0):
                raise self.error(dim_tok, "a size (an integer of at least 0, or a symbolic size like B or 2*T)")
            size *= max(dim, 1) if type(dim) is int else 1
            if len(dims) == MAX_RANK:
                raise self.error(dim_tok, f"at most {MAX_RANK} dimensions")
            if size > MAX_ELEMENTS:
                raise self.error(dim_tok, f"a shape of at most {MAX_ELEMENTS} elements (a size of 0 counted as 1)")
            dims.append(dim)
            if self.accept("]"):
                return TensorType(dtype, tuple(dims))
            self.expect(",", "',' or ']' in the shape")

    def dtype_named(self, tok: Token) -> np.dtype:
        try:
            return dtype_from_name(tok.text)
        except KeyError:
            raise self.error(tok, "a dtype (f64, f32, f16, i64, i32, i16, i8, u64, u32, u16, u8, bool, c128, "
                                  "c64)") from None

    # --- attribute values

    def attr_value(self, depth: int):
        """A number, True/False/None, a string, a dtype, a NumPy scalar ``f32(0.5)``, a tuple, or a key."""
        tok = self.lex.next()
        self.check_depth(tok, depth)
        if tok.kind == "number":
            number = self.python_number(tok)
            return self.size_expr(number, depth) if self.continues_size() else number
        if tok.kind == "string":
            return self.lex.decode_string(tok)
        if tok.is_("("):
            value = self.tuple_rest(depth + 1)
            return self.size_expr(value.value, depth) if isinstance(value, Paren) else value
        if tok.is_("["):
            return self.index_key_rest()
        if tok.kind == "ident" and tok.text in _WORDS:
            return _WORDS[tok.text]
        if tok.kind == "ident" and (tok.text in FUNCTIONS or not is_dtype_name(tok.text)):
            self.lex.push_back(tok)  # the word starts a symbolic size
            return self.size_expr(None, depth)
        if tok.kind != "ident":
            raise self.error(tok, "an attribute value (a number, True, False, None, a string, a dtype, a tuple or "
                                  "an index key)")
        dtype = self.dtype_named(tok)
        if not self.accept("("):
            return dtype
        elements = Elements(dtype)
        self.element(elements)
        self.expect(")", "')' closing the NumPy scalar")
        return elements.array(())[()]

    def tuple_rest(self, depth: int) -> tuple:
        """After ``(``: ``)``, ``x,)`` or ``x, y, ...)`` (a trailing comma allowed)."""
        items: list = []
        if self.accept(")"):
            return ()
        while True:
            items.append(self.attr_value(depth))
            tok = self.lex.next()
            if tok.is_(")"):
                if len(items) == 1:
                    numeric = isinstance(items[0], (int, Expr, FloatExpr)) and not isinstance(items[0], bool)
                    if numeric and self.continues_size():  # ((B+1)//2, 4): a parenthesized size
                        return Paren(items[0])
                    raise self.error(tok, "',' (a tuple of one item is written (x,))")
                return tuple(items)
            if not tok.is_(","):
                raise self.error(tok, "',' or ')' in the tuple")
            if self.accept(")"):
                return tuple(items)

    def index_key_rest(self) -> tuple:
        """After ``[``: items ``:``, ``a:b:c``, ``3``, ``None``, ``...``, ``$1``, ``@1`` separated by commas, then ``]``."""
        items: list = []
        if self.accept("]"):
            return ()
        while True:
            items.append(self.key_item())
            tok = self.lex.next()
            if tok.is_("]"):
                return tuple(items)
            if not tok.is_(","):
                raise self.error(tok, "',' or ']' in the index key")

    def key_item(self):
        tok = self.lex.peek()
        if tok.is_("...") or tok.is_("None") or tok.kind == "slot":
            self.lex.next()
            if tok.kind == "slot" and tok.text[0] == "@":
                if self.accept(":"):  # @1:+3, a Span
                    if not self.accept("+"):
                        raise self.error(self.lex.peek(), "'+' and the length of the slice (@N:+length)")
                    length = self.key_int()
                    if type(length) is not int:
                        raise self.error(tok, "an int length of the slice (@N:+length)")
                    return Span(int(tok.text[1:]), length)
                return At(int(tok.text[1:]))
            if tok.kind == "slot":
                return Slot(int(tok.text[1:]))
            return Ellipsis if tok.is_("...") else None
        start = self.key_int()
        if not self.accept(":"):
            if start is None:
                raise self.error(tok, "an index key item: an integer, a slice a:b:c, None, ... or $N")
            return start
        stop = self.key_int()
        step = self.key_int() if self.accept(":") else None
        return Slice(start, stop, step)

    def key_int(self):
        """An int or a symbolic size in an index key (``T-1``), or None when the item has none here."""
        tok = self.lex.peek()
        if tok.kind in ("number", "ident") or tok.is_("(") or tok.is_("-"):
            value = self.size_expr()
            if not isinstance(value, (int, Expr)) or isinstance(value, bool):
                raise self.error(tok, "an integer or a symbolic size in the index key")
            return value
        return None

