"""Python numbers in fused kernels: written into the C source, or read from memory on every call.

A weak Python number next to an array (``lr * g``, ``v * momentum``) is converted by NumPy to the array's dtype
before the loop runs (NEP 50). A kernel does the same conversion in C: ``(float)x`` or ``(double)x`` of the
number as a double, one rounding to nearest, as NumPy's cast from a Python float does.

- A constant of the graph that is not NaN, and an int exact as a double, is written into the source as an exact
  hexadecimal literal (``c_kernels.c_number``): a *literal*.
- Any other Python float (an argument such as a learning rate, which compile() passes to the graph as an input
  rather than baking it in, or a NaN constant) is a *runtime scalar*: the kernel reads it as one float64 element
  (the ``scalar`` pattern of an operand), which the kernel call makes from the number on every call. Without
  this, every op that reads such an argument stayed on NumPy and cut the elementwise chain around it in pieces
  too small to pay for a kernel: an Adam step had two 2-op kernels among 56 ops.

Python ints and bools that are not constants stay outside kernels: an int beyond 2**53 has no exact double, and
NumPy converts it to float32 directly where a double would round twice.
"""

from __future__ import annotations

from ..ir.graph import Value
from ..ops import Op
from .c_kernels import literal_ok


def is_literal(v: Value) -> bool:
    """A weak constant the kernel writes into its source."""
    return v.type.weak is not None and v.node.op == Op.CONST and literal_ok(v.node.attrs["value"])


def is_runtime_scalar(v: Value) -> bool:
    """A weak Python float the kernel reads from memory on each call (an input, a NaN constant)."""
    return v.type.weak is float and not is_literal(v)


def why_not_weak(v: Value) -> str | None:
    """Why the weak operand ``v`` keeps its node out of kernels, or None when a kernel can read it."""
    if is_literal(v) or is_runtime_scalar(v):
        return None
    return (f"a Python {v.type.weak.__name__} that is not a constant (kernels read Python floats, and ints and "
            f"bools written into their source)")
