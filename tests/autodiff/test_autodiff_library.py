"""Derivative rules beyond the OpInfo samples: the attributes the samples leave at their defaults (fft
normalisations, vector-norm orders, reductions over several axes, batched solves), and the refusals (matrix
norms, histogram densities, complex values through a rule written for real ones), each against central
differences of the same function run eagerly."""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab as gl
from graph_lab import F
from graph_lab.autodiff import NoDerivativeError

EPS = 1e-6
RNG = np.random.default_rng(21)


def _check(fn, *args):
    """gl.grad of the scalar ``fn`` by every argument, against central differences of ``fn`` on arrays (by the
    real and imaginary parts of a complex argument)."""
    grads = gl.grad(fn, argnums=tuple(range(len(args))))(*args)
    for i, (x, g) in enumerate(zip(args, grads)):
        numeric = np.zeros_like(x)
        for direction in ((1.0, 1j) if np.iscomplexobj(x) else (1.0,)):
            for index in np.ndindex(x.shape):
                up, down = [a.copy() for a in args], [a.copy() for a in args]
                up[i][index] += EPS * direction
                down[i][index] -= EPS * direction
                numeric[index] += direction * (float(fn(*up)) - float(fn(*down))) / (2 * EPS)
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-7, err_msg=f"argument {i}")


def _weighted(shape_of_result, complex_result=False):
    w = RNG.standard_normal(shape_of_result)
    if not complex_result:
        return lambda y: F.sum(y * w)
    v = RNG.standard_normal(shape_of_result)
    return lambda y: F.sum(F.real(y) * w) + F.sum(F.imag(y) * v)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("name, n, make, out_len", [
    ("fft", None, lambda: RNG.standard_normal((2, 5)), 5),
    ("fft", 7, lambda: RNG.standard_normal((2, 5)), 7),
    ("ifft", 3, lambda: RNG.standard_normal((2, 5)) + 1j * RNG.standard_normal((2, 5)), 3),
    ("rfft", None, lambda: RNG.standard_normal((2, 6)), 4),
    ("rfft", 5, lambda: RNG.standard_normal((2, 6)), 3),
    ("irfft", None, lambda: RNG.standard_normal((2, 4)) + 1j * RNG.standard_normal((2, 4)), 6),
    ("irfft", 7, lambda: RNG.standard_normal((2, 5)) + 1j * RNG.standard_normal((2, 5)), 7),
    ("irfft", 4, lambda: RNG.standard_normal((2, 5)) + 1j * RNG.standard_normal((2, 5)), 4),
])
def test_one_dimensional_transforms_in_every_normalisation(name, n, make, out_len, norm):
    x = make()
    loss = _weighted((2, out_len), complex_result=name != "irfft")
    transform = getattr(np.fft, name)
    _check(lambda x: loss(transform(x, n, axis=-1, norm=norm)), x)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_n_dimensional_transforms_with_sizes_and_axes(norm):
    x = RNG.standard_normal((3, 2, 4))
    loss = _weighted((3, 5, 2), complex_result=True)
    _check(lambda x: loss(np.fft.fftn(x, s=(5, 2), axes=(1, 2), norm=norm)), x)
    z = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
    loss2 = _weighted((2, 4), complex_result=True)
    _check(lambda z: loss2(np.fft.ifft2(z, s=(2, 4), norm=norm)), z)


@pytest.mark.parametrize("ord, axis, keepdims", [
    (None, None, False), (2, 1, True), (1, 0, False), (np.inf, 1, False), (-np.inf, None, False), (3, -1, True),
    (0.5, 0, False), ("fro", None, False), (None, (0, 1), True),
])
def test_vector_norms_and_frobenius(ord, axis, keepdims):
    x = RNG.standard_normal((3, 4)) if ord != -np.inf else RNG.standard_normal(5)
    out_shape = np.linalg.norm(x, ord, axis, keepdims).shape
    loss = _weighted(out_shape)
    _check(lambda x: loss(np.linalg.norm(x, ord, axis, keepdims)), x)


