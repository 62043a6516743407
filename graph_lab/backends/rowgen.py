"""C source for a row kernel: ``softmax``, ``log_softmax`` or ``layer_norm`` over the last (contiguous) axis.

The elementwise kernels of ``cgen`` compute one element at a time. These three ops need a whole row first (its
maximum, or its mean and variance), so a row kernel loops over rows and makes a few passes over each one while
it is still in the cache; NumPy instead makes a pass over the *whole array* for each of its calls (5 for
``softmax``, 8 to 10 for ``layer_norm``)::

    softmax      m = max(row);  y = exp(x - m);  s = sum(y);  y = y / s
    log_softmax  m = max(row);  y = exp(x - m);  s = sum(y);  y = (x - m) - log(s)
    layer_norm   mean = sum(x) / n;  y = (x - mean)^2;  var = sum(y) / n;
                 y = (x - mean) / sqrt(var + eps) * weight + bias

Each step is the IEEE operation NumPy's eager implementation (``graph_lab/ops/nn.py``) does, in the same order
and dtype: the sums follow NumPy's pairwise summation tree (``cgen.PAIRWISE_LEAF``, the same code the fused
reductions use), a mean divides the sum by the count in double and rounds, as ``np.mean`` does, and
``-ffp-contract=off`` keeps ``x * w + b`` two roundings. So:

- ``layer_norm`` is NumPy's bit for bit (float32 and float64), NaN and infinities included;
- ``softmax`` and ``log_softmax`` call libmvec's ``exp`` (and libm's ``log``, once a row), which are not NumPy's:
  they are within the fused tolerance (``tolerance.GRAPH_ULP["fused"]``), with NaN exactly where NumPy has it
  (a row holding NaN or +inf, or a row of -inf, is all NaN, as in NumPy). The maximum is exact whatever order it
  is taken in, so a row's shift ``x - m`` is NumPy's bit for bit; only ``exp`` and ``log`` round differently.

The source holds no user text: the only number written into it is ``eps``, as an exact C hexadecimal float.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..ops import Op
from .cgen import C_TYPES, PAIRWISE_BLOCK, PAIRWISE_LEAF, CKernel, KernelSpec, c_function, c_number, \
    check_c_source, math_declarations

ROW_OPS = frozenset({Op.SOFTMAX, Op.LOG_SOFTMAX, Op.LAYER_NORM})
"""Ops computed by a row kernel (over the last axis)."""

PAIRWISE_SUM = """static {t} gl_pairwise_sum_{s}(const {t}* a, int64_t n) {{
  if (n <= {block}) return gl_leaf_sum_{s}(a, n);
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return gl_pairwise_sum_{s}(a, n2) + gl_pairwise_sum_{s}(a + n2, n - n2);
}}"""
"""NumPy's pairwise summation of ``n`` contiguous values (its ``pairwise_sum`` in loops_utils.h.src): split in
two at a multiple of 8 above 128 values, ``gl_leaf_sum`` below."""

MAX_OF_ROW = """static {t} gl_row_max_{s}(const {t}* a, int64_t n) {{
  {t} m = a[0];
  int nan = 0;
  #pragma omp simd reduction(max:m) reduction(|:nan)
  for (int64_t j = 0; j < n; j++) {{
    m = a[j] > m ? a[j] : m;
    nan |= a[j] != a[j];
  }}
  if (nan) {{
    for (int64_t j = 0; j < n; j++) {{
      if (a[j] != a[j]) return a[j];
    }}
  }}
  return m;
}}"""
"""The maximum of a row, NaN if it holds one (as ``np.max``). The maximum of numbers does not depend on the order
they are compared in, so the loop may run in vector lanes; NaN is looked for on the side, since a vector ``max``
drops it. (Of +0.0 and -0.0 either may come out, which ``x - m`` and ``exp`` cannot tell apart.)"""


def row_kernel_source(spec: KernelSpec, vector_math: bool) -> CKernel:
    """The kernel for a group made of one row op: ``kernel(begin, end, inner, x, [weight], [bias], y)`` computes
    rows ``begin .. end`` of ``inner`` elements each."""
    node = spec.row
    ctype = C_TYPES[node.output.type.dtype]
    suffix = "f" if ctype == "float" else "d"
    params = ["int64_t begin", "int64_t end", "int64_t inner"]
    params += [f"const {ctype}* restrict in{i}" for i in range(len(spec.inputs))]
    params.append(f"{ctype}* restrict out0")
    setup = [f"const {ctype}* restrict x = in0 + i * inner;", f"{ctype}* restrict y = out0 + i * inner;"]
    if node.op == Op.LAYER_NORM:
        body = _layer_norm_body(spec, ctype, suffix)
    else:
        body = _softmax_body(node.op, ctype, suffix)
    lines = ["  for (int64_t i = begin; i < end; i++) {"] + [f"    {s}" for s in setup + body] + ["  }"]
    text = "\n".join(lines)
    signature = f"({', '.join(params)})"
    helpers = (PAIRWISE_LEAF.format(t=ctype, s=suffix),
               PAIRWISE_SUM.format(t=ctype, s=suffix, block=PAIRWISE_BLOCK),
               MAX_OF_ROW.format(t=ctype, s=suffix))
    declarations = math_declarations({"exp", "log"}, text, vector_math) + helpers
    name = "k_" + hashlib.sha256((signature + text + str(vector_math)).encode()).hexdigest()[:20]
    kernel = CKernel(name, declarations, f"void {name}{signature} {{\n{text}\n}}\n", len(spec.inputs), 1, True)
    check_c_source(kernel.translation_unit())
    return kernel


def _softmax_body(op: Op, ctype: str, suffix: str) -> list[str]:
    """max, exp(x - max) into the output row, its pairwise sum, then the division (softmax) or the shift by the
    log of the sum (log_softmax). Each line is the NumPy call of ``ops/nn.py`` it stands for."""
    exp = c_function("exp", ctype)
    zero = c_number(0, ctype)
    lines = [f"const {ctype} m = gl_row_max_{suffix}(x, inner);",  # np.max(x, axis, keepdims=True)
             "#pragma omp simd",
             f"for (int64_t j = 0; j < inner; j++) y[j] = {exp}(x[j] - m);",  # np.exp(x - max)
             f"const {ctype} s = {zero} + gl_pairwise_sum_{suffix}(y, inner);"]  # np.sum(e, axis, keepdims=True)
    if op == Op.SOFTMAX:
        lines += ["#pragma omp simd", "for (int64_t j = 0; j < inner; j++) y[j] = y[j] / s;"]  # e / sum
    else:
        lines += [f"const {ctype} log_s = {c_function('log', ctype)}(s);",  # np.log(sum)
                  "#pragma omp simd", "for (int64_t j = 0; j < inner; j++) y[j] = (x[j] - m) - log_s;"]
    return lines


def _layer_norm_body(spec: KernelSpec, ctype: str, suffix: str) -> list[str]:
    """Mean, variance and normalization, as ``ops/nn.layer_norm`` computes them. The squares are written into the
    output row and summed there, then overwritten by the result, so the kernel needs no scratch memory."""
    node = spec.row
    with np.errstate(over="ignore"):  # var + eps rounds eps to the dtype first (to inf if it is that large)
        eps = c_number(float(np.asarray(node.attrs["eps"], node.output.type.dtype)), ctype)
    sqrt = f"__builtin_{c_function('sqrt', ctype)}"
    normalized = "t"
    affine = iter(node.inputs[1:])  # weight, then bias, when given
    for present, operator in ((node.attrs["has_weight"], "*"), (node.attrs["has_bias"], "+")):
        if present:
            k = [inp.value for inp in spec.inputs].index(next(affine))  # (weight and bias may be one array)
            normalized = f"({normalized} {operator} {_element(spec, k)})"
    return [f"const {ctype} mean = {_mean_of_row('x', ctype, suffix)};",  # np.mean(x, axis=-1, keepdims=True)
            "#pragma omp simd",
            f"for (int64_t j = 0; j < inner; j++) {{ {ctype} c = x[j] - mean; y[j] = c * c; }}",
            f"const {ctype} var = {_mean_of_row('y', ctype, suffix)};",  # np.mean(centered * centered, ...)
            f"const {ctype} denom = {sqrt}(var + {eps});",  # np.sqrt(var + eps)
            "#pragma omp simd",
            f"for (int64_t j = 0; j < inner; j++) {{ {ctype} t = (x[j] - mean) / denom; y[j] = {normalized}; }}"]


def _mean_of_row(row: str, ctype: str, suffix: str) -> str:
    """``np.mean`` of a row: the sum from NumPy's identity 0, divided by the count in double (NumPy divides by an
    ``intp`` count, which promotes to float64), rounded to the row's dtype."""
    return f"({ctype})((double)({c_number(0, ctype)} + gl_pairwise_sum_{suffix}({row}, inner)) / (double)inner)"


def _element(spec: KernelSpec, k: int) -> str:
    """Element j of row i of operand ``k``, by how it lines up with the rows (see ``partition._pattern``)."""
    pattern = spec.inputs[k].pattern
    index = {"full": "i * inner + j", "row": "j", "col": "i", "scalar": "0"}[pattern]
    return f"in{k}[{index}]"
