"""compile()'s fast path: one generated function runs a cache hit of a whole-function graph. It must pick the
entry the general path would pick, miss whenever a guard fails (then the general path recompiles or falls back),
and hold no text taken from user data."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import graph_lab
from graph_lab import F
from graph_lab.frontends.dynamo.runtime import CompiledFunction

SCALE = 2.0


def gelu_mlp(x, p):
    h = x @ p["W1"]
    g = 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return g @ p["W2"]


def params(seed=0):
    rng = np.random.default_rng(seed)
    return {"W1": rng.standard_normal((8, 16)), "W2": rng.standard_normal((16, 8))}


def count_general_calls(cf, monkeypatch) -> list:
    calls = []
    original = cf._call

    def spy(args, kwargs):
        calls.append(args)
        return original(args, kwargs)
    monkeypatch.setattr(cf, "_call", spy)
    return calls


def test_cache_hit_of_a_whole_function_graph_takes_the_fast_path(monkeypatch):
    cf = graph_lab.compile(gelu_mlp, backend="codegen")
    x, p = np.random.default_rng(1).standard_normal((4, 8)), params()
    np.testing.assert_array_equal(cf(x, p), gelu_mlp(x, p), strict=True)
    assert cf.fast_path_source.startswith("def make(")
    general = count_general_calls(cf, monkeypatch)
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((4, 8))
        np.testing.assert_array_equal(cf(x, p), gelu_mlp(x, p), strict=True)
    assert general == []
    [event] = cf.last_events
    assert not event.captured and event.segment is cf.cache[event.offset][0]


def test_a_failing_guard_misses_and_the_general_path_recompiles(monkeypatch):
    cf = graph_lab.compile(gelu_mlp, backend="codegen")
    p = params()
    cf(np.ones((4, 8)), p)
    general = count_general_calls(cf, monkeypatch)
    x5 = np.random.default_rng(2).standard_normal((5, 8))
    np.testing.assert_array_equal(cf(x5, p), gelu_mlp(x5, p), strict=True)  # shape guard
    assert len(general) == 1 and cf.captures == 2
    x32 = x5.astype(np.float32)
    np.testing.assert_array_equal(cf(x32, p), gelu_mlp(x32, p), strict=True)  # dtype guard
    assert len(general) == 2 and cf.captures == 3
    q = {"W2": p["W2"], "W1": p["W1"]}  # the same keys in another order: the keys guard
    np.testing.assert_array_equal(cf(x5, q), gelu_mlp(x5, q), strict=True)
    assert len(general) == 3 and cf.captures == 4
    for x in (np.ones((4, 8)), x5, x32):  # every entry is in the fast path now, tried in order
        np.testing.assert_array_equal(cf(x, p), gelu_mlp(x, p), strict=True)
    assert len(general) == 3 and cf.captures == 4


def scaled(x):
    return x * SCALE


def test_rebinding_a_global_misses(monkeypatch):
    cf = graph_lab.compile(scaled, backend="codegen")
    x = np.arange(3.0)
    np.testing.assert_array_equal(cf(x), x * 2.0)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 3.0)
    np.testing.assert_array_equal(cf(x), x * 3.0)
    assert cf.captures == 1  # a float global in arithmetic is a graph input, read again on every call
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 3)
    np.testing.assert_array_equal(cf(x), x * 3)
    assert cf.captures == 2  # its type is guarded
    monkeypatch.delattr(sys.modules[__name__], "SCALE")
    with pytest.raises(NameError):  # as eager Python
        cf(x)
    with pytest.raises(NameError):
        scaled(x)


def count_items(xs):
    return np.asarray(len(xs)) * xs[0]


def test_a_builtin_shadowed_by_a_global_later_misses(monkeypatch):
    cf = graph_lab.compile(count_items, backend="codegen")
    xs = [np.ones(2), np.ones(2)]
    np.testing.assert_array_equal(cf(xs), count_items(xs))
    assert cf.fast_path_source.startswith("def make(")
    monkeypatch.setattr(sys.modules[__name__], "len", lambda seq: 10, raising=False)
    np.testing.assert_array_equal(count_items(xs), np.full(2, 10.0))
    np.testing.assert_array_equal(cf(xs), count_items(xs))
    assert cf.captures == 2


def printing(x):
    print("called")
    return x + 1


def test_a_function_with_a_graph_break_takes_the_general_path(capsys):
    cf = graph_lab.compile(printing)
    for _ in range(2):
        np.testing.assert_array_equal(cf(np.ones(2)), np.full(2, 2.0))
    assert capsys.readouterr().out == "called\ncalled\n"
    assert cf._fast is None and "graph break" in cf.fast_path_source
    assert "general path" in str(graph_lab.explain(printing)(np.ones(2)))


def with_default(x, k=2.0):
    return x * k


def test_keyword_and_default_calls_take_the_general_path_and_agree():
    cf = graph_lab.compile(with_default, backend="codegen")
    x = np.arange(4.0)
    np.testing.assert_array_equal(cf(x), with_default(x))
    np.testing.assert_array_equal(cf(x, 3.0), with_default(x, 3.0))
    np.testing.assert_array_equal(cf(x, k=5.0), with_default(x, k=5.0))
    np.testing.assert_array_equal(cf(x=x), with_default(x=x))


def test_recompile_limit_turns_the_fast_path_off():
    cf = graph_lab.compile(scaled_by, recompile_limit=1, backend="codegen", dynamic=False)
    cf(np.ones(2), 1)
    with pytest.warns(graph_lab.RecompileLimitWarning):
        for k in range(2, 5):
            np.testing.assert_array_equal(cf(np.ones(2), k), scaled_by(np.ones(2), k))
    assert cf._fast is None and cf.eager_fallback and "runs eagerly" in cf.fast_path_source
    assert type(cf).__call__.__qualname__.startswith("eager_call"), "a plain call of the function (way_choice)"
    np.testing.assert_array_equal(cf(np.ones(2), 1), np.ones(2))


def scaled_by(x, k):
    for _ in range(k - 1):
        x = x + x / k
    return x if k == 1 else x * 1.0


def test_returned_tuple_of_outputs_inputs_and_constants():
    def f(x, y):
        return x * 2, y, 3, None

    cf = graph_lab.compile(f, backend="codegen")
    x, y = np.ones(2), np.zeros(3)
    for _ in range(2):
        a, b, c, d = cf(x, y)
        np.testing.assert_array_equal(a, x * 2)
        assert b is y and c == 3 and d is None
    assert cf.fast_path_source.startswith("def make(")


def test_user_text_never_enters_the_generated_source():
    key = "W'); import os; os.system('touch /tmp/graph_lab_canary'); ('"
    namespace = {"np": np}
    exec("def f(x, p):\n    return x * p[K]\n", namespace)
    namespace["K"] = key
    cf = graph_lab.compile(namespace["f"], backend="codegen")
    p = {key: np.full(2, 3.0)}
    for _ in range(2):
        np.testing.assert_array_equal(cf(np.ones(2), p), np.full(2, 3.0))
    source = cf.fast_path_source
    assert source.startswith("def make(") and key not in source and "os.system" not in source
    assert "'" not in source and '"' not in source  # no string literal at all


def test_fast_path_and_general_path_agree_on_the_fused_backend():
    cf = graph_lab.compile(gelu_mlp)  # backend="auto"
    x, p = np.random.default_rng(3).standard_normal((64, 8)), params()
    first = cf(x, p)
    np.testing.assert_array_equal(cf(x, p), first, strict=True)  # fast path: the same graph, the same result
    np.testing.assert_allclose(first, gelu_mlp(x, p), rtol=1e-12, atol=1e-12)
    assert cf.fast_path_source.startswith("def make(")


def test_wrong_argument_counts_raise_as_eager_python():
    cf = graph_lab.compile(gelu_mlp, backend="codegen")
    x, p = np.ones((4, 8)), params()
    cf(x, p)
    for args, kwargs in [((x,), {}), ((x, p, 1), {}), ((x,), {"q": p}), ((), {})]:
        with pytest.raises(TypeError) as compiled_error:
            cf(*args, **kwargs)
        with pytest.raises(TypeError) as eager_error:
            gelu_mlp(*args, **kwargs)
        assert str(compiled_error.value) == str(eager_error.value)
    np.testing.assert_array_equal(cf(p=p, x=x), gelu_mlp(x, p), strict=True)
    np.testing.assert_array_equal(cf(x, p=p), gelu_mlp(x, p), strict=True)


class Block:
    def __init__(self, w):
        self.w = w
        self.calls = 0

    def __call__(self, x):
        return np.tanh(x @ self.w)

    def forward(self, x, scale):
        return (x @ self.w) * scale


def test_compile_takes_callable_objects_and_bound_methods():
    rng = np.random.default_rng(4)
    block = Block(rng.standard_normal((3, 3)))
    x = rng.standard_normal((2, 3))
    for compiled, eager, args in [(graph_lab.compile(block, backend="codegen"), block, (x,)),
                                  (graph_lab.compile(block.forward, backend="codegen"), block.forward, (x, 2.0))]:
        for _ in range(3):
            np.testing.assert_array_equal(compiled(*args), eager(*args), strict=True)
        assert isinstance(compiled.__func__, CompiledFunction) and compiled.__self__ is block
        assert compiled.captures == 1 and compiled.fast_path_source.startswith("def make(")
    cf = graph_lab.compile(block, backend="codegen")
    cf(x)
    block.w = rng.standard_normal((3, 3))  # read through self on every call: the new weights are used
    np.testing.assert_array_equal(cf(x), block(x), strict=True)
    block.w = rng.standard_normal((4, 3))  # a new shape: the array guard on self.w misses, and it recompiles
    np.testing.assert_array_equal(cf(np.ones((2, 4))), block(np.ones((2, 4))), strict=True)
    assert cf.captures == 2
    report = graph_lab.explain(block)(x[:, :3] @ np.ones((3, 4)))
    assert report.graph_count == 1 and any("self.w" in g for g in report.guards)
    assert graph_lab.explain(block.forward)(np.ones((2, 4)), 3.0).graph_count == 1
    with pytest.raises(TypeError, match="takes a Python function, a bound method or an object"):
        graph_lab.compile(Block)
    with pytest.raises(TypeError):
        graph_lab.compile(np.tanh)


class Decorated:
    def __init__(self, k):
        self.k = k

    @graph_lab.compile(backend="codegen")
    def scaled(self, x):
        return x * self.k + 1.0


def test_compile_as_a_method_decorator_binds_like_a_function():
    a, b = Decorated(2.0), Decorated(3)
    x = np.arange(3.0)
    for _ in range(2):
        np.testing.assert_array_equal(a.scaled(x), x * 2.0 + 1.0, strict=True)
        np.testing.assert_array_equal(b.scaled(x), x * 3 + 1.0, strict=True)
    assert isinstance(Decorated.scaled, CompiledFunction)
    assert Decorated.scaled.captures == 2  # self.k is a float in one object and an int in the other


def test_the_fast_path_is_made_on_the_call_after_a_capture(monkeypatch):
    cf = graph_lab.compile(gelu_mlp, backend="codegen")
    x, p = np.random.default_rng(5).standard_normal((4, 8)), params()
    np.testing.assert_array_equal(cf(x, p), gelu_mlp(x, p), strict=True)
    assert type(cf) is CompiledFunction and cf._fast is None  # not made at capture: a single call never needs it
    general = count_general_calls(cf, monkeypatch)
    np.testing.assert_array_equal(cf(x, p), gelu_mlp(x, p), strict=True)  # made now, and it hits at once
    assert general == [] and cf._fast is not None and type(cf) is not CompiledFunction
    x5 = np.ones((5, 8))
    np.testing.assert_array_equal(cf(x5, p), gelu_mlp(x5, p), strict=True)  # a miss, a capture: due again
    assert len(general) == 1 and cf._fast is None and type(cf) is CompiledFunction
    assert cf.fast_path_source.startswith("def make(")  # asking for it makes it too
    for x in (x5, np.ones((4, 8))):
        np.testing.assert_array_equal(cf(x, p), gelu_mlp(x, p), strict=True)
    assert len(general) == 1 and cf.captures == 2
