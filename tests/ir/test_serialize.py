"""save/load: one .npz holds the IR text and the parameter values, and load gives back the same graph.
A malformed or malicious file raises GraphLoadError (GraphParseError for its text) and nothing else, and a
pickled object inside a file is never unpickled.
"""

from __future__ import annotations

import io
import json
import pickle
import random
import warnings
import zipfile

import numpy as np
import pytest

import graph_lab as gl
from tests.support.ir_corpus import CASES
from tests.ir.test_parser import all_params, assert_same_bits, assert_same_graph, assert_same_value


def build(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return CASES[name]()


@pytest.mark.parametrize("name", ["mlp", "guards", "awkward_names", "constants", "indexing", "no_outputs"])
def test_save_then_load_gives_the_same_graph_params_and_results(tmp_path, name):
    graph, inputs = build(name)
    path = tmp_path / "model.npz"
    gl.save(graph, path)
    loaded = gl.load(path)
    assert str(loaded) == str(graph)
    assert_same_graph(loaded, graph)
    params, loaded_params = all_params(graph), all_params(loaded)
    assert loaded_params.keys() == params.keys()
    for key in params:
        assert_same_value(loaded_params[key], params[key], key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same_bits(gl.run(loaded, inputs), gl.run(graph, inputs))
    assert gl.check_guards(loaded, inputs)
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]  # the temporary file was renamed into place


def test_save_writes_exactly_the_path_given(tmp_path):
    graph, _ = build("lambda")
    gl.save(graph, tmp_path / "model.graph")
    assert [p.name for p in tmp_path.iterdir()] == ["model.graph"]
    assert str(gl.load(tmp_path / "model.graph")) == str(graph)


def test_save_refuses_what_would_not_load_back(tmp_path):
    graph, _ = build("lambda")
    graph.outputs.append(graph.add_const(np.ones(2, np.longdouble)))  # a dtype the IR text cannot write
    with pytest.raises(gl.GraphSaveError, match="does not read back"):
        gl.save(graph, tmp_path / "a.npz")
    guarded, _ = build("guards")
    guarded.guards[0].graph.param_values["p['scale']"] = np.zeros((4, 6))
    guarded.param_values["p['scale']"] = np.ones((4, 6))
    guarded.nodes.insert(1, guarded.guards[0].graph.nodes[1])
    with pytest.raises(gl.GraphSaveError, match="two different values"):
        gl.save(guarded, tmp_path / "b.npz")
    mlp, _ = build("mlp")
    mlp.param_values.clear()
    with pytest.raises(gl.GraphSaveError, match="has no value"):
        gl.save(mlp, tmp_path / "c.npz")
    assert list(tmp_path.iterdir()) == []


# --- malformed and malicious files


@pytest.fixture(scope="module")
def members(tmp_path_factory) -> dict[str, bytes]:
    path = tmp_path_factory.mktemp("good") / "good.npz"
    graph, _ = build("mlp")
    gl.save(graph, path)
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


def npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def zip_of(members: dict[str, bytes], *extra: tuple[str, bytes]) -> bytes:
    """A zip of ``members`` then ``extra`` (name, data) pairs, which may repeat a name."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as z:
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns about a duplicate name
        for name, data in [*members.items(), *extra]:
            z.writestr(name, data)
    return buffer.getvalue()


def meta(names) -> bytes:
    return npy(np.frombuffer(json.dumps({"format": "graph_lab", "version": 1, "params": names}).encode(), np.uint8))


def text_member(text: str) -> bytes:
    return npy(np.frombuffer(text.encode(), np.uint8))


def npy_header(shape, descr: str = "<f8") -> bytes:
    """A .npy file that only claims ``shape``: its header, and 8 bytes of data."""
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}".encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\x00" * 8


def assert_refused(path, **kwargs) -> gl.GraphLoadError:
    with pytest.raises(gl.GraphLoadError) as info:
        gl.load(path, **kwargs)
    assert type(info.value) in (gl.GraphLoadError, gl.GraphParseError)
    return info.value


def malformed_files(members: dict[str, bytes]) -> dict[str, bytes]:
    good = zip_of(members)
    mlp_text = members["graph_ir.npy"]
    names = json.loads(np.load(io.BytesIO(members["meta.npy"])).tobytes())["params"]
    params = {k: v for k, v in members.items() if k.startswith("param_")}
    without = lambda *keys: {k: v for k, v in members.items() if k not in keys}  # noqa: E731
    return {
        "empty": b"",
        "text": b"graph f {\n}\n",
        "npy instead of npz": npy(np.arange(3)),
        "pickle instead of npz": pickle.dumps({"graph_ir": 1}),
        "truncated zip": good[:len(good) // 2],
        "zip header only": good[:30],
        "missing graph_ir": zip_of(without("graph_ir.npy")),
        "missing a param": zip_of(without("param_3.npy")),
        "renamed member": zip_of({**without("graph_ir.npy"), "graph_ir2.npy": mlp_text}),
        "extra member": zip_of({**members, "evil.npy": npy(np.zeros(1))}),
        "path-like member": zip_of({**members, "../../evil.npy": npy(np.zeros(1))}),
        "duplicate member": zip_of(members, ("param_0.npy", npy(np.zeros(3)))),
        "not npy data": zip_of({**members, "graph_ir.npy": b"graph f {}"}),
        "graph_ir int64": zip_of({**members, "graph_ir.npy": npy(np.arange(5))}),
        "graph_ir 2-D": zip_of({**members, "graph_ir.npy": npy(np.zeros((2, 2), np.uint8))}),
        "graph_ir not utf-8": zip_of({**members, "graph_ir.npy": npy(np.array([0xFF, 0xFE], np.uint8))}),
        "graph_ir bad text": zip_of({**members, "graph_ir.npy": text_member("graph f {\n  return %9\n}")}),
        "meta not json": zip_of({**members, "meta.npy": npy(np.frombuffer(b"{nope", np.uint8))}),
        "meta deeply nested": zip_of({**members, "meta.npy": npy(np.frombuffer(b"[" * 100_000, np.uint8))}),
        "meta wrong version": zip_of({**members, "meta.npy": npy(np.frombuffer(b'{"format": "graph_lab", '
                                                                               b'"version": 9}', np.uint8))}),
        "meta names not str": zip_of({**members, "meta.npy": meta([1, 2, 3, 4, 5])}),
        "meta duplicate names": zip_of({**members, "meta.npy": meta([names[0]] * len(names))}),
        "meta path-like names": zip_of({**members, "meta.npy": meta(["../../etc/passwd"] + names[1:])}),
        "meta fewer names": zip_of({**without("param_4.npy"), "meta.npy": meta(names[:4])}),
        "param wrong shape": zip_of({**members, "param_0.npy": npy(np.zeros((3, 3)))}),
        "param wrong dtype": zip_of({**members, "param_0.npy": npy(np.zeros((8, 16), np.float32))}),
        "param big-endian": zip_of({**members, "param_0.npy": npy(np.zeros((8, 16), ">f8"))}),
        "param structured": zip_of({**members, "param_0.npy": npy(np.zeros(2, [("a", "f8")]))}),
        "param huge dims": zip_of({**members, "param_0.npy": npy_header((10**12,))}),
        "param enormous dims": zip_of({**members, "param_0.npy": npy_header((2**62, 2**62))}),
        "param negative dims": zip_of({**members, "param_0.npy": npy_header((-1, -8))}),
        "param header lies": zip_of({**members, "param_0.npy": npy_header((8, 16))}),
        "params swapped": zip_of({**members, "param_0.npy": params["param_1.npy"],
                                  "param_1.npy": params["param_0.npy"]}),
    }


def test_malformed_files_raise_only_graph_load_error(tmp_path, members):
    for label, data in malformed_files(members).items():
        path = tmp_path / f"{label}.npz"
        path.write_bytes(data)
        error = assert_refused(path)
        assert str(error), label


def test_truncated_and_bit_flipped_files_raise_only_graph_load_error(tmp_path, members):
    good = zip_of(members)
    rng = random.Random(99)
    path = tmp_path / "bad.npz"
    cases = [good[:n] for n in range(0, len(good), max(1, len(good) // 150))]
    for _ in range(300):
        data = bytearray(good)
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        cases.append(bytes(data))
    for data in cases:
        path.write_bytes(data)
        try:
            loaded = gl.load(path)
        except gl.GraphLoadError:
            continue
        assert str(loaded)  # a flip the zip format does not notice (e.g. in a file comment) may still load


def test_sizes_over_max_bytes_are_refused(tmp_path, members):
    path = tmp_path / "g.npz"
    path.write_bytes(zip_of(members))
    assert "more than max_bytes=1000" in str(assert_refused(path, max_bytes=1000))
    assert gl.load(path) is not None


class Canary:
    """Unpickling this object creates a file: the proof that a loader unpickled something."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return open, (self.path, "w")


@pytest.mark.parametrize("member", ["graph_ir", "meta", "param_0"])
def test_pickled_objects_in_a_file_are_never_unpickled(tmp_path, members, member):
    canary = tmp_path / "canary"
    arrays = {name[:-4]: np.load(io.BytesIO(data)) for name, data in members.items()}
    arrays[member] = np.array([Canary(canary)], dtype=object)
    path = tmp_path / "evil.npz"
    np.savez(path, allow_pickle=True, **arrays)

    with np.load(path, allow_pickle=True) as npz:  # the control: unpickling does create the canary...
        npz[member]
    assert canary.exists()
    canary.unlink()

    error = assert_refused(path)  # ...and load refuses the file without unpickling it
    assert not canary.exists()
    assert "object" in str(error)


def test_a_pickle_posing_as_a_member_is_not_unpickled(tmp_path, members):
    canary = tmp_path / "canary"
    path = tmp_path / "evil.npz"
    path.write_bytes(zip_of({**members, "param_0.npy": pickle.dumps(Canary(canary))}))
    assert_refused(path)
    path.write_bytes(pickle.dumps(Canary(canary)))
    assert_refused(path)
    assert not canary.exists()


def test_a_path_that_cannot_be_opened_raises_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        gl.load(tmp_path / "missing.npz")
