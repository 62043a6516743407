"""``graph-lab`` (or ``python -m graph_lab``): graph_lab from the command line.

    graph-lab explain model.py:mlp --shapes x=4,8 w=8,8     compile, call once on random inputs, print explain()
    graph-lab ir model.py:mlp --shapes x=4,8 w=8,8          the traced graph's IR text
    graph-lab view model.py:mlp --shapes x=4,8 w=8,8 -o mlp.html    the viewer's page of the traced graph
    graph-lab bench model.py:mlp --shapes x=4,8 w=8,8       eager NumPy against graph_lab.compile, interleaved
    graph-lab lectures                                      run the lecture-12 scripts of a checkout

Each parameter of the function without a default gets a random array of the shape given (one ``--dtype`` for
all). Finding the function means running its file, as ``python FILE.py`` would (with ``__name__`` set to the
file's name, so its ``if __name__ == "__main__":`` block does not run): point it only at code you trust.

A mistake on the command line (a missing file or function, a bad shape, an unknown dtype) is one line on stderr
naming it and what to do, and exit code 2; an error graph_lab raises on purpose (a ``TraceError``, ...) is its
message and exit code 1; an exception in the user's code is its traceback, as Python shows it.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import inspect
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

PROG = "graph-lab"
DTYPES = ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool")
TRUSTED_CODE = ("FILE.py is run to find FUNC, as `python FILE.py` would run it (its `if __name__ == "
                "'__main__':` block excepted): use this only on code you trust.")
PACKAGE_DIR = Path(__file__).resolve().parent
LECTURES = PACKAGE_DIR.parent / "lectures" / "lecture12"


class UsageError(Exception):
    """A mistake on the command line: said in one line, with what to do, and exit code 2."""


# ---------------------------------------------------------------------------------------------------------
# FILE.py:FUNC, its shapes and its random inputs


def load_function(target: str) -> Callable:
    """The function ``FILE.py:FUNC`` names, after running ``FILE.py``."""
    path_text, colon, name = target.rpartition(":")
    if not colon or not path_text or not name:
        raise UsageError(f"{target!r} does not name a function: write FILE.py:FUNC, e.g. model.py:mlp")
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no file {path_text!r}: give the path of the Python file that defines {name} "
                         f"(FILE.py:FUNC)")
    module = _run_file(path)
    fn = getattr(module, name, None)
    if fn is None:
        defined = sorted(n for n, v in vars(module).items()
                         if inspect.isfunction(v) and v.__module__ == module.__name__)
        raise UsageError(f"{path_text} defines no function {name!r}; the functions it defines: "
                         f"{', '.join(defined) or 'none'}")
    if not callable(fn):
        raise UsageError(f"{path_text}:{name} is not a function but a value of type {type(fn).__name__}: name "
                         f"a function")
    return fn


def _run_file(path: Path):
    """Run ``path`` as a module (its folder first on ``sys.path``, as ``python FILE.py`` has it, so the files
    beside it import) and return the module."""
    name = path.stem if path.stem.isidentifier() and path.stem not in sys.modules else "graph_lab_cli_target"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path} is not a Python file: name a .py file (FILE.py:FUNC)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (dataclasses and pickle look the module of a class up by name)
    sys.path.insert(0, str(path.resolve().parent))
    spec.loader.exec_module(module)
    return module


def parse_shapes(items: list[str]) -> dict[str, tuple[int, ...]]:
    """``["x=4,8", "b=8", "s="]`` -> ``{"x": (4, 8), "b": (8,), "s": ()}``."""
    shapes: dict[str, tuple[int, ...]] = {}
    for item in items:
        name, equals, sizes = item.partition("=")
        name = name.strip()
        try:
            if not equals or not name.isidentifier():
                raise ValueError(item)
            shape = tuple(int(size) for size in sizes.split(",")) if sizes.strip() else ()
            if any(size < 0 for size in shape):
                raise ValueError(item)
        except ValueError:
            raise UsageError(f"bad shape {item!r}: write NAME=SIZES, the sizes whole numbers separated by "
                             f"commas, e.g. x=4,8 (x= for a 0-d array)") from None
        if name in shapes:
            raise UsageError(f"two shapes for {name}: give each parameter one NAME=SIZES")
        shapes[name] = shape
    return shapes


def check_dtype(name: str) -> np.dtype:
    if name not in DTYPES:
        raise UsageError(f"unknown dtype {name!r}: choose one of {', '.join(DTYPES)}")
    return np.dtype(name)


class Target:
    """The function named on the command line, and the arrays it is called with (random, from one seed)."""

    def __init__(self, args: argparse.Namespace):
        shapes = parse_shapes(args.shapes)
        self.dtype = check_dtype(args.dtype)
        self.fn = load_function(args.target)
        self.label = args.target
        self.seed = args.seed
        parameters = [p for p in inspect.signature(self.fn).parameters.values()
                      if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        names = [p.name for p in parameters]
        unknown = [name for name in shapes if name not in names]
        if unknown:
            raise UsageError(f"{self.fn.__name__}({', '.join(names)}) has no parameter {unknown[0]!r}: give "
                             f"shapes for its parameters")
        missing = [p.name for p in parameters if p.name not in shapes and p.default is p.empty]
        if missing:
            raise UsageError(f"{self.fn.__name__}({', '.join(names)}) needs a shape for "
                             f"{', '.join(missing)}: add {' '.join(f'{n}=SIZES' for n in missing)} to --shapes "
                             f"(e.g. {missing[0]}=4,8)")
        self.shapes = {name: shapes[name] for name in names if name in shapes}  # in the signature's order
        self.positional = [p.name for p in parameters if p.kind != p.KEYWORD_ONLY]

    def arrays(self) -> dict[str, np.ndarray]:
        """New random arrays for the parameters (the same ones on every call: one seed)."""
        rng = np.random.default_rng(self.seed)
        arrays = {}
        for name, shape in self.shapes.items():
            if self.dtype == np.bool_:
                arrays[name] = rng.random(shape) < 0.5
            elif self.dtype.kind in "iu":
                arrays[name] = rng.integers(0 if self.dtype.kind == "u" else -5, 6, shape).astype(self.dtype)
            else:
                arrays[name] = rng.standard_normal(shape).astype(self.dtype)
        return arrays

    def arguments(self) -> tuple[list, dict]:
        """New arrays as arguments: positional up to the first parameter left to its default, by name after."""
        arrays = self.arrays()
        args = []
        for name in self.positional:
            if name not in arrays:
                break
            args.append(arrays.pop(name))
        return args, arrays

    def call(self, fn: Callable):
        """``fn`` called on new arrays."""
        args, kwargs = self.arguments()
        return fn(*args, **kwargs)

    def traced_shapes(self) -> dict[str, tuple]:
        return {name: (shape, self.dtype.name) for name, shape in self.shapes.items()}


# ---------------------------------------------------------------------------------------------------------
# The subcommands


def run_explain(args: argparse.Namespace) -> int:
    import graph_lab
    target = Target(args)
    print(target.call(graph_lab.explain(target.fn)))
    return 0


def captured_graphs(args: argparse.Namespace) -> list:
    """The graphs of the function: one from ``trace``, or those ``compile`` captured in one call."""
    import graph_lab
    target = Target(args)
    if args.capture == "trace":
        return [graph_lab.trace(target.fn, target.traced_shapes())]
    graphs = target.call(graph_lab.explain(target.fn)).graphs
    if not graphs:
        raise UsageError(f"compiling {target.label} captured no graph (it runs no array operation on its "
                         f"inputs): name a function that computes with its array parameters")
    return graphs


def run_ir(args: argparse.Namespace) -> int:
    graphs = captured_graphs(args)
    for i, graph in enumerate(graphs):
        if len(graphs) > 1:
            print(f"# graph {i + 1} of {len(graphs)}{' (after a graph break)' if i else ''}")
        print(graph)
    return 0


def run_view(args: argparse.Namespace) -> int:
    import graph_lab
    graphs = captured_graphs(args)
    page = graph_lab.view(graphs, args.output, title=args.target)
    nodes = sum(len(g.nodes) for g in graphs)
    print(f"wrote {page}: {len(graphs)} graph{'s' if len(graphs) != 1 else ''}, {nodes} nodes; open it in a "
          f"browser (it loads nothing from the network)")
    return 0


def interleaved_medians(variants: dict[str, Callable[[], object]], rounds: int, number: int) -> dict[str, float]:
    """Median seconds per call of each variant over ``rounds`` rounds of ``number`` calls.

    The variants are timed in turn, in a new order each round, so that a slow moment of a shared machine hits
    them alike and none always follows the same other one; each batch follows an untimed call and a garbage
    collection, so that it does not pay for the memory state the variant before it left behind."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    names, order = list(variants), random.Random(0)
    for _ in range(rounds):
        order.shuffle(names)
        for name in names:
            fn = variants[name]
            fn()
            gc.collect()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times[name].append((time.perf_counter() - start) / number)
    return {name: statistics.median(t) for name, t in times.items()}


