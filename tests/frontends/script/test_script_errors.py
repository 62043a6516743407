"""Every way script() refuses a construct: a ScriptError whose message shows the source line with a caret under
the construct, names it, and says what to write instead. Each test checks the line number, the underlined text
and the hint."""

from __future__ import annotations

import inspect
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import graph_lab.frontends.script.statements as statements
from graph_lab import F, ScriptError, script

REPO = Path(__file__).resolve().parents[3]


def expect_error(fn, shapes, line: str, underlined: str, hint: str, message: str = "", **kwargs) -> ScriptError:
    """script(fn) raises a ScriptError at the line of ``fn`` containing ``line``, with a caret under exactly
    ``underlined``, and ``hint`` in its hint (and ``message`` in its message)."""
    with pytest.raises(ScriptError) as info:
        script(fn, shapes, **kwargs)
    err = info.value
    source, first = inspect.getsourcelines(fn)
    numbers = [first + i for i, text in enumerate(source) if line in text]
    assert numbers, f"{line!r} is not in the source of {fn.__name__}"
    assert err.lineno == numbers[0], str(err)
    text = str(err).splitlines()
    code_at = next(i for i, t in enumerate(text) if t.strip() == source[numbers[0] - first].strip())
    code, caret = text[code_at], text[code_at + 1]
    start = caret.index("^")
    assert set(caret[start:]) == {"^"}
    assert code[start:start + len(caret) - start] == underlined, f"underlined {code[start:len(caret)]!r}\n{err}"
    assert err.col - 1 == start - 4 + len(source[numbers[0] - first]) - len(source[numbers[0] - first].lstrip())
    assert hint in err.hint and hint in str(err), str(err)
    assert message in str(err), str(err)
    return err


X = {"x": (3,)}


# --- statements script does not convert


def test_try():
    def f(x):
        try:
            return x * 2.0
        except ValueError:
            return x
    expect_error(f, X, "try:", "try", "a graph cannot catch errors", "a try statement is not supported")


def test_with():
    def f(x):
        with np.errstate(all="ignore"):
            return np.log(x)
    expect_error(f, X, "with np.errstate", "with", "move the with block outside", "a with statement")


def test_global():
    def f(x):
        global COUNTER
        return x
    expect_error(f, X, "global COUNTER", "global", "return the value instead", "a global statement")


def test_nonlocal():
    count = 0

    def f(x):
        def bump():
            nonlocal count
            return count
        return x * bump()
    expect_error(f, X, "nonlocal count", "nonlocal", "return the value instead", "a nonlocal statement")
    del count


def test_class_import_and_match():
    def f(x):
        class Layer:
            pass
        return x
    expect_error(f, X, "class Layer", "class", "define the class outside")

    def g(x):
        import math as m
        return x * m.pi
    expect_error(g, X, "import math", "import", "import at the top of the module")

    def h(x):
        match x.ndim:
            case 1:
                return x
    expect_error(h, X, "match x.ndim", "match", "write it with if / elif / else")


def test_yield():
    def f(x):
        yield x * 2.0
    expect_error(f, X, "yield x", "yield x * 2.0", "return a list or tuple", "yield is not supported")


def test_print_of_a_tensor():
    def f(x):
        y = x * 2.0
        print(y)
        return y
    expect_error(f, X, "print(y)", "print(y)", "register a hook", "print of a tensor")


def test_random_numbers():
    def f(x):
        return x + np.random.standard_normal(3)
    expect_error(f, X, "np.random", "np.random.standard_normal(3)", "pass it in as an input")


def test_a_call_script_cannot_see_into():
    def f(x):
        return x * time.time()
    expect_error(f, X, "time.time()", "time.time()", "compute it outside the scripted function",
                 "which script() cannot see into")


def test_recursion():
    def f(x):
        return f(x) * 2.0
    expect_error(f, X, "return f(x)", "f(x)", "write recursion on data as a while loop")


def test_wrong_arguments_to_a_python_function():
    def helper(a, b):
        return a + b

    def f(x):
        return helper(x)
    expect_error(f, X, "helper(x)", "helper(x)", "call it with the arguments it takes", "missing a required")


def test_side_effect_on_an_outside_list():
    log = []

    def f(x):
        log.append(x.shape)
        return x
    expect_error(f, X, "log.append", "log.append(x.shape)", "make a new list inside the function", "side effect")


