"""What a kind of schema adds to the analysis of a live table (``keyshape analyze --table``).

A layer above ops that defines a kind of schema registers the notes its tables' live analysis
should carry (:mod:`keyshape.phoenix.schema`: a salted Phoenix table's share per salt bucket and the
regions that hold several buckets), and :func:`keyshape.ops.sample.analyze_table` adds them for
every caller, without importing upward: the dependency runs through registration, as schema file
kinds do (:mod:`keyshape.schema.loaders`). This module imports nothing heavy, so a schema kind can
register here when it is imported (on every schema load) at no cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from keyshape.schema import KeySchema

__all__ = ["live_notes", "register_live_notes"]

S = TypeVar("S", bound=KeySchema)
_NOTES: dict[type[KeySchema], Callable[[Any, Any], list[str]]] = {}


def register_live_notes(kind: type[S], notes: Callable[[S, Any], list[str]]) -> None:
    """Make the live analysis of a table whose schema is a ``kind`` carry ``notes(schema, live)``.

    - ``kind``: a KeySchema class (its subclasses too); registering a kind again replaces its notes.
    - ``notes``: called with the schema and the :class:`keyshape.ops.sample.LiveKeys` of the table
      (its ``sample`` and ``estimated_rows`` are what the analysis was made from); returns the
      lines to add to the analysis' reasons (none: an empty list).
    """
    _NOTES[kind] = notes


def live_notes(schema: KeySchema | None, live: Any) -> list[str]:
    """The registered notes for ``schema``'s table, in registration order (none without a schema).

    - ``schema``: the table's schema (None: raw keys, nothing to add).
    - ``live``: the :class:`keyshape.ops.sample.LiveKeys` the notes read.
    """
    if schema is None:
        return []
    return [line for kind, notes in _NOTES.items() if isinstance(schema, kind) for line in notes(schema, live)]
