"""``graph_lab.compile`` against eager Python: the corpus of ``compile_corpus.py``, every guard kind, the
recompile limit and ``fullgraph=True``.

Eager and compiled runs always get separate copies of every piece of mutable state (arguments, lists, objects,
globals), and must agree bit for bit: results (type, dtype, shape, values), what was printed, the state after each
call, writes into the caller's arrays, and which returned arrays alias which arguments.
"""

from __future__ import annotations

import copy
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import graph_lab
from graph_lab import GraphBreak, RecompileLimitWarning
from graph_lab.ir.sizes import is_symbolic_graph

SUPPORT = Path(__file__).resolve().parents[2] / "support"


def _load_corpus():
    # Loaded by path, so it works under any pytest import mode and never shadows another module.
    spec = importlib.util.spec_from_file_location("graph_lab_compile_corpus", SUPPORT / "compile_corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
CASES = {case.name: case for case in corpus.CASES}


# --- comparing eager and compiled runs


def assert_same(eager, compiled, where="result"):
    """Same structure, same types, arrays equal bit for bit with the same dtype and shape."""
    assert type(compiled) is type(eager), f"{where}: {type(compiled).__name__} != {type(eager).__name__}"
    if isinstance(eager, np.ndarray):
        assert compiled.dtype == eager.dtype, f"{where}: dtype {compiled.dtype} != {eager.dtype}"
        assert compiled.shape == eager.shape, f"{where}: shape {compiled.shape} != {eager.shape}"
        np.testing.assert_array_equal(compiled, eager, err_msg=where, strict=True)
    elif isinstance(eager, (list, tuple)):
        assert len(compiled) == len(eager), f"{where}: length {len(compiled)} != {len(eager)}"
        for i, (e, c) in enumerate(zip(eager, compiled)):
            assert_same(e, c, f"{where}[{i}]")
    elif isinstance(eager, dict):
        assert list(compiled) == list(eager), f"{where}: keys {list(compiled)} != {list(eager)}"
        for k in eager:
            assert_same(eager[k], compiled[k], f"{where}[{k!r}]")
    elif isinstance(eager, np.generic):
        assert compiled.dtype == eager.dtype and (compiled == eager or (compiled != compiled and eager != eager))
    elif isinstance(eager, np.random.Generator):
        assert compiled.bit_generator.state == eager.bit_generator.state, f"{where}: random state differs"
    elif type(eager).__module__ == corpus.__name__:  # the corpus's own classes: compare their attributes
        assert_same(vars(eager), vars(compiled), f"{where}.__dict__")
    else:
        assert compiled == eager, f"{where}: {compiled!r} != {eager!r}"


def leaves(x) -> list:
    """The arrays in a nest of lists, tuples, dicts and objects, in order."""
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, (list, tuple)):
        return [a for v in x for a in leaves(v)]
    if isinstance(x, dict):
        return [a for v in x.values() for a in leaves(v)]
    return []


def aliasing(result, args) -> list[list[bool]]:
    """Which returned arrays share memory with which argument arrays and with each other (NumPy's views must
    stay views, one array returned twice must stay one array)."""
    results = leaves(result)
    return [[np.shares_memory(r, a) for a in leaves(args) + results] + [r is other for other in results]
            for r in results]


class Run:
    """One program run call by call, eagerly or compiled; records everything observable."""

    def __init__(self, case, compiled: bool):
        self.program = case.make()
        self.fn = graph_lab.compile(self.program.fn) if compiled else self.program.fn

    def call(self, args, capsys) -> dict:
        args = copy.deepcopy(args)
        if self.fn is not self.program.fn:  # (these tests count graph runs and breaks: graphs run on every hit)
            for cf in compiled_functions(self.fn):
                cf.ways.pin_graphs("the test counts the graphs' runs")
        try:
            result = self.fn(*args)
        except Exception as e:  # raised by eager Python: the compiled function raises the same
            result = ("raised", type(e), str(e))
        return {"result": result, "printed": capsys.readouterr().out, "effects": self.program.effects(),
                "args after": args, "aliasing": aliasing(result, args)}


def assert_same_run(eager: dict, compiled: dict, call: int) -> None:
    for what in ("result", "printed", "effects", "args after", "aliasing"):
        assert_same(eager[what], compiled[what], f"call {call}: {what}")


