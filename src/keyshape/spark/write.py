"""``write_to_hbase``: each Spark partition writes its rows through keyshape's batch writer.

With ``repartition_by_region`` the rows are first partitioned by the region of the live table
that will hold them, one Spark partition per region (an exact identity partitioner, not a hash
that may put two regions in one task), so each task sends its batches to a single region on a
single server: the well-known practice for bulk writes through the client API. The writer's
``flush`` returns only when every row of the batch is stored and raises ``WriteFailed`` otherwise
(after its bounded retries); a failed task fails the job, so the count returned is always the
count of acknowledged rows and nothing is dropped silently.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from keyshape.core.regions import RegionMap
from keyshape.errors import BadInput
from keyshape.schema import KeySchema
from keyshape.spark.encode import encode_keys
from keyshape.spark.session import as_schema, pyspark

_LONG, _DOUBLE = struct.Struct(">q"), struct.Struct(">d")


def cell_value(value: Any) -> bytes | None:
    """A DataFrame value as HBase cell bytes, as Java's ``Bytes.toBytes`` writes it: binary as is,
    text as UTF-8, integers as 8-byte longs, floats as doubles, booleans as one byte, timestamps
    as epoch milliseconds (long); None (a null) writes no cell."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bool):
        return b"\xff" if value else b"\x00"
    if isinstance(value, int):
        return _LONG.pack(value)
    if isinstance(value, float):
        return _DOUBLE.pack(value)
    if isinstance(value, datetime):
        return _LONG.pack(math.floor(value.timestamp() * 1000))
    if isinstance(value, date):
        return _LONG.pack(math.floor(datetime(value.year, value.month, value.day).timestamp() * 1000))
    return str(value).encode("utf-8")


def _puts(rows: Iterable[Any], qualifiers: Sequence[bytes], empty: bytes) -> Iterator[tuple[bytes, dict[bytes, bytes]]]:
    for row in rows:
        cells = {q: v for q, v in zip(qualifiers, map(cell_value, row[1:])) if v is not None}
        yield bytes(row[0]), cells or {empty: b""}


def write_partition(url: str, table: str, puts: Iterable[tuple[bytes, dict[bytes, bytes]]], batch_size: int) -> Iterator[int]:
    """Write one partition's puts through ``store.writer`` and yield how many were acknowledged."""
    from keyshape.store import open_store

    store = open_store(url)
    written = 0
    try:
        with store.writer(table, batch_size=batch_size) as writer:
            for key, cells in puts:
                writer.put(key, cells)
                written += 1
    finally:
        store.close()
    yield written


def live_regions(url: str, table: str) -> RegionMap:
    """The region map of ``table`` as the HBase at ``url`` reports it now."""
    from keyshape.store import open_store

    store = open_store(url)
    try:
        if not store.table_exists(table):
            raise BadInput(f"table {table!r} does not exist on {url}; create it first (keyshape create SCHEMA --hbase URL)")
        return RegionMap([r.start for r in store.regions(table) if r.start])
    finally:
        store.close()


def write_to_hbase(
    df: Any,
    schema: KeySchema | str | Path,
    url: str,
    repartition_by_region: bool = True,
    *,
    column: str = "rowkey",
    table: str | None = None,
    family: str | None = None,
    batch_size: int = 1000,
) -> int:
    """Write every row of ``df`` to the HBase at ``url`` and return the acknowledged row count.

    The row key is ``column`` (binary), encoded from the fields of ``schema`` first when the
    DataFrame has no such column. Every other column becomes one cell ``family:column`` (family
    default: the schema's first; values as :func:`cell_value` gives them; nulls write nothing; a
    row without any value gets an empty ``family:v``). ``table`` defaults to the schema's table,
    which must exist. A row that cannot be written after the writer's retries fails the job
    with the writer's ``WriteFailed`` (naming the rows) instead of being counted. With
    ``repartition_by_region`` (default) the rows are first partitioned by the live table's regions
    (see the module docstring); ``batch_size``: rows per write of each task's writer.
    """
    pyspark()
    schema = as_schema(schema)
    table = table or schema.table.full_name
    families = [f.name for f in schema.table.families]
    family = family or families[0]
    if family not in families:
        raise BadInput(f"table {table!r} has no column family {family!r}; its families are: " + ", ".join(families))
    if batch_size < 1:
        raise BadInput(f"batch size must be at least 1, got {batch_size}")
    if column not in df.columns:
        df = encode_keys(df, schema, column)
    values = [c for c in df.columns if c != column]
    qualifiers = [f"{family}:{c}".encode() for c in values]
    empty = f"{family}:v".encode()
    rows = df.select(column, *values).rdd
    regions = live_regions(url, table)

    if repartition_by_region and len(regions) > 1:

        def keyed(part: Iterable[Any]) -> Iterator[tuple[int, tuple[bytes, dict[bytes, bytes]]]]:
            for put in _puts(part, qualifiers, empty):
                yield regions.region_of(put[0]), put

        by_region = rows.mapPartitions(keyed).partitionBy(len(regions), lambda region: region)
        counts = by_region.mapPartitions(lambda part: write_partition(url, table, (put for _, put in part), batch_size))
    else:
        counts = rows.mapPartitions(lambda part: write_partition(url, table, _puts(part, qualifiers, empty), batch_size))
    return int(sum(counts.collect()))
