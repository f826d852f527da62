"""Relief now, as TiKV does it: split a hot region at the key where its recent write load halves.

A re-key takes a migration; a load-based split takes seconds. TiKV's ``split_controller`` samples
the keys of a hot region's requests and scores candidate split keys by two numbers, keeping the
lowest sum of those under both bounds (TiKV's defaults):

- balance ``|left - right| / (left + right)``: how evenly the requests fall on either side
  (at most ``MAX_BALANCE`` = 0.25);
- crossing: the share of requests whose key range contains the candidate, which the split would
  cut in two (at most ``MAX_CROSSING`` = 0.5). A write is a point, so writes cross nothing; a
  caller that passes scan ranges gets them counted.

HBase keeps no request log, but a region's rows carry their cell timestamps: a key-only scan of
the hot region (``scan_key_times``: keys and their first cell's timestamp, no values), keeping the
rows written in the last ``lookback`` seconds, is a sample of its recent write stream. (The scan
reads the region's keys and the window is applied to them as they arrive; a row rewritten since
counts at its last write.) The hot region is the one whose write counter rose most between two
polls ``watch`` seconds apart; the other regions' writes in that interval stay as they were.

Check before recommending: the chosen split is REPLAYED on the sampled stream in time order, in
``BINS`` intervals: each interval's writes of the hot region go to the daughter its keys fall in,
the other regions keep their measured rates, and the busiest share (the busiest region's share of
the table's writes, averaged over the intervals) is given before and after. A sequential key
shows what it is: the recent keys all sort after any split point, so the replayed share after
stays high and the split is marked as no relief (``relieves`` False), which ``apply`` refuses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.core.hbytes import to_string_binary
from keyshape.core.splits import shell_quote
from keyshape.errors import BadInput, Refused
from keyshape.ops.splitplan import PlannedSplit, SplitPlan, apply_plan
from keyshape.store.base import RegionInfo, Store

__all__ = ["BINS", "MAX_BALANCE", "MAX_CROSSING", "Candidate", "LoadSplit", "apply_load_split", "load_split", "score_candidates"]

MAX_BALANCE = 0.25  # TiKV split.split-balance-score
MAX_CROSSING = 0.5  # TiKV split.split-contained-score
CANDIDATES = 20  # TiKV samples 20 keys per region as candidates
BINS = 10  # intervals the replay cuts the sampled stream into
RELIEF = 0.9  # a split relieves when the replayed busiest share after is below this x before


@dataclass(frozen=True)
class Candidate:
    key: bytes
    left: int
    right: int
    balance: float
    crossing: float

    @property
    def score(self) -> float:
        return self.balance + self.crossing


@dataclass
class LoadSplit:
    """The hot region, the sampled stream, the candidates scored, the chosen key (None when no
    candidate passes both bounds), the replay's busiest share before and after, the shell line."""

    table: str
    region: RegionInfo
    writes_per_s: float
    sampled: int
    lookback: float
    candidates: list[Candidate]
    chosen: Candidate | None
    before_share: float
    after_share: float
    notes: list[str] = field(default_factory=list)

    @property
    def relieves(self) -> bool:
        return self.chosen is not None and self.after_share < RELIEF * self.before_share

    def shell_lines(self) -> list[str]:
        return [f"split '{self.table}', {shell_quote(self.chosen.key)}"] if self.chosen is not None else []

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "region": self.region.name,
            "region_start": to_string_binary(self.region.start),
            "region_end": to_string_binary(self.region.end),
            "writes_per_s": self.writes_per_s,
            "sampled_writes": self.sampled,
            "lookback_s": self.lookback,
            "candidates": [
                {"key": to_string_binary(c.key), "left": c.left, "right": c.right, "balance": c.balance, "crossing": c.crossing}
                for c in self.candidates
            ],
            "split_key": to_string_binary(self.chosen.key) if self.chosen else None,
            "busiest_share_before": self.before_share,
            "busiest_share_after": self.after_share,
            "relieves": self.relieves,
            "shell": self.shell_lines(),
            "notes": list(self.notes),
        }


def score_candidates(keys: Sequence[bytes], ranges: Sequence[tuple[bytes, bytes]] = (), candidates: int = CANDIDATES) -> list[Candidate]:
    """TiKV's scores of up to ``candidates`` split keys, drawn at even quantiles of ``keys`` (the
    sampled point requests); ``ranges`` are range requests ``[start, end)`` that count as crossing
    a candidate strictly inside them. Sorted best (lowest balance + crossing) first."""
    ordered = sorted(keys)
    n = len(ordered)
    if n < 2:
        return []
    picks = sorted({ordered[int(i)] for i in np.linspace(1, n - 1, min(candidates, n - 1)).round().astype(int)} - {ordered[0]})
    total = n + len(ranges)
    out = []
    arr = np.array(ordered, dtype=object)
    for c in picks:
        left = int(np.searchsorted(arr, c, side="left"))
        right = n - left
        crossing = sum(1 for s, e in ranges if s < c and (not e or c < e))
        lefts = left + sum(1 for s, e in ranges if e and e <= c)
        rights = right + sum(1 for s, _ in ranges if s >= c)
        balance = abs(lefts - rights) / max(lefts + rights, 1)
        out.append(Candidate(c, lefts, rights, balance, crossing / max(total, 1)))
    return sorted(out, key=lambda c: (c.score, c.key))


