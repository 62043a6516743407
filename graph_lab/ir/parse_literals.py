"""Reading the numbers and constant literals of the printed IR: Python scalars, NumPy scalars and nested lists.

The inverse of ``literals.py``. A constant's dtype comes from the type printed on its line, so each element is
converted for that dtype as it is read: integers are range-checked, floats are rounded as the printer checked
they round back, and a NaN keeps its exact bits. ``LiteralParser`` is a base of ``ValueParser``
(``parse_values.py``), whose token helpers (``lex``, ``error``, ``expect``, ``accept``, ``int_of``,
``check_depth``) it uses.
"""

from __future__ import annotations

import re

import numpy as np

from .lexer import Token
from .literals import float_from_bits, read_float
from .types import TensorType, dtype_name

MAX_CONST_ELEMENTS = 10**6
"""Most elements written inline in one constant or guard literal."""

INT = re.compile(r"-?[0-9]+")


def _row(element: str) -> re.Pattern:
    """After ``[``: plain elements separated by commas, then ``]``, all on one line."""
    return re.compile(rf"[ \t\r]*+((?:{element})(?:[ \t\r]*+,[ \t\r]*+(?:{element}))*+)[ \t\r]*+\]")


# Rows the fast path reads: no NaN, inf or complex elements (the token path reads those, and reports errors).
_ROWS = {"f": _row(r"-?[0-9]++(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?"), "i": _row(r"-?[0-9]++"),
         "u": _row(r"-?[0-9]++"), "b": _row(r"True|False")}


def _overflow_threshold(dtype: np.dtype) -> float:
    """The smallest magnitude that rounds to infinity in ``dtype`` (max plus half an ulp of max)."""
    info = np.finfo(dtype)
    return float(info.max) + 2.0 ** (int(info.maxexp) - int(info.nmant) - 2)


_OVERFLOW = {np.dtype(d): _overflow_threshold(d) for d in (np.float16, np.float32, np.float64)}


class Elements:
    """The elements of one literal, converted for ``dtype`` as they are read. NaNs are stored by their bits on
    the side (``nans``: position in the array viewed as real numbers, bits), since casting a NaN may change it."""

    def __init__(self, dtype: np.dtype):
        self.dtype = dtype
        self.real = np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype
        self.values: list = []
        self.nans: list[tuple[int, int]] = []

    def array(self, shape: tuple[int, ...]) -> np.ndarray:
        with np.errstate(over="ignore"):
            arr = np.array(self.values, dtype=self.dtype).reshape(shape)
        if self.nans:
            flat = arr.reshape(-1).view(self.real).view(f"u{self.real.itemsize}")
            for position, bits in self.nans:
                flat[position] = bits
        return arr


