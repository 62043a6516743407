"""Functions with control flow on tensor data, for ``script`` (tests/frontends/script/test_script.py), with inputs that
take every branch and every loop count, zero iterations included. Each is plain NumPy code that also runs eagerly.

Kept in a module of its own so the source lines recorded in the graphs do not move when a test file is edited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from graph_lab import F


def sign_branch(x):
    """The course note's example: one layer or the other, by the sign of x.sum()."""
    if x.sum() > 0:
        return np.tanh(x)
    else:
        return -x


def elif_chain(x):
    s = x.mean()
    if s > 1.0:
        y = x * 2.0
    elif s > 0.0:
        y = x + 1.0
    elif s > -1.0:
        y = x - 1.0
    else:
        y = -x
    return y * 3.0


def nested_ifs(x, y):
    if x.sum() > 0:
        if y.sum() > 0:
            z = x + y
        else:
            z = x - y
    else:
        z = x * y
    return z


def early_returns(x):
    if x.max() > 2.0:
        return x * 0.0
    if x.min() < -2.0:
        return x + 10.0
    return x


def halve_until_small(x):
    n = 0
    while np.abs(x).sum() > 1.0:
        x = x * 0.5
        n += 1
    return x, n


def loop_inside_branch(x):
    if x.sum() > 0:
        while x.sum() > 1.0:
            x = x - 1.0
    else:
        x = -x
    return x


def branch_inside_loop(x):
    steps = 0
    while x.max() > 1.0:
        if x.sum() > 0:
            x = x * 0.5
        else:
            x = x - 0.5
        steps = steps + 1
    return x, steps


def counted_loop(x, n):
    acc = x * 0.0
    for i in range(n):
        acc = acc + x[i % 4] * i
    return acc


def unrolled_with_branches(x, p):
    for w in p["layers"]:
        x = np.maximum(x @ w, 0.0)
        if x.mean() > 0.5:
            x = x * 0.5
    return x


def conditional_expressions(x):
    y = x * 2.0 if x.sum() > 0 else x * 3.0
    return y + (1.0 if x.max() > 1.0 else 0.0)


def boolean_tests(x, y):
    if x.sum() > 0 and (y.sum() < 0 or not x.max() > 1.5):
        return x + y
    return x - y


def clip_or_scale(v):
    if v.max() > 1.0:
        return v / v.max()
    return v


def calls_a_helper(x):
    return clip_or_scale(x) + clip_or_scale(-x)


def collatz_steps(x):
    n = 0
    while x > 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        n = n + 1
    return x, n


def explicit_control_flow(x):
    y = F.cond(x.sum() > 0, lambda a: a * 2.0, lambda a: a - 1.0, x)
    total, rows = F.scan(lambda c, row: (c + row, c * row), x[0] * 0.0, y)
    return total, rows


def one_branch_temporary(x):
    if x.sum() > 0:
        t = x * 2.0
        y = t + 1.0
    else:
        y = x
    return y


def tuple_carry(x):
    a, b = x, x * 0.0
    while a.sum() > 0.5:
        a, b = a * 0.5, b + a
    return a, b


def nested_whiles(x):
    while x.sum() > 1.0:
        y = x
        while y.max() > 0.5:
            y = y * 0.5
        x = x - y
    return x


def branch_in_counted_loop(x):
    for i in range(3):
        if x[i] > 0:
            x = x * 0.5
        else:
            x = x + 1.0
    return x


def python_number_branch(x):
    if x.sum() > 0:
        scale = 2.0
    else:
        scale = 0.5
    return x * scale


@dataclass
class Case:
    fn: Callable
    shapes: dict
    inputs: list[dict]
    """Input sets; together they take every branch and every loop count of interest."""
    params: Any = None
    loops: str = "unroll"

    @property
    def id(self) -> str:
        return self.fn.__name__ + ("-fori" if self.loops == "fori" else "")


def _v(*values, dtype=np.float64) -> np.ndarray:
    return np.array(values, dtype=dtype)


_RNG = np.random.default_rng(7)
_LAYERS = [_RNG.standard_normal((3, 3)) for _ in range(2)]

