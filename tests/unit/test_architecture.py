"""The package's layers and its import graph, counted over EVERY import.

The layer order is written once: the folder tree under ``src/keyshape/`` in the README's Layout
section, top to bottom (bytes first, the package root's re-exports last). Every import of a keyshape
module -- at module level, inside a function, under ``if TYPE_CHECKING:``, relative, or an
``importlib.import_module("keyshape...")``, and ``import_module(name)`` of a name held in a string
constant of the module (a tuple of module names read at run time) -- goes to the same layer or one above it in that tree,
and the import graph has no cycle (no strongly connected component of two or more modules).

The cycles and upward imports that exist today are listed below with their issue; the test fails on
any new one and on any listed one that no longer exists as listed, so the lists only shrink.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "keyshape"

# Cycles over every import that exist today (each a strongly connected component, exactly), with
# the issue that removes them. Remove an entry when its cycle is gone; never add one.
ALLOWED_CYCLES: dict[frozenset[str], str] = {}

# Imports that go up the layers today, each with its issue. Remove an entry when it is gone.
ALLOWED_UP: dict[tuple[str, str], str] = {}

_TREE_ENTRY = re.compile(r"^  (?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<kind>/|\.py)\s")


def read_layers(readme: str) -> list[str]:
    """The layers, lowest first: the entries directly under ``src/keyshape/`` in the first code
    block of the README's ``## Layout`` section (``errors.py`` -> ``errors``, ``core/`` -> ``core``;
    ``__init__.py``, the package root, -> ``keyshape``)."""
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```", 2)[1]
    layers: list[str] = []
    inside = False
    for line in block.splitlines():
        if line.rstrip() == "src/keyshape/":
            inside = True
            continue
        if inside and line and not line.startswith(" "):
            break  # the next top-level folder (examples/, tests/ ...)
        match = _TREE_ENTRY.match(line) if inside else None
        if match:
            name = match["name"]
            layers.append("keyshape" if name == "__init__" else name)
    return layers


LAYERS = read_layers((ROOT / "README.md").read_text(encoding="utf-8"))


def _module_name(path: Path, src: Path = SRC) -> str:
    parts = path.relative_to(src.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def find_modules(src: Path = SRC) -> dict[str, Path]:
    """Every module of the package, by dotted name (a package by its ``__init__``)."""
    return {_module_name(p, src): p for p in sorted(src.rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module a dotted name lives in: the longest prefix that is a module."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, source: str, modules: dict[str, Path], is_package: bool = False) -> set[str]:
    """Every keyshape module ``source`` imports, wherever the import statement stands."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str | None] = set()
    tree = ast.parse(source)
    # Names of keyshape modules held in string constants: imported by any import_module/__import__
    # call of the module whose argument is not a constant (a name from a tuple, a parameter).
    held = {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and re.fullmatch(r"keyshape(\.[A-Za-z_][A-Za-z0-9_]*)+", n.value)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x, from ..store import y
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            if base.split(".")[0] != "keyshape":
                continue
            for alias in node.names:
                # `from keyshape.store import hbase` imports the module keyshape.store.hbase;
                # `from keyshape.store import open_store` imports keyshape.store.
                found.add(_resolve(f"{base}.{alias.name}", modules) or _resolve(base, modules))
        elif isinstance(node, ast.Import):
            found.update(_resolve(a.name, modules) for a in node.names if a.name.split(".")[0] == "keyshape")
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            first = node.args[0] if node.args else None
            if called not in {"import_module", "__import__"} or first is None:
                continue
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                if first.value.split(".")[0] == "keyshape":
                    found.add(_resolve(first.value, modules))
            elif not isinstance(first, ast.JoinedStr):  # an f-string of a package's own submodules is not resolved
                found.update(_resolve(name, modules) for name in held if name in modules)
    found.discard(None)
    found.discard(module)
    return {m for m in found if m is not None}


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    modules = find_modules(src)
    return {m: imports_of(m, p.read_text(encoding="utf-8"), modules, p.name == "__init__.py") for m, p in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of two or more modules (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in graph:
                    continue
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def cycle_path(graph: dict[str, set[str]], component: frozenset[str]) -> list[str]:
    """One concrete cycle through the component, for the failure message: a -> b -> a."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for target in sorted(graph[node] & component):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if target not in previous:
                    previous[target] = node
                    nxt.append(target)
        frontier = nxt
    return sorted(component)


def _layer(module: str) -> int | None:
    if module == "keyshape":
        return LAYERS.index("keyshape")
    part = module.split(".")[1]
    return LAYERS.index(part) if part in LAYERS else None


MODULES = find_modules()
GRAPH = import_graph()


def test_the_layer_order_is_read_from_the_readme() -> None:
    """The README's tree is the one place the order is written; it lists every top-level part of
    the package once, and nothing that is not there."""
    assert LAYERS[:3] == ["errors", "core", "schema"], LAYERS
    # (__main__.py, `python -m keyshape`, only runs the CLI: it may stand between the two)
    assert [name for name in LAYERS if name != "__main__"][-2:] == ["cli", "keyshape"], (
        "the CLI and then the package root (__init__.py) close the tree"
    )
    assert len(LAYERS) == len(set(LAYERS)), LAYERS
    tops = {m.split(".")[1] for m in MODULES if m.count(".") >= 1} | {"keyshape"}
    assert tops - set(LAYERS) == set(), f"not in the README's Layout tree (so in no layer): {sorted(tops - set(LAYERS))}"
    assert set(LAYERS) - tops == set(), f"in the README's Layout tree but not in src/keyshape: {sorted(set(LAYERS) - tops)}"


def test_the_graph_counts_every_kind_of_import(tmp_path: Path) -> None:
    """Function-level, TYPE_CHECKING-only, relative and importlib imports are all edges: the
    module-level-only graph this test used to draw missed the cli/analyze <-> cli/hbase cycle."""
    pkg = tmp_path / "keyshape"
    (pkg / "sub").mkdir(parents=True)
    for name in ["__init__.py", "a.py", "b.py", "c.py", "d.py", "e.py", "g.py", "h.py", "sub/__init__.py", "sub/f.py"]:
        (pkg / name).write_text("")
    (pkg / "a.py").write_text("def f():\n    from keyshape.b import thing\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from keyshape import c\n")
    (pkg / "c.py").write_text("import importlib\nimportlib.import_module('keyshape.a')\n")
    # a name held in a tuple and imported by import_module(name): counted too (issue 43)
    (pkg / "g.py").write_text("import importlib\nNAMES = ('keyshape.h',)\ndef load():\n    for n in NAMES:\n        importlib.import_module(n)\n")
    (pkg / "h.py").write_text("from keyshape import g\n")
    (pkg / "d.py").write_text("from .sub import f\nfrom . import e\n")
    (pkg / "sub" / "f.py").write_text("from ..d import x\nimport keyshape.e\n")
    graph = import_graph(pkg)
    assert graph["keyshape.a"] == {"keyshape.b"}
    assert graph["keyshape.b"] == {"keyshape.c"}
    assert graph["keyshape.c"] == {"keyshape.a"}
    assert graph["keyshape.d"] == {"keyshape.sub.f", "keyshape.e"}
    assert graph["keyshape.sub.f"] == {"keyshape.d", "keyshape.e"}
    found = cycles(graph)
    assert graph["keyshape.g"] == {"keyshape.h"} and graph["keyshape.h"] == {"keyshape.g"}
    assert sorted(map(sorted, found)) == [["keyshape.a", "keyshape.b", "keyshape.c"], ["keyshape.d", "keyshape.sub.f"], ["keyshape.g", "keyshape.h"]]
    assert cycle_path(graph, frozenset({"keyshape.a", "keyshape.b", "keyshape.c"})) == ["keyshape.a", "keyshape.b", "keyshape.c", "keyshape.a"]


def test_the_graph_covers_the_package_root() -> None:
    assert "keyshape" in GRAPH and "keyshape.analysis" in GRAPH["keyshape"]  # its TYPE_CHECKING re-exports


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_goes_up_a_layer(module: str) -> None:
    mine = _layer(module)
    assert mine is not None, f"{module} is in no layer"
    for target in sorted(GRAPH[module]):
        theirs = _layer(target)
        assert theirs is not None
        if theirs > mine:
            assert (module, target) in ALLOWED_UP, f"{module} (layer {LAYERS[mine]}) imports {target} (layer {LAYERS[theirs]}), above it"


def test_allowed_upward_imports_still_exist() -> None:
    gone = [f"{a} -> {b} ({why})" for (a, b), why in ALLOWED_UP.items() if b not in GRAPH.get(a, set())]
    assert not gone, "no longer imported: remove from ALLOWED_UP in tests/unit/test_architecture.py: " + "; ".join(gone)


def test_no_new_import_cycle() -> None:
    """Every strongly connected component is one allow-listed exactly: a new cycle fails, and so
    does one that grew."""
    new = [c for c in cycles(GRAPH) if c not in ALLOWED_CYCLES]
    assert not new, "import cycle: " + "; ".join(" -> ".join(cycle_path(GRAPH, c)) for c in new)


def test_allowed_cycles_still_exist_as_listed() -> None:
    """So the list only shrinks: a cycle broken (or reduced to fewer modules) must leave the list."""
    found = set(cycles(GRAPH))
    stale = [f"{sorted(c)} ({why})" for c, why in ALLOWED_CYCLES.items() if c not in found]
    now = [sorted(c) for c in found]
    assert not stale, f"no longer a cycle as listed: update ALLOWED_CYCLES in tests/unit/test_architecture.py: {stale}; the cycles now: {now}"
