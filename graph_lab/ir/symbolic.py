"""Symbolic sizes: integer expressions over named dimensions, as shapes hold them in a graph captured for any
batch size (``f32[B,128]``, ``f64[T,2,d//2]``).

An ``Expr`` is a polynomial with integer coefficients over *atoms*: a size symbol (``B``), or a floor division or
remainder that does not simplify (``d//2``, ``(B+1)%4``). Every operation returns the canonical form, so
expressions that simplification shows equal are equal objects (``==`` and ``hash`` compare structure), and an
expression that is a constant comes back as a plain ``int``::

    B*8 // 4  ->  2*B        B*8 // B  ->  8        (2*B + 1) // 2  ->  B        (4*B + 6) % 4  ->  2

(the rules for ``//`` and ``%`` are ``size_division.py``).

Whether ``B == T`` or ``d % 2 == 0`` *holds* is not structure but a fact about the inputs: ``Rel`` states it and
a ``ShapeEnv`` (``shape_env.py``) proves it, or records it as a guard. ``<``/``<=``/``>``/``>=`` between
expressions ask the current ``ShapeEnv``, so a shape rule written with comparisons works on symbols too.

``FloatExpr`` is the float side: what Python computes from sizes with ``/``, ``**`` or a float
(``1.0 / d**0.5``), kept as a small tree and evaluated at run time with the same Python operations, so the value
has the same bits as in eager code.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

INF = math.inf
MAX_WEIGHT = 1000
"""Most terms and atoms (nested ones included) in one expression: sizes in real programs are a few terms, and a
bound keeps hostile IR text (``(a+b)*(c+d)*...``) from growing one without end."""
MAX_POWER = 64
"""Largest integer exponent of a size."""
MAX_NESTING = 32
"""Deepest nesting of ``//`` and ``%`` inside one another (``B//T//B...``): printing and proofs recurse on it."""


class SizeTooComplex(ValueError):
    """A symbolic size expression over ``MAX_WEIGHT`` or ``MAX_POWER``."""

# An atom is ("sym", name), ("floordiv", numerator, denominator) or ("mod", numerator, denominator).
# A monomial is a sorted tuple of atoms (repeated for powers); () is the constant term.


def atom_key(atom: tuple) -> tuple:
    if atom[0] == "sym":
        return (0, atom[1])
    return (1 if atom[0] == "floordiv" else 2, str(atom[1]), str(atom[2]))


def _mono_key(mono: tuple) -> tuple:
    return (-len(mono), tuple(atom_key(a) for a in mono))


class Expr:
    """A symbolic integer: a canonical polynomial over size symbols and unsimplifiable ``//`` and ``%``."""

    __slots__ = ("terms", "_hash", "weight", "nesting")

    def __init__(self, terms: tuple):
        self.terms = terms
        """``((monomial, coefficient), ...)``, sorted: highest degree first, the constant last; no zero
        coefficients. Built only by ``canonical``."""
        self._hash = hash(terms)
        self.weight = sum(1 + sum(_atom_weight(a) for a in m) for m, _ in terms)
        """How many terms and atoms it holds, nested ones included (at most ``MAX_WEIGHT``)."""
        self.nesting = max((_atom_nesting(a) for m, _ in terms for a in m), default=0)
        """How deeply ``//`` and ``%`` nest in it (at most ``MAX_NESTING``)."""
        if self.weight > MAX_WEIGHT or self.nesting > MAX_NESTING:
            raise SizeTooComplex(f"a symbolic size expression of more than {MAX_WEIGHT} terms and atoms, or "
                                 f"with // and % nested more than {MAX_NESTING} deep")

    # --- structure: equality and hashing compare canonical forms (types hold Exprs and are compared)

    def __eq__(self, other) -> bool:
        return isinstance(other, Expr) and self.terms == other.terms

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._hash

    def __bool__(self) -> bool:
        raise TypeError(f"the truth value of the symbolic size {self} is unknown while capturing; compare it "
                        f"(e.g. {self} > 1) so that a shape guard records the outcome")

    # --- arithmetic (each returns an Expr, or an int when the result is a constant)

    def __add__(self, o): return add(self, o) if _is_int(o) else NotImplemented
    def __radd__(self, o): return add(o, self) if _is_int(o) else NotImplemented
    def __sub__(self, o): return add(self, mul(o, -1)) if _is_int(o) else NotImplemented
    def __rsub__(self, o): return add(o, mul(self, -1)) if _is_int(o) else NotImplemented
    def __mul__(self, o): return mul(self, o) if _is_int(o) else NotImplemented
    def __rmul__(self, o): return mul(o, self) if _is_int(o) else NotImplemented
    def __floordiv__(self, o): return floordiv(self, o) if _is_int(o) else NotImplemented
    def __rfloordiv__(self, o): return floordiv(o, self) if _is_int(o) else NotImplemented
    def __mod__(self, o): return mod(self, o) if _is_int(o) else NotImplemented
    def __rmod__(self, o): return mod(o, self) if _is_int(o) else NotImplemented
    def __neg__(self): return mul(self, -1)
    def __pos__(self): return self

    def __pow__(self, n):
        if type(n) is not int or n < 0:
            return NotImplemented
        if n > MAX_POWER:
            raise SizeTooComplex(f"a symbolic size to a power over {MAX_POWER}")
        out = 1
        for _ in range(n):
            out = mul(out, self)
        return out

    # --- comparisons decide a fact: the current ShapeEnv proves it, or records a guard

    def __lt__(self, o): return _decide("<", self, o)
    def __le__(self, o): return _decide("<=", self, o)
    def __gt__(self, o): return _decide(">", self, o)
    def __ge__(self, o): return _decide(">=", self, o)

    def __repr__(self) -> str:
        return f"Expr({self})"

    def __str__(self) -> str:
        return format_terms(self.terms)


