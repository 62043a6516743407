"""compile() on each CPython it supports (3.11, 3.12 and 3.13): one test per family of opcodes that 3.12 or 3.13
added or changed, each run in capture and at a graph break and compared with eager Python; where the bytecode of
a version legitimately differs (the name of the instruction at a break, a comprehension inlined since 3.12), the
test says so for that version. Then the loud fallback: a function compile() cannot interpret at all warns once,
runs eagerly, and explain() says why.

``dis`` of each version is the spec: each test first checks that the opcodes it is about are in the function's
bytecode on the running Python, so that it exercises their handlers there.
"""

from __future__ import annotations

import dis
import inspect
import sys
import types
import warnings

import numpy as np
import pytest

import graph_lab
from graph_lab import EagerFallbackWarning, GraphBreak

PY = sys.version_info[:2]


def opnames(fn) -> set[str]:
    return {ins.opname for ins in dis.get_instructions(fn)}


def assert_same(actual, expected):
    assert type(actual) is type(expected), (actual, expected)
    if isinstance(expected, np.ndarray):
        np.testing.assert_array_equal(actual, expected)
        assert actual.dtype == expected.dtype
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    else:
        assert actual == expected


def line_of(fn, marker: str) -> str:
    """``file:line`` of the line of ``fn`` that holds ``marker`` (where a break must be reported)."""
    lines, start = inspect.getsourcelines(fn)
    return f"test_compile_versions.py:{start + next(i for i, line in enumerate(lines) if marker in line)}"


def segments(cf) -> list:
    return [event.segment for event in cf.last_events]


def graph_count(cf) -> int:
    return sum(1 for seg in segments(cf) if seg.graph.count())


def breaks(cf) -> list[tuple[str, str, str]]:
    """(opname, reason, line) of each graph break of the last call."""
    return [(seg.break_instruction.split()[0], seg.break_reason, str(seg.break_loc)) for seg in segments(cf)
            if seg.end == "break"]


def captured_steps(cf) -> list[tuple[str, str]]:
    """(opname, what capture did) of every instruction captured in the last call."""
    return [(opname, what) for seg in segments(cf) for _, opname, _, what in seg.steps]


def run_both(fn, make_args):
    """Call ``fn`` eagerly and compiled, each on its own fresh arguments (``make_args()``: the function may change
    them); the results and the arguments afterwards must be the same. Returns the compiled function."""
    eager_args, compiled_args = make_args(), make_args()
    expected = fn(*eager_args)
    cf = graph_lab.compile(fn)
    assert_same(cf(*compiled_args), expected)
    for a, e in zip(compiled_args, eager_args):
        assert_same(a.items, e.items) if isinstance(e, Box) else assert_same(a, e)
    return cf


X = np.arange(8.0).reshape(2, 4)


class Box:
    """A user object with Python ``__getitem__``, ``__setitem__`` and ``__pos__``: native code on it may run Python
    graph_lab does not see, so using it breaks the graph."""

    def __init__(self, items):
        self.items = list(items)

    def __getitem__(self, key):
        return self.items[key]

    def __setitem__(self, key, value):
        self.items[key] = value

    def __pos__(self):
        return Box(self.items[::-1])

    def __eq__(self, other):
        return type(other) is Box and other.items == self.items


# --- 3.12: BINARY_SLICE and STORE_SLICE (3.11: BUILD_SLICE, then BINARY_SUBSCR or STORE_SUBSCR)

def _slices(x, ws, n, box):
    a = x[1:3] * 2.0
    b = ws[:n]
    c = box[1:3]  # @read
    box[0:1] = [5]  # @write
    return a, b, c


