"""The online half of a migration (issue 32, first increment): re-key what keyshape's replication
sink receives from the OLD table and write it to the NEW table.

Each replicated cell's row is decoded with OLD's schema and encoded with NEW's; the cell keeps its
family, qualifier, timestamp, type and value. A batch is acknowledged (the callback returns) only
after NEW acknowledged every cell, so HBase re-ships anything not written. Writing every cell at
its own timestamp makes NEW converge to OLD whatever the order and however often the copy and the
stream deliver a cell. Rows whose OLD key does not decode (or that NEW cannot encode) are counted
and go to the reject file, never dropped silently.

Only OLD's own edits reach NEW (:class:`SourceRegions`): a WAL entry names its table and its
region, and a table dropped and created again under OLD's name (a namesake) has other regions.
HBase ships a new peer the current WAL from its start, so a namesake's edits still in it reach the
sink when its families were scoped (as a table replicated to a DR cluster is); they are
acknowledged and counted (``foreign``), never written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema
from keyshape.store.base import RegionRecord, split_table_name
from keyshape.store.hbase.walapply import apply_cells
from keyshape.store.hbase.walentry import WalCell, WalEntry

if TYPE_CHECKING:  # annotations only
    from keyshape.store.hbase.store import HBaseStore

__all__ = ["ReKeyer", "SourceRegions", "encoded_region_name"]


def encoded_region_name(region_name: str) -> bytes:
    """The encoded name a WAL key carries (32 hex digits) of ``region_name``, a region name as
    hbase:meta gives it (``table,start,id.ENCODED.``)."""
    return region_name.rstrip(".").rpartition(".")[2].encode()


class SourceRegions:
    """Which WAL entries of OLD's table name are OLD's own: those of the regions OLD had when the
    migration began (``known``), of any region hbase:meta lists for OLD since (its daughters and
    merges: ``lookup`` reads them when an entry names a region not seen yet), and of a region
    meta no longer lists (a parent the catalog janitor removed) if the entry was written at or
    after ``born_ms``, the creation time of OLD's oldest region when the migration began.

    A dropped namesake's regions are in no meta row, and its edits were written before it was
    dropped, so before OLD's regions were created. An edit of OLD itself written before
    ``born_ms`` by a region meta no longer lists is older than the copy, which holds it (the
    copy's scan starts after the peer is added): leaving it out loses nothing. The two times come
    from the cluster's clocks (the WAL append's region server, the master's region id): a skew
    larger than the time between the namesake's last edit and OLD's creation would let such an
    edit through, and the cut-over's verify would then show it."""

    def __init__(self, lookup: Callable[[], list[RegionRecord]], born_ms: int, known: Iterable[bytes] = ()) -> None:
        self._lookup, self.born_ms = lookup, born_ms
        self.known = set(known)
        self._absent: set[bytes] = set()  # looked up: not a region of OLD in meta
        self._lock = threading.Lock()

    @classmethod
    def of(cls, records: list[RegionRecord], lookup: Callable[[], list[RegionRecord]], born_ms: int | None = None) -> SourceRegions:
        """From OLD's meta rows now; ``born_ms`` as an earlier run of the migration recorded it."""
        born = min(r.created_ms for r in records) if born_ms is None else born_ms
        return cls(lookup, born, (encoded_region_name(r.name) for r in records))

    def admits(self, region: bytes, write_time: int) -> bool:
        """Whether an entry of ``region`` written at ``write_time`` (ms) is OLD's (StoreError
        when meta cannot be read: the batch is refused and shipped again)."""
        if region in self.known:
            return True
        with self._lock:
            if region not in self._absent and region not in self.known:
                self.known.update(encoded_region_name(r.name) for r in self._lookup())
                if region not in self.known:
                    self._absent.add(region)
        return region in self.known or write_time >= self.born_ms


class ReKeyer:
    """A replication sink callback that re-keys OLD's cells into NEW's table.

    ``ready``: batches that arrive before it is set are refused (HBase ships them again later),
    e.g. until the copy has checked that NEW is empty. Counters: ``received`` cells (every
    delivery, re-shipped ones again), ``cells`` applied, ``refused`` batches, ``rejected`` rows
    (their keys and reasons appended to ``reject_path`` when given), ``ignored`` cells of other
    tables, ``foreign`` cells of OLD's table name but not of OLD's regions (``regions``: a dropped
    namesake's; None: by table name only); ``newest_write_time``: the WAL write time (ms) of the
    newest entry applied. ``store``: the HBase store NEW's table is written to; ``old`` / ``new``:
    the two key schemas."""

    def __init__(
        self,
        store: HBaseStore,
        old: KeySchema,
        new: KeySchema,
        reject_path: str | Path | None = None,
        ready: threading.Event | None = None,
        regions: SourceRegions | None = None,
    ) -> None:
        self.store, self.old, self.new = store, old, new
        self.source = split_table_name(old.table.full_name)
        self.target = new.table.full_name
        self.reject_path = Path(reject_path) if reject_path is not None else None
        self.ready = ready
        self.regions = regions
        self.cells = self.rejected = self.ignored = self.received = self.refused = self.foreign = 0
        self.newest_write_time = 0
        self._lock = threading.Lock()

    def _new_key(self, key: bytes, rejects: list[str]) -> bytes | None:
        try:
            return self.new.encode(self.old.decode_exact(key))
        except (KeyshapeError, ValueError, TypeError, OverflowError) as exc:
            rejects.append(f"{to_string_binary(key)}\t{' '.join(str(exc).split())}")
            return None

    def __call__(self, entries: list[WalEntry]) -> None:
        with self._lock:
            self.received += sum(len(entry.cells) for entry in entries)
        if self.ready is not None and not self.ready.is_set():
            with self._lock:
                self.refused += 1
            raise RuntimeError("the copy has not started yet; ship this batch again later")
        rows: list[tuple[bytes, list[WalCell]]] = []
        keys: dict[bytes, bytes | None] = {}
        rejects: list[str] = []
        ignored = foreign = 0
        try:
            for entry in entries:
                if split_table_name(entry.table) != self.source:
                    ignored += len(entry.cells)
                    continue
                if self.regions is not None and not self.regions.admits(entry.encoded_region, entry.write_time):
                    foreign += len(entry.cells)
                    continue
                for cell in entry.cells:
                    if cell.row not in keys:
                        keys[cell.row] = self._new_key(cell.row, rejects)
                    new_key = keys[cell.row]
                    if new_key is None:
                        continue
                    if rows and rows[-1][0] == new_key:
                        rows[-1][1].append(cell)
                    else:
                        rows.append((new_key, [cell]))
            apply_cells(self.store, self.target, rows)
        except BaseException:
            with self._lock:
                self.refused += 1
            raise
        with self._lock:
            self.newest_write_time = max([self.newest_write_time] + [e.write_time for e in entries])
            self.cells += sum(len(cells) for _, cells in rows)
            self.ignored += ignored
            self.foreign += foreign
            self.rejected += len(rejects)
            if rejects and self.reject_path is not None:
                with self.reject_path.open("a") as out:
                    out.write("".join(line + "\n" for line in rejects))
