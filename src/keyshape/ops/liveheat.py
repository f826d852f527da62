"""Region request counters polled over time, followed across splits, merges and moves.

HBase counts requests per region (``RegionLoad``), and a region's counters live and die with it:
a split parent's counters vanish, its daughters start from zero; a merged region starts from zero;
a moved or reopened region starts again from zero under the same name. ``LiveHeat`` turns polls of
``store.regions(table)`` into request DELTAS per region and poll so that no write is lost or
counted twice beyond one polling interval:

- a region seen before: its counter now minus then (all of it when the counter went down: the
  region was reopened and counts from zero again);
- a region new since the last poll (a daughter, a merged region): all of its counter, which
  started at zero when it was born;
- a region of the last poll that is gone (split or merged away): what it took between its last
  report and its end is not in any counter. It is ESTIMATED, attributed to its own key range in
  the poll where it disappears, from its write rate in its previous interval (else its children's
  rate since their birth) times the time from its last report to when it closed
  (hbase:meta's CLOSED state cell, else CLOSING: ``RegionInfo.parents_closed_ms``; a closing
  region keeps taking writes while it flushes); without that, at least
  the rate times the time from its last report to its children's birth (their region id is their creation time in ms, HBase's
  ``RegionInfo.regionId``), and the rate times the whole time to its children's report less what
  the children counted, when that is more (a parent serves writes until it closes, a moment after
  the split began). Without those times (stores that give none) the estimate is 0 and at most
  one interval of its writes is missing.

Lineage (which regions a new region came from) is hbase:meta's, through ``RegionInfo.parents``
(a split parent's ``info:splitA``/``splitB``, a merged region's ``info:merge*``), and the key
ranges when meta no longer has it (the catalog janitor removed the parent): a new region inside a
gone region's range is its daughter.

Each poll's deltas stay in that poll's own regions (``Sample``), so a verdict can judge every
interval by the regions that existed then (``sample_shares``). ``matrix()`` projects everything
onto the LATEST regions for the heat map: a past region now split into several has its delta
divided in proportion to those regions' writes in the first later poll where they have any (the
direction its writes were heading), evenly when they never have any; a past region inside a
latest one (merged since) adds to it.
"""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from keyshape.errors import KeyshapeError
from keyshape.store.base import RegionInfo

__all__ = ["LiveHeat", "METRICS", "Sample", "Vanished"]

METRICS = ("write", "read")
_REGION_ID = re.compile(r",(\d+)(?:\.[0-9a-f]{32}\.)?$")


@dataclass(frozen=True)
class Vanished:
    """A region of the previous poll missing from this one (split or merged since).
    ``writes``/``reads`` are the estimated requests it took after its last report."""

    start: bytes
    end: bytes
    name: str
    server: str
    children: tuple[str, ...]
    writes: int
    reads: int


@dataclass(frozen=True)
class Sample:
    """Request deltas between two polls, in the regions of the later poll (key order), plus the
    regions of the earlier poll that are gone (``vanished``, their estimated last requests).

    ``at`` is seconds since the first (baseline) poll.
    """

    at: float
    starts: tuple[bytes, ...]
    ends: tuple[bytes, ...]
    names: tuple[str, ...]
    servers: tuple[str, ...]
    writes: np.ndarray
    reads: np.ndarray
    store_bytes: tuple[int, ...]
    vanished: tuple[Vanished, ...] = ()

    @property
    def total_writes(self) -> int:
        """Writes counted in this interval, the estimates for vanished regions included."""
        return int(self.writes.sum()) + sum(v.writes for v in self.vanished)

    @property
    def estimated_writes(self) -> int:
        return sum(v.writes for v in self.vanished)

    def regions(self, metric: str = "write") -> list[tuple[bytes, bytes, str, float]]:
        """``(start, end, server, requests)`` of every region this interval: the live ones and
        the vanished ones, each on its own key range."""
        values = self.writes if metric == "write" else self.reads
        out = [(s, e, srv, float(v)) for s, e, srv, v in
               zip(self.starts, self.ends, self.servers, values)]
        out.extend((v.start, v.end, v.server, float(v.writes if metric == "write" else v.reads))
                   for v in self.vanished)
        return out


def _delta(now: int, before: int | None) -> int:
    # A counter below its last value belongs to a region that was reopened (crash, restart,
    # move): it counts from zero again, so all of it is new.
    if before is None or now < before:
        return now
    return now - before


def region_id(name: str) -> int | None:
    """The region id in a region name (``table,start,ID.`` + encoded name), or None."""
    m = _REGION_ID.search(name)
    return int(m.group(1)) if m else None