def test_slices_in_capture_and_at_a_break():
    if PY >= (3, 12):
        assert {"BINARY_SLICE", "STORE_SLICE"} <= opnames(_slices)
    read, write = ("BINARY_SLICE", "STORE_SLICE") if PY >= (3, 12) else ("BINARY_SUBSCR", "STORE_SUBSCR")
    cf = run_both(_slices, lambda: (np.arange(5.0), [1, 2, 3], 2, Box([1, 2, 3])))
    assert graph_count(cf) == 1
    assert breaks(cf) == [
        (read, "a Box object (box) is used by native code, which may run Python methods of it that graph_lab "
               "cannot see", line_of(_slices, "# @read")),
        (write, "side effect: item assignment on a Box the function did not create", line_of(_slices, "# @write"))]
    assert (read, "recorded index") in captured_steps(cf)  # x[1:3], into the graph
    # the list slice's bound is guarded: another n is another capture, which says why
    assert_same(cf(np.arange(5.0), [1, 2, 3], 1, Box([1, 2, 3])), _slices(np.arange(5.0), [1, 2, 3], 1, Box([1, 2, 3])))
    assert cf.recompiles == 1 and "_slices at offset 0: n is 1, the cached graph was built for 2 (guard from " \
        f"{line_of(_slices, 'ws[:n]')})" in cf.recompile_log[0]


# --- 3.12: comprehensions run inline (PEP 709): LOAD_FAST_AND_CLEAR, STORE_FAST of NULL, END_FOR

def _comprehension(x, ws):
    w = 2.0
    ys = [w * x for w in ws]  # the comprehension's own w: the outer one is put back after it
    return ys, w * x


def _comprehension_breaking(x, ws):
    w = 0.5
    sums = [float(np.sum(w * x)) for w in ws]  # @float
    return sums, w * x


def test_a_comprehension_is_captured_on_every_version():
    if PY >= (3, 12):
        assert {"LOAD_FAST_AND_CLEAR", "END_FOR"} <= opnames(_comprehension)
    cf = run_both(_comprehension, lambda: (X, [np.ones((2, 4)), np.full((2, 4), 3.0)]))
    assert graph_count(cf) == 1 and breaks(cf) == []
    [seg] = segments(cf)
    assert [str(n.op) for n in seg.graph.nodes if n.op not in ("input", "const")] == ["mul", "mul", "mul"]
    # the same guards whether the comprehension is a frame of its own (3.11) or inline (3.12+)
    start, loop = line_of(_comprehension, "def _comprehension"), line_of(_comprehension, "ys = [")
    assert [g.describe() for g in seg.guards.guards] == [
        f"x is an ndarray of shape (2, 4) and dtype float64  (from {start})", f"type(ws) is list  (from {loop})",
        f"len(ws) > 1 == True  (from {loop})", f"ws[0] is an ndarray of shape (2, 4) and dtype float64  (from {loop})",
        f"ws[1] is an ndarray of shape (2, 4) and dtype float64  (from {loop})", f"len(ws) > 2 == False  (from {loop})"]


def test_a_break_inside_a_comprehension():
    cf = run_both(_comprehension_breaking, lambda: (X, [1.0, 2.0]))
    float_break = ("CALL", "data-dependent value: the float of a tensor computed by sum is needed by Python",
                   line_of(_comprehension_breaking, "# @float"))
    if PY == (3, 11):
        # the comprehension is a function of its own, called by the function: its call is the one break, and
        # the whole comprehension runs as Python
        assert (graph_count(cf), breaks(cf)) == (1, [float_break])
    else:
        # inline, the loop is the function's own: each item breaks at float(), and then at LIST_APPEND, as the
        # list crossed a break (made by Python as far as the next graph knows); the outer w is put back after
        append = ("LIST_APPEND", "side effect: append on a list the function did not create",
                  line_of(_comprehension_breaking, "# @float"))
        assert (graph_count(cf), breaks(cf)) == (3, [float_break, append] * 2)
    captures = cf.captures
    assert_same(cf(X + 1, [3.0, 4.0]), _comprehension_breaking(X + 1, [3.0, 4.0]))
    assert cf.captures == captures  # every segment a cache hit


def _comprehension_with_unbound_variable(x, ws):
    sums = [float(np.sum(v * x)) for v in ws]  # v is unbound before and after: NULL crosses each break
    return sums


