"""Point reads by key fields, over every bucket when the salt is random.

A deterministic prefix (md5, mod, phoenix, opentsdb, ...) is computed from the record, so a read
is one Get. ``random`` salt (salting with a random bucket per write) wrote the row into a bucket nobody can
recompute, so the read is a multi-get of the original key under every bucket prefix; it returns
every match (:class:`keyshape.read.IndexedWriter` keeps one copy, but rows written by other means
may sit in several buckets).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from keyshape.read.merged import Row
from keyshape.read.plan import original_key

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.keyschema import KeySchema
    from keyshape.store.base import Store

__all__ = ["candidate_keys", "get", "get_many"]


def candidate_keys(schema: KeySchema, record: Mapping[str, Any]) -> list[bytes]:
    """Every stored key ``record`` may have: one for a deterministic strategy, one per bucket
    (sorted) for ``random``.

    - ``schema``: the table's key schema; ``record``: a mapping with every key field.
    """
    key = schema.encode(record)
    p = schema.prefix
    if p.deterministic:
        return [key]
    k = original_key(schema, key)
    buckets = p.buckets()
    assert buckets is not None  # random is a salted strategy
    return [p.apply(b, k) for b in buckets]


def get(store: Store, schema: KeySchema, record: Mapping[str, Any], columns: Iterable[bytes] | None = None) -> list[Row]:
    """The rows of ``record``: ``[]`` when absent, one Row for a deterministic strategy (one
    ``store.get``), every match in stored-key order for ``random`` (one ``store.get_many`` over
    all buckets).

    - ``store``, ``schema``: the store and the table's key schema.
    - ``record``: a mapping with every key field (extra entries are ignored).
    - ``columns``: the ``b"family:qualifier"`` columns to return (default None: all).
    """
    keys = candidate_keys(schema, record)
    cols = None if columns is None else list(columns)
    table = schema.table.full_name
    if len(keys) == 1:
        cells = store.get(table, keys[0], columns=cols)
        found = [(keys[0], cells)] if cells else []
    else:
        found = store.get_many(table, keys, columns=cols)
    return [Row(k, original_key(schema, k), c, schema) for k, c in found]


def get_many(
    store: Store, schema: KeySchema, records: Iterable[Mapping[str, Any]], columns: Iterable[bytes] | None = None, batch_size: int = 1000
) -> list[Row]:
    """The rows of many records, in record order (each record's matches in stored-key order).

    - ``store``, ``schema``: the store and the table's key schema.
    - ``records``: mappings with every key field.
    - ``columns``: the columns to return (default None: all).
    - ``batch_size``: the most keys per ``store.get_many`` call (default 1000).
    """
    cols = None if columns is None else list(columns)
    table = schema.table.full_name
    out: list[Row] = []
    batch: list[bytes] = []

    def flush() -> None:
        for k, c in store.get_many(table, batch, columns=cols):
            out.append(Row(k, original_key(schema, k), c, schema))
        batch.clear()

    for record in records:
        keys = candidate_keys(schema, record)
        if batch and len(batch) + len(keys) > batch_size:
            flush()
        batch.extend(keys)
    if batch:
        flush()
    return out
