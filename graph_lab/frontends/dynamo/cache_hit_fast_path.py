"""The fast path of a cache hit: one generated Python function for all entries of a compiled function's first
offset, when each of them is a whole-function graph (it ends in ``return``, with no graph break).

Why it exists, measured: a cache hit of ``np.tanh(x @ w) + x`` on [4, 8] costs 1.8 us through this path and
5.5 us through the general one (eager: 1.3 us), two thirds of a hit saved; for a chain of 16 layers, 10-30% of a
hit (84 vs 94 us, and 65 vs 93 us, in two runs). Measured on 3.11 with
``PYTHONPATH=. python benchmarks/bench_capture_loop.py``, interleaved with eager in one run on a shared machine
(2 cores, up to 7 other jobs). ``tests/frontends/dynamo/test_dynamo_paths.py`` holds it to the general path on random programs.

The general path of ``CompiledFunction.__call__`` builds a ``FrameInputs``, runs each entry's compiled guard
function, fetches the graph's inputs through their sources, runs the graph and follows the result's recipe; each
step is a few Python calls, and together they cost more than the NumPy work of a small function. The fast path
writes all of it out as one function of the call's positional arguments, the way TorchDynamo's guard functions
sit in front of its compiled code, and becomes the compiled function's ``__call__``::

    def __call__(self, a0=UNSET, a1=UNSET, /, *rest, **kw):
        if rest or kw or a1 is UNSET:        # not the plain positional call: the general path
            return self._call(...)
        for _ in ONCE:                       # entry 0; ``break`` goes on to the next entry
            try:
                v0 = a0
                if not (type(v0) is ndarray and v0.shape == K0 and v0.dtype == K1):
                    break
                v1 = a1
                if not (type(v1) is K2):
                    break
                if not (tuple(v1) == K3):
                    break
                v2 = v1[K4]
                ...
            except Exception:
                break
            self._fast_hit = K9
            if K10.eager:                    # the way chosen for cache hits (way_choice.py)
                return K11(a0, a1)
            R = K12((v0, v2, v3, ), K13, K14)
            return R[0]
        return self._call((a0, a1), {})      # no entry's guards hold

It checks the same guards in the same order as the entries' own guard functions, so it picks the entry the general
path would pick; on a miss the general path takes over (it works out which guard failed, logs why and captures
again). Like the guard functions, the source refers to keys, attribute names, expected values and objects only
through names bound to them (``K0``, ``K1``, ...), never text taken
from user data; the only literals it contains are indices and axis numbers it made itself. A run of like guards on
the items of a list (``guards.item_runs``: ``for w in ws`` over N arrays of one shape) is one slice and one loop::

                r0 = v1[0:256]
                if len(r0) != 256 or not all(type(v) is ndarray and v.shape == K5 and v.dtype == K6 for v in r0):
                    break

and the items go to the graph as ``*r0``. The function is made on the first call after a capture (see
``CompiledFunction.__call__``), when a hit becomes possible.

An entry whose state cannot be written this way (a source on the stack or in a local that is not an argument, a
result rebuilt as a new list or a view) leaves the whole offset to the general path.
"""

from __future__ import annotations

import builtins
import inspect
from typing import Any

import numpy as np

from .guard_set import PAIR_KINDS, _check_expr, dims_match, item_runs, same_value
from .mutation import copy_back
from .writeback import is_region
from .overlap import block_layout, disjoint_blocks, first_overlap
from .size_checks import sizes_check
from .sources import (AttrSource, CellContentsSource, CellSource, ClosureSource, DerivedSource,
                      GlobalSource, ItemSource, LocalSource, ObjectSource, SizesSource, Source)

UNSET = object()
"""The default of each argument of the generated ``__call__``: this argument was not passed by position."""


class _NotFast(Exception):
    """This entry (and so the offset) stays on the general path."""