def test_a_matrix_norm_other_than_frobenius_is_refused_by_name():
    with pytest.raises(NoDerivativeError, match=r"numpy\.linalg\.norm with the matrix norm ord=2"):
        gl.grad(lambda x: np.linalg.norm(x, 2))(RNG.standard_normal((3, 3)))


def test_batched_solve_with_a_vector_and_det_of_a_product():
    a = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal(3)
    loss = _weighted((2, 3))
    _check(lambda a, b: loss(np.linalg.solve(a, b)), a, b)
    _check(lambda a: F.sum(np.linalg.det(a @ a)), a)


def test_reductions_of_a_ufunc_over_several_axes_and_accumulations():
    x = RNG.standard_normal((3, 2, 4))
    _check(lambda x: np.logaddexp.reduce(x, axis=(0, 2)).sum() * 1.5, x)
    _check(lambda x: np.hypot.reduce(x, axis=None), x)
    loss = _weighted((3, 2, 4))
    _check(lambda x: loss(np.minimum.accumulate(x, axis=2)), x)
    _check(lambda x: loss(np.subtract.accumulate(x, axis=0)), x)
    loss2 = _weighted((3, 2, 4, 2))
    _check(lambda x, y: loss2(np.arctan2.outer(x, y)), x, RNG.standard_normal(2))


def test_histogram_density_is_refused():
    with pytest.raises(NoDerivativeError, match="density=True"):
        gl.grad(lambda x: F.sum(np.histogram(x, 3, density=True)[0]))(RNG.standard_normal(10))


def test_complex_values_through_a_rule_for_real_values_are_refused():
    z = RNG.standard_normal((2, 2)) + 1j * RNG.standard_normal((2, 2))
    with pytest.raises(NoDerivativeError, match="op matmul .*written for real values"):
        gl.grad(lambda z: F.sum(F.real(z @ z)))(z)
    with pytest.raises(NoDerivativeError, match="numpy.linalg.inv of complex matrices"):
        gl.grad(lambda z: F.sum(F.real(np.linalg.inv(z))))(z)


def test_library_functions_without_a_rule_are_refused_by_name():
    with pytest.raises(NoDerivativeError, match=r"numpy\.linalg\.svd has no derivative rule"):
        gl.grad(lambda x: F.sum(np.linalg.svd(x, compute_uv=False)))(RNG.standard_normal((3, 3)))


def test_complex_values_through_the_movements_and_reductions_with_complex_rules():
    z = RNG.standard_normal(6) + 1j * RNG.standard_normal(6)
    x = RNG.standard_normal((2, 2))
    w = RNG.standard_normal((3, 2, 2)) + 1j * RNG.standard_normal((3, 2, 2))

    def f(z, x):
        y = F.transpose(F.reshape(z, (3, 2)))[:, 1:]                              # (2, 2)
        y = F.broadcast_to(F.squeeze(F.expand_dims(y, 0), 0), (3, 2, 2))
        y = -y * F.cast(x, np.complex128) / (2.0 + 1j)
        total = F.sum(y * w) + F.mean(F.exp(y)) - F.sum(F.conj(y))
        return F.real(total) + F.imag(total) + F.sum(F.real(F.round(z, 1))) + F.sum(F.angle(z) * F.abs(z))

    _check(f, z, x)


@pytest.mark.parametrize("n", [0, 1, 3, -2])
def test_matrix_power_of_every_sign(n):
    a = RNG.standard_normal((2, 3, 3)) + 2 * np.eye(3)
    loss = _weighted((2, 3, 3))
    _check(lambda a: loss(np.linalg.matrix_power(a, n)), a)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_reads_one_triangle(uplo):
    a = RNG.standard_normal((4, 4))  # not symmetric: the other triangle must get no gradient
    w_loss, v_loss = _weighted(4), _weighted((4, 4))

    def f(a):
        w, v = np.linalg.eigh(a, UPLO=uplo)
        return w_loss(w) + v_loss(v * v) + F.sum(np.linalg.eigvalsh(a, UPLO=uplo) ** 2)
    _check(f, a)