def _comprehension_shadowing_an_argument(x, w, ws):
    sums = [float(np.sum(w * x)) for w in ws]  # the argument w, saved on the stack across each break
    return sums, w * x


def _comprehension_of_closures(x, ws):
    scales = [lambda: w * x for w in ws]  # w is a cell (each lambda's own); 3.12 makes it in the loop
    return [scale() for scale in scales]


def test_a_comprehension_variable_crosses_a_break():
    cf = run_both(_comprehension_with_unbound_variable, lambda: (X, [1.0, 2.0, 3.0]))
    assert len(breaks(cf)) == (1 if PY == (3, 11) else 6)
    cf = run_both(_comprehension_shadowing_an_argument, lambda: (X, 3.0, [1.0, 2.0]))
    assert len(breaks(cf)) == (1 if PY == (3, 11) else 4)
    assert_same(cf(X, 5.0, [1.0, 2.0]), _comprehension_shadowing_an_argument(X, 5.0, [1.0, 2.0]))
    cf = run_both(_comprehension_of_closures, lambda: (X, [1.0, 2.0]))
    assert graph_count(cf) == 1 and breaks(cf) == []


# --- 3.12: LOAD_SUPER_ATTR (3.11: a call of super(), then LOAD_METHOD or LOAD_ATTR)

class _Base:
    scale = 3.0

    def forward(self, x):
        return x * 2.0


class _Child(_Base):
    def forward(self, x):
        return super().forward(x) + super().scale  # @super


def test_super_attribute_is_captured():
    """``super().forward`` and ``super().scale`` are looked up at capture (3.12's LOAD_SUPER_ATTR, 3.11's call of
    super()): the parent's method is inlined, so the whole function is one graph on every version."""
    if PY >= (3, 12):
        assert "LOAD_SUPER_ATTR" in opnames(_Child.forward)
    child = _Child()
    cf = graph_lab.compile(child.forward)
    assert_same(cf(X), child.forward(X))
    assert_same(cf(X), X * 2.0 + 3.0)
    assert breaks(cf.__func__) == []
    assert graph_count(cf.__func__) == 1


# --- 3.12: CALL_INTRINSIC_1 (3.11's UNARY_POSITIVE and LIST_TO_TUPLE), and a generator expression's
# STOPITERATION_ERROR

def _intrinsics(x, rest, box):
    y = +x
    z = np.add(x, *rest)
    return y, z, +box  # @positive


def test_intrinsic_functions_in_capture_and_at_a_break():
    if PY >= (3, 12):
        assert "CALL_INTRINSIC_1" in opnames(_intrinsics)
        assert {i.argrepr for i in dis.get_instructions(_intrinsics) if i.opname == "CALL_INTRINSIC_1"} == {
            "INTRINSIC_UNARY_POSITIVE", "INTRINSIC_LIST_TO_TUPLE"}
    where = "CALL_INTRINSIC_1" if PY >= (3, 12) else "UNARY_POSITIVE"
    cf = run_both(_intrinsics, lambda: (X, [X], Box([1, 2])))
    assert graph_count(cf) == 1
    assert [(op, line) for op, _, line in breaks(cf)] == [(where, line_of(_intrinsics, "# @positive"))]
    assert ("CALL_FUNCTION_EX", "recorded add") in captured_steps(cf)


def _generator_expression(x, ws):
    return tuple(np.tanh(w * x) for w in ws)


def test_a_generator_expression_is_inlined():
    inner = next(c for c in _generator_expression.__code__.co_consts if isinstance(c, types.CodeType))
    if PY >= (3, 12):  # its exception handler turns a StopIteration into a RuntimeError (PEP 479)
        assert "INTRINSIC_STOPITERATION_ERROR" in {i.argrepr for i in dis.get_instructions(inner)}
    cf = run_both(_generator_expression, lambda: (X, [1.0, 2.0]))
    assert graph_count(cf) == 1 and breaks(cf) == []


