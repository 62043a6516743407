"""compile()'s speed-ups against the general path they stand for, and both against eager NumPy: one property test
for the dynamo layer.

What compile() runs is faster than what it stands for in a few places: the capture loop with ``Frame.step``
written out (``capture_loop_inlined.py``), the generated fast path of a cache hit (``cache_hit_fast_path.py``),
the commonest cases of ``apply`` and ``call`` decided by exact type (``capture_shortcuts.py``), and a guard set
that merges the lower bounds of a loop's length as they come. The ``general`` fixture switches every one of them
off (the reference loop, the general call path on every hit, the reference ``CaptureContext``, a guard set that
merges at the end).
Random programs from ``graph_lab.testing`` and a few hand-written ones that recompile are run both ways: the
segments (graph text, guards with their lines, recipes, the steps in words), the captures and recompiles and
their reasons, and the results must be the same, and every result must be eager NumPy's (the tolerance table).
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import graph_lab
from graph_lab.equivalence.compare import compare
from graph_lab.frontends.dynamo import capture, capture_loop
from graph_lab.frontends.dynamo.capture import CaptureContext
from graph_lab.frontends.dynamo.capture_loop import capture_once
from graph_lab.frontends.dynamo.guard_set import Guard, GuardSet, _lower_bound_guard
from graph_lab.frontends.dynamo.iterators import items_left
from graph_lab.frontends.dynamo.runtime import CompiledFunction
from graph_lab.frontends.dynamo.sources import Const, DerivedSource, LocalSource
from graph_lab.testing.generator import Options, generate


class _GeneralGuardSet(GuardSet):
    """A guard set that merges nothing as guards come: each bound is a Guard, merged at the end (see general)."""

    def __init__(self, guards=None, counts=()):
        super().__init__(guards)


@pytest.fixture
def general(monkeypatch):
    """Switch every speed-up of the dynamo layer off: the general path of each."""
    monkeypatch.setattr(CompiledFunction, "capture_loop", staticmethod(capture_once))
    monkeypatch.setattr(CompiledFunction, "_make_fast_path", lambda self: self._set_fast_path(None, ""))
    monkeypatch.setattr(capture_loop, "CAPTURE_CONTEXT", CaptureContext)
    monkeypatch.setattr(capture, "GuardSet", _GeneralGuardSet)
    capture_segment = CompiledFunction._capture

    def _capture(self, offset, inputs):
        seg = capture_segment(self, offset, inputs)
        seg.guards.merge_lower_bounds(counts=(len, items_left))  # (before anything reads them)
        return seg

    monkeypatch.setattr(CompiledFunction, "_capture", _capture)


def _segments(compiled) -> list:
    """What each segment of ``compiled`` holds, as comparable values."""
    return [(offset, str(seg.graph), seg.result_recipe, seg.local_recipes, seg.stack_recipes, seg.end,
             [(g.describe(), g.loc) for g in seg.guards.guards], seg.input_names, seg.steps)
            for offset, entries in compiled.cache.items() for seg in entries]


# --- random programs


def _fresh(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def _run_program(seed: int) -> tuple:
    """Program ``seed`` compiled and called on inputs that capture, hit (twice, so the fast path is made and
    taken) and may recompile: each result against eager's, and what the compiled function saw."""
    program = generate(seed, Options())
    compiled = graph_lab.compile(program.namespace()["program"], backend="interpret")
    eager = program.namespace()["program"]
    outcomes = []
    for k in (0, 0, 0, 1, 2, 1):
        inputs = program.inputs(k)
        try:
            want = eager(*[_fresh(v) for v in inputs])
        except Exception as e:  # the program raises for these inputs: compiled, it raises the same
            with pytest.raises(type(e)):
                compiled(*[_fresh(v) for v in inputs])
            outcomes.append(("raised", type(e).__name__))
            continue
        got = compiled(*[_fresh(v) for v in inputs])
        mismatch = compare(want, got)
        assert mismatch is None, f"seed {seed}, inputs {k}: {mismatch}\n{program.source()}"
        outcomes.append(got)
    return outcomes, compiled.captures, compiled.recompiles, compiled.recompile_log, _segments(compiled)


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and \
            np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and (a == b or a != a and b != b)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("chunk", range(4))
