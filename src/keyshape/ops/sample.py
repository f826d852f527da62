"""Diagnose a live table from its own keys: its rows counted, a bounded key sample per region,
analyzed against the table's ACTUAL region boundaries.

``sample_table`` reads regions with key-only scans that also return each row's cell timestamp (no
values cross the wire). Regions are counted whole, the smallest (by store size) first, while the
rows read stay within ``count_rows`` (default 5,000,000: about 10 s on one region server; None
counts every region): a region read whole has an EXACT row count (``exhausted``) and keeps
``per_region`` keys evenly spaced over all its rows. A region beyond the budget is probed at
evenly spaced points of its key range (``Bytes.split`` between its first and last key), a few
keys per probe, so the sample covers the whole region rather than its first rows. A time budget
bounds the lot.

``row_counts`` says how many rows each region holds, and how well it knows: exact for regions read
whole; for the others an ESTIMATE from the store size the region server reports, at the bytes a
row measured on the regions counted whole, with a low-high bound (HBase reports store file and
memstore sizes in whole MB, rounded down: a region's bytes are in ``[S, S + 2 MiB)``), never
less than the rows read from it. Without a region counted whole there is no bytes-a-row to go by:
the rows read are given as lower bounds and the report says so.

``analyze_live`` turns the sample into the analyzer's input. The keys are put in write order by
``time_field``, else the schema's first ``timestamp`` field, else the rows' CELL TIMESTAMPS (when
they tell rows apart: a bulk load with one timestamp does not), else a field the schema's
workload writes monotonically. Each sampled key stands for the rows between it and the next
sampled key of its region, written between their times; "keys increasing in write order" is
how often, of two sampled keys written at different times, the later is the larger
(``write_order``). Without any time source the order is a seeded shuffle: the verdict then rests on how rows
spread over regions, and a reason line says so. The analysis reports the counted rows, not the
size of the sample it was drawn from.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from keyshape.analysis import Analysis
from keyshape.analysis.analyze import Analyzer
from keyshape.analysis.designs import MONOTONIC_GENERATORS, schema_hints
from keyshape.analysis.signals import WriteOrder
from keyshape.core.hbytes import split as bytes_split
from keyshape.core.hbytes import to_string_binary
from keyshape.errors import BadInput, KeyshapeError
from keyshape.ops.live_notes import live_notes
from keyshape.schema import KeySchema
from keyshape.store.base import RegionInfo, Store
from keyshape.workload import WorkloadSpec

__all__ = [
    "CELL_TIMESTAMPS",
    "COUNT_ROWS",
    "LiveKeys",
    "RegionCount",
    "RegionSample",
    "RowCount",
    "TableSample",
    "analyze_live",
    "analyze_table",
    "order_field",
    "region_estimates",
    "row_counts",
    "sample_table",
]

MAX_UNDECODABLE = 0.03  # above this share of sampled keys, the schema does not describe the table
PSEUDO_ROWS = 200_000  # rows the weighted sample is expanded to for the analyzer
COUNT_ROWS = 5_000_000  # rows sample_table reads to count regions whole (~10 s on one server)
CELL_TIMESTAMPS = "cell timestamps"  # LiveKeys.order when the rows' cell timestamps order them
_SIZE_STEP = 2 * 2**20  # HBase's store size is two whole-MB figures rounded down (store files, memstore)


@dataclass
class RegionSample:
    """Keys sampled from one ``region``; ``exhausted`` when every key of the region was read
    (``scanned`` is then its exact row count). ``times``: each key's cell timestamp (ms), in
    the order of ``keys`` (empty when the store gave none)."""

    region: RegionInfo
    keys: list[bytes]
    scanned: int
    exhausted: bool
    times: list[int] = field(default_factory=list)


@dataclass
class TableSample:
    """What :func:`sample_table` read of ``table``: one :class:`RegionSample` per region in
    ``regions`` (key order), in ``seconds``; ``timed_out`` when the time limit cut it short."""

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
    return [keys[i] for i in _even_index(len(keys), n)]


def _even_index(length: int, n: int) -> list[int]:
    if length <= n:
        return list(range(length))
    step = length / n
    return [int(i * step) for i in range(n)]


def _last_key(store: Store, table: str, region: RegionInfo) -> bytes | None:
    """The region's last row key (a one-row reverse scan; the end key itself is excluded)."""
    for row, _ in store.scan(table, start=region.end, stop=region.start, reverse=True, limit=2, batch_size=2):
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


