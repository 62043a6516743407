"""Products of slices inside C program statements: ``x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]``.

A row-update kernel (a triangular solve, LU or Cholesky by rows) unrolled into a graph is hundreds of statements,
each a product of two slices and a few scalar operations: NumPy spends its time dispatching them. Here a
``matmul`` whose operands are static views of a program's buffers is part of the statement that reads it: the
statement's C function first computes the product into an array on its stack, then runs its loop nest, which
reads the product like any other operand. The product is computed by the calls NumPy's matmul makes for those
shapes and strides (``blas_calls.matmul_plan``): the same OpenBLAS routine through its address, or NumPy's own
loop, so the result is eager's bit for bit. Each kind of call is one small C helper (``HELPERS``), called with
integer arguments, so the C source stays small for 800 statements.

The buffers are read as C-ordered arrays, which is what the plan assumes; a call whose arrays are laid out
otherwise (a transposed argument) would take other BLAS paths in NumPy, so it runs the program's nodes as NumPy
calls instead (``run_as_numpy``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ir.graph import Node, Value
from ..ops import Op, opdef
from ..ops.indexing import index_update_in_place
from .blas_calls import ROUTINES, MatmulPlan, matmul_plan, numpy_blas
from .stencil import _c_strides, _layout

STACK_ELEMENTS = 16384
"""The largest product a statement computes (on its C stack)."""
PRODUCT_CALLS = 5
"""What eager NumPy pays for a small product, in ufunc calls: ``matmul`` itself (about three times a small
``np.add``) and the two slices it multiplies."""
MANY_PRODUCTS = 8
"""A program with this many products replaces some 40 NumPy calls or more: one C call pays, however small they
are (a triangular solve of 24 rows: 1.3 us against 30 us eager)."""


@dataclass(eq=False)
class MatmulCall:
    node: Node
    operands: tuple[tuple[Value, int], tuple[Value, int]]
    """Each operand's buffer (the value it views) and the offset, in elements, of its first element."""
    plan: MatmulPlan

    @property
    def size(self) -> int:
        return math.prod(self.node.output.type.shape)

    @property
    def work(self) -> int:
        return self.plan.m * self.plan.n * self.plan.p

    @property
    def bytes(self) -> int:
        """Bytes the product reads and writes."""
        pl = self.plan
        return (pl.m * pl.n + pl.n * pl.p + pl.m * pl.p) * self.node.output.type.dtype.itemsize


def matmul_leaf(v: Value, dtype, is_buffer) -> MatmulCall | str | None:
    """The product a statement may compute itself, why not (a string), or None when ``v`` is no product."""
    node = v.node
    if node.op != Op.MATMUL or len(node.inputs) != 2:
        return None
    if v.type.dtype != dtype or any(x.type.dtype != dtype or x.type.weak is not None for x in node.inputs):
        return "a product of another dtype than the statement's"
    operands = []
    for x in node.inputs:
        if x.node.op == Op.INDEX and len(x.node.inputs) == 1 and is_buffer(x.node.inputs[0]):
            source = x.node.inputs[0]
            layout = _layout(source.type.shape, x.node.attrs["key"])
        elif is_buffer(x):
            source, layout = x, (0, _c_strides(x.type.shape), x.type.shape)
        else:
            return "an operand of the product is not a static view of an array"
        if layout is None or layout[2] != x.type.shape:
            return "an operand of the product is not a static view of an array"
        operands.append((source, layout))
    blas = numpy_blas()
    if isinstance(blas, str):
        return f"NumPy's BLAS is not known: {blas}"
    item = dtype.itemsize
    (sa, (oa, ta, shape_a)), (sb, (ob, tb, shape_b)) = operands
    plan = matmul_plan(shape_a, tuple(t * item for t in ta), shape_b, tuple(t * item for t in tb), item,
                       sa is sb and oa == ob)
    if plan is None:
        return "NumPy copies an operand of this product before its BLAS call"
    if math.prod(v.type.shape) > STACK_ELEMENTS:
        return f"a product of more than {STACK_ELEMENTS} elements"
    return MatmulCall(node, ((sa, oa), (sb, ob)), plan)


def operand_views(call: MatmulCall) -> list[Node]:
    return [x.node for x in call.node.inputs if x.node.op == Op.INDEX]


# --- C


