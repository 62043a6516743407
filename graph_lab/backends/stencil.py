"""Stencil kernels: a slice of an array updated from slices of other arrays, as one C loop nest.

A time step of a stencil code is ``B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + ...)``: views of one
array, arithmetic on them, and a write of the result into a slice of another. NumPy runs each op as a call over
the whole view and writes the result in one more; here the whole statement is one C function that reads each
view at its offset and strides in its base array and writes each result element into the slice of the written
base (the update must be one that ``inplace.py`` writes in its base's memory)::

    for (int64_t i0 = begin; i0 < end; i0++)
      for (int64_t i1 = 0; i1 < 118; i1++) {
        double a0 = in0[121 + i0 * 120 + i1 * 1];      // A[1:-1, 1:-1]
        ...
        out0[121 + i0 * 120 + i1 * 1] = t4;             // B[1:-1, 1:-1] = ...
      }

The offsets and strides are written into the source: a graph's shapes are static, and a base array is read as
C-ordered (the call copies one that is not; a written base that is not is computed in a C-ordered copy, copied
back). The ops are those whose C is NumPy's arithmetic bit for bit (``+ - * /`` in the same order, no FMA:
``-ffp-contract=off``); a read base must not be the written one (NumPy computes the right-hand side before it
writes, a loop nest would read elements it wrote already), and a base is either a graph input (the arrays a graph
writes into are guarded to overlap no other input) or an array the graph made (memory of its own).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import GraphExecutionError
from ..ir.graph import Graph, Node, Value
from ..ops import SOURCE_OPS, Op
from ..ops.aliasing import returns_fresh
from ..ops.indexing import Slice
from .c_kernels import C_OPS, C_TYPES, CKernel, c_number, check_c_source
from .cost import GroupCost

STENCIL_OPS = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.DIV})
"""The ops a stencil kernel computes: C's float arithmetic is NumPy's for them."""
FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


@dataclass(eq=False)
class Stencil:
    """One update computed by one kernel."""

    index: int
    """Its number (``stencil<index>`` in the generated code)."""
    update: Node
    """The ``index_update`` it replaces (the kernel's line is there)."""
    nodes: list[Node]
    """The arithmetic nodes and the views read only by them, in graph order (the kernel computes them)."""
    bases: list[Value]
    """The arrays read, then the written base last: the kernel call's arguments."""
    reads: dict[Value, tuple[int, int, tuple[int, ...]]]
    """For each value the arithmetic reads: (position in ``bases``, offset, strides), in elements."""
    write: tuple[int, tuple[int, ...]]
    """The offset and strides of the written slice in the written base."""
    literals: dict[Value, float] = field(default_factory=dict)
    decision: object = None
    kernel: CKernel | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.update.inputs[1].type.shape

    def cost(self) -> GroupCost:
        """The cost model's numbers: NumPy runs each op over the views and one more call for the write."""
        value = self.update.inputs[1]
        size, item = math.prod(self.shape), value.type.dtype.itemsize
        ops = sum(1 for n in self.nodes if n.op in STENCIL_OPS)
        return GroupCost(size, ops + 1, (3 * ops + 2) * size * item, (), ops, len(self.bases),
                         (len(self.reads) + 1) * size * item)

    def outputs(self, graph: Graph) -> list[Value]:
        return [self.update.output]

    # (what the fused backend asks of a stencil kernel and of a ``c_programs.Program`` alike)
    @property
    def call_name(self) -> str:
        return f"stencil{self.index}"

    @property
    def call_node(self) -> Node:
        return self.update

    def taken(self) -> list[Node]:
        return self.nodes + [self.update]

    def results(self) -> list[Value]:
        return [self.update.output]

    def make_kernel(self) -> CKernel:
        return stencil_kernel(self)

    def make_call(self, fn, graph: Graph):
        return stencil_call(fn, self, graph)

    def statement(self, node: Node, ctx) -> tuple[str, str]:
        if node is not self.update:
            return "", ""
        code = f"stencil{self.index}({', '.join(ctx.var(v) for v in self.bases)})"
        ctx.numbering[node.output] = ctx.numbering[self.bases[-1]]  # (the update's result is its base)
        return code, f"stencil kernel {self.index}: {len(self.nodes)} nodes and the update, into {ctx.var(node.output)}"


def find_stencils(graph: Graph, in_place: dict[int, Value]) -> list[Stencil]:
    """The in-place updates of a static slice with a value of the slice's shape computed by ``STENCIL_OPS`` from
    views of other arrays (and Python numbers), each as a ``Stencil`` (no decision yet)."""
    found: list[Stencil] = []
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    returned = {id(v) for v in graph.outputs}  # (a value the graph returns must be computed into an array)
    for node in graph.nodes:
        if node.op == Op.INDEX_UPDATE and id(node) in in_place:
            s = _stencil(node, len(found), position, returned)
            if s is not None:
                found.append(s)
    return found


def _stencil(update: Node, index: int, position: dict[int, int], returned: set[int]) -> Stencil | None:
    base, value = update.inputs[0], update.inputs[1]
    dtype, shape = value.type.dtype, value.type.shape
    write = _layout(base.type.shape, update.attrs["key"])
    if len(update.inputs) != 2 or dtype not in FLOATS or base.type.dtype != dtype or write is None or \
            write[2] != shape or value.node.op not in STENCIL_OPS or len(value.users) != 1 or not shape or \
            id(value) in returned:
        return None
    tree, leaves, literals = [], [], {}
    pending = [value.node]
    while pending:
        n = pending.pop()
        tree.append(n)
        for v in n.inputs:
            if v.type.weak is not None and v.node.op == Op.CONST and type(v.node.attrs["value"]) in (int, float):
                literals[v] = v.node.attrs["value"]
            elif v.node.op in STENCIL_OPS and len(v.users) == 1 and id(v) not in returned and \
                    v.type.shape == shape and v.type.dtype == dtype:
                pending.append(v.node)
            elif v.type.shape == shape and v.type.dtype == dtype:
                leaves.append(v)
            else:
                return None
    bases, reads, views = [], {}, []
    for leaf in dict.fromkeys(leaves):
        source, offset, strides = leaf, 0, _c_strides(shape)
        if leaf.node.op == Op.INDEX and len(leaf.node.inputs) == 1:
            layout = _layout(leaf.node.inputs[0].type.shape, leaf.node.attrs["key"])
            if layout is not None and layout[2] == shape:
                source, (offset, strides, _) = leaf.node.inputs[0], layout
                if all(u in tree for u in leaf.users) and id(leaf) not in returned:
                    views.append(leaf.node)
        if source is base or not _owns_memory(source):
            return None  # read and written at once, or memory that may be the written base's
        if source not in bases:
            bases.append(source)
        reads[leaf] = (bases.index(source), offset, strides)
    nodes = sorted(tree + views, key=lambda n: position[id(n)])
    return Stencil(index, update, nodes, bases + [base], reads, write[:2], literals)


def _owns_memory(v: Value) -> bool:
    return v.node.op == Op.INPUT or (v.node.op not in SOURCE_OPS and returns_fresh(v.node))


def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _layout(shape: tuple[int, ...], key: tuple) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
    """(offset, strides, shape) in elements of ``base[key]`` for a C-ordered base of ``shape``; None for a key
    that is not integers and static slices."""
    if len(key) > len(shape) or not all(type(k) is int or isinstance(k, Slice) for k in key):
        return None
    c = _c_strides(shape)
    offset, strides, out = 0, [], []
    for d, n in enumerate(shape):
        k = key[d] if d < len(key) else Slice(None, None, None)
        if type(k) is int:
            if not -n <= k < n:
                return None
            offset += (k % n) * c[d]
            continue
        if not all(x is None or type(x) is int for x in k):
            return None
        start, stop, step = slice(*k).indices(n)
        length = len(range(start, stop, step))
        offset += start * c[d] if length else 0
        strides.append(step * c[d])
        out.append(length)
    return offset, tuple(strides), tuple(out)


def stencil_kernel(s: Stencil) -> CKernel:
    """The C function: a loop nest over the slice's shape (the outermost axis split by ``begin, end``)."""
    ctype = C_TYPES[s.update.inputs[1].type.dtype]
    shape = s.shape
    idx = [f"i{d}" for d in range(len(shape))]

    def at(offset: int, strides: tuple[int, ...]) -> str:
        return " + ".join([str(offset)] + [f"{i} * {st}" for i, st in zip(idx, strides)])

    params = ["int64_t begin", "int64_t end"]
    params += [f"const {ctype}* restrict in{k}" for k in range(len(s.bases) - 1)] + [f"{ctype}* restrict out0"]
    names: dict[Value, str] = {}
    body = []
    for j, (leaf, (k, offset, strides)) in enumerate(s.reads.items()):
        names[leaf] = f"a{j}"
        body.append(f"{ctype} a{j} = in{k}[{at(offset, strides)}];")
    for n in s.nodes:  # (in graph order)
        if n.op not in STENCIL_OPS:
            continue
        operands = [c_number(s.literals[v], ctype) if v in s.literals else names[v] for v in n.inputs]
        names[n.output] = f"t{len(names)}"
        body.append(f"{ctype} {names[n.output]} = ({ctype}){C_OPS[n.op](operands, ctype)};")
    body.append(f"out0[{at(*s.write)}] = {names[s.update.inputs[1]]};")
    lines, indent = [], "  "
    for d, n in enumerate(shape):
        lines.append(f"{indent}for (int64_t i{d} = {'begin' if d == 0 else '0'}; i{d} < {'end' if d == 0 else n}; "
                     f"i{d}++) {{")
        indent += "  "
    lines += [indent + line for line in body]
    lines += ["  " * (len(shape) - d) + "}" for d in range(len(shape))]
    signature, text = f"({', '.join(params)})", "\n".join(lines)
    name = "s_" + hashlib.sha256((signature + text).encode()).hexdigest()[:20]
    kernel = CKernel(name, (), f"void {name}{signature} {{\n{text}\n}}\n", len(s.bases) - 1, 1, False)
    check_c_source(kernel.translation_unit())
    return kernel


def stencil_call(fn, s: Stencil, graph: Graph):
    """``stencil(*read bases, written base)``: checks and runs the kernel, returns the written base."""
    expected = [(v.type.shape, v.type.dtype) for v in s.bases]
    rows = s.shape[0]

    def call(*arrays):
        pointers = []
        for a, (shape, dtype) in zip(arrays, expected):
            if type(a) is not np.ndarray or a.shape != shape or a.dtype != dtype:
                raise GraphExecutionError(
                    f"while executing {graph.node_text(s.update)} (stencil kernel {s.index}): an operand is "
                    f"{getattr(a, 'dtype', type(a).__name__)}{list(np.shape(a))}, the kernel was compiled for "
                    f"{dtype}{list(shape)}; compile the graph again for these inputs", s.update)
        reads = [a if a.flags.c_contiguous and a.flags.aligned else np.require(a, requirements="CA")
                 for a in arrays[:-1]]
        out = arrays[-1]
        target = out if out.flags.c_contiguous and out.flags.aligned else np.require(out, requirements="CA")
        pointers = [a.ctypes.data for a in reads] + [target.ctypes.data]
        fn(0, rows, *pointers)
        if target is not out:
            np.copyto(out, target)
        return out

    return call