def _replay(times: np.ndarray, keys: list[bytes], split: bytes | None, hot_rate: float, others: np.ndarray) -> float:
    """The mean over ``BINS`` intervals of the busiest region's share: the hot region's writes
    (its rate, shaped by the sampled keys' times) cut at ``split``, the others at their rates."""
    if len(times) == 0:
        return 0.0
    lo, hi = float(times.min()), float(times.max())
    edges = np.linspace(lo, hi if hi > lo else lo + 1, BINS + 1)
    b = np.clip(np.searchsorted(edges, times, side="right") - 1, 0, BINS - 1)
    counts = np.bincount(b, minlength=BINS).astype(np.float64)
    right = np.zeros(BINS)
    if split is not None:
        is_right = np.array([k >= split for k in keys], dtype=bool)
        right = np.bincount(b[is_right], minlength=BINS).astype(np.float64)
    scale = hot_rate / counts.mean() if counts.mean() > 0 else 0.0
    shares = []
    for i in range(BINS):
        if counts[i] == 0:
            continue
        hot = counts[i] * scale
        parts = [hot - right[i] * scale, right[i] * scale] if split is not None else [hot]
        total = sum(parts) + float(others.sum())
        if total > 0:
            shares.append(max(max(parts), float(others.max()) if len(others) else 0.0) / total)
    return float(np.mean(shares)) if shares else 0.0


def load_split(
    store: Store,
    table: str,
    *,
    watch: float = 5.0,
    lookback: float = 300.0,
    max_rows: int = 200_000,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
) -> LoadSplit:
    """Find ``table``'s hot region (the write counters ``watch`` seconds apart), sample its
    writes of the last ``lookback`` seconds (at most ``max_rows`` keys scanned), score TiKV's
    candidates and replay the best (module docstring)."""
    first = {r.name: r.write_requests for r in store.regions(table)}
    t0 = time.monotonic()
    sleep(watch)
    regions = store.regions(table)
    dt = max(time.monotonic() - t0, 1e-3)
    deltas = np.array([max(r.write_requests - first.get(r.name, r.write_requests), 0) for r in regions], dtype=np.float64)
    if deltas.sum() <= 0:
        raise BadInput(f"table {table!r} took no writes in {watch:g} s: no hot region to split (watch longer with --watch)")
    hot = int(np.argmax(deltas))
    region = regions[hot]
    others = np.delete(deltas, hot) / dt
    since_ms = int((clock() - lookback) * 1000)
    keys: list[bytes] = []
    stamps: list[int] = []
    scanned = 0
    for batch, ts in store.scan_key_times(table, region.start, region.end, limit=max_rows):
        scanned += len(batch)
        for k, t in zip(batch, ts):
            if t >= since_ms:
                keys.append(k)
                stamps.append(t)
    notes = []
    if scanned >= max_rows:
        notes.append(f"the scan stopped at {max_rows:,} rows of the region: the sample is its first rows' recent writes only")
    times = np.asarray(stamps, dtype=np.float64) / 1000.0
    cands = score_candidates(keys)
    ok = [c for c in cands if c.balance <= MAX_BALANCE and c.crossing <= MAX_CROSSING]
    chosen = ok[0] if ok else None
    if chosen is None:
        notes.append(f"no candidate of {len(cands)} balances the sampled writes within {MAX_BALANCE:g} (TiKV's bound): no split proposed")
    hot_rate = float(deltas[hot] / dt)
    before = _replay(times, keys, None, hot_rate, others)
    after = _replay(times, keys, chosen.key, hot_rate, others) if chosen is not None else before
    result = LoadSplit(table, region, hot_rate, len(keys), lookback, cands, chosen, before, after, notes)
    if chosen is not None and not result.relieves:
        result.notes.append(
            f"replayed in time order the split leaves the busiest share at {after:.0%} (from {before:.0%}): the newest writes all sort on one side "
            "(a sequential key); only a new key design relieves it (keyshape autopilot)"
        )
    return result


def apply_load_split(store: Store, found: LoadSplit) -> list[RegionInfo]:
    """Split at ``found``'s key (Refused when its replay shows no relief or no key was chosen)."""
    if found.chosen is None or not found.relieves:
        raise Refused(f"no split of {found.table!r} to apply: " + ("; ".join(found.notes) or "the replay shows no relief"))
    boundaries = [r.start for r in store.regions(found.table)[1:]]
    plan = SplitPlan(found.table, boundaries, [PlannedSplit(0, found.region.start, found.region.end, found.chosen.key)])
    return apply_plan(store, plan)
