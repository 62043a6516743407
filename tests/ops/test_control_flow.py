"""Control-flow ops with regions (cond, while_loop, fori_loop, scan): building, verifying, printing and parsing
nested regions, running them with every backend, F.* eagerly and traced, and the control-flow-to-data-flow pass."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import graph_lab
from graph_lab import (F, GraphBuilder, GraphExecutionError, GraphParseError, Interpreter, LazyRunner, Op,
                       TraceError, VerifyError, parse, run, script, trace)
from graph_lab.passes.cond_to_select import cond_to_select
from tests.ops.test_ops import assert_same


def branch_graphs():
    then = GraphBuilder("then")
    t = then.input("x", (3,))
    then_g = then.output(then.tanh(t))
    orelse = GraphBuilder("else")
    e = orelse.input("x", (3,))
    else_g = orelse.output(orelse.neg(e))
    return then_g, else_g


def built_cond():
    then_g, else_g = branch_graphs()
    b = GraphBuilder("built")
    x = b.input("x", (3,))
    (y,) = b.cond(b.gt(b.sum(x), 0.0), then_g, else_g, x)
    return b.output(y)


# --- building and verifying


def test_a_cond_built_by_hand_runs_either_branch():
    g = built_cond()
    for x in (np.ones(3), -np.ones(3)):
        assert_same(run(g, {"x": x})[0], np.tanh(x) if x.sum() > 0 else -x, "built cond")


def test_verify_rejects_branches_of_different_types():
    g = built_cond()
    cond = next(n for n in g.nodes if n.op == Op.COND)
    bad = GraphBuilder("else")
    e = bad.input("x", (3,))
    cond.attrs = {**cond.attrs, "else": bad.output(bad.sum(e))}
    with pytest.raises(VerifyError) as info:
        g.verify()
    message = str(info.value)
    assert message.startswith("node 4 (%4 = cond(%3, %0)")
    assert "the branches return different types: then returns (f64[3]), else returns (f64[])" in message
    assert "both branches must return the same number of values" in message


def test_verify_rejects_a_loop_body_that_changes_the_carry():
    g = trace(lambda x: F.while_loop(lambda v: v.sum() < 10, lambda v: v * 2.0, x), {"x": (3,)})
    loop = next(n for n in g.nodes if n.op == Op.WHILE_LOOP)
    body = GraphBuilder("body")
    v = body.input("v", (3,))
    loop.attrs = {**loop.attrs, "body": body.output(body.sum(v))}
    with pytest.raises(VerifyError, match=r"carry 0 enters region body as f64\[3\] and comes back as f64\[\]"):
        g.verify()


def test_verify_rules_for_regions():
    g = built_cond()
    cond = next(n for n in g.nodes if n.op == Op.COND)
    then = cond.attrs["then"]
    outside = g.nodes[0].output
    then.nodes[1].inputs = (outside,)  # the tanh now reads the graph's own input: not isolated
    with pytest.raises(VerifyError, match=r"region then: node 1 .*defined outside this region; a region is "
                                          r"isolated"):
        g.verify()
    then.nodes[1].inputs = (then.nodes[0].output,)
    g.verify()
    cond.attrs = {**cond.attrs, "else": cond.attrs["then"]}
    with pytest.raises(VerifyError, match="is also a region of another node"):
        g.verify()
    cond.attrs = {k: v for k, v in cond.attrs.items() if k != "else"}
    with pytest.raises(VerifyError, match=r"holds its region else as a Graph in attrs\['else'\], found NoneType"):
        g.verify()


def test_verify_rejects_params_in_regions():
    b = GraphBuilder("then")
    x = b.input("x", (3,))
    then_g = b.output(b.mul(x, b.param("w", np.ones(3))))
    _, else_g = branch_graphs()
    outer = GraphBuilder("g")
    y = outer.input("x", (3,))
    with pytest.raises(VerifyError, match="region then has a param node"):
        outer.output(outer.cond(outer.gt(outer.sum(y), 0.0), then_g, else_g, y)[0])


# --- text: nested regions print and parse back exactly


def nested(x, w):
    def body(c):
        h, n = c
        h = F.cond(h.sum() > 0, lambda a: np.tanh(a @ w) * 0.1, lambda a: a * 0.5, h)
        return h, n + 1
    h, n = F.while_loop(lambda c: np.abs(c[0]).sum() > 1.0, body, (x, 0))
    h = F.fori_loop(0, 2, lambda i, a: a * 0.5 + i, h)
    total, ys = F.scan(lambda c, row: (c + row, c.sum()), h[0] * 0.0, h)
    return h, n, total, ys


def test_nested_regions_print_and_parse_back_exactly():
    g = trace(nested, {"x": (3, 3), "w": (3, 3)})
    text = str(g)
    assert "    graph body {" in text and "        graph then {" in text  # a cond in a while body, indented
    back = parse(text)
    assert str(back) == text
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 3)) * 3, rng.standard_normal((3, 3))
    want = nested(x, w)
    for got in (run(back, {"x": x, "w": w}), run(g, {"x": x, "w": w}), g.to_python()(x=x, w=w)):
        for a, b in zip(got, want):
            assert_same(np.asarray(a), np.asarray(b), "nested")


def test_value_numbers_continue_through_regions():
    text = str(trace(nested, {"x": (3, 3), "w": (3, 3)}))
    numbers = [int(line.split(":")[0].strip()[1:]) for line in text.splitlines() if line.strip().startswith("%")
               and "=" in line and ":" in line.split("=")[0]]
    assert numbers == sorted(numbers) and len(numbers) == len(set(numbers))


def test_parse_errors_in_regions():
    text = str(built_cond())
    wrong_name = text.replace("graph else {", "graph otherwise {")
    with pytest.raises(GraphParseError, match="expected the region name else"):
        parse(wrong_name)
    isolated = text.replace("%6: f64[3] = tanh %5", "%6: f64[3] = tanh %0")
    with pytest.raises(GraphParseError, match="expected a value of region then .a region is isolated"):
        parse(isolated)
    missing = "\n".join(line for line in text.splitlines() if "graph else" not in line)
    with pytest.raises(GraphParseError):
        parse(missing)


def test_save_and_load_keep_regions(tmp_path):
    g = trace(nested, {"x": (3, 3), "w": (3, 3)})
    graph_lab.save(g, tmp_path / "nested.npz")
    assert str(graph_lab.load(tmp_path / "nested.npz")) == str(g)


# --- running: backends, errors, hooks, passes


def test_a_failure_inside_a_region_names_the_region_and_the_node():
    def f(x, idx):
        return F.fori_loop(0, 3, lambda i, a: a + x[idx], x[0] * 0.0)

    g = trace(f, {"x": (3,), "idx": ((), "int64")})
    with pytest.raises(GraphExecutionError, match=r"while executing %[\d, %]+ = fori_loop.*in region body: while "
                                                  r"executing %\d+ = index"):
        run(g, {"x": np.ones(3), "idx": np.array(7)})


def test_interpreter_hooks_see_the_nodes_inside_regions_each_time_they_run():
    g = trace(lambda x: F.fori_loop(0, 4, lambda i, a: a * 2.0, x), {"x": (2,)})
    seen = []
    interp = Interpreter(g)
    interp.register_hook(lambda node, value: seen.append(str(node.op)))
    interp.run({"x": np.ones(2)})
    assert seen.count("mul") == 4 and seen[-1] == "fori_loop"


def test_dead_code_extract_simplify_and_the_viewer(tmp_path):
    def f(x):
        unused = F.cond(x.sum() > 0, lambda a: a * 2.0, lambda a: a, x)  # noqa: F841
        return F.cond(x.max() > 1, lambda a: a + 1.0, lambda a: a * 1.0, x)

    g = trace(f, {"x": (3,)})
    assert [n.op for n in g.nodes].count(Op.COND) == 1  # the unused cond was dropped whole
    part = g.extract(g.outputs)
    assert str(part) == str(g) and part.nodes[-1].attrs["then"] is g.nodes[-1].attrs["then"]
    report = graph_lab.simplify(g)
    assert any(line.startswith("not simplified: the regions of %") for line in report)
    path = tmp_path / "cf.html"
    graph_lab.view(g, path)
    assert "cond {1 | 1}" in path.read_text() and 'label="%4 cond {1 | 1}"' in g.to_dot()


# --- F.* eager and traced


def test_F_eagerly_follows_jax_lax_semantics():
    x = np.arange(4.0)
    assert_same(F.cond(True, lambda a, b: a + b, lambda a, b: a - b, x, 1.0), x + 1.0, "cond")
    assert F.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2), (0, 1)) == (5, 32)
    assert F.fori_loop(2, 2, lambda i, v: v + i, 10) == 10  # an empty range: zero iterations
    assert F.fori_loop(0, 4, lambda i, v: v + i, 0) == 6
    carry, ys = F.scan(lambda c, row: (c + row, {"s": row.sum()}), np.zeros(2), np.ones((3, 2)))
    assert_same(carry, np.full(2, 3.0), "scan carry") and assert_same(ys["s"], np.full(3, 2.0), "scan ys")
    carry, ys = F.scan(lambda c, row: (c, row * 2.0), 0.0, np.ones((0, 2)))
    assert ys.shape == (0, 2) and ys.dtype == np.float64
    carry, ys = F.scan(lambda c, _: (c + 1, c), 0, None, length=3)
    assert carry == 3 and ys.tolist() == [0, 1, 2]


def test_numbers_become_numpy_scalars_at_region_boundaries():
    n = F.while_loop(lambda c: c < 3, lambda c: c + 1, 0)
    assert type(n) is np.int64  # eagerly as in a graph: a carry is an array value
    g = trace(lambda x: F.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 2.0, c[1] + 1), (x, 0)), {"x": (2,)})
    assert "%1: i64[] = const 0" in str(g)


def test_traced_regions_lift_tensors_from_every_enclosing_level():
    def f(x, w):
        return F.fori_loop(0, 2, lambda i, a: F.cond(a.sum() > 0, lambda b: b @ w, lambda b: b - w[0], a), x)

    g = trace(f, {"x": (3,), "w": (3, 3)})
    loop = next(n for n in g.nodes if n.op == Op.FORI_LOOP)
    assert loop.attrs["body"].input_names == ["i", "a", "w"]  # w lifted into the loop, then into the cond
    rng = np.random.default_rng(1)
    for sign in (1.0, -1.0):
        x, w = sign * np.abs(rng.standard_normal(3)), rng.standard_normal((3, 3))
        assert_same(run(g, {"x": x, "w": w})[0], f(x, w), "lifted")


def test_F_cond_refusals():
    with pytest.raises(TraceError, match="the two branches return different structures"):
        trace(lambda x: F.cond(x.sum() > 0, lambda a: (a, a), lambda a: a, x), {"x": (2,)})
    with pytest.raises(TraceError, match="the branches return different types"):
        trace(lambda x: F.cond(x.sum() > 0, lambda a: a, lambda a: a.sum(), x), {"x": (2,)})

    def writes(a):
        a[0] = 1.0
        return a
    with pytest.raises(TraceError, match="in-place write into the input 'a' of region then of cond"):
        trace(lambda x: F.cond(x.sum() > 0, writes, lambda a: a, x), {"x": (2,)})
    with pytest.raises(TraceError, match="needed as a Python bool inside region then of cond"):
        trace(lambda x: F.cond(x.sum() > 0, lambda a: a if a.max() > 1 else -a, lambda a: a, x), {"x": (2,)})


def test_lazy_runner_caches_graphs_with_regions():
    lr = LazyRunner()
    for k in range(3):
        x = lr.tensor(np.arange(3.0) - k)
        y = F.cond(x.sum() > 0, lambda a: a * 2.0, lambda a: -a, x)
        assert_same(lr.materialize(y), F.cond((np.arange(3.0) - k).sum() > 0, lambda a: a * 2.0, lambda a: -a,
                                              np.arange(3.0) - k), "lazy")
    assert lr.cache_hits >= 1  # the same regions print the same: a later call finds the graph (how many hit
    # also depends on which earlier tensors are still alive, which decides the outputs of each graph)


# --- control flow to data flow


def guarded_log(x):
    if x.min() > 0:
        y = np.log(x) + 1.0 / x
    else:
        y = x * 2.0
    return y


def test_cond_to_select_keeps_results_where_the_untaken_branch_would_give_inf_or_nan():
    g = script(guarded_log, {"x": (3,)})
    report = cond_to_select(g)
    assert len(report) == 1 and "-> both branches" in report[0]
    assert Op.COND not in {n.op for n in g.nodes} and Op.WHERE in {n.op for n in g.nodes}
    with np.errstate(all="raise"):  # no floating-point error anywhere: the domain ops were guarded
        for x in (np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.0, 2.0]), np.array([0.0, -0.0, np.inf])):
            with np.errstate(all="ignore"):
                want = guarded_log(x)
            assert_same(run(g, {"x": x})[0], want, f"select on {x}")
    assert str(parse(str(g))) == str(g)


def test_without_guards_the_untaken_branch_warns_but_where_still_discards_its_nan():
    g = script(guarded_log, {"x": (3,)})
    cond_to_select(g, guard=False)
    x = np.array([-1.0, 0.0, 2.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = run(g, {"x": x})[0]
    assert any("invalid value" in str(w.message) or "divide" in str(w.message) for w in caught)
    assert_same(got, guarded_log(x), "unguarded select")
    mask = np.float64(x.min() > 0)
    with np.errstate(all="ignore"):
        arithmetic = mask * (np.log(x) + 1.0 / x) + (1 - mask) * (x * 2.0)  # the note's mask formula
    assert np.isnan(arithmetic).any() and not np.isnan(got).any()


def test_integer_division_by_zero_in_the_untaken_branch_is_guarded():
    def f(a, b):
        if (b != 0).all():
            return a // b + a % b
        return a

    g = script(f, {"a": ((3,), "int64"), "b": ((3,), "int64")})
    cond_to_select(g)
    with np.errstate(all="raise"):
        for b in (np.array([1, 2, 3]), np.array([0, 2, 3])):
            a = np.array([7, 8, 9])
            assert_same(run(g, {"a": a, "b": b})[0], f(a, b), "int division")


def test_branches_that_can_raise_or_loop_are_kept():
    def indexes(x, idx):
        if idx.min() >= 0:
            return x[idx]
        return x[:2]

    def loops(x):
        if x.sum() > 0:
            while x.sum() > 1:
                x = x * 0.5
        return x

    g = script(indexes, {"x": (3,), "idx": ((2,), "int64")})
    (line,) = cond_to_select(g)
    assert line.startswith("kept %") and "index arrays" in line and Op.COND in {n.op for n in g.nodes}
    x, out_of_bounds = np.arange(3.0), np.array([-7, 1])  # x[idx] would raise: the kept cond never runs it
    assert_same(run(g, {"x": x, "idx": out_of_bounds})[0], indexes(x, out_of_bounds), "kept cond")
    g = script(loops, {"x": (3,)})
    (line,) = cond_to_select(g)
    assert "holds a while_loop" in line


def test_conds_nested_in_branches_and_loop_bodies_are_converted_in_copies():
    from tests.support.script_corpus import branch_inside_loop, nested_ifs

    g = script(nested_ifs, {"x": (3,), "y": (3,)})
    report = cond_to_select(g)
    assert any("region then:" in line for line in report)
    assert not [n for n in g.nodes if n.regions]
    for x, y in ((np.ones(3), np.ones(3)), (np.ones(3), -np.ones(3)), (-np.ones(3), np.ones(3))):
        assert_same(run(g, {"x": x, "y": y})[0], nested_ifs(x, y), "nested")

    g = script(branch_inside_loop, {"x": (3,)})
    before = g.extract(g.outputs)
    body = next(n for n in g.nodes if n.op == Op.WHILE_LOOP).attrs["body"]
    report = cond_to_select(g)
    assert report and "region body:" in report[0]
    assert Op.COND in {n.op for n in body.nodes}  # the shared original region is untouched
    for x in (np.array([0.5, 0.5, 0.5]), np.array([3.0, -8.0, 1.0])):
        for graph in (g, before):
            for a, b in zip(run(graph, {"x": x}), branch_inside_loop(x)):
                assert_same(a, np.asarray(b), "loop body select")


def test_guard_mode_computes_values_through_control_flow_nodes():
    def f(x):
        y = F.cond(x.sum() > 0, lambda a: a * 2.0, lambda a: -a, x)
        if y.sum() > 3:  # the guard's value needs the cond's output while tracing
            return y * 10.0
        return y

    x = np.ones(3)
    g = trace(f, {"x": (3,)}, mode="guard", example={"x": x})
    assert len(g.guards) == 1 and graph_lab.check_guards(g, {"x": x}) and not graph_lab.check_guards(g, {"x": -x})
    assert_same(run(g, {"x": x})[0], f(x), "guarded")
