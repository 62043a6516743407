"""compile() on methods and objects: ``super()`` (both forms), class and static methods, properties, dataclasses and
NamedTuples read through attributes. Each compiled run is compared bit for bit with eager NumPy (the codegen backend
runs the same NumPy calls in the same order), and the number of graphs, graph breaks and captures is asserted:
these are whole-function graphs, captured once and reused while the objects keep their types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pytest

import graph_lab

RNG = np.random.default_rng(19)
W = RNG.standard_normal((4, 4))
B = RNG.standard_normal(4)
X = RNG.standard_normal((3, 4))


def compiled_like_eager(fn, *args, calls: int = 3):
    """Compile ``fn``, call it ``calls`` times, check each result equals eager's bit for bit; returns the compiled
    function and explain()'s report of one call."""
    cf = graph_lab.compile(fn, backend="codegen")
    expected = fn(*args)
    for _ in range(calls):
        np.testing.assert_array_equal(cf(*args), expected, strict=True)
    return cf, graph_lab.explain(fn)(*args)


def assert_one_graph(cf, report, ops: int | None = None):
    assert report.graph_break_count == 0, [b.reason for b in report.breaks]
    assert report.graph_count == 1
    cf = getattr(cf, "__func__", cf)  # (a compiled method is a bound method of the compiled function)
    assert cf.captures == 1, cf.recompile_log
    if ops is not None:
        assert report.ops_per_graph == [ops]


# --- super()


class Linear:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def forward(self, x):
        return x @ self.w + self.b

    @property
    def scale(self):
        return self.w * 0.5

    @classmethod
    def name_length(cls):
        return len(cls.__name__)


class ZeroArgument(Linear):
    def forward(self, x):
        return np.tanh(super().forward(x))


class TwoArgument(Linear):
    def forward(self, x):
        return np.tanh(super(TwoArgument, self).forward(x))


class Grandchild(ZeroArgument):
    """Three levels, each calling the next with super(): the lookup starts after each method's own class."""

    def forward(self, x):
        return super().forward(x) * 2.0


class SuperProperty(Linear):
    @property
    def scale(self):
        return super().scale + 1.0

    def forward(self, x):
        return x @ self.scale


class SuperClassMethod(Linear):
    @classmethod
    def name_length(cls):
        return super().name_length() + 100

    def forward(self, x):
        return x * self.name_length()


class RenamedSelf(Linear):
    def forward(me, x):  # noqa: N805 - the zero-argument form reads the first argument, whatever its name
        return super().forward(x) - 1.0


@pytest.mark.parametrize("kind", [ZeroArgument, TwoArgument, RenamedSelf])
def test_super_method_reads_the_parents_attributes(kind):
    cf, report = compiled_like_eager(kind(W, B).forward, X)
    assert_one_graph(cf, report)


def test_super_through_three_classes():
    obj = Grandchild(W, B)
    np.testing.assert_array_equal(obj.forward(X), np.tanh(X @ W + B) * 2.0, strict=True)
    cf, report = compiled_like_eager(obj.forward, X)
    assert_one_graph(cf, report)


def test_super_property_runs_the_parents_getter():
    obj = SuperProperty(W, B)
    np.testing.assert_array_equal(obj.forward(X), X @ (W * 0.5 + 1.0), strict=True)
    cf, report = compiled_like_eager(obj.forward, X)
    assert_one_graph(cf, report)


def test_super_class_method():
    obj = SuperClassMethod(W, B)
    np.testing.assert_array_equal(obj.forward(X), X * (len("SuperClassMethod") + 100), strict=True)
    cf, report = compiled_like_eager(obj.forward, X)
    assert_one_graph(cf, report)


def test_super_reads_new_weights_on_later_calls():
    """The parent's ``self.w`` is a graph input read through ``self``, not a constant of the first call."""
    obj = ZeroArgument(W.copy(), B.copy())
    cf = graph_lab.compile(obj.forward, backend="codegen")
    cf(X)
    obj.w = W * 3.0
    np.testing.assert_array_equal(cf(X), np.tanh(X @ (W * 3.0) + B), strict=True)
    assert cf.__func__.captures == 1


def test_super_inside_an_inlined_method():
    """super() in a method compile() inlines (called from the compiled function, not compiled itself)."""
    layers = [ZeroArgument(W, B), TwoArgument(W.T.copy(), B)]

    def run(x):
        for layer in layers:
            x = layer.forward(x)
        return x

    cf, report = compiled_like_eager(run, X)
    assert_one_graph(cf, report)