def test_stop_iteration_error_intrinsic():
    from graph_lab.frontends.dynamo.frame import Var
    from graph_lab.frontends.dynamo.handlers_312 import INTRINSICS_1
    convert = INTRINSICS_1["INTRINSIC_STOPITERATION_ERROR"]
    stop = StopIteration()
    error = convert(None, Var(stop)).value
    assert type(error) is RuntimeError and str(error) == "generator raised StopIteration" and error.__cause__ is stop
    other = Var(KeyError("k"))
    assert convert(None, other) is other


@pytest.mark.skipif(PY < (3, 12), reason="the type statement and generic functions are 3.12 syntax")
def test_type_parameters_run_at_a_break_and_a_type_alias_runs_eagerly():
    namespace = {"np": np}
    exec("def generic(x):\n    def ident[T](a: T) -> T:\n        return a\n    return ident(x) * 2.0\n"
         "def aliased(x):\n    type Vector = list[float]\n    return x * 2.0, Vector.__value__\n", namespace)
    generic, aliased = namespace["generic"], namespace["aliased"]
    cf = graph_lab.compile(generic)  # the type parameters' own function runs as Python, at a break
    assert_same(cf(X), X * 2.0)
    assert [op for op, _, _ in breaks(cf)] == ["CALL"]
    with pytest.warns(EagerFallbackWarning, match="intrinsic function INTRINSIC_TYPEALIAS has no handler"):
        cf = graph_lab.compile(aliased)
    assert_same(cf(X), (X * 2.0, list[float]))


# --- 3.12: RETURN_CONST

def _returns_constants(x, flag):
    if flag:
        return None
    y = x * 2.0
    print("between")  # @print
    return 1


def test_return_const_before_and_after_a_break(capsys):
    if PY >= (3, 12):
        assert "RETURN_CONST" in opnames(_returns_constants)
    cf = run_both(_returns_constants, lambda: (X, False))
    assert graph_count(cf) == 1 and [op for op, _, _ in breaks(cf)] == ["CALL"]
    assert segments(cf)[-1].end == "return"
    assert cf(X, True) is None and breaks(cf) == []
    assert capsys.readouterr().out == "between\nbetween\n"


# --- 3.12: the method bit of LOAD_ATTR and the NULL bit of LOAD_GLOBAL; 3.13 puts the NULL above the callable

def _method_across_a_break(x, n, ws):
    return x.reshape(int(n.sum()), -1) * len(ws)  # @reshape


def test_a_method_and_its_null_cross_a_break():
    [load] = [i for i in dis.get_instructions(_method_across_a_break) if i.argval == "reshape"]
    if PY >= (3, 12):  # the method bit of LOAD_ATTR, which took the place of 3.11's LOAD_METHOD
        assert load.opname == "LOAD_ATTR" and load.arg & 1
    else:
        assert load.opname == "LOAD_METHOD"
    cf = run_both(_method_across_a_break, lambda: (X, np.array([1.0, 1.0]), [0, 1, 2]))
    line = line_of(_method_across_a_break, "# @reshape")
    # int() of a tensor breaks with the bound method and its NULL on the stack; the method, read back from the
    # stack after the break, is a method of an object the capture did not make: its call runs as Python
    assert breaks(cf) == [
        ("CALL", "data-dependent value: the int of a tensor computed by sum is needed by Python", line),
        ("CALL", "side effect: call of ndarray.reshape on an object the function did not create", line)]
    assert graph_count(cf) == 2  # the sum, and the product after the reshape


# --- 3.13: TO_BOOL, COMPARE_OP's bool bit and POP_JUMP_IF_* (3.11: POP_JUMP_FORWARD/BACKWARD_IF_*)

def _truth(x, flag, items):
    if not flag and items:
        x = x + 1.0
    if x.sum() > 0:  # @branch
        return x
    return -x


