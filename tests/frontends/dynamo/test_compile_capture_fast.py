"""compile()'s capture takes shortcuts for what a loop does on every iteration: operators and NumPy/F calls on
stand-ins skip the general rules (``apply``, ``call``), a global function or module read again is the same Var
(guarded once), a ``for`` loop's "one more item" guards are merged as they come, an array's first guard is
added without a lookup, and the step log keeps only what ``Segment.steps`` words. Each shortcut must give what
the general path gives: the same graph, the same guards in the same order, the same steps, the same cache hits
and misses. These tests compare them with expectations written out by hand; ``test_dynamo_paths.py`` compares every shortcut
with the general path on random programs."""

from __future__ import annotations

import dis
import enum
import math
import operator
import sys
import types

import numpy as np
import pytest

import graph_lab
from graph_lab import F
from graph_lab.frontends.dynamo.capture import CaptureContext
from graph_lab.frontends.dynamo.frame import Frame, Var
from graph_lab.frontends.dynamo.guard_set import Guard, GuardSet, _lower_bound_guard
from graph_lab.frontends.dynamo.iterators import items_left
from graph_lab.frontends.dynamo.segment import EMPTY_STACK, describe_step, top_of_stack, uses_top
from graph_lab.frontends.dynamo.sources import (AttrSource, Const, DerivedSource, GlobalSource, ItemSource, LocalSource,
                                                SizesSource)


def chain_np(x, ws):
    for w in ws:
        x = x + np.tanh(x @ w)
    return x


def chain_f(x, ws):
    for w in ws:
        x = x + F.tanh(x @ w)
    return x


def weights(n: int, dtype=np.float32, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((8, 8)) / 3).astype(dtype) for _ in range(n)]


X = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)


def only_segment(cf):
    [segs] = cf.cache.values()
    [seg] = segs
    return seg


# --- the W2 chain, written out by hand


@pytest.mark.parametrize("fn, module, name, kind", [(chain_np, "np", "numpy", "ufunc"),
                                                     (chain_f, "F", "graph_lab.frontends.functional", "function")])
def test_chain_guards_graph_and_steps(fn, module, name, kind):
    cf = graph_lab.compile(fn)
    ws = weights(3)
    np.testing.assert_allclose(cf(X, ws), fn(X, ws), rtol=1e-6)
    seg = only_segment(cf)
    first = fn.__code__.co_firstlineno
    head, loop, body = (f"(from test_compile_capture_fast.py:{first + i})" for i in range(3))
    assert [g.describe() for g in seg.guards.guards] == [
        f"x is an ndarray of shape (4, 8) and dtype float32  {head}",
        f"type(ws) is list  {loop}",
        f"len(ws) > 2 == True  {loop}",  # one guard for the three items the loop took
        f"ws[0] is an ndarray of shape (8, 8) and dtype float32  {loop}",
        f"global {module} is the same object ({name})  {body}",  # once, not once per iteration
        f"global {module}.tanh is the same object (tanh)  {body}",
        f"ws[1] is an ndarray of shape (8, 8) and dtype float32  {loop}",
        f"ws[2] is an ndarray of shape (8, 8) and dtype float32  {loop}",
        f"len(ws) > 3 == False  {loop}",
    ]
    ops = [(str(n.op), [seg.graph.nodes.index(v.node) for v in n.inputs]) for n in seg.graph.nodes]
    assert ops == [("input", []), ("input", []), ("matmul", [0, 1]), ("tanh", [2]), ("add", [0, 3]),
                   ("input", []), ("matmul", [4, 5]), ("tanh", [6]), ("add", [4, 7]),
                   ("input", []), ("matmul", [8, 9]), ("tanh", [10]), ("add", [8, 11])]
    assert [n.attrs["name"] for n in seg.graph.input_nodes] == ["x", "ws[0]", "ws[1]", "ws[2]"]
    # the call of tanh, on each Python (dis of each is the spec): 3.12 has no PRECALL; 3.13 pushes the NULL
    # after the callable, and loads x and w with one instruction (w on top)
    call = {(3, 11): [("LOAD_FAST", "tensor f32[4,8]"), ("LOAD_FAST", "tensor f32[8,8]"),
                      ("BINARY_OP", "recorded matmul"), ("PRECALL", "stack bookkeeping")],
            (3, 12): [("LOAD_FAST", "tensor f32[4,8]"), ("LOAD_FAST", "tensor f32[8,8]"),
                      ("BINARY_OP", "recorded matmul")],
            (3, 13): [("PUSH_NULL", "stack bookkeeping"), ("LOAD_FAST_LOAD_FAST", "tensor f32[8,8]"),
                      ("BINARY_OP", "recorded matmul")]}[sys.version_info[:2]]
    iteration = [("FOR_ITER", "new graph input"), ("STORE_FAST", "Python binding w"),
                 ("LOAD_FAST", "tensor f32[4,8]"), ("LOAD_GLOBAL", "Python value module"),
                 ("LOAD_ATTR", f"Python value {kind}"), *call, ("CALL", "recorded tanh"), ("BINARY_OP", "recorded add"),
                 ("STORE_FAST", "Python binding x"), ("JUMP_BACKWARD", "Python control flow, decided at capture")]
    assert [(opname, what) for _, opname, _, what in seg.steps] == (
        [("RESUME", "stack bookkeeping"), ("LOAD_FAST", "Python value list"),
         ("GET_ITER", "Python value SequenceIter")] + iteration * 3 +
        [("FOR_ITER", "Python control flow, decided at capture"), ("LOAD_FAST", "tensor f32[4,8]"),
         ("RETURN_VALUE", "return")])


