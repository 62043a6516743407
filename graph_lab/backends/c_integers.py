"""Integers in C kernels and C programs: NumPy's integer semantics written as C expressions.

NumPy's integer loops are C loops over the element type, and their results are defined on every input:

- ``+ - *``, ``negative``, ``absolute`` and ``square`` wrap around on overflow (``int8(127) + 1`` is ``-128``).
  Signed overflow is undefined in C, so a kernel computes them in an unsigned type (``uint32_t`` for 8 to 32
  bits, ``uint64_t`` for 64), where C promises the wraparound, and converts the result back (GCC converts to a
  signed type modulo 2**bits, as NumPy's own C casts do).
- ``left_shift`` and ``right_shift`` by a count at least the bit width, or negative, give 0 (``-1`` for a
  negative number shifted right), as NumPy's ``npy_lshift``/``npy_rshift`` do; C's ``<<`` is undefined there.
- ``& | ^ ~``, comparisons, ``maximum``/``minimum``/``clip``, ``where`` and the casts between integers, bools
  and from integers to floats are C's own operators and conversions, which NumPy's loops use too.

What a kernel refuses (``why_not_integer``), and why:

- a cast from a float to an integer: NaN, infinities and values out of range are undefined in C, and NumPy's
  result for them depends on the CPU and on which of its loops runs;
- ``floor_divide`` and ``remainder``: NumPy warns on a division by zero (a RuntimeWarning, and 0 as the
  result), which a kernel cannot raise;
- ``power``: NumPy raises on a negative exponent;
- the float ops (``floor``, ``sqrt``, ``exp`` ...) on integers whose result is an integer, and a Python int that
  does not fit the dtype the op computes in (NumPy 2 compares such numbers exactly, and raises for arithmetic).

Every expression takes its operands already converted to the dtype the op computes in (``c_kernels``).
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Node
from ..ops import Op

INTEGER_C_TYPES = {np.dtype(t): f"{'u' if np.dtype(t).kind == 'u' else ''}int{8 * np.dtype(t).itemsize}_t"
                   for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)}
"""The integer dtypes a kernel computes in, and their C types (``<stdint.h>``)."""
_DTYPE_OF = {c: d for d, c in INTEGER_C_TYPES.items()}


def is_integer_ctype(ctype: str) -> bool:
    return ctype in _DTYPE_OF


def _bits(ctype: str) -> int:
    return 8 * _DTYPE_OF[ctype].itemsize


def _signed(ctype: str) -> bool:
    return _DTYPE_OF[ctype].kind == "i"


def _wide(ctype: str) -> str:
    """The unsigned type the wrapping arithmetic of ``ctype`` is done in (never promoted to a signed int)."""
    return "uint64_t" if _bits(ctype) == 64 else "uint32_t"


def integer_literal(value, ctype: str) -> str:
    """An exact C literal of the Python int (or bool) ``value`` in ``ctype``; ValueError if it does not fit."""
    v = int(value)
    info = np.iinfo(_DTYPE_OF[ctype])
    if not info.min <= v <= info.max:
        raise ValueError(f"{v} does not fit {_DTYPE_OF[ctype]}")
    if v == -2 ** 63:  # (9223372036854775808 has no signed 64-bit literal)
        return "((int64_t)(-9223372036854775807LL - 1))"
    return f"(({ctype}){v}{'ULL' if v > 2 ** 63 - 1 else 'LL' if abs(v) > 2 ** 31 - 1 else ''})"


def fits(value, dtype: np.dtype) -> bool:
    """A Python int or bool a kernel can write as a number of ``dtype``."""
    if dtype.kind not in "iu":
        return True
    info = np.iinfo(dtype)
    return info.min <= int(value) <= info.max


def _wrapping(symbol: str):
    def expression(a, t):
        w = _wide(t)
        return f"(({t})(({w}){a[0]} {symbol} ({w}){a[1]}))"
    return expression


def _negative(a, t):
    return f"(({t})(({_wide(t)})0 - ({_wide(t)}){a[0]}))"


def _absolute(a, t):
    if not _signed(t):
        return a[0]
    w = _wide(t)
    return f"(({t})({a[0]} < 0 ? ({w})0 - ({w}){a[0]} : ({w}){a[0]}))"


def _sign(a, t):
    if not _signed(t):
        return f"(({t})({a[0]} > 0))"
    return f"(({t})(({a[0]} > 0) - ({a[0]} < 0)))"


def _left_shift(a, t):  # npy_lshift: a count outside 0 .. bits - 1 (a negative one as a huge unsigned) gives 0
    return f"((uint64_t){a[1]} < {_bits(t)} ? (({t})(({_wide(t)}){a[0]} << {a[1]})) : (({t})0))"


def _right_shift(a, t):  # npy_rshift: beyond the width, -1 for a negative signed number, else 0
    beyond = f"({a[0]} < 0 ? (({t})-1) : (({t})0))" if _signed(t) else f"(({t})0)"
    return f"((uint64_t){a[1]} < {_bits(t)} ? (({t})({a[0]} >> {a[1]})) : {beyond})"


INTEGER_OPS = {
    Op.ADD: _wrapping("+"),
    Op.SUB: _wrapping("-"),
    Op.MUL: _wrapping("*"),
    Op.SQUARE: lambda a, t: _wrapping("*")([a[0], a[0]], t),
    Op.NEG: _negative,
    Op.ABS: _absolute,
    Op.SIGN: _sign,
    Op.BITWISE_AND: lambda a, t: f"(({t})({a[0]} & {a[1]}))",
    Op.BITWISE_OR: lambda a, t: f"(({t})({a[0]} | {a[1]}))",
    Op.BITWISE_XOR: lambda a, t: f"(({t})({a[0]} ^ {a[1]}))",
    Op.INVERT: lambda a, t: f"(({t})({a[0]} ^ -1))",  # ~x: every bit flipped
    Op.LEFT_SHIFT: _left_shift,
    Op.RIGHT_SHIFT: _right_shift,
}
"""Integer ops whose C differs from the float one (or has none): op -> function(operands, C type) -> C."""
COMPARISONS = frozenset({Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE})
SHARED_OPS = COMPARISONS | frozenset({Op.MAXIMUM, Op.MINIMUM, Op.CLIP, Op.WHERE, Op.COPY, Op.CAST,
                                      Op.LOGICAL_NOT, Op.LOGICAL_AND, Op.LOGICAL_OR, Op.LOGICAL_XOR})
"""Ops whose float expression in ``c_kernels.C_OPS`` is right for integers too (its NaN tests are never true)."""
INTEGER_ONLY = frozenset({Op.BITWISE_AND, Op.BITWISE_OR, Op.BITWISE_XOR, Op.INVERT, Op.LEFT_SHIFT,
                          Op.RIGHT_SHIFT})
"""Ops a kernel computes on integers only (on bools the frontend records the logical ops)."""


def why_not_integer(node: Node, compute: np.dtype, literals: list) -> str | None:
    """Why ``node`` cannot be computed by a kernel, for a node that computes in an integer dtype ``compute``, makes
    one, or reads one; None when it can (and for any other node). ``literals``: the Python numbers it reads,
    written into the source."""
    out = node.output.type.dtype
    if node.op == Op.CAST:
        source = node.inputs[0].type.dtype
        if source.kind == "f" and out.kind in "iu":
            return (f"a cast from {source} to {out} (NaN, infinities and values out of range are undefined in C, "
                    f"and NumPy's result for them depends on the CPU)")
        return None
    if node.op in COMPARISONS and compute.kind == "f" and all(v.type.weak is None and v.type.dtype.kind in "iu"
                                                               for v in node.inputs):
        return (f"a comparison of {' and '.join(str(v.type.dtype) for v in node.inputs)} (NumPy compares them "
                f"exactly, not in {compute})")
    if compute.kind in "iu":
        if node.op not in INTEGER_OPS and node.op not in SHARED_OPS:
            return f"{node.op} on {compute} (no integer kernel expression: {_WHY_NOT.get(node.op, 'a float op')})"
        for value in literals:
            if not fits(value, compute):
                return f"the Python int {value} does not fit {compute}, which {node.op} computes in"
        return None
    if node.op in INTEGER_ONLY:
        return f"{node.op} on {compute}"
    return None


_WHY_NOT = {
    Op.FLOORDIV: "NumPy warns on a division by zero, which a kernel cannot",
    Op.MOD: "NumPy warns on a division by zero, which a kernel cannot",
    Op.POW: "NumPy raises on a negative exponent",
}
