"""Reading symbolic sizes in the printed IR: ``B``, ``2*T-1``, ``d//2``, ``(B+1) % 4``, ``1.0/d**0.5``, and the
facts of shape guards (``d % 2 == 0``). The grammar is Python's own expression syntax and precedence (docs/ir.md,
"Symbolic sizes"); integer arithmetic is rebuilt with ``symbolic.py``'s simplification, so a canonical expression
prints back identically, and anything with ``/``, ``**`` or a float is kept as the ``FloatExpr`` tree written.

``SizeParser`` is a base of ``ValueParser`` (``parse_values.py``), whose token helpers it uses.
"""

from __future__ import annotations

from .relations import Rel, relation
from .symbolic import FUNCTIONS, MAX_POWER, Expr, FloatExpr, SizeTooComplex, float_op, mul, symbol
from .types import dtype_from_name

_WORDS = frozenset({"True", "False", "None"})
_INT_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
            "//": lambda a, b: a // b, "%": lambda a, b: a % b}
_EXPR_OPS = frozenset({"+", "-", "*", "/", "//", "%", "**"})
_COMPARISONS = ("==", "!=", ">=", "<=", ">", "<")


class Paren:
    """A parenthesized size expression read where a tuple could start: ``((B+1)//2, 4)``."""

    def __init__(self, value):
        self.value = value


class SizeParser:
    """The size-expression rules of the grammar; expects ``lex``, ``accept``, ``expect``, ``error``,
    ``check_depth`` and ``python_number`` from the class that uses it."""

    # --- symbolic sizes: Python's own precedence (docs/ir.md, "Symbolic sizes")

    def size_expr(self, first=None, depth: int = 0):
        """``B``, ``2*T-1``, ``d//2``, ``1.0/d**0.5``: an int, an ``Expr``, or a ``FloatExpr``. ``first`` is an
        operand already read (where an attribute value turned out to be the start of an expression)."""
        left = self._term(first, depth)
        while True:
            tok = self.lex.peek()
            if tok.is_("+") or tok.is_("-"):
                self.lex.next()
                left = self._apply(tok, tok.text, left, self._term(None, depth))
            elif tok.kind == "number" and tok.text.startswith("-"):  # "T-1" is the tokens T and -1
                self.lex.next()
                right = self._term(self.python_number(tok._replace(text=tok.text[1:])), depth)
                left = self._apply(tok, "-", left, right)
            else:
                return left

    def _term(self, first, depth: int):
        left = self._unary(first, depth)
        while self.lex.peek().kind == "punct" and self.lex.peek().text in ("*", "/", "//", "%"):
            tok = self.lex.next()
            left = self._apply(tok, tok.text, left, self._unary(None, depth))
        return left

    def _unary(self, first, depth: int):
        tok = self.lex.peek()
        self.check_depth(tok, depth)  # "- - - B" and "a**b**c" nest: bounded like parentheses
        if first is None and tok.is_("-"):
            self.lex.next()
            return self._apply(tok, "neg", self._unary(None, depth + 1), None)
        if first is None and tok.kind == "number" and tok.text.startswith("-"):
            self.lex.next()
            return self._apply(tok, "neg", self._unary(self.python_number(tok._replace(text=tok.text[1:])), depth + 1),
                               None)
        base = first if first is not None else self._primary(depth)
        tok = self.lex.peek()
        if self.accept("**"):
            return self._apply(tok, "**", base, self._unary(None, depth + 1))
        return base

    def _apply(self, tok, op: str, a, b):
        """``a op b`` (``neg``: ``-a``), or a parse error at ``tok`` for a division by zero or a size too large."""
        try:
            return _negate(a) if op == "neg" else _apply(op, a, b)
        except (ZeroDivisionError, SizeTooComplex) as e:
            raise self.error(tok, "a size expression that can be computed", detail=str(e)) from None

    def _primary(self, depth: int):
        tok = self.lex.next()
        self.check_depth(tok, depth)
        if tok.kind == "number":
            return self.python_number(tok)
        if tok.is_("("):
            value = self.size_expr(None, depth + 1)
            self.expect(")", "')' closing the parenthesized size")
            return value
        if tok.kind == "ident" and tok.text in FUNCTIONS and self.accept("("):
            value = self.size_expr(None, depth + 1)
            self.expect(")", f"')' closing {tok.text}(...)")
            return float_op(tok.text, value)
        if tok.kind == "ident" and tok.text not in _WORDS:
            return symbol(tok.text)
        raise self.error(tok, "a size: an integer, a size symbol, or a parenthesized size expression")

    def relation_(self) -> Rel:
        """``d%2 == 0``, ``T >= 2``: a shape guard's fact."""
        left = self.size_expr()
        tok = self.lex.next()
        if tok.kind != "punct" or tok.text not in _COMPARISONS:
            raise self.error(tok, f"a comparison ({', '.join(_COMPARISONS)})")
        right = self.size_expr()
        if isinstance(left, FloatExpr) or isinstance(right, FloatExpr):
            raise self.error(tok, "a fact about integer sizes")
        return relation(tok.text, left, right)

    def continues_size(self) -> bool:
        tok = self.lex.peek()
        return (tok.kind == "punct" and tok.text in _EXPR_OPS) or (tok.kind == "number" and tok.text[0] == "-")


def is_dtype_name(word: str) -> bool:
    try:
        dtype_from_name(word)
        return True
    except KeyError:
        return False


def _negate(x):
    """Unary minus as Python applies it: a number literal stays a literal (``-0.5``), a size negates."""
    if isinstance(x, FloatExpr):
        return float_op("neg", x)
    return mul(x, -1) if isinstance(x, Expr) else -x


def _apply(op: str, a, b):
    """``a op b``: integer arithmetic on sizes stays an ``Expr`` (canonical); anything else is a ``FloatExpr``
    node, kept as written."""
    ints = all(isinstance(x, (int, Expr)) and not isinstance(x, bool) for x in (a, b))
    if ints and op in _INT_OPS:
        return _INT_OPS[op](a, b)
    if ints and op == "**" and type(b) is int and b >= 0:
        if b > MAX_POWER:
            raise SizeTooComplex(f"an integer power over {MAX_POWER}")
        return a ** b
    return float_op(op, a, b)


