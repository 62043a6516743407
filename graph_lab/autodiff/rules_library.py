"""Derivative rules of the library functions a ``library_call`` node calls: ``numpy.linalg`` (solve, inv, det,
slogdet, cholesky, eigh, eigvalsh, matrix_power, norm) and ``numpy.fft`` (the transforms and the shifts), one rule
per function name.

The linear-algebra rules are the classical ones for invertible (and, for cholesky, positive definite) real
matrices; eigh's assume distinct eigenvalues. NumPy's cholesky and eigh read one triangle of a symmetric matrix,
so their cotangents live there. The transforms are linear: each rule is the adjoint transform (``fft``'s is
``ifft`` with the dual normalisation: "backward" and "forward" swap, "ortho" stays), with the zero padding or
cropping of ``n`` / ``s`` undone. Any other function of the registry (qr, svd, pinv) is refused by name.
"""

from __future__ import annotations

import numpy as np

from ..frontends import functional as F
from ..ops import Op
from ..ops.base import normalize_axis, register_vjp
from .core import NoDerivativeError
from .rules_elementwise import unbroadcast
from .rules_structure import expand_back


def _call(name: str, *operands, **kwargs):
    return F.library_call(name, *operands, **kwargs)


def _swap(t):
    return F.swapaxes(t, -1, -2)


def _real_only(name: str, ins) -> None:
    if any(t.dtype.kind == "c" for t in ins):
        raise NoDerivativeError(f"{name} of complex matrices has no rule (the linear-algebra rules are for real "
                                f"ones)")


# --- numpy.linalg

def _solve(cts, ins, outs, **kw):
    """x = a^-1 b: db = a^-T ct, da = -db x^T (b a vector when it is 1-D, as NumPy takes it)."""
    a, b = ins
    x, ct = outs[0], cts[0]
    if b.ndim == 1:
        db = _call("numpy.linalg.solve", _swap(a), F.expand_dims(ct, -1))[0]          # (..., n, 1)
        da = -F.matmul(db, _swap(F.expand_dims(x, -1)))
        return [unbroadcast(da, tuple(a.shape)), unbroadcast(db[..., 0], tuple(b.shape))]
    db = _call("numpy.linalg.solve", _swap(a), ct)[0]
    return [unbroadcast(-F.matmul(db, _swap(x)), tuple(a.shape)), unbroadcast(db, tuple(b.shape))]


def _inv(cts, ins, outs, **kw):
    y = _swap(outs[0])
    return [-F.matmul(F.matmul(y, cts[0]), y)]


def _inverse_transposed(a):
    return _swap(_call("numpy.linalg.inv", a)[0])


def _det(cts, ins, outs, **kw):
    """d det(a) = det(a) tr(a^-1 da)."""
    scale = F.expand_dims(F.expand_dims(cts[0] * outs[0], -1), -1)
    return [scale * _inverse_transposed(ins[0])]


def _slogdet(cts, ins, outs, **kw):
    """The sign is constant where the determinant is not 0; d log|det a| = tr(a^-1 da)."""
    scale = F.expand_dims(F.expand_dims(cts[1], -1), -1)
    return [scale * _inverse_transposed(ins[0])]


def _one_triangle(s, lower: bool):
    """The cotangent of a symmetric matrix read from one triangle, from ``s``, its cotangent as a full matrix: an
    element off the diagonal stands for two of the symmetric matrix (s + s^T), one on the diagonal for itself."""
    both = s + _swap(s)
    return (F.tril(both) if lower else F.triu(both)) - s * np.eye(s.shape[-1])


def _cholesky(cts, ins, outs, **kw):
    """A = L L^T: dL = L phi(L^-1 dA L^-T), phi = the lower triangle with its diagonal halved. So the cotangent
    of a symmetric dA is S = L^-T phi(L^T G) L^-1, on the lower triangle NumPy reads."""
    low, g = outs[0], cts[0]
    inner = F.matmul(_swap(low), g)
    phi = F.tril(inner) - inner * (0.5 * np.eye(low.shape[-1]))
    half = _call("numpy.linalg.solve", _swap(low), phi)[0]                       # L^-T phi
    return [_one_triangle(_swap(_call("numpy.linalg.solve", _swap(low), _swap(half))[0]), True)]