class LiteralParser:
    """The literal rules of the grammar (docs/ir.md)."""

    def python_number(self, tok: Token) -> int | float:
        """An int, or a float read as float64 (NaN with its bits), as a Python number."""
        if INT.fullmatch(tok.text):
            return int(tok.text)
        value, bits = self.real(tok, np.dtype(np.float64))
        return value if bits is None else float_from_bits(bits)

    def python_scalar(self) -> bool | int | float | complex:
        """A weak (Python) scalar of any kind: ``True``, ``3``, ``0.5``, ``complex(1.0, 2.0)``."""
        tok = self.lex.next()
        if tok.kind == "number":
            return self.python_number(tok)
        if tok.kind == "ident" and tok.text in ("True", "False"):
            return tok.text == "True"
        if tok.is_("complex"):
            self.expect("(", "'(' after complex")
            real = self.python_number(self.lex.next())
            self.expect(",", "',' between the real and imaginary parts")
            imag = self.python_number(self.lex.next())
            self.expect(")", "')' closing complex(...)")
            return complex(real, imag)
        raise self.error(tok, "a number, True, False or complex(RE, IM)")

    def const_literal(self, type_: TensorType):
        """A constant of ``type_``: a Python scalar for a weak type, a NumPy scalar (``2.0``) or 0-d array
        (``array(2.0)``) for shape (), nested lists otherwise."""
        if type_.weak is not None:
            tok = self.lex.peek()
            value = self.python_scalar()
            if type(value) is not type_.weak and not (type_.weak is float and type(value) is int):
                raise self.error(tok, f"a literal of the printed type {type_}")
            return type_.weak(value)
        elements = Elements(type_.dtype)
        if type_.shape == ():
            if not self.accept("array"):
                self.element(elements)
                return elements.array(())[()]
            self.expect("(", "'(' after array")
            self.element(elements)
            self.expect(")", "')' closing array(...)")
            return elements.array(())
        open_tok = self.lex.peek()
        if not open_tok.is_("["):
            raise self.error(open_tok, f"a nested list of the {type_} constant's elements")
        if not all(type(d) is int for d in type_.shape):
            raise self.error(open_tok, f"a constant of static sizes (its type {type_} has symbolic ones)")
        literal_shape = self.nested_list(elements, depth=1, limit=min(MAX_CONST_ELEMENTS, type_.size))
        expected = _literal_shape(type_.shape)
        if literal_shape != expected:
            raise self.error(open_tok, f"nested lists of shape {expected} (from the type {type_})",
                             f"shape {literal_shape}")
        return elements.array(type_.shape)

    def nested_list(self, elements: Elements, depth: int, limit: int) -> tuple[int, ...]:
        """``[...]`` of elements or of equally shaped lists; returns the shape written. At most ``limit``
        elements are read, so a literal longer than its type says stops early."""
        open_tok = self.expect("[")
        self.check_depth(open_tok, depth)
        row = self.plain_row(elements)
        if row is not None:
            if len(elements.values) > limit:
                raise self.error(open_tok, f"at most {limit} elements in this literal (the size of its type, "
                                          f"at most {MAX_CONST_ELEMENTS})", f"more than {limit}")
            return (row,)
        if self.accept("]"):
            return (0,)
        item_shape, count = None, 0
        while True:
            tok = self.lex.peek()
            if tok.is_("["):
                shape = self.nested_list(elements, depth + 1, limit)
            else:
                shape = ()
                self.element(elements)
                if len(elements.values) > limit:
                    raise self.error(tok, f"at most {limit} elements in this literal (the size of its type, "
                                              f"at most {MAX_CONST_ELEMENTS})", f"more than {limit}")
            if item_shape is not None and shape != item_shape:
                raise self.error(tok, f"an item of shape {item_shape} like the first (lists are rectangular)",
                                 f"shape {shape}")
            item_shape, count = shape, count + 1
            tok = self.lex.next()
            if tok.is_("]"):
                return (count,) + item_shape
            if not tok.is_(","):
                raise self.error(tok, "',' or ']' in the list")

    def plain_row(self, elements: Elements) -> int | None:
        """The fast path for a row of plain numbers or bools (how most of a big constant is written): one regular
        expression match, then a conversion per element. Returns the row's length, or None to read the row by
        tokens: one with NaN, inf or complex elements, or with an error that the token path reports exactly."""
        pattern = _ROWS.get(elements.dtype.kind)
        m = self.lex.match_raw(pattern) if pattern is not None else None
        if m is None:
            return None
        pieces = m.group(1).split(",")
        kind = elements.dtype.kind
        if kind == "b":
            values = [piece.strip() == "True" for piece in pieces]
        elif kind == "f":
            values = [float(piece) for piece in pieces]
            if max(map(abs, values)) >= _OVERFLOW[elements.dtype]:
                return None
        else:
            values = [int(piece) for piece in pieces]
            info = np.iinfo(elements.dtype)
            if min(values) < info.min or max(values) > info.max:
                return None
        self.lex.skip_to(m.end())
        elements.values.extend(values)
        return len(values)

    def element(self, elements: Elements) -> None:
        """One element of ``elements.dtype``: ``True``, ``-3``, ``0.1``, ``nan``, ``complex(1.0, 2.0)``."""
        tok = self.lex.next()
        dtype = elements.dtype
        if dtype.kind == "b":
            if not (tok.is_("True") or tok.is_("False")):
                raise self.error(tok, "True or False (a bool element)")
            elements.values.append(tok.text == "True")
        elif dtype.kind in "iu":
            value = self.int_of(tok, f"an integer (an {dtype_name(dtype)} element)")
            info = np.iinfo(dtype)
            if not info.min <= value <= info.max:
                raise self.error(tok, f"an integer from {info.min} to {info.max} ({dtype_name(dtype)})")
            elements.values.append(value)
        elif dtype.kind == "f":
            elements.values.append(self.real_element(tok, elements, len(elements.values)))
        else:
            if not tok.is_("complex"):
                raise self.error(tok, "complex(RE, IM) (a complex element)")
            self.expect("(", "'(' after complex")
            real = self.real_element(self.lex.next(), elements, 2 * len(elements.values))
            self.expect(",", "',' between the real and imaginary parts")
            imag = self.real_element(self.lex.next(), elements, 2 * len(elements.values) + 1)
            self.expect(")", "')' closing complex(...)")
            elements.values.append(complex(real, imag))

    def real_element(self, tok: Token, elements: Elements, position: int) -> float:
        value, bits = self.real(tok, elements.real)
        if bits is not None:
            elements.nans.append((position, bits))
        return value

    def real(self, tok: Token, dtype: np.dtype) -> tuple[float, int | None]:
        """A real number for ``dtype``: ``(value, nan_bits)``; refuses a finite number that would round to inf."""
        if tok.kind != "number":
            raise self.error(tok, f"a number (a {dtype_name(dtype)} value)")
        try:
            value, bits = read_float(tok.text, dtype)
        except ValueError as e:
            raise self.error(tok, f"a NaN of {dtype_name(dtype)}", detail=str(e)) from None
        if bits is None and abs(value) >= _OVERFLOW[dtype] and "inf" not in tok.text:
            raise self.error(tok, f"a number within {dtype_name(dtype)}'s range")
        return value, bits


def _literal_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """How far nested lists can show a shape: ``tolist()`` of an empty array stops at its first size 0."""
    for i, d in enumerate(shape):
        if d == 0:
            return shape[:i + 1]
    return shape
