"""Diagnose a live table from its own keys: a bounded key sample per region, weighted by what the
cluster reports, analyzed against the table's ACTUAL region boundaries.

``sample_table`` reads each region with key-only scans (no values cross the wire). A region with
at most ``per_region * scan_factor`` rows is read whole (``exhausted``: its row count is exact)
and thinned to ``per_region`` evenly spaced keys; a bigger one is probed at evenly spaced points
of its key range (``Bytes.split`` between its first and last key), a few keys per probe, so
the sample covers the whole region rather than its first rows. A time budget bounds the lot.

``analyze_live`` turns the sample into the analyzer's input: each region stands for its row count
(exact when read whole, else estimated from its store size or request counters), the keys are put
in write order by a time field decoded from them (``time_field``, the schema's first
``timestamp`` field, or a field its workload writes monotonically), and ``Analyzer`` judges them
with the regions the cluster has. Without any time source the order is a seeded shuffle: the
verdict then rests on how rows spread over regions, and a reason line says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.analysis import Analysis
from keyshape.analysis.analyze import Analyzer
from keyshape.analysis.designs import MONOTONIC_GENERATORS, schema_hints
from keyshape.core.hbytes import split as bytes_split
from keyshape.core.hbytes import to_string_binary
from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema
from keyshape.store.base import RegionInfo, Store

__all__ = ["LiveKeys", "RegionSample", "TableSample", "analyze_live", "order_field", "region_estimates",
           "sample_table"]

MAX_UNDECODABLE = 0.03  # above this share of sampled keys, the schema does not describe the table
PSEUDO_ROWS = 200_000  # rows the weighted sample is expanded to for the analyzer


@dataclass
class RegionSample:
    """Keys sampled from one region; ``exhausted`` when every key of the region was read
    (``scanned`` is then its exact row count)."""

    region: RegionInfo
    keys: list[bytes]
    scanned: int
    exhausted: bool


@dataclass
class TableSample:
    table: str
    regions: list[RegionSample]
    seconds: float
    timed_out: bool = False

    @property
    def split_keys(self) -> list[bytes]:
        return [r.region.start for r in self.regions[1:]]

    @property
    def keys(self) -> int:
        return sum(len(r.keys) for r in self.regions)


def _even(keys: Sequence[bytes], n: int) -> list[bytes]:
    """``n`` evenly spaced keys of ``keys`` (all when there are no more)."""
    if len(keys) <= n:
        return list(keys)
    step = len(keys) / n
    return [keys[int(i * step)] for i in range(n)]


def _last_key(store: Store, table: str, region: RegionInfo) -> bytes | None:
    """The region's last row key (a one-row reverse scan; the end key itself is excluded)."""
    for row, _ in store.scan(table, start=region.end, stop=region.start, reverse=True, limit=2,
                             batch_size=2):
        if not region.end or row < region.end:
            return row
    return None


def _probe_points(first: bytes, top: bytes, probes: int) -> list[bytes]:
    if probes < 2 or first >= top:
        return [first]
    try:
        inner = bytes_split(first, top, probes - 1)[1:-1]
    except ValueError:
        return [first]
    return [first] + sorted({k for k in inner if first < k < top})