@pytest.mark.parametrize("fn", [chain_np, chain_f])
def test_chain_hits_and_misses(fn):
    cf = graph_lab.compile(fn)
    ws = weights(4)
    cf(X, ws)
    assert cf.captures == 1
    np.testing.assert_allclose(cf(X, weights(4, seed=1)), fn(X, weights(4, seed=1)), rtol=1e-6)  # other arrays
    assert cf.captures == 1
    for other in (weights(5), weights(3), weights(4, dtype=np.float64)):  # longer, shorter, another dtype
        np.testing.assert_allclose(cf(X, other), fn(X, other), rtol=1e-6)
    assert cf.captures == 4
    assert "len(ws) > 4 is True, the cached graph was built for False" in cf.recompile_log[0]
    assert "len(ws) > 3 is False, the cached graph was built for True" in cf.recompile_log[1]
    assert "ws[0].dtype is float64, the cached graph was built for float32" in cf.recompile_log[2]


def _tanh_twice(x):
    return -np.tanh(x) * 2.0


def test_replaced_global_function_recompiles():
    module = types.ModuleType("user_ops")  # a module that is not a library one: its attributes can change
    module.act = np.tanh
    namespace = {"ops": module, "np": np}
    exec("def f(x, ws):\n    for w in ws:\n        x = ops.act(x @ w)\n    return x\n", namespace)
    f = namespace["f"]
    cf = graph_lab.compile(f)
    ws = weights(3)
    np.testing.assert_allclose(cf(X, ws), f(X, ws), rtol=1e-6)
    guards = [g.describe().split("  (from")[0] for g in only_segment(cf).guards.guards]
    assert guards.count("global ops is the same object (user_ops)") == 1
    assert guards.count("global ops.act is the same object (tanh)") == 1
    module.act = np.sin  # the attribute read in the loop
    np.testing.assert_allclose(cf(X, ws), f(X, ws), rtol=1e-6)
    assert cf.captures == 2 and "global ops.act is another object" in cf.recompile_log[-1]
    namespace["ops"] = types.SimpleNamespace(act=np.cos)  # the global itself
    np.testing.assert_allclose(cf(X, ws), f(X, ws), rtol=1e-6)
    assert cf.captures == 3
    namespace["np"] = None  # not read by f: no recompile
    cf(X, ws)
    assert cf.captures == 3


def test_global_read_again_is_the_same_var_while_it_is_the_same_object():
    ctx = _context()
    namespace = {"act": np.tanh, "arr": np.ones(2)}
    frame = types.SimpleNamespace(f_globals=namespace)
    first = ctx.load_global(frame, "act")
    assert ctx.load_global(frame, "act") is first
    ctx.guard(first)
    ctx.guard(ctx.load_global(frame, "act"))
    assert [g.describe().split("  (from")[0] for g in ctx.guards.guards] == ["global act is the same object (tanh)"]
    namespace["act"] = np.sin  # (a capture cannot do this without a break; the check costs one comparison)
    again = ctx.load_global(frame, "act")
    assert again is not first and again.value is np.sin
    assert ctx.load_global(frame, "arr") is not ctx.load_global(frame, "arr")  # arrays: wrapped each time
    module = ctx.load_global(types.SimpleNamespace(f_globals={"np": np}), "np")
    assert ctx.load_attr(module, "tanh") is ctx.load_attr(module, "tanh")
    assert ctx.load_attr(module, "pi").value == math.pi and ctx.load_attr(module, "pi").source is None


