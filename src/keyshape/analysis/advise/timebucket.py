"""Time bucketing, OpenTSDB's base-hour row: one row per entity and hour (or day) of event time.

The key is the entity's fields (after the salt, when there is one) and the event time truncated
to the bucket; the event's offset inside the bucket goes in the qualifier, and a closed bucket's
cells are rewritten as one cell (OpenTSDB's row compaction), so the key is stored once per bucket
instead of once per event.

keyshape's key fields are values, not functions of other fields, so the bucket is a field of its
own (``ts_hour`` beside ``ts``) that the writer sets (``ts - ts % 3_600_000``), as OpenTSDB's writer
computes its base time; the qualifier layout and the compaction are the writer's, as every cell
layout is. The TOML the advisor prints says so in its header.

Choice: the largest of day and hour whose busiest entity, at its pace in the sample, writes at most
:data:`MAX_EVENTS` events into one row (OpenTSDB's hour of one point a second); a bucket whose
average row would hold fewer than :data:`MIN_EVENTS` packs nothing and is not proposed.

Scoring, with the same engines and constants as every design:

- writes: the analyzer replays every event as a write to its bucket's row (the current bucket's
  row takes the entity's writes: same region, same concentration as an entity-led key); the
  compaction adds a read of each event's cell, a delete of it and one packed put per bucket row
  (write amplification ``2 + 1/events per row``);
- reads: a closed bucket is one cell of ``events x (offset + value)`` bytes, the open one holds
  half a bucket of events as separate cells (each costs what an event row costs:
  ``benchmarks/bench_advise_cells.py`` on the standalone HBase scans a cell of a 1,000-cell row in
  0.77-0.84 us and a one-cell row in 0.89-0.93 us, so cells are hardly cheaper than rows and only
  the packing saves); a window reads every bucket it touches
  whole (the edge bucket's older events too), latest-N reads the open bucket whole, then packed
  rows until N events;
- storage at the horizon: a key per bucket row, ``offset + value`` bytes per event.

This module chooses the bucket and adds its column; ``score.score_bucketed`` prices a bucketed
design (scoring is the scorer's concept, and candidates import this module, so it cannot import
the scorer back).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from keyshape.analysis.advise.sample import Sample
from keyshape.analysis.advise.spec import AdviseSpec

__all__ = [
    "BUCKETS",
    "MAX_EVENTS",
    "MIN_EVENTS",
    "OFFSET_BYTES",
    "Bucket",
    "choose_bucket",
    "bucket_field",
    "add_bucket_column",
    "repeat_share",
]

BUCKETS = (("day", 86_400_000), ("hour", 3_600_000))  # largest first
MAX_EVENTS = 3600  # events of the busiest entity in one row: OpenTSDB's hour at one point a second
MIN_EVENTS = 2.0  # events an average row must hold for the packing to save anything
OFFSET_BYTES = 4  # the offset inside the bucket, in the qualifier (ms inside a day fits 4 bytes)


@dataclass(frozen=True)
class Bucket:
    """The bucket chosen for an entity: its name and length, and how full its rows get."""

    unit: str
    ms: int
    busiest: float  # events the busiest entity writes into one row
    mean: float  # events an average row holds


def bucket_field(time_field: str, unit: str) -> str:
    """The key field holding the truncated event time: ``ts_hour``."""
    return f"{time_field}_{unit}"


def choose_bucket(spec: AdviseSpec, sample: Sample, entity: tuple[str, ...]) -> Bucket | str:
    """The bucket for rows of ``entity`` (see the module docstring), or why none fits.

    An entity's rate is its share of the sample's records times the workload's write rate at the
    horizon, as the scorer reads it (not the sample's own pace, which a thinned or a contiguous
    sample of one workload give differently); an average row holds, as one event sees it, the event
    and its entity's other events of the bucket (:func:`repeat_share`)."""
    t = spec.time_field
    if t is None:
        return "the workload has no event time to bucket"
    rate = spec.rate_at_horizon
    cols = [c.tolist() if isinstance(c, np.ndarray) else list(c) for c in (sample.columns[f] for f in entity)]
    busiest_rate = max(Counter(zip(*cols)).values()) / sample.rows * rate  # events a second
    repeat = repeat_share(sample, entity)
    what = ", ".join(entity)
    for unit, ms in BUCKETS:
        busiest = busiest_rate * ms / 1000
        if busiest <= MAX_EVENTS:
            mean = 1.0 + repeat * rate * ms / 1000
            if mean < MIN_EVENTS:
                return (
                    f"a {unit}'s row of an average {what} would hold {mean:.2g} events: it packs nothing, "
                    "and a read by time would read whole rows for nothing"
                )
            return Bucket(unit, ms, busiest, mean)
    return f"the busiest {what} writes {busiest_rate * 3600:,.0f} events an hour: more than {MAX_EVENTS:,} in one row even by the hour"


def repeat_share(sample: Sample, entity: tuple[str, ...]) -> float:
    """The write-weighted mean share of the writes an event's entity holds, leave-one-out:
    ``sum c(c-1) / (n(n-1))`` over the entities' record counts ``c`` (unbiased for ``sum p^2``
    whether the sample is contiguous or evenly thinned)."""
    n = sample.rows
    if n < 2:
        return 0.0
    cols = [c.tolist() if isinstance(c, np.ndarray) else list(c) for c in (sample.columns[f] for f in entity)]
    counts = np.fromiter(Counter(zip(*cols)).values(), dtype=np.float64)
    return float((counts * (counts - 1)).sum() / (n * (n - 1)))


def add_bucket_column(sample: Sample, time_field: str, bucket: Bucket) -> str:
    """Add the truncated event time to ``sample`` (a derived column, as the writer would set it)."""
    name = bucket_field(time_field, bucket.unit)
    if name not in sample.columns:
        t = np.asarray(sample.columns[time_field], dtype=np.int64)
        sample.columns[name] = t - t % bucket.ms
        sample.types[name] = "timestamp"
    return name
