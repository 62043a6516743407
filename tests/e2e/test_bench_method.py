"""The corpus benchmark's method (docs/corpus.md, "Method"): inputs laid out alike for every variant
(``benchmarks/corpus/placement.py``) and the balanced orders and paired ratios of ``benchmarks/harness.py``."""

from __future__ import annotations

import numpy as np

from benchmarks.corpus import CORPUS
from benchmarks.corpus.check import differences, leaves
from benchmarks.corpus.placement import PAGE, placed
from benchmarks.harness import balanced_orders, median_ratio, paired_rounds


def offsets(args) -> list[int]:
    return [a.ctypes.data % PAGE for _, a in leaves(args) if isinstance(a, np.ndarray)]


def test_placed_inputs_equal_the_originals_and_lie_alike_in_every_copy():
    for kernel in CORPUS:
        original = kernel.inputs(small=True)
        first, second = placed(kernel.inputs(small=True)), placed(kernel.inputs(small=True))
        assert differences(original, first, kernel.name) == []
        assert offsets(first) == offsets(second), kernel.name


def test_placed_keeps_containers_objects_and_sharing():
    class Holder:
        pass

    base = np.arange(12.0)
    view = base[2:8]
    holder = Holder()
    holder.w = np.ones(5)
    items = [np.zeros(3), {"m": np.full(4, 2.0)}]
    args = (base, view, items, holder, 7, np.array([1, 2], dtype=np.int8))
    out = placed(args)
    assert out[2] is items and out[3] is holder, "lists and objects are updated in place"
    assert out[0] is base and out[1] is view, "arrays sharing memory stay as they are"
    view[0] = -1.0
    assert base[2] == -1.0
    assert items[0].ctypes.data % 64 == 0 and items[1]["m"].ctypes.data % 64 == 0
    assert holder.w.ctypes.data % 64 == 0
    np.testing.assert_array_equal(holder.w, np.ones(5), strict=True)
    assert out[5].dtype == np.int8 and out[5].tolist() == [1, 2] and out[4] == 7


def test_a_read_only_array_stays_read_only():
    a = np.arange(4.0)
    a.flags.writeable = False
    (b,) = placed((a,))
    assert b is not a and not b.flags.writeable
    np.testing.assert_array_equal(a, b, strict=True)


def test_balanced_orders_put_each_variant_at_each_position_equally_often():
    names = ["eager", "compiled", "control"]
    orders = balanced_orders(names, 12)
    assert orders[0] == names and orders[1] == names[::-1]
    for position in range(3):
        counts = {n: sum(order[position] == n for order in orders) for n in names}
        assert set(counts.values()) == {4}, counts


def test_paired_rounds_time_every_variant_once_a_round_after_its_setup():
    log = []
    variants = {"a": lambda: log.append("a"), "b": lambda: log.append("b")}
    before = {"a": lambda: log.append("setup a")}
    ticks = iter(range(1000))
    times = paired_rounds(variants, 4, before=before, clock=lambda: float(next(ticks)))
    assert [len(t) for t in times.values()] == [4, 4]
    # (a call the OS interrupted is made again, after its setup again: at least one setup a round)
    assert log.count("setup a") >= 4 and all(log[i + 1] == "a" for i, x in enumerate(log) if x == "setup a")
    assert median_ratio([2.0, 4.0, 9.0], [1.0, 2.0, 1.0]) == 2.0
