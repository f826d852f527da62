"""The online half of a migration (issue 32, first increment): re-key what keyshape's replication
sink receives from the OLD table and write it to the NEW table.

Each replicated cell's row is decoded with OLD's schema and encoded with NEW's; the cell keeps its
family, qualifier, timestamp, type and value. A batch is acknowledged (the callback returns) only
after NEW acknowledged every cell, so HBase re-ships anything not written. Writing every cell at
its own timestamp makes NEW converge to OLD whatever the order and however often the copy and the
stream deliver a cell. Rows whose OLD key does not decode (or that NEW cannot encode) are counted
and go to the reject file, never dropped silently.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema
from keyshape.store.base import split_table_name
from keyshape.store.hbase.walapply import apply_cells
from keyshape.store.hbase.walentry import WalCell, WalEntry

if TYPE_CHECKING:  # annotations only
    from keyshape.store.hbase.store import HBaseStore

__all__ = ["ReKeyer"]


class ReKeyer:
    """A replication sink callback that re-keys OLD's cells into NEW's table.

    ``ready``: batches that arrive before it is set are refused (HBase ships them again later),
    e.g. until the copy has checked that NEW is empty. Counters: ``received`` cells (every
    delivery, re-shipped ones again), ``cells`` applied, ``refused`` batches, ``rejected`` rows
    (their keys and reasons appended to ``reject_path`` when given), ``ignored`` cells of other
    tables; ``newest_write_time``: the WAL write time (ms) of the newest entry applied."""

    def __init__(
        self, store: HBaseStore, old: KeySchema, new: KeySchema, reject_path: str | Path | None = None, ready: threading.Event | None = None
    ) -> None:
        self.store, self.old, self.new = store, old, new
        self.source = split_table_name(old.table.full_name)
        self.target = new.table.full_name
        self.reject_path = Path(reject_path) if reject_path is not None else None
        self.ready = ready
        self.cells = self.rejected = self.ignored = self.received = self.refused = 0
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
        ignored = 0
        for entry in entries:
            if split_table_name(entry.table) != self.source:
                ignored += len(entry.cells)
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
        try:
            apply_cells(self.store, self.target, rows)
        except BaseException:
            with self._lock:
                self.refused += 1
            raise
        with self._lock:
            self.newest_write_time = max([self.newest_write_time] + [e.write_time for e in entries])
            self.cells += sum(len(cells) for _, cells in rows)
            self.ignored += ignored
            self.rejected += len(rejects)
            if rejects and self.reject_path is not None:
                with self.reject_path.open("a") as out:
                    out.write("".join(line + "\n" for line in rejects))