def test_attribute_assignment_del_and_decorators():
    class Box:
        pass
    box = Box()

    def f(x):
        box.value = x
        return x
    expect_error(f, X, "box.value = x", "box.value", "return the value instead", "assignment to an attribute")

    def g(x):
        d = {"a": 1}
        del d["a"]
        return x
    expect_error(g, X, 'del d["a"]', 'd["a"]', "build a new container instead")

    def h(x):
        @staticmethod
        def inner(v):
            return v
        return inner(x)
    expect_error(h, X, "@staticmethod", "staticmethod", "define it without the decorator")


def test_assert_and_raise():
    def f(x):
        assert x.sum() > 0, "needs positive input"
        return x
    expect_error(f, X, "assert x.sum()", "assert", "check the condition on the outputs", "assert on tensor data")

    def g(x):
        assert x.ndim == 2, "needs a matrix"
        return x
    expect_error(g, X, "assert x.ndim", "assert", "script the function for inputs it accepts", "needs a matrix")

    def h(x):
        if x.ndim != 2:
            raise ValueError("needs a matrix")
        return x
    expect_error(h, X, "raise ValueError", "raise", "script the function for inputs it accepts",
                 "raises for any input")

    def k(x):
        if x.sum() < 0:
            raise ValueError("negative")
        return x
    expect_error(k, X, "raise ValueError", "raise", "select a fallback value with np.where",
                 "under a condition on tensor data")


# --- expressions


def test_a_tensor_needed_as_a_python_value():
    def f(x):
        return np.zeros(int(x.sum()))
    expect_error(f, X, "int(x.sum())", "int(x.sum())", "keep it a tensor", "needed here as a Python int")


def test_not_and_or_of_tensors_outside_a_test():
    def f(x):
        flag = not x.sum() > 0
        return flag
    expect_error(f, X, "flag = not", "not x.sum() > 0", "np.logical_not(x)")

    def g(x):
        both = (x.sum() > 0) and (x.max() < 3)
        return both
    expect_error(g, X, "both =", "(x.sum() > 0) and (x.max() < 3)", "np.logical_and(a, b)")


def test_undefined_name_fstring_and_comprehension_condition():
    def f(x):
        return x * undefined_scale  # noqa: F821
    expect_error(f, X, "undefined_scale", "undefined_scale", "define undefined_scale before this line")

    def g(x):
        label = f"{x.sum()}"
        return x, label
    expect_error(g, X, "label =", 'f"{x.sum()}"', "format it after running the graph")

    def h(x):
        return [x * k for k in range(3) if x.sum() > k]
    expect_error(h, X, "for k in range(3)", "x.sum() > k", "select with np.where here")


def test_an_error_eager_code_would_raise_too():
    def f(x):
        return x @ np.ones((4, 2))
    expect_error(f, X, "x @ np.ones", "x @ np.ones((4, 2))", "the same error would stop eager code", "matmul")


def test_unpacking_and_iteration():
    def f(x):
        a, b = x
        return a + b
    expect_error(f, X, "a, b = x", "a, b", "unpack into as many names as there are values")

    def g(x):
        s = x.sum()
        return [v for v in s]
    expect_error(g, X, "for v in s", "s", "index it instead", "iteration over a 0-d tensor")


# --- control flow on tensor data


def test_a_variable_assigned_in_one_branch_only():
    def f(x):
        if x.sum() > 0:
            y = x * 2.0
        return y
    err = expect_error(f, X, "return y", "y", "assign y before the if, or in both branches",
                       "assigned only in the then branch")
    assert "y = x * 2.0" in str(err) and "if x.sum() > 0:" in str(err)  # both lines


def test_a_variable_with_different_types_in_the_branches():
    def f(x):
        if x.sum() > 0:
            y = x * 2.0
        else:
            y = x.sum()
        return y
    err = expect_error(f, X, "return y", "y", "give y the same type in both branches", "type differs")
    assert "y = x * 2.0" in str(err) and "y = x.sum()" in str(err) and "f64[3]" in str(err)


