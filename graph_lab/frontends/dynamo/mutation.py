"""Functionalization: writes into the caller's arrays, recorded as pure ops and written back when a graph ends.

A write into an array the function did not create (an argument, ``self.cache_k``, a global, an item of a list
argument) is recorded the way a write into a fresh array is (``Tensor._write``: ``index_update`` and friends, the
stand-in given the new value), and the array's final value becomes one more output of the graph. When the graph
has run, that output is copied into the caller's array object, in place (``write_back``), before any Python that
comes after it runs (the instruction at a break, or the return): its identity, and every view the caller holds
of it, see the change as in eager code. This is TorchDynamo and AOTAutograd's ``copy_`` epilogue.

The graph reads each input array once, so a write is only recorded when no other array the graph reads may share
memory with the written one; the guards say so on each call (``writeable``, ``disjoint``), and a capture that
finds such an overlap, or a read-only array, breaks the graph there instead, with the reason.
"""

from __future__ import annotations

import operator

import numpy as np

from ..tensor import Tensor
from . import loop_index, masked, writeback
from .frame import BreakGraph
from .internal_errors import raises_for_the_program
from .guard_set import Guard
from .sources import AttrSource, ItemSource


class InputWrites:
    """The arrays of one capture's inputs, and which of them the graph writes into."""

    def __init__(self, guards, loc):
        self.guards = guards
        self.loc = loc  # () -> the user's line being captured
        self.inputs: dict[int, tuple] = {}
        """id(Storage of an input array) -> (its stand-in, source, the array)."""
        self.written: dict[int, tuple] = {}
        """The entries of ``inputs`` the graph writes into, in the order of their first write."""

    def __bool__(self) -> bool:
        return bool(self.written)

    def source_of(self, t: Tensor):
        """The source of an input array's own stand-in (written into or not), or None."""
        entry = self.inputs.get(id(t._storage))
        return entry[1] if entry is not None and entry[0] is t else None

    def add_input(self, t: Tensor, source, array: np.ndarray) -> None:
        """A new input array: it must not overlap an array the graph already writes into."""
        for _, written_source, written in self.written.values():
            if np.may_share_memory(array, written):
                raise BreakGraph(f"{source.describe()} may share memory with {written_source.describe()}, which "
                                 f"this graph writes into; a graph reads each array once, so it would miss the "
                                 f"write", "pass arrays that do not overlap, or accept the break")
        self.inputs[id(t._storage)] = (t, source, array)

    def allow(self, root: Tensor) -> None:
        """``root`` (an input's stand-in) is about to be written: record it, or break when it cannot be."""
        key = id(root._storage)
        if key in self.written:
            return
        entry = self.inputs.get(key)
        if entry is None:  # (a number read from the inputs, or an input of another kind)
            raise BreakGraph(f"in-place write into {root._storage.is_input}, which graph_lab cannot write back",
                             "the write runs as ordinary Python between two graphs")
        _, source, array = entry
        if not array.flags.writeable:
            raise BreakGraph(f"in-place write into {source.describe()}, a read-only array",
                             "NumPy raises here; it runs as ordinary Python")
        for other_key, (_, other_source, other) in self.inputs.items():
            if other_key != key and np.may_share_memory(array, other):
                raise BreakGraph(f"in-place write into {source.describe()}, which may share memory with "
                                 f"{other_source.describe()}: a graph reads each array once, so a write through "
                                 f"one would not be seen through the other",
                                 "pass arrays that do not overlap, or accept the break")
        self.written[key] = entry

    def finish(self, maker, regions: bool = False) -> list[tuple]:
        """The write-backs of the segment, ``[(source, output index)]``: each written array's final value is a
        graph output (added through the RecipeMaker ``maker``), or, with ``regions`` (for a backend that cannot
        compute the final value in the caller's array: ``donated_inputs``), for writes into parts of it the
        ``writeback.Regions`` to write. Adds the guards that make them valid."""
        writebacks = []
        for key, (t, source, _) in self.written.items():
            t._check_fresh()
            regions = writeback.plan(t._value, source, maker) if regions else None  # only the written parts
            writebacks.append((source, regions if regions is not None else maker.output(t._value)))
            self.guards.add(Guard("writeable", source, None, None))
        # (after every "writeable" guard: the "disjoint" guards in one run are checked as one block, overlap.py)
        checked = set()  # the pairs of arrays guarded to be disjoint (one guard per pair: the test is symmetric)
        for key, (t, source, _) in self.written.items():
            for other_key, (_, other_source, _) in self.inputs.items():
                if other_key != key and (other_key, key) not in checked:
                    checked.add((key, other_key))
                    self.guards.add(Guard("disjoint", source, other_source, None))
        return writebacks