class SymbolicValue:
    """Base class of the values user code holds while capturing (``SymInt``, ``SymFloat``): each wraps an
    expression in ``.expr``, and op binds unwrap it (``unwrap``)."""

    __slots__ = ()


def unwrap(x):
    """The expression inside a SymInt/SymFloat, and anything else unchanged."""
    return x.expr if isinstance(x, SymbolicValue) else x


def _is_int(x) -> bool:
    return type(x) is int or isinstance(x, Expr)


def _decide(op: str, a, b) -> bool:
    if not _is_int(b):
        return NotImplemented
    from .relations import relation
    from .shape_env import decide
    return decide(relation(op, a, b))


def symbol(name: str) -> Expr:
    """The expression that is just the size symbol ``name``."""
    monomial = (("sym", name),)
    return Expr(((monomial, 1),))


def is_symbolic(x) -> bool:
    """True for an ``Expr`` or ``FloatExpr`` (a value known only at run time), False for plain numbers."""
    return isinstance(x, (Expr, FloatExpr))


def symbol_name(x) -> str | None:
    """``"B"`` when ``x`` is exactly the symbol B, else None."""
    if isinstance(x, Expr) and len(x.terms) == 1:
        mono, coeff = x.terms[0]
        if coeff == 1 and len(mono) == 1 and mono[0][0] == "sym":
            return mono[0][1]
    return None


def terms_of(x) -> dict:
    if isinstance(x, Expr):
        return dict(x.terms)
    return {(): int(x)} if x else {}


def canonical(terms: dict):
    """The canonical Expr of ``terms`` (monomial -> coefficient), or the int it is when constant."""
    items = sorted(((m, c) for m, c in terms.items() if c), key=lambda mc: _mono_key(mc[0]))
    if not items:
        return 0
    if len(items) == 1 and items[0][0] == ():
        return items[0][1]
    return Expr(tuple(items))


def add(a, b):
    terms = terms_of(a)
    for m, c in terms_of(b).items():
        terms[m] = terms.get(m, 0) + c
    return canonical(terms)


def mul(a, b):
    ta, tb = terms_of(a), terms_of(b)
    if len(ta) * len(tb) > MAX_WEIGHT:
        raise SizeTooComplex(f"a product of symbolic sizes with more than {MAX_WEIGHT} terms")
    out: dict = {}
    for m1, c1 in ta.items():
        for m2, c2 in tb.items():
            m = tuple(sorted(m1 + m2, key=atom_key))
            out[m] = out.get(m, 0) + c1 * c2
    return canonical(out)


def _atom_nesting(atom: tuple) -> int:
    if atom[0] == "sym":
        return 0
    return 1 + max(x.nesting if isinstance(x, Expr) else 0 for x in atom[1:])


def _atom_weight(atom: tuple) -> int:
    if atom[0] == "sym":
        return 1
    return 1 + sum(x.weight if isinstance(x, Expr) else 1 for x in atom[1:])


# --- reading an expression: symbols, values, substitution, bounds


def free_symbols(x) -> set[str]:
    """The names of the size symbols in ``x`` (an int, Expr, FloatExpr, or a tuple/Rel holding them)."""
    out: set[str] = set()
    _collect(x, out)
    return out


def _collect(x, out: set) -> None:
    if isinstance(x, Expr):
        for m, _ in x.terms:
            for atom in m:
                if atom[0] == "sym":
                    out.add(atom[1])
                else:
                    _collect(atom[1], out)
                    _collect(atom[2], out)
    elif isinstance(x, FloatExpr):
        for a in x.args:
            _collect(a, out)
    elif hasattr(x, "diff"):  # a Rel
        _collect(x.diff, out)
    elif isinstance(x, tuple):
        for a in x:
            _collect(a, out)


def evaluate(x, sizes: dict):
    """The value of ``x`` for concrete sizes (``{"B": 5}``): an int for an Expr, a float for a FloatExpr."""
    if isinstance(x, FloatExpr):
        return x.evaluate(sizes)
    if not isinstance(x, Expr):
        return x
    total = 0
    for m, c in x.terms:
        v = c
        for atom in m:
            v *= _atom_value(atom, sizes)
        total += v
    return total


def _atom_value(atom: tuple, sizes: dict) -> int:
    if atom[0] == "sym":
        return sizes[atom[1]]
    num, den = evaluate(atom[1], sizes), evaluate(atom[2], sizes)
    return num // den if atom[0] == "floordiv" else num % den


