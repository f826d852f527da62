"""A real table's split history, lined up with a write stream, to check the split simulation.

- ``split_events`` reads the splits out of hbase:meta's region rows (``HBaseStore.
  region_history``): both daughters of a split carry the split's time as their region id, and
  the upper daughter starts at the split key.
- ``split_seconds`` reads how long the splits took (request to daughters open) from the same rows.
- ``WriteClock`` maps wall-clock times to write indices from a load's progress reports.
- ``busiest_shares`` replays the keys against regions that split at given write indices and
  returns, per window, the share of its writes the busiest region then alive took: the number a
  table that does not keep up with its writes shows, computed the same way for HBase and for the
  simulation.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from keyshape.core.keyarray import KeyArray
from keyshape.core.regions import RegionMap
from keyshape.store.base import RegionRecord

__all__ = ["WriteClock", "busiest_shares", "split_events", "split_seconds"]


def split_events(records: Sequence[RegionRecord]) -> list[tuple[int, bytes]]:
    """``[(time in ms, split key)]`` of every split hbase:meta still shows (``records``: its region
    rows for the table), oldest first.

    Regions created at the same millisecond with adjacent ranges are the daughters of one split;
    the table's first regions (the oldest region id) are not splits. A parent the catalog janitor
    already removed still shows through its daughters, unless they split again and were removed
    too, so read the history soon after the load.
    """
    if not records:
        return []
    first = min(r.created_ms for r in records)
    groups: dict[int, list[RegionRecord]] = {}
    for r in records:
        if r.created_ms != first:
            groups.setdefault(r.created_ms, []).append(r)
    events = []
    for created, group in groups.items():
        group.sort(key=lambda r: r.start)
        for low, high in zip(group, group[1:]):
            if low.end == high.start and high.start:
                events.append((created, high.start))
    return sorted(events)


def split_seconds(records: Sequence[RegionRecord]) -> float | None:
    """How long the table's splits took, from hbase:meta (``records``: its region rows for the
    table): the median over the open daughters of
    a split of (the time it turned OPEN - its region id, the split request's time); None when
    no daughter is open. It is ``SplitModel.split_seconds`` for that table on that cluster at
    that load (2 busy cores: 1-5 s; it grows with the machine's load, not with the table)."""
    if not records:
        return None
    first = min(r.created_ms for r in records)
    took = sorted(r.opened_ms - r.created_ms for r in records if r.created_ms != first and r.opened_ms is not None and r.opened_ms >= r.created_ms)
    return float(np.median(took)) / 1000.0 if took else None


@dataclass
class WriteClock:
    """Wall-clock seconds -> writes done, from ``(seconds, writes acknowledged)`` reports, kept in
    ``times`` and ``writes`` (one entry per :meth:`report`)."""

    times: list[float] = field(default_factory=list)
    writes: list[int] = field(default_factory=list)

    def report(self, seconds: float, writes: int) -> None:
        self.times.append(float(seconds))
        self.writes.append(int(writes))

    def write_at(self, seconds: float) -> int:
        """Writes done by ``seconds`` (linear between reports)."""
        return int(np.interp(seconds, self.times, self.writes))

    def seconds_of(self, n: int) -> np.ndarray:
        """The time of each of the first ``n`` writes, seconds since the first report."""
        t = np.interp(np.arange(n, dtype=np.float64) + 1, self.writes, self.times)
        return t - self.times[0]


def busiest_shares(
    keys: KeyArray | Sequence[bytes], events: Sequence[tuple[int, bytes]], initial_splits: Sequence[bytes] = (), windows: int = 20
) -> np.ndarray:
    """Per window of equal write count (``windows`` of them), the busiest live region's share of
    its writes of ``keys`` (in write order), when the table starts at ``initial_splits`` and
    splits at the ``events``, ``(write index, key)`` pairs (the split applies to the writes after
    that index)."""
    n = len(keys)
    ordered = sorted(events)
    bounds = [int(round(w * n / windows)) for w in range(windows + 1)]
    splits = list(initial_splits)
    born = {start: 0 for start in [b"", *splits]}  # a region is its start key and birth event
    e = 0
    out = []
    for w in range(windows):
        lo, hi = bounds[w], bounds[w + 1]
        if hi <= lo:
            continue
        counts: dict[tuple[bytes, int], int] = {}
        cut = lo
        while cut < hi:
            while e < len(ordered) and ordered[e][0] < cut:
                key = ordered[e][1]
                parent = splits[bisect.bisect_right(splits, key) - 1] if splits and key > splits[0] else b""
                bisect.insort(splits, key)
                born[parent] = born[key] = e + 1
                e += 1
            nxt = ordered[e][0] + 1 if e < len(ordered) and ordered[e][0] < hi else hi
            nxt = max(min(nxt, hi), cut + 1)
            rmap = RegionMap(splits)
            part = keys[cut:nxt] if isinstance(keys, KeyArray) else list(keys[cut:nxt])
            idx = np.bincount(rmap.assign(part), minlength=len(rmap))
            for i in np.flatnonzero(idx).tolist():
                region = (rmap.starts[i], born[rmap.starts[i]])
                counts[region] = counts.get(region, 0) + int(idx[i])
            cut = nxt
        out.append(max(counts.values()) / (hi - lo))
    return np.array(out)
