"""C source for a fused group of elementwise nodes: one loop over the elements, every op a C expression.

A kernel reads its inputs once and writes its outputs once; every intermediate value lives in a register::

    void k_3f2a...(int64_t begin, int64_t end, const float* restrict in0, float* restrict out0) {
      #pragma omp simd
      for (int64_t j = begin; j < end; j++) {
        float a0 = in0[j];
        float t0 = ((float)0x1p-1 * a0);
        float t1 = tanhf(t0);          /* a vector call into libmvec, declared with `omp declare simd` */
        out0[j] = t1;
      }
    }

Each op's expression (``C_OPS``) computes what NumPy computes: the same IEEE operations in the same order and
dtype (``-ffp-contract=off`` keeps ``a * b + c`` two roundings, as in NumPy), NaN propagation and signed zeros
as NumPy's loops give them (``maximum`` returns its second operand on ties; ``sign(-0.0)`` is ``+0.0``). Only
the transcendental functions differ: libmvec's vector ``tanhf``/``expf``/... are not NumPy's, and are within the
tolerance documented in docs/passes_backends.md.

The source holds no user text: op names come from the op table, numbers are printed as C hexadecimal floats
(exact), and every identifier is made here (``in0``, ``t3``, ``k_<hash>``). ``check_c_source`` refuses anything
else, as ``python_source`` does for Python.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np

from ..ir.graph import Node, Value
from ..ir.types import TensorType
from ..ops import Op
from .c_integers import INTEGER_C_TYPES, INTEGER_OPS, integer_literal, is_integer_ctype
from .kernel_powers import helper_definitions, power_expression, without_pow

C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.bool_): "unsigned char",
           **INTEGER_C_TYPES}
"""The dtypes a kernel computes in, and their C types (a NumPy bool is one byte holding 0 or 1; the integers'
semantics are in ``c_integers``)."""

# libm functions with vector versions in glibc's libmvec, by the C name of the double version. A kernel declares
# the ones it calls with `#pragma omp declare simd`, so that GCC calls e.g. _ZGVdN8v_tanhf on 8 floats at once.
VECTOR_MATH = ("exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "pow")


def c_function(name: str, ctype: str) -> str:
    """``tanhf`` for float, ``tanh`` for double."""
    return name + "f" if ctype == "float" else name


def c_number(value: float | int | bool, ctype: str) -> str:
    """An exact C literal of ``value`` converted to ``ctype`` (the conversion NumPy does for a weak scalar: to the
    nearest value of the array's dtype). Infinities are GCC's builtins; NaN has no literal (see ``literal_ok``)."""
    if ctype == "unsigned char":
        return "1" if value else "0"
    if is_integer_ctype(ctype):
        return integer_literal(value, ctype)
    x = float(value)
    if math.isinf(x):
        infinity = "__builtin_inff()" if ctype == "float" else "__builtin_inf()"
        return f"({'-' if x < 0 else ''}{infinity})"
    if math.isnan(x):
        raise ValueError("no literal for NaN: a kernel reads a NaN constant from memory")
    return f"(({ctype}){x.hex()})"


def literal_ok(value) -> bool:
    """A weak Python scalar a kernel may write into its source: not NaN, and an int exact as a double."""
    if type(value) is bool:
        return True
    if type(value) is int:
        return abs(value) < 2 ** 53
    return type(value) is float and not math.isnan(value)


# --- the op table of kernels: op -> function(operands, ctype of the result, operand ctypes) -> C expression


def _max(x, y):  # NumPy's maximum: NaN wins (the first NaN), else the second operand on ties
    return f"(({x}) != ({x}) ? ({x}) : ({y}) != ({y}) ? ({y}) : ({x}) > ({y}) ? ({x}) : ({y}))"


def _min(x, y):
    return f"(({x}) != ({x}) ? ({x}) : ({y}) != ({y}) ? ({y}) : ({x}) < ({y}) ? ({x}) : ({y}))"


def _clip(x, lo, hi):  # NumPy's clip with scalar bounds: a NaN bound wins, x is kept on ties
    if lo is not None:
        x = f"(({lo}) != ({lo}) ? ({lo}) : ({x}) < ({lo}) ? ({lo}) : ({x}))"
    if hi is not None:
        x = f"(({hi}) != ({hi}) ? ({hi}) : ({x}) > ({hi}) ? ({hi}) : ({x}))"
    return x


def _call(name):
    return lambda a, t: f"{c_function(name, t)}({a[0]})"


def _builtin(name):
    return lambda a, t: f"__builtin_{c_function(name, t)}({a[0]})"


def op_expression(op: Op, operands: list, ctype: str) -> str:
    """The C expression of ``op`` computing in ``ctype`` on operands already converted to it."""
    if is_integer_ctype(ctype) and op in INTEGER_OPS:
        return INTEGER_OPS[op](operands, ctype)
    return C_OPS[op](operands, ctype)


def _one(t):
    return c_number(1.0, t)


_GELU_C = math.sqrt(2.0 / math.pi)

C_OPS = {
    Op.NEG: lambda a, t: f"(-{a[0]})",
    Op.ABS: _builtin("fabs"),
    Op.SIGN: lambda a, t: f"({a[0]} > 0 ? {_one(t)} : {a[0]} < 0 ? (-{_one(t)}) : {a[0]} == 0 ? (({t})0) : {a[0]})",
    Op.EXP: _call("exp"),
    Op.LOG: _call("log"),
    Op.LOG1P: _call("log1p"),
    Op.EXPM1: _call("expm1"),
    Op.SQRT: _builtin("sqrt"),
    Op.SQUARE: lambda a, t: f"({a[0]} * {a[0]})",
    Op.RECIPROCAL: lambda a, t: f"({_one(t)} / {a[0]})",
    Op.TANH: _call("tanh"),
    Op.SIN: _call("sin"),
    Op.COS: _call("cos"),
    Op.FLOOR: _builtin("floor"),
    Op.CEIL: _builtin("ceil"),
    Op.LOGICAL_NOT: lambda a, t: f"({a[0]} == 0)",
    Op.SIGMOID: lambda a, t: f"({_one(t)} / ({_one(t)} + {c_function('exp', t)}(-{a[0]})))",
    Op.RELU: lambda a, t: _max(a[0], c_number(0, t)),
    Op.GELU: lambda a, t: (f"(({c_number(0.5, t)} * {a[0]}) * ({_one(t)} + {c_function('tanh', t)}("
                           f"{c_number(_GELU_C, t)} * ({a[0]} + (({c_number(0.044715, t)} * {a[0]}) * {a[0]})"
                           f" * {a[0]}))))"),
    Op.COPY: lambda a, t: a[0],
    Op.CAST: lambda a, t: a[0],  # the operand is converted to the result's C type like every operand
    Op.ADD: lambda a, t: f"({a[0]} + {a[1]})",
    Op.SUB: lambda a, t: f"({a[0]} - {a[1]})",
    Op.MUL: lambda a, t: f"({a[0]} * {a[1]})",
    Op.DIV: lambda a, t: f"({a[0]} / {a[1]})",
    Op.POW: lambda a, t: f"{c_function('pow', t)}({a[0]}, {a[1]})",
    Op.MAXIMUM: lambda a, t: _max(a[0], a[1]),
    Op.MINIMUM: lambda a, t: _min(a[0], a[1]),
    Op.EQ: lambda a, t: f"({a[0]} == {a[1]})",
    Op.NE: lambda a, t: f"({a[0]} != {a[1]})",
    Op.LT: lambda a, t: f"({a[0]} < {a[1]})",
    Op.LE: lambda a, t: f"({a[0]} <= {a[1]})",
    Op.GT: lambda a, t: f"({a[0]} > {a[1]})",
    Op.GE: lambda a, t: f"({a[0]} >= {a[1]})",
    Op.LOGICAL_AND: lambda a, t: f"(({a[0]} != 0) & ({a[1]} != 0))",
    Op.LOGICAL_OR: lambda a, t: f"(({a[0]} != 0) | ({a[1]} != 0))",
    Op.LOGICAL_XOR: lambda a, t: f"(({a[0]} != 0) ^ ({a[1]} != 0))",
    Op.WHERE: lambda a, t: f"({a[0]} ? {a[1]} : {a[2]})",
    Op.CLIP: lambda a, t: _clip(*a),  # a: x, lo, hi (None for a bound not given)
    # classification, in the operand's dtype: NaN is the one value unequal to itself; |x| < inf is false for NaN
    Op.ISNAN: lambda a, t: f"({a[0]} != {a[0]})",
    Op.ISINF: lambda a, t: f"(__builtin_{c_function('fabs', t)}({a[0]}) == {c_number(math.inf, t)})",
    Op.ISFINITE: lambda a, t: f"(__builtin_{c_function('fabs', t)}({a[0]}) < {c_number(math.inf, t)})",
    # rounding: exact IEEE operations (rint in the default mode, to nearest, halves to even, as NumPy's loops)
    Op.RINT: _builtin("rint"),
    Op.TRUNC: _builtin("trunc"),
    Op.ROUND: _builtin("rint"),  # decimals=0 only (partition.why_not): np.round is then np.rint
}

_BY_CPU = ("NumPy computes it with its own SIMD code (SVML where the CPU has AVX-512) or with libm, by CPU: no C "
           "function gives its bits on every machine")
_DIVMOD = ("not yet written for floats (NumPy's divmod steps); on integers NumPy warns on a division by zero, "
           "which a kernel cannot")
NOT_FUSED = {
    **dict.fromkeys([Op.ARCSIN, Op.ARCCOS, Op.ARCTAN, Op.SINH, Op.COSH, Op.LOG2, Op.LOG10, Op.EXP2, Op.ARCTAN2],
                    _BY_CPU),
    Op.HYPOT: "libm's hypot or NumPy's own loop, by CPU: their bits are not promised to agree",
    Op.LOGADDEXP: "NumPy's formula calls log1p and exp (" + _BY_CPU + ")",
    Op.FLOORDIV: _DIVMOD,
    Op.MOD: _DIVMOD,
    Op.CONJ: "complex values (kernels compute in float32, float64, bool and the integers)",
    Op.ANGLE: "complex values, and arctan2 for real ones (see arctan2)",
}
"""The elementwise ops of the op table without a kernel expression, and why: a kernel must give NumPy's bits
(only the libm calls of ``TRANSCENDENTAL`` are within a tolerance, and those were there first)."""

COMPARISONS = frozenset({Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE})
CLASSIFY = frozenset({Op.ISNAN, Op.ISINF, Op.ISFINITE})
"""Ops whose bool result says what kind of number the operand is: computed in the operand's dtype."""
LOGICAL = frozenset({Op.LOGICAL_NOT, Op.LOGICAL_AND, Op.LOGICAL_OR, Op.LOGICAL_XOR})
TRANSCENDENTAL = frozenset({Op.EXP, Op.LOG, Op.LOG1P, Op.EXPM1, Op.TANH, Op.SIN, Op.COS, Op.POW, Op.SIGMOID,
                            Op.GELU})
"""Ops that call libm: not bit for bit with NumPy, and several times costlier than arithmetic."""


def compute_dtype(node: Node) -> np.dtype:
    """The dtype the op computes in: its result's, except for comparisons (the operands' common dtype)."""
    if node.op in COMPARISONS or node.op in CLASSIFY:
        return np.result_type(*[_promotion_operand(v.type) for v in node.inputs])
    if node.op == Op.WHERE:
        return node.output.type.dtype
    return node.output.type.dtype


def _promotion_operand(t: TensorType):
    return t.weak(0) if t.weak is not None else t.dtype


# --- one kernel


@dataclass
class KernelInput:
    """An array the kernel reads, and how it lines up with the loop."""

    value: Value
    pattern: str
    """full: one element per iteration; row: a vector along the inner loop, the same for every row;
    col: one element per row; scalar: one element for the whole loop; tile: ``period`` rows, row i reading row
    i % period (an operand broadcast along the loop's leading axes only)."""
    period: int = 0


@dataclass
class KernelSpec:
    """What a kernel computes: the group's nodes, its operands and results, and the loop's shape."""

    nodes: list[Node]
    inputs: list[KernelInput]
    outputs: list[Value]
    two_d: bool
    """True: rows x inner loop (some operand broadcasts along one of them); False: one flat loop."""
    literals: dict[Value, object] = field(default_factory=dict)
    """Operands written into the source as numbers (weak Python scalars, one-element constants)."""
    reduce: Node | None = None
    """A ``sum`` or ``mean`` over the inner loop (one result per row) ending the group, or None."""
    row: Node | None = None
    """The group's one node when it is a row op (``softmax``, ``log_softmax``, ``layer_norm``: see
    ``c_row_kernels``)."""


@dataclass
class ElementCode:
    """The C of a group's elementwise nodes for element j of row i: what every kind of kernel starts from."""

    params: list[str]
    """The kernel's parameters: ``begin, end[, inner]``, then ``in0 ..`` and ``out0 ..``."""
    row_setup: list[str]
    """Reads done once per row (a scalar or column operand)."""
    body: list[str]
    """Reads of element j, one line per node (``t3 = ...``), and the writes of the group's outputs."""
    names: dict[Value, str]
    """The C variable holding each value in ``body`` (``a0``, ``t3``)."""
    used_math: set[str]
    """The libm functions ``body`` calls."""


def element_code(spec: KernelSpec, may_alias: bool = False) -> ElementCode:
    """The elementwise part of ``spec``: every node but the reduction or row op that ends the group (the kernel
    writes that one's result itself). ``may_alias``: the inputs are declared without ``restrict``, for a kernel
    whose output may be an input's memory, read at the same element (``codegen.Step.same_element``); ``#pragma
    omp simd`` vectorizes the loop all the same (the same machine code, checked with GCC 12)."""
    names: dict[Value, str] = {}
    body: list[str] = []
    params = ["int64_t begin", "int64_t end"] + (["int64_t inner"] if spec.two_d else [])
    row_setup: list[str] = []
    for i, inp in enumerate(spec.inputs):
        ctype = C_TYPES[inp.value.type.dtype]
        params.append(f"const {ctype}* {'' if may_alias else 'restrict '}in{i}")
        names[inp.value] = f"a{i}"
        if inp.pattern == "scalar":
            row_setup.append(f"const {ctype} a{i} = in{i}[0];")
        elif inp.pattern == "col":
            row_setup.append(f"const {ctype} a{i} = in{i}[i];")
        else:
            index = ("i * inner + j" if spec.two_d and inp.pattern == "full"
                     else f"(i % {inp.period}) * inner + j" if inp.pattern == "tile" else "j")
            body.append(f"{ctype} a{i} = in{i}[{index}];")
    for k, v in enumerate(spec.outputs):
        params.append(f"{C_TYPES[v.type.dtype]}* restrict out{k}")
    used_math: set[str] = set()
    last = [n for n in (spec.reduce, spec.row) if n is not None]
    for n, node in enumerate(spec.nodes):
        if node in last:
            continue
        line = node_line(node, f"t{n}", names, spec.literals)
        used_math.update(f for f in VECTOR_MATH if any(f"{c_function(f, t)}(" in line for t in ("float", "double")))
        body.append(line)
        names[node.output] = f"t{n}"
    for k, v in enumerate(spec.outputs):
        if all(v is not n.output for n in last):
            body.append(f"out{k}[{'i * inner + j' if spec.two_d else 'j'}] = {names[v]};")
    return ElementCode(params, row_setup, body, names, used_math)


def node_line(node: Node, name: str, names: dict[Value, str], literals: dict[Value, object]) -> str:
    """``ctype name = expression;``: one node computed from the C variables ``names`` of its operands (or the
    numbers in ``literals``), each converted to the dtype the op computes in, as NumPy's loop does."""
    ctype = C_TYPES[node.output.type.dtype]
    operand_type = C_TYPES[compute_dtype(node)]
    operands = []
    for v in node.inputs:
        if v in literals:
            operands.append(c_number(literals[v], operand_type))
        elif node.op == Op.WHERE and v is node.inputs[0] or node.op in LOGICAL:
            operands.append(names[v])
        else:
            operands.append(f"(({operand_type}){names[v]})" if C_TYPES[v.type.dtype] != operand_type else names[v])
    if node.op == Op.CLIP:
        it = iter(operands[1:])
        operands = [operands[0], next(it) if node.attrs["has_min"] else None,
                    next(it) if node.attrs["has_max"] else None]
    if node.op == Op.CAST and ctype == "unsigned char":
        expression = f"({names[node.inputs[0]]} != 0)"  # astype(bool): nonzero (NaN too) is True
    else:
        # (``x ** 2`` is NumPy's square of x, ``x ** -1.5`` is computed from a square root: kernel_powers)
        expression = (power_expression(node, operands, operand_type, literals)
                      or op_expression(node.op, operands, operand_type))
    return f"{ctype} {name} = ({ctype}){expression};"


def kernel_source(spec: KernelSpec, vector_math: bool) -> "CKernel":
    """The kernel function for ``spec``; its name is a hash of its text, so equal kernels are compiled once."""
    code = element_code(spec, may_alias=spec.reduce is None)
    params, row_setup, body, names, used_math = (code.params, code.row_setup, code.body, code.names,
                                                 code.used_math)
    lines = []
    if spec.reduce is not None:
        return _reduction_kernel(spec, params, row_setup, body, names, used_math, vector_math)
    if spec.two_d:
        lines.append("  for (int64_t i = begin; i < end; i++) {")
        lines += [f"    {s}" for s in row_setup]
        lines.append("    #pragma omp simd")
        lines.append("    for (int64_t j = 0; j < inner; j++) {")
        lines += [f"      {s}" for s in body]
        lines += ["    }", "  }"]
    else:
        lines += [f"  {s}" for s in row_setup]
        lines.append("  #pragma omp simd")
        lines.append("  for (int64_t j = begin; j < end; j++) {")
        lines += [f"    {s}" for s in body]
        lines.append("  }")
    declarations = math_declarations(used_math, "\n".join(lines), vector_math)
    signature = f"({', '.join(params)})"
    text = "\n".join(lines)
    name = "k_" + hashlib.sha256((signature + text + str(vector_math)).encode()).hexdigest()[:20]
    kernel = CKernel(name, declarations, f"void {name}{signature} {{\n{text}\n}}\n",
                     len(spec.inputs), len(spec.outputs), spec.two_d)
    check_c_source(kernel.translation_unit())
    return kernel


# NumPy's pairwise summation, as its add.reduce inner loop runs it on a row (numpy/_core/src/umath/
# loops_utils.h.src): below 8 elements one by one from 0; up to 128, eight running sums combined in a fixed
# tree and the rest added one by one; above, split in two at a multiple of 8 and the halves added. A kernel
# follows the same tree, computing each leaf's elements into a block of 128 on the stack, so its sum is NumPy's
# bit for bit and the summed values never go through memory. (tests/backends/test_fused.py checks it on every length.)
PAIRWISE_LEAF = """static {t} gl_leaf_sum_{s}(const {t}* a, int64_t n) {{
  if (n < 8) {{
    {t} res = 0;
    for (int64_t i = 0; i < n; i++) res += a[i];
    return res;
  }}
  {t} r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3], r4 = a[4], r5 = a[5], r6 = a[6], r7 = a[7];
  int64_t i;
  for (i = 8; i < n - (n % 8); i += 8) {{
    r0 += a[i]; r1 += a[i + 1]; r2 += a[i + 2]; r3 += a[i + 3];
    r4 += a[i + 4]; r5 += a[i + 5]; r6 += a[i + 6]; r7 += a[i + 7];
  }}
  {t} res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
  for (; i < n; i++) res += a[i];
  return res;
}}"""
PAIRWISE_BLOCK = 128


def _reduction_kernel(spec: KernelSpec, params, row_setup, body, names, used_math, vector_math) -> "CKernel":
    """``fill`` computes elements j0 .. j0 + n of row i (and writes the group's other outputs); ``pw`` follows
    NumPy's summation tree over the row, filling a block at each leaf; the kernel sums each row of its range."""
    node = spec.reduce
    v = node.inputs[0]
    ctype = C_TYPES[v.type.dtype]
    suffix = "f" if ctype == "float" else "d"
    out = next(k for k, o in enumerate(spec.outputs) if o is node.output)
    pointers = [p.split()[-1] for p in params[3:]]
    pointer_params = ", ".join(params[3:])
    args = ", ".join(pointers)

    def fill_and_sum(suffix_name: str, mean: str, store: list[str]) -> list[str]:
        """``KNAME_fill<suffix>`` (elements j0 .. j0 + n of row i into ``buf``, through ``store``) and
        ``KNAME_pw<suffix>`` (NumPy's summation tree over the row, filling a block at each leaf); ``mean``: an
        extra parameter both take (the row's mean, for var's second pass), or ""."""
        extra_param, extra_arg = (f", {ctype} {mean}", f", {mean}") if mean else ("", "")
        lines = [f"static inline void KNAME_fill{suffix_name}(int64_t i, int64_t j0, int64_t n, int64_t inner, "
                 f"{pointer_params}{extra_param}, {ctype}* restrict buf) {{"]
        lines += [f"  {line}" for line in row_setup]
        lines += ["  #pragma omp simd", "  for (int64_t jj = 0; jj < n; jj++) {", "    int64_t j = j0 + jj;"]
        lines += [f"    {line}" for line in (body if not mean else [b for b in body if not b.startswith("out")])]
        lines += [f"    {line}" for line in store] + ["  }", "}"]
        lines += [f"static {ctype} KNAME_pw{suffix_name}(int64_t i, int64_t j0, int64_t n, int64_t inner, "
                  f"{pointer_params}{extra_param}) {{",
                  f"  if (n <= {PAIRWISE_BLOCK}) {{",
                  f"    {ctype} buf[{PAIRWISE_BLOCK}];",
                  f"    KNAME_fill{suffix_name}(i, j0, n, inner, {args}{extra_arg}, buf);",
                  f"    return gl_leaf_sum_{suffix}(buf, n);",
                  "  }",
                  "  int64_t n2 = n / 2;",
                  "  n2 -= n2 % 8;",
                  f"  return KNAME_pw{suffix_name}(i, j0, n2, inner, {args}{extra_arg}) + "
                  f"KNAME_pw{suffix_name}(i, j0 + n2, n - n2, inner, {args}{extra_arg});",
                  "}"]
        return lines

    functions = fill_and_sum("", "", [f"buf[jj] = {names[v]};"])
    total = f"(({ctype})0 + KNAME_pw(i, 0, inner, inner, {args}))"  # NumPy starts from the identity, 0
    if node.op == Op.MEAN:  # np.mean divides the sum by the count in double, then rounds to the dtype
        total = f"({ctype})((double){total} / (double)inner)"
    if node.op in (Op.VAR, Op.STD):
        # np.var: the mean as np.mean makes it, then the sum (same tree) of the squared deviations, computed in
        # the dtype as NumPy's subtract and square do, divided by (count - ddof) in double; np.std: its sqrt.
        functions += fill_and_sum("2", "mean", [f"{ctype} dev = {names[v]} - mean;", "buf[jj] = dev * dev;"])
        squares = f"(({ctype})0 + KNAME_pw2(i, 0, inner, inner, {args}, mean))"
        variance = f"({ctype})((double){squares} / (double)(inner - {int(node.attrs['ddof'])}))"
        result = f"__builtin_{c_function('sqrt', ctype)}({variance})" if node.op == Op.STD else variance
        main = ["  for (int64_t i = begin; i < end; i++) {",
                f"    const {ctype} mean = ({ctype})((double){total} / (double)inner);",
                f"    out{out}[i] = {result};", "  }"]
    else:
        main = ["  for (int64_t i = begin; i < end; i++) {", f"    out{out}[i] = {total};", "  }"]
    signature = f"({', '.join(params)})"
    text = "\n".join(functions) + "\n"
    declarations = math_declarations(used_math, text, vector_math)
    declarations += (PAIRWISE_LEAF.format(t=ctype, s=suffix),)
    name = "k_" + hashlib.sha256((signature + text + "\n".join(main) + str(vector_math)).encode()).hexdigest()[:20]
    definition = text.replace("KNAME", name) + f"\nvoid {name}{signature} {{\n" + "\n".join(main).replace(
        "KNAME", name) + "\n}\n"
    kernel = CKernel(name, declarations, definition, len(spec.inputs), len(spec.outputs), True)
    check_c_source(kernel.translation_unit())
    return kernel


@dataclass(frozen=True)
class CKernel:
    """One kernel function: its name (a hash of its text), the prototypes it needs and its definition."""

    name: str
    declarations: tuple[str, ...]
    definition: str
    n_inputs: int
    n_outputs: int
    two_d: bool

    def translation_unit(self) -> str:
        return library_source([self])


def library_source(kernels) -> str:
    """One C file defining ``kernels`` (each prototype declared once), in a fixed order."""
    kernels = sorted({k.name: k for k in kernels}.values(), key=lambda k: k.name)
    declarations = sorted({d for k in kernels for d in k.declarations})
    return "\n".join([PRELUDE] + declarations + [""] + [k.definition for k in kernels])


def math_declarations(used_math: set[str], text: str, vector_math: bool) -> tuple[str, ...]:
    """The prototypes of the libm functions ``text`` calls, in each C type it calls them in."""
    return tuple(declaration(f, t, vector_math) for f in sorted(used_math) for t in ("float", "double")
                 if f"{c_function(f, t)}(" in text) + helper_definitions(text)


def declaration(function: str, ctype: str, vector_math: bool) -> str:
    """The prototype of a libm function, marked as having vector versions when libmvec is used."""
    args = ", ".join([ctype] * (2 if function == "pow" else 1))
    proto = f"{ctype} {c_function(function, ctype)}({args});"
    return f"#pragma omp declare simd notinbranch\n{proto}" if vector_math else proto


PRELUDE = "#include <stdint.h>\n"
_SAFE_C = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ ()[]{},.;:=+-*/%<>!?&|^#\n")


def check_c_source(source: str) -> None:
    """Refuse a kernel with any character a kernel made here never has (quotes, backslashes, ...)."""
    bad = sorted(set(source) - _SAFE_C)
    if bad:
        raise RuntimeError(f"generated C would contain {bad}; refusing to compile it (a bug in graph_lab's kernel "
                           f"generator: user text must never reach the source)")
