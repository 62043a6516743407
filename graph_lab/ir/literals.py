"""Literal values in the printed IR: strings, numbers, constants, attribute values.

The printer writes every value so that the parser (``ir/parser.py``) reads back the same bits, and the text stays
what a student would type: ``0.1`` for a float32 0.1 (not ``0.10000000149011612``), ``inf``, ``-0.0``. The few
values Python's ``repr`` cannot tell apart get a form of their own (see docs/ir.md, "Literals"):

    nan, -nan          the quiet NaN of the dtype, and the same with the sign bit set (what 0 * inf gives on x86)
    nan(0x7ff4...)     any other NaN, as the bit pattern of its dtype
    complex(1.0, 2.0)  a complex number (real and imaginary parts each as above)
    array(2.0)         a 0-d array constant (a bare ``2.0`` with type ``f64[]`` is a NumPy scalar)
    f32(0.5)           a NumPy scalar in an attribute, where no type on the line says its dtype

The reading side of floats (:func:`read_float`) lives here too, so that the two directions are checked against
each other in one place.
"""

from __future__ import annotations

import math
import re
import struct

import numpy as np

from .symbolic import Expr, FloatExpr
from .types import TensorType, dtype_name

IDENT_RE = re.compile(r"[^\W\d]\w*")
"""A bare word of the IR (op names, dtypes, graph names): letters, digits and ``_``, not starting with a digit."""
KEYWORDS = frozenset({"True", "False", "None", "inf", "nan"})
"""Words that read as values, so a graph with one of these names has its name quoted."""

