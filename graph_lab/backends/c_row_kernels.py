"""C source for a row kernel: ``softmax``, ``log_softmax`` or ``layer_norm`` over the last (contiguous) axis.

The elementwise kernels of ``c_kernels`` compute one element at a time. These three ops need a whole row first (its
maximum, or its mean and variance), so a row kernel loops over rows and makes a few passes over each one while
it is still in the cache; NumPy instead makes a pass over the *whole array* for each of its calls (5 for
``softmax``, 8 to 10 for ``layer_norm``)::

    softmax      m = max(x);  y = exp(x - m);  s = sum(y);  y = y / s
    log_softmax  m = max(x);  s = sum(exp(x - m));  y = (x - m) - log(s)
    layer_norm   mean = sum(x) / n;  var = sum((x - mean)^2) / n;  y = (x - mean) / sqrt(var + eps) * w + b

A sum of terms (``exp(x - m)``, ``(x - mean)^2``) computes them block by block on the stack as it sums them, so
they are never stored. Elementwise ops that compute ``x`` may come first in the same kernel (``where`` before a
``softmax``, a residual ``add`` before a ``layer_norm``): a first loop writes ``x`` into the output row, and the
row op then works there in place (every loop reads element j before it writes it).

Each step is the IEEE operation NumPy's eager implementation (``graph_lab/ops/nn.py``) does, in the same order
and dtype: the sums follow NumPy's pairwise summation tree (``c_kernels.PAIRWISE_LEAF``, the same code the fused
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
from .c_kernels import C_TYPES, PAIRWISE_BLOCK, PAIRWISE_LEAF, CKernel, KernelSpec, c_function, c_number, \
    check_c_source, element_code, math_declarations

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


SUM_OF_TERMS = """static {t} gl_sum_of_{name}_{s}(const {t}* x, {t} k, int64_t n) {{
  if (n <= {block}) {{
    {t} buf[{block}];
    #pragma omp simd
    for (int64_t j = 0; j < n; j++) buf[j] = {term};
    return gl_leaf_sum_{s}(buf, n);
  }}
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return gl_sum_of_{name}_{s}(x, k, n2) + gl_sum_of_{name}_{s}(x + n2, k, n - n2);
}}"""
"""The pairwise sum of a term computed from each element (``exp(x - max)``, ``(x - mean)^2``): the same tree as
``gl_pairwise_sum``, each leaf's terms computed into a block on the stack, so they never go through memory and
the row itself is left as it is."""

TERMS = {"exp_shifted": "{exp}(x[j] - k)", "squares_centered": "(x[j] - k) * (x[j] - k)"}
"""The terms: ``k`` is the row's maximum, or its mean."""


def row_kernel_source(spec: KernelSpec, vector_math: bool) -> CKernel:
    """The kernel of a group that ends with a row op: ``kernel(begin, end, inner, in0, .., out0, ..)`` computes
    rows ``begin .. end`` of ``inner`` elements each. When elementwise ops come before the row op in the group,
    a first loop computes them (``c_kernels.element_code``) into the output row, writes any other output of the
    group, and the row op then works on the output row in place."""
    node = spec.row
    ctype = C_TYPES[node.output.type.dtype]
    suffix = "f" if ctype == "float" else "d"
    code = element_code(spec)
    x_value = node.inputs[0]
    out = next(k for k, v in enumerate(spec.outputs) if v is node.output)
    setup = list(code.row_setup) + [f"{ctype}* restrict y = out{out} + i * inner;"]
    if len(spec.nodes) > 1:  # elementwise ops first: their result, the row op's operand, into the output row
        setup += ["#pragma omp simd", "for (int64_t j = 0; j < inner; j++) {"]
        setup += [f"  {line}" for line in code.body] + [f"  y[j] = {code.names[x_value]};", "}"]
        setup.append(f"const {ctype}* x = y;")
    else:
        k = [inp.value for inp in spec.inputs].index(x_value)
        setup.append(f"const {ctype}* restrict x = in{k} + i * inner;")
    if node.op == Op.LAYER_NORM:
        body = _layer_norm_body(spec, ctype, suffix)
    else:
        body = _softmax_body(node.op, ctype, suffix)
    lines = ["  for (int64_t i = begin; i < end; i++) {"] + [f"    {s}" for s in setup + body] + ["  }"]
    text = "\n".join(lines)
    signature = f"({', '.join(code.params)})"
    # (library_source sorts the helpers by their text: gl_leaf_sum comes before the functions that call it)
    helpers = [PAIRWISE_LEAF.format(t=ctype, s=suffix),
               PAIRWISE_SUM.format(t=ctype, s=suffix, block=PAIRWISE_BLOCK),
               MAX_OF_ROW.format(t=ctype, s=suffix)]
    helpers += [SUM_OF_TERMS.format(t=ctype, s=suffix, block=PAIRWISE_BLOCK, name=name,
                                    term=term.format(exp=c_function("exp", ctype)))
                for name, term in TERMS.items() if f"gl_sum_of_{name}_{suffix}(" in text]
    declarations = math_declarations(code.used_math | {"exp", "log"}, text + "\n".join(helpers), vector_math)
    whole = signature + text + "\n".join(helpers) + str(vector_math)  # (a changed helper is a new kernel)
    name = "k_" + hashlib.sha256(whole.encode()).hexdigest()[:20]
    kernel = CKernel(name, declarations + tuple(helpers), f"void {name}{signature} {{\n{text}\n}}\n",
                     len(spec.inputs), len(spec.outputs), True)
    check_c_source(kernel.translation_unit())
    return kernel