def test_truth_is_asked_by_the_jump_on_every_version():
    if PY >= (3, 13):
        assert "TO_BOOL" in opnames(_truth)
        assert any(i.opname == "COMPARE_OP" and i.argrepr == "bool(>)" for i in dis.get_instructions(_truth))
    cf = run_both(_truth, lambda: (X, False, [1]))
    [(opname, reason, line)] = breaks(cf)
    assert opname.startswith("POP_JUMP_")  # (its name and sense are the bytecode's own)
    assert reason == "data-dependent value: the bool of a tensor computed by gt is needed by Python"
    assert line == line_of(_truth, "# @branch")
    assert graph_count(cf) == 1  # (after the break, ``return x`` computes nothing)
    assert_same(cf(X, True, [1]), _truth(X, True, [1]))
    assert "_truth at offset 0: flag is True, the cached graph was built for False (guard from " \
        f"{line_of(_truth, 'if not flag')})" in cf.recompile_log[0]
    assert_same(cf(-X - 2.0, False, []), _truth(-X - 2.0, False, []))
    assert "the cached graph was built for" in cf.recompile_log[1]


# --- 3.13: CALL_KW (3.11 and 3.12: KW_NAMES, then CALL)

def _keywords(x):
    print(x.shape, sep=",")  # @print
    return np.sum(x, axis=0)


def test_keyword_calls_in_capture_and_at_a_break(capsys):
    if PY >= (3, 13):
        assert "CALL_KW" in opnames(_keywords) and "KW_NAMES" not in opnames(_keywords)
    cf = run_both(_keywords, lambda: (X,))
    where = "CALL_KW" if PY >= (3, 13) else "CALL"
    assert [(op, line) for op, _, line in breaks(cf)] == [(where, line_of(_keywords, "# @print"))]
    assert (where, "recorded sum") in captured_steps(cf)
    assert capsys.readouterr().out == "(2, 4)\n(2, 4)\n"


# --- 3.13: MAKE_FUNCTION of the code alone, then SET_FUNCTION_ATTRIBUTE for defaults, closure...

def _function_made_before_a_break(x, n):
    scale = lambda q, r=1.0, *, s=1.0: q * r * s + n  # noqa: E731
    print("between")
    return scale(x), scale(x, 2.0, s=3.0)


def test_a_function_made_in_capture_is_rebuilt_after_a_break(capsys):
    if PY >= (3, 13):
        assert "SET_FUNCTION_ATTRIBUTE" in opnames(_function_made_before_a_break)
    cf = run_both(_function_made_before_a_break, lambda: (X, 2.0))
    assert graph_count(cf) == 1 and [op for op, _, _ in breaks(cf)] == ["CALL"]
    assert_same(cf(X, 5.0), _function_made_before_a_break(X, 5.0))


# --- 3.13: CONVERT_VALUE, FORMAT_SIMPLE, FORMAT_WITH_SPEC (3.11 and 3.12: FORMAT_VALUE)

def _formats(x, n):
    text = f"{n!r:>4}|{n}|{n:03d}"
    return text, f"{x.sum()}"  # @tensor


def test_f_strings_in_capture_and_at_a_break():
    if PY >= (3, 13):
        assert {"CONVERT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC"} <= opnames(_formats)
    cf = run_both(_formats, lambda: (X, 3))
    where = "FORMAT_SIMPLE" if PY >= (3, 13) else "FORMAT_VALUE"
    assert breaks(cf) == [(where, "data-dependent value: the text of a tensor is needed by Python",
                           line_of(_formats, "# @tensor"))]
    assert_same(cf(X, 42), _formats(X, 42))


def _repr_of_tensor(x):
    return f"{x!r}"


def test_a_conversion_of_a_tensor_breaks():
    cf = run_both(_repr_of_tensor, lambda: (X,))
    assert [op for op, _, _ in breaks(cf)] == ["CONVERT_VALUE" if PY >= (3, 13) else "FORMAT_VALUE"]


# --- 3.13: LOAD_FAST_LOAD_FAST, STORE_FAST_STORE_FAST, STORE_FAST_LOAD_FAST

def _swap(x, y):
    x, y = y, x
    print("between")
    return x - y, [v * x for v in (1.0, 2.0)]


