"""The history store of ``keyshape serve``: per-region request deltas and gauges in SQLite, kept
at several resolutions, plus the gaps in polling, the region events and the last verdicts.

Layers (``LAYERS``): every poll as it came (kept 1 h, so a fresh service has a fine picture at
once), then roll-ups of 1 min kept 6 h, 10 min kept 4 days and 1 h kept 28 days. A poll adds its
deltas to the bucket of each layer it falls in (write and read requests add up; store size,
memstore and store files keep the bucket's last value), so the roll-ups are exact sums, never
re-sampled; ``prune`` drops what each layer keeps no longer.

SQLite (stdlib ``sqlite3``) in WAL mode: one writer (the poller) and readers (the API) at once,
and the file survives the service's restarts. Times are wall-clock epoch seconds.
"""

from __future__ import annotations

import bisect
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["LAYERS", "Cell", "HeatQuery", "History", "Layer"]


@dataclass(frozen=True)
class Layer:
    """One resolution: ``step`` seconds a bucket (0: every poll its own), kept ``keep`` seconds."""

    step: int
    keep: int


HOUR, DAY = 3600, 86400
LAYERS: tuple[Layer, ...] = (Layer(0, HOUR), Layer(60, 6 * HOUR), Layer(600, 4 * DAY), Layer(3600, 28 * DAY))


@dataclass(frozen=True)
class Cell:
    """One region's numbers over one poll interval, as the poller hands them to ``record``."""

    name: str
    start: bytes
    end: bytes
    server: str
    writes: float
    reads: float
    store_bytes: int = 0
    memstore_bytes: int = 0
    store_files: int = 0


@dataclass
class HeatQuery:
    """A heat map read back: ``times`` (bucket starts, epoch s) x ``bounds`` key ranges
    (``starts[i]`` inclusive to ``starts[i+1]``, the last one unbounded), ``writes``/``reads``
    float matrices ``len(times) x len(starts)``, the layer's ``step`` (0: polls)."""

    step: int
    times: np.ndarray
    starts: list[bytes]
    writes: np.ndarray
    reads: np.ndarray


