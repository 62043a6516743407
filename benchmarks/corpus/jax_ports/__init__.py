"""jax.numpy ports of some corpus kernels, written for the peer comparison of ``bench_corpus.py --peers``.

JAX cannot run the corpus's NumPy code as it is (its arrays are immutable, so every write into an argument has to
be rewritten as a new value), so each port is the same algorithm written by hand as a JAX user would write it,
the time loop as a ``lax.fori_loop``. A port returns what the eager kernel leaves behind: ``PORTS[name].expected``
picks the same values out of an eager call, and the benchmark times a port only if its values are within
``corpus.peers``' tolerance of eager's.

Importing this package imports jax and turns on its 64-bit mode (the corpus computes in float64): only
``bench_corpus.py --peers`` and the tests that check the ports do it, never graph_lab.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import jax

jax.config.update("jax_enable_x64", True)

from . import simulation as sim  # noqa: E402
from . import stencils as st  # noqa: E402


@dataclass(frozen=True)
class Port:
    kernel: str
    """The corpus kernel it ports."""
    fn: Callable
    """The jitted port: the kernel's arguments in, a tuple of arrays out."""
    written: tuple[int, ...]
    """Which of the kernel's arguments it writes into: the port returns their final values, in this order."""
    returns_result: bool = False
    """Whether the port's first output is the kernel's return value (before the written arguments)."""

    def expected(self, args: tuple, result) -> tuple:
        """What the port should return, from the eager call's arguments (as it left them) and its result."""
        return ((result,) if self.returns_result else ()) + tuple(args[i] for i in self.written)


PORTS: dict[str, Port] = {p.kernel: p for p in [
    Port("jacobi_1d", st.jacobi_1d, (0, 1)),
    Port("jacobi_2d", st.jacobi_2d, (0, 1)),
    Port("heat_3d", st.heat_3d, (0, 1)),
    Port("fdtd_2d", st.fdtd_2d, (0, 1, 2)),
    Port("wave_1d", st.wave_1d, (0, 1)),
    Port("gray_scott", st.gray_scott, (0, 1)),
    Port("heat_neumann", st.heat_neumann, (0,)),
    Port("upwind_advection", st.upwind_advection, (0,), returns_result=True),
    Port("nbody", sim.nbody, (0, 1), returns_result=True),
    Port("lennard_jones_box", sim.lennard_jones_box, (0, 1, 2, 3)),
    Port("particles_in_box", sim.particles_in_box, (0,), returns_result=True),
]}
