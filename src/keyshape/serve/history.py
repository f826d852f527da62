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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FRAME", "LAYERS", "METRICS", "NO_SERVER", "Cell", "HeatQuery", "History", "Layer", "window_keys"]


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


METRICS = ("write", "read", "requests", "store")  # what a heat map can show: requests, or store size (MB)
NO_SERVER = 65535  # a lane cell no region covered in that bucket


@dataclass
class HeatQuery:
    """A heat map read back: ``times`` (bucket starts, epoch s) x ``bounds`` key ranges
    (``starts[i]`` inclusive to ``starts[i+1]``, the last one unbounded), ``values`` float
    matrices ``len(times) x len(starts)`` by metric (``METRICS``), the layer's ``step`` (0: polls).

    ``lane`` (when asked): the same shape, the index into ``servers`` of the region server that
    held the cell's key range in that bucket (``NO_SERVER`` where none did). ``total_keys``: the
    key buckets of the whole table before a window (``k0``..``k1``, fractions of them) was cut."""

    step: int
    times: np.ndarray
    starts: list[bytes]
    values: dict[str, np.ndarray]
    lane: np.ndarray | None = None
    servers: list[str] = field(default_factory=list)
    total_keys: int = 0
    k0: float = 0.0
    k1: float = 1.0

    @property
    def writes(self) -> np.ndarray:
        return self.values["write"]

    @property
    def reads(self) -> np.ndarray:
        return self.values["read"]


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
CREATE TABLE IF NOT EXISTS servers (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS placements (region_id INTEGER NOT NULL, t REAL NOT NULL, server_id INTEGER NOT NULL,
    PRIMARY KEY (region_id, t)) WITHOUT ROWID;
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
        self._server_ids: dict[str, int] = {}
        self._placed: dict[int, int] = {}  # region id -> server id last written to ``placements``

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

    def _server_id(self, name: str) -> int:
        sid = self._server_ids.get(name)
        if sid is None:
            self._db.execute("INSERT OR IGNORE INTO servers (name) VALUES (?)", (name,))
            sid = int(self._db.execute("SELECT id FROM servers WHERE name = ?", (name,)).fetchone()[0])
            self._server_ids[name] = sid
        return sid

    def _place(self, rid: int, at: float, server: str) -> None:
        # Only changes are written (a move, a new region): the lane of 10,000 regions costs no
        # rows a poll when nothing moves. After a restart each region is written once again.
        if not server:
            return
        sid = self._server_id(server)
        if self._placed.get(rid) != sid:
            self._db.execute("INSERT OR REPLACE INTO placements VALUES (?, ?, ?)", (rid, at, sid))
            self._placed[rid] = sid

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
                    for rid, c in zip(frame["region"].tolist(), cells):
                        self._place(int(rid), at, c.server)
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

    def add_watched(self, table: str, because: str) -> None:
        """Remember that serve watches ``table`` because of ``because`` (the table whose plan or
        before/after page named it), so a restarted serve on this file watches it again."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'watched'").fetchone()
            watched = dict(json.loads(row[0])) if row else {}
            watched[table] = because
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('watched', ?)", (json.dumps(watched, sort_keys=True),))

    def watched(self) -> dict[str, str]:
        """The tables ``add_watched`` remembered, each with the table it was watched because of."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'watched'").fetchone()
        return {str(k): str(v) for k, v in json.loads(row[0]).items()} if row else {}

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

    def heat(
        self,
        table: str,
        since: float,
        until: float | None = None,
        max_times: int = 1500,
        max_keys: int = 1500,
        metrics: Sequence[str] = ("write", "read"),
        k0: float = 0.0,
        k1: float = 1.0,
        lane: bool = False,
        extra_bounds: Sequence[bytes] = (),
    ) -> HeatQuery:
        """The ``table``'s ``metrics`` (``METRICS``) from ``since`` to ``until`` (default: now) on
        a key axis made of every region boundary seen in the range (a region's value shared
        evenly over the key buckets it covers: counters say nothing finer) plus ``extra_bounds``
        (a salted table's bucket starts, so that no bucket straddles two salt buckets).

        ``k0``..``k1`` (fractions of that axis) cut a window of it; the window is then drawn in
        ``max_keys`` buckets at most (neighbours merged by summing; 0: no limit), so a zoomed-in
        window shows finer buckets. ``lane``: also which server held each cell."""
        until = time.time() if until is None else until
        k = self.layer_for(since, until, max_times, table)
        step = self.layers[k].step
        empty = HeatQuery(step, np.zeros(0), [], {m: np.zeros((0, 0)) for m in metrics}, np.zeros((0, 0), dtype=np.uint16) if lane else None)
        with self._lock:
            tid_row = self._db.execute("SELECT id FROM tables WHERE name = ?", (table,)).fetchone()
            if tid_row is None:
                return empty
            tid = int(tid_row[0])
            data = self._db.execute(
                "SELECT t, data FROM frames WHERE table_id = ? AND layer = ? AND t >= ? AND t <= ? ORDER BY t",
                (tid, k, _bucket(since, self.layers[k]), until),
            ).fetchall()
            region_rows = self._db.execute("SELECT id, start, stop FROM regions WHERE table_id = ?", (tid,)).fetchall()
            placements = (
                self._db.execute(
                    "SELECT p.region_id, p.t, s.name FROM placements p JOIN regions r ON r.id = p.region_id JOIN servers s ON s.id = p.server_id "
                    "WHERE r.table_id = ? ORDER BY p.region_id, p.t",
                    (tid,),
                ).fetchall()
                if lane
                else []
            )
        if not data:
            return empty
        frames = [_unpack(blob) for _, blob in data]
        times = np.array([t for t, _ in data], dtype=np.float64)
        t_index = np.repeat(np.arange(len(frames), dtype=np.int64), [len(f) for f in frames])
        cells = np.concatenate(frames)
        if not len(cells):
            return HeatQuery(step, times, [], {m: np.zeros((len(times), 0)) for m in metrics}, None)
        rid = cells["region"].astype(np.int64)
        present = np.zeros(int(rid.max()) + 1, dtype=bool)
        present[rid] = True
        used = np.flatnonzero(present)
        ranges = {int(r): (bytes(s), bytes(e)) for r, s, e in region_rows}
        bounds = sorted({ranges[int(r)][0] for r in used} | {ranges[int(r)][1] for r in used if ranges[int(r)][1]} | set(extra_bounds) | {b""})
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
        width = hi[rid] - lo[rid]
        spread = bool((width != 1).any())
        columns = {"write": ("writes",), "read": ("reads",), "requests": ("writes", "reads"), "store": ("store_mb",)}
        values: dict[str, np.ndarray] = {}
        for metric in metrics:
            per = cells[columns[metric][0]].astype(np.float64)
            for c in columns[metric][1:]:
                per += cells[c]
            if spread:
                # a region over several buckets: its value shared evenly, by a difference array
                # (+v/w where it starts, -v/w where it ends, summed along the key axis)
                per = per / width
                m = np.bincount(at_lo, per, shape[0] * shape[1]) - np.bincount(at_hi, per, shape[0] * shape[1])
                values[metric] = np.clip(np.cumsum(m.reshape(shape), axis=1)[:, :nk], 0, None)
            else:
                values[metric] = np.bincount(at_lo, per, shape[0] * shape[1]).reshape(shape)[:, :nk]
        q = HeatQuery(step, times, bounds, values, total_keys=nk)
        if lane:
            q.lane, q.servers = _lane(placements, rid, t_index, times, lo, width, (len(times), nk))
        return window_keys(q, k0, k1, max_keys)

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


