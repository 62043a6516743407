"""Comparing two results: structure first, then each leaf's shape, dtype, NaN/inf positions and values.

A result is any nest of dicts, lists and tuples whose leaves are arrays, NumPy or Python numbers, or other
Python values. Numbers and 0-d arrays are compared alike (a graph returns ``array(2.0)`` where eager code
returned ``2.0``), with the dtype NumPy gives them. The first difference found is returned as a ``Mismatch``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .tolerance import allowed_error, passes_float64_judge, tolerance_for

_NUMBER = (np.ndarray, np.generic, bool, int, float, complex)


@dataclass
class Mismatch:
    """The first place where two results differ."""

    path: str
    """Where: ``output[1]['h']``, ``printed text``, ``global log``..."""
    kind: str
    """What differs: structure, type, shape, dtype, nan, inf, value, bits, printed, state, exception."""
    expected: Any
    """The eager side (the leaf, the text, or the state) at ``path``."""
    got: Any
    """The captured side at ``path``."""
    detail: str
    """One line for people: the worst element, the tolerance used, the two texts..."""

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}"


def compare(want: Any, got: Any, *, exact: bool = False, ref64: Any = None, accumulating: bool = True,
            path: str = "output") -> Mismatch | None:
    """The first difference between ``want`` (eager) and ``got`` (captured), or None.

    ``exact`` asks for bit-for-bit equality; otherwise the tolerance table applies. ``ref64`` is the same
    computation run in float64 (same structure), used to judge float32/float16 leaves that fail the table
    when ``accumulating`` (reductions, matmul, fused kernels may add in another order)."""
    if isinstance(want, dict) or isinstance(got, dict):
        if not (isinstance(want, dict) and isinstance(got, dict)) or list(want) != list(got):
            return _structure(path, want, got)
        for k in want:
            sub = ref64.get(k) if isinstance(ref64, dict) else None
            found = compare(want[k], got[k], exact=exact, ref64=sub, accumulating=accumulating,
                            path=f"{path}[{k!r}]")
            if found:
                return found
        return None
    if isinstance(want, (list, tuple)) or isinstance(got, (list, tuple)):
        if type(want) is not type(got) or len(want) != len(got):
            return _structure(path, want, got)
        refs = ref64 if isinstance(ref64, (list, tuple)) and len(ref64) == len(want) else [None] * len(want)
        for i, (w, g, r) in enumerate(zip(want, got, refs)):
            found = compare(w, g, exact=exact, ref64=r, accumulating=accumulating, path=f"{path}[{i}]")
            if found:
                return found
        return None
    return compare_leaf(want, got, exact=exact, ref64=ref64, accumulating=accumulating, path=path)


def _structure(path: str, want, got) -> Mismatch:
    return Mismatch(path, "structure", want, got,
                    f"eager returned {_shape_of_result(want)}, the capture returned {_shape_of_result(got)}")


def _shape_of_result(x) -> str:
    if isinstance(x, dict):
        return f"a dict with keys {list(x)}"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of {len(x)}"
    if isinstance(x, _NUMBER):
        a = np.asarray(x)
        return f"an array {a.dtype}{list(a.shape)}"
    return f"a {type(x).__name__}"


def compare_leaf(want, got, *, exact: bool = False, ref64=None, accumulating: bool = True,
                 path: str = "output") -> Mismatch | None:
    if not isinstance(want, _NUMBER) or not isinstance(got, _NUMBER):
        if type(want) is type(got) and _same_object_value(want, got):
            return None
        return Mismatch(path, "type", want, got, f"eager gave {want!r:.80}, the capture gave {got!r:.80}")
    w, g = np.asarray(want), np.asarray(got)
    if w.shape != g.shape:
        return Mismatch(path, "shape", w, g, f"shape {g.shape}, eager gives {w.shape}")
    if w.dtype != g.dtype:
        return Mismatch(path, "dtype", w, g, f"dtype {g.dtype}, eager gives {w.dtype}")
    if w.dtype.kind in "fc":
        specials_w, specials_g = _specials(w), _specials(g)
        for name in specials_w:
            if not np.array_equal(specials_w[name], specials_g[name]):
                where = _first_index(specials_w[name] != specials_g[name])
                return Mismatch(path, "nan" if name == "NaN" else "inf", w, g, f"{name} at {where} on one side "
                                f"only: eager {_item(w[where])}, captured {_item(g[where])}")
    if w.dtype.kind not in "fc":
        if np.array_equal(w, g):
            return None
        where = _first_index(w != g)
        return Mismatch(path, "value", w, g, f"differs at {where}: eager {_item(w[where])}, captured "
                                             f"{_item(g[where])} ({w.dtype} is compared exactly)")
    return _compare_floats(w, g, exact, ref64, accumulating, path)


def _compare_floats(w, g, exact, ref64, accumulating, path) -> Mismatch | None:
    finite = np.isfinite(w)
    if exact:
        same = (w == g) | ~finite
        if w.dtype.kind == "f":
            same &= np.signbit(w) == np.signbit(g)
        if same.all():
            return None
        where = _first_index(~same)
        return Mismatch(path, "bits", w, g, f"differs in bits at {where}: eager {_item(w[where])}, captured "
                                            f"{_item(g[where])} (an exact way must run the same NumPy calls in the "
                                            f"same order)")
    tol = tolerance_for(w.dtype)
    with np.errstate(all="ignore"):
        error = np.where(finite, np.abs(g - w), 0)
        excess = error - np.where(finite, allowed_error(w, tol), 0)
    if not (excess > 0).any():
        return None
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(excess)), excess.shape))
    detail = (f"worst element at {where}: eager {_item(w[where])}, captured {_item(g[where])}, |error| "
              f"{float(error[where]):.3g} > {tol.atol:g} + {tol.rtol:g} * |eager| ({w.dtype} row)")
    if ref64 is not None and accumulating and w.dtype in (np.float32, np.float16):
        ref = np.asarray(ref64)
        if ref.shape == w.shape:
            ok, verdict = passes_float64_judge(w, g, ref)
            if ok:
                return None
            detail += f"; {verdict}"
    return Mismatch(path, "value", w, g, detail)


def _specials(a: np.ndarray) -> dict[str, np.ndarray]:
    """Where ``a`` holds NaN, +inf and -inf (in either part of a complex number)."""
    parts = (a.real, a.imag) if a.dtype.kind == "c" else (a,)
    return {"NaN": np.logical_or.reduce([np.isnan(p) for p in parts]),
            "+inf": np.logical_or.reduce([np.isposinf(p) for p in parts]),
            "-inf": np.logical_or.reduce([np.isneginf(p) for p in parts])}


def _item(x) -> str:
    return repr(np.asarray(x).item())


def _first_index(mask: np.ndarray) -> tuple:
    if mask.ndim == 0:
        return ()
    return tuple(int(i) for i in np.argwhere(mask)[0])


def _same_object_value(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return a is b
