"""Dual reads during a migration: one logical table read through two key designs at once.

While rows move from the old table to the new one (``keyshape migrate``), some rows are in both,
some only in the old table and new writes (dual writes) in both. ``dual_scan`` merges a merged
scan of each table (:func:`keyshape.read.merged.scan`: every bucket, original-key order) into one
stream in original-key order; a row present in both comes once, from the NEW table, since it has
the newest writes once the copy caught up. Applications can switch their reads to this before the
copy ends, then to the new table alone after ``verify``.

Both designs must order rows the same way once their prefixes are stripped: same fields, types,
encodings, orders and separator (a re-salt, or adding/changing a salt). Otherwise the two streams
cannot be merged in one order and ``dual_scan`` refuses.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from keyshape.errors import KeyshapeError
from keyshape.read.merged import Row, scan

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.keyschema import KeySchema
    from keyshape.store.base import Store

__all__ = ["check_same_order", "dual_scan"]


def _layout(schema: KeySchema) -> tuple[Any, ...]:
    return (schema.separator, tuple((f.name, f.type, f.encoding, f.order, f.width, f.pad, f.pad_char) for f in schema.fields))


def check_same_order(old: KeySchema, new: KeySchema) -> None:
    """KeyshapeError unless ``old`` and ``new`` keys without their prefixes are the same bytes."""
    if _layout(old) != _layout(new):
        raise KeyshapeError(
            "dual reads need both designs to keep the same key fields (names, types, encodings, "
            "order, widths) and separator, changing only the prefix; these designs differ, so "
            "their rows cannot be merged in one key order"
        )


def dual_scan(
    store: Store,
    old: KeySchema,
    new: KeySchema,
    *,
    start: bytes | None = None,
    stop: bytes | None = None,
    limit: int | None = None,
    columns: Iterable[bytes] | None = None,
    batch_size: int = 1000,
    **leading_fields: Any,
) -> Iterator[Row]:
    """Rows of the logical table in original-key order, each original key once (the new table's
    row when both have it). Rows carry the stored key of the table they came from (``Row.key``).

    - ``store``: the store holding both tables.
    - ``old``, ``new``: the key schemas of the table being migrated from and to (same fields,
      order, widths and separator; only the prefix differs).
    - ``start``, ``stop``: original-key bounds, ``start`` inclusive, ``stop`` exclusive (default open).
    - ``limit``: the most merged rows (default None: all).
    - ``columns``: the columns to return (default None: all).
    - ``batch_size``: rows per round trip and bucket (default 1000).
    - ``leading_fields``: the leading key fields, as in :func:`keyshape.read.merged.scan`, applied to both tables.
    """
    check_same_order(old, new)
    if limit is not None and limit < 0:
        raise KeyshapeError(f"dual scan: limit must be >= 0, got {limit}")
    options = dict(start=start, stop=stop, limit=limit, columns=columns, batch_size=batch_size, **leading_fields)
    new_rows = scan(store, new, **options)
    old_rows = scan(store, old, **options)
    # Sort key (original, side): at equal original keys the new table's row (0) comes first.
    merged = heapq.merge(((r.original, 0, r) for r in new_rows), ((r.original, 1, r) for r in old_rows))
    return _dedupe(merged, limit, (new_rows, old_rows))


def _dedupe(merged: Iterator[tuple[bytes, int, Row]], limit: int | None, scans: tuple[Any, ...]) -> Iterator[Row]:
    returned = 0
    last: bytes | None = None
    try:
        for original, _, row in merged:
            if original == last:
                continue  # the old table's copy of a row the new table already gave
            last = original
            if limit is not None and returned >= limit:
                return
            yield row
            returned += 1
    finally:
        for s in scans:
            s.close()