def _softmax_body(op: Op, ctype: str, suffix: str) -> list[str]:
    """The maximum, then the exponentials and their pairwise sum, then the division (softmax) or the shift by
    the log of the sum (log_softmax). Each line is the NumPy call of ``ops/nn.py`` it stands for. ``x`` may be
    ``y``: every loop reads element j before it writes it."""
    exp, zero = c_function("exp", ctype), c_number(0, ctype)
    lines = [f"const {ctype} m = gl_row_max_{suffix}(x, inner);"]  # np.max(x, axis, keepdims=True)
    if op == Op.SOFTMAX:
        return lines + [
            "#pragma omp simd",
            f"for (int64_t j = 0; j < inner; j++) y[j] = {exp}(x[j] - m);",  # e = np.exp(x - max)
            f"const {ctype} s = {zero} + gl_pairwise_sum_{suffix}(y, inner);",  # np.sum(e, axis, keepdims=True)
            "#pragma omp simd",
            "for (int64_t j = 0; j < inner; j++) y[j] = y[j] / s;"]  # e / sum
    return lines + [  # the exponentials are only summed: they need not be stored
        f"const {ctype} s = {zero} + gl_sum_of_exp_shifted_{suffix}(x, m, inner);",  # np.sum(np.exp(shifted))
        f"const {ctype} log_s = {c_function('log', ctype)}(s);",  # np.log(...)
        "#pragma omp simd",
        "for (int64_t j = 0; j < inner; j++) y[j] = (x[j] - m) - log_s;"]  # shifted - log(sum)


def _layer_norm_body(spec: KernelSpec, ctype: str, suffix: str) -> list[str]:
    """Mean, variance and normalization, as ``ops/nn.layer_norm`` computes them (``x`` may be ``y``)."""
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
    return [f"const {ctype} mean = {_mean('gl_pairwise_sum', 'x, inner', ctype, suffix)};",  # np.mean(x, ..)
            # np.mean(centered * centered, axis=-1, keepdims=True)
            f"const {ctype} var = {_mean('gl_sum_of_squares_centered', 'x, mean, inner', ctype, suffix)};",
            f"const {ctype} denom = {sqrt}(var + {eps});",  # np.sqrt(var + eps)
            "#pragma omp simd",
            f"for (int64_t j = 0; j < inner; j++) {{ {ctype} t = (x[j] - mean) / denom; y[j] = {normalized}; }}"]


def _mean(function: str, args: str, ctype: str, suffix: str) -> str:
    """``np.mean`` of a row: the sum from NumPy's identity 0, divided by the count in double (NumPy divides by an
    ``intp`` count, which promotes to float64), rounded to the row's dtype."""
    return f"({ctype})((double)({c_number(0, ctype)} + {function}_{suffix}({args})) / (double)inner)"


def _element(spec: KernelSpec, k: int) -> str:
    """Element j of row i of operand ``k``, by how it lines up with the rows (see ``partition._pattern``)."""
    pattern = spec.inputs[k].pattern
    index = {"full": "i * inner + j", "row": "j", "col": "i", "scalar": "0",
             "tile": f"(i % {spec.inputs[k].period}) * inner + j"}[pattern]
    return f"in{k}[{index}]"
