"""The registry of schema file kinds: :func:`keyshape.schema.load_schema` (and ``KeySchema.load``)
asks it which loader reads a file.

A layer above the schema layer that defines a kind of schema file registers its loader here
(:func:`register_loader`), as stores register URL schemes in :mod:`keyshape.store.schemes`; the
schema layer itself reads keyshape TOML, the kind every file is when no registered loader claims
it. Registered by :mod:`keyshape.phoenix.schema`: ``phoenix`` (a Phoenix DDL ``.sql`` file, or a
TOML file with a ``[phoenix]`` section).

A module that registers a kind is found through its package's entry points (group
:data:`ENTRY_POINT_GROUP`; keyshape's own ``pyproject.toml`` names ``keyshape.phoenix.schema``):
when no registered loader claims a file, :func:`load_entry_points` imports those not loaded yet and
the registry is asked again. So ``KeySchema.load("table.sql")`` works in a fresh interpreter while
this layer names no module above it (the dependency runs through registration, not an import).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from keyshape.errors import BadInput

__all__ = ["ENTRY_POINT_GROUP", "SchemaLoader", "load_entry_points", "loader_for", "loaders", "register_loader", "unregister_loader"]


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


#: The entry-point group of modules that register a schema-file kind here when imported.
ENTRY_POINT_GROUP = "keyshape.schema_loaders"
_LOADED_ENTRY_POINTS: set[str] = set()
_SCANNED = False


def load_entry_points() -> bool:
    """Import the modules of :data:`ENTRY_POINT_GROUP`'s entry points not imported yet (each
    registers its kind); True when this call loaded any (so a caller that found no loader should
    look again)."""
    from importlib.metadata import entry_points

    global _SCANNED
    if _SCANNED:  # the installed packages' metadata is read once: a TOML file pays nothing after
        return False
    _SCANNED = True
    loaded = False
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.value in _LOADED_ENTRY_POINTS:
            continue
        _LOADED_ENTRY_POINTS.add(ep.value)
        ep.load()
        loaded = True
    return loaded