def _birth_ms(name: str) -> int | None:
    """When the region was created (ms), from its region id: HBase's ids are creation times;
    anything else (the embedded store's counter) is no time, None."""
    rid = region_id(name)
    return rid if rid is not None and rid > 10**12 else None


def _inside(child: RegionInfo, start: bytes, end: bytes) -> bool:
    return child.start >= start and (not end or (bool(child.end) and child.end <= end))


class LiveHeat:
    """Accumulates region snapshots into per-poll request deltas (see the module docstring)."""

    def __init__(self) -> None:
        self.samples: list[Sample] = []
        self._last: dict[str, RegionInfo] | None = None
        self._rates: dict[str, tuple[float, float]] = {}  # name -> (writes/s, reads/s)
        self._t0: float | None = None
        self.latest: list[RegionInfo] = []

    def add(self, regions: Sequence[RegionInfo], at: float | None = None) -> Sample | None:
        """Record one poll of ``store.regions(table)`` taken at ``at`` (default: now, monotonic
        seconds); returns the new sample, or None for the baseline poll."""
        at = time.monotonic() if at is None else at
        regions = sorted(regions, key=lambda r: r.start)
        if not regions:
            raise KeyshapeError("a table always has at least one region; got none")
        previous = self._last
        if previous is not None:
            # A region whose server sent no load for it (it is closing for a split or a move, or
            # just opened) has no news: keep its last counters rather than reading a 0.
            regions = [replace(r, read_requests=p.read_requests, write_requests=p.write_requests,
                               reported_ms=p.reported_ms)
                       if r.reported_ms == 0 and (p := previous.get(r.name)) is not None
                       and p.reported_ms > 0 else r for r in regions]
        self._last = {r.name: r for r in regions}
        self.latest = list(regions)
        if previous is None:
            self._t0 = at
            return None
        writes = np.array([_delta(r.write_requests, getattr(previous.get(r.name), "write_requests", None))
                           for r in regions], dtype=np.int64)
        reads = np.array([_delta(r.read_requests, getattr(previous.get(r.name), "read_requests", None))
                          for r in regions], dtype=np.int64)
        gone = [self._vanished(old, regions, writes, reads, previous)
                for name, old in previous.items() if name not in self._last]
        for r, w, q in zip(regions, writes, reads):
            before = previous.get(r.name)
            since = before.reported_ms if before is not None else 0
            if not since:
                # First report of a new region: its counter started at its birth (region id).
                since = _birth_ms(r.name) or 0
            if r.reported_ms > since > 0:
                span = (r.reported_ms - since) / 1000.0
                self._rates[r.name] = (float(w) / span, float(q) / span)
        for name in list(self._rates):
            if name not in self._last:
                del self._rates[name]
        sample = Sample(
            at=at - (self._t0 or 0.0),
            starts=tuple(r.start for r in regions), ends=tuple(r.end for r in regions),
            names=tuple(r.name for r in regions), servers=tuple(r.server for r in regions),
            writes=writes, reads=reads, store_bytes=tuple(r.store_size_bytes for r in regions),
            vanished=tuple(gone))
        self.samples.append(sample)
        return sample

    def _vanished(self, old: RegionInfo, regions: list[RegionInfo], writes: np.ndarray,
                  reads: np.ndarray, previous: dict[str, RegionInfo]) -> Vanished:
        """The gone region ``old``, with its requests after its last report estimated."""
        kids = [i for i, r in enumerate(regions) if old.name in r.parents]
        if not kids:
            kids = [i for i, r in enumerate(regions)
                    if r.name not in previous and _inside(r, old.start, old.end)]
        born = [_birth_ms(regions[i].name) for i in kids]
        closed = max((regions[i].parents_closed_ms[regions[i].parents.index(old.name)]
                      for i in kids if old.name in regions[i].parents
                      and len(regions[i].parents_closed_ms) == len(regions[i].parents)),
                     default=0)
        est_w = est_r = 0.0
        rate = self._rates.get(old.name)
        newest = max((regions[i].reported_ms for i in kids), default=0)
        timed = bool(kids) and old.reported_ms > 0 and all(b is not None for b in born)
        if timed:
            end_ms = min(b for b in born if b is not None)
            gap = max(0.0, ((closed or end_ms) - old.reported_ms) / 1000.0)
            span = max(0.0, (newest - old.reported_ms) / 1000.0)
            if rate is None:
                since = max(0.0, (newest - end_ms) / 1000.0)
                if since > 0:
                    rate = (float(sum(writes[i] for i in kids)) / since,
                            float(sum(reads[i] for i in kids)) / since)
            if rate is not None and closed:
                # hbase:meta says when it closed: it took writes until about then.
                est_w, est_r = rate[0] * gap, rate[1] * gap
            elif rate is not None:
                # The parent served until it closed, after the split began (its children's id):
                # at least its rate over the gap to that; and what its range took over the whole
                # interval at that rate, less what the children counted, if that is more.
                est = []
                for k, counted in ((0, sum(int(writes[i]) for i in kids)),
                                   (1, sum(int(reads[i]) for i in kids))):
                    est.append(min(rate[k] * span, max(rate[k] * gap, rate[k] * span - counted)))
                est_w, est_r = est
        return Vanished(old.start, old.end, old.name, old.server,
                        tuple(regions[i].name for i in kids), int(round(est_w)), int(round(est_r)))

    def reconcile(self, writes: int) -> int:
        """Line the counters up with a writer's own count of the ``writes`` it made since the
        baseline poll (``keyshape load`` knows it): what the counters are short of it is what
        split or merged regions took after their last report, so it is attributed to those
        regions (each in the poll where it vanished, on its own key range) in proportion to
        their estimates, evenly when there are none; estimates above the writer's count are taken
        back. Returns the writes attributed (negative when taken back; 0 when no region
        vanished: then the counters only lag)."""
        short = int(writes) - sum(s.total_writes for s in self.samples)
        gone = [(i, k) for i, s in enumerate(self.samples) for k in range(len(s.vanished))]
        if short < 0 and gone:
            # Estimated more than was written: take the excess back from the estimates.
            excess = -short
            for i, k in reversed(gone):
                s = self.samples[i]
                v = s.vanished[k]
                cut = min(excess, v.writes)
                if cut:
                    vanished = s.vanished[:k] + (replace(v, writes=v.writes - cut),) + s.vanished[k + 1:]
                    self.samples[i] = replace(s, vanished=vanished)
                    excess -= cut
            return short + excess
        if short <= 0 or not gone:
            return 0
        weights = np.array([self.samples[i].vanished[k].writes for i, k in gone], dtype=np.float64)
        weights = weights / weights.sum() if weights.sum() > 0 else np.full(len(gone), 1 / len(gone))
        extra = np.floor(weights * short).astype(np.int64)
        extra[np.argmax(weights)] += short - int(extra.sum())
        for (i, k), add in zip(gone, extra.tolist()):
            s = self.samples[i]
            v = s.vanished[k]
            vanished = s.vanished[:k] + (replace(v, writes=v.writes + add),) + s.vanished[k + 1:]
            self.samples[i] = replace(s, vanished=vanished)
        return short

    @property
    def starts(self) -> list[bytes]:
        return [r.start for r in self.latest]

    @property
    def ends(self) -> list[bytes]:
        return [r.end for r in self.latest]

    def matrix(self, metric: str = "write") -> np.ndarray:
        """The ``samples x regions`` deltas of ``metric`` ("write" or "read") over the latest
        regions (see the module docstring for regions that split or merged since). Float64;
        integral whenever the layout did not change. Zero rows before any sample."""
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        starts = self.starts
        n = len(self.samples)
        direct = np.zeros((n, len(starts)), dtype=np.float64)
        spread: list[tuple[int, int, int, float]] = []
        for i, s in enumerate(self.samples):
            for start, end, _server, value in s.regions(metric):
                if not value:
                    continue
                lo = max(bisect.bisect_right(starts, start) - 1, 0)
                hi = len(starts) - 1 if not end else max(bisect.bisect_left(starts, end) - 1, lo)
                if lo == hi:
                    direct[i, lo] += value
                else:
                    spread.append((i, lo, hi, value))
        out = direct.copy()
        for i, lo, hi, value in spread:
            weights = None
            for j in range(i, n):
                later = direct[j, lo:hi + 1]
                if later.sum() > 0:
                    weights = later / later.sum()
                    break
            if weights is None:
                weights = np.full(hi - lo + 1, 1.0 / (hi - lo + 1))
            out[i, lo:hi + 1] += value * weights
        return out

    def sample_shares(self, metric: str = "write") -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                              np.ndarray]:
        """Per sample with requests: the busiest region's share, the busiest server's share, the
        requests counted and the number of regions, over the regions of that interval (live and
        vanished), never a later layout."""
        regions: list[float] = []
        servers: list[float] = []
        totals: list[float] = []
        counts: list[int] = []
        for s in self.samples:
            rows = s.regions(metric)
            total = sum(v for *_, v in rows)
            if total <= 0:
                continue
            regions.append(max(v for *_, v in rows) / total)
            per: dict[str, float] = {}
            for _s, _e, server, v in rows:
                per[server] = per.get(server, 0.0) + v
            servers.append(max(per.values()) / total)
            totals.append(total)
            counts.append(len(rows))
        return np.array(regions), np.array(servers), np.array(totals), np.array(counts)
