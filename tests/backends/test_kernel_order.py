"""Matmuls moved after the elementwise nodes they do not need (``backends/kernel_order.py``): the products of an
n-body step become one kernel, the results stay eager NumPy's bit for bit, and nothing moves past a write."""

from __future__ import annotations

import numpy as np

from tests.support.backend_support import ALWAYS, assert_bits, needs_compiler
from graph_lab import GraphBuilder, compile_graph, trace
from graph_lab.backends.kernel_order import later_readers
from graph_lab.ir.verify import verify

RNG = np.random.default_rng(3)


def forces(pos, mass):
    """An n-body step's shape of code, with a weight whose kernel is exact (no transcendental function)."""
    x, y = pos[:, 0:1], pos[:, 1:2]
    dx, dy = x.T - x, y.T - y
    w = 1.0 / (dx * dx + dy * dy + 0.01)
    return np.hstack(((dx * w) @ mass, (dy * w) @ mass))


@needs_compiler
def test_the_products_become_one_kernel_with_eager_s_bits():
    pos, mass = RNG.standard_normal((60, 2)), RNG.random((60, 1))
    g = trace(forces, {"pos": (60, 2), "mass": (60, 1)})
    recorded = [n.op for n in g.nodes]
    assert recorded.index("matmul") < len(recorded) - 1 - recorded[::-1].index("mul")  # interleaved as written
    compiled = compile_graph(g, "fused", options=ALWAYS)
    big = [k for k in compiled.kernels if k.elements == 3600]
    assert len(big) == 1 and len(big[0].outputs(compiled.graph)) == 2  # dx * w and dy * w, not w, dx or dy
    verify(compiled.graph)
    assert_bits(compiled(pos, mass), [forces(pos, mass)], "forces")
    ops = [n.op for n in compiled.graph.nodes]
    assert ops.index("matmul") > len(ops) - 1 - ops[::-1].index("mul")  # both products before either matmul
    assert [n.op for n in g.nodes] == recorded  # (the graph given to compile_graph keeps its order)


def test_nothing_moves_past_an_index_update_or_its_first_reader():
    b = GraphBuilder("order")
    a = b.input("a", (8, 8))
    m = b.input("m", (8, 1))
    s = b.mul(a, 2.0)
    p = b.matmul(s, m)  # may move past t, but not past the update
    t = b.mul(a, 3.0)
    u = b.index_update(a, (slice(0, 1),), b.const(0.0))
    v = b.add(t, 1.0)
    g = b.output(p, u, v)
    order = later_readers(g)
    assert order is not None
    ops = [n.op for n in order if n.op not in ("input", "const")]
    assert ops.index("matmul") > ops.index("mul", 1)  # past t = a * 3.0 ...
    assert ops.index("matmul") < ops.index("index_update")  # ... never past the write
    g.nodes = order
    verify(g)


def test_a_graph_without_a_node_to_move_is_left_alone():
    g = trace(lambda x, m: np.tanh(x) @ m + 1.0, {"x": (16, 16), "m": (16, 4)})
    assert later_readers(g) is None