class _Writer:
    """Writes one fast-path function: source fetches (each source once per entry) and guard checks."""

    def __init__(self, owner, argnames: list[str], packed: dict[str, str] | None = None):
        self.owner = owner
        self.argnames = argnames
        self.packed = packed or {}
        """``*args`` and ``**kwargs`` parameter names -> the generated function's ``rest`` and ``kw``."""
        self.consts: list[Any] = []
        self.lines: list[str] = []

    def const(self, value) -> str:
        """A name for ``value`` in the generated function."""
        self.consts.append(value)
        return f"K{len(self.consts) - 1}"

    def entry(self, n: int, seg) -> None:
        """The block of one cache entry."""
        body, split = self.guard_lines(seg.guards.guards)
        self.entry_run(seg, body, split)

    def guard_lines(self, guards: list) -> tuple[list[str], int | None]:
        """The lines that fetch the guards' sources and ``break`` when one fails, and where the guards on aliasing
        start (None: there are none)."""
        self.vars: dict[Source, str] = {}
        self.runs: dict[str, tuple] = {}  # name of a list of items read as one slice -> the items' sources
        body: list[str] = []
        self.body = body
        typed: dict[Source, type] = {}
        runs = item_runs(guards)
        blocks = disjoint_blocks(guards)
        i = 0
        split = None  # where the guards on aliasing start: the function way needs none of them (see below)
        while i < len(guards):
            g = guards[i]
            if i in blocks:  # "disjoint" guards, checked as one block (overlap.py)
                split = len(body) if split is None else split  # (aliasing guards: see below)
                sources, pairs = block_layout(guards[i:blocks[i]])
                arrays = "".join(self.fetch(s) + ", " for s in sources)
                body += [f"if first_overlap(({arrays}), {self.const(pairs)}) >= 0:", "    break"]
                i = blocks[i]
                continue
            if i in runs:  # like guards on the items of one list: one slice, checked by one loop
                body += self.run(guards[i:runs[i]])
                i = runs[i]
                continue
            i += 1
            if split is None and (g.kind in PAIR_KINDS or g.kind == "writeable"):
                split = len(body)
            v = self.fetch(g.source)
            if g.kind == "type":
                typed[g.source] = g.expected
            other = ""
            if g.kind in PAIR_KINDS:
                other = self.fetch(g.expected)
                expected = "None"
            elif g.kind == "writeable":
                expected = "None"
            elif g.kind == "keys":
                expected = self.const(tuple(g.expected))
            elif g.kind == "sizes":
                expected = self.const(sizes_check(g.expected))
            elif g.kind == "array":
                body += [f"if not ({self.array_check(v, g.expected)}):", "    break"]
                continue
            else:
                expected = self.const(g.expected)
            kind = "same" if g.kind == "equals" and isinstance(g.expected, (float, np.floating, tuple)) else g.kind
            if kind == "same" and type(g.expected) is float and g.expected == g.expected and g.expected != 0:
                kind = "equals"  # a float that is neither a zero nor NaN: == tells it apart exactly
            check = _check_expr(kind, v, expected, other)
            if g.kind == "keys" and typed.get(g.source) is dict:  # its type was checked just before
                check = f"tuple({v}) == {expected}"
            body.append(f"if not ({check}):")
            body.append("    break")
        return body, split

    def entry_run(self, seg, body: list[str], split: int | None) -> None:
        """The rest of an entry's block, after its guards: the graph, the writes back, the result."""
        for s in seg.input_sources:
            self.fetch(s)
        writes = [f"{self.const(copy_back)}({self.fetch(s)}, R[{int(k)}])" if not is_region(k) else
                  f"{self.const(k.write)}({', '.join([self.fetch(s), 'R'] + [self.fetch(x) for _, x, _ in k.symbols])})"
                  for s, k in seg.writebacks]
        self.named_errors = None
        run = _runner_call(seg, self)
        result = self.result(seg.result_recipe)
        # The original function (``way_choice``) is eager's semantics for any arguments: it runs once the guards
        # that pick the entry hold, before those on aliasing between arrays (pairwise, the costliest), which only
        # the graph needs. Outside the try: an exception it raises is the caller's.
        split = len(body) if split is None else split
        self.lines.append("    for _ in ONCE:")
        self._try(body[:split])
        self.lines.append(f"        self._fast_hit = {self.const(seg)}")
        self.lines.append(f"        if {self.const(self.owner.ways)}.eager:")
        self.lines.append(f"            return {self.const(self.owner.fn)}({self.args})")
        if body[split:]:
            self._try(body[split:])
        if not seg.graph.outputs:
            self.lines.append("        R = ()")
        elif self.named_errors is None:
            self.lines.append(f"        R = {run}")
        else:
            self.lines += ["        try:", f"            R = {run}", "        except Exception as e:",
                           f"            raise {self.named_errors}(e)"]
        self.lines += [f"        {line}" for line in writes]  # the caller's arrays, before anything else runs
        self.lines.append(f"        return {result}")

    def _try(self, body: list[str]) -> None:
        """Lines run in the entry's loop: an exception (a source gone) is a miss, as a failed guard is."""
        self.lines.append("        try:")
        self.lines += [f"            {line}" for line in body] or ["            pass"]
        self.lines += ["        except Exception:", "            break"]

    def array_check(self, v: str, expected: tuple) -> str:
        """Shape and dtype as two names: no indexing on each call."""
        shape, dtype = self.const(expected[0]), self.const(expected[1])
        return f"type({v}) is ndarray and {v}.shape == {shape} and {v}.dtype == {dtype}"

    def run(self, guards: list) -> list[str]:
        """The lines checking a run of ``item_runs``: its items are read as one slice of the list (or tuple: its
        type is checked before), each then named ``r0[j]``."""
        first = guards[0]
        name = f"r{len(self.runs)}"
        start, stop = first.source.key, first.source.key + len(guards)
        self.runs[name] = tuple(g.source for g in guards)
        for j, g in enumerate(guards):
            self.vars.setdefault(g.source, f"{name}[{j}]")
        if first.kind == "array":
            check = self.array_check("v", first.expected)
        else:
            check = _check_expr(first.kind, "v", self.const(first.expected))
        return [f"{name} = {self.fetch(first.source.base)}[{int(start)}:{int(stop)}]",
                f"if len({name}) != {len(guards)} or not all({check} for v in {name}):",
                "    break"]

    def tuple_of(self, sources: list[Source]) -> str:
        """``(v0, v1, ...)`` of the sources' values; the items of a run, in order, are written ``*r0``."""
        parts = []
        i = 0
        while i < len(sources):
            run = next((name for name, items in self.runs.items()
                        if items[0] == sources[i] and tuple(sources[i:i + len(items)]) == items), None)
            if run is not None:
                parts.append(f"*{run}")
                i += len(self.runs[run])
            else:
                parts.append(self.fetch(sources[i]))
                i += 1
        return "(" + "".join(p + ", " for p in parts) + ")"

    def fetch(self, source: Source) -> str:
        """The variable holding ``source``'s value (fetched once, in the entry's try block)."""
        if source in self.vars:
            return self.vars[source]
        expr = self.expression(source)
        name = f"v{len(self.vars)}"
        self.vars[source] = name
        self.body.append(f"{name} = {expr}")
        return name

    def expression(self, source: Source) -> str:
        if isinstance(source, LocalSource):
            if source.name in self.packed:
                return self.packed[source.name]
            if source.name not in self.argnames:
                raise _NotFast(f"{source.describe()} is not an argument")
            return f"a{self.argnames.index(source.name)}"
        if isinstance(source, AttrSource):
            return f"getattr({self.fetch(source.base)}, {self.const(source.name)})"
        if isinstance(source, ItemSource):
            return f"{self.fetch(source.base)}[{self.const(source.key)}]"
        if isinstance(source, GlobalSource):
            namespace = self.owner.fn.__globals__ if source.namespace is None else source.namespace
            ns, name = self.const(namespace), self.const(source.name)
            if source.name in namespace:  # gone on a later call: KeyError, a miss, and the general path decides
                return f"{ns}[{name}]"
            self.body += [f"if {name} in {ns}:", "    break"]  # shadowed since: the general path decides
            return f"getattr({self.const(builtins)}, {name})"
        if isinstance(source, ClosureSource):
            return f"{self.const(self.owner.fn.__closure__[source.index])}.cell_contents"
        if isinstance(source, CellSource):
            return f"{self.const(source.cell)}.cell_contents"
        if isinstance(source, CellContentsSource):
            return f"{self.fetch(source.func)}.__closure__[{int(source.index)}].cell_contents"
        if isinstance(source, ObjectSource):
            return self.const(source.obj)
        if isinstance(source, DerivedSource):
            args = [self.fetch(a) if isinstance(a, Source) else self.const(a.value) for a in source.args]
            return f"{self.const(source.fn)}({', '.join(args)})"
        if isinstance(source, SizesSource):
            parts = [f"{self.fetch(s)}.shape[{int(axis)}]" for s, axis in source.dims]
            return "(" + "".join(p + ", " for p in parts) + ")"
        raise _NotFast(f"{type(source).__name__} {source.describe()}")

    def result(self, recipe: tuple) -> str:
        kind = recipe[0]
        if kind == "out":
            return f"R[{int(recipe[1])}]"
        if kind == "const":
            value = recipe[1]
            if type(value) not in (int, float, bool, str, type(None), complex, np.ndarray) and \
                    not isinstance(value, np.generic):
                raise _NotFast(f"returns a {type(value).__name__} constant")
            return self.const(value)
        if kind == "source":
            return f"ESCAPE({self.fetch(recipe[1])})"
        if kind == "tuple":
            return "(" + "".join(self.result(r) + ", " for r in recipe[1]) + ")"
        if kind == "convert":  # ``return int(t)``
            return f"{self.const(recipe[1])}({self.result(recipe[2])})"
        raise _NotFast(f"a {kind} result")


