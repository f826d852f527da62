"""The predicted heat map under a pattern's fix: the observed traffic replayed under the fixed
schema, to show beside the real one.

Counters say how many writes each region took in each interval, not which keys: so each
(interval, region) cell's writes are stood for by up to ``per_cell`` keys drawn evenly from the
region's key range (a region's requests spread evenly over its range, as the heat map itself
assumes; the table's unbounded ends are closed by the width of their neighbour). Each key is
decoded by the table's schema, re-encoded by the fix's schema (``KeySchema.with_prefix``: the same
fields behind the fix's prefix), and the keys are replayed in write order through keyshape's
split simulation (``core.regions.simulate_auto_split``) into a table pre-split on the fix's
buckets, whose regions may split again as the real table's did (the row limit: the real table's
rows per region). Each key carries its cell's writes / keys drawn, so the predicted map has the
real one's totals.

Keys that the schema cannot decode (the bytes between two region boundaries need not be keys of
the schema) are dropped; with none left there is no prediction (``None``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from keyshape.core.regions import simulate_auto_split
from keyshape.schema import KeySchema
from keyshape.serve.fold import bucket_starts
from keyshape.serve.patterns import Traffic

__all__ = ["Predicted", "predict"]

MAX_KEYS = 20_000  # keys replayed at most (the split simulation keeps every key: a few MB)


@dataclass
class Predicted:
    """``values``: intervals x the fix's regions (``starts``), writes; ``busiest_share`` the mean
    over intervals of the busiest region's share (the real table's beside it: ``observed_share``)."""

    starts: list[bytes]
    values: np.ndarray
    busiest_share: float
    observed_share: float
    splits: int
    keys: int


def _as_int(key: bytes, width: int) -> int:
    return int.from_bytes(key.ljust(width, b"\x00"), "big")


def _ranges(starts: list[bytes], ends: list[bytes]) -> tuple[int, list[tuple[int, int]]]:
    """Each region's key range as integers over a common byte width; the unbounded first start
    and last end closed by their neighbour's width (or the whole space when there is none)."""
    width = max([8, *map(len, starts), *map(len, ends)])
    top = 1 << (8 * width)
    lo = [_as_int(s, width) for s in starts]
    hi = [_as_int(e, width) if e else top for e in ends]
    n = len(starts)
    if n > 1:
        if not ends[-1]:
            span = max(lo[-1] - lo[-2], 1)
            hi[-1] = min(top, lo[-1] + span)
        if not starts[0]:
            span = max(hi[1] - lo[1], 1) if hi[1] > lo[1] else hi[0]
            lo[0] = max(0, hi[0] - span)
    return width, list(zip(lo, hi))


def _busiest_share(m: np.ndarray) -> float:
    totals = m.sum(axis=1)
    keep = totals > 0
    return float((m[keep].max(axis=1) / totals[keep]).mean()) if keep.any() else 0.0


def predict(schema: KeySchema, fix_prefix: dict[str, Any], traffic: Traffic, per_cell: int = 32, seed: int = 0) -> Predicted | None:
    """The observed ``traffic`` (writes) replayed under ``schema`` with ``fix_prefix``
    (``{"strategy": ..., options}``); None when no key of the traffic's ranges decodes."""
    options = {k: int(v) for k, v in fix_prefix.items() if k != "strategy"}
    fix = schema.with_prefix(str(fix_prefix["strategy"]), splits=None, **options)
    writes = np.asarray(traffic.writes, dtype=np.float64)
    if writes.size == 0 or writes.sum() <= 0:
        return None
    rng = random.Random(seed)
    width, ranges = _ranges(traffic.starts, traffic.ends)
    cells = np.argwhere(writes > 0)
    per = max(1, min(per_cell, MAX_KEYS // max(len(cells), 1)))
    keys: list[bytes] = []
    interval: list[int] = []
    weight: list[float] = []
    for i, r in cells.tolist():  # write order: interval by interval
        lo, hi = ranges[r]
        m = int(min(per, writes[i, r]))
        # with repeats: a one-row range is that row written m times (a random prefix spreads each write)
        picks = sorted(lo + rng.randrange(max(hi - lo, 1)) for _ in range(m))  # Python ints: ranges pass 2^63
        records = []
        lengths = sorted({len(traffic.starts[r]), len(traffic.ends[r]), width} - {0})
        for v in picks:
            raw = v.to_bytes(width, "big")
            for key in [raw[:n] for n in lengths]:  # the ranges were zero-padded to one width: try the keys' own
                try:
                    records.append(schema.decode(key, verify=False))
                    break
                except Exception:  # noqa: BLE001 - not a key of this schema: not replayed
                    continue
        for rec in records:
            try:
                keys.append(fix.encode(rec))
            except Exception:  # noqa: BLE001 - a value the fix cannot hold: not replayed
                continue
            interval.append(i)
            weight.append(float(writes[i, r]) / len(records))
    if not keys:
        return None
    initial = bucket_starts(fix.prefix)[1:]
    rows_per_region = max(2, len(keys) // max(len(traffic.starts), 1))
    sim = simulate_auto_split(keys, initial_splits=initial, max_rows=rows_per_region if len(traffic.starts) > 1 else None)
    region = sim.region_map.assign(keys)
    out = np.zeros((writes.shape[0], len(sim.region_map)), dtype=np.float64)
    np.add.at(out, (np.asarray(interval), region), np.asarray(weight))
    return Predicted(sim.region_map.starts, out, _busiest_share(out), _busiest_share(writes), len(sim.splits), len(keys))
