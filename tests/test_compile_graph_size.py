"""compile()'s max_graph_nodes: a Python loop over range whose body writes into an array unrolls into one graph;
past the limit the graph breaks with that reason and capture goes on in a new graph, results still eager's."""

import numpy as np

import graph_lab as gl
from graph_lab.frontends.dynamo.recorder import MAX_GRAPH_NODES


def relax(A, T):
    for t in range(T):
        A[1:-1] = 0.5 * (A[:-2] + A[2:])
    return A.sum()


def run_both(cf, T, seed):
    a = np.random.default_rng(seed).standard_normal(40)
    e = a.copy()
    expected, got = relax(e, T), cf(a, T)
    assert got == expected
    np.testing.assert_array_equal(a, e, strict=True)
    return [e.segment for e in cf.last_events]


def test_a_loop_of_writes_is_one_graph_under_the_default_limit():
    cf = gl.compile(relax)
    for seed in range(3):
        segments = run_both(cf, 60, seed)
        assert len(segments) == 1 and segments[0].end != "break"
        assert len(segments[0].graph.nodes) < MAX_GRAPH_NODES
    assert cf.captures == 1


def test_past_the_limit_the_graph_breaks_with_the_reason():
    limit = 120
    cf = gl.compile(relax, max_graph_nodes=limit)
    for seed in range(3):
        segments = run_both(cf, 60, seed)
        assert len(segments) > 2
        assert all(len(s.graph.nodes) <= limit for s in segments)
        assert sum(s.end == "break" for s in segments) == len(segments) - 1
    captures = cf.captures
    run_both(cf, 60, 7)
    assert cf.captures == captures  # the pieces are cached like any graph break's
    report = str(gl.explain(cf)(np.ones(40), 60))
    assert f"graph size limit: the graph has {limit} nodes (compile's max_graph_nodes)" in report
    assert "raise max_graph_nodes" in report


def test_the_limit_reaches_functions_called_at_a_break_and_the_decorator():
    @gl.compile(max_graph_nodes=50)
    def g(A):
        return relax(A, 30)
    a = np.linspace(0.0, 1.0, 40)
    e = a.copy()
    assert g(a) == relax(e, 30)
    np.testing.assert_array_equal(a, e)
    assert g.max_graph_nodes == 50
