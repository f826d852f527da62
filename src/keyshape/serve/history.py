"""The history store of ``keyshape serve``: per-region request deltas and gauges in SQLite, kept
at several resolutions, plus the gaps in polling, the region events and the last verdicts.

Layers (``LAYERS``): every poll as it came (kept 1 h, so a fresh service has a fine picture at
once), then roll-ups of 1 min kept 6 h, 10 min kept 4 days and 1 h kept 28 days. A poll adds its
deltas to the bucket of each layer it falls in (write and read requests add up; store size,
memstore and store files keep the bucket's last value), so the roll-ups are exact sums, never
re-sampled; ``prune`` drops what each layer keeps no longer.

Storage: one row per table, layer and time bucket (a FRAME), holding that bucket's regions as one
numpy record array (region id, writes, reads, store size, memstore, store files),
as TiDB's Key Visualizer keeps a matrix per time: a heat map of 1,500 buckets reads 1,500 rows,
not one row per region and bucket, and 10,000 regions polled every minute write 400 rows a poll.
Region ids map to names and key ranges in their own table.

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

__all__ = ["FRAME", "LAYERS", "Cell", "HeatQuery", "History", "Layer"]


@dataclass(frozen=True)
class Layer:
    """One resolution: ``step`` seconds a bucket (0: every poll its own), kept ``keep`` seconds."""

    step: int
    keep: int


HOUR, DAY = 3600, 86400
LAYERS: tuple[Layer, ...] = (Layer(0, HOUR), Layer(60, 6 * HOUR), Layer(600, 4 * DAY), Layer(3600, 28 * DAY))


# One region in one time bucket. Request counts are whole numbers (an hour of one region fits
# 32 bits up to 1.1 M requests a second); sizes are whole MB as HBase reports them.
FRAME = np.dtype([("region", "<u4"), ("writes", "<u4"), ("reads", "<u4"), ("store_mb", "<u4"), ("memstore_mb", "<u4"), ("store_files", "<u2")])
_MB = 2**20


def _pack(frame: np.ndarray) -> bytes:
    # Not compressed: zlib.decompress took 1.0 s of a 1,500 x 1,500 heat-map query (profiled).
    return np.ascontiguousarray(frame, dtype=FRAME).tobytes()


def _unpack(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=FRAME)


def _merge(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``new`` (unique regions) added into ``old`` (unique, sorted by region): requests add up,
    gauges take the new value; sorted by region."""
    out = old.copy()
    at = np.searchsorted(out["region"], new["region"])
    at_clipped = np.minimum(at, max(len(out) - 1, 0))
    found = (at < len(out)) & (out["region"][at_clipped] == new["region"]) if len(out) else np.zeros(len(new), dtype=bool)
    idx = at[found]
    hit = new[found]
    for c in ("writes", "reads"):  # saturate rather than wrap around (a bucket past 2^32 requests)
        out[c][idx] = np.minimum(out[c][idx].astype(np.uint64) + hit[c], 2**32 - 1)
    for g in ("store_mb", "memstore_mb", "store_files"):
        out[g][idx] = hit[g]
    out = np.concatenate([out, new[~found]])
    return out[np.argsort(out["region"], kind="stable")]


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
CREATE TABLE IF NOT EXISTS frames (
    table_id INTEGER NOT NULL, layer INTEGER NOT NULL, t REAL NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (table_id, layer, t)) WITHOUT ROWID;
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
            # Frames are a few KB: 64 KB pages hold them with little slack (a new file only;
            # 4 KB pages took 4.9 KB a 2.2 KB frame, 64 KB pages 3.0 KB, measured).
            self._db.execute("PRAGMA page_size = 65536")
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
        cells = list(cells)
        with self._lock:
            self._db.execute("BEGIN")
            try:
                tid = self._table_id(table)
                frame = np.zeros(len(cells), dtype=FRAME)
                if cells:
                    frame["region"] = [self._region_id(tid, c) for c in cells]
                    frame["writes"] = np.rint([max(c.writes, 0.0) for c in cells])
                    frame["reads"] = np.rint([max(c.reads, 0.0) for c in cells])
                    frame["store_mb"] = [c.store_bytes // _MB for c in cells]
                    frame["memstore_mb"] = [c.memstore_bytes // _MB for c in cells]
                    frame["store_files"] = [min(c.store_files, 65535) for c in cells]
                # one entry per region (a poll names each once; be safe), sorted by region
                _, first = np.unique(frame["region"][::-1], return_index=True)
                frame = frame[::-1][first]
                for k, layer in enumerate(self.layers):
                    t = _bucket(at, layer)
                    row = self._db.execute("SELECT data FROM frames WHERE table_id = ? AND layer = ? AND t = ?", (tid, k, t)).fetchone()
                    merged = _merge(_unpack(row[0]), frame) if row else frame
                    self._db.execute("INSERT OR REPLACE INTO frames VALUES (?, ?, ?, ?)", (tid, k, t, _pack(merged)))
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
        """Drop every bucket older than its layer keeps; returns the frames dropped."""
        now = time.time() if now is None else now
        dropped = 0
        with self._lock:
            for k, layer in enumerate(self.layers):
                dropped += self._db.execute("DELETE FROM frames WHERE layer = ? AND t < ?", (k, now - layer.keep)).rowcount
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

    def layer_for(self, since: float, now: float, max_times: int, table: str | None = None) -> int:
        """The finest layer that still holds ``since`` and draws the range in ``max_times``
        buckets or fewer (polls count as buckets of their own: ``table``'s, else all tables')."""
        for k, layer in enumerate(self.layers):
            if now - since > layer.keep:
                continue
            if layer.step == 0:
                with self._lock:
                    n = self._db.execute(
                        "SELECT COUNT(*) FROM frames f JOIN tables t ON t.id = f.table_id "
                        "WHERE f.layer = ? AND f.t >= ? AND (? IS NULL OR t.name = ?)",
                        (k, since, table, table),
                    ).fetchone()[0]
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
        k = self.layer_for(since, until, max_times, table)
        with self._lock:
            tid_row = self._db.execute("SELECT id FROM tables WHERE name = ?", (table,)).fetchone()
            if tid_row is None:
                return HeatQuery(self.layers[k].step, np.zeros(0), [], np.zeros((0, 0)), np.zeros((0, 0)))
            tid = int(tid_row[0])
            data = self._db.execute(
                "SELECT t, data FROM frames WHERE table_id = ? AND layer = ? AND t >= ? AND t <= ? ORDER BY t",
                (tid, k, _bucket(since, self.layers[k]), until),
            ).fetchall()
            region_rows = self._db.execute("SELECT id, start, stop FROM regions WHERE table_id = ?", (tid,)).fetchall()
        step = self.layers[k].step
        if not data:
            return HeatQuery(step, np.zeros(0), [], np.zeros((0, 0)), np.zeros((0, 0)))
        frames = [_unpack(blob) for _, blob in data]
        times = np.array([t for t, _ in data], dtype=np.float64)
        t_index = np.repeat(np.arange(len(frames), dtype=np.int64), [len(f) for f in frames])
        cells = np.concatenate(frames)
        if not len(cells):
            return HeatQuery(step, times, [], np.zeros((len(times), 0)), np.zeros((len(times), 0)))
        rid = cells["region"].astype(np.int64)
        present = np.zeros(int(rid.max()) + 1, dtype=bool)
        present[rid] = True
        used = np.flatnonzero(present)
        ranges = {int(r): (bytes(s), bytes(e)) for r, s, e in region_rows}
        bounds = sorted({ranges[int(r)][0] for r in used} | {ranges[int(r)][1] for r in used if ranges[int(r)][1]})
        # each region -> [first bucket, last bucket + 1) on the boundary axis
        lo = np.zeros(len(present), dtype=np.int64)
        hi = np.zeros_like(lo)
        for r in used.tolist():
            s, e = ranges[r]
            a = bisect.bisect_right(bounds, s) - 1
            b = bisect.bisect_left(bounds, e) if e else len(bounds)
            lo[r], hi[r] = max(a, 0), max(b, a + 1)
        nk = len(bounds)
        shape = (len(times), nk + 1)
        at_lo = t_index * (nk + 1) + lo[rid]
        at_hi = t_index * (nk + 1) + hi[rid]
        spread = not np.array_equal(hi[rid] - lo[rid], np.ones(len(rid), dtype=np.int64))
        width = (hi[rid] - lo[rid]).astype(np.float64)
        out = []
        for col in ("writes", "reads"):
            per = cells[col].astype(np.float64)
            if spread:
                # a region over several buckets: its value shared evenly, by a difference array
                # (+v/w where it starts, -v/w where it ends, summed along the key axis)
                per = per / width
                m = np.bincount(at_lo, per, shape[0] * shape[1]) - np.bincount(at_hi, per, shape[0] * shape[1])
                out.append(np.cumsum(m.reshape(shape), axis=1)[:, :nk])
            else:
                out.append(np.bincount(at_lo, per, shape[0] * shape[1]).reshape(shape)[:, :nk])
        writes, reads = out
        if nk > max_keys:
            groups = np.linspace(0, nk, max_keys + 1).astype(np.int64)[:-1]
            writes = np.add.reduceat(writes, groups, axis=1)
            reads = np.add.reduceat(reads, groups, axis=1)
            bounds = [bounds[g] for g in groups.tolist()]
        return HeatQuery(step, times, bounds, np.clip(writes, 0, None), np.clip(reads, 0, None))

    def frames(self, table: str, layer: int) -> list[tuple[float, np.ndarray]]:
        """The stored frames of ``table`` in ``layer`` (index into ``layers``), oldest first:
        ``(bucket start, FRAME records)``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT f.t, f.data FROM frames f JOIN tables t ON t.id = f.table_id WHERE t.name = ? AND f.layer = ? ORDER BY f.t", (table, layer)
            ).fetchall()
        return [(float(t), _unpack(blob)) for t, blob in rows]

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the file and truncate it (SQLite does so on its own
        every 1,000 pages; this is for measuring the file's size)."""
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def size_bytes(self) -> int:
        p = Path(self.path)
        return sum(q.stat().st_size for q in (p, Path(self.path + "-wal")) if q.exists())