def test_random_programs_take_the_same_path_fast_and_general(chunk, request):
    """Eight programs per chunk: the shipped paths and the general paths capture the same segments and give the
    same results, bit for bit; both give eager's."""
    seeds = range(chunk * 8, chunk * 8 + 8)
    fast = [_run_program(seed) for seed in seeds]
    request.getfixturevalue("general")
    for seed, shipped in zip(seeds, fast):
        outcomes, *rest = _run_program(seed)
        assert _same(outcomes, shipped[0]), f"seed {seed}"
        assert rest == list(shipped[1:]), f"seed {seed}"


# --- hand-written programs that recompile (list length, tuple, dtype, shape, an item's type, an array passed
# twice) and fall back


def chain(x, ws):
    for w in ws:
        x = x + np.tanh(x @ w)
    return x


def two_loops(x, ws):
    for w in ws:
        x = x @ w
    for w in ws:
        x = x - w.sum()
    return x


def loop_and_len(x, ws):
    for w in ws:
        x = x + w
    if len(ws) > 2:
        return x * 2.0
    return x


def loop_and_gt(x, ws):
    for w in ws:
        x = x + w
    if len(ws) > 1:
        x = x * 2.0
    return x


def dead_code(x, ws):
    y = np.exp(x)  # never read
    for w in ws:
        z = x @ w  # never read
        x = x + w
    return x


def returns_input(x, ws):
    for w in ws:
        pass
    return x


def returns_view(x, ws):
    y = x + 1.0
    return y.T


def returns_input_view(x, ws):
    return x.T


def returns_tuple(x, ws):
    return x * 2.0, len(ws)


def returns_reshape(x, ws):
    y = x * 1.0
    return y.reshape(9)


def breaks(x, ws):
    for w in ws:
        x = x @ w
        if x.sum() > 0:
            x = -x
    return x


CASES = [chain, two_loops, loop_and_len, loop_and_gt, dead_code, returns_input, returns_view, returns_input_view,
         returns_tuple, returns_reshape, breaks]


def _calls(fn):
    """A compiled ``fn`` through calls that hit, recompile (list length, tuple, dtype, shape, an item's type, an
    array passed twice) and fall back: what happened at each, and each segment's graph, recipes and guards."""
    rng = np.random.default_rng(0)
    compiled = graph_lab.compile(fn)
    # (the guards on every call: were the function way chosen, most calls would skip them, way_choice.py)
    compiled.ways.pin("graphs", "the test compares the guarded paths")
    x = rng.standard_normal((3, 3))
    ws = [rng.standard_normal((3, 3)) for _ in range(2)]
    calls = [(x, ws), (x, list(ws)), (x, ws + [ws[0]]), (x, ws[:1]), (x, []), (x, tuple(ws)),
             (x, [ws[0], ws[1].astype(np.float32)]), (x, [ws[0], 2.0]), (x.astype(np.float32), ws), (x[:2], ws),
             (x, [ws[0], ws[0]]), (x, ws)]
    seen = []
    for a, b in calls:
        try:
            result = compiled(a, b)
        except Exception as e:
            seen.append(("raised", type(e).__name__, str(e)))
            continue
        expected = fn(a, b)
        if isinstance(expected, tuple):
            assert all(np.array_equal(r, e) for r, e in zip(result, expected))
        else:
            np.testing.assert_array_equal(result, expected)
            assert (result is a) == (expected is a)
        seen.append((compiled.captures, compiled.recompiles))
    return seen, compiled.recompile_log, _segments(compiled), compiled.eager_fallback


@pytest.mark.filterwarnings("ignore::graph_lab.frontends.dynamo.runtime.RecompileLimitWarning")
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_recompiling_calls_take_the_same_path_fast_and_general(fn, request):
    fast = _calls(fn)
    request.getfixturevalue("general")
    assert _calls(fn) == fast


# --- what the speed-ups must keep: the guards as they read, and the guard set's merging


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_loop_guards_what_it_guarded_before(n):
    """The W2 chain's guards, as they read before the shortcuts (one bound per loop, its end, the items)."""
    rng = np.random.default_rng(1)
    compiled = graph_lab.compile(chain)
    compiled(rng.standard_normal((4, 8)), [rng.standard_normal((8, 8)) for _ in range(n)])
    [seg] = compiled.cache[compiled._first]
    loop_line = chain.__code__.co_firstlineno + 1
    texts = [(g.describe().split("  (from")[0], g.loc.lineno) for g in seg.guards.guards]
    expected = [("x is an ndarray of shape (4, 8) and dtype float64", loop_line - 1),
                ("type(ws) is list", loop_line)]
    if n:
        expected += [(f"len(ws) > {n - 1} == True", loop_line),
                     ("ws[0] is an ndarray of shape (8, 8) and dtype float64", loop_line),
                     ("global np is the same object (numpy)", loop_line + 1),
                     ("global np.tanh is the same object (tanh)", loop_line + 1)]
        expected += [(f"ws[{i}] is an ndarray of shape (8, 8) and dtype float64", loop_line) for i in range(1, n)]
    expected.append((f"len(ws) > {n} == False", loop_line))
    assert texts == expected
    assert seg.result_recipe == (("out", 0) if n else ("source", LocalSource("x")))


