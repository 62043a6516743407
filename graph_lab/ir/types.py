"""Types of IR values: a dtype and a shape, plus whether the value is a Python scalar.

NumPy 2 (NEP 50) treats Python ``int``/``float``/``bool`` as *weak*: ``0.5 * x`` keeps ``x``'s float32 dtype.
A weak value is typed ``float``, ``int`` or ``bool`` in the printed IR, so the difference is visible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Short names used in the printed IR, e.g. f64[4,16].
_SHORT_NAMES = {
    np.dtype(np.float64): "f64", np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
    np.dtype(np.int64): "i64", np.dtype(np.int32): "i32", np.dtype(np.int16): "i16", np.dtype(np.int8): "i8",
    np.dtype(np.uint64): "u64", np.dtype(np.uint32): "u32", np.dtype(np.uint16): "u16", np.dtype(np.uint8): "u8",
    np.dtype(np.bool_): "bool", np.dtype(np.complex128): "c128", np.dtype(np.complex64): "c64",
}
_FROM_SHORT = {short: dt for dt, short in _SHORT_NAMES.items()}
_WEAK_NAMES = {bool: "bool", int: "int", float: "float", complex: "complex"}

# The dtype NumPy gives a Python scalar when it has to make an array of it on its own.
_WEAK_DEFAULT_DTYPE = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
                       complex: np.dtype(np.complex128)}


def dtype_name(dtype: np.dtype) -> str:
    """The short printed name of a dtype (``f32``); NumPy's own name for the rare ones."""
    dtype = np.dtype(dtype)
    short = _SHORT_NAMES.get(dtype)
    return short if short is not None else dtype.name


def dtype_from_name(name: str) -> np.dtype:
    """Inverse of :func:`dtype_name`. Raises ``KeyError`` for names it does not know."""
    return _FROM_SHORT[name]


@dataclass(frozen=True, slots=True)
class TensorType:
    """The static type of an IR value."""

    dtype: np.dtype
    """NumPy dtype of the value (for a weak scalar: the dtype NumPy would give it alone)."""
    shape: tuple[int, ...]
    """Size of each dimension; ``()`` for a scalar."""
    weak: type | None = None
    """For a Python scalar (``bool``, ``int``, ``float``): that Python type. ``None`` for arrays."""

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __str__(self) -> str:
        if self.weak is not None:
            return _WEAK_NAMES[self.weak]
        return f"{dtype_name(self.dtype)}[{','.join(str(d) for d in self.shape)}]"

    @staticmethod
    def of(x) -> "TensorType":
        """The type of a concrete value: an ndarray, a NumPy scalar, or a Python scalar (weak)."""
        if isinstance(x, np.ndarray):
            key = (x.dtype, x.shape)
            hit = _ARRAY_TYPES.get(key)
            if hit is None:
                if len(_ARRAY_TYPES) >= 4096:
                    _ARRAY_TYPES.clear()
                hit = _ARRAY_TYPES[key] = TensorType(x.dtype, x.shape)
            return hit
        if isinstance(x, np.generic):
            return TensorType(x.dtype, ())
        py = type(x)
        if py in _WEAK_DEFAULT_DTYPE:
            return TensorType(_WEAK_DEFAULT_DTYPE[py], (), py)
        raise TypeError(f"{py.__name__} is not an array or a scalar")


_ARRAY_TYPES: dict[tuple, TensorType] = {}
"""The type of arrays of each (dtype, shape) seen, made once: types are immutable, and captures ask for the types
of the same weights and constants again and again."""


def weak_type_of(name: str) -> type | None:
    """The Python type behind a printed weak type name (``float`` -> float), or None."""
    for py, short in _WEAK_NAMES.items():
        if short == name:
            return py
    return None
