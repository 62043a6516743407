"""Products of slices in C program statements (backends/blas_calls.py, c_statement_matmul.py) against eager
NumPy, bit for bit: random statements ``X[key] op= expr(X[a] @ Y[b], views, numbers)`` with vector @ vector,
vector @ matrix, matrix @ vector and matrix @ matrix products of views with every step (negative ones too, which
NumPy computes with its own loop instead of BLAS), offsets, empty and one-long dimensions, in float64 and
float32; the row-update kernels of the corpus at several sizes; arrays laid out otherwise than compiled for; and
a NumPy whose BLAS is not known."""

import random
import sys
from pathlib import Path

import numpy as np
import pytest

import graph_lab as gl
from graph_lab.backends import blas_calls
from graph_lab.backends.blas_calls import matmul_plan

from tests.backends.test_c_programs import _axis_slice, _make, run_as_program
from tests.support.backend_support import needs_compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from corpus import linalg_loops as la  # noqa: E402

pytestmark = needs_compiler


def _bits_equal(x, y) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


# --- NumPy's choice of routine, by hand from matmul.c.src


def test_the_plan_follows_numpys_matmul_loop():
    d = 8
    assert matmul_plan((5,), (d,), (5,), (d,), d, False).kind == "dot"
    assert matmul_plan((5,), (3 * d,), (5,), (2 * d,), d, False).args == (3, 2)  # strided vectors: still BLAS
    assert matmul_plan((5,), (-d,), (5,), (d,), d, False).kind == "noblas"  # a negative stride: NumPy's loop
    assert matmul_plan((0,), (d,), (0,), (d,), d, False).kind == "noblas"  # empty: NumPy's loop (0)
    assert matmul_plan((1,), (d,), (1, 4), (4 * d, d), d, False).kind == "noblas"  # n == 1 with a vector
    vm = matmul_plan((3,), (d,), (3, 4), (10 * d, d), d, False)
    assert (vm.kind, vm.args) == ("gemv", (1, 0, 10, 1, 1, 4, 3))  # b is the matrix, row major, lda 10
    mv = matmul_plan((4, 3), (10 * d, d), (3,), (2 * d,), d, False)
    assert (mv.kind, mv.args) == ("gemv", (0, 1, 10, 2, 1, 4, 3))  # column major with lda 10, incx 2
    assert matmul_plan((4, 3), (10 * d, 2 * d), (3,), (d,), d, False).kind == "noblas"  # matrix not BLAS-able
    mm = matmul_plan((2, 3), (10 * d, d), (3, 4), (7 * d, d), d, False)
    assert (mm.kind, mm.args) == ("gemm", (0, 0, 10, 7, 4))
    assert matmul_plan((2, 3), (10 * d, 2 * d), (3, 4), (7 * d, d), d, False) is None  # NumPy copies it first
    assert matmul_plan((3, 2, 2), (4 * d, 2 * d, d), (2,), (d,), d, False) is None  # a batch: not planned


# --- random statements with products


def _view(rng: random.Random, name: str, shape, lengths) -> str | None:
    parts = []
    for n, length in zip(shape, lengths):
        if length is None:
            parts.append(str(rng.randrange(n)))
            continue
        if length == 0:
            start = rng.randrange(n + 1)
            part = f"{start}:{start}"
        else:
            part = _axis_slice(rng, n, length)
        if part is None:
            return None
        parts.append(part)
    return f"{name}[{', '.join(parts)}]"


def random_product_program(seed: int):
    """(source of ``f(A, B, c)``, dtype): statements writing slices of A or B from products of their views."""
    rng = random.Random(seed)
    shape = (rng.randint(6, 12), rng.randint(6, 12))
    lines = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(("vv", "vv", "vm", "mv", "mm"))
        n = rng.choice((0, 1, 2, 3, 5, 6))
        m, p = rng.randint(2, 4), rng.randint(2, 4)
        if kind == "vv":
            a, b, out = [n], [n], [None, None]
        elif kind == "vm":  # a row or column of one array times a block of another
            a, b, out = ([None, n] if rng.random() < 0.5 else [n, None]), [n, p], [None, p]
        elif kind == "mv":
            a, b, out = [m, n], ([n, None] if rng.random() < 0.5 else [None, n]), [m, None]
        else:
            a, b, out = [m, n], [n, p], [m, p]
        a = a if len(a) == 2 else ([None] + a if rng.random() < 0.5 else a + [None])
        b = b if len(b) == 2 else ([None] + b if rng.random() < 0.5 else b + [None])
        if any(x is not None and x > min(shape) for x in a + b):
            continue
        left, right = _view(rng, rng.choice("AB"), shape, a), _view(rng, rng.choice("AB"), shape, b)
        if kind == "mm" and rng.random() < 0.6:  # blocks with unit steps along rows: BLAS's gemm
            (r0, c0), (r1, c1) = [(rng.randrange(shape[0] - x[0] + 1), rng.randrange(shape[1] - x[1] + 1))
                                  for x in (a, b)]
            left = f"{rng.choice('AB')}[{r0}:{r0 + m}, {c0}:{c0 + n}]"
            right = f"{rng.choice('AB')}[{r1}:{r1 + n}, {c1}:{c1 + p}]"
        target = rng.choice("AB")
        write = _view(rng, target, shape, out)
        if None in (left, right, write):
            continue
        product = f"({left} @ {right})"
        expr = rng.choice((product, f"({write} - {product})", f"({product} * c)", f"(({write} - {product}) / 3.0)",
                           f"np.sqrt({product} * {product} + 1.0)"))
        lines.append(f"    {write} {rng.choice(('=', '=', '-=', '+='))} {expr}")
    source = "def f(A, B, c):\n" + "\n".join(lines or ["    A[0, 0] = A[0, :3] @ B[:3, 0]"]) + "\n"
    return source, rng.choice((np.float64, np.float32)), shape


