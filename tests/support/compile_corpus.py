"""The acceptance corpus of ``graph_lab.compile``: ordinary NumPy programs, one per entry.

Each ``Case`` says how to make a fresh copy of its program (the function and every piece of mutable state it
touches: lists, objects, globals), how to make the arguments of a few calls, and how many graphs and graph
breaks the first call should give. ``tests/frontends/dynamo/test_compile.py`` runs every case twice, eagerly and
compiled, on separate copies of all state, and requires the same results bit for bit and the same side effects
in the same order.

Graph counts are counts of segments with at least one op; a break is a segment that ends at an instruction run
as ordinary Python (a data-dependent branch, a print, a write into an array the function did not create...).
"""

from __future__ import annotations

import copy
import json
import math
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from graph_lab import F


@dataclass
class Program:
    """A fresh copy of a case's function with its own mutable state."""

    fn: Callable
    effects: Callable[[], Any] = lambda: None
    """A snapshot of the state the function may change (lists, attributes, globals), compared after each call."""


@dataclass
class Case:
    """One corpus entry."""

    name: str
    make: Callable[[], Program]
    """A fresh program: called once for the eager run and once for the compiled run."""
    calls: Callable[[np.random.Generator], list[tuple]]
    """The positional arguments of each call, in order."""
    graphs: int | None = None
    """Segments with at least one op on the first call (None: not asserted)."""
    breaks: int | None = None
    """Graph breaks on the first call."""


def own_globals(fn: Callable, **mutable) -> tuple[Callable, dict]:
    """A copy of ``fn`` with a private globals dict, so that eager and compiled runs write separate globals."""
    namespace = dict(fn.__globals__)
    namespace.update(copy.deepcopy(mutable))
    clone = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    return clone, namespace


def plain(fn: Callable) -> Callable[[], Program]:
    """A program with no state of its own (its arguments are copied for each run)."""
    return lambda: Program(fn)


def arrays(*shapes, dtype=np.float64):
    """A call maker: one standard-normal array of each shape."""
    return lambda rng: tuple(rng.standard_normal(s).astype(dtype) for s in shapes)


# --- 1. straight-line NumPy code


def gelu_mlp(x, p):
    """A two-layer MLP with the tanh form of GELU: operators, F.tanh and a math constant."""
    h = x @ p["W1"]
    g = 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return g @ p["W2"]


def numpy_mix(x, y):
    """np.* functions and reductions with keyword arguments."""
    z = np.maximum(x, 0.0) + np.exp(-np.abs(y))
    m = np.mean(z, axis=1, keepdims=True)
    w = np.where(z > m, z - m, np.zeros_like(z))
    return np.concatenate([w, np.sqrt(np.square(y) + 1.0)], axis=0).sum(axis=0)


def norm_block(x, w, b, gamma):
    """F.linear, F.layer_norm, F.softmax and F.relu: the functional namespace."""
    h = F.relu(F.linear(x, w, b))
    h = F.layer_norm(h, gamma, None)
    return F.softmax(h, axis=-1)


def float32_math(x):
    """float32 stays float32 with Python scalars (NEP 50 weak scalars)."""
    return (x * 0.5 + 1) / (np.abs(x) + 2.0)


# --- 2. loops over range


def range_loop(x, w, n_steps=3):
    """An unrolled loop whose body uses the loop counter as a Python number."""
    for i in range(n_steps):
        x = np.tanh(x @ w) + 0.1 * i
    return x


def while_loop(x):
    """A while loop on a Python counter."""
    k = 0
    while k < 4:
        x = x * 0.5 + k
        k += 2
    return x


def enumerate_zip(xs, ws):
    """enumerate and zip over lists of arrays."""
    total = 0.0
    for i, (x, w) in enumerate(zip(xs, ws)):
        total = total + (i + 1) * (x @ w)
    return total


# --- 3. nested helper calls with default and keyword arguments


def _affine(x, w, *, bias=0.0, scale=1.0):
    return (x @ w + bias) * scale


