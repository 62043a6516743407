"""Derivatives through the ops with regions (graph_lab/autodiff/rules_control.py), against central finite
differences of plain Python control flow in float64; the OpInfo samples of cond, fori_loop and scan are checked
in test_autodiff.py. Here: the paths those samples leave out (fori_loop bounds known at capture, closed-over
operands whose cotangents add up over the steps, a cond inside a loop body), the region compile() makes of a
Python loop, and while_loop's refusal."""

import numpy as np
import pytest

import graph_lab as gl
from graph_lab import F, run
from graph_lab.autodiff import NoDerivativeError
from graph_lab.frontends import pytree
from graph_lab.frontends.dynamo import loop_regions

EPS = 1e-6


def differences(fn, args: list, i: int) -> np.ndarray:
    """Central differences of the scalar ``fn(*args)`` by each element of ``args[i]``."""
    x = args[i]
    numeric = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[i][index] += EPS
        down[i][index] -= EPS
        numeric[index] = (fn(*up) - fn(*down)) / (2 * EPS)
    return numeric


def check(fn, ref, args: list, argnums: tuple):
    grads = gl.grad(fn, argnums)(*args)
    for i, g in zip(argnums, grads):
        np.testing.assert_allclose(g, differences(ref, args, i), rtol=1e-5, atol=1e-7, err_msg=f"d / d args[{i}]")


rng = np.random.default_rng(21)
W = rng.standard_normal((3, 3)) * 0.5
X = rng.standard_normal((2, 3))


def recurrence_ref(W, x):
    y = x
    for _ in range(6):
        y = np.tanh(y @ W) + x
    return float(np.sum(y * y))


def test_fori_loop_with_bounds_known_at_capture_and_a_closed_over_weight():
    # W and x are read by every step from outside the body: their cotangents add up over the steps
    def loss(W, x):
        return F.sum(F.fori_loop(0, 6, lambda i, y: np.tanh(y @ W) + x, x) ** 2)
    check(loss, recurrence_ref, [W, X], (0, 1))


def test_fori_loop_index_and_several_carries():
    def ref(x, a):
        s, t = x, a
        for i in range(2, 7):
            s, t = s * t[i % 3] + np.sin(t), t * 0.9
        return float(np.sum(s) + np.sum(t ** 2))

    def loss(x, a):
        s, t = F.fori_loop(2, 7, lambda i, c: (c[0] * c[1][i % 3] + np.sin(c[1]), c[1] * 0.9), (x, a))
        return F.sum(s) + F.sum(t ** 2)
    check(loss, ref, [rng.standard_normal(3), rng.standard_normal(3)], (0, 1))


def test_scan_with_a_closed_over_weight_and_a_cond_in_the_body():
    def ref(h, xs, w):
        out = 0.0
        for x in xs:
            h = np.tanh(h * w + x) if x.sum() > 0 else h - x * w
            out = out + np.sum(h * x)
        return float(out + np.sum(h))

    def loss(h, xs, w):
        def step(h, x):
            h = F.cond(x.sum() > 0, lambda h, x: np.tanh(h * w + x), lambda h, x: h - x * w, h, x)
            return h, F.sum(h * x)
        h, ys = F.scan(step, h, xs)
        return F.sum(ys) + F.sum(h)
    check(loss, ref, [rng.standard_normal(3), rng.standard_normal((5, 3)), rng.standard_normal(3)], (0, 1, 2))


def test_cond_gradient_reaches_only_the_taken_branch_operands():
    def loss(x, y):
        return F.sum(F.cond(x.sum() > 0, lambda a, b: a * a, lambda a, b: b * 3.0, x, y))
    x, y = np.array([1.0, 2.0]), np.array([5.0, 7.0])
    gx, gy = gl.grad(loss, (0, 1))(x, y)
    np.testing.assert_array_equal(gx, 2 * x)
    np.testing.assert_array_equal(gy, [0.0, 0.0])
    gx, gy = gl.grad(loss, (0, 1))(-x, y)
    np.testing.assert_array_equal(gx, [0.0, 0.0])
    np.testing.assert_array_equal(gy, [3.0, 3.0])


def unrolled_loss(W, x):
    y = x * 1.0
    for _ in range(12):
        y = np.tanh(y @ W) + x
    return (y * y).sum()


def test_grad_of_the_fori_loop_region_compile_makes_of_a_python_loop(monkeypatch):
    monkeypatch.setattr(loop_regions, "MIN_UNROLLED_NODES", 0)
    (graph,) = gl.explain(unrolled_loss)(W, X).graphs
    assert [n.op for n in graph.nodes].count("fori_loop") == 1
    names = graph.input_names
    assert names == ["W", "x"]
    joint = gl.grad_graph(graph, names)
    loss, grads = pytree.unflatten(joint.out_tree, run(joint, dict(zip(names, [W, X]))))
    expected = gl.grad(unrolled_loss, (0, 1))(W, X)  # eagerly traced: the loop unrolled
    np.testing.assert_allclose(loss, unrolled_loss(W, X), rtol=1e-12)
    for name, e in zip(names, expected):
        np.testing.assert_allclose(grads[name], e, rtol=1e-10, atol=1e-12)


def test_compiled_grad_of_a_fori_loop_keeps_the_loops_and_gives_the_unrolled_gradient():
    def loss(W, x, n):
        return F.sum(F.fori_loop(0, n, lambda i, y: np.tanh(y @ W) + x, x) ** 2)

    def unrolled(W, x, n):
        y = x
        for _ in range(n):
            y = np.tanh(y @ W) + x
        return F.sum(y ** 2)
    compiled = gl.compile(gl.grad(loss, (0, 1)))
    got, expected = compiled(W, X, 9), gl.grad(unrolled, (0, 1))(W, X, 9)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    (graph,) = gl.explain(gl.grad(loss, (0, 1)))(W, X, 9).graphs
    ops = [n.op for n in graph.nodes]
    assert ops.count("fori_loop") == 1 and ops.count("scan") == 2  # forward; carries stacked; reverse steps


def test_while_loop_is_refused_naming_the_op_the_line_and_what_to_do():
    def f(x):
        return F.while_loop(lambda v: F.sum(v * v) > 1.0, lambda v: v * 0.5, x).sum()
    with pytest.raises(NoDerivativeError) as info:
        gl.grad(f)(np.full(3, 4.0))
    message = str(info.value)
    assert "while_loop" in message and f"test_autodiff_control.py:{f.__code__.co_firstlineno + 1}" in message
    assert "F.fori_loop or F.scan" in message
