"""The registry of pure NumPy library functions: ``np.linalg.*`` and ``np.fft.*`` calls inside graphs.

A function here has no op of its own: a call of it is one ``library_call`` node whose ``name`` attribute is the
function's full NumPy name (``name="numpy.linalg.solve"``) and whose other attributes are its static keyword
arguments, every one written out (defaults too). Each entry has its own shape rule; dtypes are NumPy's, asked
of the function itself on size-1 operands (so ``float32`` stays ``float32`` where NumPy keeps it).

The registry is closed: a saved graph names a function, and the loader finds it only here (an unknown name is a
``GraphLoadError``); nothing is ever imported or looked up by a name read from a file. Functions whose result
shape or dtype depends on the data (``eig``'s real-or-complex result, ``lstsq``'s residuals) are not in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import OpError
from ..ir.types import TensorType
from .base import Op, OpDef, broadcast, normalize_axes, normalize_axis, register, same_size, shape_of


@dataclass(frozen=True)
class LibraryFunction:
    """One pure NumPy function a graph may call by name."""

    name: str
    """Its full NumPy name, ``numpy.linalg.solve``: the ``name`` attribute of its nodes."""
    fn: Callable
    """The function itself (taken from NumPy's modules when this table is made, never looked up later)."""
    n_arrays: int
    """How many array operands it takes (positionally, first)."""
    keywords: tuple[tuple[str, object], ...]
    """Its static keyword arguments and their defaults, in NumPy's order (positional calls bind to them)."""
    shapes: Callable[[tuple, dict], tuple]
    """The output shapes from the operand shapes and the keyword arguments: a tuple of shapes, one per output."""
    result: str = ""
    """The name of the NumPy namedtuple the outputs come in (``QRResult``), or "" for one array."""


LIBRARY: dict[str, LibraryFunction] = {}
BY_FUNCTION: dict[Callable, LibraryFunction] = {}


def _add(module, name: str, n_arrays: int, keywords: dict, shapes, result: str = "") -> None:
    fn = getattr(module, name)
    full = f"{module.__name__}.{name}"
    entry = LibraryFunction(full, fn, n_arrays, tuple(keywords.items()), shapes, result)
    LIBRARY[full] = entry
    BY_FUNCTION[fn] = entry


def _matrix(shape, what="a", square=True):
    if len(shape) < 2:
        raise OpError(f"{len(shape)}-dimensional array given. Array must be at least two-dimensional ({what})")
    if square:
        same_size("linalg", shape[-1], shape[-2], f"Last 2 dimensions of the array must be square ({what} of "
                                                  f"shape {tuple(shape)})")
    return shape


def _solve(shapes, kw):
    a, b = shapes
    _matrix(a)
    if len(b) == 1:
        same_size("solve", b[0], a[-1], f"solve: b of shape {b} does not match a of shape {a}")
        return (a[:-1],)
    same_size("solve", b[-2], a[-1], f"solve: b of shape {b} does not match a of shape {a}")
    try:
        batch = broadcast("solve", a[:-2], b[:-2])
    except ValueError:
        raise OpError(f"solve: batch dimensions of {a} and {b} do not broadcast") from None
    return (tuple(batch) + tuple(b[-2:]),)


def _same_square(shapes, kw):
    return (_matrix(shapes[0]),)


def _batch_of_square(shapes, kw):
    return (_matrix(shapes[0])[:-2],)


def _shorter(m, n):
    if type(m) is int and type(n) is int:
        return min(m, n)
    if m == n:
        return m
    from ..ir.relations import relation
    from ..ir.shape_env import decide
    return m if decide(relation(">=", n, m), f"min({m}, {n}) of a matrix's sizes") else n


def _qr(shapes, kw):
    a = _matrix(shapes[0], square=False)
    *batch, m, n = a
    k = _shorter(m, n)
    mode = kw["mode"]
    if mode == "r":
        return ((*batch, k, n),)
    if mode == "complete":
        return ((*batch, m, m), (*batch, m, n))
    if mode != "reduced":
        raise OpError(f"qr: mode {mode!r} is not supported in a graph (reduced, complete or r)")
    return ((*batch, m, k), (*batch, k, n))


def _eigh(shapes, kw):
    a = _matrix(shapes[0])
    return (a[:-1], a)


def _svd(shapes, kw):
    a = _matrix(shapes[0], square=False)
    *batch, m, n = a
    k = _shorter(m, n)
    if not kw["compute_uv"]:
        return ((*batch, k),)
    if kw["full_matrices"]:
        return ((*batch, m, m), (*batch, k), (*batch, n, n))
    return ((*batch, m, k), (*batch, k), (*batch, k, n))


def _pinv(shapes, kw):
    a = _matrix(shapes[0], square=False)
    return (a[:-2] + (a[-1], a[-2]),)


def _norm(shapes, kw):
    (x,), axis, keepdims = shapes, kw["axis"], kw["keepdims"]
    if axis is None:
        if kw["ord"] is not None and len(x) not in (1, 2):
            raise OpError("norm: improper number of dimensions to norm (ord given without axis needs 1-D or 2-D)")
        return ((1,) * len(x) if keepdims else (),)
    axes = normalize_axes("norm", axis, len(x))
    if len(axes) not in (1, 2):
        raise OpError("norm: improper number of dimensions to norm")
    if keepdims:
        return (tuple(1 if i in axes else d for i, d in enumerate(x)),)
    return (tuple(d for i, d in enumerate(x) if i not in axes),)


def _fft_length(kind: str):
    """The output shape of a 1-D transform along ``axis``: n (or the axis's size) points; rfft keeps n // 2 + 1,
    irfft makes n (default 2 * (m - 1))."""
    def rule(shapes, kw):
        (x,) = shapes
        axis = normalize_axis("fft", kw["axis"], len(x))
        m, n = x[axis], kw["n"]
        if kind == "rfft":
            size = (m if n is None else n) // 2 + 1
        elif kind == "irfft":
            size = 2 * (m - 1) if n is None else n
        else:
            size = m if n is None else n
        return (x[:axis] + (size,) + x[axis + 1:],)
    return rule


def _fft_n(shapes, kw):
    (x,) = shapes
    s, axes = kw["s"], kw["axes"]
    if axes is None:
        axes = tuple(range(len(x))) if s is None else tuple(range(len(x) - len(s), len(x)))
    axes = tuple(normalize_axis("fft", a, len(x)) for a in axes)
    out = list(x)
    if s is not None:
        if len(s) != len(axes):
            raise OpError("fft: shape and axes have different lengths")
        for a, size in zip(axes, s):
            out[a] = size
    return (tuple(out),)


def _same(shapes, kw):
    return (shapes[0],)


def _build() -> None:
    la, fft = np.linalg, np.fft
    _add(la, "solve", 2, {}, _solve)
    _add(la, "inv", 1, {}, _same_square)
    _add(la, "cholesky", 1, {}, _same_square)
    _add(la, "det", 1, {}, _batch_of_square)
    _add(la, "slogdet", 1, {}, lambda s, kw: _batch_of_square(s, kw) * 2, "SlogdetResult")
    _add(la, "qr", 1, {"mode": "reduced"}, _qr, "QRResult")
    _add(la, "eigh", 1, {"UPLO": "L"}, _eigh, "EighResult")
    _add(la, "eigvalsh", 1, {"UPLO": "L"}, lambda s, kw: (_matrix(s[0])[:-1],))
    _add(la, "svd", 1, {"full_matrices": True, "compute_uv": True, "hermitian": False}, _svd, "SVDResult")
    _add(la, "pinv", 1, {"rcond": None, "hermitian": False}, _pinv)
    _add(la, "norm", 1, {"ord": None, "axis": None, "keepdims": False}, _norm)
    _add(la, "matrix_power", 1, {"n": 1}, _same_square)
    for name in ("fft", "ifft"):
        _add(fft, name, 1, {"n": None, "axis": -1, "norm": None}, _fft_length("c2c"))
    _add(fft, "rfft", 1, {"n": None, "axis": -1, "norm": None}, _fft_length("rfft"))
    _add(fft, "irfft", 1, {"n": None, "axis": -1, "norm": None}, _fft_length("irfft"))
    for name in ("fft2", "ifft2"):
        _add(fft, name, 1, {"s": None, "axes": (-2, -1), "norm": None}, _fft_n)
    for name in ("fftn", "ifftn"):
        _add(fft, name, 1, {"s": None, "axes": None, "norm": None}, _fft_n)
    for name in ("fftshift", "ifftshift"):
        _add(fft, name, 1, {"axes": None}, _same)


_build()


def entry(name) -> LibraryFunction:
    """The registered function named ``name``; an ``OpError`` naming the registry for anything else."""
    found = LIBRARY.get(name) if isinstance(name, str) else None
    if found is None:
        raise OpError(f"library_call: {name!r} is not in the registry of pure NumPy functions "
                      f"(graph_lab.ops.library.LIBRARY has: {', '.join(sorted(LIBRARY))})")
    return found


def _static(name: str, key: str, value):
    if isinstance(value, list):
        value = tuple(value)
    ok = value is None or isinstance(value, (bool, int, float, str)) or (
        isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value))
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if not ok:
        raise OpError(f"{name}: {key}={value!r} must be a number, a string, None or a tuple of ints known when "
                      f"the graph is captured")
    return value


