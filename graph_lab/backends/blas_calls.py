"""NumPy's own BLAS, and which of its routines NumPy's ``matmul`` calls for given shapes and strides.

A C program statement (``c_programs``) may compute a product of slices, ``L[i, :i] @ x[:i]``, as eager NumPy does,
bit for bit, only by making the very calls NumPy's matmul loop makes (``numpy/_core/src/umath/matmul.c.src``) on
the same memory: the same BLAS library, the same routine, the same arguments. ``matmul_plan`` repeats that loop's
choice from the operands' shapes and byte strides (all static in a graph):

- an empty dimension, or one too large for BLAS: NumPy's own triple loop (``noblas``: each output element starts at
  0 and adds the products in order, in the dtype);
- a 1x1 result (vector @ vector): ``TYPE_dot``, which calls ``cblas_?dot`` with ``double sum = 0.; sum += dot``
  when both strides are positive multiples of the item size, else its own loop in the dtype;
- a 1-long inner dimension with a vector side: ``noblas``;
- vector @ matrix and matrix @ vector with a BLAS-able matrix and vector: ``cblas_?gemv`` (transposed, column or
  row major as NumPy picks it);
- any other product with a 1 among its dimensions: ``noblas``;
- matrix @ matrix with every operand BLAS-able: ``cblas_?gemm``. NumPy calls ``cblas_?syrk`` instead for a
  matrix times its own transpose (no two views made by slicing are that) and copies an operand that is not
  BLAS-able first; neither is repeated here (the statement stays NumPy's).

``numpy_blas()`` finds the library NumPy loaded: the wheels' ``scipy-openblas`` in ``numpy.libs``, named in
NumPy's build configuration, whose ``cblas_*`` functions are looked up by name with ctypes. Their addresses are
passed to the C function as data (never written into its source). With another BLAS, or none found, the statement
is not accepted and the reason says so.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

ROUTINES = ("sdot", "ddot", "sgemv", "dgemv", "sgemm", "dgemm")
"""The BLAS routines a program may call, in the order of the address table passed to its C function."""

BLAS_MAX_ELEMENTS = 1 << 20
"""Products larger than this (elements of a result or of an operand) are left to NumPy: a program computes its
results on the stack."""


@dataclass(frozen=True)
class BlasLibrary:
    path: str
    int_type: str
    """The C type of BLAS integers: ``int64_t`` for an ILP64 build (NumPy's wheels), else ``int32_t``."""
    addresses: tuple[int, ...]
    """The address of each of ``ROUTINES``."""


@lru_cache(maxsize=1)
def numpy_blas() -> BlasLibrary | str:
    """NumPy's BLAS library, or why it is not known (a string)."""
    try:
        blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
    except (AttributeError, KeyError, TypeError):
        return "NumPy's build configuration does not name its BLAS"
    if blas.get("name") != "scipy-openblas" or not blas.get("found"):
        return f"NumPy was built with {blas.get('name')!s} BLAS, not the scipy-openblas whose calls are known here"
    ilp64 = "USE64BITINT" in str(blas.get("openblas configuration", ""))
    libs = os.path.realpath(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs"))
    path = _loaded_library(libs)
    if path is None:
        return f"NumPy's OpenBLAS is not among the libraries loaded from {libs}"
    try:
        library = ctypes.CDLL(path)  # (loaded already: the same handle, the same functions NumPy calls)
        suffix = "64_" if ilp64 else ""
        addresses = tuple(ctypes.cast(getattr(library, f"scipy_cblas_{r}{suffix}"), ctypes.c_void_p).value
                          for r in ROUTINES)
    except (OSError, AttributeError) as e:
        return f"NumPy's OpenBLAS does not export the cblas functions looked for ({e})"
    return BlasLibrary(path, "int64_t" if ilp64 else "int32_t", addresses)


def _loaded_library(folder: str) -> str | None:
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/" in line}
    except OSError:
        return None
    found = sorted(p for p in paths if os.path.dirname(p) == folder and "openblas" in os.path.basename(p))
    return found[0] if found else None


# --- NumPy's choice of routine


@dataclass(frozen=True)
class Operand:
    """A matmul operand as NumPy's loop sees it: core dimensions and their byte strides (0 for a missing one)."""

    rows: int
    cols: int
    row_stride: int
    col_stride: int


@dataclass(frozen=True)
class MatmulPlan:
    """What NumPy's matmul loop does for one product ``(m, n) @ (n, p)``, strides in elements."""

    kind: str
    """``noblas``, ``dot``, ``gemv`` or ``gemm``."""
    m: int
    n: int
    p: int
    a: tuple[int, int]
    """(row, column) element strides of the first operand (0 for a missing dimension); ``b`` and ``out`` too."""
    b: tuple[int, int]
    out: tuple[int, int]
    args: tuple = ()
    """The routine's integer arguments, in the order the C helper takes them (see ``c_statement_matmul``)."""


def _blasable2d(stride1: int, stride2: int, d2: int, item: int) -> bool:
    return stride2 == item and stride1 % item == 0 and d2 <= stride1 // item < (1 << 31) - 1


def _blas_stride(stride: int, item: int) -> int:
    return stride // item if stride > 0 and stride % item == 0 and stride // item <= (1 << 31) - 1 else 0


def matmul_plan(a_shape, a_strides, b_shape, b_strides, item: int, same_start: bool) -> MatmulPlan | None:
    """NumPy's path for ``a @ b`` (1-D or 2-D operands; strides in bytes; ``same_start``: both operands begin at
    the same address, which syrk needs), or None for a case not repeated here."""
    if len(a_shape) not in (1, 2) or len(b_shape) not in (1, 2):
        return None
    m, n = (1, a_shape[0]) if len(a_shape) == 1 else a_shape
    is1_m, is1_n = (0, a_strides[0]) if len(a_shape) == 1 else a_strides
    n2, p = (b_shape[0], 1) if len(b_shape) == 1 else b_shape
    is2_n, is2_p = (b_strides[0], 0) if len(b_shape) == 1 else b_strides
    if n2 != n or max(m, n, p) > BLAS_MAX_ELEMENTS or m * p > BLAS_MAX_ELEMENTS:
        return None
    os_p = item if len(b_shape) == 2 else 0  # (the result is new, C-ordered memory)
    os_m = ((p * item if len(b_shape) == 2 else item) if len(a_shape) == 2 else 0)
    e = lambda *s: tuple(x // item for x in s)  # noqa: E731 (strides in elements, for the C code)
    plan = lambda kind, *args: MatmulPlan(kind, m, n, p, e(is1_m, is1_n), e(is2_n, is2_p),  # noqa: E731
                                          e(os_m, os_p), args)
    if any(s % item for s in (is1_m, is1_n, is2_n, is2_p)):
        return None  # (unaligned views: not made by basic slicing of an array)
    if m == 0 or n == 0 or p == 0:
        return plan("noblas")
    i1 = _blasable2d(is1_m, is1_n, n, item) or _blasable2d(is1_n, is1_m, m, item)
    i2 = _blasable2d(is2_n, is2_p, p, item) or _blasable2d(is2_p, is2_n, n, item)
    if m == 1 or n == 1 or p == 1:
        if m == 1 and p == 1:
            s1, s2 = _blas_stride(is1_n, item), _blas_stride(is2_n, item)
            return plan("dot", s1, s2) if s1 and s2 else plan("noblas")
        if n == 1 and (p == 1 or m == 1):
            return plan("noblas")
        if m == 1 and i2 and _blasable2d(is1_n, item, 1, item):  # vector @ matrix: b is gemv's matrix
            return _gemv(plan, 1, is2_p, is2_n, is1_n, os_p, p, n, item)
        if p == 1 and i1 and _blasable2d(is2_n, item, 1, item):
            return _gemv(plan, 0, is1_m, is1_n, is2_n, os_m, m, n, item)
        return plan("noblas")
    if not (i1 and i2):
        return None  # (NumPy copies the operand that is not BLAS-able first)
    return _matrix_matrix(plan, m, n, p, is1_m, is1_n, is2_n, is2_p, os_m, item, same_start)


def _gemv(plan, swap: int, s_m: int, s_n: int, x_stride: int, out_stride: int, m: int, n: int,
          item: int) -> MatmulPlan:
    """``TYPE_gemv``: args (b is the matrix?, column major?, lda, incx, incy, M, N) for
    ``cblas_?gemv(order, CblasTrans, N, M, 1, matrix, lda, vector, incx, 0, out, incy)``."""
    if _blasable2d(s_m, s_n, n, item):
        col_major, lda = 1, s_m // item
    else:
        col_major, lda = 0, s_n // item
    return plan("gemv", swap, col_major, lda, x_stride // item, out_stride // item, m, n)


def _matrix_matrix(plan, m, n, p, is1_m, is1_n, is2_n, is2_p, os_m, item, same_start) -> MatmulPlan:
    """``TYPE_matmul_matrixmatrix`` for a C-ordered result: args (trans1, trans2, lda, ldb, ldc); None where
    NumPy calls syrk."""
    if _blasable2d(is1_m, is1_n, n, item):
        trans1, lda = 0, is1_m // item
    else:
        trans1, lda = 1, is1_n // item
    if _blasable2d(is2_n, is2_p, p, item):
        trans2, ldb = 0, is2_n // item
    else:
        trans2, ldb = 1, is2_p // item
    ldc = os_m // item
    if same_start and m == p and is1_m == is2_p and is1_n == is2_n and trans1 != trans2:
        return None
    return plan("gemm", trans1, trans2, lda, ldb, ldc)