CORPUS = [
    Case(sign_branch, {"x": (4,)}, [{"x": _v(1, 2, 3, 4)}, {"x": _v(-1, -2, -3, -4)}, {"x": _v(0, 0, 0, 0)}]),
    Case(elif_chain, {"x": (2,)}, [{"x": _v(2, 3)}, {"x": _v(0.5, 0.5)}, {"x": _v(-0.5, 0)}, {"x": _v(-3, -4)}]),
    Case(nested_ifs, {"x": (3,), "y": (3,)}, [{"x": _v(1, 1, 1), "y": _v(1, 2, 3)},
                                              {"x": _v(1, 1, 1), "y": -_v(1, 2, 3)},
                                              {"x": -_v(1, 1, 1), "y": _v(1, 2, 3)}]),
    Case(early_returns, {"x": (3,)}, [{"x": _v(3, 0, 0)}, {"x": _v(-3, 0, 0)}, {"x": _v(1, -1, 0.5)}]),
    Case(halve_until_small, {"x": (4,)}, [{"x": _v(0.1, 0.1, 0.1, 0.1)}, {"x": _v(0.5, 0.5, 0.2, 0)},
                                          {"x": _v(10, -20, 30, 0)}]),
    Case(loop_inside_branch, {"x": (2,)}, [{"x": _v(0.25, 0.5)}, {"x": _v(3.5, 1)}, {"x": _v(-1, -2)}]),
    Case(branch_inside_loop, {"x": (3,)}, [{"x": _v(0.5, 0.5, 0.5)}, {"x": _v(5, 1, 1)}, {"x": _v(3, -8, 1)}]),
    Case(counted_loop, {"x": (4,), "n": ((), "int64")}, [{"x": _v(1, 2, 3, 4), "n": np.array(k)} for k in (0, 1, 6)]),
    Case(counted_loop, {"x": (4,), "n": ((), "int64")}, [{"x": _v(1, 2, 3, 4), "n": np.array(k)} for k in (0, 5)],
         loops="fori"),
    Case(unrolled_with_branches, {"x": (2, 3)}, [{"x": _RNG.standard_normal((2, 3)) * s} for s in (0.1, 3.0, -3.0)],
         params={"layers": _LAYERS}),
    Case(conditional_expressions, {"x": (3,)}, [{"x": _v(1, 2, 0)}, {"x": _v(0.5, 0.2, 0)}, {"x": _v(-1, -2, -3)}]),
    Case(boolean_tests, {"x": (2,), "y": (2,)}, [{"x": _v(1, 1), "y": _v(-1, -1)}, {"x": _v(0.5, 0.5), "y": _v(1, 1)},
                                                 {"x": _v(1, 1), "y": _v(1, 1)}, {"x": _v(-1, -1), "y": _v(1, 1)}]),
    Case(calls_a_helper, {"x": (3,)}, [{"x": _v(2, 0.5, -3)}, {"x": _v(0.5, 0.25, -0.5)}]),
    Case(collatz_steps, {"x": ((), "int64")}, [{"x": np.array(k)} for k in (1, 2, 6, 7)]),
    Case(explicit_control_flow, {"x": (3, 2)}, [{"x": _RNG.standard_normal((3, 2)) + s} for s in (3.0, -3.0)]),
    Case(one_branch_temporary, {"x": (2,)}, [{"x": _v(1, 2)}, {"x": _v(-1, -2)}]),
    Case(tuple_carry, {"x": (2,)}, [{"x": _v(0.1, 0.1)}, {"x": _v(4, 4)}]),
    Case(nested_whiles, {"x": (3,)}, [{"x": _v(0.1, 0.2, 0.3)}, {"x": _v(0.3, 0.5, 0.5)}, {"x": _v(5, 2, 0.5)}]),
    Case(branch_in_counted_loop, {"x": (3,)}, [{"x": _v(1, 1, 1)}, {"x": _v(-1, 1, -1)}, {"x": _v(-3, -3, -3)}]),
    Case(branch_in_counted_loop, {"x": (3,)}, [{"x": _v(1, 1, 1)}, {"x": _v(-1, 1, -1)}, {"x": _v(-3, -3, -3)}],
         loops="fori"),
    Case(python_number_branch, {"x": ((2,), "float32")}, [{"x": _v(1, 2, dtype=np.float32)},
                                                          {"x": _v(-1, -2, dtype=np.float32)}]),
]