def substitute(x, mapping: dict):
    """``x`` with symbols replaced (name -> int or Expr), simplified again."""
    if not isinstance(x, Expr):
        return x
    total = 0
    for m, c in x.terms:
        v = c
        for atom in m:
            if atom[0] == "sym":
                v = mul(v, mapping.get(atom[1], symbol(atom[1])))
            else:
                num, den = substitute(atom[1], mapping), substitute(atom[2], mapping)
                v = mul(v, floordiv(num, den) if atom[0] == "floordiv" else mod(num, den))
        total = add(total, v)
    return total


# --- printing: the form the IR text shows and the parser reads back (docs/ir.md, "Symbolic sizes")


def format_terms(terms) -> str:
    out = ""
    for i, (m, c) in enumerate(terms):
        text = _format_term(m, c)
        out += text if i == 0 or c < 0 else "+" + text
    return out


def _format_term(m: tuple, c: int) -> str:
    """``2*B``, ``-T``, ``B**2*T``, ``2*(d//2)``, ``-(d//2)``: valid Python that means this term."""
    sign, c = ("-" if c < 0 else ""), abs(c)
    if not m:
        return sign + str(c)
    factors = []
    for atom, power in _powers(m):
        text = _format_atom(atom)
        if atom[0] != "sym" and (len(m) > 1 or c != 1 or sign):  # 2*(d//2): 2*d//2 is (2*d)//2
            text = f"({text})"
        factors.append(text if power == 1 else f"{text}**{power}")
    return sign + "*".join(([str(c)] if c != 1 else []) + factors)


def _powers(m: tuple) -> list:
    out: list = []
    for atom in m:
        if out and out[-1][0] == atom:
            out[-1][1] += 1
        else:
            out.append([atom, 1])
    return out


def _format_atom(atom: tuple) -> str:
    if atom[0] == "sym":
        return atom[1]
    symbol_ = "//" if atom[0] == "floordiv" else " % "  # spaced: %2 would read as the value %2 in the IR text
    return f"{_operand(atom[1], 2)}{symbol_}{_operand(atom[2], 3)}"


def precedence(x) -> int:
    """How tightly ``str(x)`` binds, as Python parses it: 1 sum, 2 product, 3 unary minus, 4 power, 5 atom."""
    if isinstance(x, FloatExpr):
        return _OP_PRECEDENCE[x.op]
    if isinstance(x, float) or type(x) is int:
        return 3 if x < 0 or (isinstance(x, float) and str(x).startswith("-")) else 5
    if len(x.terms) > 1:
        return 1
    (m, c), = x.terms
    if c == -1 and len(m) == 1:
        return 3  # -B, -(d//2)
    if c != 1 or len(m) > 1 or m[0][0] != "sym":
        return 2  # 2*B, -2*B (that is (-2)*B), B*T, d//2
    return 5


def _operand(x, needed: int) -> str:
    text = str(x) if not isinstance(x, float) else repr(x)
    return f"({text})" if precedence(x) < needed else text


# --- floats computed from sizes


_FLOAT_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
              "//": operator.floordiv, "%": operator.mod, "**": operator.pow}
FUNCTIONS = {"sqrt": math.sqrt, "exp": math.exp, "log": math.log}
_OP_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "//": 2, "%": 2, "neg": 3, "**": 4,
                  **{f: 5 for f in FUNCTIONS}}


@dataclass(frozen=True)
class FloatExpr:
    """A float computed from sizes by Python operators and a few ``math`` functions: ``1.0/d**0.5``.

    Kept as the tree the program built, not simplified: evaluating it runs the same Python operations in the
    same order as eager code did, so the float has the same bits."""

    op: str
    """``+ - * / // % **``, ``neg``, or a function name (``sqrt``, ``exp``, ``log``)."""
    args: tuple
    """Operands: ints, Exprs, Python floats or FloatExprs."""

    def evaluate(self, sizes: dict) -> float:
        values = [a.evaluate(sizes) if isinstance(a, FloatExpr) else evaluate(a, sizes) for a in self.args]
        if self.op == "neg":
            return -values[0]
        if self.op in FUNCTIONS:
            return FUNCTIONS[self.op](values[0])
        return _FLOAT_OPS[self.op](values[0], values[1])

    def __str__(self) -> str:
        p = _OP_PRECEDENCE[self.op]
        if self.op in FUNCTIONS:
            return f"{self.op}({_operand(self.args[0], 0)})"
        if self.op == "neg":
            return "-" + _operand(self.args[0], 4)
        if self.op == "**":  # right-associative: the left operand must bind tighter
            return f"{_operand(self.args[0], 5)}**{_operand(self.args[1], 3)}"
        op = " % " if self.op == "%" else self.op
        return f"{_operand(self.args[0], p)}{op}{_operand(self.args[1], p + 1)}"


def float_op(op: str, *args) -> FloatExpr:
    return FloatExpr(op, tuple(args))


# ``//`` and ``%`` are simplified by the rules of size_division.py, which builds on the Expr above: imported
# last, so that its ``from .symbolic import ...`` finds everything defined.
from .size_division import floordiv, mod  # noqa: E402