def _read_thinned(store: Store, table: str, region: RegionInfo, cap: int, keep: int, batch_size: int) -> tuple[list[bytes], list[int], int, bool]:
    """Read up to ``cap`` rows of ``region`` (key-only, with cell timestamps), keeping rows at
    a stride that doubles whenever more than ``2 * keep`` are kept, so the kept rows are evenly
    spaced over everything read. Returns (keys, times, rows read, whole region read)."""
    keys: list[bytes] = []
    times: list[int] = []
    stride, read = 1, 0
    for batch, stamps in store.scan_key_times(table, region.start, region.end, limit=cap + 1, batch_size=batch_size):
        offset = (-read) % stride
        keys.extend(batch[offset::stride])
        times.extend(stamps[offset::stride])
        read += len(batch)
        while len(keys) > 2 * keep:
            keys, times, stride = keys[::2], times[::2], stride * 2
    index = _even_index(len(keys), keep)
    return [keys[i] for i in index], [times[i] for i in index], min(read, cap + 1), read <= cap


def sample_table(
    store: Store,
    table: str,
    per_region: int = 500,
    *,
    scan_factor: int = 20,
    probes: int = 16,
    time_limit: float = 60.0,
    batch_size: int = 5000,
    count_rows: int | None = COUNT_ROWS,
) -> TableSample:
    """A key sample of every region of ``table`` (see the module docstring).

    store: the store holding ``table`` (left open).
    table: the live table, ``NAME`` or ``NAMESPACE:NAME``; TableNotFound when missing.
    per_region: keys kept per region, evenly spaced (>= 1).
    scan_factor: a region of at most ``per_region * scan_factor`` rows is read whole even when
        ``count_rows`` is spent (default 20).
    probes: evenly spaced points of a region's key range probed when it is not read whole
        (default 16).
    time_limit: seconds that bound the sampling of regions not counted; regions not reached keep
        what they have, and ``timed_out`` says so (default 60).
    batch_size: rows per scan round trip, at most (default 5000).
    count_rows: rows that may be read to count regions whole, smallest regions first (default
        5,000,000); None: every region, however long it takes; 0: only the small regions
        ``scan_factor`` allows.
    """
    if per_region < 1:
        raise BadInput(f"--sample-per-region must be at least 1, got {per_region}")
    if count_rows is not None and count_rows < 0:
        raise BadInput(f"--count-rows must not be negative, got {count_rows}")
    started = time.monotonic()
    regions = store.regions(table)
    out: dict[int, RegionSample] = {}
    timed_out = False
    budget = None if count_rows is None else int(count_rows)
    small = per_region * scan_factor
    # The smallest regions first: as many as the budget allows are counted exactly, and those
    # measure the bytes a row that the estimates of the rest go by.
    order = sorted(range(len(regions)), key=lambda i: (regions[i].store_size_bytes, i))
    for i in order:
        region = regions[i]
        if budget is None:
            cap = 2**62
        else:
            cap = max(small, budget)
            if time.monotonic() - started > time_limit and budget < small:
                timed_out = True
                out[i] = RegionSample(region, [], 0, False)
                continue
        keys, times, read, whole = _read_thinned(store, table, region, cap, per_region, min(batch_size, cap + 1))
        if budget is not None:
            budget = max(budget - read, 0)
        if whole:
            out[i] = RegionSample(region, keys, read, True, times)
            continue
        # probe between the first and the last key: the unused key space above the last row of
        # an open-ended region would otherwise swallow most probes
        points = _probe_points(keys[0], _last_key(store, table, region) or region.end, probes)
        each = max(per_region // len(points), 1)
        found: dict[bytes, int] = {}
        for point in points:
            if time.monotonic() - started > time_limit:
                timed_out = True
                break
            for batch, stamps in store.scan_key_times(table, point, region.end, limit=each, batch_size=each):
                found.update(zip(batch, stamps))
        ordered = sorted(found)
        picked = _even(ordered, per_region)
        out[i] = RegionSample(region, picked, read, False, [found[k] for k in picked])
    return TableSample(table, [out[i] for i in range(len(regions))], time.monotonic() - started, timed_out)


# ------------------------------------------------------------------------------- row counts


@dataclass(frozen=True)
class RegionCount:
    """Rows of one region: exact (``low == rows == high``, ``exact`` True) or an estimate
    ``rows`` in ``[low, high]`` (``high`` None: no upper bound is known)."""

    rows: int
    low: int
    high: int | None
    exact: bool


@dataclass(frozen=True)
class RowCount:
    """Rows per region of a sampled table (``regions``, one :class:`RegionCount` each) and how
    they were found (``method``, one sentence); ``bytes_per_row``: the range of bytes per row the
    estimates went by (None when nothing was estimated from a size)."""

    regions: list[RegionCount]
    method: str
    bytes_per_row: tuple[float, float] | None = None

    @property
    def rows(self) -> int:
        return sum(r.rows for r in self.regions)

    @property
    def low(self) -> int:
        return sum(r.low for r in self.regions)

    @property
    def high(self) -> int | None:
        highs = [r.high for r in self.regions]
        return None if any(h is None for h in highs) else sum(h for h in highs if h is not None)

    @property
    def exact(self) -> bool:
        return all(r.exact for r in self.regions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "low": self.low,
            "high": self.high,
            "exact": self.exact,
            "method": self.method,
            "bytes_per_row": list(self.bytes_per_row) if self.bytes_per_row else None,
            "regions": [{"rows": r.rows, "low": r.low, "high": r.high, "exact": r.exact} for r in self.regions],
        }


def row_counts(sample: TableSample) -> RowCount:
    """Rows per region of ``sample`` (see the module docstring): exact where a region was read
    whole, else estimated from its store size with a bound, else the rows read as a lower bound."""
    regions = sample.regions
    exact = [r for r in regions if r.exhausted]
    if len(exact) == len(regions):
        return RowCount(
            [RegionCount(r.scanned, r.scanned, r.scanned, True) for r in regions],
            f"rows counted exactly (key-only scan of every region, {sum(r.scanned for r in regions):,} rows)",
        )
    # Bytes a row on the regions counted whole: the store size is rounded down to whole MB
    # twice, so each region's true bytes are in [S, S + 2 MiB); only regions of a few MB say
    # much. Their common range, if they agree; the widest, if not.
    rated = [r for r in exact if r.scanned > 0 and r.region.store_size_bytes > 0]
    counts: list[RegionCount] = []
    per_row: tuple[float, float] | None = None
    if rated:
        lows = [r.region.store_size_bytes / r.scanned for r in rated]
        highs = [(r.region.store_size_bytes + _SIZE_STEP) / r.scanned for r in rated]
        lo, hi = max(lows), min(highs)
        if lo > hi:
            lo, hi = min(lows), max(highs)
        per_row = (lo, hi)
    for r in regions:
        if r.exhausted:
            counts.append(RegionCount(r.scanned, r.scanned, r.scanned, True))
        elif per_row is not None:
            size = r.region.store_size_bytes
            low = max(r.scanned, int(size / per_row[1]))
            high = max(low, int((size + _SIZE_STEP) / per_row[0]))
            mid = (size + _SIZE_STEP / 2) / ((per_row[0] + per_row[1]) / 2)
            counts.append(RegionCount(min(max(int(round(mid)), low), high), low, high, False))
        else:
            counts.append(RegionCount(r.scanned, r.scanned, None, False))
    counted = sum(c.rows for c in counts if c.exact)
    n_exact, n = len(exact), len(regions)
    rest = [c for c in counts if not c.exact]
    if per_row is not None:
        method = (
            f"{n_exact} of {n} regions counted exactly ({counted:,} rows); {n - n_exact} "
            f"estimated from their store size at {per_row[0]:.1f}-{per_row[1]:.1f} bytes a row "
            f"as measured on the counted regions (HBase reports sizes in whole MB): "
            f"{sum(c.low for c in rest):,}-{sum(c.high or 0 for c in rest):,} rows"
        )
    else:
        method = (
            f"{n_exact} of {n} regions counted exactly ({counted:,} rows); {n - n_exact} not "
            "read whole and no counted region to measure bytes a row by: their rows read "
            f"({sum(c.rows for c in rest):,}) are lower bounds (pass --count-rows to count more)"
        )
    return RowCount(counts, method, per_row)


def region_estimates(sample: TableSample) -> tuple[list[int], str]:
    """Rows per region of ``sample`` (``row_counts``) and the sentence saying how they were found."""
    counts = row_counts(sample)
    return [c.rows for c in counts.regions], counts.method


# ------------------------------------------------------------------------------- write order


def order_field(schema: KeySchema, time_field: str | None = None) -> str | None:
    """The field of ``schema`` that orders rows in time: ``time_field``, else the first
    ``timestamp`` field, else the first field the schema's workload writes monotonically; None if
    there is none."""
    named = _named_order_field(schema, time_field)
    return named if named is not None else _workload_order_field(schema)


def _named_order_field(schema: KeySchema, time_field: str | None) -> str | None:
    if time_field is not None:
        if time_field not in schema.field_names:
            raise BadInput(f"--time-field {time_field!r} is not a key field of {schema.source}; its fields are: {', '.join(schema.field_names)}")
        return time_field
    for f in schema.fields:
        if f.type == "timestamp":
            return f.name
    return None


def _workload_order_field(schema: KeySchema) -> str | None:
    fields = WorkloadSpec.of(schema.workload).fields
    for f in schema.fields:
        spec = fields.get(f.name)
        if spec is not None and spec.kind in MONOTONIC_GENERATORS:
            return f.name
    return None


def _informative(times: Sequence[int], keys: int) -> bool:
    """Whether cell timestamps tell the sampled rows' write order: enough distinct times. A bulk
    load or an import with one timestamp gives none; a batch of puts shares one timestamp
    (HBase stamps a mini-batch at once), so many ties are normal."""
    return keys >= 2 and len(set(times)) >= min(10, max(2, keys // 2))


def _rank(values: Sequence[Any]) -> np.ndarray:
    """Dense ranks of comparable values (equal values, equal rank)."""
    distinct = sorted(set(values))
    where = {v: i for i, v in enumerate(distinct)}
    return np.array([where[v] for v in values], dtype=np.float64)


ORDER_KEYS = 3000  # write_order compares every pair of at most this many sampled keys


def write_order(keys: Sequence[bytes], times: np.ndarray, rng: np.random.Generator) -> WriteOrder:
    """Increasing / decreasing keys in write order, over the distinct sampled ``keys`` written
    at ``times``: of every two keys written at different times (at most :data:`ORDER_KEYS`
    keys, drawn at random), how often the later one is the larger, or the smaller. Not
    neighbours in time alone: batches in flight at once land in any order within milliseconds,
    and a sampled key stands for hundreds of rows, so a key walking through the key space shows
    in pairs far apart, a random one in none. The classic designs read as in the analyzer:
    sequential ~1 increasing, reverse ~1 decreasing, hashed or salted ~0.5 each. Keys written
    at the same time are in no known order: such pairs are left out."""
    order = WriteOrder()
    n = len(keys)
    if n < 2:
        return order
    pick = rng.permutation(n)[:ORDER_KEYS]
    ranks = _rank([keys[i] for i in pick])
    t = np.asarray(times, dtype=np.float64)[pick]
    for lo in range(0, len(pick), 500):  # blocks of rows: 500 x 3000 comparisons at a time
        dt = np.sign(t[None, :] - t[lo : lo + 500, None])
        dk = np.sign(ranks[None, :] - ranks[lo : lo + 500, None])
        # each unordered pair is met twice (i, j) and (j, i) with the same product: halve
        order.pairs += int(np.count_nonzero(dt)) // 2
        order.up += int(np.count_nonzero((dt * dk) > 0)) // 2
        order.down += int(np.count_nonzero((dt * dk) < 0)) // 2
    return order


# ------------------------------------------------------------------------------- analysis


@dataclass
class LiveKeys:
    """``analyze_live``'s result: the analysis plus how it was made.

    analysis: the verdict on the live keys, each region weighted by its rows.
    sample: the key sample it was made from.
    estimated_rows: rows per region (exact or estimated: ``counts`` says which).
    weights: the sentence saying how those rows were found.
    order: what gave the write order (a field, ``CELL_TIMESTAMPS``), None when unknown.
    undecodable: sampled keys that did not decode with the schema.
    example: the first of them, with why.
    notes: what the analysis should be read with (the sample, the order, the limits hit).
    counts: the row counts behind ``estimated_rows``.
    """

    analysis: Analysis
    sample: TableSample
    estimated_rows: list[int]
    weights: str
    order: str | None
    undecodable: int = 0
    example: str = ""
    notes: list[str] = field(default_factory=list)
    counts: RowCount | None = None


def analyze_live(
    sample: TableSample,
    schema: KeySchema | None = None,
    *,
    time_field: str | None = None,
    windows: int = 50,
    seed: int = 0,
    pseudo_rows: int = PSEUDO_ROWS,
    progress: Callable[[int], None] | None = None,
) -> LiveKeys:
    """Judge a live table from its key sample (see the module docstring).

    sample: :func:`sample_table`'s sample of the table.
    schema: the table's key schema, to decode the keys; BadInput when more than 3% of them do
        not decode (the schema does not describe this table). None: the keys as raw bytes.
    time_field: the key field that orders rows in time (needs ``schema``); default the schema's
        first timestamp field, else the cells' timestamps, else a field its workload writes
        monotonically.
    windows: time windows the write stream is cut into (default 50).
    seed: seed of the expansion of the weighted sample, and of the shuffle when nothing orders
        the rows in time (default 0).
    pseudo_rows: rows the weighted sample is expanded to for the analyzer (default 200,000).
    progress: called once with the rows fed to the analyzer, when they are in; None: not called.
    """
    if time_field is not None and schema is None:
        raise BadInput("--time-field needs the table's SCHEMA to decode the field from the keys")
    if sample.keys == 0:
        raise BadInput(f"table {sample.table!r} holds no rows to analyze")
    rng = np.random.default_rng(seed)
    counts = row_counts(sample)
    estimates = [c.rows for c in counts.regions]
    bad = 0
    example = ""
    decoded: dict[bytes, Any] = {}
    if schema is not None:
        for r in sample.regions:
            for k in r.keys:
                try:
                    decoded[k] = schema.decode(k)
                except KeyshapeError as exc:
                    bad += 1
                    example = example or f"{to_string_binary(k)} ({exc})"
        if bad > MAX_UNDECODABLE * sample.keys:
            raise BadInput(
                f"the schema {schema.source} does not match table {sample.table!r}: {bad} of "
                f"{sample.keys} sampled keys do not decode, e.g. {example}; pass the schema the "
                "table was written with, or none to analyze the raw keys"
            )
    # The keys each region contributes (decodable ones, with a schema), in key order, and their
    # cell timestamps.
    per_region: list[tuple[list[bytes], list[int]]] = []
    for r in sample.regions:
        pairs = sorted((k, t) for k, t in zip(r.keys, r.times or [0] * len(r.keys)) if schema is None or k in decoded)
        per_region.append(([k for k, _ in pairs], [t for _, t in pairs]))
    all_keys = [k for keys, _ in per_region for k in keys]
    all_times = [t for r in sample.regions for t in r.times]
    # The write-order source, most trusted first (module docstring).
    order = None if schema is None else _named_order_field(schema, time_field)
    if order is None and len(all_times) == sample.keys and _informative(all_times, len(all_keys)):
        order = CELL_TIMESTAMPS
    if order is None and schema is not None:
        order = _workload_order_field(schema)
    if order is None:
        when = None
    elif order == CELL_TIMESTAMPS:
        when = _rank([t for _, times in per_region for t in times])
    else:
        when = _rank([decoded[k][order] for k in all_keys])
    # The stream: every region's rows in proportion to its count, each sampled key standing for
    # the rows between it and the next sampled key of its region, written between their times.
    scale = min(1.0, pseudo_rows / max(sum(estimates), 1))
    stream: list[bytes] = []
    stamps: list[float] = []
    at = 0
    for (keys, _), est in zip(per_region, estimates):
        m = len(keys)
        if m:
            n = max(int(round(est * scale)), 1)
            copies = np.full(m, n // m) + (np.arange(m) < n % m)
            if when is not None:
                t = when[at : at + m]
                nxt = np.append(t[1:], t[-1])
                for i in range(m):
                    c = int(copies[i])
                    stamps.extend((t[i] + (nxt[i] - t[i]) * np.arange(c) / max(c, 1)).tolist())
            for k, c in zip(keys, copies.tolist()):
                stream.extend([k] * c)
        at += m
    perm = rng.permutation(len(stream))
    if when is not None:
        perm = perm[np.argsort(np.asarray(stamps)[perm], kind="stable")]
    stream = [stream[i] for i in perm]
    measured = write_order(all_keys, when, rng) if when is not None else WriteOrder()
    seconds = f"{sample.seconds:.1f} s"
    notes = [f"Live keys of {sample.table}: {sample.keys:,} sampled in {len(sample.regions)} region(s) in {seconds}; rows: {counts.method}."]
    if order is None:
        notes.append(
            "No time source (--time-field F, a timestamp field in the schema, or cell "
            "timestamps that tell the rows apart): the write order is not known, so the "
            "verdict rests on how rows spread over regions."
        )
    elif order == CELL_TIMESTAMPS:
        notes.append("Write order from the rows' cell timestamps (the schema names no time field).")
    if sample.timed_out:
        notes.append("The sample hit its time limit: some regions are under-sampled.")
    if bad:
        notes.append(f"{bad} sampled key(s) did not decode with the schema, e.g. {example}.")
    servers = max(len({r.region.server for r in sample.regions}), 1)
    acc = Analyzer(sample.split_keys, servers=servers, windows=windows, total_rows=len(stream))
    acc.update(stream)
    if progress is not None:
        progress(len(stream))
    source = f"live keys of {sample.table}" + (
        f", time from field {order}" if order and order != CELL_TIMESTAMPS else ", time from cell timestamps" if order else ""
    )
    analysis = acc.finish(name=sample.table, hints=schema_hints(schema) if schema else None, source=source, write_order=measured)
    # The analysis counts the stream it was given; the table's rows are the counted ones.
    total = counts.rows
    if analysis.rows:
        factor = total / analysis.rows
        analysis.server_rows = np.asarray(analysis.server_rows, dtype=np.float64) * factor
    analysis.regions = [replace(load, rows=est, share=est / total if total else 0.0) for load, est in zip(analysis.regions, estimates)]
    analysis.rows = total
    analysis.row_count = counts.to_dict()
    analysis.reasons = notes + analysis.reasons
    return LiveKeys(analysis, sample, estimates, counts.method, order, bad, example, notes, counts)


def analyze_table(
    store: Store,
    table: str,
    schema: KeySchema | None = None,
    *,
    per_region: int = 500,
    count_rows: int | None = COUNT_ROWS,
    time_field: str | None = None,
    windows: int = 50,
    seed: int = 0,
) -> LiveKeys:
    """Sample a live table's keys and judge them against its regions: ``keyshape analyze --table``.

    store: the store holding ``table`` (left open: the caller closes it).
    table: the live table, ``NAME`` or ``NAMESPACE:NAME``.
    schema: the table's key schema, to decode the keys (None: judged as raw bytes).
    per_region: keys sampled per region (key-only scans).
    count_rows: rows read to count regions exactly, smallest regions first (the rest estimated
        from their store size); None: every region counted exactly.
    time_field: the key field that orders rows in time (default: the schema's timestamp field,
        else the cells' timestamps).
    windows: time windows the write stream is cut into.
    seed: seed of the weighted sample's expansion.

    The analysis' reasons end with what the schema's kind adds (:mod:`keyshape.ops.live_notes`;
    a salted Phoenix table: its share per salt bucket and the regions holding several buckets).

    Raises BadInput for an empty table or a schema that does not describe its keys.
    """
    sample = sample_table(store, table, per_region, count_rows=count_rows)
    live = analyze_live(sample, schema, time_field=time_field, windows=windows, seed=seed)
    live.analysis.reasons.extend(live_notes(schema, live))
    return live