def _eigh(cts, ins, outs, UPLO):
    """A = V diag(w) V^T: the cotangent V (diag(gw) + F * (V^T gV)) V^T, F[i, j] = 1 / (w[j] - w[i]) off the
    diagonal (distinct eigenvalues), on the triangle UPLO names."""
    w, g_w = outs[0], cts[0]
    if len(outs) == 1:  # eigvalsh: the eigenvectors computed again
        vectors = _call("numpy.linalg.eigh", ins[0], UPLO=UPLO)[1]
        inner = F.expand_dims(g_w, -1) * np.eye(w.shape[-1])
    else:
        vectors, g_v = outs[1], cts[1]
        eye = np.eye(w.shape[-1])
        gaps = F.expand_dims(w, -2) - F.expand_dims(w, -1) + eye              # [i, j] = w[j] - w[i]
        inner = F.expand_dims(g_w, -1) * eye + F.where(eye == 1, 0.0, 1.0 / gaps) * F.matmul(_swap(vectors), g_v)
    s = F.matmul(F.matmul(vectors, inner), _swap(vectors))
    return [_one_triangle(s, UPLO == "L")]


def _matrix_power(cts, ins, outs, n):
    """A^n = A A ... A: the k-th factor's cotangent is (A^T)^k G (A^T)^(n-1-k); a negative n is the power of the
    inverse, whose cotangent goes through inv's rule."""
    a, g = ins[0], cts[0]
    base = a if n >= 0 else _call("numpy.linalg.inv", a)[0]
    powers = [None, _swap(base)]                                                   # powers[k] = (base^T)^k
    for _ in range(2, abs(n)):
        powers.append(F.matmul(powers[-1], powers[1]))
    d_base = F.zeros_like(a)
    for k in range(abs(n)):
        left = g if k == 0 else F.matmul(powers[k], g)
        d_base = d_base + (left if k == abs(n) - 1 else F.matmul(left, powers[abs(n) - 1 - k]))
    return [d_base if n >= 0 else _inv([d_base], [a], [base])[0]]


def _norm(cts, ins, outs, ord, axis, keepdims):
    """Vector norms (and Frobenius): |x|_p's derivative is sign(x) |x|^(p-1) / |x|_p^(p-1); inf and -inf send the
    cotangent to the elements of largest (smallest) magnitude, shared between ties."""
    x = ins[0]
    axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim)
    matrix = (axis is None and ord is not None and x.ndim == 2) or len(axes) == 2
    if matrix and ord not in (None, "fro"):
        raise NoDerivativeError(f"numpy.linalg.norm with the matrix norm ord={ord!r} has no rule (only 'fro' "
                                f"and the vector norms)")
    ct = expand_back(cts[0], x, axes, keepdims)
    y = expand_back(outs[0], x, axes, keepdims)
    if ord in (None, 2, 2.0, "fro"):
        return [ct * x / y]
    if ord == 0:  # the number of non-zero elements
        return [None]
    sign = F.sign(x)
    if ord in (np.inf, -np.inf):
        hit = F.cast(F.abs(x) == y, x.dtype)
        return [ct * sign * hit / F.sum(hit, axis=axes, keepdims=True)]
    if ord == 1:
        return [ct * sign]
    p = float(ord)
    return [ct * sign * F.pow(F.abs(x), p - 1.0) / F.pow(y, p - 1.0)]


def normalize_axis_tuple(axis, ndim: int) -> tuple[int, ...]:
    return tuple(sorted(normalize_axis("norm", a, ndim) for a in ((axis,) if isinstance(axis, int) else axis)))


# --- numpy.fft

_DUAL = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}
_INVERSE = {"fft": "ifft", "ifft": "fft", "fft2": "ifft2", "ifft2": "fft2", "fftn": "ifftn", "ifftn": "fftn",
            "fftshift": "ifftshift", "ifftshift": "fftshift"}