def _runner_call(seg, writer: _Writer) -> str:
    """The expression that runs the segment's graph on the fetched inputs, giving its outputs."""
    runner = seg.runner
    compiled = getattr(runner, "__self__", None)
    names = [n.attrs["name"] for n in seg.graph.input_nodes]
    by_name = dict(zip(names, seg.input_sources))
    if compiled is not None and getattr(runner, "__func__", None) is type(compiled).run and \
            hasattr(compiled, "_run"):
        ordered = writer.tuple_of([by_name[name] for name in compiled.input_names])
        direct = getattr(compiled, "direct", None)
        if direct is not None:  # codegen's function itself; its errors are named as _run names them
            forward, consts = direct
            writer.named_errors = writer.const(compiled._named_error)
            return f"{writer.const(forward)}({ordered}, {writer.const(compiled._params)}, {writer.const(consts)})"
        return f"{writer.const(compiled._run)}({ordered}, {writer.const(compiled._params)})"
    return f"{writer.const(runner)}(dict(zip({writer.const(tuple(names))}, {writer.tuple_of(seg.input_sources)})))"


def _call_shape(owner) -> tuple[list[str], dict[str, str], tuple] | str:
    """``(positional parameter names, {"*args" name: "rest", "**kwargs" name: "kw"}, names a keyword may
    bind)`` of the compiled function, or why the fast path cannot take its calls."""
    code, fn = owner.code, owner.fn
    if owner._simple_argcount >= 0:  # (plain parameters, as the general path binds them)
        return list(code.co_varnames[:owner._simple_argcount]), {}, ()
    if code.co_kwonlyargcount or "__signature__" in fn.__dict__ or "__wrapped__" in fn.__dict__:
        return "the function takes keyword-only arguments or carries a signature of its own"
    argnames = list(code.co_varnames[:code.co_argcount])
    packed, at = {}, code.co_argcount
    if code.co_flags & inspect.CO_VARARGS:
        packed[code.co_varnames[at]] = "rest"
        at += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        packed[code.co_varnames[at]] = "kw"
    return argnames, packed, tuple(argnames[code.co_posonlyargcount:])