def _block(x, w, act=np.tanh, residual=True):
    h = act(_affine(x, w, scale=0.5))
    return x + h if residual else h


def _tower(x, w, depth=2):
    for _ in range(depth):
        x = _block(x, w)
    return _block(x, w, act=F.relu, residual=False)


def nested_helpers(x, w):
    """Three levels of user functions, with defaults, keyword-only arguments and a function as an argument."""
    return _tower(x, w) + _affine(x, w, bias=1.0)


def _apply_all(x, *fns, **kw):
    for fn in fns:
        x = fn(x, **kw)
    return x


def _shift(x, amount=1.0):
    return x + amount


def varargs_helpers(x):
    """*args and **kwargs passed through a helper."""
    return _apply_all(x, _shift, _shift, amount=2.5)


# --- 4. closures and globals

SCALE = 3.0
TABLE = np.linspace(-1.0, 1.0, 6)
counter = 0


def make_closure():
    """A closure over a Python number and an array, plus globals read."""
    bias = np.arange(6.0)
    factor = 0.25

    def f(x):
        return (x + bias) * factor * SCALE - TABLE
    return Program(f)


def _count_calls(x):
    global counter
    counter += 1
    return x * counter


def global_counter():
    """``global counter; counter += 1``: the write happens on every call, and the result uses it."""
    fn, namespace = own_globals(_count_calls, counter=0)
    return Program(fn, lambda: namespace["counter"])


