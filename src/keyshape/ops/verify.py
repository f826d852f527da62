"""Proof that a migration lost nothing: the same rows and cells on both sides, by source region.

Each side is read in full with every version of every cell (``Store.scan_versions``) and reduced
to, per region of the SOURCE table, a row count, a cell count and an order-independent checksum:
the sum modulo 2**128 of a 128-bit BLAKE2b digest of every ``(decoded key fields, family,
qualifier, timestamp, value)``. Keys are compared by their decoded fields, so a row re-keyed into
another design (a new salt, other bucket count) hashes the same as the original. A target row is
attributed to a source region by re-encoding its fields with the OLD schema, so the counts line
up region by region and a difference names the region it is in.

With an OLD ``random`` salt the re-encoded key lands in a random bucket, so per-region counts can
move between regions; the totals and the checksum still prove the copy.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema
from keyshape.store.base import Store

__all__ = ["SideDigest", "Verification", "canonical_fields", "cell_digest", "digest_side", "verify_migration"]

_MOD = 2**128
Versions = Mapping[bytes, Sequence[tuple[int, bytes]]]


def canonical_fields(fields: Mapping[str, Any]) -> bytes:
    """One byte string per set of decoded key ``fields``, the same whichever design the key was
    decoded from (types kept: ``1`` and ``"1"`` differ)."""
    return repr(sorted(fields.items())).encode()


def cell_digest(fields: bytes, column: bytes, timestamp: int, value: bytes) -> int:
    """The 128-bit digest of one cell: its row's ``fields`` (:func:`canonical_fields`), ``column``
    (``family:qualifier``), ``timestamp`` and ``value`` (every part length-prefixed so no two cells
    collide by concatenation)."""
    h = hashlib.blake2b(digest_size=16)
    for part in (fields, column, str(int(timestamp)).encode(), value):
        h.update(len(part).to_bytes(4, "big"))
        h.update(part)
    return int.from_bytes(h.digest(), "big")


def row_digest(fields: bytes, cells: Versions) -> tuple[int, int]:
    """``(cells, checksum)`` of one row's cells."""
    total = n = 0
    for column, versions in cells.items():
        for ts, value in versions:
            total += cell_digest(fields, column, ts, value)
            n += 1
    return n, total % _MOD


@dataclass
class SideDigest:
    """One table's rows, cells and checksum per source region (``starts`` are the source
    regions' start keys) plus the keys its schema could not decode.

    - ``table``: the table read; ``rows``, ``cells``, ``checksums``: one entry per source region.
    - ``undecodable``: rows whose key did not decode; ``example``: the first of them, with why.
    """

    table: str
    starts: list[bytes]
    rows: list[int]
    cells: list[int]
    checksums: list[int]
    undecodable: int = 0
    example: str = ""

    @property
    def total_rows(self) -> int:
        return sum(self.rows)

    @property
    def total_cells(self) -> int:
        return sum(self.cells)

    @property
    def checksum(self) -> int:
        return sum(self.checksums) % _MOD

    def add(self, region: int, cells: int, checksum: int) -> None:
        self.rows[region] += 1
        self.cells[region] += cells
        self.checksums[region] = (self.checksums[region] + checksum) % _MOD


def digest_side(
    store: Store,
    table: str,
    schema: KeySchema,
    starts: Sequence[bytes],
    source_key: Callable[[dict[str, Any]], bytes] | None = None,
    batch_size: int = 1000,
    progress: Callable[[int], None] | None = None,
) -> SideDigest:
    """Read all of ``table`` and digest it per source region (``starts``: the source regions'
    start keys). Each row's key is decoded with ``schema``; ``source_key(fields)`` gives the key
    the row has (or had) in the source table, which picks its region (default: the row's own
    key). Rows whose key does not decode are counted in ``undecodable`` (with an example).
    ``store`` holds the table; ``batch_size``: rows per scan call; ``progress(rows)`` is called
    every ``batch_size`` rows read, with the rows read so far."""
    side = SideDigest(table, list(starts), [0] * len(starts), [0] * len(starts), [0] * len(starts))
    done = 0
    for row, cells in store.scan_versions(table, batch_size=batch_size):
        try:
            fields = schema.decode(row)
        except KeyshapeError as exc:
            side.undecodable += 1
            side.example = side.example or f"{to_string_binary(row)}: {exc}"
            continue
        key = row if source_key is None else source_key(fields)
        region = max(bisect.bisect_right(side.starts, key) - 1, 0)
        side.add(region, *row_digest(canonical_fields(fields), cells))
        done += 1
        if progress is not None and done % batch_size == 0:
            progress(done)
    return side


@dataclass
class Verification:
    """Both sides of a migration (``source`` and ``target``, each a :class:`SideDigest`) and where
    they differ (``differences``, one line each; ``ok`` when nowhere)."""

    source: SideDigest
    target: SideDigest
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def lines(self) -> list[str]:
        """The two sides as text: totals and checksums, then every difference."""
        out = []
        for label, side in (("source", self.source), ("target", self.target)):
            out.append(f"{label} {side.table}: {side.total_rows:,} rows, {side.total_cells:,} cells, checksum {side.checksum:032x}")
        return out + self.differences


def compare_sides(source: SideDigest, target: SideDigest) -> Verification:
    """Region by region: rows, cells and checksum must be equal; undecodable rows are a
    difference on either side."""
    diffs: list[str] = []
    for side in (source, target):
        if side.undecodable:
            diffs.append(f"{side.table}: {side.undecodable:,} row(s) whose key does not decode, e.g. {side.example}")
    ends = source.starts[1:] + [b""]
    for i, start in enumerate(source.starts):
        got = (target.rows[i], target.cells[i], target.checksums[i])
        want = (source.rows[i], source.cells[i], source.checksums[i])
        if got != want:
            where = f"[{to_string_binary(start)!r}, {to_string_binary(ends[i])!r})"
            what = (
                "checksum differs"
                if got[:2] == want[:2]
                else (f"{want[0]:,} rows / {want[1]:,} cells in the source, {got[0]:,} / {got[1]:,} in the target")
            )
            diffs.append(f"source region {i} {where}: {what}")
    if source.checksum != target.checksum and not diffs:
        diffs.append("checksums differ")
    return Verification(source, target, diffs)


def verify_migration(
    store: Store, old: KeySchema, new: KeySchema, batch_size: int = 1000, progress: Callable[[int], None] | None = None
) -> Verification:
    """Digest ``old``'s table and ``new``'s table in ``store`` per region of the old table and
    compare them (``batch_size`` and ``progress`` as :func:`digest_side` takes them)."""
    source_table, target_table = old.table.full_name, new.table.full_name
    starts = [r.start for r in store.regions(source_table)]
    seen = [0, 0]

    def counted(i: int) -> Callable[[int], None] | None:
        if progress is None:
            return None

        def update(done: int) -> None:
            seen[i] = done
            progress(sum(seen))

        return update

    source = digest_side(store, source_table, old, starts, batch_size=batch_size, progress=counted(0))
    target = digest_side(store, target_table, new, starts, source_key=old.encode, batch_size=batch_size, progress=counted(1))
    return compare_sides(source, target)


def digest_rows(rows: Iterable[tuple[bytes, Versions]], schema: KeySchema) -> tuple[int, int, int]:
    """``(rows, cells, checksum)`` of rows already read, e.g. a test's own copy of a table."""
    n = cells = total = 0
    for row, versions in rows:
        c, d = row_digest(canonical_fields(schema.decode(row)), versions)
        n, cells, total = n + 1, cells + c, (total + d) % _MOD
    return n, cells, total