# --- a capture context on its own


def _context():
    def where():
        return None
    ctx = CaptureContext(where.__globals__)
    ctx.frame = Frame(where.__code__, where.__globals__, {}, {}, ctx)
    return ctx


def _stand_ins(ctx):
    a = ctx.wrap(np.ones((4, 8), np.float32), LocalSource("a"))
    b = ctx.wrap(np.full((4, 8), 2.0, np.float32), LocalSource("b"))
    return a, b


# --- the guard set's lower bounds against merge_lower_bounds at the end


def _random_guards(rng, n: int) -> list[Guard]:
    counts = [DerivedSource(len, (LocalSource(name),), "len({0})") for name in ("xs", "ys")] + \
        [DerivedSource(items_left, (LocalSource("it"),), "items_left({0})")]
    sizes = [int(rng.integers(6)) for _ in counts]  # (facts read from one state agree: count > k is sizes > k)
    guards = []
    for i in range(n):
        kind = rng.integers(5)
        if kind <= 2:  # a bound, true or false, on one of the counts
            c, k = rng.integers(3), int(rng.integers(7))
            guards.append(_lower_bound_guard(counts[c], k, sizes[c] > k, f"line {i}"))
        elif kind == 3:
            guards.append(Guard("array", ItemSource(LocalSource("xs"), int(rng.integers(4))), ((2,), "f"), i))
        else:  # "count > k" where k is not an int, or another comparison: not a lower bound
            other = DerivedSource(operator.ge, (counts[0], Const(int(rng.integers(3)))), "{0} >= {1}")
            guards.append(Guard("equals", other if rng.integers(2) else
                                DerivedSource(operator.gt, (counts[1], Const(1.5)), "{0} > {1}"), True, i))
    return guards


@pytest.mark.parametrize("seed", range(40))
def test_lower_bounds_merged_as_added_equal_merged_at_the_end(seed):
    rng = np.random.default_rng(seed)
    guards = _random_guards(rng, int(rng.integers(1, 30)))
    reference = GuardSet()
    for g in guards:
        reference.add(g)
    reference.merge_lower_bounds(counts=(len, items_left))
    merged = GuardSet(counts=(len, items_left))
    for g in guards:
        if g.kind == "equals" and g.source.fn is operator.gt and type(g.source.args[1].value) is int and \
                rng.integers(2):  # half of the bounds through the lazy entry point a loop uses
            merged.lower_bound(g.source.args[0], g.source.args[1].value, g.expected, g.loc)
        else:
            merged.add(g)
        if rng.integers(4) == 0:
            merged.guards  # (reading the list in between makes the pending bounds guards)
    merged.merge_lower_bounds(counts=(len, items_left))
    describe = lambda gs: [(g.describe(), g.loc) for g in gs.guards]  # noqa: E731
    assert describe(merged) == describe(reference)


def test_lower_bound_guard_is_what_apply_and_guard_make():
    ctx = _context()
    count = Var(5, DerivedSource(len, (LocalSource("ws"),), "len({0})"))
    more = ctx.apply(operator.gt, [count, Var(3)])
    ctx.guard(more)
    [g] = ctx.guards.guards
    assert g == _lower_bound_guard(count.source, 3, True, ctx.loc())


# --- the step log


def test_describe_step_reads_the_top_only_where_uses_top_says():
    class Instruction:
        def __init__(self, opname):
            self.opname, self.argval = opname, "v"
    tops = [EMPTY_STACK, 3, "text", None, list, top_of_stack([Var(np.float64(1.5))])]
    for opname in dis.opname:
        if opname.startswith("<"):
            continue
        words = {describe_step(Instruction(opname), (), top) for top in tops}
        assert (len(words) > 1) == uses_top(opname), opname