@pytest.mark.parametrize("seed", range(80))
def test_random_product_statements_against_numpy(seed):
    source, dtype, shape = random_product_program(seed)
    f = _make(source)
    args = [np.zeros(shape, dtype), np.zeros(shape, dtype), dtype(0.7)]
    with np.errstate(all="ignore"):
        run_as_program(f, *args)  # (bit for bit: assert_array_equal after each run, strict)


def test_random_product_statements_use_every_path():
    kinds, with_products = set(), 0
    for seed in range(80):
        source, dtype, shape = random_product_program(seed)
        with np.errstate(all="ignore"):
            programs = run_as_program(_make(source), np.zeros(shape, dtype), np.zeros(shape, dtype), dtype(0.7))
        found = {(c.plan.kind, dtype) for p in programs for s in p.statements for c in s.matmuls.values()}
        kinds |= found
        with_products += bool(found)
    assert kinds >= {(k, t) for k in ("dot", "gemv", "gemm", "noblas") for t in (np.float64, np.float32)}
    assert with_products >= 60  # (the others have a product NumPy copies an operand of first)


# --- the row-update kernels


KERNELS = ["forward_substitution", "back_substitution", "lu_rows", "cholesky_rows", "gram_schmidt", "doitgen",
           "trmm_upper", "covariance_rows", "syrk_lower", "durbin"]


def _compare(fn, args, cf):
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    eager = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got, want = cf(*mine), fn(*eager)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert w is None or _bits_equal(g, w)
    for m, e in zip(mine, eager):
        if isinstance(e, np.ndarray):
            assert _bits_equal(m, e)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [3, 9, 24])
@pytest.mark.parametrize("name", KERNELS)
def test_row_update_kernels_bit_for_bit(name, n, dtype):
    fn = getattr(la, name)
    args = [a.astype(dtype) if isinstance(a, np.ndarray) else a
            for a in getattr(la, name + "_inputs")(n, np.random.default_rng(n))]
    cf = gl.compile(fn, backend="fused")
    cf.ways.pin("graphs", "the test checks the graphs")
    for _ in range(3):
        _compare(fn, args, cf)
    if n == 24 and dtype == np.float64:  # (in float32, kernels that make float64 arrays of their own mix dtypes)
        report = gl.explain(cf)(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        assert "one C function for statements" in "\n".join(report.backends), report


def test_arrays_laid_out_otherwise_run_numpys_calls():
    """A Fortran-ordered matrix reaches the same graph (same shape and dtype) but NumPy's products on it take
    other paths: the program runs its nodes as NumPy calls on the array as it is."""
    L, b, x = la.forward_substitution_inputs(30, np.random.default_rng(0))
    cf = gl.compile(la.forward_substitution, backend="fused")
    cf.ways.pin("graphs", "the test checks the graphs")
    _compare(la.forward_substitution, (L, b, x), cf)
    _compare(la.forward_substitution, (np.asfortranarray(L), b, x), cf)
    _compare(la.forward_substitution, (L, b[::-1].copy()[::-1], x), cf)


def test_an_unknown_blas_leaves_products_to_numpy(monkeypatch):
    monkeypatch.setattr(blas_calls, "numpy_blas", lambda: "NumPy was built with accelerate BLAS")
    from graph_lab.backends import c_statement_matmul
    monkeypatch.setattr(c_statement_matmul, "numpy_blas", blas_calls.numpy_blas)
    programs = run_as_program(la.forward_substitution, *la.forward_substitution_inputs(12, np.random.default_rng(0)))
    assert not any(s.matmuls for p in programs for s in p.statements)


def test_numpys_blas_is_found():
    blas = blas_calls.numpy_blas()
    assert not isinstance(blas, str), blas
    assert "openblas" in Path(blas.path).name and all(blas.addresses)
