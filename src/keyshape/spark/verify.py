"""``verify`` of a migration as one Spark job: the per-region checksums of
:mod:`keyshape.ops.verify` computed by Spark tasks on both sides at once.

One task per OLD region digests that region of OLD, one task per NEW region digests that region
of NEW (each row attributed to the OLD region its key re-encoded with the OLD schema falls in, as
:func:`~keyshape.ops.verify.digest_side` does), all in one job; the driver adds the partial
digests up per OLD region and compares the sides with :func:`~keyshape.ops.verify.compare_sides`:
the same rows, cells, checksums and differences as ``verify_migration`` reading both tables in
one process, read by as many tasks as the cluster runs.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import BadInput, KeyshapeError
from keyshape.ops.verify import SideDigest, Verification, canonical_fields, compare_sides, row_digest
from keyshape.schema import KeySchema
from keyshape.spark.session import as_schema, session

__all__ = ["verify_spark"]

_Item = tuple[str, int, bytes, bytes]  # (side "old"/"new", region index, start, end)


def _digest_ranges(url: str, old: KeySchema, new: KeySchema, starts: list[bytes], batch_size: int) -> Callable[[Iterator[_Item]], Iterator[Any]]:
    def run(items: Iterator[_Item]) -> Iterator[tuple[str, SideDigest]]:
        from keyshape.store import open_store

        store = open_store(url)
        try:
            for side, _index, start, end in items:
                schema, table = (old, old.table.full_name) if side == "old" else (new, new.table.full_name)
                digest = SideDigest(table, starts, [0] * len(starts), [0] * len(starts), [0] * len(starts))
                for row, cells in store.scan_versions(table, start, end, batch_size=batch_size):
                    try:
                        fields = schema.decode(row)
                    except KeyshapeError as exc:  # counted, as digest_side counts it
                        digest.undecodable += 1
                        digest.example = digest.example or f"{to_string_binary(row)}: {exc}"
                        continue
                    key = row if side == "old" else old.encode(fields)
                    region = max(bisect.bisect_right(starts, key) - 1, 0)
                    digest.add(region, *row_digest(canonical_fields(fields), cells))
                yield side, digest
        finally:
            store.close()

    return run


def _merge(into: SideDigest, part: SideDigest) -> None:
    for i in range(len(into.starts)):
        into.rows[i] += part.rows[i]
        into.cells[i] += part.cells[i]
        into.checksums[i] = (into.checksums[i] + part.checksums[i]) % 2**128
    into.undecodable += part.undecodable
    into.example = into.example or part.example


def verify_spark(
    url: str, old: KeySchema | str | Path, new: KeySchema | str | Path, *, spark: Any = None, master: str | None = None, batch_size: int = 1000
) -> Verification:
    """Verify the migration of ``old``'s table into ``new``'s (HBase at ``url``) with one Spark
    job (see the module docstring); ``spark``: a SparkSession to use, else one on ``master``
    (default ``local[*]``); ``batch_size``: rows per scan call in the tasks."""
    from keyshape.store import open_store

    old, new = as_schema(old), as_schema(new)
    store: Any = open_store(url)
    try:
        if not hasattr(store, "cluster"):
            raise BadInput("verify with Spark reads a real HBase (--hbase HOST:PORT)")
        old_regions = store.regions(old.table.full_name)
        new_regions = store.regions(new.table.full_name)
    finally:
        store.close()
    starts = [r.start for r in old_regions]
    items: list[_Item] = [("old", i, r.start, r.end) for i, r in enumerate(old_regions)]
    items += [("new", i, r.start, r.end) for i, r in enumerate(new_regions)]
    spark = spark or session(master or "local[*]", "keyshape-verify")
    sc = spark.sparkContext
    sc.setJobGroup("keyshape-verify", f"verify {old.table.full_name} -> {new.table.full_name}")
    parts = sc.parallelize(items, len(items)).mapPartitions(_digest_ranges(url, old, new, starts, batch_size)).collect()
    sides = {
        "old": SideDigest(old.table.full_name, starts, [0] * len(starts), [0] * len(starts), [0] * len(starts)),
        "new": SideDigest(new.table.full_name, starts, [0] * len(starts), [0] * len(starts), [0] * len(starts)),
    }
    for side, part in parts:
        _merge(sides[side], part)
    return compare_sides(sides["old"], sides["new"])
