"""``return int(total)``: a Python number made from a 0-d tensor and returned at once, without a graph break.

``int(t)`` (``float``, ``bool``, ``complex``) of a stand-in needs the tensor's value, so capture breaks there:
Python may branch on the number, print it, keep it. When the very next instruction of the compiled function's own
frame is its ``return``, nothing can: the number goes straight to the caller. Then the tensor is one more output
of the graph and the result's recipe converts it (``("convert", int, recipe of t)``, ``segment.Rebuilder``)
after the graph has run and its writes are in the caller's arrays, as eager code converts it after computing it.
A kernel that updates its arrays in a loop and returns ``int(grid.sum())`` is one graph.

Only in the outermost frame (an inlined function's ``return`` hands the number to its caller, which may do
anything with it) and only for a 0-d tensor (``int`` of a one-element array of more dimensions warns in NumPy).
"""

from __future__ import annotations

from ..tensor import Tensor

CONVERSIONS = (int, float, bool, complex)
RETURNS = frozenset({"RETURN_VALUE"})


class ReturnedScalar:
    """``convert(tensor)``, to be made when the graph has run: it only ever goes to the frame's ``return``."""

    __slots__ = ("convert", "tensor")

    def __init__(self, convert, tensor: Tensor):
        self.convert = convert
        self.tensor = tensor


def returned_scalar(frame, f, args: list, kwargs: dict) -> ReturnedScalar | None:
    """A ReturnedScalar for the call ``f(*args)`` when it converts a 0-d stand-in and the compiled function returns
    the result at once, else None (the conversion breaks the graph, as before)."""
    if f not in CONVERSIONS or len(args) != 1 or kwargs or type(args[0].value) is not Tensor:
        return None
    t = args[0].value
    if t.ndim != 0 or frame.parent is not None or frame.yielded is not None or \
            frame.ip >= len(frame.instructions) or frame.instructions[frame.ip].opname not in RETURNS:
        return None
    return ReturnedScalar(f, t)