def calls_per_round(fn: Callable[[], object], seconds: float = 0.02) -> int:
    """How many calls of ``fn`` take about ``seconds`` (at least one): short batches time badly."""
    fn()  # (the first call may pay for warming caches up)
    start = time.perf_counter()
    fn()
    single = max(time.perf_counter() - start, 1e-7)
    return max(1, min(100_000, int(seconds / single)))


def run_bench(args: argparse.Namespace) -> int:
    import graph_lab
    from .console import print_table
    from .backends.compiled import BACKENDS
    from .equivalence.compare import compare
    if args.backend not in BACKENDS:
        raise UsageError(f"unknown backend {args.backend!r}: choose one of {', '.join(BACKENDS)}")
    target = Target(args)
    compiled = graph_lab.compile(target.fn, backend=args.backend)
    want, got = target.call(target.fn), target.call(compiled)  # (the compiled function's first call captures)
    mismatch = compare(want, got)
    if mismatch is not None:
        print(f"{PROG} bench: the compiled function's result differs from eager NumPy's, so no time is "
              f"reported: {mismatch}", file=sys.stderr)
        return 1
    same_bits = compare(want, got, exact=True) is None
    positional, named = target.arguments()  # every timed call reads these same arrays
    variants = {"eager NumPy": lambda: target.fn(*positional, **named),
                f"graph_lab.compile (backend={args.backend})": lambda: compiled(*positional, **named)}
    number = args.number or calls_per_round(variants["eager NumPy"])
    medians = interleaved_medians(variants, args.rounds, number)
    base = medians["eager NumPy"]
    shapes = " ".join(f"{n}={','.join(map(str, s))}" for n, s in target.shapes.items())
    print(f"bench {target.label} ({shapes} {target.dtype.name}): median of {args.rounds} interleaved rounds of "
          f"{number} calls; the ratio is eager's time over each one's (above 1: faster than eager)")
    print_table(["", "us per call", "ratio to eager"],
                [[name, f"{t * 1e6:.1f}", f"{base / t:.2f}x"] for name, t in medians.items()])
    print("results: " + ("bit for bit eager NumPy's" if same_bits else
                         "equal to eager NumPy's within graph_lab's tolerance table, not bit for bit"))
    return 0


