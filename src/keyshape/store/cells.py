"""The cells of a table's rows, versioned, expired and deleted the way HBase does it.

Timestamps behave as in HBase: a column's versions are ordered by timestamp, not by arrival. A
delete leaves a marker at the delete's time (ms) that masks every cell of its row/family/column
with a timestamp at or before it, including cells put LATER with such a timestamp (HBase keeps
the marker until a major compaction, which drops the masked cells too, so they never reappear);
masked cells are therefore never stored. Markers are kept for the life of the table. A put
without a timestamp in the same millisecond as a delete of its cell is masked, as in HBase.
A family's ``ttl`` (seconds) hides cells older than ``now - ttl``; they are dropped lazily, when
a read or write meets them, since HBase never shows them again either.

Pure data structures: no locking, no regions; every operation is given the time it runs at
(``now``, ms) so one operation sees one instant.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterable, Mapping
from typing import Any

from sortedcontainers import SortedDict

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import StoreError
from keyshape.store.base import as_bytes

__all__ = ["FOREVER", "NO_MARK", "Cells", "Families", "Selection", "Versions", "now_ms", "select"]

FOREVER = 2**31 - 1  # HConstants.FOREVER: a family TTL of this many seconds means none
NO_MARK = -(2**63)
Versions = list[tuple[int, bytes]]  # newest first
Selection = tuple[set[bytes], set[bytes]]  # (whole families, single b"family:qualifier" columns)
_LONG = struct.Struct(">q")


def now_ms() -> int:
    """The current time in ms since the epoch, the unit of HBase cell timestamps."""
    return time.time_ns() // 1_000_000


class Families:
    """The column families of one table: how many versions each keeps, its TTL, and the checks
    that a column named in a request belongs to one of them.

    ``versions`` maps family -> versions kept; ``ttls`` maps family -> TTL in ms, only for
    families that have one. ``table`` is the table's full name, used in error messages.
    """

    def __init__(self, table: str, versions: Mapping[bytes, int], ttls: Mapping[bytes, int] | None = None) -> None:
        self.table = table
        self.versions: dict[bytes, int] = dict(versions)
        self.ttls: dict[bytes, int] = dict(ttls or {})

    @classmethod
    def from_specs(cls, table: str, specs: Iterable[Any]) -> Families:
        """Families from FamilySpec-like objects (``name``, ``versions``, optional ``ttl`` in
        seconds, where ``FOREVER`` means none); StoreError on a bad name, versions or ttl."""
        versions: dict[bytes, int] = {}
        ttls: dict[bytes, int] = {}
        for family in specs:
            fname = family.name.encode() if isinstance(family.name, str) else bytes(family.name)
            if not fname or b":" in fname:
                raise StoreError(f"bad column family name {family.name!r}: non-empty, no ':'")
            if int(family.versions) < 1:
                raise StoreError(f"family {family.name!r}: versions must be >= 1")
            versions[fname] = int(family.versions)
            ttl = getattr(family, "ttl", None)
            if ttl is not None:
                if not 1 <= int(ttl) <= FOREVER:
                    raise StoreError(f"family {family.name!r}: ttl must be 1..{FOREVER} seconds, got {ttl}")
                if int(ttl) != FOREVER:
                    ttls[fname] = int(ttl) * 1000
        return cls(table, versions, ttls)

    def error(self, family: bytes) -> StoreError:
        """The StoreError for a family the table does not have, listing the ones it has."""
        known = ", ".join(sorted(f.decode("utf-8", "replace") for f in self.versions))
        return StoreError(f"table {self.table!r} has no column family {to_string_binary(family)!r}; its families are: {known}")

    def column(self, column: Any) -> tuple[bytes, bytes]:
        """Split a b"family:qualifier" put column, checking the family exists."""
        column = as_bytes(column, "a column")
        family, sep, qualifier = column.partition(b":")
        if not sep:
            raise StoreError(f"column {to_string_binary(column)!r} has no ':'; name cells b'family:qualifier'")
        if family not in self.versions:
            raise self.error(family)
        return family, qualifier

    def selector(self, columns: Iterable[bytes] | None) -> Selection | None:
        """(whole families, single columns) selected by ``columns``; None selects everything."""
        if columns is None:
            return None
        if isinstance(columns, (bytes, bytearray)):
            columns = [columns]
        families: set[bytes] = set()
        singles: set[bytes] = set()
        for column in columns:
            column = as_bytes(column, "a column")
            family, sep, _ = column.partition(b":")
            if family not in self.versions:
                raise self.error(family)
            (singles if sep else families).add(column if sep else family)
        return families, singles


def _check_row(row: bytes) -> None:
    # HBase's Mutation refuses an empty row; reads of it simply find nothing
    if not row:
        raise StoreError("a row key must not be empty")


def _column_order(item: tuple[bytes, Any]) -> tuple[bytes, bytes]:
    # HBase orders a row's cells by family, then qualifier (not by the joined b"f:q" bytes)
    family, _, qualifier = item[0].partition(b":")
    return family, qualifier


def select(stored: Mapping[bytes, Versions], sel: Selection | None) -> dict[bytes, bytes]:
    """Newest value of each selected column of one row's ``stored`` cells, in HBase's cell
    order (family, then qualifier); ``sel`` None selects every column."""
    items: Iterable[tuple[bytes, Versions]] = stored.items()
    if sel is not None:
        families, singles = sel
        items = [(c, v) for c, v in items if c in singles or c.partition(b":")[0] in families]
    return {c: v[0][1] for c, v in sorted(items, key=_column_order)}


class Cells:
    """Every row's cells of one table, with its delete markers (see the module docstring).

    ``rows`` is a ``SortedDict`` row -> {b"family:qualifier": versions newest first}; it holds
    only rows with at least one stored version, so its keys are the table's rows in key order.
    Row keys given to the methods are already ``bytes``.
    """

    def __init__(self, families: Families) -> None:
        self.families = families
        self.rows: SortedDict = SortedDict()
        # row -> {family or b"family:qualifier": newest delete time (ms)}; outlives the row's
        # cells, since HBase keeps masking later puts with older timestamps
        self.markers: dict[bytes, dict[bytes, int]] = {}

    def mask(self, row: bytes, column: bytes) -> int:
        """The newest delete marker covering ``column`` of ``row`` (ms; ``NO_MARK`` if none):
        cells with a timestamp at or before it are deleted."""
        marks = self.markers.get(row)
        if not marks:
            return NO_MARK
        return max(marks.get(column.partition(b":")[0], NO_MARK), marks.get(column, NO_MARK))

    def expire(self, stored: dict[bytes, Versions], now: int) -> None:
        """Drop, in place, the versions of one row's cells that their family's TTL hides
        (timestamp < now - ttl, HBase's test) and the columns left empty."""
        ttls = self.families.ttls
        if not ttls:
            return
        for column in list(stored):
            ttl = ttls.get(column.partition(b":")[0])
            versions = stored[column]
            # newest first: when the oldest version is alive, all are
            if ttl is None or versions[-1][0] >= now - ttl:
                continue
            versions[:] = [tv for tv in versions if tv[0] >= now - ttl]
            if not versions:
                del stored[column]

    def live(self, row: bytes, now: int) -> dict[bytes, Versions] | None:
        """The stored cells of ``row`` after TTL expiry; a row left empty is forgotten (None)."""
        stored = self.rows.get(row)
        if stored is None:
            return None
        self.expire(stored, now)
        if not stored:
            del self.rows[row]
            return None
        return stored

    def get(self, row: bytes, sel: Selection | None, now: int) -> dict[bytes, bytes]:
        """Newest visible value of every selected cell of ``row``; {} when there is none."""
        stored = self.live(row, now)
        return select(stored, sel) if stored else {}

    def versions(self, row: bytes, column: Any, now: int) -> Versions:
        """Visible ``(timestamp_ms, value)`` versions of one cell, newest first (a copy);
        StoreError when ``column`` is not a b"family:qualifier" of a known family."""
        self.families.column(column)
        return list((self.live(row, now) or {}).get(bytes(column), []))

    def put(self, row: bytes, cells: Mapping[bytes, bytes], timestamp: int | None, now: int) -> None:
        """Store ``cells`` ({b"family:qualifier": value}) in ``row`` at ``timestamp`` (ms,
        default ``now``): a version already at that timestamp is replaced and each column keeps
        its family's newest ``versions``. Cells a delete marker masks or the TTL has already
        expired are not stored. Every cell is checked before any is stored (StoreError)."""
        _check_row(row)
        if not cells:
            raise StoreError(f"put to row {to_string_binary(row)!r} has no cells")
        checked = [(*self.families.column(c), as_bytes(v, "a cell value")) for c, v in cells.items()]
        ts = now if timestamp is None else int(timestamp)
        for family, qualifier, value in checked:
            column = family + b":" + qualifier
            ttl = self.families.ttls.get(family)
            if ts <= self.mask(row, column) or (ttl is not None and ts < now - ttl):
                continue  # invisible now and forever in HBase
            stored = self.rows.get(row)
            if stored is None:
                stored = self.rows[row] = {}
            versions = stored.setdefault(column, [])
            kept = [(vts, v) for vts, v in versions if vts != ts]
            kept.append((ts, value))
            kept.sort(key=lambda tv: tv[0], reverse=True)
            versions[:] = kept[: self.families.versions[family]]

    def delete(self, row: bytes, columns: Iterable[bytes] | None, now: int) -> None:
        """Delete ``row``, or every version of the selected families/columns, up to ``now``:
        leaves a marker at ``now`` that also masks later puts at or before it."""
        _check_row(row)
        sel = self.families.selector(columns)
        # a whole-row Delete is a DeleteFamily marker on every family, as HBase's server makes it
        targets = list(self.families.versions) if sel is None else [*sel[0], *sel[1]]
        marks = self.markers.setdefault(row, {})
        for target in targets:
            marks[target] = max(marks.get(target, NO_MARK), now)
        stored = self.rows.get(row)
        if stored is None:
            return
        for column in list(stored):
            mark = self.mask(row, column)
            versions = stored[column]
            if versions[-1][0] <= mark:
                versions[:] = [tv for tv in versions if tv[0] > mark]
                if not versions:
                    del stored[column]
        if not stored:
            del self.rows[row]

    def increment(self, row: bytes, column: Any, amount: int, now: int) -> int:
        """Add ``amount`` to the 8-byte big-endian signed long in ``column`` (absent, deleted
        or expired: 0), wrapping like a Java long; store it and return the new value. The new
        cell's timestamp is ``max(now, old timestamp + 1)``, as in HBase, so it is the newest
        version even when the old one has a future timestamp."""
        self.families.column(column)
        versions = (self.live(row, now) or {}).get(bytes(column))
        current = 0
        ts = now
        if versions:
            ts = max(now, versions[0][0] + 1)
            value = versions[0][1]
            if len(value) != _LONG.size:
                raise StoreError(
                    f"cannot increment {to_string_binary(bytes(column))!r} of row "
                    f"{to_string_binary(row)!r}: it holds {len(value)} bytes, not an 8-byte long"
                )
            current = _LONG.unpack(value)[0]
        new = (current + int(amount) + 2**63) % 2**64 - 2**63
        self.put(row, {bytes(column): _LONG.pack(new)}, ts, now)
        return new

    def stored_bytes(self, row: bytes) -> int:
        """Bytes ``row`` holds: its key, column and value once per stored version."""
        return sum(len(row) + len(column) + len(v) for column, versions in self.rows[row].items() for _, v in versions)