def _bind_library_call(name, *args, **kwargs):
    found = entry(name)
    arrays, rest = list(args[:found.n_arrays]), list(args[found.n_arrays:])
    if len(arrays) < found.n_arrays:
        raise OpError(f"{found.name} takes {found.n_arrays} array operands, got {len(arrays)}")
    names = [k for k, _ in found.keywords]
    if len(rest) > len(names):
        raise OpError(f"{found.name}: too many positional arguments")
    given = dict(zip(names, rest))
    for k, v in kwargs.items():
        if k not in names or k in given:
            raise OpError(f"{found.name}: keyword {k!r} is not supported in a graph (it takes {names})")
        given[k] = v
    attrs = {"name": found.name}
    for k, default in found.keywords:
        attrs[k] = _static(found.name, k, given.get(k, default))
    for a in arrays:
        shape_of(a)  # (an operand that is not array-like fails here, with NumPy's own words later)
    return arrays, attrs


def _library_call(*arrays, name, **kwargs):
    out = entry(name).fn(*arrays, **kwargs)
    return tuple(out) if isinstance(out, tuple) else (out,)


def _infer_library_call(types, attrs):
    found = entry(attrs.get("name"))
    kw = {k: v for k, v in attrs.items() if k != "name"}
    if set(kw) != {k for k, _ in found.keywords}:
        raise OpError(f"{found.name}: attributes {sorted(kw)} are not its keywords {[k for k, _ in found.keywords]}")
    if len(types) != found.n_arrays:
        raise OpError(f"{found.name} takes {found.n_arrays} array operands, got {len(types)}")
    shapes = found.shapes(tuple(t.shape for t in types), kw)
    return tuple(TensorType(dtype, shape) for dtype, shape in zip(_dtypes(found, types, kw), shapes))


