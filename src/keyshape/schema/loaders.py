"""The registry of schema file kinds: :func:`keyshape.schema.load_schema` (and ``KeySchema.load``)
asks it which loader reads a file.

A layer above the schema layer that defines a kind of schema file registers its loader here
(:func:`register_loader`), as stores register URL schemes in :mod:`keyshape.store.schemes`; the
schema layer itself reads keyshape TOML, the kind every file is when no registered loader claims
it. Registered by :mod:`keyshape.phoenix.schema`: ``phoenix`` (a Phoenix DDL ``.sql`` file, or a
TOML file with a ``[phoenix]`` section).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from keyshape.errors import BadInput

__all__ = ["BUILTIN_LOADER_MODULES", "SchemaLoader", "ensure_builtin_loaders", "loader_for", "loaders", "register_loader", "unregister_loader"]


@dataclass(frozen=True)
class SchemaLoader:
    """One kind of schema file.

    - ``kind``: its name (``phoenix``).
    - ``claims``: ``claims(path)`` -> True when the file at ``path`` is of this kind.
    - ``load``: ``load(path)`` -> the :class:`~keyshape.schema.KeySchema` the file describes.
    """

    kind: str
    claims: Callable[[Path], bool]
    load: Callable[[Path], object]


_LOADERS: dict[str, SchemaLoader] = {}


def register_loader(kind: str, claims: Callable[[Path], bool], load: Callable[[Path], object]) -> None:
    """Make :func:`keyshape.schema.load_schema` read the files ``claims`` says are of ``kind``
    with ``load``; registering a kind again replaces it."""
    if not kind or not kind.replace("-", "").isalnum():
        raise BadInput(f"schema loader kind {kind!r}: use letters, digits and '-'")
    _LOADERS[kind] = SchemaLoader(kind, claims, load)


def unregister_loader(kind: str) -> None:
    """Forget the loader of ``kind`` (nothing when none is registered)."""
    _LOADERS.pop(kind, None)


def loaders() -> list[str]:
    """The registered kinds, sorted (keyshape TOML, the default, is not among them)."""
    return sorted(_LOADERS)


def loader_for(path: Path) -> SchemaLoader | None:
    """The registered loader that claims ``path``, or None (then it is keyshape TOML)."""
    return next((ld for ld in _LOADERS.values() if ld.claims(path)), None)


# The modules shipped with keyshape that register a kind here when imported (as a package's entry
# points name them). ``load_schema`` imports them the first time no registered loader claims a file,
# so ``KeySchema.load("table.sql")`` works without the caller importing keyshape.phoenix first; named
# by string because they sit in layers above this one (the dependency runs through registration).
BUILTIN_LOADER_MODULES: tuple[str, ...] = ("keyshape.phoenix.schema",)


def ensure_builtin_loaders() -> bool:
    """Import those of :data:`BUILTIN_LOADER_MODULES` not imported yet; True when this call imported
    any (so a caller that found no loader should look again)."""
    import importlib
    import sys

    missing = [name for name in BUILTIN_LOADER_MODULES if name not in sys.modules]
    for name in missing:
        importlib.import_module(name)
    return bool(missing)