def _resize(t, axis: int, size: int):
    """``t`` cropped, or padded with zeros at the end, to ``size`` along ``axis``: the adjoint of a transform's
    own padding or cropping to n points."""
    now = t.shape[axis]
    if now > size:
        return t[(slice(None),) * axis + (slice(0, size),)]
    if now < size:
        return F.pad(t, tuple((0, size - now) if i == axis else (0, 0) for i in range(t.ndim)))
    return t


def _transform_1d(short: str):
    def rule(cts, ins, outs, n, axis, norm):
        x = ins[0]
        axis = normalize_axis("fft", axis, x.ndim)
        back = _call(f"numpy.fft.{_INVERSE[short]}", cts[0], axis=axis, norm=_DUAL[norm])[0]
        return [_resize(back, axis, x.shape[axis])]
    return rule


def _rfft(cts, ins, outs, n, axis, norm):
    """rfft keeps the first n//2 + 1 points of the transform: the adjoint pads them back to n with zeros."""
    x = ins[0]
    axis = normalize_axis("fft", axis, x.ndim)
    points = x.shape[axis] if n is None else n
    back = _call("numpy.fft.ifft", _resize(cts[0], axis, points), axis=axis, norm=_DUAL[norm])[0]
    return [F.real(_resize(back, axis, x.shape[axis]))]


def _irfft(cts, ins, outs, n, axis, norm):
    """irfft of the first n//2 + 1 points z: y = Re(ifft(z and its conjugate mirror)); each point other than 0
    (and n/2 for an even n) appears twice, so its cotangent is 2 rfft(ct), the others once."""
    z = ins[0]
    axis = normalize_axis("fft", axis, z.ndim)
    points = outs[0].shape[axis]
    half = _call("numpy.fft.rfft", cts[0], axis=axis, norm=_DUAL[norm])[0]
    twice = np.full(points // 2 + 1, 2.0)
    twice[0] = 1.0
    if points % 2 == 0:
        twice[-1] = 1.0
    twice = twice.reshape((-1,) + (1,) * (z.ndim - axis - 1))
    return [_resize(half * twice, axis, z.shape[axis])]


def _transform_nd(short: str):
    def rule(cts, ins, outs, s, axes, norm):
        x = ins[0]
        if axes is None:
            axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
        axes = tuple(normalize_axis("fft", a, x.ndim) for a in axes)
        back = _call(f"numpy.fft.{_INVERSE[short]}", cts[0], axes=axes, norm=_DUAL[norm])[0]
        for a in axes:
            back = _resize(back, a, x.shape[a])
        return [back]
    return rule


def _shift(short: str):
    def rule(cts, ins, outs, axes):
        return [_call(f"numpy.fft.{_INVERSE[short]}", cts[0], axes=axes)[0]]
    return rule


LIBRARY_RULES = {
    "numpy.linalg.solve": _solve, "numpy.linalg.inv": _inv, "numpy.linalg.det": _det,
    "numpy.linalg.slogdet": _slogdet, "numpy.linalg.cholesky": _cholesky, "numpy.linalg.norm": _norm,
    "numpy.linalg.eigh": _eigh, "numpy.linalg.eigvalsh": _eigh, "numpy.linalg.matrix_power": _matrix_power,
    "numpy.fft.rfft": _rfft, "numpy.fft.irfft": _irfft,
    **{f"numpy.fft.{short}": _transform_1d(short) for short in ("fft", "ifft")},
    **{f"numpy.fft.{short}": _transform_nd(short) for short in ("fft2", "ifft2", "fftn", "ifftn")},
    **{f"numpy.fft.{short}": _shift(short) for short in ("fftshift", "ifftshift")},
}
"""The rule of each function of the registry that has one (graph_lab/ops/library.py)."""


def _library_call(cts, ins, outs, name, **kwargs):
    rule = LIBRARY_RULES.get(name)
    if rule is None:
        raise NoDerivativeError(f"{name} has no derivative rule (the library functions with one: "
                                f"{', '.join(sorted(LIBRARY_RULES))}); compute it outside the differentiated "
                                f"function, or from ops that have rules")
    if name.startswith("numpy.linalg."):
        _real_only(name, ins)
    return rule(cts, ins, outs, **kwargs)


register_vjp(Op.LIBRARY_CALL, _library_call)