def compiled_functions(cf) -> list:
    """``cf`` and the functions compiled for it: Python functions called at its graph breaks run compiled."""
    return [cf] + [g for nested in cf.nested.values() for g in compiled_functions(nested)]


def events(cf) -> list:
    return [e for g in compiled_functions(cf) for e in g.last_events]


def graphs_and_breaks(cf) -> tuple[int, int]:
    """Segments with at least one op, and segments ending at a break, in the last call (nested ones too)."""
    return (sum(1 for e in events(cf) if e.segment.graph.count() > 0),
            sum(1 for e in events(cf) if e.segment.end == "break"))


def captures(cf) -> int:
    return sum(g.captures for g in compiled_functions(cf))


def body_runs(cf) -> int:
    return sum(g.body_runs for g in compiled_functions(cf))


@pytest.mark.parametrize("name", list(CASES))
def test_corpus_matches_eager(name, capsys):
    case = CASES[name]
    calls = case.calls(np.random.default_rng(0))
    eager, compiled = Run(case, compiled=False), Run(case, compiled=True)
    cf = compiled.fn
    for i, args in enumerate(calls):
        assert_same_run(eager.call(args, capsys), compiled.call(args, capsys), i)
        if i == 0:
            graphs, breaks = graphs_and_breaks(cf)
            if case.graphs is not None:
                assert graphs == case.graphs, f"graphs on the first call: {graphs}, expected {case.graphs}"
            if case.breaks is not None:
                assert breaks == case.breaks, f"breaks on the first call: {breaks}, expected {case.breaks}"
    # A call like the first one (same shapes, dtypes and Python constants; other values) is a cache hit:
    # nothing is captured again, and only the instructions at the breaks run as Python.
    again = case.calls(np.random.default_rng(1))[0]
    captured, ran = captures(cf), body_runs(cf)
    assert_same_run(eager.call(again, capsys), compiled.call(again, capsys), len(calls))
    assert captures(cf) == captured, f"a call like the first captured again: {cf.recompile_log}"
    assert not any(e.captured for e in events(cf))
    assert body_runs(cf) - ran == graphs_and_breaks(cf)[1]
    assert all(g.eager_fallback is None for g in compiled_functions(cf))
    for g in compiled_functions(cf):  # every captured graph is valid IR
        for segments in g.cache.values():
            for segment in segments:
                segment.graph.verify()
                # what capture knew of its graph is what the graph says (see capture_loop.finish_segment)
                assert segment.input_names == segment.graph.input_names
                assert segment.symbolic == is_symbolic_graph(segment.graph)


def test_corpus_size():
    assert len(CASES) >= 30


# --- every guard kind: changing the guarded thing recompiles (and says why); not changing it is a cache hit


def double_n_times(x, n):
    for _ in range(n):
        x = x * 2.0
    return x


N_LAYERS = 2


def global_layers(x):
    for _ in range(N_LAYERS):
        x = np.tanh(x)
    return x


def make_closure_layers(n):
    def closure_layers(x):
        for _ in range(n):
            x = x + 1.0
        return x
    return closure_layers


class LayerConfig:
    def __init__(self, n_layers):
        self.n_layers = n_layers


def attribute_layers(cfg, x):
    for _ in range(cfg.n_layers):
        x = x - 1.0
    return x


def sum_list(xs):
    return sum(xs)


def dict_weights(params, x):
    for name in params:
        x = x @ params[name]
    return x


def branch_on_float(x):
    total = float(x.sum())
    if total > 0:
        return x * 2.0
    return -x


class Recorded:
    """A compiled function and its eager twin, called together; every result is compared bit for bit."""

    def __init__(self, fn, **options):
        self.fn = fn
        self.cf = graph_lab.compile(fn, **options)
        self.cf.ways.pin_graphs("the test counts the graphs' runs")

    def __call__(self, *args):
        expected = self.fn(*copy.deepcopy(args))
        captures, runs = self.cf.captures, self.cf.body_runs
        got = self.cf(*args)
        assert_same(expected, got)
        self.new_captures = self.cf.captures - captures
        self.body_runs = self.cf.body_runs - runs
        return got


