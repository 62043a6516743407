"""Statistics: ``trace``, ``average``, ``cov``, ``corrcoef`` and ``histogram`` with a fixed number of bins.

Each is NumPy's own function called once, so a graph computes what eager code does bit for bit. Their results
have shapes known from the operands' shapes alone (a histogram's edges depend on the data, but not how many
there are), which is what lets them be nodes.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..ir.types import TensorType
from .base import Op, OpDef, ndim_of, normalize_axes, probe_dtype, register, same_size
from .movement import diagonal_axes


def _probe(op, fn, types, attrs):
    try:
        return probe_dtype(fn, types, tuple(sorted(attrs.items())), **attrs)
    except (TypeError, ValueError) as e:
        raise OpError(f"{op}: NumPy refuses {', '.join(map(str, types))}: {e}") from None


# --- trace: the sum of a diagonal

def _bind_trace(x, offset=0, axis1=0, axis2=1):
    a1, a2 = diagonal_axes(Op.TRACE, x, axis1, axis2)
    return [x], {"offset": int(offset), "axis1": a1, "axis2": a2}


def _trace(x, offset, axis1, axis2):
    return np.trace(x, offset, axis1, axis2)


def _infer_trace(types, attrs):
    (t,) = types
    a1, a2 = attrs["axis1"], attrs["axis2"]
    if max(a1, a2) >= t.ndim:
        raise OpError(f"trace: axes {a1}, {a2} out of bounds for {t}")
    shape = tuple(d for i, d in enumerate(t.shape) if i not in (a1, a2))
    return (TensorType(_probe(Op.TRACE, _trace, types, attrs), shape),)


register(OpDef(Op.TRACE, "reduce", _bind_trace, _infer_trace, _trace, "np.trace", doc="sum along a diagonal"))


# --- average: a mean, weighted when weights are given

def _bind_average(a, axis=None, weights=None, returned=False, keepdims=False):
    if returned:
        raise OpError("average: returned=True is not supported in a graph; compute the sum of the weights apart")
    axes = normalize_axes(Op.AVERAGE, axis, ndim_of(a))
    operands = [a] if weights is None else [a, weights]
    return operands, {"axis": axes, "keepdims": bool(keepdims)}


def _average(a, *weights, axis, keepdims):
    return np.average(a, axis=axis, weights=weights[0] if weights else None, keepdims=keepdims)


def _infer_average(types, attrs):
    t, axes = types[0], attrs["axis"]
    axes_list = tuple(range(t.ndim)) if axes is None else axes
    if any(a >= t.ndim for a in axes_list):
        raise OpError(f"average: axis {axes} out of bounds for {t}")
    if len(types) == 2:
        w = types[1]
        if w.ndim == t.ndim:
            for a, b in zip(t.shape, w.shape):
                same_size(Op.AVERAGE, a, b, f"average: weights {w} differ in shape from a {t}")
        else:
            if axes is None or len(axes) != 1 or w.ndim != 1:
                raise OpError(f"average: weights {w} differ in shape from a {t}; 1-D weights need one axis")
            same_size(Op.AVERAGE, w.shape[0], t.shape[axes[0]],
                      f"average: length of weights {w.shape[0]} differs from axis {axes[0]} of {t}")
    if attrs["keepdims"]:
        shape = tuple(1 if i in axes_list else d for i, d in enumerate(t.shape))
    else:
        shape = tuple(d for i, d in enumerate(t.shape) if i not in axes_list)
    return (TensorType(_probe(Op.AVERAGE, _average, types, attrs), shape),)


register(OpDef(Op.AVERAGE, "reduce", _bind_average, _infer_average, _average, "np.average",
               doc="mean over axes, weighted when weights are given"))


# --- cov and corrcoef: one variable per row (rowvar=True) or per column

def _bind_cov(m, y=None, rowvar=True, bias=False, ddof=None):
    for v in (m, y):
        if v is not None and ndim_of(v) > 2:
            raise OpError("cov: m has more than 2 dimensions")
    if ddof is not None and not isinstance(ddof, (int, np.integer)):
        raise OpError("cov: ddof must be an integer")
    attrs = {"rowvar": bool(rowvar), "bias": bool(bias), "ddof": None if ddof is None else int(ddof)}
    return ([m] if y is None else [m, y]), attrs


def _bind_corrcoef(x, y=None, rowvar=True):
    operands, attrs = _bind_cov(x, y, rowvar)
    return operands, {"rowvar": attrs["rowvar"]}


def _cov(m, *y, rowvar, bias, ddof):
    return np.cov(m, y[0] if y else None, rowvar, bias, ddof)


def _corrcoef(x, *y, rowvar):
    return np.corrcoef(x, y[0] if y else None, rowvar)


def _variables_and_observations(t: TensorType, rowvar: bool):
    if t.ndim < 2:
        return 1, (t.shape[0] if t.ndim else 1)
    return (t.shape[0], t.shape[1]) if rowvar else (t.shape[1], t.shape[0])


def _covariance_infer(op: Op, fn):
    def infer(types, attrs):
        n_vars, n_obs = 0, None
        for t in types:
            if t.ndim > 2:
                raise OpError(f"{op}: {t} has more than 2 dimensions")
            v, o = _variables_and_observations(t, attrs["rowvar"])
            if n_obs is not None:
                same_size(op, n_obs, o, f"{op}: all the input array dimensions except for the concatenation axis "
                                        f"must match exactly ({', '.join(map(str, types))})")
            n_vars, n_obs = n_vars + v, o
        shape = () if n_vars == 1 else (n_vars, n_vars)  # NumPy squeezes a single variable to a 0-d result
        return (TensorType(_probe(op, fn, types, attrs), shape),)
    return infer


register(OpDef(Op.COV, "reduce", _bind_cov, _covariance_infer(Op.COV, _cov), _cov, "np.cov",
               doc="covariance matrix of the variables (rows, or columns with rowvar=False)"))
register(OpDef(Op.CORRCOEF, "reduce", _bind_corrcoef, _covariance_infer(Op.CORRCOEF, _corrcoef), _corrcoef,
               "np.corrcoef", doc="Pearson correlation coefficients of the variables"))


# --- histogram: a fixed number of bins; counts and edges

def _bind_histogram(a, bins=10, range=None, density=None, weights=None):
    if not isinstance(bins, (int, np.integer)) or isinstance(bins, bool):
        raise OpError("histogram: bins must be an int known when the graph is captured (edges given as an array "
                      "are not supported in a graph)")
    if bins < 1:
        raise OpError("histogram: `bins` must be positive, when an integer")
    if range is not None:
        lo, hi = range
        if not all(isinstance(v, (int, float, np.integer, np.floating)) for v in (lo, hi)):
            raise OpError("histogram: range must be two numbers known when the graph is captured")
        range = (float(lo), float(hi))
    operands = [a] if weights is None else [a, weights]
    return operands, {"bins": int(bins), "range": range, "density": None if density is None else bool(density)}


def _histogram(a, *weights, bins, range, density):
    return np.histogram(a, bins, range, density, weights[0] if weights else None)


def _infer_histogram(types, attrs):
    if len(types) == 2 and types[1].shape != types[0].shape:
        same_size(Op.HISTOGRAM, types[0].size, types[1].size,
                  f"histogram: weights {types[1]} should have the same shape as a {types[0]}")
    probe_attrs = {**attrs, "range": attrs["range"] or (0.0, 1.0)}
    try:
        samples = [np.ones((1,) * t.ndim, t.dtype) for t in types]
        counts, edges = _histogram(*samples, **probe_attrs)
    except (TypeError, ValueError) as e:
        raise OpError(f"histogram: NumPy refuses {', '.join(map(str, types))}: {e}") from None
    return TensorType(counts.dtype, (attrs["bins"],)), TensorType(edges.dtype, (attrs["bins"] + 1,))


register(OpDef(Op.HISTOGRAM, "reduce", _bind_histogram, _infer_histogram, _histogram, "np.histogram",
               multi_output=True, doc="counts in a fixed number of equal bins, and the bins' edges"))
