"""Random draws while tracing: a trace would freeze them into constants.

``trace`` runs the user's Python once, so ``x + np.random.standard_normal(x.shape)`` draws once, at trace time,
and the graph adds the same noise on every run: a different program from the one written (the course note's
"frozen values" trap; ``torch.jit.trace`` does exactly this, silently). While a trace runs in a thread, the draws
of NumPy's legacy module functions (``np.random.normal``, ...) and of the generators made by
``np.random.default_rng`` inside the function are watched: in mode ``"error"`` a draw
raises ``TraceError`` naming the function and the line; in the other modes it warns with
``FrozenRandomWarning`` and the draw's value becomes a constant, as before.

A generator made outside the function cannot be wrapped (its methods belong to a C type), so those the function
names directly (a global or a closure variable holding a ``Generator`` or ``RandomState``) are checked after the
call instead: if the state of one moved, the function drew from it. A generator reached only through another
function or an argument is not seen; pass random values in as inputs.
"""

from __future__ import annotations

import functools
import threading
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from ..errors import TraceError
from ..ir.source import user_location, user_stacklevel


class FrozenRandomWarning(UserWarning):
    """A random draw ran at trace time, so the traced graph holds its value as a constant: every run of the
    graph adds the same numbers. Pass the random values in as an input to draw new ones per run."""


_NOT_DRAWS = frozenset({"get_state", "set_state", "seed"})
_lock = threading.Lock()
_active = threading.local()  # ``depth``, ``mode``: the innermost trace running in this thread
_installed = 0
_originals: dict[str, Any] = {}


def _legacy_draws() -> dict[str, Any]:
    """The module functions of ``numpy.random`` that draw from its global ``RandomState``."""
    state = np.random.mtrand._rand
    return {name: getattr(np.random, name) for name in np.random.__all__
            if name not in _NOT_DRAWS and getattr(getattr(np.random, name), "__self__", None) is state}


def _check_draw(full_name: str) -> None:
    mode = getattr(_active, "mode", None)
    if mode is None:
        return
    loc = user_location(3)
    where = loc.describe() if loc else "unknown location"
    if mode == "error":
        raise TraceError(
            f"random draw: {full_name} ran while tracing at {where}. A trace runs Python once, so the draw would "
            f"become a constant and every run of the graph would reuse the same numbers. Draw outside the "
            f"function and pass the values in as an input (or trace with mode='specialize' to freeze them on purpose)")
    message = (f"{full_name} ran while tracing at {where}: its values are frozen into the graph as a constant "
               f"(every run reuses them); pass random values in as an input to draw new ones per run")
    warnings.warn(message, FrozenRandomWarning, stacklevel=user_stacklevel())


def _watched(full_name: str, draw):
    @functools.wraps(draw)
    def call(*args, **kwargs):
        _check_draw(full_name)
        return draw(*args, **kwargs)
    return call


class _WatchedGenerator:
    """A generator made inside a traced function: its draws are checked, everything else is the generator's
    (``isinstance(rng, np.random.Generator)`` holds, through ``__class__``)."""

    __slots__ = ("_inner", "_kind")

    @property  # type: ignore[misc]
    def __class__(self):
        return type(self._inner)

    def __init__(self, inner, kind: str):
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_kind", kind)

    def __getattr__(self, name: str):
        attr = getattr(self._inner, name)
        if callable(attr) and not name.startswith("_") and name not in _NOT_DRAWS and name != "spawn":
            return _watched(f"numpy.random.{self._kind}.{name}", attr)
        return attr

    def __repr__(self) -> str:
        return repr(self._inner)


def _watched_maker(kind: str, make):
    @functools.wraps(make)
    def call(*args, **kwargs):
        made = make(*args, **kwargs)
        return _WatchedGenerator(made, kind) if getattr(_active, "mode", None) is not None else made
    return call


def _install() -> None:
    global _installed
    with _lock:
        if _installed == 0:
            _originals.update(_legacy_draws())
            module = np.random.__dict__
            module.update({name: _watched(f"numpy.random.{name}", fn) for name, fn in _originals.items()})
            _originals["default_rng"] = np.random.default_rng
            module["default_rng"] = _watched_maker("Generator", _originals["default_rng"])
        _installed += 1


def _uninstall() -> None:
    global _installed
    with _lock:
        _installed -= 1
        if _installed == 0:
            np.random.__dict__.update(_originals)
            _originals.clear()


def _named_generators(fn) -> list[tuple[str, Any]]:
    """The generators ``fn`` names as globals or closure variables."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    kinds = (np.random.Generator, np.random.RandomState)
    found = []
    module = getattr(fn, "__globals__", {})
    for name in code.co_names:
        value = module.get(name)
        if isinstance(value, kinds):
            found.append((name, value))
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, kinds):
            found.append((name, value))
    return found


def _state(generator) -> Any:
    if isinstance(generator, np.random.Generator):
        return generator.bit_generator.state
    state = generator.get_state(legacy=False)
    return (state["bit_generator"], state["state"]["pos"], state["state"]["key"].tobytes())


def _report_moved(mode: str, fn, name: str) -> None:
    code = fn.__code__
    where = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"
    kind = "error" if mode == "error" else "warn"
    message = (f"random draw: {getattr(fn, '__qualname__', fn)} (defined at {where}) drew from the generator "
               f"{name!r} while tracing, so its values are frozen into the graph as a constant and every run "
               f"reuses them. Draw outside the function and pass the values in as an input")
    if kind == "error":
        raise TraceError(message + " (or trace with mode='specialize' to freeze them on purpose)")
    warnings.warn_explicit(message, FrozenRandomWarning, code.co_filename, code.co_firstlineno)


@contextmanager
def watching_random(mode: str, fn=None) -> Iterator[None]:
    """Watch random draws in this thread while a trace in ``mode`` runs the user's function ``fn``."""
    named = _named_generators(fn) if fn is not None else []
    before = [_state(g) for _, g in named]
    outer = getattr(_active, "mode", None)
    _install()
    _active.mode = mode
    try:
        yield
    finally:
        _active.mode = outer
        _uninstall()
    for (name, generator), state in zip(named, before):
        if _state(generator) != state:
            _report_moved(mode, fn, name)