_dtype_cache: dict[tuple, tuple] = {}


def _dtypes(found: LibraryFunction, types, kw) -> tuple:
    """The output dtypes, from a call on size-1 operands (an identity matrix of one element for linear algebra)."""
    key = (found.name, tuple(sorted((k, repr(v)) for k, v in kw.items()))) + tuple((t.dtype, t.ndim) for t in types)
    hit = _dtype_cache.get(key)
    if hit is None:
        samples = [np.ones((1,) * t.ndim, t.dtype) for t in types]
        probe_kw = dict(kw)
        if probe_kw.get("s") is not None:
            probe_kw["s"] = (1,) * len(probe_kw["s"])
        if "n" in probe_kw and found.name.startswith("numpy.fft"):
            probe_kw["n"] = 2  # (irfft of one point has no default length)
        try:
            with np.errstate(all="ignore"):
                hit = tuple(np.asarray(o).dtype for o in _library_call(*samples, name=found.name, **probe_kw))
        except (TypeError, ValueError, np.linalg.LinAlgError) as e:
            shown = ", ".join(str(t) for t in types)
            raise OpError(f"{found.name}: NumPy refuses operands {shown}: {e}") from None
        _dtype_cache[key] = hit
    return hit


register(OpDef(Op.LIBRARY_CALL, "linalg", _bind_library_call, _infer_library_call, _library_call, None,
               multi_output=True, doc="a pure NumPy function of the registry (np.linalg, np.fft), by its name"))


def result_of(name: str, outputs: tuple):
    """What the NumPy function returns, made from the node's outputs: one array, or NumPy's namedtuple."""
    found = entry(name)
    if len(outputs) == 1:  # (svd with compute_uv=False returns the singular values alone)
        return outputs[0]
    if not found.result:
        return outputs
    return _result_type(found)(*outputs)


_result_types: dict[str, type] = {}


def _result_type(found: LibraryFunction) -> type:
    """NumPy's namedtuple class of a function's result (``QRResult``), found once by a call on a 1 x 1 identity."""
    if found.name not in _result_types:
        _result_types[found.name] = type(found.fn(np.eye(1)))
    return _result_types[found.name]
