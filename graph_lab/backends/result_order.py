"""A kernel's results are C-ordered; NumPy's take the memory order of their operands: where these differ, the
group runs NumPy's own calls instead.

A ufunc's result takes its memory order from its operands (``order="K"``): an F-ordered argument, a transpose, or
a 2-D ``diagonal`` whose axes come out swapped give an F-ordered result. A fused kernel computes the same values
into C-ordered memory, and the difference shows in the last bits of whatever adds them up afterwards: a ``sum`` or
``mean`` at the end of the kernel (it adds in C order, NumPy in memory order), or a reduction or matmul after it.
NumPy keeps C order when every operand's strides already decrease (in absolute value) along its axes of more than
one element: C-contiguous arrays, slices of them, reversed axes, 1-D arrays of any stride (measured on NumPy 2.4
and 2.5; a C-ordered operand also wins over an F-ordered one there, a case left to NumPy here, which is always
right).

So a kernel call checks its operands: a C-contiguous one costs nothing more (its flag is tested already, to decide
whether to copy it); any other must keep C order, or the call runs the group's nodes through their NumPy
implementations instead (the graph's own calls, in its order: eager's bits and eager's layout).
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Node
from ..ops import Op, opdef


def keeps_c_order(a: np.ndarray) -> bool:
    """Whether NumPy's elementwise result of ``a`` (not C-contiguous) is C-ordered: its strides over axes of more
    than one element are non-zero and strictly decrease in absolute value (a broadcast view counts as not)."""
    strides = [abs(s) for s, n in zip(a.strides, a.shape) if n > 1]
    return 0 not in strides and all(s > t for s, t in zip(strides, strides[1:]))


def numpy_calls(nodes: list[Node], inputs: list, outputs: list) -> callable:
    """A function ``(*arrays, out=None)`` computing the group's ``outputs`` from its ``inputs`` with the NumPy
    implementation of each of its ``nodes`` (what the graph's codegen would run), into ``out`` when given."""
    steps = [(opdef(n.op).impl, n.inputs, n.attrs, n.outputs, opdef(n.op).multi_output) for n in nodes]
    # (a Python number the kernel has in its C source is a constant of the graph, not an operand)
    constants = {v: v.node.attrs["value"] for n in nodes for v in n.inputs if v.node.op == Op.CONST}

    def run(*arrays, out=None):
        env = {**constants, **dict(zip(inputs, arrays))}
        for impl, ins, attrs, outs, multi_output in steps:
            result = impl(*[env[v] for v in ins], **attrs)
            for v, r in zip(outs, result if multi_output else (result,)):
                env[v] = r
        results = [env[v] for v in outputs]
        given = out if type(out) is tuple else (out,) * (out is not None)
        for k, o in enumerate(given):
            if o is not None:
                np.copyto(o, results[k])
                results[k] = o
        return results[0] if len(results) == 1 else tuple(results)

    return run