def _lane(
    placements: Sequence[tuple[int, float, str]],
    rid: np.ndarray,
    t_index: np.ndarray,
    times: np.ndarray,
    lo: np.ndarray,
    width: np.ndarray,
    shape: tuple[int, int],
) -> tuple[np.ndarray, list[str]]:
    """Which server held each (time bucket, key bucket): each stored cell's region's placement
    at the bucket's time, written over the key buckets the region covers (a split parent's last
    estimate and its daughters share a frame; the daughters, newer ids, are written last)."""
    servers = sorted({s for _, _, s in placements})
    index = {s: i for i, s in enumerate(servers)}
    first = np.full(int(rid.max()) + 1, NO_SERVER, dtype=np.int64)
    moved: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    by_region: dict[int, list[tuple[float, int]]] = {}
    for r, t, s in placements:
        if int(r) < len(first):
            by_region.setdefault(int(r), []).append((float(t), index[s]))
    for r, seq in by_region.items():
        first[r] = seq[0][1]
        if len(seq) > 1:
            moved[r] = (np.array([t for t, _ in seq]), np.array([s for _, s in seq]))
    sid = first[rid]
    for r, (ts, ss) in moved.items():  # regions that moved: the placement in force at each bucket
        at = np.flatnonzero(rid == r)
        k = np.clip(np.searchsorted(ts, times[t_index[at]], side="right") - 1, 0, len(ts) - 1)
        sid[at] = ss[k]
    lane = np.full(shape, NO_SERVER, dtype=np.uint16)
    if bool((width == 1).all()):  # every region one key bucket (no split seen in the range): one write each
        lane[t_index, lo[rid]] = sid
        return lane, servers
    w = width.astype(np.int64)
    order = np.repeat(np.arange(len(rid)), w)
    offset = np.arange(len(order)) - np.repeat(np.cumsum(w) - w, w)
    cols = lo[rid][order] + offset
    ok = cols < shape[1]
    lane[t_index[order][ok], cols[ok]] = sid[order][ok]
    return lane, servers


def window_keys(q: HeatQuery, k0: float = 0.0, k1: float = 1.0, max_keys: int = 1500) -> HeatQuery:
    """``q`` cut to the key buckets from fraction ``k0`` to ``k1`` of its axis, then at most
    ``max_keys`` buckets (neighbours summed; a lane takes each group's first bucket's server)."""
    nk = len(q.starts)
    k0 = min(max(float(k0), 0.0), 1.0)
    k1 = min(max(float(k1), k0), 1.0)
    a = min(int(np.floor(k0 * nk)), max(nk - 1, 0))
    b = max(a + 1, int(np.ceil(k1 * nk)))
    b = min(b, nk)
    starts = q.starts[a:b]
    values = {m: v[:, a:b] for m, v in q.values.items()}
    lane = q.lane[:, a:b] if q.lane is not None else None
    if max_keys and len(starts) > max_keys:
        groups = np.linspace(0, len(starts), max_keys + 1).astype(np.int64)[:-1]
        values = {m: np.add.reduceat(v, groups, axis=1) for m, v in values.items()}
        lane = lane[:, groups] if lane is not None else None
        starts = [starts[g] for g in groups.tolist()]
    return HeatQuery(q.step, q.times, starts, values, lane, q.servers, q.total_keys or nk, k0, k1)