def test_fused_loads_and_stores_in_capture_and_across_a_break(capsys):
    if PY >= (3, 13):
        assert {"LOAD_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST"} <= opnames(_swap)
    cf = run_both(_swap, lambda: (X, X * 3.0))
    assert graph_count(cf) == 1 and [op for op, _, _ in breaks(cf)] == ["CALL"]


# --- 3.13: CALL_FUNCTION_EX with the NULL above the callable

def _star_calls(x, args, kwargs):
    print(*args)  # @print
    return np.add(*args, x), np.sum(*args, **kwargs)


def test_star_calls_in_capture_and_at_a_break(capsys):
    cf = run_both(_star_calls, lambda: (X, [X], {"axis": 0}))
    assert [(op, line) for op, _, line in breaks(cf)] == [("CALL_FUNCTION_EX", line_of(_star_calls, "# @print"))]
    assert ("CALL_FUNCTION_EX", "recorded sum") in captured_steps(cf)


# --- 3.12: LOAD_FAST_CHECK, for a local that may be unbound

def _maybe_unbound(x, n):
    for i in range(n):
        last = x * i
    return last


def test_a_local_that_may_be_unbound():
    if PY >= (3, 12):
        assert "LOAD_FAST_CHECK" in opnames(_maybe_unbound)
    cf = run_both(_maybe_unbound, lambda: (X, 3))
    assert graph_count(cf) == 1 and breaks(cf) == []
    with pytest.raises(UnboundLocalError, match="'last'"):
        _maybe_unbound(X, 0)
    with pytest.raises(UnboundLocalError, match="'last'"):
        cf(X, 0)


# --- 3.13: a closure's cell passed on with LOAD_FAST (3.11 and 3.12: LOAD_CLOSURE)

def _make_scaler(scale):
    def scaled(x):
        return (lambda: x * scale)()
    return scaled


def test_a_free_variable_passed_on_to_an_inner_function():
    scaled = _make_scaler(2.5)
    loads = {i.opname for i in dis.get_instructions(scaled) if i.argval == "scale"}
    assert loads == ({"LOAD_FAST"} if PY >= (3, 13) else {"LOAD_CLOSURE"})
    cf = run_both(scaled, lambda: (X,))
    assert graph_count(cf) == 1 and breaks(cf) == []


# --- the exception table: an exception raised inside a comprehension, caught by the function

def _divides(x, ds):
    d = "outer"
    try:
        return [x * (1.0 / d) for d in ds], d
    except ZeroDivisionError:
        return None, d


def test_an_exception_inside_a_comprehension_reaches_the_function_handler():
    cf = run_both(_divides, lambda: (X, [1.0, 0.0]))
    assert cf(X, [1.0, 0.0]) == (None, "outer")
    if PY == (3, 11):  # the comprehension's own function raises: its call is the one break
        assert [op for op, _, _ in breaks(cf)] == ["CALL"]
    else:  # inline: the division raises, then the comprehension's handler puts d back and raises again
        assert [op for op, _, _ in breaks(cf)] == ["BINARY_OP", "RERAISE"]
    assert_same(cf(X, [1.0, 2.0]), _divides(X, [1.0, 2.0]))


def test_end_send_drops_the_receiver():
    from graph_lab.frontends.dynamo.frame import Var
    from graph_lab.frontends.dynamo.handlers_312 import _end_send
    receiver, value = Var("receiver"), Var(1)
    frame = types.SimpleNamespace(stack=[Var(0), receiver, value])
    frame.pop, frame.push = frame.stack.pop, frame.stack.append
    _end_send(frame, None)  # (reached only by generators and coroutines, which compile() runs eagerly)
    assert [v.value for v in frame.stack] == [0, 1]


# --- the loud fallback

def _generator(x):
    yield x * 2.0


def _fallback_warnings(record) -> list:
    return [w for w in record if issubclass(w.category, EagerFallbackWarning)]