def _helpers(ctype: str, blas_int: str) -> dict[str, str]:
    """C helper per kind of call, in one C type: NumPy's loops written again, and the BLAS calls it makes. (Each
    opens with a comment: the file's definitions are sorted, and the helpers must come before their callers.)"""
    t, i = ctype, blas_int
    return {kind: f"/* the product as NumPy computes it: {kind} */\n" + text for kind, text in {
        "noblas": f"""static void gl_mm_noblas_{t}(int64_t m, int64_t n, int64_t p, const {t}* a, int64_t a_m,
    int64_t a_n, const {t}* b, int64_t b_n, int64_t b_p, {t}* out, int64_t o_m, int64_t o_p) {{
  for (int64_t r = 0; r < m; r++)
    for (int64_t c = 0; c < p; c++) {{
      {t} sum = 0;
      for (int64_t k = 0; k < n; k++) sum += a[r * a_m + k * a_n] * b[k * b_n + c * b_p];
      out[r * o_m + c * o_p] = sum;
    }}
}}""",
        "dot": f"""static {t} gl_mm_dot_{t}(const void* f, int64_t n, const {t}* a, int64_t sa, const {t}* b,
    int64_t sb) {{
  double sum = 0.;
  sum += (({t} (*)({i}, const {t}*, {i}, const {t}*, {i}))f)(n, a, sa, b, sb);
  return ({t})sum;
}}""",
        "gemv": f"""static void gl_mm_gemv_{t}(const void* f, int col_major, int64_t m, int64_t n, const {t}* a,
    int64_t lda, const {t}* x, int64_t incx, {t}* y, int64_t incy) {{
  ((void (*)(int, int, {i}, {i}, {t}, const {t}*, {i}, const {t}*, {i}, {t}, {t}*, {i}))f)(
      col_major ? 102 : 101, 112, n, m, 1, a, lda, x, incx, 0, y, incy);
}}""",
        "gemm": f"""static void gl_mm_gemm_{t}(const void* f, int trans1, int trans2, int64_t m, int64_t p, int64_t n,
    const {t}* a, int64_t lda, const {t}* b, int64_t ldb, {t}* c, int64_t ldc) {{
  ((void (*)(int, int, int, {i}, {i}, {i}, {t}, const {t}*, {i}, const {t}*, {i}, {t}, {t}*, {i}))f)(
      101, trans1 ? 112 : 111, trans2 ? 112 : 111, m, p, n, 1, a, lda, b, ldb, 0, c, ldc);
}}""",
    }.items()}


def matmul_code(call: MatmulCall, ctype: str, name: str, pointer, num) -> tuple[list[str], str]:
    """The C lines computing ``call`` into the stack array ``name`` and the helper they call. ``pointer(v)``:
    the C name of buffer ``v`` in the statement's function; ``num(x)``: the C text reading integer ``x``."""
    blas = numpy_blas()
    pl, (sa, oa), (sb, ob) = call.plan, *call.operands
    a, b = f"{pointer(sa)} + {num(oa)}", f"{pointer(sb)} + {num(ob)}"
    prefix = "s" if ctype == "float" else "d"
    f = f"blas[{ROUTINES.index(prefix + pl.kind)}]" if pl.kind != "noblas" else ""
    size = num(max(call.size, 1))
    lines = [f"{ctype} {name}[{size}];", f"for (int64_t z = 0; z < {size}; z++) {name}[z] = 0;"]
    if pl.kind == "noblas":
        lines.append(f"gl_mm_noblas_{ctype}({num(pl.m)}, {num(pl.n)}, {num(pl.p)}, {a}, {num(pl.a[0])}, "
                     f"{num(pl.a[1])}, {b}, {num(pl.b[0])}, {num(pl.b[1])}, {name}, {num(pl.out[0])}, "
                     f"{num(pl.out[1])});")
    elif pl.kind == "dot":
        lines.append(f"{name}[0] = gl_mm_dot_{ctype}({f}, {num(pl.n)}, {a}, {num(pl.args[0])}, {b}, "
                     f"{num(pl.args[1])});")
    elif pl.kind == "gemv":
        swap, col_major, lda, incx, incy, m, n = pl.args
        matrix, vector = (b, a) if swap else (a, b)
        lines.append(f"gl_mm_gemv_{ctype}({f}, {num(col_major)}, {num(m)}, {num(n)}, {matrix}, {num(lda)}, "
                     f"{vector}, {num(incx)}, {name}, {num(incy)});")
    else:
        trans1, trans2, lda, ldb, ldc = pl.args
        lines.append(f"gl_mm_gemm_{ctype}({f}, {num(trans1)}, {num(trans2)}, {num(pl.m)}, {num(pl.p)}, "
                     f"{num(pl.n)}, {a}, {num(lda)}, {b}, {num(ldb)}, {name}, {num(ldc)});")
    return lines, _helpers(ctype, blas.int_type)[pl.kind]


def uses_blas(program) -> bool:
    return any(c.plan.kind != "noblas" for s in program.statements for c in s.matmuls.values())


def blas_table() -> np.ndarray:
    """The addresses of ``ROUTINES``, as the array the C function reads them from."""
    return np.array(numpy_blas().addresses, dtype=np.uint64)


# --- arrays the plan does not hold for


def laid_out_as_compiled(arrays) -> bool:
    """Every buffer has exactly C-ordered strides (the layouts the products were planned for; NumPy's checks
    read the stride of a dimension of length 1 too), or no element."""
    for a in arrays:
        if not a.size:
            continue
        expected = tuple(s * a.itemsize for s in _c_strides(a.shape))
        if a.strides != expected or not a.flags.aligned:
            return False
    return True


def run_as_numpy(program, arrays: list, scalars: list) -> list:
    """The program's nodes as NumPy calls, on the caller's arrays as they are (eager's own calls), in the order
    the C function computes them; returns the new arrays it makes."""
    env = dict(zip([*program.buffers, *(v for v, _ in program.scalars)], [*arrays, *scalars]))

    def value(v: Value):
        if v not in env:  # a view computed outside the call: taken again here, on the current memory
            node = v.node
            if node.op == Op.CONST:
                return node.attrs["value"]
            env[v] = opdef(node.op).impl(*[value(x) for x in node.inputs], **node.attrs)
        return env[v]

    for s in program.statements:
        for n in s.nodes:
            env[n.output] = opdef(n.op).impl(*[value(x) for x in n.inputs], **n.attrs)
        if s.base is not None:
            args = [value(x) for x in s.node.inputs]
            env[s.result] = (opdef(Op.INDEX_UPDATE).impl(*args, **s.node.attrs) if s.made
                             else index_update_in_place(*args, **s.node.attrs))
    return [env[v] for v in program.made if v not in program.internal]
