"""Derivative rules of the statistics (``average``, ``cov``, ``corrcoef``, ``histogram``), written with ``F``.

``cov`` is ``C = Xc Xc^T / (N - ddof)`` of the centred variables ``Xc`` (one per row), so ``dXc = (G + G^T) Xc /
(N - ddof)``, centred again (the centring is its own adjoint). ``corrcoef`` divides ``C`` by the standard deviations,
which are ``C``'s diagonal: its rule turns the cotangent into one of ``C`` and calls ``cov``'s. A histogram's counts
are piecewise constant in the data (no gradient), but its edges move with the data's minimum and maximum, and
weighted counts are sums of the weights.
"""

from __future__ import annotations

import numpy as np

from ..frontends import functional as F
from ..ops import Op
from ..ops.base import register_vjp
from .core import NoDerivativeError
from .rules_elementwise import unbroadcast
from .rules_structure import expand_back


def _average(cts, ins, outs, axis, keepdims):
    """sum(a * w) / sum(w) over the axes: d/da = w / sum(w), d/dw = (a - average) / sum(w)."""
    a, ct = ins[0], cts[0]
    spread = expand_back(ct, a, axis, keepdims)
    if len(ins) == 1:
        count = 1
        for i in (range(a.ndim) if axis is None else axis):
            count *= a.shape[i]
        return [spread / float(count)]
    w = ins[1]
    wide = w if w.ndim == a.ndim else F.reshape(w, tuple(w.shape[0] if i == axis[0] else 1 for i in range(a.ndim)))
    total = F.sum(F.broadcast_to(wide, tuple(a.shape)), axis=axis, keepdims=True)
    average = expand_back(outs[0], a, axis, keepdims)
    dw = unbroadcast(spread * (a - average) / total, tuple(wide.shape))
    return [spread * wide / total, F.reshape(dw, tuple(w.shape))]


register_vjp(Op.AVERAGE, _average)


def _needs_transpose(t, rowvar: bool) -> bool:
    """np.cov takes each operand as at least 2-D and transposes it for rowvar=False unless it has one row."""
    return not rowvar and t.ndim == 2 and t.shape[0] != 1


def _variables(t, rowvar: bool):
    rows = F.reshape(t, (1, -1)) if t.ndim < 2 else t
    return F.transpose(rows) if _needs_transpose(t, rowvar) else rows


def _cov(cts, ins, outs, rowvar, bias, ddof):
    parts = [_variables(t, rowvar) for t in ins]
    rows = F.concatenate(parts, axis=0) if len(parts) > 1 else parts[0]
    n_vars, n_obs = rows.shape
    ddof = (0 if bias else 1) if ddof is None else ddof
    centered = rows - F.mean(rows, axis=1, keepdims=True)
    g = F.reshape(cts[0], (n_vars, n_vars))
    d_centered = F.matmul(g + F.transpose(g), centered) / float(n_obs - ddof)
    d_rows = d_centered - F.mean(d_centered, axis=1, keepdims=True)
    pieces = F.split(d_rows, [parts[0].shape[0]], 0) if len(parts) > 1 else [d_rows]
    return [F.reshape(F.transpose(p) if _needs_transpose(t, rowvar) else p, tuple(t.shape))
            for p, t in zip(pieces, ins)]


def _corrcoef(cts, ins, outs, rowvar):
    """R = C / (s s^T), s = sqrt(diag C): dC = G / (s s^T), plus on the diagonal the part through s,
    -(sum_j G_kj R_kj + sum_i G_ik R_ik) / (2 C_kk)."""
    r, g = outs[0], cts[0]
    if r.ndim == 0:  # one variable: its correlation with itself is 1 whatever it is
        return [F.zeros_like(t) for t in ins]
    c = F.cov(*ins, rowvar=rowvar)
    variances = F.diagonal(c)
    s = F.sqrt(variances)
    weighted = g * r
    through_s = -0.5 * (F.sum(weighted, axis=1) + F.sum(weighted, axis=0)) / variances
    d_c = g / F.outer(s, s) + F.diag(through_s)
    return _cov([d_c], ins, [c], rowvar, False, None)


register_vjp(Op.COV, _cov)
register_vjp(Op.CORRCOEF, _corrcoef)


def _histogram(cts, ins, outs, bins, range, density):
    """Edges = linspace(min(a), max(a), bins + 1) without a range: edge k moves by (1 - k/bins) with the
    minimum and by k/bins with the maximum (shared among elements tied for it). A weight's cotangent is the
    cotangent of its element's bin (0 outside the range), the bin found as NumPy does, by comparing with the
    edges."""
    a, counts_ct, edges_ct = ins[0], cts[0], cts[1]
    if density:
        raise NoDerivativeError("histogram with density=True has no rule (the densities divide by data-dependent "
                                "bin widths); compute counts / (counts.sum() * widths) from density=False")
    if range is None and not (type(a.size) is int and a.size == 0):
        share = np.arange(bins + 1) / bins
        d_low, d_high = F.sum(edges_ct * (1.0 - share)), F.sum(edges_ct * share)
        at_low = F.cast(a == F.min(a), a.dtype)
        at_high = F.cast(a == F.max(a), a.dtype)
        da = at_low / F.sum(at_low) * d_low + at_high / F.sum(at_high) * d_high
    else:
        da = None
    if len(ins) == 1:
        return [da]
    w, edges = ins[1], outs[1]
    flat = F.reshape(a, (-1,))
    bin_of = F.sum(F.cast(F.expand_dims(flat, 1) >= edges[1:-1], np.intp), axis=1)
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    dw = F.where(inside, F.take(counts_ct, bin_of), 0.0)
    return [da, F.reshape(dw, tuple(w.shape))]


register_vjp(Op.HISTOGRAM, _histogram)