def test_a_generator_warns_once_runs_eagerly_and_explain_says_why():
    assert issubclass(EagerFallbackWarning, UserWarning) and "EagerFallbackWarning" in graph_lab.__all__
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        cf = graph_lab.compile(_generator); line = inspect.currentframe().f_lineno  # noqa: E702
        again = graph_lab.compile(_generator)  # the same function: no second warning
    [warning] = _fallback_warnings(record)
    message = str(warning.message)
    assert f"_generator ({__file__}:{_generator.__code__.co_firstlineno})" in message
    assert f"Python {PY[0]}.{PY[1]}" in message and "_generator is a generator or coroutine function" in message
    assert (warning.filename, warning.lineno) == (__file__, line)  # the user's line, not graph_lab's
    assert_same(list(cf(X)), [X * 2.0])
    assert_same(list(again(X)), [X * 2.0])
    assert cf.captures == 0 and cf.eager_fallback == "_generator is a generator or coroutine function"
    report = graph_lab.explain(_generator)(X)
    assert str(report).splitlines()[0] == ("explain(_generator): runs eagerly, not compiled: _generator is a "
                                           "generator or coroutine function")
    with pytest.raises(GraphBreak, match="generator"):
        graph_lab.compile(_generator, fullgraph=True)


def test_an_unknown_python_version_warns_and_runs_eagerly(monkeypatch):
    from graph_lab.frontends.dynamo import opcodes
    namespace = {"np": np}
    exec("def future(x):\n    return np.tanh(x) * 2.0\n", namespace)  # (its own code object: nothing cached)
    monkeypatch.setattr(opcodes, "PYTHON", (3, 14))
    with pytest.warns(EagerFallbackWarning) as record:
        cf = graph_lab.compile(namespace["future"])
    [warning] = _fallback_warnings(record)
    assert "runs eagerly on Python 3.14" in str(warning.message)
    assert "Python 3.14 is not a version graph_lab's bytecode interpreter knows (3.11 to 3.13)" in str(warning.message)
    assert warning.filename == __file__
    assert_same(cf(X), np.tanh(X) * 2.0)
    assert cf.captures == 0
    with pytest.raises(GraphBreak, match="3.14 is not a version"):
        graph_lab.compile(namespace["future"], fullgraph=True)


def test_an_opcode_without_a_handler_warns_with_its_name_and_line():
    def keys_matcher(x, options):
        match options:  # @match
            case {"scale": s}:
                return x * s
        return x
    with pytest.warns(EagerFallbackWarning, match=r"opcode MATCH_KEYS \(line \d+\) has no handler") as record:
        cf = graph_lab.compile(keys_matcher)
    [warning] = _fallback_warnings(record)
    assert "keys_matcher" in str(warning.message) and warning.filename == __file__
    assert_same(cf(X, {"scale": 2.0}), X * 2.0)
    assert str(graph_lab.explain(keys_matcher)(X, {"scale": 2.0})).startswith(
        "explain(test_an_opcode_without_a_handler_warns_with_its_name_and_line.<locals>.keys_matcher): runs "
        "eagerly, not compiled: opcode MATCH_KEYS")


def test_every_function_compile_can_interpret_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", EagerFallbackWarning)
        for fn in (_slices, _comprehension, _truth, _keywords, _formats, _swap, _star_calls, _divides):
            graph_lab.compile(fn)


def _write_then_sum(x, v):
    x[0] += v
    return x.sum()


def test_a_node_made_by_the_last_instruction_of_a_line_names_that_line():
    """The store ending ``x[0] += v`` is the last instruction of its line: its node (the index_update) must name
    that line, not the next one's (the frame's ip is already past the store while its handler runs)."""
    cf = graph_lab.compile(_write_then_sum)
    cf(np.ones(3), 2.0)
    (graph,) = graph_lab.explain(cf)(np.ones(3), 2.0).graphs
    first = _write_then_sum.__code__.co_firstlineno
    lines = {node.op: node.loc.lineno for node in graph.nodes if node.loc is not None}
    assert lines["index_update"] == first + 1 and lines["sum"] == first + 2
