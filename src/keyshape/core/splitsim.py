"""A time-aware replay of HBase's automatic region splits, chunk by chunk in flat memory.

What HBase 2.6 does, and what ``SplitSimulator`` models of it:

- Writes fill a region's memstore; at ``flush_size`` (the table's ``MEMSTORE_FLUSHSIZE``, counted
  as heap bytes: the serialized cell plus ``cell_overhead``) it is flushed to a store file.
- A split is only considered after a flush (``MemStoreFlusher`` asks ``HRegion.checkSplit``), and
  after a compaction; a region whose stores hold reference files cannot split.
- ``SteppingSplitPolicy`` (HBase's default) splits the table's only region on a server once its
  store files pass ``2 x flush_size``, and every other region at ``MAX_FILESIZE``, jittered per
  region by ``+-jitter/2`` (``hbase.regionserver.region.split.jitter`` 0.25: +-12.5 %).
  ``IncreasingToUpperBoundRegionSplitPolicy`` checks ``min(MAX_FILESIZE, 2 x flush x n^3)`` for
  ``n`` regions of the table on the server; ``ConstantSizeRegionSplitPolicy`` just
  ``MAX_FILESIZE``; ``KeyPrefixRegionSplitPolicy`` / ``DelimitedKeyPrefixRegionSplitPolicy``
  (increasing-to-upper-bound sizes) cut the split point to its first ``prefix_length`` bytes /
  to before the first ``delimiter`` so a prefix never straddles two regions.
- The split point is the middle key of the region's LARGEST store file
  (``StoreFileManager.getSplitPoint``), not the region's median row.
- Daughters open with reference files to the parent's files. They compact them away at once
  (``compaction_delay``), but the compacted reference files stay in the store until the
  ``CompactedHFilesDischarger`` chore runs (every ``cleaner_interval``, 120 s by default), and
  until then the daughter cannot split. Daughters stay on their parent's server.
- Minor compactions: after a flush, when ``compaction_min`` (3) or more files qualify under the
  exploring policy's ratio rule (each file at most ``compaction_ratio`` x the others together).

How long a flush and a split take are inputs (``SplitModel.flush_seconds``, ``split_seconds``;
0 by default, as if instant): a flush's file and its split check come that long after the memstore
filled, the daughters open that long after the split request, the parent taking the writes until
then. Not modelled: compactions' own duration (``compaction_delay`` stands for it), blocked
writes (``hbase.hstore.blockingStoreFiles``), the balancer moving regions, overwrites shrinking
files at compaction, major compactions and region merges.

A split's time varies from split to split with the machine's load, and with references cleaned
often it and the compactions' time bound how fast a table splits; ``region_range`` replays the
writes with the shortest, median and longest split time seen (and the shortest with an instant
compaction) and states the prediction as that band.

Memory: keys are never kept. Each region keeps a bounded sample of its keys (chosen by a hash of
the write position, so halving a sample keeps a uniform sample) and each store file a few
quantile keys; the split key and the division of a parent's writes between its daughters come
from those samples (the writes a region takes after its last split are counted exactly).
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from keyshape.core.autosplit import RowLimit
from keyshape.core.keyarray import KeyArray
from keyshape.core.regions import RegionMap, SplitEvent
from keyshape.core.splitmodel import (
    COMPRESSION_RATIOS,
    POLICIES,
    SplitHistory,
    SplitModel,
    Stage,
    cell_size,
    parse_policy,
)
from keyshape.errors import BadInput

__all__ = [
    "COMPRESSION_RATIOS",
    "POLICIES",
    "RegionRange",
    "SplitHistory",
    "SplitModel",
    "SplitSimulator",
    "Stage",
    "cell_size",
    "parse_policy",
    "region_range",
]

_QUANTILES = 129  # quantile keys kept per store file: its middle key is quantile 64
_REGION_SAMPLE = 1024  # a region's key sample is halved when it passes twice this
_BLOCK = 1 << 15
_FINE_BINS = 8  # fine time bins per report window; the bin width doubles as writes arrive


@dataclass
class _File:
    size: int
    rows: int
    quantiles: list[bytes]  # sorted, equally weighted

    def mid_key(self) -> bytes | None:
        return self.quantiles[len(self.quantiles) // 2] if self.quantiles else None


@dataclass
class _Region:
    node: int
    server: int
    desired: int
    files: list[_File] = field(default_factory=list)
    mem_heap: int = 0
    mem_bytes: int = 0
    mem_rows: int = 0
    mem_keys: list[bytes] = field(default_factory=list)
    refs_until: float = -math.inf
    writes: int = 0  # rows the region holds: its writes plus its share of its parent's
    sample_keys: list[bytes] = field(default_factory=list)
    sample_pos: list[int] = field(default_factory=list)
    stride: int = 1
    limit: int = 0  # the 'rows' policy's row limit for this region
    flushing: list[_File] = field(default_factory=list)  # flushes under way (flush_seconds)
    split_pending: bool = False  # a split requested, its daughters not yet open (split_seconds)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


def _mix(pos: np.ndarray) -> np.ndarray:
    """A fixed pseudo-random 32-bit value per write position (Knuth's multiplicative hash), so
    'keep every write whose value is 0 modulo stride' samples uniformly and halving the sample
    (stride x 2) keeps exactly a subset of it."""
    return ((pos.astype(np.uint64) * np.uint64(2654435761)) >> np.uint64(7)) & np.uint64(0xFFFFFFFF)


def _quantiles(keys: list[bytes], weights: list[float] | None = None) -> list[bytes]:
    """Up to _QUANTILES equally weighted keys summarizing ``keys`` (sorted)."""
    if not keys:
        return []
    if weights is None:
        ordered = sorted(keys)
        if len(ordered) <= _QUANTILES:
            return ordered
        picks = np.linspace(0, len(ordered) - 1, _QUANTILES).round().astype(int)
        return [ordered[i] for i in picks]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    w = np.array([weights[i] for i in order], dtype=np.float64)
    cum = np.cumsum(w) - w / 2
    targets = np.linspace(0, float(w.sum()), min(_QUANTILES, len(keys)) + 2)[1:-1]
    picks = np.clip(np.searchsorted(cum, targets), 0, len(order) - 1)
    return [keys[order[i]] for i in picks]


def _take(keys: KeyArray | Sequence[bytes], rows: np.ndarray) -> list[bytes]:
    if isinstance(keys, KeyArray):
        return KeyArray(keys.matrix[rows], keys.lengths[rows]).tolist()
    return [keys[int(i)] for i in rows]


class SplitSimulator:
    """Feed keys in write order (``feed``), then ``finish`` for a ``SplitHistory``.

    ``times`` (seconds, non-decreasing) give each write's time; without them write ``i`` happens
    at ``i / model.write_rate``. ``windows`` is the number of report windows. ``model``: the
    :class:`SplitModel` replayed; ``initial_splits``: the table's split keys before the first
    write; ``servers``: region servers (None: ``model.servers``).
    """

    def __init__(self, model: SplitModel, initial_splits: Sequence[bytes] = (), *, windows: int = 50, servers: int | None = None) -> None:
        self.model = model
        self._cell = 40 if model.cell_bytes is None else int(model.cell_bytes)
        start = RegionMap(initial_splits)
        self._initial = start.split_keys
        self._splits: list[bytes] = list(start.split_keys)
        self._map = start
        self._rng = np.random.default_rng(model.seed)
        self._phase = float(self._rng.uniform(0, model.cleaner_interval))
        self._servers = int(servers or model.servers)
        self._nodes = 0
        self._regions = [self._new_region(i % self._servers) for i in range(len(start))]
        self._windows = windows
        self._bins = _FINE_BINS * windows
        self._width = 1
        self._counts = np.zeros((len(start), self._bins), dtype=np.int64)
        self._kbytes = np.zeros(len(start), dtype=np.int64)
        self._node_bins: dict[tuple[int, int], int] = {}
        self._node_server: dict[int, int] = {r.node: r.server for r in self._regions}
        self._bin_time = np.full(self._bins, np.nan)
        self._events: list[SplitEvent] = []
        self._lineage: dict[int, tuple[int, int]] = {}
        self._pos = 0
        self._last_time: float | None = None
        # Flushes and splits under way: (time done, order, kind, region node, payload).
        self._pending: list[tuple[float, int, str, int, _File | tuple[bytes, float, int]]] = []
        self._order = 0

    # -- region bookkeeping -------------------------------------------------------------------

    def _new_region(self, server: int) -> _Region:
        m = self.model
        desired = int(m.max_filesize)
        if m.jitter and m.policy != "rows":
            # ConstantSizeRegionSplitPolicy.configureForRegion: desired += desired*(r-0.5)*jitter
            desired += int(desired * (float(self._rng.random()) - 0.5) * m.jitter)
        self._nodes += 1
        return _Region(node=self._nodes - 1, server=server, desired=desired, limit=int(m.max_rows or 0))

    def _size_to_check(self, r: int) -> int:
        m = self.model
        region = self._regions[r]
        if m.policy == "constant":
            return region.desired
        count = sum(1 for x in self._regions if x.server == region.server)
        if m.policy == "stepping":
            return m.first_split_size if count == 1 else region.desired
        if count == 0 or count > 100:
            return region.desired
        return min(region.desired, m.first_split_size * count**3)

    # -- feeding ------------------------------------------------------------------------------

    def feed(self, keys: KeyArray | Sequence[bytes], times: np.ndarray | None = None) -> None:
        """Add one chunk of writes in write order (a KeyArray is the fast path)."""
        n = len(keys)
        if n == 0:
            return
        if not isinstance(keys, KeyArray):
            keys = list(keys)
        if times is None:
            if self.model.write_rate is None and self.model.policy != "rows":
                raise BadInput("the split simulation needs a write rate (rows per second) or the time of every write")
            rate = self.model.write_rate
            times = None if rate is None else np.arange(self._pos, self._pos + n, dtype=np.float64) / float(rate)
        else:
            times = np.asarray(times, dtype=np.float64)
            if times.shape != (n,):
                raise BadInput(f"times has shape {times.shape}; give one time per key ({n})")
        lengths = keys.lengths if isinstance(keys, KeyArray) else np.fromiter(map(len, keys), dtype=np.int64, count=n)
        for lo in range(0, n, _BLOCK):
            hi = min(lo + _BLOCK, n)
            self._block(keys[lo:hi], lengths[lo:hi], None if times is None else times[lo:hi])

    def _block(self, keys: KeyArray | list[bytes], lengths: np.ndarray, times: np.ndarray | None) -> None:
        m = self.model
        n = len(lengths)
        heap = lengths + (self._cell + m.cell_overhead)
        i = 0
        while i < n:
            # A flush or split under way ends at its time: the writes before it see the regions
            # as they were, those from then on the new file or the daughters.
            hi = n
            if times is not None and self._pending:
                while self._pending and self._pending[0][0] <= times[i]:
                    self._finish_pending()
                if self._pending:
                    hi = i + int(np.searchsorted(times[i:], self._pending[0][0], side="left"))
                    hi = max(hi, i + 1)
            idx = self._map.assign(keys[i:hi])
            R = len(self._regions)
            # Where, in this block, does each region next reach its event (a flush, or for the
            # 'rows' policy its row limit: RowLimit.splits, vectorised)? Only the earliest event
            # needs per-write attention.
            order = np.argsort(idx, kind="stable")
            sidx = idx[order]
            if m.policy == "rows":
                step = np.ones(hi - i, dtype=np.int64)
                have = np.array([x.writes for x in self._regions], dtype=np.int64)
                limit = np.array([x.limit for x in self._regions], dtype=np.int64)
            else:
                step = heap[i:hi]
                have = np.array([x.mem_heap for x in self._regions], dtype=np.int64)
                limit = np.full(R, int(m.flush_size), dtype=np.int64)
            cs = np.cumsum(step[order])
            first = np.searchsorted(sidx, np.arange(R), side="left")
            base = np.where(first > 0, cs[np.maximum(first - 1, 0)], 0)
            running = cs - base[sidx] + have[sidx]
            crossing = order[running > limit[sidx]] if m.policy == "rows" else order[running >= limit[sidx]]
            if crossing.size == 0:
                self._apply(keys, lengths, times, i, hi, idx)
                i = hi
                continue
            e = int(crossing.min())
            self._apply(keys, lengths, times, i, i + e + 1, idx[: e + 1])
            r = int(idx[e])
            t = None if times is None else float(times[i + e])
            if m.policy == "rows":
                self._try_split(r, t, self._pos - 1)
            else:
                self._flush(r, t)
            i += e + 1

    def _apply(self, keys: KeyArray | list[bytes], lengths: np.ndarray, times: np.ndarray | None, lo: int, hi: int, idx: np.ndarray) -> None:
        """Count writes ``lo:hi`` of the block (region ``idx`` each) into every accumulator."""
        m = self.model
        n = hi - lo
        R = len(self._regions)
        pos = np.arange(self._pos, self._pos + n, dtype=np.int64)
        ln = lengths[lo:hi]
        while (self._pos + n - 1) // self._width >= self._bins:
            self._coarsen()
        bins = pos // self._width
        self._counts += np.bincount(idx * self._bins + bins, minlength=R * self._bins).reshape(R, self._bins)
        self._kbytes += np.bincount(idx, weights=ln, minlength=R).astype(np.int64)
        per = np.bincount(idx, minlength=R)
        heap = np.bincount(idx, weights=ln + (self._cell + m.cell_overhead), minlength=R)
        data = np.bincount(idx, weights=(ln + self._cell) * m.compression, minlength=R)
        nodes = np.array([x.node for x in self._regions], dtype=np.int64)
        ub, uc = np.unique(bins * (1 << 24) + nodes[idx], return_counts=True)
        for key, count in zip(ub.tolist(), uc.tolist()):
            k = (key >> 24, key & ((1 << 24) - 1))
            self._node_bins[k] = self._node_bins.get(k, 0) + count
        if times is not None:
            self._bin_time[bins] = times[lo:hi]  # the last write of each bin wins
            self._last_time = float(times[hi - 1])
        for r in np.flatnonzero(per).tolist():
            x = self._regions[r]
            x.writes += int(per[r])
            x.mem_heap += int(heap[r])
            x.mem_bytes += int(data[r])
            x.mem_rows += int(per[r])
        mixed = _mix(pos)
        strides = np.array([x.stride for x in self._regions], dtype=np.uint64)
        keep = np.flatnonzero(mixed % strides[idx] == 0)
        if keep.size:
            sampled = _take(keys, keep + lo)
            for j, key in zip(keep.tolist(), sampled):
                x = self._regions[int(idx[j])]
                x.sample_keys.append(key)
                x.sample_pos.append(int(pos[j]))
            for x in self._regions:
                while len(x.sample_keys) > 2 * _REGION_SAMPLE:
                    x.stride *= 2
                    kept = [k for k, p in enumerate(_mix(np.array(x.sample_pos)).tolist()) if p % x.stride == 0]
                    x.sample_keys = [x.sample_keys[k] for k in kept]
                    x.sample_pos = [x.sample_pos[k] for k in kept]
        if m.policy != "rows":
            # The memstore's own sample (for its file's middle key): about _QUANTILES x 4 keys
            # a flush, whatever the flush size.
            cells = max(1, int(m.flush_size) // int(max(heap.sum() / max(n, 1), 1)))
            stride = 1 << max(0, int(math.log2(max(cells // (_QUANTILES * 4), 1))))
            keep = np.flatnonzero(mixed % np.uint64(stride) == 0)
            if keep.size:
                for j, key in zip(keep.tolist(), _take(keys, keep + lo)):
                    self._regions[int(idx[j])].mem_keys.append(key)
        self._pos += n

    def _coarsen(self) -> None:
        half = self._bins // 2
        self._counts[:, :half] = self._counts[:, 0::2] + self._counts[:, 1::2]
        self._counts[:, half:] = 0
        t = self._bin_time
        merged = np.where(np.isnan(t[1::2]), t[0::2], t[1::2])
        self._bin_time = np.concatenate([merged, np.full(self._bins - half, np.nan)])
        nb: dict[tuple[int, int], int] = {}
        for (b, node), c in self._node_bins.items():
            k = (b // 2, node)
            nb[k] = nb.get(k, 0) + c
        self._node_bins = nb
        self._width *= 2

    # -- flush, compaction, split ---------------------------------------------------------------

    def _flush(self, r: int, t: float | None) -> None:
        x = self._regions[r]
        made = _File(x.mem_bytes, x.mem_rows, _quantiles(x.mem_keys)) if x.mem_rows else None
        x.mem_heap = x.mem_bytes = x.mem_rows = 0
        x.mem_keys = []
        if made is not None and t is not None and self.model.flush_seconds > 0:
            # The snapshot is written while new writes fill a new memstore; the file, the
            # compaction and the split check come when the flush is done.
            x.flushing.append(made)
            self._later(t + self.model.flush_seconds, "flush", x.node, made)
            return
        if made is not None:
            x.files.append(made)
        self._compact(x)
        self._try_split(r, t, self._pos - 1)

    def _later(self, when: float, kind: str, node: int, payload: _File | tuple[bytes, float, int]) -> None:
        self._order += 1
        heapq.heappush(self._pending, (when, self._order, kind, node, payload))

    def _finish_pending(self) -> None:
        """End the earliest flush or split under way, at its own time."""
        when, _, _kind, node, payload = heapq.heappop(self._pending)
        r = next((i for i, x in enumerate(self._regions) if x.node == node), None)
        if r is None:
            return  # its region split meanwhile: the closing region flushed the snapshot
        x = self._regions[r]
        if isinstance(payload, _File):
            x.flushing = [f for f in x.flushing if f is not payload]
            x.files.append(payload)
            self._compact(x)
            self._try_split(r, when, self._pos - 1)
        else:
            point, requested, write_index = payload
            self._split(r, point, requested, write_index, opened=when)

    def _compact(self, x: _Region) -> None:
        """ExploringCompactionPolicy, simplified: the longest run of consecutive files (oldest
        first) of at least compaction_min where every file is at most ratio x the rest."""
        m = self.model
        files = x.files
        best: tuple[int, int] | None = None
        for lo in range(len(files)):
            for hi in range(lo + m.compaction_min, min(len(files), lo + m.compaction_max) + 1):
                run = files[lo:hi]
                total = sum(f.size for f in run)
                if all(f.size <= m.compaction_ratio * (total - f.size) for f in run):
                    if (
                        best is None
                        or hi - lo > best[1] - best[0]
                        or (hi - lo == best[1] - best[0] and total < sum(f.size for f in files[best[0] : best[1]]))
                    ):
                        best = (lo, hi)
        if best is not None:
            lo, hi = best
            x.files[lo:hi] = [_merge(files[lo:hi])]

    def _try_split(self, r: int, t: float | None, write_index: int) -> None:
        m = self.model
        x = self._regions[r]
        start = b"" if r == 0 else self._splits[r - 1]
        end = self._splits[r] if r < len(self._splits) else b""
        if m.policy == "rows":
            # The one idealized rule (keyshape.core.autosplit), over the writes counted exactly
            # and the middle of the region's uniform key sample; x.limit is max_rows, raised
            # for a region one key cannot split.
            rule = RowLimit(max_rows=x.limit)
            if not rule.splits(x.writes) or len(x.sample_keys) < 2:
                return
            point = rule.split_key(sorted(x.sample_keys))
        else:
            if x.split_pending or (t is not None and t < x.refs_until):
                return
            if not x.files or x.size <= self._size_to_check(r):
                return
            largest = max(x.files, key=lambda f: f.size)
            mid = largest.mid_key()
            if mid is None:
                return
            point = mid
            if m.policy == "key-prefix":
                point = point[: int(m.prefix_length or 0)]
            elif m.policy == "delimited":
                cut = point.find(m.delimiter or b"")
                point = point if cut < 0 else point[:cut]
        if not point or point <= start or (end and point >= end):
            # HRegion.checkSplit refuses a split point outside or at the start of the region.
            # One key cannot split: raise the row limit so the same region is not retried on
            # every write (each retry costs a pass over the block).
            x.limit = max(x.limit, 2 * x.writes)
            return
        if t is not None and m.policy != "rows" and m.split_seconds > 0:
            x.split_pending = True
            self._later(t + m.split_seconds, "split", x.node, (point, t, write_index))
            return
        self._split(r, point, t, write_index)

    def _split(self, r: int, point: bytes, t: float | None, write_index: int, opened: float | None = None) -> None:
        """Split region ``r`` at ``point``, requested at ``t`` after write ``write_index``; the
        daughters open at ``opened`` (default ``t``)."""
        m = self.model
        parent = self._regions[r]
        opened = t if opened is None else opened
        parent.files.extend(parent.flushing)  # a closing region finishes its flushes
        parent.flushing = []
        if parent.mem_rows:  # a closing region flushes its memstore first
            parent.files.append(_File(parent.mem_bytes, parent.mem_rows, _quantiles(parent.mem_keys)))
        low, high = self._new_region(parent.server), self._new_region(parent.server)
        for f in parent.files:
            below = bisect.bisect_left(f.quantiles, point)
            frac = below / len(f.quantiles) if f.quantiles else 0.5
            if below:
                low.files.append(_File(int(f.size * frac), int(f.rows * frac), f.quantiles[:below]))
            if below < len(f.quantiles):
                high.files.append(_File(f.size - int(f.size * frac), f.rows - int(f.rows * frac), f.quantiles[below:]))
        for d in (low, high):
            # The daughter compacts its reference halves at once; the compacted references stay
            # until the discharger's next run, and no split is possible before that.
            if len(d.files) > 1:
                d.files = [_merge(d.files)]
            if opened is not None:
                ready = opened + m.compaction_delay
                ticks = math.ceil((ready - self._phase) / m.cleaner_interval)
                d.refs_until = self._phase + ticks * m.cleaner_interval
            d.stride = parent.stride
        keys, pos = parent.sample_keys, parent.sample_pos
        is_low = [k < point for k in keys]
        share = sum(is_low) / len(is_low) if is_low else 0.5
        low.writes = int(round(parent.writes * share))  # rows each daughter holds ('rows' policy)
        high.writes = parent.writes - low.writes
        low.sample_keys = [k for k, b in zip(keys, is_low) if b]
        low.sample_pos = [p for p, b in zip(pos, is_low) if b]
        high.sample_keys = [k for k, b in zip(keys, is_low) if not b]
        high.sample_pos = [p for p, b in zip(pos, is_low) if not b]
        # Divide the parent's past writes per time bin by its sample in that bin.
        counts = self._counts[r]
        bins = np.array(pos, dtype=np.int64) // self._width
        flags = np.array(is_low, dtype=bool)
        total_s = np.bincount(bins, minlength=self._bins)[: self._bins]
        low_s = np.bincount(bins[flags], minlength=self._bins)[: self._bins]
        overall = float(flags.mean()) if flags.size else 0.5
        low_frac = np.where(total_s > 0, low_s / np.maximum(total_s, 1), overall)
        low_counts = np.rint(counts * low_frac).astype(np.int64)
        low_bytes = int(round(self._kbytes[r] * overall))
        self._counts = np.insert(self._counts, r, low_counts, axis=0)
        self._counts[r + 1] -= low_counts
        self._kbytes = np.insert(self._kbytes, r, low_bytes)
        self._kbytes[r + 1] -= low_bytes
        self._regions[r : r + 1] = [low, high]
        self._splits.insert(r, point)
        self._map = RegionMap(self._splits)
        self._lineage[parent.node] = (low.node, high.node)
        self._node_server[low.node] = self._node_server[high.node] = parent.server
        self._events.append(SplitEvent(write_index=write_index, region=r, split_key=point, seconds=t))

    # -- result -------------------------------------------------------------------------------

    def finish(self) -> SplitHistory:
        """The history so far (the simulator can keep being fed afterwards)."""
        n_fine = max(1, (self._pos - 1) // self._width + 1) if self._pos else 1
        w = min(self._windows, n_fine)
        edges = (np.arange(w, dtype=np.int64) * n_fine) // w
        heat = np.add.reduceat(self._counts[:, :n_fine], edges, axis=1).T
        window_of_bin = np.searchsorted(edges, np.arange(n_fine), side="right") - 1
        per_node: dict[tuple[int, int], int] = {}
        per_server: dict[tuple[int, int], int] = {}
        for (b, node), c in self._node_bins.items():
            win = int(window_of_bin[min(b, n_fine - 1)])
            per_node[(win, node)] = per_node.get((win, node), 0) + c
            s = self._node_server[node]
            per_server[(win, s)] = per_server.get((win, s), 0) + c
        totals = heat.sum(axis=1)
        hot = np.zeros(w)
        hot_server = np.zeros(w)
        for (win, _), c in per_node.items():
            hot[win] = max(hot[win], c)
        for (win, _), c in per_server.items():
            hot_server[win] = max(hot_server[win], c)
        keep = totals > 0
        window_seconds = np.zeros(0)
        if self._last_time is not None:
            last = np.fmax.reduceat(np.nan_to_num(self._bin_time[:n_fine], nan=-np.inf), edges)
            window_seconds = np.maximum.accumulate(last)
        return SplitHistory(
            region_map=self._map,
            rows=self._counts.sum(axis=1),
            key_bytes=self._kbytes.copy(),
            splits=list(self._events),
            initial_splits=self._initial,
            writes=self._pos,
            seconds=self._last_time,
            stages=self._stages(),
            heat=heat,
            window_hot_shares=hot[keep] / totals[keep],
            window_server_hot_shares=hot_server[keep] / totals[keep],
            window_seconds=window_seconds,
            model=self.model,
            lineage=dict(self._lineage),
        )

    def _stages(self) -> list[Stage]:
        timed = self._last_time is not None

        def span(a: float | None, b: float | None) -> float | None:
            return None if a is None or b is None else max(b - a, 0.0)

        stages: list[Stage] = []
        count = len(self._initial) + 1
        start_w, start_t = 0, (0.0 if timed else None)
        for e in self._events:
            w = e.write_index + 1  # the split follows the write that triggered it
            if w > start_w:
                stages.append(Stage(count, start_t, span(start_t, e.seconds), start_w, w - start_w))
                start_w, start_t = w, e.seconds
            count += 1
        stages.append(Stage(count, start_t, span(start_t, self._last_time), start_w, self._pos - start_w))
        return stages


def _merge(files: list[_File]) -> _File:
    keys: list[bytes] = []
    weights: list[float] = []
    for f in files:
        if f.quantiles:
            keys.extend(f.quantiles)
            weights.extend([f.rows / len(f.quantiles)] * len(f.quantiles))
    return _File(sum(f.size for f in files), sum(f.rows for f in files), _quantiles(keys, weights))


@dataclass(frozen=True)
class RegionRange:
    """The region counts a split model predicts across what it cannot know in advance (see
    ``region_range``): ``low`` and ``high`` final regions, and every run behind them as
    ``(split_seconds, compaction_delay, seed, history)`` in ``runs``."""

    low: int
    high: int
    runs: tuple[tuple[float, float, int, SplitHistory], ...]

    def __contains__(self, regions: object) -> bool:
        return isinstance(regions, int) and self.low <= regions <= self.high


def region_range(
    model: SplitModel,
    keys: KeyArray | Sequence[bytes],
    times: np.ndarray | None = None,
    initial_splits: Sequence[bytes] = (),
    *,
    split_seconds: Sequence[float] = (),
    seeds: Sequence[int] = (0, 1),
    windows: int = 50,
) -> RegionRange:
    """Replay ``keys`` (write order, at ``times``) across the times HBase may take; the range of
    final region counts is the prediction, stated as a band.

    Why a band: how long HBase takes to split a region, and to compact the daughters' reference
    files (a daughter with references cannot split again), depends on the machine and its load
    and varies from split to split. With references cleaned often (a short ``cleaner_interval``)
    those times, not the table's sizes, bound how often a region splits: the same 500k-row
    sequential load made 9 to 18 regions on one HBase over nine runs.

    The runs: the shortest, the median and the longest of ``split_seconds`` with the model's
    ``compaction_delay``, and the shortest with an instant compaction (the fastest the table can
    split); each once per seed. ``model``: the table and server settings (``split_seconds``,
    ``compaction_delay`` and ``seed`` replaced per run). ``keys``, ``times``,
    ``initial_splits``, ``windows``: as for ``SplitSimulator``. ``split_seconds``: durations
    splits took (e.g. a table's past splits: daughter open time - region id, from hbase:meta);
    empty: the model's own ``split_seconds``. ``seeds``: the per-region size jitter and the
    reference cleaner's phase (default 2 seeds).
    """
    if not seeds:
        raise BadInput("region_range needs at least one seed: pass seeds=(0,) or more")
    durations = sorted(float(d) for d in split_seconds if d >= 0) or [float(model.split_seconds)]
    delay = float(model.compaction_delay)
    variants = sorted({(d, delay) for d in (durations[0], float(np.median(durations)), durations[-1])} | {(durations[0], 0.0)})
    runs: list[tuple[float, float, int, SplitHistory]] = []
    for took, compaction in variants:
        for seed in seeds:
            varied = dataclasses.replace(model, split_seconds=took, compaction_delay=compaction, seed=int(seed))
            sim = SplitSimulator(varied, initial_splits, windows=windows)
            sim.feed(keys, times)
            runs.append((took, compaction, int(seed), sim.finish()))
    counts = [len(h.region_map) for *_, h in runs]
    return RegionRange(min(counts), max(counts), tuple(runs))