def test_the_note_section_5_2_branches_return_different_shapes():
    w = np.ones((3, 2))

    def f(x):
        threshold = x.mean()
        if threshold > 0:
            return np.tanh(x @ w)
        else:
            return x
    err = expect_error(f, X, "if threshold > 0", "if", "make both branches give the same dtype and shape",
                       "different types")
    assert "return np.tanh(x @ w)" in str(err) and "return x" in str(err) and "f64[2]" in str(err)


def test_one_branch_returns_the_other_falls_off_the_end():
    def f(x):
        if x.sum() > 0:
            return x
        x = x * 2.0
    expect_error(f, X, "if x.sum() > 0", "if", "make both branches give the same structure",
                 "reaches the end of the function")


def test_conditional_expression_with_different_types():
    def f(x):
        return x if x.sum() > 0 else x.sum()
    expect_error(f, X, "return x if", "x if x.sum() > 0 else x.sum()", "same dtype and shape",
                 "gives `x.sum()`")


def test_return_inside_a_loop_under_a_tensor_condition():
    def f(x):
        for _ in range(3):
            if x.sum() > 10:
                return x
            x = x * 2.0
        return x
    expect_error(f, X, "return x\n", "return", "return it after the loop", "return inside a loop")


def test_break_out_of_a_converted_branch_and_loop():
    def f(x):
        for _ in range(3):
            if x.sum() > 10:
                break
            x = x * 2.0
        return x
    expect_error(f, X, "break", "break", "set a flag variable", "break inside a branch on tensor data")

    def g(x):
        while x.sum() < 10:
            x = x * 2.0
            if x.max() > 5:
                break
        return x
    expect_error(g, X, "break", "break", "replace break by a flag variable", "break in a loop on tensor data")


def test_loop_variables():
    def changes_shape(x):
        while x.sum() < 10:
            x = np.concatenate([x, x])
        return x
    err = expect_error(changes_shape, X, "while x.sum()", "while", "keep x's dtype and shape",
                       "x enters the loop as f64[3]")
    assert "f64[6]" in str(err) and "np.concatenate" in str(err)

    def carries_a_list(x):
        seen = []
        while x.sum() < 10:
            x = x * 2.0
            seen = seen + [x]
        return x
    expect_error(carries_a_list, X, "while x.sum()", "while", "keep seen out of the loop", "seen is a list")

    def changes_structure(x):
        pair = (x, x)
        while x.sum() < 10:
            x = x * 2.0
            pair = (x, x, x)
        return pair
    expect_error(changes_structure, X, "while x.sum()", "while", "keep pair's structure", "changes structure")


def test_a_variable_made_only_inside_a_converted_loop():
    def f(x):
        while x.sum() < 10:
            x = x * 2.0
            last = x
        return last
    expect_error(f, X, "return last", "last", "define it before the loop", "assigned only inside the loop")

    def g(x, n):
        for i in range(n):
            x = x + 1.0
        return x * i
    expect_error(g, {"x": (3,), "n": ((), "int64")}, "return x * i", "i", "keep a counter of your own",
                 "index of the converted loop")


def test_loop_conditions_and_ranges():
    def f(x):
        n = 0
        y = 1.0
        while n < 3:
            n = n + 1
            y = x.sum() if n == 2 else y
            n = y if n == 2 else n
        return x
    expect_error(f, X, "while n < 3", "n < 3", "make it a tensor from the start", "became a tensor after")

    def g(x, n):
        for i in range(0, n, 2):
            x = x + 1.0
        return x
    expect_error(g, {"x": (3,), "n": ((), "int64")}, "for i in range", "range(0, n, 2)", "loop with a step of 1")

    def h(x, n):
        for i, j in range(n):
            x = x + 1.0
        return x
    expect_error(h, {"x": (3,), "n": ((), "int64")}, "for i, j", "i, j", "write for i in range(...)")


def test_loops_too_long_to_unroll(monkeypatch):
    monkeypatch.setattr(statements, "MAX_UNROLL", 50)

    def f(x):
        for _ in range(100):
            x = x + 1.0
        return x
    expect_error(f, X, "for _ in range(100)", "for", "loops='fori'", "more than the 50")

    def g(x):
        n = 0
        while n < 100:
            n += 1
        return x * n
    expect_error(g, X, "while n < 100", "while", "make its condition a tensor")


def test_changing_a_list_inside_a_converted_branch():
    def f(x):
        outs = []
        if x.sum() > 0:
            outs.append(x)
        return x
    expect_error(f, X, "outs.append", "outs.append(x)", "build the list after the if or loop")