def assert_recompiles(rec: Recorded, args, *reason_parts: str):
    recompiles = rec.cf.recompiles
    rec(*args)
    assert rec.cf.recompiles == recompiles + 1, rec.cf.recompile_log
    for part in reason_parts:
        assert part in rec.cf.recompile_log[-1], rec.cf.recompile_log[-1]


def assert_cache_hit(rec: Recorded, args):
    rec(*args)
    assert rec.new_captures == 0, rec.cf.recompile_log
    assert rec.body_runs == sum(1 for e in rec.cf.last_events if e.segment.end == "break")


def test_guard_array_shape():
    rec = Recorded(double_n_times)
    rec(np.ones((4, 3)), 2)
    assert_cache_hit(rec, (np.full((4, 3), 5.0), 2))
    assert_recompiles(rec, (np.ones((5, 3)), 2), "x.shape[0] is 5, the cached graph was built for 4")
    assert "test_compile.py:" in rec.cf.recompile_log[-1]  # the guard's source line
    assert_cache_hit(rec, (np.ones((4, 3)), 2))  # both shapes stay cached
    assert_cache_hit(rec, (np.ones((5, 3)), 2))


def test_guard_array_dtype():
    rec = Recorded(double_n_times)
    rec(np.ones(3), 1)
    assert_recompiles(rec, (np.ones(3, np.float32), 1), "x.dtype is float32, the cached graph was built for float64")
    assert_cache_hit(rec, (np.zeros(3, np.float32), 1))


def test_guard_python_constant_argument():
    rec = Recorded(double_n_times)
    rec(np.ones(3), 2)
    assert rec.cf.cache[0][0].graph.count() == 2
    assert_cache_hit(rec, (np.ones(3) * 3, 2))
    assert_recompiles(rec, (np.ones(3), 3), "n is 3, the cached graph was built for 2")
    assert rec.cf.cache[0][1].graph.count() == 3


def test_python_number_in_arithmetic_is_a_graph_input_not_a_guard():
    rec = Recorded(corpus.scaled)
    rec(np.ones(3), 2.0)
    assert_cache_hit(rec, (np.ones(3), 3.5))
    assert_recompiles(rec, (np.ones(3), 3), "k is an int, the cached graph was built for a float")


def test_guard_global_value():
    fn, namespace = corpus.own_globals(global_layers, N_LAYERS=2)
    rec = Recorded(fn)
    rec(np.ones(3))
    assert_cache_hit(rec, (np.ones(3) * 2,))
    namespace["N_LAYERS"] = 3
    assert_recompiles(rec, (np.ones(3),), "global N_LAYERS is 3, the cached graph was built for 2")
    assert rec.cf.cache[0][-1].graph.count() == 3


def test_guard_closure_cell_value():
    fn = make_closure_layers(2)
    rec = Recorded(fn)
    rec(np.ones(3))
    assert_cache_hit(rec, (np.zeros(3),))
    fn.__closure__[0].cell_contents = 4
    assert_recompiles(rec, (np.ones(3),), "closure n is 4, the cached graph was built for 2")


def test_guard_attribute_value():
    rec = Recorded(attribute_layers)
    rec(LayerConfig(2), np.ones(3))
    assert_cache_hit(rec, (LayerConfig(2), np.zeros(3)))  # another object, same attribute value
    assert_recompiles(rec, (LayerConfig(1), np.ones(3)), "cfg.n_layers is 1, the cached graph was built for 2")


def test_guard_container_length():
    rec = Recorded(sum_list)
    rec([np.ones(2), np.ones(2)])
    assert_cache_hit(rec, [[np.zeros(2), np.full(2, 3.0)]])
    assert_recompiles(rec, ([np.ones(2)] * 3,), "len(xs) is 3, the cached graph was built for 2")


def test_guard_dict_keys():
    w = np.eye(2)
    rec = Recorded(dict_weights)
    rec({"a": w, "b": w * 2}, np.ones((1, 2)))
    assert_cache_hit(rec, ({"a": w * 3, "b": w}, np.ones((1, 2))))
    assert_recompiles(rec, ({"a": w, "c": w}, np.ones((1, 2))),
                      "params has keys ['a', 'c'], the cached graph was built for ['a', 'b']")
    assert_recompiles(rec, ({"b": w, "a": w * 2}, np.ones((1, 2))), "has keys ['b', 'a']")  # order matters too


