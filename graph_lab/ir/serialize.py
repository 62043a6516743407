"""Save a graph to one ``.npz`` file and load it back, safely: loading never imports, evaluates or unpickles.

The file is a zip of ``.npy`` arrays, as ``np.savez`` writes it:

    graph_ir   uint8[n]  the printed IR (``str(graph)``), UTF-8: the graph, its types, constants and guards
    meta       uint8[m]  UTF-8 JSON {"format": "graph_lab", "version": 1, "params": [name of param_0, ...]}
    param_0    ...       the value of each parameter, under a generated key (a name may be any text)

``load`` opens it with ``np.load(allow_pickle=False)``, accepts exactly these members, reads each array's header
before its data (numeric and bool dtypes only, sizes that agree with the member and stay under ``max_bytes``),
and parses the text with the parameter values, which must match the printed types. Anything wrong inside the
file raises ``GraphLoadError`` (``GraphParseError`` is a subclass) and nothing else; a path that cannot be
opened raises the usual ``OSError``.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from ..errors import GraphLoadError, GraphParseError, GraphSaveError
from .graph import Graph
from .parser import MAX_TEXT_CHARS, parse
from .printer import print_graph
from .types import TensorType, dtype_name

FORMAT, VERSION = "graph_lab", 1
TEXT_KEY, META_KEY = "graph_ir", "meta"
MAX_META_BYTES = 2**20
"""Largest ``meta`` member: the JSON list of parameter names."""
MAX_PARAMS = 100_000
"""Most parameters in one file."""
DEFAULT_MAX_BYTES = 2**32
"""Default cap on the uncompressed size of all members together (4 GiB); ``load(path, max_bytes=...)``."""

_PARAM_DTYPES = frozenset(np.dtype(d) for d in (
    np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16,
    np.uint8, np.bool_, np.complex128, np.complex64))
_BYTES = np.dtype(np.uint8)


def save(graph: Graph, path: str | os.PathLike) -> None:
    """Write ``graph`` (text, guards and parameter values) to ``path`` as one ``.npz`` file, without pickle.

    The text is parsed back first, so a graph that would not load exactly is refused and nothing is written.
    The file is written beside ``path`` and renamed into place, so a crash never leaves half a file where a
    good one was.

    Parameters:
        graph: the graph to save.
        path: the file to write, exactly there (no ``.npz`` added).

    Raises:
        GraphSaveError: the graph would not load back exactly.
        OSError: the file cannot be written.
    """
    text = print_graph(graph)
    params = _all_params(graph)
    try:
        if str(parse(text, params)) != text:
            raise GraphSaveError(f"graph {graph.name} prints a text that does not read back the same; it holds a "
                                 f"value the IR text cannot write exactly")
    except GraphParseError as e:
        raise GraphSaveError(f"graph {graph.name} cannot be saved: its printed text does not read back: {e}") \
            from None
    names = list(params)
    arrays = {TEXT_KEY: np.frombuffer(text.encode("utf-8"), _BYTES),
              META_KEY: np.frombuffer(json.dumps({"format": FORMAT, "version": VERSION, "params": names})
                                      .encode("utf-8"), _BYTES)}
    for i, name in enumerate(names):
        arrays[f"param_{i}"] = params[name]
    tmp_path = f"{os.fspath(path)}.{os.getpid()}.tmp"
    try:
        with open(tmp_path, "wb") as tmp:
            np.savez(tmp, **arrays)  # all numeric: parse() above accepted each param's dtype, so nothing pickles
        os.replace(tmp_path, path)
    except BaseException:
        if os.path.exists(tmp_path):
            os.unlink(tmp_path)
        raise


def _all_params(graph: Graph) -> dict[str, np.ndarray]:
    """The parameter values of ``graph`` and of its guards' graphs, which share one namespace."""
    params: dict[str, np.ndarray] = {}
    pending = [graph]
    while pending:
        g = pending.pop(0)
        for node in g.param_nodes:
            name = node.attrs["name"]
            if name not in g.param_values:
                raise GraphSaveError(f"graph {g.name}: param {name!r} has no value (fill graph.param_values)")
            value = g.param_values[name]
            seen = params.setdefault(name, value)
            if seen is not value and not _same_bits(seen, value):
                raise GraphSaveError(f"param {name!r} has two different values in graph {graph.name} and its "
                                     f"guards; one file holds one value per name")
        pending.extend(guard.graph for guard in g.guards if hasattr(guard, "graph"))  # shape guards have none
    return params


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.ascontiguousarray(a).tobytes() == \
        np.ascontiguousarray(b).tobytes()