def test_writing_into_an_array_passed_through_a_branch():
    def f(x):
        y = x.copy()
        z = y if x.sum() > 0 else y * 2.0
        z += 1.0
        return y
    expect_error(f, X, "z += 1.0", "z += 1.0", "copy it first", "may be the same array")


def test_a_python_number_carried_by_a_loop_in_another_dtype():
    def f(x):
        total = 0.0
        while x.sum() > 1.0:
            x = x * np.float32(0.5)
            total = total + x.sum()
        return total
    expect_error(f, {"x": ((3,), "float32")}, "while x.sum()", "while", "total = np.float32(0.0)",
                 "total starts as a Python number")


# --- what script takes


def test_a_lambda_and_a_function_without_source():
    with pytest.raises(ScriptError, match="takes a function defined with def") as e:
        script(lambda x: x * 2.0, X)
    assert "def f(x)" in e.value.hint

    namespace = {}
    exec("def made(x):\n    return x * 2.0\n", namespace)
    with pytest.raises(ScriptError, match="cannot read the source") as e:
        script(namespace["made"], X)
    assert "define the function in a .py file" in e.value.hint


DASH_C = """def made(x):
    return x * 3.0
import graph_lab
ns = {}
exec("def made(x):\\n    return x * 2.0\\ndef branchy(x):\\n    if x.sum() > 0:\\n        return x\\n    return -x\\n", ns)
try:
    graph_lab.script(ns["made"], {"x": (2,)})
    print("script converted it")
except graph_lab.ScriptError as e:
    print("script:", str(e).splitlines()[0])
try:
    graph_lab.trace(ns["branchy"], {"x": (2,)})
except graph_lab.TraceError as e:
    print("trace:", e)
"""


def test_an_exec_d_function_is_not_read_from_the_python_dash_c_command():
    """exec names what it compiles "<string>", and from Python 3.13 on linecache holds ``python -c``'s command under
    that name too: script() must refuse the exec'd ``made`` (x * 2.0) rather than convert the command's (x * 3.0),
    and a traced error must not quote the command's line 4 as the exec'd code's line 4 (the same on every version)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run([sys.executable, "-c", DASH_C], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    script_line, trace_line = result.stdout.splitlines()[:2]
    assert script_line.startswith("script: script() cannot read the source of made (defined in <string>)")
    assert trace_line.startswith("trace: ") and "<string>:4" in trace_line
    assert "import graph_lab" not in trace_line


def test_a_return_value_that_is_not_an_array():
    def f(x):
        return "done"
    with pytest.raises(ScriptError, match="returned str") as e:
        script(f, X)
    assert "return arrays" in e.value.hint


def test_F_control_flow_on_functions_is_fine_inside_script():
    def f(x):
        return F.cond(x.sum() > 0, lambda a: a * math.pi, lambda a: a, x)
    assert script(f, X).count() == 3


def test_more_constructs_and_mistakes():
    def f(x):
        async def later():
            return x
        return x
    expect_error(f, X, "async def", "async", "script() converts synchronous code only", "async code")

    def g(x):
        scale = lambda a, b: a * b  # noqa: E731
        return scale(x)
    expect_error(g, X, "scale = lambda", "lambda a, b: a * b", "call it with the arguments it takes",
                 "TypeError calling <lambda>")

    def h(x):
        for k in 3:
            x = x + k
        return x
    expect_error(h, X, "for k in 3", "3", "iterate over a range, a list", "iteration over a int")

    def k(x):
        y = x.copy()
        y[0] = "one"
        return y
    expect_error(k, X, 'y[0] = "one"', 'y[0] = "one"', "the same error would stop eager Python here")


def test_branches_that_leave_a_variable_of_another_kind():
    def f(x):
        if x.sum() > 0:
            mode, y = "double", x * 2.0
        else:
            mode, y = "half", x * 0.5
        return y if mode == "double" else -y
    expect_error(f, X, 'if mode == "double"', "mode", "give mode the same type in both branches",
                 "it differs between the branches and is not an array")

    def g(x):
        if x.sum() > 0:
            pair = (x, x)
        else:
            pair = x
        return pair
    expect_error(g, X, "return pair", "pair", "give pair the same type", "its structure differs")
