"""``np.tile(x, (n, 1))`` and its transpose read by elementwise nodes as ``x`` broadcast (``backends/
broadcast_tiles.py``): eager NumPy's bits, no tile left where every reader could take the vector, and no operand
replaced where the result's shape would change."""

from __future__ import annotations

import numpy as np

from tests.support.backend_support import ALWAYS, assert_bits, needs_compiler
from graph_lab import compile_graph, trace
from graph_lab.backends.broadcast_tiles import broadcast_tiles

RNG = np.random.default_rng(4)


def displacements(x, y):
    n = x.shape[0]
    dx = np.tile(x, (n, 1))
    dx = dx - dx.T
    dy = np.tile(y, (n, 1))
    dy = dy.T - dy
    return dx * dx + dy * dy + 1.0


def three_rows(x, y):
    t = np.tile(x, (3, 1))
    return t + y, t * 2.0, t.T * 1.0


@needs_compiler
def test_the_displacement_matrix_reads_the_vectors_with_eager_s_bits():
    x, y = RNG.standard_normal(50), RNG.standard_normal(50)
    g = trace(displacements, {"x": (50,), "y": (50,)})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    ops = [n.op for n in compiled.graph.nodes]
    assert "tile" not in ops and "transpose" not in ops and ops.count("reshape") == 2
    assert_bits(compiled(x, y), [displacements(x, y)], "displacements")
    assert "tile" in [n.op for n in g.nodes]  # (the graph given to compile_graph is not changed)


@needs_compiler
def test_an_operand_stays_a_tile_where_the_vector_would_change_the_result_s_shape():
    x, y = RNG.standard_normal(40), RNG.standard_normal((3, 40))
    g = trace(three_rows, {"x": (40,), "y": (3, 40)})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    assert_bits(compiled(x, y), list(three_rows(x, y)), "three rows")
    copy = trace(three_rows, {"x": (40,), "y": (3, 40)})
    assert broadcast_tiles(copy) == 1  # t + y reads x; t * 2.0 and t.T * 1.0 would be [40] and [40, 1]: kept
    assert [n.op for n in copy.nodes].count("tile") == 1