class Color(enum.IntEnum):
    RED = 1


class Number(float):
    pass


def _tops(x, a, b, c, d, e, f, g, h, i):
    # each loaded by a LOAD_FAST of its own, then dropped (3.13 would load two in a row with one instruction)
    a; b; c; d; e; f; g; h; i  # noqa: B018,E702
    return x


TOPS = (np.float64(0.5), Color.RED, True, None, "s", [1], math, Number(2.5), np.ones(2))


def test_logged_top_of_stack_is_top_of_stack():
    """The capture loop writes ``top_of_stack`` out inline: each LOAD_FAST is worded as top_of_stack's value."""
    cf = graph_lab.compile(_tops)
    x = np.ones(3)
    np.testing.assert_array_equal(cf(x, *TOPS), x)
    seg = only_segment(cf)
    loads = {arg: what for _, opname, arg, what in seg.steps if opname == "LOAD_FAST"}
    ins = next(i for i in dis.get_instructions(_tops) if i.opname == "LOAD_FAST")
    expected = {name: describe_step(ins, (), top_of_stack([Var(v)])) for name, v in zip("abcdefghi", TOPS)}
    expected["i"] = "tensor f64[2]"  # (an array argument is a stand-in: top_of_stack gives its type)
    assert {name: loads[name] for name in expected} == expected
    assert expected["a"] == "Python value np.float64(0.5)" and expected["b"] == "Python value <Color.RED: 1>"
    assert expected["g"] == "Python value module" and expected["h"] == "Python value 2.5"


def test_steps_of_a_segment_ending_in_a_break():
    def f(x, ws):
        for w in ws:
            x = x @ w
            if x.sum() > 0:
                x = -x
        return x
    cf = graph_lab.compile(f)
    ws = weights(2)
    np.testing.assert_allclose(cf(X, ws), f(X, ws), rtol=1e-6)
    first = cf.cache[cf._first][0]
    assert first.end == "break"
    steps = [(opname, what) for _, opname, _, what in first.steps]
    # (the jump's name and sense are the bytecode's own: POP_JUMP_FORWARD_IF_FALSE on 3.11; POP_JUMP_IF_TRUE on
    # 3.12 and 3.13, which put the loop's ``-x`` after its jump back)
    jump = "POP_JUMP_FORWARD_IF_FALSE" if sys.version_info < (3, 12) else "POP_JUMP_IF_TRUE"
    assert steps[-4:] == [("CALL", "recorded sum"), ("LOAD_CONST", "Python value 0"), ("COMPARE_OP", "recorded gt"),
                          (jump, "graph break: data-dependent value: the bool of a tensor computed by gt is needed "
                                 "by Python")]
    assert ("FOR_ITER", "new graph input") in steps and ("BINARY_OP", "recorded matmul") in steps


def test_per_code_caches_are_bounded_and_refill_alike():
    """Facts cached per code object are dropped when the cache is full (a process making code objects without end
    must not keep them all alive) and are made again the same way."""
    from graph_lab.frontends.dynamo import frame as frame_module
    cache = frame_module._instruction_cache
    code = (lambda x: x + 1).__code__
    first = [(i.opname, i.offset) for i in frame_module.instructions_of(code)]
    for k in range(frame_module.CodeCache.LIMIT + 5):
        frame_module.instructions_of(compile(f"y = {k}", "<generated>", "exec"))
    assert len(cache) <= frame_module.CodeCache.LIMIT
    again = [(i.opname, i.offset) for i in frame_module.instructions_of(code)]
    assert again == first and again[-1][0] == "RETURN_VALUE"
    fn = graph_lab.compile(lambda x: np.tanh(x) * 2)
    x = np.linspace(-2, 2, 8)
    np.testing.assert_array_equal(fn(x), np.tanh(x) * 2)


# --- the fixed cost of a capture: shortcuts for what every capture does once (wrap its arguments, guard ``np``
# and ``np.tanh``, start its loop, make its Frame)


def _helper():
    return None