def test_a_changed_class_hierarchy_recompiles():
    """What super() finds depends on the type of ``self``: another type is another capture, with its result."""
    cf = graph_lab.compile(lambda obj, x: obj.forward(x), backend="codegen")
    for kind in (ZeroArgument, Grandchild, ZeroArgument):
        obj = kind(W, B)
        np.testing.assert_array_equal(cf(obj, X), obj.forward(X), strict=True)
    assert cf.captures == 2


def test_super_errors_are_eager_pythons():
    class NoArguments:
        @staticmethod
        def f():
            return super().__init__()

    def call():
        return NoArguments.f()

    with pytest.raises(RuntimeError, match="super"):
        call()
    with pytest.raises(RuntimeError, match="super"):
        graph_lab.compile(call)()


# --- class methods, static methods, properties


class Scaled:
    factor = 2.0

    def __init__(self, w):
        self.w = w

    @classmethod
    def scale(cls, x):
        return x * cls.factor

    @staticmethod
    def shift(x):
        return x + 1.0

    @property
    def doubled(self):
        return self.w * 2.0

    def forward(self, x):
        return self.shift(self.scale(x)) @ self.doubled + Scaled.shift(x) @ self.w + Scaled.scale(x).sum()


def test_class_static_methods_and_properties():
    cf, report = compiled_like_eager(Scaled(W).forward, X)
    assert_one_graph(cf, report)


def test_class_method_reads_the_class_not_the_instance():
    """``cls.factor`` in a class method is the class's attribute, even when the instance has one of the same
    name: the method is bound to the class, so what it reads is read through the class."""
    obj = Scaled(W)
    obj.factor = 5.0  # an instance attribute the class method never sees
    cf, report = compiled_like_eager(obj.forward, X)
    assert_one_graph(cf, report)
    Scaled.factor = 3.0
    try:
        np.testing.assert_array_equal(cf(X), obj.forward(X), strict=True)
    finally:
        Scaled.factor = 2.0


def test_property_reads_new_arrays_of_self():
    obj = Scaled(W.copy())
    cf = graph_lab.compile(obj.forward, backend="codegen")
    cf(X)
    obj.w = RNG.standard_normal((4, 4))
    np.testing.assert_array_equal(cf(X), obj.forward(X), strict=True)
    assert cf.__func__.captures == 1


def test_method_of_another_object_stored_as_an_attribute():
    """``self.act`` holds a bound method of another object: the method reads that object's arrays."""
    class Holder:
        def __init__(self, act):
            self.act = act

        def forward(self, x):
            return self.act(x) + 1.0

    inner = Linear(W, B)
    holder = Holder(inner.forward)
    holder.w = W * 10.0  # what reading ``self.w`` through the holder would wrongly find
    cf, report = compiled_like_eager(holder.forward, X)
    assert_one_graph(cf, report)
    inner.w = W.T.copy()
    np.testing.assert_array_equal(cf(X), holder.forward(X), strict=True)


# --- dataclasses and NamedTuples (no __getattr__)


@dataclass
class Params:
    w: np.ndarray
    b: np.ndarray
    gain: float = 1.5


@dataclass(frozen=True)
class FrozenParams:
    w: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return x @ self.w + self.b


class TupleParams(NamedTuple):
    w: np.ndarray
    b: np.ndarray
    gain: float = 0.5


def dense(p, x):
    return np.tanh(x @ p.w + p.b) * p.gain


@pytest.mark.parametrize("params", [Params(W, B), TupleParams(W, B)], ids=["dataclass", "namedtuple"])
def test_parameter_containers_read_through_attributes(params):
    cf, report = compiled_like_eager(dense, params, X)
    assert_one_graph(cf, report)


def test_frozen_dataclass_method():
    cf, report = compiled_like_eager(FrozenParams(W, B).apply, X)
    assert_one_graph(cf, report)


@pytest.mark.parametrize("make", [Params, TupleParams], ids=["dataclass", "namedtuple"])
def test_new_container_of_the_same_type_reuses_the_graph(make):
    cf = graph_lab.compile(dense, backend="codegen")
    for scale in (1.0, 2.0, 3.0):
        params = make(W * scale, B - scale)
        np.testing.assert_array_equal(cf(params, X), dense(params, X), strict=True)
    assert cf.captures == 1


def test_a_changed_float_field_is_read_again():
    """``p.gain`` is a number read from the inputs: a new value gives eager's result, not the first call's."""
    cf = graph_lab.compile(dense, backend="codegen")
    for gain in (1.5, 2.5):
        params = Params(W, B, gain)
        np.testing.assert_array_equal(cf(params, X), dense(params, X), strict=True)
