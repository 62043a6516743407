"""Options of the fused backend, kept in a module of their own so that ``import graph_lab`` stays light (the
backend itself loads the compiler toolchain, ctypes and threads only when a graph is compiled with it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

MIN_BUFFER_BYTES = 32 * 1024
"""Arrays smaller than this are not worth an ``out=`` buffer (NumPy's allocator is cheap for them)."""


class FusedFallbackWarning(UserWarning):
    """The fused backend runs as codegen (no C compiler, or a kernel did not compile); said once per cause."""


@dataclass(frozen=True)
class FusedOptions:
    """How the fused backend compiles and decides. The defaults suit ordinary use."""

    cache_dir: str | Path | None = None
    """Folder for compiled kernels (default ``~/.cache/graph_lab/kernels-<uid>``; made private, mode 0700)."""
    compiler: str | None = None
    """The C compiler (a path or command); default ``gcc``, then ``cc``."""
    calibration: Any = None
    """The cost model's machine figures (a ``cost.Calibration``); None: measured on first use, once per process."""
    fuse: str = "auto"
    """``auto``: the cost model decides; ``always``: every group (tests of the kernels); ``never``."""
    max_threads: int | None = None
    """At most this many threads per kernel (default: 2, when the model measures that they help)."""
    min_buffer_bytes: int = MIN_BUFFER_BYTES
    """``codegen``'s threshold for buffer reuse."""
