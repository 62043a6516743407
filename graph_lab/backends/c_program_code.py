"""The C function of a program (``c_programs``) and the Python that calls it.

One function runs the statements in program order, all inside a loop over ``step`` from ``begin`` to ``end``: a
graph's program is called with ``(0, 1)``; a ``fori_loop`` whose body is one program is called once with the
loop's bounds (``c_loops``). Each statement is a small function of its own, a loop nest over its written slice
whose integers (offsets, strides, lengths) are read from a table (``k``), so statements that differ only in
them are one function; the sequence of calls is in the table too::

    static void s_8d1f...(double* restrict q0, const double* restrict q1, const int64_t* restrict k) {
      for (int64_t i0 = 0; i0 < k[0]; i0++) {
        double a0 = q1[k[1] + i0 * k[2]];
        ...
        q0[k[5] + i0 * k[6]] = t2;
      }
    }
    void p_1c9e...(int64_t begin, int64_t end, double* restrict b0, double* restrict b1, const int64_t* k) {
      ... for each step, for each of the k[0] calls: switch (its case) { case 0: s_8d1f...(b1, b0, row); ... }
    }

Buffers are read as C-ordered: the call copies one that is not and copies the written ones back after. A
statement that reads the buffer it writes elsewhere (``needs_scratch``) computes into the scratch memory first
and then copies it into the slice: NumPy's right-hand side is computed before the write.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from ..errors import GraphExecutionError
from ..ir.graph import Graph
from ..ops import Op
from .c_kernels import C_TYPES, CKernel, check_c_source, node_line
from .c_programs import Program, Statement
from .c_statement_matmul import blas_table, laid_out_as_compiled, matmul_code, run_as_numpy, uses_blas
from .c_statement_ops import leaf_dtype
from .roll_reads import boxes
from .scan_statements import SCAN_OPS, scan_body, scan_loops
from .stencil import _c_strides


class _Numbers:
    """The integers of one statement's C code (offsets, strides, sizes), read from its row of the program's table
    (``k[j]``): statements that differ only in them are one C function, so an unrolled loop of 800 row updates
    is a few functions called 800 times, and the C compiler's time stays small. ``literal``: written into the
    text instead, which a loop nest with known bounds and strides runs faster (a stencil's time steps repeat the
    same few statements: few functions either way)."""

    def __init__(self, literal: bool):
        self.literal = literal
        self.values: list[int] = []

    def __call__(self, x: int) -> str:
        if self.literal:
            return str(int(x))
        self.values.append(int(x))
        return f"k[{len(self.values) - 1}]"


MAX_LITERAL_FUNCTIONS = 32
"""A program whose statements, with their integers written in, make more distinct C functions than this reads
the integers from its table instead."""


def _index(offset: int, strides: tuple[int, ...], num) -> str:
    """(A unit stride stays in the text: the compiler vectorizes a contiguous loop it knows is one.)"""
    return " + ".join([num(offset)] + [f"i{d}" if st == 1 else f"i{d} * {num(st)}"
                                       for d, st in enumerate(strides) if st != 0])


def _loops(shape: tuple[int, ...], body: list[str], indent: str, num) -> list[str]:
    lines = []
    for d, n in enumerate(shape):
        lines.append(f"{indent}{'  ' * d}for (int64_t i{d} = 0; i{d} < {num(n)}; i{d}++) {{")
    inner = indent + "  " * len(shape)
    lines += [inner + line for line in body]
    lines += [f"{indent}{'  ' * d}}}" for d in reversed(range(len(shape)))]
    return lines


def _statement_function(p: Program, s: Statement, literal: bool) -> tuple[str, list[str], list[str], list[int]]:
    """A statement as a C function of the buffers it touches: (its name, the helpers it calls and its definition,
    the call's arguments, its integers: ``_Numbers``).
    The steps of a time loop repeat the same few statements on other buffers: each is compiled once, which keeps
    the program's code small enough to stay in the instruction cache."""
    ctype = C_TYPES[s.dtype]
    local: dict[int, int] = {}  # buffer position -> parameter number
    copied = [s.base] if s.made and s.base is not None else []  # (an update not in place copies its base)
    for source in [s.result, *copied, *s.sources()]:
        if source in p.buffer_of:
            local.setdefault(p.buffer_of[source], len(local))
    scalars = list(dict.fromkeys((source, leaf_dtype(source, s.dtype)) for source in s.sources()
                                 if source not in p.buffer_of))
    names, reads, body, first, helpers, num = {}, [], [], [], [], _Numbers(literal)
    for j, (leaf, (source, layout)) in enumerate(s.leaves.items()):
        names[leaf] = f"a{j}"
        read_as = leaf_dtype(leaf, s.dtype)
        if leaf in s.matmuls:  # (a product, computed before the loop nest: c_statement_matmul)
            lines, helper = matmul_code(s.matmuls[leaf], ctype, f"m{j}", lambda v: f"q{local[p.buffer_of[v]]}", num)
            first += ["  " + line for line in lines]
            helpers.append(helper)
            reads.append((f"{ctype} a{j} = m{j}", layout))
        elif source in p.buffer_of:
            reads.append((f"{C_TYPES[read_as]} a{j} = q{local[p.buffer_of[source]]}", layout))
        else:
            body.append(f"const {C_TYPES[read_as]} a{j} = c{scalars.index((source, read_as))}[0];")
    for k, n in enumerate(s.nodes):
        if n.op in (Op.ROLL, Op.MATMUL) or n.op in SCAN_OPS:
            continue  # (read in place: roll_reads; computed before the nest: c_statement_matmul; scan_body's)
        body.append(node_line(n, f"t{k}", names, s.literals))
        names[n.output] = f"t{k}"
    value = names.get(s.value)  # (a scan's is its loop body's: scan_body)
    arrays = p.buffers + p.made
    params = [f"{'const ' if m else ''}{C_TYPES[arrays[b].type.dtype]}* restrict q{m}" for b, m in local.items()]
    params += [f"const {C_TYPES[dtype]}* restrict c{m}" for m, (_, dtype) in enumerate(scalars)]
    lines = first
    if copied:
        size = num(math.prod(copied[0].type.shape))
        lines += [f"  for (int64_t j = 0; j < {size}; j++) q0[j] = q{local[p.buffer_of[copied[0]]]}[j];"]
    target, written = ((0, _c_strides(s.shape)), "tmp") if s.scratch else (s.write, "q0")
    for shape, (*at, write) in boxes(s.shape, [layout for _, layout in reads] + [target]):
        # (one box, the whole nest, unless the statement reads rolls: roll_reads)
        loads = [f"{text}[{_index(*layout, num)}];" for (text, _), layout in zip(reads, at)]
        scan = s.node.op in SCAN_OPS
        inner, result = scan_body(s.node, loads, ctype, write) if scan else (loads + body, value)
        inner.append(f"{written}[{_index(*write, num)}] = {result};")
        lines += scan_loops(s.node, shape, inner, "  ") if scan else _loops(shape, inner, "  ", num)
    if s.scratch:
        params.append(f"{ctype}* restrict tmp")
        lines += _loops(s.shape, [f"q0[{_index(*s.write, num)}] = tmp[{_index(0, _c_strides(s.shape), num)}];"],
                        "  ", num)
    blas = any(c.plan.kind != "noblas" for c in s.matmuls.values())
    params += ["const void* const* restrict blas"] if blas else []
    params += [] if literal else ["const int64_t* restrict k"]
    signature, text = f"({', '.join(params)})", "\n".join(lines)
    name = "s_" + hashlib.sha256((signature + text).encode()).hexdigest()[:20]
    definition = f"static __attribute__((noinline)) void {name}{signature} {{\n{text}\n}}"
    args = [f"b{b}" for b in local] + [f"c{p.scalars.index(sc)}" for sc in scalars]
    args += [f"({ctype}*)scratch"] if s.scratch else []
    return name, [*helpers, definition], args + (["blas"] if blas else []), num.values


def program_kernel(p: Program) -> CKernel:
    """The program's C function; its name is a hash of its text, so equal programs are compiled once."""
    written = {p.buffer_of[s.result] for s in p.statements}
    params = ["int64_t begin", "int64_t end"]
    params += [f"{'' if k in written else 'const '}{C_TYPES[v.type.dtype]}* restrict b{k}"
               for k, v in enumerate(p.buffers + p.made)]
    params += [f"const {C_TYPES[dtype]}* restrict c{j}" for j, (_, dtype) in enumerate(p.scalars)]
    scratch = any(s.scratch for s in p.statements)
    if scratch:
        params.append("unsigned char* restrict scratch")
    blas = uses_blas(p)
    if blas:
        params.append("const void* const* restrict blas")
    params.append("const int64_t* restrict k")
    written_in = [_statement_function(p, s, literal=True) for s in p.statements]
    if len({name for name, *_ in written_in}) <= MAX_LITERAL_FUNCTIONS:
        functions = {d: None for _, definitions, _, _ in written_in for d in definitions}
        lines = ["  for (int64_t step = begin; step < end; step++) {"]
        lines += [f"    {name}({', '.join(args)});" for name, _, args, _ in written_in] + ["  }"]
        table = [0]
    else:
        functions, lines, table = _table_driven(p)
    signature, text = f"({', '.join(params)})", "\n".join(lines)
    name = "p_" + hashlib.sha256((signature + text).encode()).hexdigest()[:20]
    kernel = CKernel(name, tuple(functions), f"void {name}{signature} {{\n{text}\n}}\n",
                     len(p.bases) + len(p.made), int(scratch) + int(blas) + 1, False)
    check_c_source(kernel.translation_unit())
    p.table = np.array(table, dtype=np.int64)
    return kernel


def _table_driven(p: Program) -> tuple[dict, list[str], list[int]]:
    """The statements' functions (integers from the table), the main loop calling them, and the table: k[0]
    calls, then (case, row of its integers) for each, then the rows."""
    functions, cases, calls, numbers = {}, {}, [], []
    for s in p.statements:
        name, definitions, args, values = _statement_function(p, s, literal=False)
        functions.update(dict.fromkeys(definitions))  # (each helper, each distinct statement once)
        call = f"{name}({', '.join(args + ['r'])});"
        calls += [cases.setdefault(call, len(cases)), len(numbers)]
        numbers += values
    lines = ["  const int64_t* restrict rows = k + 1 + 2 * k[0];",
             "  for (int64_t step = begin; step < end; step++) {",
             "    for (int64_t j = 0; j < k[0]; j++) {",
             "      const int64_t* restrict r = rows + k[2 + 2 * j];",
             "      switch (k[1 + 2 * j]) {"]
    lines += [f"        case {c}: {call} break;" for call, c in cases.items()]
    lines += ["      }", "    }", "  }"]
    return functions, lines, [len(p.statements), *calls, *numbers]


def scratch_bytes(p: Program) -> int:
    return max([s.elements * s.dtype.itemsize for s in p.statements if s.scratch], default=0)


def program_call(fn, p: Program, graph: Graph, bounds: tuple[int, int] | None = (0, 1)):
    """``program(*buffers, *scalars)``: checks the arrays, runs the function once (or, with ``bounds=None``,
    ``program(lower, upper, *buffers, *scalars)`` for ``lower <= step < upper``), writes into the buffers."""
    expected = [(v.type.shape, v.type.dtype) for v in p.buffers]
    dtypes = [dtype for _, dtype in p.scalars]
    written = sorted({p.buffer_of[s.result] for s in p.statements} - {p.buffer_of[v] for v in p.made})
    made = [(v.type.shape, v.type.dtype) for v in p.made if v not in p.internal]
    internal = [p.internal.get(v) for v in p.made]  # (None: a new array the call returns)
    n_buffers, extra, arena = len(p.buffers), scratch_bytes(p), p.arena_bytes
    node = p.call_node
    products = any(s.matmuls for s in p.statements)
    blas = blas_table() if uses_blas(p) else None
    numbers = p.table  # (the statements' integers: ``_Numbers``)

    def run(lower, upper, arrays):
        if products and not laid_out_as_compiled(arrays[:n_buffers]):
            if (lower, upper) == (0, 1):
                return run_as_numpy(p, arrays[:n_buffers], arrays[n_buffers:])
            raise GraphExecutionError(f"while executing {graph.node_text(node)} ({p.describe()}): an array is not "
                                      f"C-ordered, as the loop's products were compiled for", node)
        work = []
        for a, (shape, dtype) in zip(arrays[:n_buffers], expected):
            if type(a) is not np.ndarray or a.shape != shape or a.dtype != dtype:
                raise GraphExecutionError(
                    f"while executing {graph.node_text(node)} ({p.describe()}): an operand is "
                    f"{getattr(a, 'dtype', type(a).__name__)}{list(np.shape(a))}, the function was compiled for "
                    f"{dtype}{list(shape)}; compile the graph again for these inputs", node)
            work.append(a if a.flags.c_contiguous and a.flags.aligned else np.require(a, requirements="CA"))
        scalars = [np.array(x, dtype) for x, dtype in zip(arrays[n_buffers:], dtypes)]
        new = [np.empty(shape, dtype) for shape, dtype in made]
        pointers = [a.ctypes.data for a in work]
        if arena:
            block = np.empty(arena, np.uint8)
            start, returned = block.ctypes.data, iter(new)
            pointers += [start + k if k is not None else next(returned).ctypes.data for k in internal]
        else:
            pointers += [a.ctypes.data for a in new]
        pointers += [c.ctypes.data for c in scalars]
        if extra:
            scratch = np.empty(extra, np.uint8)
            pointers.append(scratch.ctypes.data)
        if blas is not None:
            pointers.append(blas.ctypes.data)
        pointers.append(numbers.ctypes.data)
        fn(lower, upper, *pointers)
        for k in written:
            if work[k] is not arrays[k]:
                np.copyto(arrays[k], work[k])
        return new

    if bounds is None:
        return lambda lower, upper, *arrays: run(lower, upper, arrays)
    lower, upper = bounds
    return lambda *arrays: run(lower, upper, arrays)


def program_statement(p: Program, node, ctx) -> tuple[str, str]:
    """The generated Python for a node the program computes: the call at its last update, nothing elsewhere
    (an update's result is its base's array, by the base's name)."""
    if node.op == Op.INDEX_UPDATE and node.output in p.buffer_of and node.output not in p.made:
        ctx.numbering[node.output] = ctx.numbering[node.inputs[0]]
    if node is not p.call_node:
        return "", ""
    code = f"{p.call_name}({', '.join(ctx.var(v) for v in p.bases)})"
    returned = [v for v in p.made if v not in p.internal]
    if returned:  # (the new arrays it makes)
        code = f"{', '.join(ctx.var(v) for v in returned)}, = {code}"
    return code, p.describe()
