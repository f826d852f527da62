"""The predicted heat map under a fix: the observed traffic replayed under the fixed schema, to
show beside the real one, and the number every proposed fix is checked by (``serve.fixes``).

Counters say how many writes each region took in each interval, not which keys: so each
(interval, region) cell's writes are stood for by keys of the region's key range, as many as the
cell's part of the table's writes earns out of ``MAX_KEYS`` (at least one; a hot cell gets
hundreds, so the busiest share of the replay is the design's, not the draw's noise). A region's
keys spread evenly over its range and fill it in key order over time: interval by interval, each
cell takes the next slice of the region's keys (its cumulative share of the region's writes),
as a growing field (a sequence, a time) fills a range. That is the conservative reading of a
region's counters: writes at random over the range would also spread a hot value over any split
of its bucket, and a design that keeps the value in one bucket would replay as a fix. The
table's unbounded ends are closed by the width of their neighbour.

The keys are built by the schema, not by the width of the region boundaries:

- drawn evenly between the boundaries at the schema's own key width (an 8-byte id split point of
  a 12-byte key is the first 8 bytes of 12-byte keys), and decoded by the table's schema;
- where none of those decodes (a text field: ``t04``-style tenant boundaries), from records of the
  schema's own workload generators with the leading fields the region's start holds whole
  (``schema.labels.leading_values``: the region ``[t04, t05)`` gets rows of tenant ``t04``), kept
  when they fall in the region.

Each record is re-encoded by the fix's schema and the keys are replayed in write order through
keyshape's split simulation (``core.regions.simulate_auto_split``) into a table pre-split on the
fix's buckets, whose regions may split again as the real table's did (the row limit: the most
keys one observed region took in the window, which the real table held in one region). Each key
carries its cell's writes / keys drawn, so the predicted map has the real one's totals. A region
none of whose keys can be built is not replayed and counted (``Sampled.skipped``); with no key at
all there is no prediction, and ``Sampled.reason`` says why.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.core.regions import simulate_auto_split
from keyshape.schema import KeySchema
from keyshape.schema.labels import leading_values
from keyshape.serve.fold import bucket_starts

__all__ = ["MAX_KEYS", "Predicted", "Sampled", "Traffic", "busiest_share", "fixed_schema", "predict", "replay", "sample_records"]

MAX_KEYS = 20_000  # keys replayed (about: every written cell gets one); the split simulation keeps every key: a few MB
_PROBES = 16  # raw draws tried in a region before its keys are built from the schema's generators
_POOL = 2048  # records of the schema's workload generators a replay builds keys from


@dataclass
class Traffic:
    """What the poller saw of a table over its recent intervals: ``times`` (the end of each
    interval, seconds), the latest regions' key ranges and servers, and the ``writes`` / ``reads``
    of each interval on them (``intervals x regions``; regions that split since placed as
    ``LiveHeat.matrix`` places them)."""

    times: np.ndarray
    starts: list[bytes]
    ends: list[bytes]
    writes: np.ndarray
    reads: np.ndarray

    @classmethod
    def from_heat(cls, heat: Any) -> Traffic:
        """From an ``ops.liveheat.LiveHeat``."""
        return cls(
            np.array([s.at for s in heat.samples], dtype=np.float64),
            list(heat.starts),
            list(heat.ends),
            heat.matrix("write"),
            heat.matrix("read"),
        )


@dataclass
class Sampled:
    """The observed writes as records of the table's schema: ``records[k]`` stands for
    ``weights[k]`` writes in interval ``intervals[k]``; ``skipped`` regions had no key the schema
    could build (their writes are not replayed), ``reason`` says why when nothing was;
    ``regions[k]``: the observed region it was drawn in."""

    records: list[dict[str, Any]] = field(default_factory=list)
    intervals: list[int] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    regions: list[int] = field(default_factory=list)
    skipped: int = 0
    reason: str = ""


@dataclass
class Predicted:
    """``values``: intervals x the fix's regions (``starts``), writes; ``busiest_share`` the
    busiest region's share of the writes interval by interval, weighted by each interval's writes
    (``busiest_share``), the real table's beside it (``observed_share``); ``regions`` of the
    replayed table at the end (``fair_share`` = 1 / regions)."""

    starts: list[bytes]
    values: np.ndarray
    busiest_share: float
    observed_share: float
    splits: int
    keys: int

    @property
    def regions(self) -> int:
        return len(self.starts)

    @property
    def fair_share(self) -> float:
        return 1.0 / max(len(self.starts), 1)


def busiest_share(m: np.ndarray) -> float:
    """The busiest region's share of each interval's writes, averaged with each interval weighted
    by its writes (sum of the interval maxima / sum of the totals): a quiet interval of a few
    writes, where any region is 'the busiest', does not count as much as a busy one."""
    m = np.asarray(m, dtype=np.float64)
    total = float(m.sum())
    return float(m.max(axis=1).sum() / total) if m.size and total > 0 else 0.0


def fixed_schema(schema: KeySchema, prefix: Mapping[str, Any]) -> KeySchema:
    """``schema`` with ``prefix`` (``{"strategy": ..., "buckets": N, "hash_fields": [...]}``;
    ``hash_fields`` optional: the schema's own otherwise), as a fix's TOML describes it."""
    options = {k: int(v) for k, v in prefix.items() if k not in ("strategy", "hash_fields")}
    base = schema
    hashed = prefix.get("hash_fields")
    if hashed:
        base = copy.copy(schema)  # a copy: the caller's schema keeps its own hash_fields
        base.hash_fields = [str(h) for h in hashed]
    return base.with_prefix(str(prefix["strategy"]), splits=None, **options)


def _as_int(key: bytes, width: int) -> int:
    return int.from_bytes(key[:width].ljust(width, b"\x00"), "big")


def _key_width(schema: KeySchema) -> int | None:
    """The length of every key of ``schema`` when all its fields have a fixed width, else None."""
    widths = [f.fixed_width for f in schema.fields]
    if any(w is None for w in widths):
        return None
    return schema.prefix.head_width + sum(w for w in widths if w is not None) + len(schema.separator) * (len(widths) - 1)


def _ranges(starts: list[bytes], ends: list[bytes], width: int) -> list[tuple[int, int]]:
    """Each region's key range as integers at ``width`` bytes; the unbounded first start and last
    end closed by their neighbour's width (or the whole space when there is none)."""
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
    return list(zip(lo, hi))


def _as_list(column: Any) -> list[Any]:
    return column.tolist() if isinstance(column, np.ndarray) else list(column)


def _pool(schema: KeySchema) -> list[dict[str, Any]]:
    """Records of the schema's workload generators (its ``[workload]``, else each type's default)."""
    from keyshape.schema.synthetic import generate

    out: list[dict[str, Any]] = []
    try:
        # the first rows only: a workload of 10^9 rows is not generated to be strided
        for chunk in generate(schema, _POOL):
            names = list(chunk)
            columns = [_as_list(chunk[n]) for n in names]
            out.extend(dict(zip(names, row)) for row in zip(*columns))
    except Exception:  # noqa: BLE001 - a workload that cannot be generated: no schema-built keys
        return []
    return out


class _Builder:
    """Sample records of one region of the table, by the schema (see the module docstring)."""

    def __init__(self, schema: KeySchema, starts: list[bytes], ends: list[bytes], rng: random.Random) -> None:
        self.schema, self.starts, self.ends, self.rng = schema, starts, ends, rng
        own = _key_width(schema)
        self.width = max([8, own or 0, *map(len, starts), *map(len, ends)])
        self.lengths = sorted({own or 0, *map(len, starts), *map(len, ends), self.width} - {0}, reverse=True)
        self.ranges = _ranges(starts, ends, self.width)
        self.raw_ok: dict[int, bool] = {}
        self._pool: list[dict[str, Any]] | None = None
        self.built: dict[int, list[dict[str, Any]]] = {}

    def _decode(self, raw: bytes) -> dict[str, Any] | None:
        for n in self.lengths:  # the schema's own width first, then the boundaries'
            try:
                return self.schema.decode(raw[:n], verify=False)
            except Exception:  # noqa: BLE001 - not a key of this schema at this length
                continue
        return None

    def _raw(self, r: int, m: int) -> list[dict[str, Any]]:
        lo, hi = self.ranges[r]
        picks = sorted(lo + self.rng.randrange(max(hi - lo, 1)) for _ in range(m))  # Python ints: ranges pass 2^63
        out = []
        for v in picks:
            rec = self._decode(v.to_bytes(self.width, "big"))
            if rec is not None:
                out.append(rec)
        return out

    def _by_schema(self, r: int) -> list[dict[str, Any]]:
        if r not in self.built:
            if self._pool is None:
                self._pool = _pool(self.schema)
            start, end = self.starts[r], self.ends[r]
            lead = leading_values(self.schema, start)
            out = []
            for rec in self._pool:
                try:
                    key = self.schema.encode({**rec, **lead})
                except Exception:  # noqa: BLE001 - a value the schema refuses: not a sample
                    continue
                if key >= start and (not end or key < end):
                    out.append({**rec, **lead})
            self.built[r] = out
        return self.built[r]

    def _key(self, rec: dict[str, Any]) -> bytes:
        try:
            return self.schema.encode(rec)
        except Exception:  # noqa: BLE001 - decoded without verify: a record the schema refuses sorts last
            return b"\xff" * (self.width + 1)

    def records(self, r: int, m: int) -> list[dict[str, Any]]:
        """About ``m`` records in region ``r``, in key order ([] when none can be built)."""
        if self.raw_ok.get(r) is None:
            self.raw_ok[r] = bool(self._raw(r, _PROBES))
        if self.raw_ok[r]:
            # draws until m decode or 4m were tried: the decodable keys of a range may be a
            # small part of its bytes (a text field's separator at one place)
            got: list[dict[str, Any]] = []
            for _ in range(4):
                got.extend(self._raw(r, m))
                if len(got) >= m:
                    break
        else:
            got = list(self._by_schema(r))
        if not got:
            return []
        got.sort(key=self._key)
        if len(got) != m:  # m, evenly over the key order (a record repeats when fewer were built)
            got = [got[k] for k in np.linspace(0, len(got) - 1, m).round().astype(int).tolist()]
        return got


def _in_time(records: list[dict[str, Any]], cum: np.ndarray, i: int) -> list[dict[str, Any]]:
    """The part of a region's ``records`` (key order) that stands for its writes of interval
    ``i``: the slice between the region's cumulative write fractions before and after it
    (``cum``), at least one record. A region is taken to fill its range in key order over time,
    as a growing field (a sequence, a time) fills it: drawn at random over the whole range in
    every interval instead, a hot value's rows would land on both sides of any split the replay
    simulates, and a design that keeps them in one bucket would replay as spread (issue 39)."""
    n = len(records)
    lo = int(np.floor((cum[i - 1] if i else 0.0) * n))
    hi = max(int(np.ceil(cum[i] * n)), lo + 1)
    return records[min(lo, n - 1) : min(hi, n)]


def sample_records(schema: KeySchema, traffic: Traffic, seed: int = 0, max_keys: int = MAX_KEYS) -> Sampled:
    """The observed writes of ``traffic`` as records of ``schema`` (see the module docstring)."""
    writes = np.asarray(traffic.writes, dtype=np.float64)
    out = Sampled()
    if writes.size == 0 or writes.sum() <= 0:
        out.reason = "no writes observed yet"
        return out
    builder = _Builder(schema, list(traffic.starts), list(traffic.ends), random.Random(seed))
    total = float(writes.sum())
    keys = np.where(writes > 0, np.minimum(writes, np.maximum(1, np.rint(max_keys * writes / total))), 0).astype(np.int64)
    per_region = keys.sum(axis=0)
    cum = np.cumsum(writes, axis=0) / np.maximum(writes.sum(axis=0), 1e-300)
    drawn: dict[int, list[dict[str, Any]]] = {}
    dead: set[int] = set()
    for i, r in np.argwhere(writes > 0).tolist():  # write order: interval by interval
        if r not in drawn:
            drawn[r] = builder.records(r, int(per_region[r]))
        if not drawn[r]:
            dead.add(r)
            continue
        records = _in_time(drawn[r], cum[:, r], i)
        w = float(writes[i, r])
        out.records.extend(records)
        out.intervals.extend([i] * len(records))
        out.weights.extend([w / len(records)] * len(records))
        out.regions.extend([r] * len(records))
    out.skipped = len(dead)
    if not out.records:
        out.reason = (
            f"no key of the {len(traffic.starts)} observed regions could be built by the schema {schema.table.full_name} "
            "(neither keys drawn between the region boundaries at the schema's key width, nor rows of its workload generators "
            "with the fields the boundaries hold, fall in the regions): is this the table's schema?"
        )
    return out


def replay(sampled: Sampled, fix: KeySchema, traffic: Traffic) -> Predicted | None:
    """``sampled`` re-encoded by ``fix`` and replayed through the split simulation (None when no
    record can be encoded by the fix)."""
    keys: list[bytes] = []
    interval: list[int] = []
    weight: list[float] = []
    region_of: list[int] = []
    for rec, i, w, r in zip(sampled.records, sampled.intervals, sampled.weights, sampled.regions):
        try:
            keys.append(fix.encode(rec))
        except Exception:  # noqa: BLE001 - a value the fix cannot hold: not replayed
            continue
        interval.append(i)
        weight.append(w)
        region_of.append(r)
    if not keys:
        return None
    writes = np.asarray(traffic.writes, dtype=np.float64)
    initial = bucket_starts(fix.prefix)[1:]
    # A region splits in the replay when it takes more keys than the busiest observed region
    # took in the window: the real table held that many in one region (split or not), so fewer
    # never split one. The table's mean rows per region would split a bucket the real table
    # never would, and a hot value's rows, split in two, would replay as spread.
    held = np.bincount(np.asarray(region_of), minlength=len(traffic.starts)).max() if region_of else 0
    max_rows = max(2, int(held)) if len(traffic.starts) > 1 else None
    sim = simulate_auto_split(keys, initial_splits=initial, max_rows=max_rows)
    region = sim.region_map.assign(keys)
    out = np.zeros((writes.shape[0], len(sim.region_map)), dtype=np.float64)
    np.add.at(out, (np.asarray(interval), region), np.asarray(weight))
    return Predicted(sim.region_map.starts, out, busiest_share(out), busiest_share(writes), len(sim.splits), len(keys))


def predict(schema: KeySchema, fix_prefix: Mapping[str, Any], traffic: Traffic, seed: int = 0) -> Predicted | None:
    """The observed ``traffic`` (writes) replayed under ``schema`` with ``fix_prefix``
    (``{"strategy": ..., options, "hash_fields": [...]}``); None when no key of the traffic's
    ranges can be built (``sample_records(...).reason`` says why)."""
    sampled = sample_records(schema, traffic, seed)
    if not sampled.records:
        return None
    return replay(sampled, fixed_schema(schema, fix_prefix), traffic)