def test_guard_data_dependent_branch_outcome():
    rec = Recorded(branch_on_float)
    rec(np.ones(3))
    assert_cache_hit(rec, (np.full(3, 7.0),))  # another value, same outcome: the guard is on `total > 0` only
    assert_recompiles(rec, (-np.ones(3),), "`float(x.sum())`", "> 0 is False, the cached graph was built for True")
    assert_cache_hit(rec, (np.ones(3),))
    assert_cache_hit(rec, (-np.full(3, 2.0),))


def test_data_dependent_if_on_a_tensor_is_a_break_not_a_guard():
    rec = Recorded(corpus.data_branch)
    rec(np.ones(3))
    first = rec.cf.last_events
    assert [e.segment.end for e in first] == ["break", "return"]
    assert "data-dependent value" in first[0].segment.break_reason
    assert first[0].segment.break_instruction.startswith("POP_JUMP")
    rec(-np.ones(3))  # the other branch: a new segment at its own offset, not a recompile
    assert rec.new_captures == 1 and rec.cf.recompiles == 0
    assert_cache_hit(rec, (np.full(3, 2.0),))
    assert_cache_hit(rec, (-np.full(3, 2.0),))


def test_same_array_passed_twice_is_guarded():
    def add(a, b):
        return a + b
    rec = Recorded(add)
    x = np.ones(3)
    rec(x, x)
    assert_recompiles(rec, (x, np.zeros(3)), "b is not the same array as a")
    assert_cache_hit(rec, (np.zeros(3), np.ones(3)))


# --- the recompile limit and fullgraph


def test_recompile_limit_warns_once_and_stays_correct():
    rec = Recorded(double_n_times, recompile_limit=2)
    rec(np.ones(3), 1)
    rec(np.ones(3), 2)
    rec(np.ones(3), 3)
    assert rec.cf.recompiles == 2
    with pytest.warns(RecompileLimitWarning, match="recompile_limit=2") as warned:
        rec(np.ones(3), 4)
        for n in (5, 6, 1, 2):
            rec(np.ones(3) * n, n)
    assert len(warned) == 1
    assert "n is 4, the cached graph was built for" in str(warned[0].message)
    assert rec.cf.eager_fallback is not None


def test_fullgraph_turns_a_break_into_an_error_naming_cause_and_line():
    cf = graph_lab.compile(corpus.data_branch, fullgraph=True)
    with pytest.raises(GraphBreak) as info:
        cf(np.ones(3))
    message = str(info.value)
    assert "data-dependent value" in message
    assert "compile_corpus.py:" in message and "POP_JUMP" in message
    cf = graph_lab.compile(corpus.gelu_mlp, fullgraph=True)
    x, p = np.ones((2, 8)), {"W1": np.ones((8, 4)), "W2": np.ones((4, 8))}
    assert_same(corpus.gelu_mlp(x, p), cf(x, p))  # no break: no error


def test_fullgraph_names_a_print():
    cf = graph_lab.compile(corpus.print_middle, fullgraph=True)
    with pytest.raises(GraphBreak, match=r"side effect: call to print\(\).*") as info:
        cf(np.ones(2))
    assert f"compile_corpus.py:{corpus.print_middle.__code__.co_firstlineno + 2}" in str(info.value)


# --- traps: each of these once gave a silently wrong result or a crash. Two calls that differ only in the thing
# the capture must not freeze; both must match eager.

class Box:
    def __init__(self, w):
        self.w = w


def _scale_kw(x, **kw):
    return x * kw["s"]


def _scale_args(x, *a):
    return x * a[0]


def _slice_first(xs):
    return xs[1:][0] * 2.0


MUTABLE_DEFAULT = np.ones(2)


def _with_default(x, w=MUTABLE_DEFAULT):
    return x * w


