"""Symbolic sizes: the expression algebra, the facts and their proofs, the IR text, and every shape-guard path
(an unprovable fact, a contradiction, a branch on a size) checked on its result and its message."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from graph_lab import (Dim, F, GraphInputError, GraphParseError, Spec, SymInt, TraceError, check_guards,
                       failing_guards, load, make_graph, parse, run, save, trace)
from graph_lab.ir.parse_values import ValueParser
from graph_lab.ir.relations import relation
from graph_lab.ir.shape_env import ShapeEnv, using
from graph_lab.ir.symbolic import evaluate, float_op, floordiv, mod, symbol

B, T, d = symbol("B"), symbol("T"), symbol("d")


def line_of(tag: str) -> str:
    """``test_symbolic.py:N`` of the line in this file that ends with ``# @tag``."""
    with open(__file__, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# @{tag}"):
                return f"test_symbolic.py:{n}"
    raise AssertionError(tag)


# --- the algebra

@pytest.mark.parametrize("expr, text", [
    (B * 8 // 4, "2*B"), (B * 8 // B, "8"), ((2 * B + 1) // 2, "B"), ((4 * B + 6) % 4, "2"), (B - B, "0"),
    (floordiv(T * d, 2 * T), "d//2"), (2 * (d // 2), "2*(d//2)"), (-(d // 2), "-(d//2)"), (B * B * T, "B**2*T"),
    ((B + 3) // 2, "(B+1)//2+1"), (mod(B + 5, 4), "(B+1) % 4"), (T - 1, "T-1"), (3 - B, "-B+3"),
])
def test_simplification_gives_one_canonical_form(expr, text):
    assert str(expr) == text


def test_simplification_is_exact_for_every_value():
    exprs = [B, 2 * B + 1, 3 * B - T, B * T, d // 2, mod(B + 1, 3), 4 * B + 6, 6 * T]
    for a, b, op in itertools.product(exprs, [1, 2, 3, 4, 6, -2, B, 2 * T], ("//", "%")):
        e = floordiv(a, b) if op == "//" else mod(a, b)
        for values in itertools.product(range(1, 7), repeat=3):
            sizes = dict(zip("BTd", values))
            av, bv = evaluate(a, sizes), evaluate(b, sizes)
            assert evaluate(e, sizes) == (av // bv if op == "//" else av % bv), (a, op, b, sizes)


def test_equal_expressions_are_equal_objects_and_a_size_is_not_a_bool():
    assert (B + 1) * 2 == 2 * B + 2 and hash((B + 1) * 2) == hash(2 * B + 2)
    with pytest.raises(TypeError, match="truth value of the symbolic size B"):
        bool(B)


def _random_int(rng, depth=0):
    if rng.random() < 0.3 or depth > 4:
        return rng.choice([B, T, d, symbol("seq")])
    if rng.random() < 0.2:
        return rng.randint(-3, 9)
    a, b, op = _random_int(rng, depth + 1), _random_int(rng, depth + 1), rng.choice("+-*/%")
    if op in "/%" and (b == 0 or not isinstance(b, int) and rng.random() < 0.5):
        return a
    return {"+": a + b, "-": a - b, "*": a * b, "/": floordiv(a, b) if op == "/" else None,
            "%": mod(a, b) if op == "%" else None}[op]


def _random_float(rng, depth=0):
    if rng.random() < 0.3 or depth > 3:
        return _random_int(rng) if rng.random() < 0.7 else rng.choice([0.5, -0.5, 2.5, 1e-05])
    op = rng.choice(["+", "-", "*", "/", "**", "neg", "sqrt"])
    if op == "neg":
        return float_op("neg", float_op("*", _random_float(rng, depth + 1), 1.5))
    if op == "sqrt":
        return float_op("sqrt", _random_float(rng, depth + 1))
    a, b = _random_float(rng, depth + 1), _random_float(rng, depth + 1)
    if op != "/" and not isinstance(a, float) and not isinstance(b, float) and not hasattr(a, "op") \
            and not hasattr(b, "op"):
        return a + b  # two integers: Python arithmetic on sizes stays an integer expression
    return float_op(op, a, b)


def test_printed_expressions_parse_back_and_mean_what_python_means():
    rng = random.Random(3)
    sizes = {"B": 3, "T": 5, "d": 8, "seq": 2}
    for i in range(2000):
        e = _random_float(rng) if i % 2 else _random_int(rng)
        text = str(e)
        back = ValueParser(text).size_expr()
        assert str(back) == text and back == e, text
        try:
            want = eval(text, {"sqrt": math.sqrt}, dict(sizes))  # the text is Python, meaning the same
            got = evaluate(e, sizes)
        except (ArithmeticError, ValueError, TypeError):
            continue
        assert got == want or (got != got and want != want), text


@pytest.mark.parametrize("op, lhs, rhs, text", [
    ("==", T, B, "B == T"), ("<=", B, 512, "B <= 512"), (">", B, T, "B >= T+1"), ("<", B, 2, "B <= 1"),
    ("==", mod(d, 2), 0, "d % 2 == 0"), ("!=", 2 * B, T, "2*B != T"),
])
def test_relations_print_as_written_and_parse_back(op, lhs, rhs, text):
    rel = relation(op, lhs, rhs)
    assert str(rel) == text
    assert ValueParser(text).relation_() == rel


def test_proofs_use_ranges_substitutions_and_divisibility():
    env = ShapeEnv()
    with using(env):
        env.declare(Dim("T"))
        env.declare(Dim("d", max=64))
        assert env.prove(relation(">", T, 1)) is True
        assert env.prove(relation("==", T, 1)) is False
        assert env.prove(relation("<=", d, 64)) is True
        assert env.prove(relation("<=", d // 2, d)) is True  # the relaxed bound: d//2 - d = -d/2 - r/2
        assert env.prove(relation("==", T * d, 2 * T * (d // 2))) is None
        env.require(relation("==", T * d, 2 * T * (d // 2)), "reshape")
        assert [str(g.fact) for g in env.guards] == ["T >= 2", "d >= 2", "d <= 64", "d % 2 == 0"]
        assert env.prove(relation("==", T * d, 2 * T * (d // 2))) is True
        env.require(relation("==", T, d), "matmul")
        assert env.prove(relation("==", T * T, T * d)) is True and env.prove(relation("<=", T, 64)) is True


# --- make_graph and the printed IR

def mlp(x, p):
    return F.relu(x @ p["W"] + p["b"])


P = {"W": np.ones((128, 64), np.float32), "b": np.zeros(64, np.float32)}


def test_make_graph_prints_symbolic_types_and_runs_on_any_batch():
    g = make_graph(mlp, Spec(("B", 128), "float32"), P)  # @mlp
    text = str(g)
    assert 'f32[B,128] = input "x"' in text and "f32[B,64] = relu" in text
    assert f"guard #0: shape B >= 2 at {line_of('mlp')}" in text
    for n in (2, 3, 17, 64):
        x = np.random.default_rng(n).standard_normal((n, 128)).astype(np.float32)
        assert np.array_equal(run(g, {"x": x})[0], mlp(x, P))


def test_size_nodes_and_symbolic_attributes_round_trip_through_text_and_files(tmp_path):
    def f(x):
        T, d = x.shape
        return x.reshape(T, 2, d // 2).sum(axis=1) / T * d ** -0.5, x[:T - 1], T * d

    g = trace(f, {"x": ("T", "d")})
    text = str(g)
    for part in ("shape=(T, 2, d//2)", "int = size T", "float = size d**-0.5", "key=[:T-1]", "f64[T-1,d]",
                 "int = size T*d", "guard #2: shape d % 2 == 0"):
        assert part in text, part
    assert str(parse(text)) == text
    save(g, tmp_path / "g.npz")
    back = load(tmp_path / "g.npz")
    x = np.random.default_rng(0).standard_normal((5, 6))
    for got, want in zip(run(back, {"x": x}), f(x)):
        assert np.array_equal(got, want)


def test_a_parsed_graph_must_carry_the_facts_its_types_need():
    text = ('graph f {\n  %0: f64[T,d] = input "x"\n  %1: f64[T,2,d//2] = reshape %0 shape=(T, 2, d//2)\n'
            '  return %1\n}\n')
    with pytest.raises(GraphParseError, match=r"needs d % 2 == 0, which the graph's shape guards do not imply"):
        parse(text)
    g = parse(text + "guard #0: shape d % 2 == 0\n")
    assert run(g, {"x": np.ones((3, 4))})[0].shape == (3, 2, 2)


# --- shape-guard paths: an unprovable fact

def heads(x):
    T, d = x.shape
    return x.reshape(T, 2, d // 2)  # @heads


def test_an_unprovable_fact_becomes_a_guard_with_the_users_line():
    g = trace(heads, {"x": ("T", "d")})
    guard = g.guards[-1]
    assert str(guard.fact) == "d % 2 == 0" and str(guard.loc) == line_of("heads")
    x = np.ones((4, 6))
    assert check_guards(g, {"x": x}) and run(g, {"x": x})[0].shape == (4, 2, 3)
    odd = np.ones((4, 7))
    assert not check_guards(g, {"x": odd})
    (failure,) = failing_guards(g, {"x": odd})
    assert failure.what == "shape guard #2 d % 2 == 0" and failure.reason == "fails for d = 7"
    assert str(failure.loc) == line_of("heads")
    for runner in (lambda: run(g, {"x": odd}), lambda: g.to_python()(x=odd)):
        with pytest.raises(GraphInputError) as e:
            runner()
        message = str(e.value)
        assert "shape guard #2 d % 2 == 0" in message and line_of("heads") in message and "d = 7" in message


def test_an_example_that_breaks_a_needed_fact_is_refused_at_capture():
    with pytest.raises(TraceError) as e:
        trace(heads, {"x": ("T", "d")}, example={"x": np.ones((4, 7))})
    assert "needs d % 2 == 0, which the example's sizes break (d = 7)" in str(e.value)
    assert line_of("heads") in str(e.value)


def test_symbol_seen_twice_binds_once():
    g = trace(lambda x, y: x + y, {"x": ("B", 3), "y": ("B", 3)})
    assert run(g, {"x": np.ones((4, 3)), "y": np.ones((4, 3))})[0].shape == (4, 3)
    (failure,) = failing_guards(g, {"x": np.ones((4, 3)), "y": np.ones((5, 3))})
    assert (failure.what, failure.reason) == ("y.shape[0]", "is 5, but B is 4 (read from x.shape[0])")


def test_sizes_that_must_be_equal_are_guarded_equal():
    g = make_graph(lambda a, b: a @ b, Spec(("B", "K")), Spec(("N", 4)))
    assert "guard #3: shape K == N" in str(g)
    (failure,) = failing_guards(g, {"a": np.ones((2, 3)), "b": np.ones((5, 4))})
    assert failure.what == "shape guard #3 K == N" and failure.reason == "fails for K = 3, N = 5"


# --- a contradiction is an error at capture

def test_a_contradiction_is_an_error_at_capture():
    with pytest.raises(TraceError) as e:
        make_graph(lambda x: x.reshape(x.shape[0], 3), Spec(("B", 2)))  # @contradiction
    message = str(e.value)
    assert "cannot reshape (B, 2) (2*B elements) into (B, 3) (3*B elements)" in message
    assert "needs B == 0, which cannot hold (B >= 2)" in message and line_of("contradiction") in message
    with pytest.raises(TraceError, match=r"needs B == 3, which cannot hold \(B >= 4\)"):
        make_graph(lambda x: x @ x, Spec((Dim("B", min=4), 3)))
    with pytest.raises(TraceError, match=r"operands could not be broadcast together \(f64\[B,3\], f64\[B,4\]\)"):
        make_graph(lambda x, y: x + y, Spec(("B", 3)), Spec(("B", 4)))


# --- a branch on a size

def branchy(x):
    if x.shape[0] > 4:  # @branch
        return x * 2.0
    return x - 1.0


def test_a_branch_on_a_size_needs_bounds_or_an_example():
    with pytest.raises(TraceError) as e:
        make_graph(branchy, Spec(("B", 3)))
    message = str(e.value)
    assert "comparing sizes (B > 4)" in message and "depends on whether B >= 5" in message
    assert line_of("branch") in message and "Dim(name, min=..., max=...)" in message
    g = make_graph(branchy, Spec((Dim("B", min=5), 3)))  # bounds decide it: no guard beyond the range
    assert [str(x.fact) for x in g.guards] == ["B >= 5"]


def test_a_branch_on_a_size_is_guarded_with_the_examples_outcome():
    g = trace(branchy, {"x": ("B", 3)}, example={"x": np.ones((6, 3))})
    assert str(g.guards[-1].fact) == "B >= 5" and str(g.guards[-1].loc) == line_of("branch")
    x = np.arange(21.0).reshape(7, 3)
    assert np.array_equal(run(g, {"x": x})[0], branchy(x))
    small = np.ones((3, 3))
    (failure,) = failing_guards(g, {"x": small})
    assert failure.what == "shape guard #1 B >= 5" and failure.reason == "fails for B = 3"
    other = trace(branchy, {"x": ("B", 3)}, example={"x": small})
    assert str(other.guards[-1].fact) == "B <= 4" and np.array_equal(run(other, {"x": small})[0], branchy(small))


def test_a_branch_on_a_size_can_be_specialized_instead():
    g = trace(branchy, {"x": ("B", 3)}, example={"x": np.ones((6, 3))}, size_branch="specialize")
    assert str(g.guards[-1].fact) == "B == 6"
    assert check_guards(g, {"x": np.ones((6, 3))}) and not check_guards(g, {"x": np.ones((7, 3))})


def test_a_size_needed_as_a_python_number_is_specialized_or_refused():
    def scaled(x):
        return x * (1.0 / math.sqrt(x.shape[1]))  # @sqrt

    with pytest.raises(TraceError) as e:
        trace(scaled, {"x": (4, "d")})
    assert "used as a Python int" in str(e.value) and line_of("sqrt") in str(e.value)
    g = trace(scaled, {"x": (4, "d")}, example={"x": np.ones((4, 9))})
    assert str(g.guards[-1].fact) == "d == 9"
    g = trace(lambda x: x * (1.0 / np.sqrt(x.shape[1])), {"x": (4, "d")})  # NumPy's sqrt stays symbolic
    for n in (4, 9, 16):
        x = np.ones((4, n))
        assert np.array_equal(run(g, {"x": x})[0], x * (1.0 / np.sqrt(n)))


# --- sizes 0 and 1

def test_sizes_0_and_1_are_specialized_unless_declared():
    g = trace(lambda x: x.sum(axis=0) / x.shape[0], {"x": ("B", 3)})
    (failure,) = failing_guards(g, {"x": np.ones((1, 3))})
    assert failure.what == "shape guard #0 B >= 2"
    with pytest.raises(TraceError, match="Sizes 0 and 1 are specialized"):
        trace(lambda x: x * 2.0, {"x": ("B", 3)}, example={"x": np.ones((1, 3))})
    g = trace(lambda x: x.sum(axis=0) / x.shape[0], {"x": (Dim("B", min=1), 3)})
    assert np.array_equal(run(g, {"x": np.full((1, 3), 5.0)})[0], np.full(3, 5.0))


def test_a_symbol_that_may_be_1_does_not_broadcast():
    g = make_graph(lambda x, y: x + y, Spec((Dim("B", min=1), 3)), Spec((Dim("T", min=1), 3)))
    assert "shape B == T" in str(g)


# --- what user code sees

def test_shape_gives_symints_whose_arithmetic_stays_symbolic():
    seen = {}

    def f(x):
        T, n = x.shape
        seen.update(T=T, n=n, twice=T * 2, half=T // 2, rate=T / n)
        return x

    trace(f, {"x": ("T", 4)})
    assert isinstance(seen["T"], SymInt) and seen["n"] == 4 and type(seen["n"]) is int
    assert repr(seen["twice"]) == "2*T" and repr(seen["half"]) == "T//2" and repr(seen["rate"]) == "T/4"


@pytest.mark.parametrize("bad", ["", "2B", "int", "sqrt", "_x", "class"])
def test_dim_names_must_be_plain_words(bad):
    with pytest.raises(ValueError, match="a size symbol needs a plain name"):
        Dim(bad)


@pytest.mark.parametrize("size, found", [
    ("-" * 500 + "T", "at most 64 levels of nesting"), ("T" + "**T" * 500, "at most 64 levels of nesting"),
    ("T" + "*T" * 3000, "more than 1000 terms"), ("(a+b)*(c+d)*(e+f)*(g+h)*(i+j)*(k+l)*(m+n)*(o+p)*(q+r)*(s+t)",
                                                  "more than 1000 terms"),
    ("10**99**99", "an integer power over 64"), ("T//0", "divided by zero"), ("B" + "//T//B" * 40, "nested"),
])
def test_hostile_size_expressions_are_parse_errors_quickly(size, found):
    text = 'graph f {\n  %0: f64[' + size + '] = input "x"\n  return %0\n}\n'
    with pytest.raises(GraphParseError, match=found):
        parse(text)