_F64 = np.dtype(np.float64)
_UINT_OF_WIDTH = {2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


# --- strings and names

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def quote(text: str) -> str:
    """A string literal on one line: ``"`` and ``\\`` escaped, non-printable characters as ``\\n``, ``\\uXXXX``."""
    out = ['"']
    for ch in text:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def format_name(name: str) -> str:
    """A graph name: bare when it is a plain word (``gelu_mlp``), quoted otherwise (``"my model"``)."""
    if IDENT_RE.fullmatch(name) and name not in KEYWORDS:
        return name
    return quote(name)


# --- floats

def _uint_dtype(dtype: np.dtype) -> np.dtype:
    return _UINT_OF_WIDTH[np.dtype(dtype).itemsize]


def float_bits(value, dtype: np.dtype = _F64) -> int:
    """The IEEE bit pattern of ``value`` stored as ``dtype`` (``value`` already has that dtype: no rounding)."""
    return int(np.asarray(value, dtype=dtype).view(_uint_dtype(dtype)))


def quiet_nan_bits(dtype: np.dtype) -> int:
    """The NaN that ``float('nan')`` and ``np.nan`` give: exponent all ones, only the top mantissa bit set."""
    info = np.finfo(dtype)
    return (((1 << info.nexp) - 1) << info.nmant) | (1 << (info.nmant - 1))


def _sign_bit(dtype: np.dtype) -> int:
    return 1 << (8 * np.dtype(dtype).itemsize - 1)


def format_float(value, dtype: np.dtype = _F64) -> str:
    """The shortest text that reads back as the same bits of ``dtype`` (``repr`` for float64, as before)."""
    dtype = np.dtype(dtype)
    if value != value:
        bits = float_bits(value, dtype)
        quiet = quiet_nan_bits(dtype)
        if bits == quiet:
            return "nan"
        if bits == quiet | _sign_bit(dtype):
            return "-nan"
        return f"nan(0x{bits:0{2 * dtype.itemsize}x})"
    if dtype == _F64:
        return repr(float(value))
    short = str(dtype.type(value))  # NumPy's shortest round-trip digits for float32/float16
    with np.errstate(over="ignore"):
        back = dtype.type(float(short))  # the parser's path: decimal -> float64 -> dtype
    if float_bits(back, dtype) == float_bits(value, dtype):
        return short
    return repr(float(value))  # exact too (every float32/float16 is a float64), only longer


def read_float(text: str, dtype: np.dtype = _F64) -> tuple[float, int | None]:
    """``(value, nan_bits)`` for a float literal of the grammar; ``nan_bits`` is the NaN's bit pattern in
    ``dtype`` (None for numbers), since a NaN payload cannot ride on a Python float through a float32 cast.

    The value is correctly rounded to float64 by Python, then to ``dtype`` by the caller. Raises ``ValueError``
    for a NaN pattern that is not a NaN of ``dtype``."""
    dtype = np.dtype(dtype)
    if text in ("nan", "-nan"):
        bits = quiet_nan_bits(dtype) | (_sign_bit(dtype) if text == "-nan" else 0)
        return math.nan, bits
    if text.startswith("nan(0x"):
        bits = int(text[6:-1], 16)
        info = np.finfo(dtype)
        exponent_ones = ((1 << info.nexp) - 1) << info.nmant
        if bits >> (8 * dtype.itemsize) or bits & exponent_ones != exponent_ones or not bits & ((1 << info.nmant) - 1):
            raise ValueError(f"{text} is not the bit pattern of a {dtype_name(dtype)} NaN")
        return math.nan, bits
    return float(text), None


def float_from_bits(bits: int) -> float:
    """A Python float with exactly these float64 bits (a NaN keeps its sign and payload)."""
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


# --- scalars, constants, attribute values

def format_scalar(value, dtype: np.dtype) -> str:
    """One element of ``dtype``: ``True``, ``-3``, ``0.1``, ``complex(1.0, -0.0)``."""
    dtype = np.dtype(dtype)
    kind = dtype.kind
    if kind == "b":
        return "True" if value else "False"
    if kind in "iu":
        return str(int(value))
    if kind == "f" and dtype.itemsize in _UINT_OF_WIDTH:
        return format_float(value, dtype)
    if kind == "c" and dtype.itemsize // 2 in _UINT_OF_WIDTH:
        part = np.dtype(f"f{dtype.itemsize // 2}")
        return f"complex({format_float(value.real, part)}, {format_float(value.imag, part)})"
    return repr(value)  # no literal for this dtype (longdouble, ...): the parser refuses it, and save() too


def format_python_scalar(value) -> str:
    """A Python bool, int, float or complex (a weak scalar)."""
    if isinstance(value, (bool, int, float, complex)):
        return format_scalar(value, TensorType.of(value).dtype)
    return repr(value)


def format_const(value) -> str:
    """A constant whose type is printed beside it: ``0.5``, ``[[1, 2], [3, 4]]``, ``array(2.0)`` for 0-d."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return f"array({format_scalar(value[()], value.dtype)})"
        return _nested(_format_elements(value), value.shape)
    if isinstance(value, np.generic):
        return format_scalar(value, value.dtype)
    return format_python_scalar(value)


def _format_elements(array: np.ndarray) -> list[str]:
    """Every element in C order (``tolist`` is the fast path where it is exact and readable)."""
    if array.dtype.kind in "biu":
        return [str(x) for x in array.reshape(-1).tolist()]
    if array.dtype == _F64:
        return [repr(x) if x == x else format_float(x) for x in array.reshape(-1).tolist()]
    return [format_scalar(x, array.dtype) for x in array.flat]


def _nested(items: list[str], shape: tuple[int, ...]) -> str:
    """Nested brackets as ``tolist`` nests them: ``[[], []]`` for shape (2, 0, 3), ``[]`` for (0, 3)."""
    if len(shape) == 1:
        return "[" + ", ".join(items) + "]"
    step = len(items) // shape[0] if shape[0] else 0
    inner = (_nested(items[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0]))
    return "[" + ", ".join(inner) + "]"


def format_attr_value(value) -> str:
    """An attribute value: number, bool, None, string, dtype (``f32``), NumPy scalar (``f32(0.5)``), tuple."""
    if isinstance(value, np.dtype):
        return dtype_name(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, tuple):
        inner = ", ".join(format_attr_value(x) for x in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, np.generic):
        return f"{dtype_name(value.dtype)}({format_scalar(value, value.dtype)})"
    if isinstance(value, (bool, int, float, complex)):
        return format_python_scalar(value)
    if isinstance(value, (Expr, FloatExpr)):
        return str(value)  # a symbolic size: d//2 (docs/ir.md, "Symbolic sizes")
    return repr(value)


def format_expected(value) -> str:
    """The outcome a value guard expects: a Python scalar, or an array written with its type first."""
    if isinstance(value, np.ndarray):
        return f"{TensorType.of(value)} {format_const(value)}"
    return format_python_scalar(value)