def make_demo2():
    """The lecture's demo-2 shape: a log kept by a closure, a residual loop, a reshape into heads."""
    log = []

    def layer_stack(x, p, n_layers=3, use_residual=True):
        log.append(f"body ran for x of shape {x.shape}")
        for _ in range(n_layers):
            y = F.tanh(x @ p["W"])
            x = x + y if use_residual else y
        T, d = x.shape
        heads = x.reshape(T, 2, d // 2).transpose(1, 0, 2)
        return heads.transpose(1, 0, 2).reshape(T, d) * (1.0 / math.sqrt(d))
    return Program(layer_stack, lambda: list(log))


# --- 5. data-dependent values


def data_branch(x):
    """if on a tensor's value: two graphs and a branch in between."""
    s = x.sum()
    if s > 0:
        return x * 2.0
    return x * -1.0


def item_and_float(x):
    """.item() and float() feed Python arithmetic, whose result goes back into the graph."""
    peak = x.max().item()
    total = float(x.sum())
    scale = 1.0 / (abs(total) + peak + 1.0)
    return x * scale, round(peak, 3)


def early_return_data(x):
    """An early return taken or not depending on the data."""
    if (x > 0).all():
        return np.sqrt(x)
    y = np.abs(x)
    return y + 1.0


# --- 6. side effects: print, unknown calls, mutation of objects


def print_middle(x):
    """print between tensor operations, with shapes and with a value computed from the data."""
    print("start", x.shape)
    y = x * 2.0
    print(f"y has shape {y.shape}")
    z = y + 1.0
    print("sum", round(float(z.sum()), 6))
    return z


def unknown_call(x):
    """A library call graph_lab does not know (json.dumps): it runs as Python between two graphs."""
    h = x * 2.0
    meta = json.dumps({"rows": h.shape[0], "kind": "demo"})
    return h + len(meta)


def linalg_norm(x):
    """np.linalg.norm is in the registry of pure NumPy functions: one library_call node, no break."""
    y = x - x.mean()
    n = np.linalg.norm(y)
    return y / (n + 1.0)


class CountingModel:
    """The note's model: keeps its weights and counts its calls in an attribute."""

    def __init__(self, w):
        self.w = w
        self.counter = 0

    def forward(self, x):
        self.counter += 1
        return np.tanh(x @ self.w) * self.counter


def counting_model():
    """A step function calling the model's method: the attribute write is a break inside the method, which then
    runs compiled on its own, as TorchDynamo compiles each frame."""
    model = CountingModel(np.random.default_rng(5).standard_normal((4, 3)))

    def step(x):
        return model.forward(x)
    return Program(step, lambda: model.counter)


def appends_to_argument(x, history):
    """A list passed in is appended to: the caller sees the same list contents."""
    history.append(x.shape)
    y = x + 1.0
    history.append("done")
    return y


# --- 7. control flow: early returns, try/except


def early_return_flag(x, flag):
    """An early return on a Python argument: guarded on its value."""
    if flag:
        return x + 1.0
    return x - 1.0


def _risky(x, limit):
    if x.shape[0] > limit:
        raise ValueError(f"too many rows: {x.shape[0]} > {limit}")
    return x * 3.0


def try_no_exception(x):
    """try/except where nothing is raised."""
    try:
        y = _risky(x, 100)
    except ValueError:
        y = x
    return y + 1.0


def try_caught(x):
    """An exception raised by a call inside try and caught: the handler's result is returned."""
    try:
        y = _risky(x, 1)
        message = "no error"
    except ValueError as e:
        y = -x
        message = str(e)
    return y, message


# --- 8. containers and comprehensions


def list_in_list_out(xs):
    """A list of arrays in, a list of arrays out."""
    return [x * i for i, x in enumerate(xs)] + [xs[0] - xs[-1]]


def dict_in_dict_out(params):
    """A dict of arrays in, a dict out (with a nested tuple)."""
    out = {}
    for name, w in params.items():
        out[name] = w.T @ w
    out["pair"] = (params["a"].sum(), params["b"].max(axis=0))
    return out


def generator_sum(xs):
    """A generator expression inside sum()."""
    return sum(t * t for t in xs)


def list_comprehension(x):
    """A list comprehension over a range, then a stack."""
    rows = [x[i] * (i + 1) for i in range(x.shape[0])]
    return np.stack(rows)


def tuple_unpacking(x):
    """Tuple unpacking of shapes and of split results, and swapping."""
    rows, cols = x.shape
    a, b = np.split(x, 2, axis=1)
    a, b = b, a
    return a - b, rows * cols


def fstring_shapes(x):
    """f-strings with shapes and dtypes: computed at capture, returned as a string."""
    label = f"{x.shape[0]}x{x.shape[1]} {x.dtype} {x.ndim:02d}"
    return x.T, label


def isinstance_checks(x):
    """isinstance on arrays and on lists, as library code does to accept both."""
    if isinstance(x, np.ndarray):
        x = [x]
    if isinstance(x, (list, tuple)):
        return np.stack(x) * 2.0
    return x


# --- 9. arrays written in place


def inplace_created(x):
    """In-place writes into an array the function made: captured as functional updates."""
    y = np.zeros_like(x)
    y[0] = 1.0
    y += x
    y[:, -1] *= 2.0
    return y


def inplace_caller(x):
    """In-place writes into the caller's array: recorded in the graph and written back into it, as in eager."""
    x[0] = 0.0
    x += 1.0
    return x.sum(axis=0)


def views_returned(x):
    """Views made and returned: they alias the input as NumPy's would."""
    top = x[:2]
    col = x[:, 1]
    return x.T, top, col


def view_of_created(x):
    """A view of an array made inside the function, written through and returned."""
    y = x * 1.0
    row = y[1]
    row += 5.0
    return y, row


# --- 10. models as classes with __call__ and a key/value cache


class Linear:
    """A layer as an object with __call__, keeping its weight as an attribute."""

    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return x @ self.w


class KVAttention:
    """Single-head attention over a key/value cache written in place on every call (one token per call)."""

    def __init__(self, rng, d, max_len):
        self.q, self.k_proj, self.v_proj = (Linear(rng.standard_normal((d, d)) / d) for _ in range(3))
        self.k = np.zeros((d, max_len))
        self.v = np.zeros((max_len, d))
        self.mask = np.full(max_len, -1e9)
        self.pos = 0

    def __call__(self, x):
        q, k, v = self.q(x), self.k_proj(x), self.v_proj(x)
        self.k[:, self.pos] = k
        self.v[self.pos] = v
        self.mask[self.pos] = 0.0
        self.pos += 1
        scores = q @ self.k / math.sqrt(q.shape[-1]) + self.mask
        return F.softmax(scores, axis=-1) @ self.v


class TinyDecoder:
    """Embedding, one attention layer with a key/value cache, output projection: logits for one token."""

    def __init__(self, seed=0, vocab=7, d=4, max_len=8):
        rng = np.random.default_rng(seed)
        self.emb = rng.standard_normal((vocab, d))
        self.attn = KVAttention(rng, d, max_len)
        self.out = Linear(rng.standard_normal((d, vocab)))

    def __call__(self, token_ids):
        x = self.emb[token_ids][0]
        h = x + self.attn(x)
        return self.out(h)


def kv_model():
    """The decoder called one token at a time: every call writes the caches in place and moves pos."""
    model = TinyDecoder()

    def step(ids):
        return model(ids)
    return Program(step, lambda: (model.attn.pos, model.attn.k.copy(), model.attn.v.copy()))


# --- 11. guard-sensitive entries


def scaled(x, k):
    """A Python constant argument used in the graph."""
    return x * k + k


def dtype_cast(x):
    """astype to the input's own dtype kind: the graph depends on the dtype."""
    return (x.astype(np.float32) * 0.5).astype(x.dtype)


def attribute_read(cfg, x):
    """An attribute of a plain object read into the graph."""
    return x * cfg.scale + cfg.shift


class Config:
    """A plain object holding Python numbers."""

    def __init__(self, scale, shift):
        self.scale = scale
        self.shift = shift


# --- 12. more Python: loops with breaks, inner functions, exceptions, randomness, recursion


def print_in_loop(xs):
    """A print inside a loop: the loop's iterator survives each break."""
    total = 0.0
    for i, t in enumerate(xs):
        print("step", i, t.shape)
        total = total + t * (i + 1)
    return total


def inner_function_across_break(x):
    """An inner function closing over a variable that changes after a break."""
    scale = 2.0

    def apply(t):
        return t * scale
    print("between")
    scale = 3.0
    return apply(x), apply(x + 1.0)


def log_item(x):
    """An f-string with .item(), printed: the text is made again on every call, nothing recompiles."""
    loss = (x * x).mean()
    print(f"loss {loss.item():.6f} over {x.size} values")
    return x - loss


def dict_with_float(x):
    """A dict result holding a Python float computed from the data."""
    y = np.tanh(x)
    return {"out": y, "norm": float(np.abs(y).max()), "rows": y.shape[0]}


def shrink_while_large(x):
    """A while loop whose condition depends on the data: a break on every test."""
    steps = 0
    while np.abs(x).max() > 1.0:
        x = x / 2.0
        steps += 1
    return x, steps


HISTORY = []


def _append_history(x):
    HISTORY.append(round(float(x.sum()), 6))
    return x + len(HISTORY)


def global_list_append():
    """A global list appended to on every call."""
    fn, namespace = own_globals(_append_history, HISTORY=[])
    return Program(fn, lambda: list(namespace["HISTORY"]))


def noisy(x, rng):
    """A random generator passed in: each draw runs as Python, in eager's order, so the streams agree."""
    noise = rng.standard_normal(x.shape)
    y = x + 0.1 * noise
    return y + rng.uniform(-1.0, 1.0)


def _pairs(xs):
    for i in range(0, len(xs) - 1, 2):
        yield xs[i], xs[i + 1]


def generator_helper(xs):
    """A user generator consumed by a for loop."""
    out = []
    for a, b in _pairs(xs):
        out.append(a * b)
    return out


def _power(x, n):
    return x if n == 0 else _power(x * 1.5, n - 1)


def recursion(x):
    """A recursive helper with a Python counter: unrolled at capture."""
    return _power(x, 3)


def shape_control(x):
    """Control flow and arithmetic on shapes, chained comparisons, a conditional expression, the walrus."""
    if 1 < (rows := x.shape[0]) <= 4:
        x = x[::-1]
    y = x[..., None] * 2.0 if x.ndim == 2 else x
    return y.sum(axis=-1) + rows


def aliased_outputs(x):
    """The same array returned twice, and a view of a created array beside it."""
    y = x + 1.0
    return y, y, y[1:]


def nested_lists(batch):
    """A list of lists of arrays, a starred call and *args."""
    rows = [np.concatenate(group) for group in batch]
    return np.stack(rows), max(*[r.shape[0] for r in rows])


def star_unpack(x):
    """Starred unpacking of an array's rows."""
    first, *rest = x
    return first + sum(rest)


def raises_out(x):
    """An exception raised out of the compiled function, for negative input only."""
    if x.shape[0] > 2 and float(x.min()) < 0:
        raise ValueError(f"negative input, min {float(x.min()):.3f}")
    return x * 2.0


def lambda_and_sorted(d):
    """sorted over dict items with a lambda key, a dict comprehension."""
    order = sorted(d.items(), key=lambda kv: kv[0])
    return {k: v * 2.0 for k, v in order}


def _fail(x, kind):
    if kind == 1:
        raise KeyError("missing")
    if kind == 2:
        raise ValueError("bad")
    return x


def catch_kinds(x, kind):
    """Different exceptions raised at the same call, caught by different handlers."""
    try:
        y = _fail(x, kind)
    except KeyError:
        y = x + 1.0
    except ValueError as e:
        y = x + len(str(e))
    return y


class Doubled:
    """A weight behind a property: its code runs on every read, as in eager."""

    def __init__(self, w):
        self._w = w

    @property
    def w(self):
        return self._w * 2.0


def use_property(model, x):
    """A property read on an object passed in."""
    return x @ model.w


def drop_key(x):
    """del on a dict the function made, then returned."""
    d = {"a": x, "b": x * 2.0, "c": 1}
    del d["a"]
    d["n"] = len(d)
    return d


class Timer:
    """A context manager that records what happened, in order."""

    def __init__(self):
        self.events = []

    def __enter__(self):
        self.events.append("enter")
        return self

    def __exit__(self, *exc):
        self.events.append("exit" if exc[0] is None else f"exit after {exc[0].__name__}")
        return False


def with_blocks(x, timer):
    """A user context manager and np.errstate around tensor code; an assert."""
    assert x.ndim == 1, "expects a vector"
    with timer:
        y = x * 2.0
    with np.errstate(divide="ignore"):
        z = np.log(np.abs(y))
    return z + 1.0


def next_and_iter(xs):
    """iter() and next() by hand, with a default."""
    it = iter(xs)
    first = next(it)
    second = next(it, None)
    rest = list(it)
    return first * 2.0, second, len(rest)


CASES = [
    Case("gelu_mlp", plain(gelu_mlp),
         lambda rng: [(rng.standard_normal((4, 8)), {"W1": rng.standard_normal((8, 16)),
                                                      "W2": rng.standard_normal((16, 8))}) for _ in range(3)],
         graphs=1, breaks=0),
    Case("numpy_mix", plain(numpy_mix), lambda rng: [arrays((3, 5), (3, 5))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("norm_block", plain(norm_block), lambda rng: [arrays((2, 6), (5, 6), (5,), (5,))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("float32_math", plain(float32_math),
         lambda rng: [arrays((4, 4), dtype=np.float32)(rng) for _ in range(3)], graphs=1, breaks=0),
    Case("range_loop", plain(range_loop), lambda rng: [arrays((3, 4), (4, 4))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("while_loop", plain(while_loop), lambda rng: [arrays((5,))(rng) for _ in range(3)], graphs=1, breaks=0),
    Case("enumerate_zip", plain(enumerate_zip),
         lambda rng: [([rng.standard_normal((2, 3)) for _ in range(3)], [rng.standard_normal((3, 2)) for _ in
                                                                          range(3)]) for _ in range(3)],
         graphs=1, breaks=0),
    Case("nested_helpers", plain(nested_helpers), lambda rng: [arrays((3, 3), (3, 3))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("varargs_helpers", plain(varargs_helpers), lambda rng: [arrays((2, 2))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("closure_and_globals", make_closure, lambda rng: [arrays((2, 6))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("global_counter", global_counter, lambda rng: [arrays((3,))(rng) for _ in range(4)], graphs=1, breaks=1),
    Case("demo2_log", make_demo2,
         lambda rng: [(rng.standard_normal((4, 8)), {"W": rng.standard_normal((8, 8)) / 3}) for _ in range(3)],
         graphs=1, breaks=1),
    Case("data_branch", plain(data_branch),
         lambda rng: [(np.abs(rng.standard_normal((3, 4))),), (-np.abs(rng.standard_normal((3, 4))),),
                      (np.abs(rng.standard_normal((3, 4))),)],
         graphs=2, breaks=1),
    Case("item_and_float", plain(item_and_float), lambda rng: [arrays((3, 3))(rng) for _ in range(3)],
         graphs=3, breaks=2),
    Case("early_return_data", plain(early_return_data),
         lambda rng: [(np.abs(rng.standard_normal(5)) + 0.1,), (rng.standard_normal(5) - 3.0,),
                      (np.abs(rng.standard_normal(5)) + 0.1,)],
         graphs=2, breaks=1),
    Case("print_middle", plain(print_middle), lambda rng: [arrays((2, 3))(rng) for _ in range(3)],
         graphs=2, breaks=4),
    Case("unknown_call", plain(unknown_call), lambda rng: [arrays((3, 2))(rng) for _ in range(3)],
         graphs=2, breaks=1),
    Case("linalg_norm", plain(linalg_norm), lambda rng: [arrays((4, 2))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("counting_model", counting_model, lambda rng: [arrays((2, 4))(rng) for _ in range(4)],
         graphs=1, breaks=2),
    Case("appends_to_argument", plain(appends_to_argument), lambda rng: [(rng.standard_normal(3), []),
                                                                        (rng.standard_normal(3), ["old"])],
         graphs=1, breaks=2),
    Case("early_return_flag", plain(early_return_flag),
         lambda rng: [(rng.standard_normal(3), True), (rng.standard_normal(3), False),
                      (rng.standard_normal(3), True)],
         graphs=1, breaks=0),
    Case("try_no_exception", plain(try_no_exception), lambda rng: [arrays((2, 2))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("try_caught", plain(try_caught), lambda rng: [arrays((2, 2))(rng) for _ in range(3)], graphs=1, breaks=4),
    Case("list_in_list_out", plain(list_in_list_out),
         lambda rng: [([rng.standard_normal(4) for _ in range(3)],) for _ in range(3)], graphs=1, breaks=0),
    Case("dict_in_dict_out", plain(dict_in_dict_out),
         lambda rng: [({"a": rng.standard_normal((3, 2)), "b": rng.standard_normal((2, 2))},) for _ in range(3)],
         graphs=1, breaks=0),
    Case("generator_sum", plain(generator_sum),
         lambda rng: [([rng.standard_normal(3) for _ in range(4)],) for _ in range(3)], graphs=1, breaks=0),
    Case("list_comprehension", plain(list_comprehension), lambda rng: [arrays((3, 2))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("tuple_unpacking", plain(tuple_unpacking), lambda rng: [arrays((3, 4))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("fstring_shapes", plain(fstring_shapes), lambda rng: [arrays((2, 3))(rng) for _ in range(3)],
         graphs=0, breaks=0),
    Case("isinstance_checks", plain(isinstance_checks), lambda rng: [arrays((2, 2))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("inplace_created", plain(inplace_created), lambda rng: [arrays((3, 3))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("inplace_caller", plain(inplace_caller), lambda rng: [arrays((2, 3))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("views_returned", plain(views_returned), lambda rng: [arrays((3, 4))(rng) for _ in range(3)],
         graphs=0, breaks=0),
    Case("view_of_created", plain(view_of_created), lambda rng: [arrays((3, 2))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("kv_model", kv_model, lambda rng: [(np.array([t]),) for t in (1, 4, 4, 0)], graphs=4, breaks=3),
    Case("scaled", plain(scaled), lambda rng: [(rng.standard_normal(3), 2), (rng.standard_normal(3), 2.5)],
         graphs=1, breaks=0),
    Case("dtype_cast", plain(dtype_cast),
         lambda rng: [(rng.standard_normal(4),), (rng.standard_normal(4).astype(np.float32),)], graphs=1, breaks=0),
    Case("attribute_read", plain(attribute_read),
         lambda rng: [(Config(2.0, 1.0), rng.standard_normal(3)), (Config(3.0, 1.0), rng.standard_normal(3))],
         graphs=1, breaks=0),
    Case("print_in_loop", plain(print_in_loop),
         lambda rng: [([rng.standard_normal(2) for _ in range(3)],) for _ in range(3)], graphs=3, breaks=3),
    Case("inner_function_across_break", plain(inner_function_across_break),
         lambda rng: [arrays((2,))(rng) for _ in range(3)], graphs=1, breaks=2),
    Case("log_item", plain(log_item), lambda rng: [arrays((3, 2))(rng) for _ in range(3)], graphs=2, breaks=2),
    Case("dict_with_float", plain(dict_with_float), lambda rng: [arrays((2, 3))(rng) for _ in range(3)],
         graphs=1, breaks=1),
    Case("shrink_while_large", plain(shrink_while_large),
         lambda rng: [(rng.standard_normal(4) * 3,), (rng.standard_normal(4) * 0.1,), (rng.standard_normal(4) * 9,)]),
    Case("global_list_append", global_list_append, lambda rng: [arrays((3,))(rng) for _ in range(3)],
         graphs=2, breaks=2),
    Case("noisy", plain(noisy), lambda rng: [(rng.standard_normal(3), np.random.default_rng(7)) for _ in range(3)],
         graphs=2, breaks=2),
    Case("generator_helper", plain(generator_helper),
         lambda rng: [([rng.standard_normal(2) for _ in range(4)],) for _ in range(3)], graphs=1, breaks=0),
    Case("recursion", plain(recursion), lambda rng: [arrays((2,))(rng) for _ in range(3)], graphs=1, breaks=0),
    Case("shape_control", plain(shape_control), lambda rng: [arrays((3, 2))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("aliased_outputs", plain(aliased_outputs), lambda rng: [arrays((3,))(rng) for _ in range(3)],
         graphs=1, breaks=0),
    Case("nested_lists", plain(nested_lists),
         lambda rng: [([[rng.standard_normal(2), rng.standard_normal(2)], [rng.standard_normal(4)]],)
                      for _ in range(3)], graphs=1, breaks=0),
    Case("star_unpack", plain(star_unpack), lambda rng: [arrays((3, 2))(rng) for _ in range(3)], graphs=1,
         breaks=0),
    Case("raises_out", plain(raises_out), lambda rng: [(np.abs(rng.standard_normal(3)),),
                                                      (-np.abs(rng.standard_normal(3)),),
                                                      (rng.standard_normal(2),)], graphs=2, breaks=1),
    Case("lambda_and_sorted", plain(lambda_and_sorted),
         lambda rng: [({"b": rng.standard_normal(2), "a": rng.standard_normal(2)},) for _ in range(3)],
         graphs=1, breaks=1),
    Case("catch_kinds", plain(catch_kinds),
         lambda rng: [(rng.standard_normal(2), k) for k in (1, 2, 1, 0, 2)]),
    Case("use_property", plain(use_property),
         lambda rng: [(Doubled(rng.standard_normal((3, 2))), rng.standard_normal((2, 3))) for _ in range(3)],
         graphs=1, breaks=0),
    Case("drop_key", plain(drop_key), lambda rng: [arrays((2,))(rng) for _ in range(3)], graphs=1, breaks=0),
    Case("with_blocks", plain(with_blocks), lambda rng: [(rng.standard_normal(3), Timer()) for _ in range(3)]),
    Case("next_and_iter", plain(next_and_iter),
         lambda rng: [([rng.standard_normal(2) for _ in range(n)],) for n in (3, 1, 3)], graphs=1, breaks=0),
]
