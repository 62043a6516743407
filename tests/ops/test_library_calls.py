"""The registry of pure NumPy library functions (graph_lab/ops/library.py): one ``library_call`` node per call, by
its full NumPy name, through every frontend; saved graphs load only names of the registry; calls outside it are
refused (trace) or graph breaks (compile) with the full NumPy name. The registry's entries are also op samples in
tests/support/opinfo_coverage.py (every backend, symbolic sizes, print -> parse)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import graph_lab as gl
from graph_lab import GraphLoadError, LazyRunner, TraceError, parse, run, trace
from graph_lab.ops.library import LIBRARY
from tests.support.opinfo import SAMPLES  # noqa: F401  (opinfo first: it builds the table opinfo_coverage adds to)
from tests.support.opinfo_coverage import LIBRARY as LIBRARY_SAMPLES

RNG = np.random.default_rng(5)


def spd(n):
    a = RNG.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def solve_and_norm(a, b):
    x = np.linalg.solve(a, b)
    return x, np.linalg.norm(x, axis=0)


def test_each_call_is_one_node_named_by_its_full_numpy_name():
    g = trace(solve_and_norm, {"a": (3, 3), "b": (3, 2)})
    calls = [n for n in g.nodes if n.op == "library_call"]
    assert [n.attrs["name"] for n in calls] == ["numpy.linalg.solve", "numpy.linalg.norm"]
    assert 'name="numpy.linalg.solve"' in str(g)
    a, b = spd(3), RNG.standard_normal((3, 2))
    for got, want in zip(run(g, {"a": a, "b": b}), solve_and_norm(a, b)):
        np.testing.assert_array_equal(got, want, strict=True)


def test_every_registry_entry_has_an_op_sample():
    names = set()
    for sample in LIBRARY_SAMPLES:
        g = trace(lambda *xs: sample.fn(*xs), {f"x{i}": (x.shape, x.dtype) for i, x in enumerate(sample.inputs)})
        names |= {n.attrs["name"] for n in g.nodes if n.op == "library_call"}
    assert names == set(LIBRARY)


def test_namedtuple_results_keep_their_fields():
    def fn(a):
        q, r = np.linalg.qr(a)
        w = np.linalg.eigh(a @ a.T)
        return q @ r, w.eigenvalues, np.linalg.svd(a).S
    a = RNG.standard_normal((4, 3))
    g = trace(fn, {"a": (4, 3)})
    for got, want in zip(run(g, {"a": a}), fn(a)):
        np.testing.assert_array_equal(got, want, strict=True)


def test_lazy_and_compile_record_library_calls():
    a, b = spd(4), RNG.standard_normal(4)
    lr = LazyRunner()
    lazy = lr.materialize(np.linalg.solve(lr.tensor(a), lr.tensor(b)) * 2.0)
    np.testing.assert_array_equal(lazy, np.linalg.solve(a, b) * 2.0, strict=True)

    def fn(a, b):
        return np.fft.rfft(np.linalg.solve(a, b)).real, np.linalg.det(a)
    compiled = gl.compile(fn)
    for got, want in zip(compiled(a, b), fn(a, b)):
        np.testing.assert_array_equal(got, want, strict=True)
    report = gl.explain(fn)(a, b)
    assert len(report.graphs) == 1 and not report.breaks


def test_symbolic_sizes():
    def fn(a, b):
        return np.linalg.solve(a, b), np.fft.rfft(b, axis=0)
    g = trace(fn, {"a": (("n", "n"), np.float64), "b": (("n", "k"), np.float64)},
              example={"a": spd(3), "b": RNG.standard_normal((3, 2))})
    assert "f64[n,k]" in str(g) and "c128[n//2+1,k]" in str(g)
    for n, k in [(2, 3), (5, 2)]:
        a, b = spd(n), RNG.standard_normal((n, k))
        for got, want in zip(run(g, {"a": a, "b": b}), fn(a, b)):
            np.testing.assert_array_equal(got, want, strict=True)


def test_a_saved_graph_with_a_registry_call_loads(tmp_path):
    g = trace(solve_and_norm, {"a": (3, 3), "b": (3, 2)})
    path = tmp_path / "solve.npz"
    gl.save(g, path)
    loaded = gl.load(path)
    assert str(loaded) == str(g)
    a, b = spd(3), RNG.standard_normal((3, 2))
    for got, want in zip(run(loaded, {"a": a, "b": b}), solve_and_norm(a, b)):
        np.testing.assert_array_equal(got, want, strict=True)


@pytest.mark.parametrize("name", ["numpy.linalg.eig", "os.system", "numpy.load", "builtins.eval"])
def test_an_unknown_name_in_a_saved_file_is_a_load_error(tmp_path, name):
    g = trace(lambda a: np.linalg.inv(a), {"a": (3, 3)})
    text = str(g).replace('"numpy.linalg.inv"', f'"{name}"')
    assert name in text
    with pytest.raises(GraphLoadError, match="not in the registry of pure NumPy functions"):
        parse(text)
    path = tmp_path / "bad.npz"
    gl.save(g, path)
    import zipfile
    with zipfile.ZipFile(path) as z:
        members = {m: z.read(m) for m in z.namelist()}
    import io
    raw = np.load(io.BytesIO(members["graph_ir.npy"]))
    members["graph_ir.npy"] = _npy(np.frombuffer(raw.tobytes().decode().replace('"numpy.linalg.inv"', f'"{name}"')
                                                 .encode(), np.uint8))
    with zipfile.ZipFile(path, "w") as z:
        for m, data in members.items():
            z.writestr(m, data)
    with pytest.raises(GraphLoadError, match="not in the registry"):
        gl.load(path)


def _npy(array):
    import io
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def test_an_unregistered_keyword_in_a_saved_text_is_refused():
    g = trace(lambda a: np.linalg.norm(a, axis=1), {"a": (3, 3)})
    text = str(g).replace("keepdims=False", "keepdims=False extra=1")
    with pytest.raises(GraphLoadError, match="not its keywords"):
        parse(text)


def test_trace_names_a_function_outside_the_registry_in_full():
    with pytest.raises(TraceError, match=r"numpy\.linalg\.eig is not in the op table or the registry of pure NumPy "
                                         r"functions") as info:
        trace(lambda a: np.linalg.eig(a), {"a": (3, 3)})
    assert "test_library_calls.py" in str(info.value)  # the user's line
    with pytest.raises(TraceError, match=r"numpy\.fft\.hfft "):
        trace(lambda a: np.fft.hfft(a), {"a": (4,)})


def test_compile_breaks_on_a_function_outside_the_registry_with_the_reason():
    def fn(a):
        w = np.linalg.eigvals(a)
        return np.sort(np.abs(w)) * 2.0
    a = spd(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(gl.compile(fn)(a), fn(a))
        report = gl.explain(fn)(a)
    assert len(report.breaks) == 1
    reason = report.breaks[0].reason
    assert "numpy.linalg.eigvals" in reason and "not in the op table or the registry of pure NumPy functions" in reason


def test_keywords_must_be_static():
    with pytest.raises(TraceError, match="ord"):
        trace(lambda a, o: np.linalg.norm(a, ord=o), {"a": (3,), "o": ()})
    with pytest.raises(TraceError, match="keyword 'bogus' is not supported in a graph"):
        trace(lambda a: gl.F.library_call("numpy.linalg.norm", a, bogus=1), {"a": (3,)})
    with pytest.raises(TraceError, match="not in the registry of pure NumPy functions"):
        trace(lambda a: gl.F.library_call("numpy.linalg.eig", a), {"a": (3, 3)})