_DDL = """
CREATE TABLE IF NOT EXISTS tables (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS regions (
    id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL, name TEXT NOT NULL, start BLOB NOT NULL, stop BLOB NOT NULL,
    UNIQUE (table_id, name));
CREATE TABLE IF NOT EXISTS cells (
    layer INTEGER NOT NULL, t REAL NOT NULL, table_id INTEGER NOT NULL, region_id INTEGER NOT NULL,
    writes REAL NOT NULL, reads REAL NOT NULL, store_bytes INTEGER NOT NULL, memstore_bytes INTEGER NOT NULL,
    store_files INTEGER NOT NULL, server TEXT NOT NULL,
    PRIMARY KEY (table_id, layer, t, region_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS gaps (id INTEGER PRIMARY KEY, start REAL NOT NULL, stop REAL, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (table_id INTEGER NOT NULL, t REAL NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS verdicts (table_id INTEGER PRIMARY KEY, t REAL NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _bucket(t: float, layer: Layer) -> float:
    return float(t) if layer.step == 0 else float(int(t // layer.step) * layer.step)


class History:
    """The SQLite file at ``path`` (created with its tables when missing); thread-safe (one
    connection, one lock: the poller writes, the API reads)."""

    def __init__(self, path: str | Path, layers: Sequence[Layer] = LAYERS) -> None:
        self.path = str(path)
        self.layers = tuple(layers)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_DDL)
        self._table_ids: dict[str, int] = {}
        self._region_ids: dict[tuple[int, str], int] = {}

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------------------ writes

    def _table_id(self, table: str) -> int:
        tid = self._table_ids.get(table)
        if tid is None:
            self._db.execute("INSERT OR IGNORE INTO tables (name) VALUES (?)", (table,))
            tid = int(self._db.execute("SELECT id FROM tables WHERE name = ?", (table,)).fetchone()[0])
            self._table_ids[table] = tid
        return tid

    def _region_id(self, tid: int, cell: Cell) -> int:
        rid = self._region_ids.get((tid, cell.name))
        if rid is None:
            self._db.execute(
                "INSERT OR IGNORE INTO regions (table_id, name, start, stop) VALUES (?, ?, ?, ?)", (tid, cell.name, cell.start, cell.end)
            )
            rid = int(self._db.execute("SELECT id FROM regions WHERE table_id = ? AND name = ?", (tid, cell.name)).fetchone()[0])
            self._region_ids[(tid, cell.name)] = rid
        return rid

    def record(self, table: str, at: float, cells: Iterable[Cell]) -> None:
        """One poll's deltas of ``table`` taken at ``at``, added to every layer's bucket."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                tid = self._table_id(table)
                rows = []
                for c in cells:
                    rid = self._region_id(tid, c)
                    for k, layer in enumerate(self.layers):
                        rows.append((k, _bucket(at, layer), tid, rid, c.writes, c.reads, c.store_bytes, c.memstore_bytes, c.store_files, c.server))
                self._db.executemany(
                    "INSERT INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (table_id, layer, t, region_id) DO UPDATE SET "
                    "writes = writes + excluded.writes, reads = reads + excluded.reads, store_bytes = excluded.store_bytes, "
                    "memstore_bytes = excluded.memstore_bytes, store_files = excluded.store_files, server = excluded.server",
                    rows,
                )
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('last_poll', ?)", (repr(float(at)),))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def event(self, table: str, at: float, kind: str, detail: str) -> None:
        """A split, merge or move seen at ``at``."""
        with self._lock:
            self._db.execute("INSERT INTO events VALUES (?, ?, ?, ?)", (self._table_id(table), at, kind, detail))

    def open_gap(self, start: float, reason: str) -> int:
        """A time without polls began at ``start`` (the cluster unreachable, the service stopped)."""
        with self._lock:
            cur = self._db.execute("INSERT INTO gaps (start, stop, reason) VALUES (?, NULL, ?)", (start, reason))
            return int(cur.lastrowid or 0)

    def close_gap(self, gap: int, stop: float) -> None:
        with self._lock:
            self._db.execute("UPDATE gaps SET stop = ? WHERE id = ?", (stop, gap))

    def save_verdict(self, table: str, at: float, body: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?)", (self._table_id(table), at, json.dumps(body)))

    def prune(self, now: float | None = None) -> int:
        """Drop every bucket older than its layer keeps; returns the rows dropped."""
        now = time.time() if now is None else now
        dropped = 0
        with self._lock:
            for k, layer in enumerate(self.layers):
                dropped += self._db.execute("DELETE FROM cells WHERE layer = ? AND t < ?", (k, now - layer.keep)).rowcount
            self._db.execute("DELETE FROM events WHERE t < ?", (now - max(x.keep for x in self.layers),))
        return dropped

    # ------------------------------------------------------------------------------- reads

    def last_poll(self) -> float | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'last_poll'").fetchone()
        return float(row[0]) if row else None

    def tables(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT name FROM tables ORDER BY name")]

    def verdicts(self) -> dict[str, tuple[float, dict[str, Any]]]:
        with self._lock:
            rows = self._db.execute("SELECT t.name, v.t, v.body FROM verdicts v JOIN tables t ON t.id = v.table_id").fetchall()
        return {name: (float(at), json.loads(body)) for name, at, body in rows}

    def gaps(self, since: float = 0.0) -> list[tuple[float, float | None, str]]:
        with self._lock:
            rows = self._db.execute("SELECT start, stop, reason FROM gaps WHERE stop IS NULL OR stop >= ? ORDER BY start", (since,)).fetchall()
        return [(float(a), None if b is None else float(b), str(r)) for a, b, r in rows]

    def events(self, table: str, since: float = 0.0) -> list[tuple[float, str, str]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT e.t, e.kind, e.detail FROM events e JOIN tables t ON t.id = e.table_id WHERE t.name = ? AND e.t >= ? ORDER BY e.t",
                (table, since),
            ).fetchall()
        return [(float(a), str(k), str(d)) for a, k, d in rows]

    def layer_for(self, since: float, now: float, max_times: int) -> int:
        """The finest layer that still holds ``since`` and draws the range in ``max_times``
        buckets or fewer (polls count as buckets of their own)."""
        for k, layer in enumerate(self.layers):
            if now - since > layer.keep:
                continue
            if layer.step == 0:
                with self._lock:
                    n = self._db.execute("SELECT COUNT(DISTINCT t) FROM cells WHERE layer = ? AND t >= ?", (k, since)).fetchone()[0]
                if n <= max_times:
                    return k
            elif (now - since) / layer.step <= max_times:
                return k
        return len(self.layers) - 1

    def heat(self, table: str, since: float, until: float | None = None, max_times: int = 1500, max_keys: int = 1500) -> HeatQuery:
        """The ``table``'s requests from ``since`` to ``until`` (default: now) on a key axis
        made of every region boundary seen in the range (a region's requests shared evenly over
        the key buckets it covers: counters say nothing finer), ``max_keys`` buckets at most
        (neighbours merged by summing)."""
        until = time.time() if until is None else until
        k = self.layer_for(since, until, max_times)
        with self._lock:
            tid_row = self._db.execute("SELECT id FROM tables WHERE name = ?", (table,)).fetchone()
            if tid_row is None:
                return HeatQuery(self.layers[k].step, np.zeros(0), [], np.zeros((0, 0)), np.zeros((0, 0)))
            tid = int(tid_row[0])
            data = self._db.execute(
                "SELECT t, region_id, writes, reads FROM cells WHERE table_id = ? AND layer = ? AND t >= ? AND t <= ?",
                (tid, k, _bucket(since, self.layers[k]), until),
            ).fetchall()
            region_rows = self._db.execute("SELECT id, start, stop FROM regions WHERE table_id = ?", (tid,)).fetchall()
        step = self.layers[k].step
        if not data:
            return HeatQuery(step, np.zeros(0), [], np.zeros((0, 0)), np.zeros((0, 0)))
        arr = np.array(data, dtype=np.float64)
        rid = arr[:, 1].astype(np.int64)
        used = np.unique(rid)
        ranges = {int(r): (bytes(s), bytes(e)) for r, s, e in region_rows}
        bounds = sorted({ranges[int(r)][0] for r in used} | {ranges[int(r)][1] for r in used if ranges[int(r)][1]})
        # each region -> [first bucket, last bucket + 1) on the boundary axis
        lo = np.zeros(int(used.max()) + 1, dtype=np.int64)
        hi = np.zeros_like(lo)
        for r in used.tolist():
            s, e = ranges[r]
            a = bisect.bisect_right(bounds, s) - 1
            b = bisect.bisect_left(bounds, e) if e else len(bounds)
            lo[r], hi[r] = max(a, 0), max(b, a + 1)
        times, t_index = np.unique(arr[:, 0], return_inverse=True)
        nk = len(bounds)
        writes = np.zeros((len(times), nk + 1))
        reads = np.zeros((len(times), nk + 1))
        width = (hi[rid] - lo[rid]).astype(np.float64)
        # Spread each region's value over its buckets with a difference array: +v/w at lo, -v/w at hi.
        for m, col in ((writes, 2), (reads, 3)):
            per = arr[:, col] / width
            np.add.at(m, (t_index, lo[rid]), per)
            np.add.at(m, (t_index, hi[rid]), -per)
        writes = np.cumsum(writes, axis=1)[:, :nk]
        reads = np.cumsum(reads, axis=1)[:, :nk]
        if nk > max_keys:
            groups = np.linspace(0, nk, max_keys + 1).astype(np.int64)[:-1]
            writes = np.add.reduceat(writes, groups, axis=1)
            reads = np.add.reduceat(reads, groups, axis=1)
            bounds = [bounds[g] for g in groups.tolist()]
        return HeatQuery(step, times, bounds, np.clip(writes, 0, None), np.clip(reads, 0, None))

    def size_bytes(self) -> int:
        p = Path(self.path)
        return sum(q.stat().st_size for q in (p, Path(self.path + "-wal")) if q.exists())
