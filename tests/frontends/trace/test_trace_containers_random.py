"""trace: dataclass and NamedTuple parameter containers are pytrees; random draws at trace time are refused or warned."""

from __future__ import annotations

import dataclasses
import threading
import typing
import warnings

import numpy as np
import pytest

import graph_lab
from graph_lab import TraceError


@dataclasses.dataclass
class Dense:
    w: np.ndarray
    b: np.ndarray
    name: str = "dense"


@dataclasses.dataclass(frozen=True)
class FrozenDense:
    w: np.ndarray
    b: np.ndarray


class Pair(typing.NamedTuple):
    w: np.ndarray
    b: np.ndarray


def layer(x, p):
    return np.tanh(x @ p.w + p.b)


@pytest.mark.parametrize("container", [Dense, FrozenDense, Pair])
def test_attribute_containers_become_params(container):
    rng = np.random.default_rng(0)
    p = container(rng.standard_normal((3, 2)), rng.standard_normal(2))
    g = graph_lab.trace(layer, {"x": (4, 3)}, p)
    assert sorted(g.param_values) == ["p.b", "p.w"]
    assert [n.op for n in g.nodes].count("const") == 0
    x = rng.standard_normal((4, 3))
    (got,) = graph_lab.run(g, {"x": x})
    np.testing.assert_array_equal(got, np.tanh(x @ p.w + p.b))


def test_non_array_fields_stay_python_values():
    seen = []

    def f(x, p):
        seen.append(p.name)
        return x @ p.w + p.b

    g = graph_lab.trace(f, {"x": (2, 3)}, Dense(np.ones((3, 2)), np.zeros(2), name="first"))
    assert seen == ["first"] and sorted(g.param_values) == ["p.b", "p.w"]


def test_nested_namedtuples_in_a_list():
    layers = [Pair(np.eye(3) * 2, np.ones(3)), Pair(np.eye(3), -np.ones(3))]

    def mlp(x, ps):
        for p in ps:
            x = x @ p.w + p.b
        return x

    g = graph_lab.trace(mlp, {"x": (2, 3)}, layers)
    assert sorted(g.param_values) == ["ps[0].b", "ps[0].w", "ps[1].b", "ps[1].w"]
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(graph_lab.run(g, {"x": x})[0], (x * 2 + 1) - 1)


def test_namedtuple_output_keeps_its_class_in_structure():
    from graph_lab.frontends import pytree
    tree = Pair(np.zeros(1), [Dense(np.ones(2), np.zeros(2))])
    leaves, treedef = pytree.flatten(tree, "t")
    assert [path for path, _ in leaves] == ["t.w", "t.b[0].w", "t.b[0].b", "t.b[0].name"]
    rebuilt = pytree.unflatten(treedef, [leaf for _, leaf in leaves])
    assert type(rebuilt) is Pair and type(rebuilt.b[0]) is Dense and rebuilt.b[0].name == "dense"


def noise_module(x):
    return x + np.random.standard_normal(x.shape)


def noise_made_inside(x):
    rng = np.random.default_rng(0)
    assert isinstance(rng, np.random.Generator)
    return x + rng.normal(size=x.shape)


GLOBAL_RNG = np.random.default_rng(3)


def noise_global(x):
    return x * GLOBAL_RNG.uniform(size=x.shape)


def _closure_noise():
    rng = np.random.RandomState(1)

    def noise_closure(x):
        return x - rng.rand(*x.shape)
    return noise_closure


NOISY = [noise_module, noise_made_inside, noise_global, _closure_noise()]


@pytest.mark.parametrize("fn", NOISY, ids=lambda f: f.__name__)
def test_random_draw_is_refused_in_error_mode(fn):
    with pytest.raises(TraceError, match="random draw") as info:
        graph_lab.trace(fn, {"x": (3,)})
    assert fn.__name__ in str(info.value) or "numpy.random." in str(info.value)


@pytest.mark.parametrize("mode", ["specialize", "guard"])
@pytest.mark.parametrize("fn", NOISY, ids=lambda f: f.__name__)
def test_random_draw_warns_and_is_frozen_in_other_modes(fn, mode):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = graph_lab.trace(fn, {"x": (3,)}, mode=mode, example={"x": np.ones(3)})
    frozen = [w for w in caught if issubclass(w.category, graph_lab.FrozenRandomWarning)]
    assert len(frozen) == 1
    assert frozen[0].filename == __file__  # the user's code, not graph_lab's
    x = np.ones(3)
    first, second = graph_lab.run(g, {"x": x})[0], graph_lab.run(g, {"x": x})[0]
    np.testing.assert_array_equal(first, second)  # what the warning says: the same numbers every run


def test_module_draw_names_the_full_function_and_line():
    with pytest.raises(TraceError) as info:
        graph_lab.trace(noise_module, {"x": (3,)})
    message = str(info.value)
    assert "numpy.random.standard_normal" in message
    assert "np.random.standard_normal(x.shape)" in message  # the source line


def test_numpy_random_is_restored_and_untouched_outside_traces():
    original = np.random.standard_normal, np.random.default_rng
    with pytest.raises(TraceError):
        graph_lab.trace(noise_module, {"x": (3,)})
    graph_lab.trace(lambda x: x + 1, {"x": (3,)})
    assert (np.random.standard_normal, np.random.default_rng) == original
    np.random.seed(0)
    a = np.random.standard_normal(3)
    np.random.seed(0)
    np.testing.assert_array_equal(a, np.random.RandomState(0).standard_normal(3))


def test_other_threads_draw_freely_while_a_trace_runs():
    started, done = threading.Event(), threading.Event()
    errors = []

    def other():
        started.wait()
        try:
            np.random.standard_normal(2)
        except Exception as e:  # noqa: BLE001 -- the test reports whatever was raised
            errors.append(e)
        done.set()

    def slow(x):
        started.set()
        done.wait(5)
        return x * 2

    t = threading.Thread(target=other)
    t.start()
    graph_lab.trace(slow, {"x": (2,)})
    t.join()
    assert errors == []


def test_seeding_is_not_a_draw():
    def f(x):
        np.random.seed(0)
        return x + 1
    graph_lab.trace(f, {"x": (2,)})