def _number_from_inputs(var) -> bool:
    return var.source is not None and type(var.value) is int


def store_key(ctx, key, t=None):
    """The key of ``x[key] = v`` into a stand-in. An int read from the inputs (``self.cache[:, self.pos] = k``)
    is an operand of the graph, not a constant guarded to stay the same: a decoder writing at a growing position
    reuses one graph. (Only for stores: ``x[i]`` read with an index array would be a copy, not NumPy's view.)"""
    value = key.value
    if isinstance(value, Tensor):
        return value
    if t is not None and (with_loop_variable := loop_index.index_key(ctx, t, key)) is not None:
        return with_loop_variable
    if _number_from_inputs(key):
        return ctx.operand(key)
    items = ctx.containers.items(value) if type(value) is tuple and key.source is None else None
    if items is None or not any(_number_from_inputs(v) for v in items):
        return ctx.use(key)
    return tuple(ctx.operand(v) if _number_from_inputs(v) else v.value if isinstance(v.value, Tensor) else ctx.use(v)
                 for v in items)


def store_into(ctx, t: Tensor, key, value) -> None:
    """``t[key] = value`` into a stand-in; with a boolean mask, a ``where`` when it can be (``masked.py``)."""
    k, v = store_key(ctx, key, t), ctx.operand(value)
    if not (masked.is_mask_of(k, t) and ctx._run(masked.store, (t, k, v), {})):
        ctx._run(operator.setitem, (t, k, v), {})


def stores_itself(ctx, obj, key, value, item: bool = False) -> bool:
    """Whether ``obj.key = value`` (``obj[key] = value``: ``item``) on an object read from the inputs stores the
    array that is there already, as the second half of ``self.a += v`` or ``d["b"] += x`` does after the write
    into the array itself: nothing changes, so no side effect is left for Python to run."""
    t = value.value
    if type(t) is not Tensor or obj.source is None:
        return False
    if item:
        if type(obj.value) not in (list, dict) or isinstance(key, Tensor):
            return False
        try:
            current = obj.value[key]
        except (LookupError, TypeError):
            return False
    else:
        current = getattr(obj.value, "__dict__", {}).get(key)
    if type(current) is not np.ndarray or id(current) not in ctx.arrays_by_id:
        return False
    # read through its own source, which guards it to be that array on later calls too
    where = ItemSource(obj.source, key) if item else AttrSource(obj.source, key)
    return ctx.tensor_input(current, where) is t


@raises_for_the_program
def copyto(dst: Tensor, src, casting: str = "same_kind", where=True) -> None:
    """``np.copyto(dst, src)`` into a stand-in: ``dst[...] = src`` (with ``where``, a select), NumPy's casting
    rule checked first."""
    src_dtype = src.dtype if isinstance(src, (Tensor, np.ndarray, np.generic)) else np.result_type(src)
    if not np.can_cast(src_dtype, dst.dtype, casting):
        raise TypeError(f"Cannot cast array data from {src_dtype} to {dst.dtype} according to the rule "
                        f"{casting!r}")
    if where is True:
        dst[...] = src
    else:
        dst[...] = np.where(where, src, dst)


def write_back(writebacks: list[tuple], inputs, outs: list) -> None:
    """Copy each written array's final value into the caller's array (in place: its views see it)."""
    for source, index in writebacks:
        if writeback.is_region(index):
            index.write(source.fetch(inputs), outs, *[s.fetch(inputs) for _, s, _ in index.symbols])
        else:
            copy_back(source.fetch(inputs), outs[index])


def copy_back(array: np.ndarray, final) -> None:
    """``np.copyto(array, final)``, unless the graph computed ``final`` in ``array`` itself (it was donated)."""
    if final is not array:
        np.copyto(array, final)


def donated_inputs(seg) -> dict[str, int]:
    """The graph inputs whose arrays a segment's write-backs overwrite: input name -> the output copied into it.
    The backend may compute those outputs in the arrays themselves (``backends/inplace.py``): nothing reads an
    array of the caller's between the graph and its write-back."""
    names = seg.input_names if seg.input_names is not None else seg.graph.input_names
    by_source = dict(zip(seg.input_sources, names))
    return {by_source[source]: index for source, index in seg.writebacks
            if source in by_source and not writeback.is_region(index)}