def _bound_guard(count, k, holds, text, loc):
    return Guard("equals", DerivedSource(operator.gt, (count, Const(k)), text), holds, loc)


@pytest.mark.parametrize("seed", range(30))
def test_loop_ends_kept_once_as_the_set_keeps_any_guard(seed):
    """"count > k is False" (and True) through ``lower_bound`` (a loop's end, made a Guard only when the list is
    read) or ``add`` (any other way), in any order and with another text for the same comparison: the same list
    as a set that merges nothing as guards come, merged at the end."""
    rng = np.random.default_rng(seed)
    counts = [DerivedSource(len, (LocalSource(name),), "len({0})") for name in ("xs", "ys")]
    sizes = [int(rng.integers(4)) for _ in counts]  # (facts read from one state agree: count > k is size > k)
    entries = []
    for i in range(int(rng.integers(1, 25))):
        c, k = int(rng.integers(2)), int(rng.integers(4))
        holds = sizes[c] > k
        kind = int(rng.integers(3))
        if kind == 0:
            entries.append(("lower_bound", counts[c], k, holds, f"line {i}"))
        else:
            text = "{0} > {1}" if kind == 1 else "gt({0}, {1})"
            entries.append(("add", _bound_guard(counts[c], k, holds, text, f"line {i}")))
    reference = GuardSet()
    merged = GuardSet(counts=(len, items_left))
    for entry in entries:
        if entry[0] == "add":
            reference.add(entry[1])
            merged.add(entry[1])
        else:
            _, count, k, holds, loc = entry
            reference.add(_lower_bound_guard(count, k, holds, loc))
            merged.lower_bound(count, k, holds, loc)
        if rng.integers(4) == 0:
            merged.guards  # (reading the list in between makes the pending ones guards)
    reference.merge_lower_bounds(counts=(len, items_left))
    describe = lambda gs: [(g.describe(), g.loc) for g in gs.guards]  # noqa: E731
    assert describe(merged) == describe(reference)
    assert None not in merged.guards


def test_sources_made_by_their_own_init_are_the_dataclasses():
    """Sources whose ``__init__`` stores the fields itself compare, hash, print and stay frozen as dataclasses."""
    import dataclasses

    from graph_lab.frontends.dynamo.sources import AttrSource, GlobalSource, ItemSource

    made = [GlobalSource("np"), GlobalSource("np", 7, {"a": 1}), AttrSource(GlobalSource("np"), "tanh"),
            ItemSource(LocalSource("ws"), 3), Const(2), DerivedSource(len, (LocalSource("ws"),), "len({0})")]
    for source in made:
        fields = {f.name: getattr(source, f.name) for f in dataclasses.fields(source)}
        assert dataclasses.replace(source) == source and hash(dataclasses.replace(source)) == hash(source)
        assert set(vars(source)) - {"_hash"} == set(fields)
        with pytest.raises(dataclasses.FrozenInstanceError):
            source.x = 1
    assert GlobalSource("np", 7, {"a": 1}) == GlobalSource("np", 7, None)  # (the namespace is not compared)
    assert GlobalSource("np").namespace is None and GlobalSource("np").namespace_id == 0
    assert repr(ItemSource(LocalSource("ws"), 3)) == "ItemSource(base=LocalSource(name='ws'), key=3)"


def test_a_subclass_keeps_its_overrides_once_the_fast_path_is_installed():
    """The fast path makes the object an instance of a class of its own: a subclass of CompiledFunction (the
    fuzzer's ``_CompiledWith``) keeps its ``_capture`` for the captures after it."""
    captured = []

    class Counting(CompiledFunction):
        def _capture(self, offset, inputs):
            captured.append(offset)
            return super()._capture(offset, inputs)

    def fn(x):
        return np.tanh(x) * 2.0

    cf = Counting(fn)
    x = np.linspace(-1, 1, 6)
    for a in (x, x, x.reshape(2, 3), x.reshape(2, 3)):
        np.testing.assert_array_equal(cf(a), fn(a))
    assert cf._fast is not None and isinstance(cf, Counting)
    assert len(captured) == 2 == cf.captures
