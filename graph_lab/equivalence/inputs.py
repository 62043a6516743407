"""Inputs to compare on: the edge cases first (zeros, negatives, large magnitudes, ties, size-1 and empty
dimensions), then random arrays, all drawn from one seeded generator.

A spec maps each tensor argument to its shape, as ``trace`` takes it: ``(4, 8)`` (float64) or
``((4, 8), "float32")``, or to an ``ArraySpec``, which can also name dimensions that may vary (``("B", 8)``: the
same name is the same size in every argument) and keep values in a domain (``low=0.1`` for a ``log``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Mapping

import numpy as np


@dataclass(frozen=True)
class ArraySpec:
    """What one tensor argument may be."""

    shape: tuple
    """Sizes: ints, or names (str) of dimensions that vary between trials (0 and 1 included)."""
    dtype: np.dtype = np.dtype(np.float64)
    """The array's dtype."""
    low: float | None = None
    """Values are kept at or above this (None: no bound)."""
    high: float | None = None
    """Values are kept at or below this (None: no bound)."""

    @property
    def varying(self) -> bool:
        return any(isinstance(d, str) for d in self.shape)


def parse_specs(specs: Mapping[str, object]) -> dict[str, ArraySpec]:
    """``{"x": (4, 8), "w": ((8,), "float32"), "b": ArraySpec(...)}`` -> ArraySpecs, checked."""
    out = {}
    for name, spec in specs.items():
        if isinstance(spec, ArraySpec):
            out[name] = ArraySpec(tuple(spec.shape), np.dtype(spec.dtype), spec.low, spec.high)
            continue
        shape, dtype = spec, np.float64
        if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], (tuple, list)):
            shape, dtype = spec
        if not isinstance(shape, (tuple, list)) or not all(
                (isinstance(d, int) and not isinstance(d, bool) and d >= 0) or isinstance(d, str) for d in shape):
            raise ValueError(f"inputs_spec[{name!r}] must be a shape like (4, 8) or ('B', 8), or (shape, dtype), "
                             f"or an ArraySpec; got {spec!r}")
        out[name] = ArraySpec(tuple(shape), np.dtype(dtype))
    return out


EDGE_CASES = ("zeros", "negatives", "large magnitudes", "ties", "size-1 dims", "empty dims")


def trials(specs: Mapping[str, ArraySpec], n: int, seed: int = 0) -> Iterator[tuple[str, dict[str, np.ndarray]]]:
    """``(label, {name: array})`` for ``n`` trials: the edge cases that apply, then random ones."""
    rng = np.random.default_rng(seed)
    varying = any(s.varying for s in specs.values())
    edges = [e for e in EDGE_CASES if varying or not e.endswith("dims")]
    for k in range(n):
        label = edges[k] if k < len(edges) else f"random #{k - len(edges) + 1}"
        sizes = _sizes(specs, label, rng)
        yield label, {name: _array(spec, sizes, label, rng) for name, spec in specs.items()}


def _sizes(specs, label: str, rng) -> dict[str, int]:
    names = sorted({d for s in specs.values() for d in s.shape if isinstance(d, str)})
    if label == "size-1 dims":
        return dict.fromkeys(names, 1)
    if label == "empty dims":
        return dict.fromkeys(names, 0)
    return {name: int(rng.integers(2, 6)) for name in names}


def _array(spec: ArraySpec, sizes: dict[str, int], label: str, rng) -> np.ndarray:
    shape = tuple(sizes[d] if isinstance(d, str) else d for d in spec.shape)
    kind = spec.dtype.kind
    if kind == "b":
        values = {"zeros": np.zeros(shape, bool), "negatives": np.ones(shape, bool),
                  "ties": np.ones(shape, bool)}.get(label)
        return values if values is not None else rng.random(shape) < 0.5
    if label == "zeros":
        values = np.zeros(shape)
    elif label == "negatives":
        values = -np.abs(rng.standard_normal(shape)) * 3 - (kind in "iu")
    elif label == "large magnitudes":
        values = rng.standard_normal(shape) * (1e6 if kind in "iu" else 1e4)
    elif label == "ties":
        values = rng.integers(0, 2, shape).astype(np.float64)
    elif kind in "iu":
        values = rng.integers(-5, 6, shape).astype(np.float64)
    else:
        values = rng.standard_normal(shape) * rng.choice([0.1, 1.0, 3.0])
    if spec.low is not None or spec.high is not None:
        values = np.clip(values, spec.low, spec.high)
    if kind in "iu":
        values = np.round(values)
        info = np.iinfo(spec.dtype)
        values = np.clip(values, info.min, info.max)
    return values.astype(spec.dtype)
