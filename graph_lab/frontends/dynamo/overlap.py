"""The ``disjoint`` guards of a segment, checked as one block: which arrays own the memory they show.

A graph that writes into a caller's array is valid only while that array shares no memory with any other array
the graph reads (``mutation.py``). That is one guard per pair, and a decode step that writes four caches and
reads thirty weights has a hundred of them; ``np.may_share_memory`` on each pair would cost more than the step's
NumPy work. Most arrays own their memory, though, and two arrays that each own their memory cannot overlap. So
the block first asks each array once for the array that owns its memory (``a.base``: NumPy points a view's base
at the array that owns the data); when every array's owner is an array with ``OWNDATA`` set and no two owners
are the same, no pair can overlap. Otherwise each pair is tested as before, in the guards' order, so the block
answers with the first failing guard, exactly as the pairwise checks would.

An owner that is not an ndarray owning its data (a ``bytes`` or ``mmap`` buffer, an array made on foreign
memory) may hold anyone's memory: its arrays are always tested pair by pair.
"""

from __future__ import annotations

import numpy as np

MIN_BLOCK = 2
"""A single ``disjoint`` guard is written as one ``may_share`` test."""


def disjoint_blocks(guards: list) -> dict[int, int]:
    """``{first: end}`` for each run of at least MIN_BLOCK consecutive ``disjoint`` guards."""
    blocks: dict[int, int] = {}
    n = 0
    while n < len(guards):
        end = n
        while end < len(guards) and guards[end].kind == "disjoint":
            end += 1
        if end - n >= MIN_BLOCK:
            blocks[n] = end
        n = max(end, n + 1)
    return blocks


def block_layout(guards: list) -> tuple[list, tuple]:
    """``(sources, pairs)`` of a block of ``disjoint`` guards: each source once, in the order the guards read
    them, and for each guard the positions of its two arrays among them."""
    sources: list = []
    position: dict = {}
    pairs = []
    for g in guards:
        for s in (g.source, g.expected):
            if s not in position:
                position[s] = len(sources)
                sources.append(s)
        pairs.append((position[g.source], position[g.expected]))
    return sources, tuple(pairs)


def first_overlap(arrays: tuple, pairs: tuple) -> int:
    """The index in ``pairs`` of the first pair ``(i, j)`` whose arrays may share memory, or -1 if none does
    (``np.may_share_memory`` of each pair, in order; see the module's docstring for the shortcut)."""
    if _owners_apart(arrays):
        return -1
    owners = [_sole_owner(a) for a in arrays]
    for k, (i, j) in enumerate(pairs):
        a, b = owners[i], owners[j]
        if (a is None or b is None or a is b) and np.may_share_memory(arrays[i], arrays[j]):
            return k
    return -1


def _owners_apart(arrays: tuple) -> bool:
    """Whether each of ``arrays`` is an ndarray whose memory is owned by an ndarray, and no two by the same."""
    ndarray = np.ndarray
    seen = set()
    for a in arrays:
        if type(a) is not ndarray:
            return False
        owner = a.base
        if owner is None:
            owner = a
        if type(owner) is not ndarray or not owner.flags.owndata:
            return False
        seen.add(id(owner))
    return len(seen) == len(arrays)


def _sole_owner(a):
    """The ndarray that owns ``a``'s memory, or None when no ndarray does (or ``a`` is no ndarray)."""
    if type(a) is not np.ndarray:
        return None
    owner = a if a.base is None else a.base
    return owner if type(owner) is np.ndarray and owner.flags.owndata else None
