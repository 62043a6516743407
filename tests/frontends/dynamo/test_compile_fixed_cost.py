"""The shortcuts that cut compile()'s fixed cost per first call agree with what they stand for."""

import inspect

import numpy as np

import graph_lab
from graph_lab.backends import codegen, python_source
from graph_lab.frontends.dynamo import break_step, runtime
from graph_lab.ir.builder import GraphBuilder


def _plain_by_inspect(fn) -> bool:
    return all(p.kind == p.POSITIONAL_OR_KEYWORD for p in inspect.signature(fn).parameters.values())


def test_plain_parameters_from_the_code_object_agree_with_inspect():
    import functools

    def a(x, y=1): pass
    def b(x, /, y): pass
    def c(x, *, y): pass
    def d(*args): pass
    def e(x, **kw): pass
    def f(): pass

    @functools.wraps(d)
    def wrapped(x, y): pass

    def with_signature(x): pass
    with_signature.__signature__ = inspect.Signature([inspect.Parameter("x", inspect.Parameter.KEYWORD_ONLY)])
    for fn in (a, b, c, d, e, f, wrapped, with_signature, lambda x, y: x):
        assert runtime._plain_parameters(fn) == _plain_by_inspect(fn), fn


def test_signature_is_made_when_first_needed_and_binds_as_before():
    def fn(x, y=2.0):
        return x * y

    compiled = graph_lab.compile(fn)
    assert compiled._signature is None
    x = np.arange(4.0)
    np.testing.assert_array_equal(compiled(x), fn(x))  # (not all positional arguments: bound by the signature)
    assert compiled.signature == inspect.signature(fn)
    np.testing.assert_array_equal(compiled(x, y=3.0), fn(x, y=3.0))


def test_per_code_caches_give_what_the_functions_give():
    def fn(x):
        if x.sum() > 0:
            return x
        return -x

    assert break_step.conditional_jumps_of(fn.__code__) == break_step._conditional_jumps(fn.__code__)
    assert break_step.conditional_jumps_of(fn.__code__) is break_step.conditional_jumps_of(fn.__code__)


def test_straight_static_generates_the_same_code():
    b = GraphBuilder("g")
    x = b.input("x", (4, 8), "float32")
    w = b.input("w", (8, 8), "float32")
    g = b.output(b.add(x, b.tanh(b.matmul(x, w))), b.mul(x, 0.5))
    for min_bytes in (0, codegen.MIN_BUFFER_BYTES):
        usual, known = codegen.generate(g, min_bytes), codegen.generate(g, min_bytes, straight_static=True)
        assert usual.plain.text == known.plain.text and usual.reusing.text == known.reusing.text
        assert usual.plain.source == known.plain.source and usual.plan == known.plan


def test_wraps_sets_what_update_wrapper_sets():
    import functools

    def documented(x: np.ndarray, n: int = 2) -> np.ndarray:
        """Doc."""
        return x * n

    def bare(x):
        return x

    def decorated(x):
        return x
    decorated.marker = "kept"
    decorated.__dict__["__doc__"] = "from the dict"  # (the dict is copied after the assignments, as functools does)

    class Holder:
        pass

    for fn in (documented, bare, decorated, lambda x: x):
        mine, theirs = Holder(), Holder()
        runtime._wraps(mine, fn)
        functools.update_wrapper(theirs, fn)
        assert mine.__dict__ == theirs.__dict__, fn
        assert list(mine.__dict__) == list(theirs.__dict__), fn
        assert mine.__annotations__ is theirs.__annotations__
    compiled = graph_lab.compile(documented)
    assert compiled.__wrapped__ is documented and compiled.__doc__ == "Doc." and compiled.__name__ == "documented"


def test_has_regions_agrees_with_asking_every_node():
    from graph_lab.ir.graph import REGION_OPS, Graph
    from graph_lab.ops import Op

    def rich(x, flag):
        return graph_lab.F.cond(flag, lambda a: a + 1.0, lambda a: a * 2.0, x)

    with_region = graph_lab.trace(rich, {"x": (3,), "flag": ((), "bool")})
    b = GraphBuilder("g")
    x = b.input("x", (4,), "float32")
    plain = b.output(b.tanh(x))
    empty = Graph("empty")
    for g in (with_region, plain, empty):
        assert g.has_regions() == any(node.regions for node in g.nodes)
    assert with_region.has_regions() and not plain.has_regions()
    assert REGION_OPS == {op for op in Op if graph_lab.ops.opdef(op).regions}
    # a node whose op is the op's name as a plain string is found as well
    node = next(n for n in with_region.nodes if n.regions)
    node.op = str(node.op.value)
    assert with_region.has_regions()


def test_largest_results_in_one_walk_agree_with_the_two_measures():
    b = GraphBuilder("g")
    x = b.input("x", (4, 8), "float32")
    w = b.input("w", (8, 16), "float64")
    y = b.matmul(b.cast(x, "float64"), w)
    g = b.output(b.add(b.sum(y), 1.0), b.tanh(x))
    empty_ops = GraphBuilder("h")
    h = empty_ops.output(empty_ops.input("x", (4,), "float32"))
    for graph in (g, h):
        assert codegen.largest_results(graph) == (codegen.largest_result(graph, lambda t: t.size),
                                                  codegen.largest_result_bytes(graph))
    assert codegen.largest_results(g) == (64, 512)


def test_source_nodes_are_the_input_and_param_nodes():
    b = GraphBuilder("g")
    x = b.input("x", (4, 8), "float32")
    p = b.param("p", np.ones((8,), np.float32))
    y = b.input("y", (4, 8), "float32")
    g = b.output(b.add(b.mul(x, p), y))
    assert python_source._source_nodes(g) == (g.input_nodes, g.param_nodes)


def test_a_symbolic_segment_knows_it_is_symbolic():
    from graph_lab.backends import compiled
    from graph_lab.ir.sizes import is_symbolic_graph

    def f(x, w):
        return np.tanh(x @ w) * 2.0

    w = np.ones((3, 5))
    for dynamic in (True, False, None):
        cf = graph_lab.compile(f, dynamic=dynamic)
        for n in (4, 6, 7):
            x = np.ones((n, 3))
            np.testing.assert_array_equal(cf(x, w), f(x, w))
        segments = [seg for entries in cf.cache.values() for seg in entries]
        assert any(seg.symbolic for seg in segments) == (dynamic is not False)
        for seg in segments:
            assert seg.symbolic == is_symbolic_graph(seg.graph)
            assert seg.input_names == seg.graph.input_names
            assert compiled._not_fused_yet(seg.graph, seg.symbolic) == compiled._not_fused_yet(seg.graph)


def test_code_facts_are_what_each_function_gives():
    def fn(x):
        for _ in range(2):
            if x.sum() > 0:
                x = x - 1.0
        return x

    first, jumps, reason = runtime._code_facts(fn.__code__)
    assert first == runtime.instructions_of(fn.__code__)[0].offset
    assert jumps == break_step._conditional_jumps(fn.__code__)
    assert reason == runtime._cannot_interpret_of(fn.__code__)
    assert runtime._code_facts(fn.__code__) is runtime._code_facts(fn.__code__)
