"""Memory inside one C program call (``c_programs``): which statements need scratch memory, and where the
temporary arrays that only the program reads live.

A statement reading the buffer it writes elsewhere than at the written element computes into scratch memory
first (NumPy computes the right-hand side before it writes). A *temporary* (arithmetic that only statements read,
such as ``alpha * A[:i + 1]`` before its product in ``syrk_lower``) that only this program's statements read needs
no array of its own: it lives in one block of memory the call allocates, at an offset planned here, and a slot
is used again once its last reader has run. (An array per temporary cost a NumPy allocation and a pointer
conversion each, about 1.5 us, 100 times a call in ``syrk_lower``: more than the C function's own work.)
"""

from __future__ import annotations

from ..ops import Op
from .roll_reads import is_rolled

ALIGNMENT = 64
"""Each temporary starts at a multiple of this many bytes (a cache line), as a vector load likes."""


def interval(offset: int, strides: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, int] | None:
    """The lowest and highest element a layout touches (None when it touches none)."""
    if any(n == 0 for n in shape):
        return None
    low = offset + sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    high = offset + sum(max(0, (n - 1) * s) for n, s in zip(shape, strides))
    return low, high


def overlap(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
    return a is not None and b is not None and a[0] <= b[1] and b[0] <= a[1]


def needs_scratch(s, buffer_of: dict) -> bool:
    """True when the right-hand side of statement ``s`` reads elements of the written buffer other than, at each
    iteration, the one the iteration writes (NumPy reads the whole right-hand side before writing)."""
    if s.made:
        return False  # (new memory: nothing reads it yet)
    written = buffer_of[s.base]
    target = interval(*s.write, s.shape)
    for source, layout in s.leaves.values():
        offset, strides = layout[0], layout[1]
        if buffer_of.get(source) != written or target is None:
            continue
        if (offset, strides) == s.write and not is_rolled(layout):
            continue  # element for element: each is read before it is written
        read = interval(offset, strides, s.shape)
        if read is not None and read[0] <= target[1] and target[0] <= read[1]:
            return True
    return False


def place_temporaries(run: list, inside: set[int], returned: set[int]) -> tuple[dict, int]:
    """``(value -> byte offset, bytes in all)`` for the temporaries of ``run`` that no node outside the program
    reads and no update writes into (``inside``: the ids of the nodes the program computes, its views too)."""
    last_read: dict = {}
    for k, s in enumerate(run):
        for v in s.sources():
            last_read[v] = k
    slots: list[list] = []  # [bytes, statement after which the slot is free, its temporaries]
    for k, s in enumerate(run):
        v = s.result
        if s.base is not None or id(v) in returned or not all(id(u) in inside for u in v.users) or \
                any(u.op == Op.INDEX_UPDATE and u.inputs[0] is v for u in v.users):
            continue  # (read outside, or updated in place: its memory lives on as a later version)
        size = -(-v.type.size * v.type.dtype.itemsize // ALIGNMENT) * ALIGNMENT
        slot = next((slot for slot in slots if slot[1] < k), None)
        if slot is None:
            slot = [0, 0, []]
            slots.append(slot)
        slot[0], slot[1] = max(slot[0], size), last_read.get(v, k)
        slot[2].append(v)
    offsets, total = {}, 0
    for size, _, values in slots:
        offsets.update(dict.fromkeys(values, total))
        total += size
    return offsets, total