def generated_namespace() -> dict:
    """The names the generated code may use besides its ``K`` constants."""
    return {"ONCE": (None,), "ndarray": np.ndarray, "same": same_value, "dims_match": dims_match,
            "may_share": np.may_share_memory, "first_overlap": first_overlap,
            "__builtins__": {"type": type, "tuple": tuple, "len": len, "getattr": getattr, "dict": dict, "zip": zip,
                             "all": all, "Exception": Exception}}


def make_fast_path(owner, entries: list) -> tuple[Any, str] | tuple[None, str]:
    """``(function, source)`` for the entries of the first offset, or ``(None, why not)``.

    The function takes the call's arguments as Python binds them: ``a0, a1, ...`` by position, the rest in
    ``rest`` and the keywords in ``kw``. A call Python would bind otherwise (a keyword naming a parameter, extra
    arguments the function has no ``*args`` or ``**kwargs`` for) takes the general path."""
    from .segment import escape

    shape = _call_shape(owner)
    if isinstance(shape, str):
        return None, shape
    argnames, packed, keyword_names = shape
    writer = _Writer(owner, argnames, packed)
    writer.args = ", ".join([f"a{i}" for i in range(len(argnames))] + ["*rest", "**kw"])  # (the function way)
    writer.lines.append("")
    for n, seg in enumerate(entries):
        if seg.end != "return":
            return None, f"entry {n} ends in a graph break"
        try:
            writer.entry(n, seg)
        except _NotFast as e:
            return None, f"entry {n}: {e}"
    args = "".join(f"a{i}, " for i in range(len(argnames)))
    writer.lines.append(f"    return self._call(({args}) + rest, kw)")
    # (an argument left out takes its default, the very object Python would pass: a call that leaves ``lr=0.01``
    # out is a fast call too)
    defaults = owner.fn.__defaults__ or ()
    required = len(argnames) - len(defaults)
    params = ["self"] + [f"a{i}=UNSET" for i in range(len(argnames))] + ["/", "*rest", "**kw"]
    not_plain = [] if "rest" in packed.values() else ["rest"]
    if "kw" not in packed.values():
        not_plain.append("kw")
    elif keyword_names:  # a keyword that names a parameter binds it (or is an error): Python decides
        not_plain.append(f"kw and not {writer.const(frozenset(keyword_names))}.isdisjoint(kw)")
    if required:
        not_plain.append(f"a{required - 1} is UNSET")
    writer.lines[0:1] = [f"def __call__({', '.join(params)}):"] + \
        ([f"    if {' or '.join(not_plain)}:",
          f"        return self._call(tuple(a for a in ({args}) if a is not UNSET) + rest, kw)"] if not_plain else []) + \
        [line for i, d in enumerate(defaults, required)
         for line in (f"    if a{i} is UNSET:", f"        a{i} = {writer.const(d)}")]
    # K0, K1, ... are the cells of a closure: out of reach of any keyword argument
    lines = [f"def make({', '.join(f'K{i}' for i in range(len(writer.consts)))}):"]
    lines += ["    " + line for line in writer.lines] + ["    return __call__"]
    source = "\n".join(lines)
    namespace = {**generated_namespace(), "UNSET": UNSET, "ESCAPE": escape}
    exec(compile(source, "<graph_lab fast path>", "exec"), namespace)
    return namespace["make"](*writer.consts), source
