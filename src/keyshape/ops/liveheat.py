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
  the poll where it disappears, from its write rate in its previous interval, or its daughters'
  rate since their birth when that is higher and measured over at least as long (a load that
  stepped up after the parent's last report shows only in them; a merged region's rate, over more
  than the gone region's range, is used only when the gone region has no rate of its own) times
  the time from its last report to when it closed
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
interval by the regions that existed then (``sample_shares``). ``matrix()`` draws the writes on
the LATEST regions, each interval's writes where they are now (the heat map of a sequential load
is its diagonal): every region holds its writes as pieces (interval, amount), oldest first, and a
merged region holds its parents'. When a region splits, nothing in the counters says which of its
rows went to which daughter, so its pieces are dealt out by

- the daughters' ROWS at the split, when they were counted (``note_counts``: key-only scans
  just after the poll that found them, which ``watch`` makes): each daughter gets what it held
  then less what it took since it was born (half the writes of the poll that follows the count
  are taken to have come during the count); what the parent held beyond the pieces counted in
  the watch was there before the watch began. Without counts each daughter gets an equal part
  (HBase splits at the middle of the data by size) and ``split_counts`` says so;
- the direction of the daughters' first writes: when nearly all (90%) go to the upper daughter
  the keys walk up, so the parent's oldest rows are the lower daughter's (a sequential key);
  nearly all to the lower one, the other way round (a reverse timestamp); otherwise every piece
  is shared in proportion. Counted daughters are filled to what they held, oldest pieces first;
  what the parent's pieces hold beyond that (its estimated last writes, when the load was held up
  by the split) goes to the daughter the keys walk into.

