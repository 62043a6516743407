"""Imports point one way: every import in graph_lab goes to the importing module's own layer or one below it.

The layers and their order are the table in docs/layout.md ("Layers"), read here, so the page and the rule
cannot drift apart. Every import counts: top-level, inside a function, under ``if TYPE_CHECKING:``; relative
imports are resolved against the importing module's package. A lazy import inside a method is still an
edge: the upper layer is what the method needs, whenever it runs.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support.package_modules import REPO, package_modules

LAYOUT = REPO / "docs" / "layout.md"

# Upward edges that are known and waiting for their move. Keep this list as short as possible: an edge is
# here only when the file that makes it is being edited by another session right now (frontends/dynamo/ and
# backends/), and is moved in a later session. Each entry: (importing module, imported module).
KNOWN_UPWARD = {
    # ExplainReport._repr_html_ draws with the viewer; being moved in a later session (to a hook the viewer
    # registers, as Graph's views are: graph_lab/graph_views.py).
    ("graph_lab.frontends.dynamo.explain", "graph_lab.viewer.notebook"),
}


def declared_layers(text: str) -> list[tuple[str, list[str]]]:
    """The rows of the "Layers" table: ``| 3 | ops | `ops` | ... |`` -> ("ops", ["graph_lab.ops"]), in order."""
    section = text.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            assert int(cells[0]) == len(layers) + 1, f"docs/layout.md: layer rows out of order at {line!r}"
            names = re.findall(r"`([\w.]+)`", cells[2])
            layers.append((cells[1], ["graph_lab" if n == "graph_lab" else f"graph_lab.{n}" for n in names]))
    return layers


LAYERS = declared_layers(LAYOUT.read_text(encoding="utf-8"))
MODULES = package_modules()


def layer_of(module: str) -> int:
    """The index of the layer that declares ``module``: the longest declared name that is the module or a
    package holding it (``ir.types`` before ``ir``)."""
    best, where = "", -1
    for index, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > len(best):
                best, where = name, index
    return where


def resolve(name: str) -> str:
    """The module an import of ``name`` loads last: ``graph_lab.ops`` for ``graph_lab.ops.Op``."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def imports(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, imported graph_lab module) for every import statement anywhere in the module."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, resolve(a.name)) for a in node.names if a.name.split(".")[0] == "graph_lab"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "graph_lab":
                continue
            for alias in node.names:  # ``from . import pytree`` imports the module graph_lab.frontends.pytree
                target = f"{source}.{alias.name}"
                found.append((node.lineno, target if target in MODULES else resolve(source)))
    return sorted(set(found))


def edges_against_the_order() -> list[str]:
    wrong = []
    for module, path in MODULES.items():
        mine = layer_of(module)
        for line, target in imports(module, path):
            theirs = layer_of(target)
            if theirs > mine and (module, target) not in KNOWN_UPWARD:
                wrong.append(f"{path.relative_to(REPO)}:{line}: {module} (layer {LAYERS[mine][0]}) imports "
                             f"{target} (layer {LAYERS[theirs][0]}, above it)")
    return wrong


def test_the_layout_page_declares_the_layers():
    names = [name for name, _ in LAYERS]
    assert names[:5] == ["base", "ir.core", "logs", "ops", "ir"], names
    assert names[-1] == "api" and len(names) == len(set(names))
    declared = [n for _, ns in LAYERS for n in ns]
    assert len(declared) == len(set(declared)), "a module is declared in two layers"
    for name in declared:
        assert name in MODULES, f"docs/layout.md declares {name}, which is not a module of graph_lab"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_has_a_layer(module):
    assert layer_of(module) >= 0, f"{module} is in no layer of docs/layout.md's table: add it to one"


def test_imports_point_down_the_layers():
    wrong = edges_against_the_order()
    assert not wrong, ("imports against the layer order of docs/layout.md (move the code to the layer that "
                       "owns it, or let the upper layer register a hook):\n" + "\n".join(wrong))


def test_known_upward_edges_still_exist():
    """An entry of KNOWN_UPWARD that no import makes any more is deleted, so the list only shrinks."""
    made = {(m, t) for m, p in MODULES.items() for _, t in imports(m, p)}
    assert KNOWN_UPWARD <= made, f"no longer imported, delete from KNOWN_UPWARD: {KNOWN_UPWARD - made}"


def test_the_checker_sees_every_kind_of_import(tmp_path, monkeypatch):
    """An upward import is found at the top, in a function, under TYPE_CHECKING, relative or absolute."""
    source = ("from typing import TYPE_CHECKING\n"
              "from ..errors import GraphLabError\n"
              "if TYPE_CHECKING:\n    from ..frontends.trace import trace\n"
              "def f():\n    from ..viewer import dot\n    import graph_lab.backends.python_source\n"
              "from . import types\n")
    path = tmp_path / "probe.py"
    path.write_text(source)
    monkeypatch.setitem(MODULES, "graph_lab.ir.probe", path)
    found = imports("graph_lab.ir.probe", path)
    assert found == [(2, "graph_lab.errors"), (4, "graph_lab.frontends.trace"), (6, "graph_lab.viewer.dot"),
                     (7, "graph_lab.backends.python_source"), (8, "graph_lab.ir.types")]
    up = [t for _, t in found if layer_of(t) > layer_of("graph_lab.ir.probe")]
    assert up == ["graph_lab.frontends.trace", "graph_lab.viewer.dot", "graph_lab.backends.python_source"]


def test_graph_views_are_registered_by_the_top_layer(monkeypatch):
    """``g.code``, ``g.to_python()``, ``g.to_dot()`` and ``g._repr_html_()`` come from the layers that write them,
    registered by graph_views.py; a view nobody registered is a clear error, not an import of an upper layer."""
    import numpy as np

    import graph_lab
    from graph_lab.ir import graph as ir_graph

    assert set(ir_graph.VIEWS) == {"code", "to_python", "to_dot", "html"}
    g = graph_lab.trace(lambda x: np.tanh(x) * 2.0, {"x": (3,)})
    x = np.array([-1.0, 0.0, 2.0])
    assert "np.tanh(" in g.code and g.to_dot().startswith("digraph")
    np.testing.assert_array_equal(g.to_python()(x=x)[0], np.tanh(x) * 2.0)
    assert "<svg" in g._repr_html_()
    monkeypatch.delitem(ir_graph.VIEWS, "to_dot")
    with pytest.raises(LookupError, match="no 'to_dot' view of a Graph is registered"):
        g.to_dot()
