"""The shortcuts that cut compile()'s fixed cost per first call agree with what they stand for."""

import inspect

import numpy as np

import graph_lab
from graph_lab.backends import codegen, pycode
from graph_lab.frontends.dynamo import runtime
from graph_lab.ir.builder import GraphBuilder
from graph_lab.passes import simplify


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

    assert runtime.conditional_jumps_of(fn.__code__) == runtime._conditional_jumps(fn.__code__)
    assert runtime.conditional_jumps_of(fn.__code__) is runtime.conditional_jumps_of(fn.__code__)


def test_straight_static_generates_the_same_code():
    b = GraphBuilder("g")
    x = b.input("x", (4, 8), "float32")
    w = b.input("w", (8, 8), "float32")
    g = b.output(b.add(x, b.tanh(b.matmul(x, w))), b.mul(x, 0.5))
    for min_bytes in (0, codegen.MIN_BUFFER_BYTES):
        usual, known = codegen.generate(g, min_bytes), codegen.generate(g, min_bytes, straight_static=True)
        assert usual.plain.text == known.plain.text and usual.reusing.text == known.reusing.text
        assert usual.plain.source == known.plain.source and usual.plan == known.plan


def test_rules_grouped_again_when_the_list_changes():
    b = GraphBuilder("g")
    x = b.input("x", (4,), "float32")
    g = b.output(b.mul(x, 1.0))
    assert simplify.would_change(g)
    assert not simplify.would_change(g, [r for r in simplify.RULES if r.op != "mul"])
    assert simplify.would_change(g)


def test_dce_check_answered_by_simplify_check():
    """Where simplify's check finds a graph unchanged, dce's does too (the pipeline skips the latter)."""
    from graph_lab.passes import dce
    from graph_lab.ir.graph import Graph

    b = GraphBuilder("g")
    x = b.input("x", (4,), "float32")
    y = b.tanh(x)
    b.exp(x)  # dead
    g = b.output(b.add(y, y))
    assert simplify.would_change(g) and dce.would_change(g)
    b2 = GraphBuilder("h")
    x2 = b2.input("x", (4,), "float32")
    h = b2.output(b2.tanh(x2))
    assert not simplify.would_change(h) and not dce.would_change(h)
    for graph in (g, h):
        from graph_lab.passes.manager import run_pipeline
        out, reports = run_pipeline(graph, "exact")
        assert str(out) == str(run_pipeline(graph, ["simplify", "fold", "cse", "dce"])[0])