def sample_table(store: Store, table: str, per_region: int = 500, *, scan_factor: int = 20,
                 probes: int = 16, time_limit: float = 60.0, batch_size: int = 1000) -> TableSample:
    """A key sample of every region of ``table`` (see the module docstring). TableNotFound for
    a missing table; ``time_limit`` seconds bound the whole sample (regions not reached keep
    what they have, ``timed_out`` says so)."""
    if per_region < 1:
        raise KeyshapeError(f"--sample-per-region must be at least 1, got {per_region}")
    started = time.monotonic()
    regions = store.regions(table)
    out: list[RegionSample] = []
    timed_out = False
    for region in regions:
        if time.monotonic() - started > time_limit:
            timed_out = True
            out.append(RegionSample(region, [], 0, False))
            continue
        limit = per_region * scan_factor
        read = list(store.scan_keys(table, region.start, region.end, limit=limit + 1,
                                    batch_size=min(batch_size, limit + 1)))
        if len(read) <= limit:
            out.append(RegionSample(region, _even(read, per_region), len(read), True))
            continue
        # probe between the first and the last key: the unused key space above the last row of
        # an open-ended region would otherwise swallow most probes
        points = _probe_points(read[0], _last_key(store, table, region) or region.end, probes)
        each = max(per_region // len(points), 1)
        keys: list[bytes] = []
        for point in points:
            if time.monotonic() - started > time_limit:
                timed_out = True
                break
            keys.extend(store.scan_keys(table, point, region.end, limit=each, batch_size=each))
        keys = sorted(set(keys))
        out.append(RegionSample(region, _even(keys, per_region), limit + 1, False))
    return TableSample(table, out, time.monotonic() - started, timed_out)


def order_field(schema: KeySchema, time_field: str | None = None) -> str | None:
    """The field that orders rows in time: ``time_field``, else the first ``timestamp`` field,
    else the first field the schema's workload writes monotonically; None if there is none."""
    if time_field is not None:
        if time_field not in schema.field_names:
            raise KeyshapeError(f"--time-field {time_field!r} is not a key field of "
                                f"{schema.source}; its fields are: {', '.join(schema.field_names)}")
        return time_field
    for f in schema.fields:
        if f.type == "timestamp":
            return f.name
    fields = getattr(schema.workload, "fields", None) or {}
    for f in schema.fields:
        spec = fields.get(f.name)
        if spec is not None and getattr(spec, "kind", None) in MONOTONIC_GENERATORS:
            return f.name
    return None


@dataclass
class LiveKeys:
    """``analyze_live``'s result: the analysis plus how it was made."""

    analysis: Analysis
    sample: TableSample
    estimated_rows: list[int]
    weights: str
    order: str | None
    undecodable: int = 0
    example: str = ""
    notes: list[str] = field(default_factory=list)


def region_estimates(sample: TableSample) -> tuple[list[int], str]:
    """Rows per region (exact for regions read whole, else estimated from the store size or
    request counters the cluster reports) and a phrase saying which."""
    regions = sample.regions
    if all(r.exhausted for r in regions):
        return [r.scanned for r in regions], "exact row counts (every region read whole)"
    for name, metric in (("store file size", lambda r: r.store_size_bytes),
                         ("request counters", lambda r: r.read_requests + r.write_requests)):
        m = np.array([metric(r.region) for r in regions], dtype=float)
        if m.sum() <= 0:
            continue
        shares = m / m.sum()
        big = [i for i, r in enumerate(regions) if not r.exhausted and shares[i] > 0]
        total = max((regions[i].scanned / shares[i] for i in big), default=0.0)
        est = [r.scanned if r.exhausted else max(r.scanned, int(shares[i] * total))
               for i, r in enumerate(regions)]
        return est, f"rows estimated from the regions' {name}"
    return [r.scanned for r in regions], "rows read per region (lower bounds: no size reported)"


def analyze_live(sample: TableSample, schema: KeySchema | None = None, *,
                 time_field: str | None = None, windows: int = 50, seed: int = 0,
                 pseudo_rows: int = PSEUDO_ROWS,
                 progress: Callable[[int], None] | None = None) -> LiveKeys:
    """Judge a live table from its key sample (see the module docstring). With ``schema`` the
    keys are decoded; KeyshapeError when more than 3% of them do not decode (the schema does not
    describe this table)."""
    if time_field is not None and schema is None:
        raise KeyshapeError("--time-field needs the table's SCHEMA to decode the field from the keys")
    if sample.keys == 0:
        raise KeyshapeError(f"table {sample.table!r} holds no rows to analyze")
    rng = np.random.default_rng(seed)
    estimates, weights = region_estimates(sample)
    scale = min(1.0, pseudo_rows / max(sum(estimates), 1))
    stream: list[bytes] = []
    for r, est in zip(sample.regions, estimates):
        if r.keys:
            n = max(int(round(est * scale)), 1)
            stream.extend(r.keys[i % len(r.keys)] for i in range(n))
    order = None if schema is None else order_field(schema, time_field)
    bad = 0
    example = ""
    if schema is not None:
        decoded: dict[bytes, Any] = {}
        for r in sample.regions:
            for k in r.keys:
                try:
                    decoded[k] = schema.decode(k)
                except KeyshapeError as exc:
                    bad += 1
                    example = example or f"{to_string_binary(k)} ({exc})"
        if bad > MAX_UNDECODABLE * sample.keys:
            raise KeyshapeError(
                f"the schema {schema.source} does not match table {sample.table!r}: {bad} of "
                f"{sample.keys} sampled keys do not decode, e.g. {example}; pass the schema the "
                "table was written with, or none to analyze the raw keys")
        stream = [k for k in stream if k in decoded]
    perm = rng.permutation(len(stream))
    stream = [stream[i] for i in perm]
    if order is not None:
        stream.sort(key=lambda k: decoded[k][order])
    notes = [f"Live keys of {sample.table}: {sample.keys:,} sampled in {len(sample.regions)} "
             f"region(s) in {sample.seconds:.1f} s; weights: {weights}."]
    if order is None:
        notes.append("No time field (--time-field F or a timestamp field in the schema): the time "
                     "axis is not known, so the verdict rests on how rows spread over regions.")
    if sample.timed_out:
        notes.append("The sample hit its time limit: some regions are under-sampled.")
    if bad:
        notes.append(f"{bad} sampled key(s) did not decode with the schema, e.g. {example}.")
    servers = max(len({r.region.server for r in sample.regions}), 1)
    acc = Analyzer(sample.split_keys, servers=servers, windows=windows, total_rows=len(stream))
    acc.update(stream)
    if progress is not None:
        progress(len(stream))
    analysis = acc.finish(name=sample.table, hints=schema_hints(schema) if schema else None,
                          source=f"live keys of {sample.table}"
                          + (f", time from field {order}" if order else ""))
    analysis.reasons = notes + analysis.reasons
    return LiveKeys(analysis, sample, estimates, weights, order, bad, example, notes)