TRAPS = {
    # a number read from the inputs, then stored in a list the function made
    "number in a new list": (lambda x, k: x * sum([k, 2.0]), [(np.ones(2), 2.0), (np.ones(2), 3.0)]),
    "number read back from a new list": (lambda x, k: x * [k, 2.0][0], [(np.ones(2), 2.0), (np.ones(2), 3.0)]),
    # arrays reached through a list slice, dict.values(), getattr(): they must be graph inputs, not constants
    "slice of a list argument": (_slice_first, [([np.ones(2), np.ones(2)],), ([np.ones(2), np.zeros(2)],)]),
    "dict.values()": (lambda d: sum(v for v in d.values()), [({"a": np.ones(2)},), ({"a": np.zeros(2)},)]),
    "getattr builtin": (lambda x, b: x * getattr(b, "w"), [(np.ones(2), Box(np.ones(2))), (np.ones(2), Box(np.zeros(2)))]),
    # numbers that reach a helper through **kwargs, *args, a closure cell, a NumPy scalar index
    "**kwargs number": (lambda x, s: _scale_kw(x, s=s), [(np.ones(2), 2.0), (np.ones(2), 3.0)]),
    "*args number": (lambda x, s: _scale_args(x, s), [(np.ones(2), 2.0), (np.ones(2), 3.0)]),
    "NumPy integer index": (lambda x, i: x[i], [(np.arange(5.0), np.int64(1)), (np.arange(5.0), np.int64(3))]),
    "dtype argument": (lambda x, dt: x.astype(dt), [(np.ones(2), np.dtype(np.float32)), (np.ones(2), np.dtype(np.int64))]),
    # a mutable default argument changed between calls
    "mutable default": (lambda x: _with_default(x), [(np.ones(2),), (np.full(2, 3.0),)]),
    # a keyword call whose CALL is the break (KW_NAMES ran before it, in the graph)
    "keyword call at a break": (lambda d: sorted(d, key=lambda k: -len(k)), [({"a": 1, "bb": 2},), ({"ccc": 1, "d": 2},)]),
}


@pytest.mark.parametrize("name", list(TRAPS))
def test_trap(name):
    fn, calls = TRAPS[name]
    rec = Recorded(fn)
    for args in calls:
        rec(*args)


def test_trap_mutable_default_changed_in_place():
    rec = Recorded(lambda x: _with_default(x))
    rec(np.ones(2))
    MUTABLE_DEFAULT[:] = 5.0
    try:
        rec(np.ones(2))
    finally:
        MUTABLE_DEFAULT[:] = 1.0


def test_trap_callback_side_effect_in_map_runs_on_every_call():
    log = []

    def doubled(xs):
        return list(map(lambda t: log.append(len(log)) or t * 2.0, xs))
    cf = graph_lab.compile(doubled)
    for _ in range(3):
        assert_same([np.full(2, 2.0)] * 2, cf([np.ones(2), np.ones(2)]))
    assert log == list(range(6))


def test_trap_loop_iterator_survives_a_break(capsys):
    rec = Recorded(corpus.print_in_loop)
    rec([np.ones(2), np.ones(2)])
    rec([np.zeros(2), np.full(2, 3.0)])
    assert capsys.readouterr().out.count("step") == 8  # eager's 4 and compiled's 4


def test_a_break_in_a_long_loop_does_not_recompile_for_every_iteration(capsys):
    rec = Recorded(corpus.print_in_loop)
    rec([np.full(2, float(i)) for i in range(12)])  # 12 iterations, each with a print: far over recompile_limit=8
    # Two recompiles at most: `total` starts as a float and is an array from the second iteration on, and the
    # loop's exit. Not one per iteration: the iterator's position is not guarded, only "one more item left".
    assert rec.cf.eager_fallback is None and rec.cf.recompiles == 2, rec.cf.recompile_log
    assert "total is an ndarray, the cached graph was built for a float" in rec.cf.recompile_log[0]
    assert "items_left(the for loop's iterator) > 0 is False" in "".join(rec.cf.recompile_log)
    assert_cache_hit(rec, ([np.ones(2)] * 5,))


def test_match_on_a_sequence_is_captured():
    def matcher(x, pair):
        match pair:
            case (a, b):
                return x * a + b
        return x
    rec = Recorded(matcher)
    rec(np.ones(2), (2.0, 1.0))
    rec(np.ones(2), [3.0, 1.0])
    rec(np.ones(2), 5.0)
    assert rec.cf.eager_fallback is None


