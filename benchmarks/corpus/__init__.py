"""The benchmark corpus: NumPy kernels written as scientific code is written, not as graph_lab would like it.

``CORPUS`` is the one list of kernels. Each entry names the kernel, its family, the plain function, the input
maker and whether the kernel's control flow depends on the data (a branch on a value, a slice bound or a token
read from an array). ``kernel.inputs()`` makes the benchmark's inputs; ``kernel.inputs(small=True)`` makes small
ones for the tests, and ``seed`` gives other data of the same shapes. The kernels use nothing beyond NumPy.

The families: ``stencil`` (time-stepped grids written back into their arrays), ``linalg`` (factorizations,
solves and BLAS-like kernels with in-place row updates and output arguments), ``simulation`` (particles,
image loops, optimizer and normalization steps on lists, dicts and objects), ``numpy-api`` (the wider NumPy API)
and ``model`` (greedy decoding with two small language models). The first three are the mutation programs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import language_models as lm
from . import linalg_loops as la
from . import numpy_api as api
from . import simulation as sim
from . import stencils as st


@dataclass(frozen=True)
class Kernel:
    name: str
    family: str
    fn: Callable
    """The plain function (a method's function for kernels on objects: the object is its first argument)."""
    make: Callable[[int, np.random.Generator], tuple]
    """The input maker: (size, random generator) -> the positional arguments."""
    size: int
    """The benchmark's size (eager time per call roughly 0.05 to 20 ms on one core)."""
    small: int
    """A size for the tests: a few milliseconds to capture and run."""
    data_dependent: bool = False
    """Whether Python control flow depends on array data (so one graph is not expected)."""

    def inputs(self, small: bool = False, seed: int = 0) -> tuple:
        """Fresh arguments: every call makes new arrays and objects, from a fixed seed."""
        return self.make(self.small if small else self.size, np.random.default_rng(seed))


CORPUS: list[Kernel] = [
    # stencils over time steps, written into the argument arrays
    Kernel("jacobi_1d", "stencil", st.jacobi_1d, st.jacobi_1d_inputs, 400, 40),
    Kernel("jacobi_2d", "stencil", st.jacobi_2d, st.jacobi_2d_inputs, 120, 24),
    Kernel("heat_3d", "stencil", st.heat_3d, st.heat_3d_inputs, 24, 8),
    Kernel("seidel_rows", "stencil", st.seidel_rows, st.seidel_rows_inputs, 40, 8),
    Kernel("fdtd_2d", "stencil", st.fdtd_2d, st.fdtd_2d_inputs, 100, 16),
    Kernel("wave_1d", "stencil", st.wave_1d, st.wave_1d_inputs, 500, 100),
    Kernel("gray_scott", "stencil", st.gray_scott, st.gray_scott_inputs, 64, 16),
    Kernel("gray_scott_pattern", "stencil", st.gray_scott_pattern, st.gray_scott_pattern_inputs, 64, 16),
    Kernel("heat_neumann", "stencil", st.heat_neumann, st.heat_neumann_inputs, 100, 20),
    Kernel("laplace_fixed", "stencil", st.laplace_fixed, st.laplace_fixed_inputs, 100, 24),
    Kernel("upwind_advection", "stencil", st.upwind_advection, st.upwind_advection_inputs, 1000, 80),
    Kernel("game_of_life", "stencil", st.game_of_life, st.game_of_life_inputs, 100, 20),
    # dense linear algebra with row updates and output arguments
    Kernel("lu_rows", "linalg", la.lu_rows, la.lu_rows_inputs, 40, 6),
    Kernel("cholesky_rows", "linalg", la.cholesky_rows, la.cholesky_rows_inputs, 40, 6),
    Kernel("forward_substitution", "linalg", la.forward_substitution, la.forward_substitution_inputs, 200, 12),
    Kernel("back_substitution", "linalg", la.back_substitution, la.back_substitution_inputs, 200, 12),
    Kernel("gram_schmidt", "linalg", la.gram_schmidt, la.gram_schmidt_inputs, 30, 5),
    Kernel("gemm", "linalg", la.gemm, la.gemm_inputs, 100, 10),
    Kernel("syrk_lower", "linalg", la.syrk_lower, la.syrk_lower_inputs, 100, 8),
    Kernel("gemver", "linalg", la.gemver, la.gemver_inputs, 300, 16),
    Kernel("atax", "linalg", la.atax, la.atax_inputs, 800, 16),
    Kernel("bicg", "linalg", la.bicg, la.bicg_inputs, 800, 16),
    Kernel("mvt", "linalg", la.mvt, la.mvt_inputs, 800, 16),
    Kernel("trmm_upper", "linalg", la.trmm_upper, la.trmm_upper_inputs, 100, 8),
    Kernel("doitgen", "linalg", la.doitgen, la.doitgen_inputs, 40, 8),
    Kernel("floyd_warshall", "linalg", la.floyd_warshall, la.floyd_warshall_inputs, 80, 8),
    Kernel("durbin", "linalg", la.durbin, la.durbin_inputs, 200, 12),
    Kernel("jacobi_solver", "linalg", la.jacobi_solver, la.jacobi_solver_inputs, 200, 10),
    Kernel("three_mm", "linalg", la.three_mm, la.three_mm_inputs, 80, 8),
    Kernel("covariance_rows", "linalg", la.covariance_rows, la.covariance_rows_inputs, 60, 6),
    # particles, image loops, learning steps
    Kernel("nbody", "simulation", sim.nbody, sim.nbody_inputs, 100, 8),
    Kernel("lennard_jones_box", "simulation", sim.lennard_jones_box, sim.lennard_jones_box_inputs, 64, 9),
    Kernel("particles_in_box", "simulation", sim.particles_in_box, sim.particles_in_box_inputs, 2000, 50),
    Kernel("conv2d_fill", "simulation", sim.conv2d_fill, sim.conv2d_fill_inputs, 16, 5),
    Kernel("maxpool_fill", "simulation", sim.maxpool_fill, sim.maxpool_fill_inputs, 32, 6),
    Kernel("blur_into", "simulation", sim.blur_into, sim.blur_into_inputs, 256, 16),
    Kernel("pairwise_distances_fill", "simulation", sim.pairwise_distances_fill,
           sim.pairwise_distances_fill_inputs, 100, 8),
    Kernel("kv_cache_decode", "simulation", sim.KVCacheAttention.decode, sim.kv_cache_decode_inputs, 64, 8),
    Kernel("batchnorm_train", "simulation", sim.BatchNorm.train_step, sim.batchnorm_train_inputs, 256, 8),
    Kernel("sgd_momentum", "simulation", sim.sgd_momentum, sim.sgd_momentum_inputs, 300, 6),
    Kernel("adam_step", "simulation", sim.adam_step, sim.adam_step_inputs, 200, 6),
    # the wider NumPy API
    Kernel("polar_angles", "numpy-api", api.polar_angles, api.polar_angles_inputs, 200, 8),
    Kernel("moving_average", "numpy-api", api.moving_average, api.moving_average_inputs, 100, 10),
    Kernel("rank_filter", "numpy-api", api.rank_filter, api.rank_filter_inputs, 100, 8),
    Kernel("solve_residual", "numpy-api", api.solve_residual, api.solve_residual_inputs, 100, 8),
    Kernel("mahalanobis", "numpy-api", api.mahalanobis, api.mahalanobis_inputs, 50, 4),
    Kernel("gaussian_log_density", "numpy-api", api.gaussian_log_density, api.gaussian_log_density_inputs, 50, 4),
    Kernel("fft_filter", "numpy-api", api.fft_filter, api.fft_filter_inputs, 100, 4),
    Kernel("histogram_density", "numpy-api", api.histogram_density, api.histogram_density_inputs, 1000, 10),
    Kernel("correlation_matrices", "numpy-api", api.correlation_matrices, api.correlation_matrices_inputs, 100, 8),
    Kernel("periodic_diffusion", "numpy-api", api.periodic_diffusion, api.periodic_diffusion_inputs, 100, 20),
    Kernel("embedding_bag", "numpy-api", api.embedding_bag, api.embedding_bag_inputs, 64, 4),
    Kernel("hmm_forward", "numpy-api", api.hmm_forward, api.hmm_forward_inputs, 60, 5),
    Kernel("mandelbrot", "numpy-api", api.mandelbrot, api.mandelbrot_inputs, 100, 8),
    Kernel("xorshift_uniform", "numpy-api", api.xorshift_uniform, api.xorshift_uniform_inputs, 100, 4),
    Kernel("kernel_regression", "numpy-api", api.kernel_regression, api.kernel_regression_inputs, 100, 4),
    Kernel("quantize", "numpy-api", api.quantize, api.quantize_inputs, 300, 200),
    Kernel("tanh_trace", "numpy-api", api.tanh_trace, api.tanh_trace_inputs, 500, 10),
    Kernel("crc32", "numpy-api", api.crc32, api.crc32_inputs, 1000, 10, data_dependent=True),
    Kernel("csr_matvec", "numpy-api", api.csr_matvec, api.csr_matvec_inputs, 300, 10, data_dependent=True),
    # greedy decoding
    Kernel("gpt2_greedy", "model", lm.gpt2_greedy, lm.gpt2_greedy_inputs, 64, 16, data_dependent=True),
    Kernel("llama_decode", "model", lm.llama_decode, lm.llama_decode_inputs, 64, 16, data_dependent=True),
]

MUTATION_FAMILIES = ("stencil", "linalg", "simulation")