def test_library_module_attribute_read_once():
    """``np.tanh`` read from a guarded library module: the module's guard, the attribute as read through its
    source, kept for a later break (as the general branch makes it, reading the attribute a second time)."""
    ctx = _context()
    module = ctx.load_global(types.SimpleNamespace(f_globals=ctx.fn_globals), "np")
    tanh = ctx.load_attr(module, "tanh")
    assert tanh.value is np.tanh and tanh.source == AttrSource(GlobalSource("np"), "tanh")
    assert ctx.sourced[id(np.tanh)] == tanh.source
    assert [(g.kind, g.source, g.expected) for g in ctx.guards.guards] == [("id", GlobalSource("np"), np)]
    ctx.guard(tanh)
    assert [(g.kind, g.source, g.expected) for g in ctx.guards.guards][1:] == [("id", tanh.source, np.tanh)]
    pi = ctx.load_attr(module, "pi")
    assert pi.value == math.pi and pi.source is None
    assert ctx.guards.guards[-1].kind == "equals" and ctx.guards.guards[-1].source == AttrSource(GlobalSource("np"),
                                                                                                   "pi")


def test_loop_iterator_is_what_created_makes():
    """``get_iter`` of a list argument registers its SequenceIter as ``created`` would, and the iterator starts as
    LazyIter's constructor starts it."""
    from graph_lab.frontends.dynamo.iterators import SequenceIter
    from graph_lab.frontends.dynamo.values import is_rebuildable
    ctx = _context()
    ws = weights(2)
    it = ctx.get_iter(ctx.wrap(ws, LocalSource("ws")))
    assert type(it.value) is SequenceIter and it.source is None and is_rebuildable(it.value)
    assert id(it.value) in ctx.created_ids and ctx._keep[-1] is it.value
    assert (it.value.items, it.value.pos, it.value.ctx, it.value.source) == ([], 0, ctx, LocalSource("ws"))
    assert [(g.kind, g.source, g.expected) for g in ctx.guards.guards] == [("type", LocalSource("ws"), list)]


@pytest.mark.parametrize("fn", [chain_np, _helper, lambda x: [v * 2 for v in x]])
def test_frame_tables_are_the_per_code_facts(fn):
    """A Frame takes its instructions, lines, handlers and offsets from one per-code entry: the same as each
    per-code function gives, also after the caches were emptied (a full cache starts again, empty: the lists are
    then equal, made again from the same code, if not the same objects)."""
    from graph_lab.frontends.dynamo import frame as frame_module
    for _ in range(2):
        f = Frame(fn.__code__, fn.__globals__, {}, {}, _context())
        assert f.instructions == frame_module.instructions_of(fn.__code__)
        assert f.locations == frame_module.locations_of(fn.__code__)
        assert f.handlers == frame_module.handlers_of(fn.__code__)
        assert f.index_of == frame_module.index_of(fn.__code__)
        for cache in (frame_module._frame_cache, frame_module._instruction_cache, frame_module._location_cache,
                      frame_module._handler_cache, frame_module._index_cache):
            cache.clear()


def test_recipe_of_a_tensor_var_is_its_value_recipe():
    """``RecipeMaker.var`` of a Var holding a stand-in goes straight to ``tensor``: what ``value`` gives, with or
    without a source (an input read back, an output, a view of either)."""
    from graph_lab.frontends.dynamo.segment import RecipeMaker
    ctx = _context()
    a, b = _stand_ins(ctx)
    made = ctx.apply(operator.add, [a, b])
    view = Var(made.value.T)
    for var in (a, b, made, view, Var(a.value), Var(a.value.T)):
        fast, general = RecipeMaker(ctx), RecipeMaker(ctx)
        assert fast.var(var) == general.value(var.value)
        assert fast.outputs == general.outputs


def test_segment_input_sources_follow_the_graph_inputs():
    """A segment's input sources are those of its graph's inputs, in their order (arrays, an array read twice,
    numbers used by tensor operations, items of a list)."""
    def f(x, ws, k, y):
        for w in ws:
            x = x @ w * k
        return x + y + ws[0].sum()
    cf = graph_lab.compile(f)
    ws = weights(3)
    y = X + 1
    np.testing.assert_allclose(cf(X, ws, 2.0, y), f(X, ws, 2.0, y), rtol=1e-5)
    seg = only_segment(cf)
    assert [s.describe() for s in seg.input_sources] == [n.attrs["name"] for n in seg.graph.input_nodes]
    assert [s.describe() for s in seg.input_sources] == ["x", "y", "ws[0]", "k", "ws[1]", "ws[2]"]