def run_lectures(args: argparse.Namespace) -> int:
    if not LECTURES.is_dir():
        raise UsageError(f"the lecture scripts come with a checkout of graph_lab's repository, not with the "
                         f"installed package ({PACKAGE_DIR} has no lectures/ beside it): clone the repository "
                         f"and run `python -m graph_lab lectures` in it")
    scripts = sorted(LECTURES.glob("[0-9]*.py"))
    if args.names:
        chosen = [s for s in scripts if any(s.name.startswith(n) for n in args.names)]
        unknown = [n for n in args.names if not any(s.name.startswith(n) for s in scripts)]
        if unknown:
            raise UsageError(f"no lecture script starts with {unknown[0]!r}; the scripts: "
                             f"{', '.join(s.name for s in scripts)}")
        scripts = chosen
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PACKAGE_DIR.parent),
                                                                     os.environ.get("PYTHONPATH")])))
    failed = []
    for script in scripts:
        print(f"===== {script.relative_to(LECTURES.parent.parent)}", flush=True)
        if subprocess.run([sys.executable, script.name], cwd=LECTURES, env=env).returncode != 0:
            failed.append(script.name)
    print(f"===== ran {len(scripts)} lecture script{'s' if len(scripts) != 1 else ''}: "
          + (f"{len(failed)} failed ({', '.join(failed)})" if failed else "all finished without an error"))
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------------------
# The parser


