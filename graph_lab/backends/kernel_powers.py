"""Powers with a constant exponent in fused kernels: ``x ** 2``, ``x ** -1`` and ``x ** 0.5`` as NumPy's ``**``
computes them, ``x ** -1.5`` from a square root and ``x ** 3`` by multiplying.

NumPy's ``ndarray.__pow__`` does not call ``np.power`` for every exponent: for a float (or complex) array and an
exponent that is exactly the Python int ``2`` or ``-1`` or the Python float ``0.5``, it calls ``np.square``,
``np.reciprocal`` or ``np.sqrt`` instead (``fast_scalar_power`` in NumPy's ``number.c``; checked on NumPy 2.4 and
2.5 with an ``__array_ufunc__`` that prints the ufunc it is given: ``x ** 2.0``, ``x ** 1`` and ``np.power(x, 2)``
all call ``power``). Those three are exact IEEE operations (``x * x``, ``1 / x``, a correctly rounded square
root), so a kernel that writes them as such gives NumPy's bits, where libmvec's ``pow`` would be within an ulp
of them at the cost of a transcendental call: the squares of an n-body kernel's ``dx ** 2 + dy ** 2 + dz ** 2``
were three ``pow`` calls per element.

For these three, only the ``**`` spelling (``operator=True``) of a node whose exponent is a literal of the kernel
qualifies; ``np.power`` and exponents read at run time keep libm's ``pow``.

``x ** -1.5`` (the inverse cube of a distance from its square: gravity, Coulomb forces) is ``np.power`` in NumPy,
a transcendental function; a kernel computes it as ``1 / (x * sqrt(x))``: three correctly rounded operations, within
``tolerance.POWER_ULP`` of NumPy's ``power`` (3 ulps in float64, 2 in float32; libmvec's ``pow`` is within 1) for
about 60% of the time (on 10,000 float64 values, measured here: 20 us against 33 us, and NumPy's 26 us). So that ``x * sqrt(x)`` neither
overflows nor loses bits in the subnormal range where ``x ** -1.5`` does not, an ``x`` beyond 2^680 or below 2^-680
(2^84 and 2^-83 in float32) is first scaled by an even power of two, exactly, and the result by the same power to
the -1.5th; NaN, infinities (``-inf ** -1.5`` is ``+0.0``, C's ``pow``), zeros (``-0.0 ** -1.5`` is ``+inf``) and
negative numbers (NaN) come out as NumPy's.

``x ** 3`` (a Lennard-Jones force's ``(1 / r2) ** 3``), ``np.power`` for NumPy whatever the spelling, is
``(x * x) * x`` in a kernel: two roundings, within ``POWER_ULP`` of NumPy's ``power``; ``x * x`` leaves the normal
range only where the cube has overflowed or underflowed to zero already, and signs, zeros, infinities and NaN are
the cube's.
"""

from __future__ import annotations

from ..ir.graph import Node, Value
from ..ops import Op

ARRAY_FAST_POWERS = {(int, 2): Op.SQUARE, (int, -1): Op.RECIPROCAL, (float, 0.5): Op.SQRT}
"""(the exponent's exact Python type, its value) -> the op ``ndarray ** exponent`` runs instead of power."""


def fast_power(node: Node, literals: dict[Value, object]) -> Op | None:
    """The op NumPy runs for this ``pow`` node (``square``, ``reciprocal`` or ``sqrt`` of its base, which a kernel
    computes with that op's expression), or None when it runs ``np.power``. The node's result is an array (a
    kernel loops over it), so its base is one too."""
    if node.op != Op.POW or not node.attrs.get("operator"):
        return None
    base, exponent = node.inputs
    if exponent not in literals or base in literals or base.type.dtype.kind not in "fc" or base.type.ndim == 0:
        return None
    value = literals[exponent]
    return ARRAY_FAST_POWERS.get((type(value), value))


ARITHMETIC_POWERS = {-1.5: "gl_pow_m1_5", 3: "cube"}
"""Exponents that ``np.power`` computes as a transcendental function and a kernel with arithmetic, within
``tolerance.POWER_ULP``: ``x ** -1.5`` by the C helper ``gl_pow_m1_5`` (see the module's docstring), ``x ** 3`` as
``(x * x) * x``."""

_SCALING = {"double": ("0x1p+680", "0x1p-680", "0x1p-600", "0x1p+600", "0x1p-900", "0x1p+900"),
            "float": ("0x1p+84f", "0x1p-83f", "0x1p-60f", "0x1p+60f", "0x1p-90f", "0x1p+90f")}
"""Per C type: above HIGH or below LOW, x is scaled by DOWN or UP (exact) and the result by DOWN ** 1.5 or
UP ** 1.5."""


def arithmetic_power(node: Node, literals: dict[Value, object]) -> str | None:
    """How a kernel computes this ``pow`` node (``x ** -1.5``, ``np.power(x, 3)``...) without ``pow``: an entry of
    ``ARITHMETIC_POWERS``, or None."""
    if node.op != Op.POW:
        return None
    base, exponent = node.inputs
    if exponent not in literals or base in literals or base.type.dtype.kind != "f" or base.type.ndim == 0:
        return None
    value = literals[exponent]
    return ARITHMETIC_POWERS.get(value) if type(value) in (int, float) else None


def without_pow(node: Node, literals: dict[Value, object]) -> bool:
    """Whether a kernel computes this ``pow`` node with arithmetic and square roots, not libm's ``pow``."""
    return fast_power(node, literals) is not None or arithmetic_power(node, literals) is not None


def power_expression(node: Node, operands: list[str], ctype: str, literals: dict[Value, object]) -> str | None:
    """The C of a ``pow`` node a kernel computes without ``pow``, or None."""
    from .c_kernels import C_OPS  # (c_kernels calls this module: imported when first used)
    fast = fast_power(node, literals)
    if fast is not None:
        return C_OPS[fast](operands, ctype)
    how, x = arithmetic_power(node, literals), operands[0]
    if how == "cube":
        return f"(({x} * {x}) * {x})"
    return f"{how}{'f' if ctype == 'float' else ''}({x})" if how else None


def helper_definitions(text: str) -> tuple[str, ...]:
    """The definitions of the helpers that the kernel source ``text`` calls."""
    found = []
    for ctype, suffix in (("double", ""), ("float", "f")):
        if f"gl_pow_m1_5{suffix}(" in text:
            high, low, down, up, down_back, up_back = _SCALING[ctype]
            found.append(
                f"static inline {ctype} gl_pow_m1_5{suffix}({ctype} x) {{\n"
                f"  const {ctype} scale = x > {high} ? {down} : x < {low} ? {up} : 1;\n"
                f"  const {ctype} back = x > {high} ? {down_back} : x < {low} ? {up_back} : 1;\n"
                f"  const {ctype} s = x * scale;\n"
                f"  const {ctype} power = (({ctype})1 / (s * __builtin_sqrt{suffix}(s))) * back;\n"
                f"  return x == -__builtin_inf{suffix}() ? 0 : power;\n"
                f"}}")
    return tuple(found)
