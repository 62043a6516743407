"""``x ** 2``, ``x ** -1`` and ``x ** 0.5`` in fused kernels: the ufunc NumPy's ``**`` runs for them.

NumPy's ``ndarray.__pow__`` does not call ``np.power`` for every exponent: for a float (or complex) array and an
exponent that is exactly the Python int ``2`` or ``-1`` or the Python float ``0.5``, it calls ``np.square``,
``np.reciprocal`` or ``np.sqrt`` instead (``fast_scalar_power`` in NumPy's ``number.c``; checked on NumPy 2.4 and
2.5 with an ``__array_ufunc__`` that prints the ufunc it is given: ``x ** 2.0``, ``x ** 1`` and ``np.power(x, 2)``
all call ``power``). Those three are exact IEEE operations (``x * x``, ``1 / x``, a correctly rounded square
root), so a kernel that writes them as such gives NumPy's bits, where libmvec's ``pow`` would be within an ulp
of them at the cost of a transcendental call: the squares of an n-body kernel's ``dx ** 2 + dy ** 2 + dz ** 2``
were three ``pow`` calls per element.

Only the ``**`` spelling (``operator=True``) of a node whose exponent is a literal of the kernel qualifies;
``np.power`` and exponents read at run time keep libm's ``pow``.
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