def test_unknown_opcode_runs_eagerly_from_the_start():
    def keys_matcher(x, options):
        match options:
            case {"scale": s}:
                return x * s
        return x
    with pytest.warns(graph_lab.EagerFallbackWarning, match="MATCH_KEYS"):  # never silently eager
        cf = graph_lab.compile(keys_matcher)
    assert "opcode MATCH_KEYS (line" in (cf.eager_fallback or "")  # never a partial run, never a crash
    assert_same(keys_matcher(np.ones(2), {"scale": 2.0}), cf(np.ones(2), {"scale": 2.0}))
    with pytest.raises(GraphBreak, match="MATCH_KEYS .* has no handler"):
        graph_lab.compile(keys_matcher, fullgraph=True)


# --- a greedy decode loop: each step's argmax is the next call's input


def decode(step, first_token: int, n_steps: int) -> list[int]:
    tokens = [first_token]
    for _ in range(n_steps):
        logits = step(np.array([tokens[-1]]))
        tokens.append(int(np.argmax(logits)))
    return tokens


def test_greedy_decode_matches_eager_token_for_token():
    eager_model, compiled_model = corpus.TinyDecoder(seed=3), corpus.TinyDecoder(seed=3)
    cf = graph_lab.compile(lambda ids: compiled_model(ids))
    eager_tokens = decode(lambda ids: eager_model(ids), 2, 7)
    compiled_tokens = decode(cf, 2, 1)
    first_step_captures = captures(cf)
    compiled_tokens += decode(cf, compiled_tokens[-1], 6)[1:]
    assert compiled_tokens == eager_tokens
    assert len(set(eager_tokens)) > 2  # the loop really feeds back different tokens
    assert_same(vars(eager_model.attn), vars(compiled_model.attn))  # the key/value cache, the mask, pos
    # Every step after the first is a cache hit: the position moves, the shapes do not.
    assert captures(cf) == first_step_captures
    assert sum(g.recompiles for g in compiled_functions(cf)) == 0


# --- values that leave the function: iterators, closures; builtins that read the function's own frame


SETTINGS = {"scale": 2.0}


class Unit:
    SCALE = 2.0

    def __init__(self, w):
        self.w = w

    def apply(self, x):
        print("unit", x.shape)  # a break inside a method: the method runs compiled on its own
        return x * type(self).SCALE


class Child(Unit):
    def apply(self, x):
        return super().apply(x) + self.w


def test_returned_generator_expression_is_a_generator():
    def doubled(xs):
        return (t * 2.0 for t in xs)
    cf = graph_lab.compile(doubled)
    for xs in ([np.ones(2), np.zeros(2)], [np.full(2, 3.0), np.ones(2)]):
        got = cf(xs)
        assert type(got) is type(doubled(xs))
        assert_same(list(doubled(xs)), list(got))


def test_returned_closure_sees_this_calls_values():
    def make_adder(x):
        def add(t):
            return t + x
        return add
    cf = graph_lab.compile(make_adder)
    for x in (np.ones(2), np.full(2, 5.0)):
        assert_same(make_adder(x)(1.0), cf(x)(1.0))


def test_globals_locals_and_eval_see_the_function_not_graph_lab(capsys):
    def introspect(x):
        scale = globals()["SETTINGS"]["scale"]
        print(sorted(locals()))
        return x * scale + eval("scale")
    rec = Recorded(introspect)
    rec(np.ones(2))
    rec(np.zeros(2))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == out[1] == "['scale', 'x']"


def test_super_and_class_attributes_in_a_method_compiled_at_a_break(capsys):
    def run(model, x):
        return model.apply(x)
    rec = Recorded(run)
    rec(Child(np.ones(2)), np.ones(2))
    Unit.SCALE = 3.0  # a class attribute read through type(self): a graph input, read again on every call
    try:
        rec(Child(np.ones(2)), np.ones(2))
    finally:
        Unit.SCALE = 2.0
    assert [g.fn.__name__ for g in compiled_functions(rec.cf)] == ["run", "apply", "apply"]
    assert all(g.recompiles == 0 for g in compiled_functions(rec.cf))


def test_is_between_two_arrays_passed_in_is_guarded():
    def pick(a, b):
        return a * 2.0 if a is b else a - b
    rec = Recorded(pick)
    x = np.ones(3)
    rec(x, np.zeros(3))
    assert_recompiles(rec, (x, x), "b is the same array as a, the cached graph was built for two different arrays")
    assert_cache_hit(rec, (np.ones(3), np.ones(3)))
