"""The package's layers (shared DESIGN: bytes -> keys -> stores -> reads -> analysis -> reports ->
operations -> CLI): every import of a keyshape module, at module level or inside a function, goes
to the same layer or one to its left, and module-level imports have no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "keyshape"

# Left to right; a module may import its own layer and those before it.
LAYERS = ["errors", "core", "schema", "workload", "store", "read", "analysis", "report", "ops", "phoenix", "spark", "cli"]
# Upward imports that are deliberate, each inside a function and with its reason.
ALLOWED_UP = {
    # `splits.algorithm = "sample"` takes quantiles of the schema's own generated workload, and lint
    # encodes a few generated rows; both run only when asked for.
    ("keyshape.schema.keyschema", "keyshape.workload"),
    ("keyshape.schema.lint", "keyshape.workload"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # keyshape itself: the public API re-exports every layer
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else None


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported keyshape module, at module level) for every import in the file."""
    tree = ast.parse(path.read_text())
    top = {id(n) for n in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("keyshape"):
            names = [f"{node.module}.{a.name}" for a in node.names]
            mods = [
                n
                for n in names
                if (SRC.parent / n.replace(".", "/")).with_suffix(".py").exists() or (SRC.parent / n.replace(".", "/") / "__init__.py").exists()
            ]
            for m in mods or [node.module]:
                out.append((m, id(node) in top))
        elif isinstance(node, ast.Import):
            out += [(a.name, id(node) in top) for a in node.names if a.name.startswith("keyshape")]
    return out


MODULES = {_module_name(p): p for p in SRC.rglob("*.py")}


def test_every_top_level_part_has_a_layer() -> None:
    tops = {m.split(".")[1] for m in MODULES if m.count(".") >= 1}
    assert tops <= set(LAYERS), f"not in a layer: {tops - set(LAYERS)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_goes_up_a_layer(module: str) -> None:
    mine = _layer(module)
    if mine is None:
        return
    for target, _ in _imports(MODULES[module]):
        theirs = _layer(target)
        if theirs is not None and theirs > mine:
            assert (module, ".".join(target.split(".")[:2])) in ALLOWED_UP, (
                f"{module} (layer {LAYERS[mine]}) imports {target} (layer {LAYERS[theirs]})"
            )


def test_module_level_imports_have_no_cycle() -> None:
    graph = {m: {t for t, top in _imports(p) if top and t in MODULES and t != m} for m, p in MODULES.items()}

    # A package's __init__ re-exporting its own modules is not a cycle between those modules.
    def edges(m: str) -> set[str]:
        return {t for t in graph[m] if not (MODULES[t].name == "__init__.py" and m.startswith(t + "."))}

    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in edges(m):
            if state.get(t) == 1:
                cycle = stack[stack.index(t) :] + [t]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