EXAMPLE_FILE = """example: with a file model.py holding

    def mlp(x, w):
        return np.maximum(x @ w, 0.0)

run

    graph-lab %s model.py:mlp --shapes x=4,8 w=8,16"""


def _target_command(commands, name: str, summary: str, run: Callable, details: str = "") -> argparse.ArgumentParser:
    """A subcommand that takes FILE.py:FUNC, its shapes, a dtype and a seed."""
    parser = commands.add_parser(name, help=summary, description=f"{summary}. {details}{TRUSTED_CODE}",
                                 epilog=EXAMPLE_FILE % name, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", metavar="FILE.py:FUNC", help="the file and the function in it")
    parser.add_argument("--shapes", nargs="+", action="extend", default=[], metavar="NAME=SIZES",
                        help="the shape of each parameter without a default, e.g. x=4,8 w=8,16 (x= for a 0-d "
                             "array); each gets a random array")
    parser.add_argument("--dtype", default="float64", help=f"the arrays' dtype: {', '.join(DTYPES)} "
                                                           f"(default float64)")
    parser.add_argument("--seed", type=int, default=0, help="the seed of the random arrays (default 0)")
    parser.set_defaults(run=run)
    return parser


def _capture_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--capture", choices=("trace", "compile"), default="trace",
                        help="trace: one graph from graph_lab.trace (a value-dependent branch is an error); "
                             "compile: the graphs graph_lab.compile captures in one call, with the graph breaks "
                             "between them (default trace)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="graph_lab from the command line: capture a NumPy "
                                     "function as a graph, show it, explain its compilation, time it.",
                                     epilog=TRUSTED_CODE)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _target_command(commands, "explain", "compile FUNC, call it once on random arrays, print explain()'s report",
                    run_explain, "The report lists the graphs, the graph breaks with their reasons, the guards "
                    "and the stitching code. ")
    _capture_option(_target_command(commands, "ir", "print the IR text of FUNC's graph", run_ir))
    view = _target_command(commands, "view", "write the viewer's HTML page of FUNC's graph", run_view,
                           "The page is self-contained: open it in any browser, offline. ")
    view.add_argument("-o", "--output", default="graph.html", help="the page to write (default graph.html)")
    _capture_option(view)
    bench = _target_command(commands, "bench", "time FUNC eagerly and compiled by graph_lab.compile", run_bench,
                            "The two are timed in turn over several rounds and the median of each is shown; "
                            "the compiled result is first checked against eager NumPy's. ")
    bench.add_argument("--backend", default="auto", help="compile()'s backend (default auto)")
    bench.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    bench.add_argument("--number", type=int, default=0, help="calls per round (default: about 20 ms of eager calls)")
    lectures = commands.add_parser("lectures", help="run the lecture-12 scripts (from a checkout)",
                                   description="Run the scripts in lectures/lecture12 of a checkout of graph_lab's "
                                               "repository, one after the other, and say which failed.")
    lectures.add_argument("names", nargs="*", metavar="NAME", help="only the scripts whose names start so, "
                                                                   "e.g. 05 (default: all)")
    lectures.set_defaults(run=run_lectures)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    from .errors import GraphLabError
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except UsageError as e:
        print(f"{PROG} {args.command}: error: {e}", file=sys.stderr)
        return 2
    except GraphLabError as e:
        print(f"{PROG} {args.command}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