The read metric has no rows to count: a split parent's reads are shared in proportion to the
daughters' first reads.
"""

from __future__ import annotations

import bisect
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from keyshape.errors import BadInput
from keyshape.store.base import RegionInfo

__all__ = ["LiveHeat", "METRICS", "Sample", "Vanished", "moments"]

METRICS = ("write", "read")
_REGION_ID = re.compile(r",(\d+)(?:\.[0-9a-f]{32}\.)?$")


@dataclass(frozen=True)
class Vanished:
    """A region of the previous poll missing from this one (split or merged since): ``start`` /
    ``end``, ``name`` and ``server`` as that poll saw it, ``children`` the regions of this poll
    that took its range. ``writes``/``reads`` are the estimated requests it took after its last
    report."""

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

    ``at`` is seconds since the first (baseline) poll. Per region of the later poll, in key
    order: ``starts`` / ``ends`` (its bounds), ``names``, ``servers`` (``host:port``), ``writes``
    and ``reads`` (the request deltas) and ``store_bytes`` (its size at the later poll).
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
        out = [(s, e, srv, float(v)) for s, e, srv, v in zip(self.starts, self.ends, self.servers, values)]
        out.extend((v.start, v.end, v.server, float(v.writes if metric == "write" else v.reads)) for v in self.vanished)
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
        # region name -> (rows counted, index of the sample after whose poll they were counted)
        self._counted: dict[str, tuple[int, int]] = {}
        self.born: list[RegionInfo] = []  # regions of the latest poll a split or merge made
        self._last: dict[str, RegionInfo] | None = None
        self._rates: dict[str, tuple[float, float]] = {}  # name -> (writes/s, reads/s)
        self._rate_spans: dict[str, float] = {}  # name -> the seconds its rate was measured over
        self._t0: float | None = None
        self.latest: list[RegionInfo] = []

    def add(self, regions: Sequence[RegionInfo], at: float | None = None) -> Sample | None:
        """Record one poll of ``store.regions(table)`` taken at ``at`` (default: now, monotonic
        seconds); returns the new sample, or None for the baseline poll."""
        at = time.monotonic() if at is None else at
        regions = sorted(regions, key=lambda r: r.start)
        if not regions:
            raise BadInput("a table always has at least one region; got none")
        previous = self._last
        if previous is not None:
            # A region whose server sent no load for it (it is closing for a split or a move, or
            # just opened) has no news: keep its last counters rather than reading a 0.
            regions = [
                replace(r, read_requests=p.read_requests, write_requests=p.write_requests, reported_ms=p.reported_ms)
                if r.reported_ms == 0 and (p := previous.get(r.name)) is not None and p.reported_ms > 0
                else r
                for r in regions
            ]
        self._last = {r.name: r for r in regions}
        self.latest = list(regions)
        if previous is None:
            self._t0 = at
            return None
        writes = np.array([_delta(r.write_requests, getattr(previous.get(r.name), "write_requests", None)) for r in regions], dtype=np.int64)
        reads = np.array([_delta(r.read_requests, getattr(previous.get(r.name), "read_requests", None)) for r in regions], dtype=np.int64)
        gone = [self._vanished(old, regions, writes, reads, previous) for name, old in previous.items() if name not in self._last]
        for r, w, q in zip(regions, writes, reads):
            before = previous.get(r.name)
            since = before.reported_ms if before is not None else 0
            if not since:
                # First report of a new region: its counter started at its birth (region id).
                since = _birth_ms(r.name) or 0
            if r.reported_ms > since > 0:
                span = (r.reported_ms - since) / 1000.0
                self._rates[r.name] = (float(w) / span, float(q) / span)
                self._rate_spans[r.name] = span
        for name in list(self._rate_spans):
            if name not in self._last:
                del self._rate_spans[name]
        for name in list(self._rates):
            if name not in self._last:
                del self._rates[name]
        kids = {k for v in gone for k in v.children}
        self.born = [r for r in regions if r.name in kids]
        sample = Sample(
            at=at - (self._t0 or 0.0),
            starts=tuple(r.start for r in regions),
            ends=tuple(r.end for r in regions),
            names=tuple(r.name for r in regions),
            servers=tuple(r.server for r in regions),
            writes=writes,
            reads=reads,
            store_bytes=tuple(r.store_size_bytes for r in regions),
            vanished=tuple(gone),
        )
        self.samples.append(sample)
        return sample

    def _vanished(
        self, old: RegionInfo, regions: list[RegionInfo], writes: np.ndarray, reads: np.ndarray, previous: dict[str, RegionInfo]
    ) -> Vanished:
        """The gone region ``old``, with its requests after its last report estimated."""
        # Its children by hbase:meta's lineage, and every new region inside its range: a daughter
        # that split again before this poll is seen by neither poll, and its own daughters name
        # it, not ``old``, as their parent (two splits in one interval on a busy server).
        kids = [i for i, r in enumerate(regions) if old.name in r.parents or (r.name not in previous and _inside(r, old.start, old.end))]
        born = [_birth_ms(regions[i].name) for i in kids]
        closed = max(
            (
                regions[i].parents_closed_ms[regions[i].parents.index(old.name)]
                for i in kids
                if old.name in regions[i].parents and len(regions[i].parents_closed_ms) == len(regions[i].parents)
            ),
            default=0,
        )
        est_w = est_r = 0.0
        rate = self._rates.get(old.name)
        newest = max((regions[i].reported_ms for i in kids), default=0)
        timed = bool(kids) and old.reported_ms > 0 and all(b is not None for b in born)
        if timed:
            end_ms = min(b for b in born if b is not None)
            gap = max(0.0, ((closed or end_ms) - old.reported_ms) / 1000.0)
            span = max(0.0, (newest - old.reported_ms) / 1000.0)
            since = max(0.0, (newest - end_ms) / 1000.0)
            if since > 0:
                kid_rate = (float(sum(writes[i] for i in kids)) / since, float(sum(reads[i] for i in kids)) / since)
                if rate is None:
                    rate = kid_rate
                elif all(_inside(regions[i], old.start, old.end) for i in kids) and since >= self._rate_spans.get(old.name, math.inf):
                    # A split: its daughters' range is its own. A load that stepped up after the
                    # parent's last report (the report came early in the load, or a poll brought
                    # no news while it closed) shows in the daughters' rate, not in the parent's;
                    # taken only when measured over as long as the parent's (a daughter reported
                    # a moment after its birth holds a batch or two: a rate that is mostly noise).
                    rate = (max(rate[0], kid_rate[0]), max(rate[1], kid_rate[1]))
            if rate is not None and closed:
                # hbase:meta says when it closed: it took writes until about then.
                est_w, est_r = rate[0] * gap, rate[1] * gap
            elif rate is not None:
                # The parent served until it closed, after the split began (its children's id):
                # at least its rate over the gap to that; and what its range took over the whole
                # interval at that rate, less what the children counted, if that is more.
                est = []
                for k, counted in ((0, sum(int(writes[i]) for i in kids)), (1, sum(int(reads[i]) for i in kids))):
                    est.append(min(rate[k] * span, max(rate[k] * gap, rate[k] * span - counted)))
                est_w, est_r = est
        return Vanished(old.start, old.end, old.name, old.server, tuple(regions[i].name for i in kids), int(round(est_w)), int(round(est_r)))

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
                    vanished = s.vanished[:k] + (replace(v, writes=v.writes - cut),) + s.vanished[k + 1 :]
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
            vanished = s.vanished[:k] + (replace(v, writes=v.writes + add),) + s.vanished[k + 1 :]
            self.samples[i] = replace(s, vanished=vanished)
        return short

    def drop_oldest(self, n: int) -> None:
        """Forget the ``n`` oldest samples (a window that slides: the regions, rates and counters
        of the latest poll stay, so the next poll's deltas are unchanged)."""
        n = max(0, min(int(n), len(self.samples)))
        if not n:
            return
        del self.samples[:n]
        # counted rows stay tied to the sample they were counted after; those before the window go
        self._counted = {name: (rows, i - n) for name, (rows, i) in self._counted.items() if i >= n}

    @property
    def starts(self) -> list[bytes]:
        return [r.start for r in self.latest]

    @property
    def ends(self) -> list[bytes]:
        return [r.end for r in self.latest]

    def note_counts(self, counts: dict[str, int]) -> None:
        """Rows counted (key-only scans) in regions of the latest poll, right after it: what the
        split daughters among them (``born``) held, or (after the baseline poll) what regions
        held when the watch began; see the module docstring."""
        index = len(self.samples) - 1
        for name, rows in counts.items():
            self._counted[name] = (int(rows), index)

    @property
    def split_counts(self) -> tuple[int, int]:
        """(splits whose daughters were all counted, splits in all) over the samples."""
        counted = total = 0
        for i, s in enumerate(self.samples):
            for v in s.vanished:
                if len(v.children) > 1:
                    total += 1
                    counted += all(self._counted.get(k, (0, -1))[1] == i for k in v.children)
        return counted, total

    def matrix(self, metric: str = "write") -> np.ndarray:
        """The ``samples x regions`` ``metric`` requests ("write" or "read") on the latest
        regions, each interval's where they are now (see the module docstring for regions that
        split or merged since). Float64. Zero rows before any sample."""
        if metric not in METRICS:
            raise BadInput(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        content = self._replay(metric)
        out = np.zeros((len(self.samples), len(self.latest)), dtype=np.float64)
        for j, r in enumerate(self.latest):
            for i, amount in content.get(r.name, []):
                if i >= 0:  # not the rows from before the watch
                    out[i, j] += amount
        return out

    def _own(self, metric: str) -> list[dict[str, float]]:
        """Per sample, each region's own delta of ``metric`` by name."""
        return [dict(zip(s.names, (s.writes if metric == "write" else s.reads).tolist())) for s in self.samples]

    def _replay(self, metric: str) -> dict[str, list[tuple[int, float]]]:
        """Every region's pieces (sample index, requests), oldest first, followed through the
        splits and merges of all samples; -1 marks rows from before the watch."""
        own = self._own(metric)
        content: dict[str, list[tuple[int, float]]] = {}
        # Regions whose rows from before the watch are known: counted at the baseline, or born
        # during the watch (what they hold is dealt from a known parent or counted).
        known: set[str] = set()
        for name, (rows, index) in self._counted.items():
            if index == -1 and metric == "write":
                content[name] = [(-1, float(rows))] if rows else []
                known.add(name)
        for i, s in enumerate(self.samples):
            got: set[str] = set()
            for v in s.vanished:
                pieces = content.pop(v.name, []) + [(i, float(v.writes if metric == "write" else v.reads))]
                kids = [k for k in v.children if k in own[i]]
                if not kids:
                    # no region took its range over (cannot happen with HBase's lineage): it
                    # stays where it was, in the heat map's nearest region
                    kids = [s.names[max(bisect.bisect_right(list(s.starts), v.start) - 1, 0)]]
                kids.sort(key=lambda k: s.starts[s.names.index(k)])
                dealt = self._deal(i, kids, pieces, own, metric, v.name in known)
                for kid, part in zip(kids, dealt):
                    content.setdefault(kid, []).extend(part)
                    got.add(kid)
                    if v.name in known or self._counted.get(kid, (0, -2))[1] == i:
                        known.add(kid)
            for name in got:  # a merged region's pieces from several parents: oldest first
                content[name].sort(key=lambda p: p[0])
            for name, value in own[i].items():
                content.setdefault(name, []).append((i, float(value)))
        return content

    def _deal(
        self, i: int, kids: list[str], pieces: list[tuple[int, float]], own: list[dict[str, float]], metric: str, known: bool
    ) -> list[list[tuple[int, float]]]:
        """A vanished region's ``pieces`` dealt to its daughters ``kids`` (key order) born in
        sample ``i`` (see the module docstring). ``known``: the parent's rows from before the
        watch are in its pieces, so rows the daughters hold beyond them were written in its last
        interval and missed by its counters; otherwise they are taken for rows from before."""
        if len(kids) == 1:
            return [pieces]
        # The direction: the daughters' first requests.
        first = np.zeros(len(kids))
        for later in own[i:]:
            first = np.array([later.get(k, 0.0) for k in kids])
            if first.sum() > 0:
                break
        watched = sum(a for _, a in pieces)
        counted = [self._counted.get(k) for k in kids]
        if metric == "write" and all(c is not None and c[1] == i for c in counted):
            held = []
            for k, c in zip(kids, counted):
                assert c is not None
                during = own[i + 1].get(k, 0.0) / 2 if i + 1 < len(own) else 0.0
                held.append(max(c[0] - own[i].get(k, 0.0) - during, 0.0))
            missed = max(sum(held) - watched, 0.0)
            if missed > 0:
                pieces = pieces + [(i, missed)] if known else [(-1, missed)] + pieces
            total = watched + missed
            # what each held, not scaled to the pieces: see the fill below (shares keep the proportion)
            target = np.array(held, dtype=np.float64) if sum(held) > 0 else np.full(len(kids), total / len(kids))
        elif metric == "write":
            target = np.full(len(kids), watched / len(kids))  # HBase splits at the data's middle
        else:
            target = first / first.sum() * watched if first.sum() > 0 else np.full(len(kids), watched / len(kids))
        shares = first / first.sum() if first.sum() > 0 else np.zeros(len(kids))
        if metric == "write" and shares[-1] >= 0.9:
            order = list(range(len(kids)))  # the keys walk up: the oldest rows are the lowest
        elif metric == "write" and shares[0] >= 0.9:
            order = list(range(len(kids)))[::-1]
        else:
            total = target.sum()
            frac = target / total if total > 0 else np.full(len(kids), 1 / len(kids))
            return [[(t, a * f) for t, a in pieces] for f in frac]
        out: list[list[tuple[int, float]]] = [[] for _ in kids]
        # Counted daughters hold what they held: the older ones fill to that, and the pieces
        # beyond (an estimate of the parent's last writes above what was there) go to the daughter
        # the keys walk into, as the parent's last writes did. Scaled up instead, every daughter's
        # room grew and recent writes were dealt into the older daughter's range.
        room = target.astype(np.float64).copy()
        at = 0
        for t, amount in pieces:
            left = amount
            while left > 1e-9:
                while at < len(order) - 1 and room[order[at]] <= 1e-9:
                    at += 1
                j = order[at]
                take = left if at == len(order) - 1 else min(left, room[j])
                out[j].append((t, take))
                room[j] -= take
                left -= take
        return out

    def sample_shares(self, metric: str = "write") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per moment with requests: the busiest region's share, the busiest server's share, the
        requests counted and the number of regions, over the regions of that moment, never a
        later layout (see ``moments``)."""
        regions: list[float] = []
        servers: list[float] = []
        totals: list[float] = []
        counts: list[int] = []
        for s in self.samples:
            for rows in moments(s, metric):
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


def moments(sample: Sample, metric: str = "write") -> list[list[tuple[bytes, bytes, str, float]]]:
    """The interval's ``(start, end, server, requests)`` rows (of ``sample``, counting ``metric``
    requests: "write" or "read") as the moments they took place in.

    A split or merged region and the regions it became never take requests at the same time
    (HBase closes the parent before the daughters open), so an interval with vanished regions
    is two moments: before (the vanished regions, with the regions that did not change) and after
    (the regions born from them, with the regions that did not change). The unchanged regions'
    requests are shared between the two in the proportion the changing family took them, as
    if that family's rate held. Judged as one moment, a sequential load whose region splits in
    the interval would look spread over parent and daughter, when at any moment one region took
    every write."""
    rows = sample.regions(metric)
    if not sample.vanished:
        return [rows]
    live = len(sample.names)
    born = {c for v in sample.vanished for c in v.children}
    is_born = [name in born for name in sample.names]
    before_family = sum(v for *_, v in rows[live:])
    after_family = sum(r[3] for r, b in zip(rows[:live], is_born) if b)
    if before_family + after_family <= 0:
        return [rows]
    f = before_family / (before_family + after_family)
    kept = [r for r, b in zip(rows[:live], is_born) if not b]
    before = rows[live:] + [(s, e, srv, v * f) for s, e, srv, v in kept]
    after = [r for r, b in zip(rows[:live], is_born) if b] + [(s, e, srv, v * (1 - f)) for s, e, srv, v in kept]
    return [m for m in (before, after) if m]