def load(path: str | os.PathLike, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Graph:
    """The graph saved at ``path`` by :func:`save`, with its guards and parameter values.

    Loading never imports, evaluates or unpickles anything: members are read with ``allow_pickle=False`` after
    their header, dtype and size are checked, and ops are resolved only through the op table.

    Parameters:
        path: the file ``save`` wrote.
        max_bytes: the largest total size of the file's members that is read (a bound against hostile files).

    Returns:
        The loaded ``Graph``.

    Raises:
        GraphLoadError: anything wrong in the file (``GraphParseError``, a subclass, for the text).
        OSError: only when ``path`` cannot be opened.
    """
    with open(path, "rb") as f:
        try:
            return _load(f, max_bytes)
        except GraphLoadError:
            raise
        except Exception as e:  # zipfile, zlib, NumPy's header reader... every way a bad file can fail
            raise GraphLoadError(f"{os.fspath(path)}: not a readable graph_lab file ({type(e).__name__}: {e})") \
                from e


def _load(f, max_bytes: int) -> Graph:
    if f.read(4) != b"PK\x03\x04":
        raise GraphLoadError("not an .npz file (a zip of .npy arrays, as graph_lab.save writes)")
    f.seek(0)
    with np.load(f, allow_pickle=False) as npz:
        members = npz.zip.infolist()
        total = sum(info.file_size for info in members)
        if total > max_bytes:
            raise GraphLoadError(f"the file's members hold {total} bytes uncompressed, more than max_bytes="
                                 f"{max_bytes}")
        meta = _read_json(_read_member(npz, META_KEY, MAX_META_BYTES, {_BYTES}))
        names = _param_names(meta)
        expected = [TEXT_KEY, META_KEY] + [f"param_{i}" for i in range(len(names))]
        found = [info.filename for info in members]
        if sorted(found) != sorted(f"{key}.npy" for key in expected):
            raise GraphLoadError(f"the file's members are {_short(found)}; expected exactly "
                                 f"{_short([k + '.npy' for k in expected])}")
        raw = _read_member(npz, TEXT_KEY, 4 * MAX_TEXT_CHARS, {_BYTES})
        try:
            text = raw.tobytes().decode("utf-8")
        except UnicodeDecodeError as e:
            raise GraphLoadError(f"{TEXT_KEY} is not UTF-8 text: {e}") from None
        params = {name: _read_member(npz, f"param_{i}", max_bytes, _PARAM_DTYPES) for i, name in enumerate(names)}
    return parse(text, params)


def _read_member(npz, key: str, limit: int, dtypes: set[np.dtype] | frozenset[np.dtype]) -> np.ndarray:
    """One array, after its ``.npy`` header was checked: an allowed dtype (never object), a size that agrees with
    the member's, under ``limit`` bytes. Only then does NumPy read the data (still with allow_pickle=False)."""
    try:
        info = npz.zip.getinfo(f"{key}.npy")
    except KeyError:
        raise GraphLoadError(f"the file has no member {key}.npy") from None
    if info.file_size > limit:
        raise GraphLoadError(f"{key} holds {info.file_size} bytes, more than the {limit} allowed")
    with npz.zip.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise GraphLoadError(f"{key}: .npy format version {version} is not one graph_lab writes")
        header_bytes = member.tell()
    if dtype not in dtypes:
        allowed = ", ".join(sorted(dtype_name(d) for d in dtypes))
        raise GraphLoadError(f"{key} has dtype {dtype}; allowed: {allowed} (object arrays are never loaded)")
    if dtypes is not _PARAM_DTYPES and len(shape) != 1:
        raise GraphLoadError(f"{key} must be a 1-D uint8 array, it has shape {shape}")
    if any(d < 0 for d in shape):
        raise GraphLoadError(f"{key}: its header has a negative size in shape {shape}")
    data_bytes = math.prod(shape) * dtype.itemsize
    if header_bytes + data_bytes != info.file_size:
        raise GraphLoadError(f"{key}: its header says {TensorType(dtype, tuple(shape))} ({data_bytes} bytes) but "
                             f"the member holds {info.file_size - header_bytes} bytes of data")
    return npz[key]


def _read_json(raw: np.ndarray):
    try:
        return json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise GraphLoadError(f"{META_KEY} is not UTF-8 JSON: {e}") from None


def _param_names(meta) -> list[str]:
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise GraphLoadError(f"{META_KEY} does not say format {FORMAT!r}, version {VERSION}: not a file this "
                             f"version of graph_lab wrote")
    names = meta.get("params")
    if not isinstance(names, list) or len(names) > MAX_PARAMS or not all(isinstance(n, str) for n in names):
        raise GraphLoadError(f"{META_KEY}['params'] must be a list of at most {MAX_PARAMS} parameter names")
    if len(set(names)) != len(names):
        raise GraphLoadError(f"{META_KEY}['params'] names a parameter twice")
    return names


def _short(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in sorted(names)[:6])
    return f"[{shown}{', ...' if len(names) > 6 else ''}]"
