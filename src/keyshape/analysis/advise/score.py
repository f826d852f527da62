"""Scoring one design on the sample with keyshape's own engines.

- Write concentration: the sample's second half, in event-time order, is replayed through the
  analyzer (:class:`keyshape.analysis.analyze.Analyzer`) against the design's pre-split regions
  (split points chosen from the first half), with the auto-split simulation scaled so the half
  stands for the table at the horizon (a region splits when it would hold ``region_size`` at full
  scale). The number kept is the busiest region server's share of each window's writes, averaged
  over the windows (``Analysis.hot_window_server_share``): 1/servers is perfect, 1.0 is one server
  taking everything.
- Per-pattern cost (:mod:`keyshape.analysis.advise.costs`), weighted by each pattern's rate.
- Writes: every put costs ``write_row_us`` times the write amplification (index rows; an update
  or delete also removes the old index row) times how far the busiest server is above its fair
  share (it sets the cluster's write throughput).
- Storage at the horizon: the key is repeated in every cell (``cells`` per row), plus the value
  bytes; an index row holds its key and one small cell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.analysis.advise.candidates import Design
from keyshape.analysis.advise.costs import CostModel, KeyIndex, PatternCost, pattern_cost, query_rows
from keyshape.analysis.advise.sample import Sample
from keyshape.analysis.advise.spec import AdviseError, AdviseSpec, Pattern
from keyshape.analysis.advise.timebucket import OFFSET_BYTES
from keyshape.analysis.analyze import Analysis
from keyshape.analysis.designs import finish_schema, schema_analyzer
from keyshape.core.keyarray import KeyArray
from keyshape.schema.keyschema import KeySchema

__all__ = ["Score", "Scorer", "QUERIES_PER_PATTERN"]

QUERIES_PER_PATTERN = 48  # query values drawn per pattern (records of the sample, seeded)
MIN_SPLIT_ROWS = 64  # the scaled auto-split threshold never goes below this many sample rows
# ... nor below the replayed rows / (this x servers): past ~8 regions a server, more splits do not
# change which server the writes pile on, and each costs the simulation a pass over its block.
MAX_REGIONS_PER_SERVER = 8


@dataclass
class Score:
    """A design's numbers: the three objectives and what makes them up."""

    design: Design
    concentration: float  # busiest server's mean share of a window's writes
    region_concentration: float  # busiest region's
    weighted_cost: float  # ms of work per second: sum of rate x cost, plus the writes
    storage_bytes: float
    write_cost: float
    write_amp: float
    patterns: list[PatternCost]
    analysis: Analysis
    key_bytes: float
    rank: int = 0
    front: int = 0
    decided: str = ""
    reason: str = ""
    rates: dict[str, float] = field(default_factory=dict)  # pattern -> requests per second

    def weighted(self, pattern: str) -> float:
        """ms of work per second the pattern costs on this design (rate x cost)."""
        return self.rates.get(pattern, 1.0) * self.pattern(pattern).cost_ms

    @property
    def objectives(self) -> tuple[float, float, float]:
        return (self.concentration, self.weighted_cost, self.storage_bytes)

    def pattern(self, name: str) -> PatternCost:
        return next(c for c in self.patterns if c.pattern == name)


class Scorer:
    """Scores designs for one spec and sample; the query values and scales are fixed once."""

    def __init__(self, spec: AdviseSpec, sample: Sample, model: CostModel | None = None, windows: int = 40, seed: int = 0) -> None:
        self.spec, self.sample, self.model, self.windows = spec, sample, model or CostModel(), windows
        rng = np.random.default_rng(seed)
        n = sample.rows
        self.half = max(1, n // 2)
        self.full_scale = spec.horizon_rows / n
        rate = n / sample.span_seconds if sample.span_seconds > 0 else 0.0
        self.rate_scale = spec.rows_per_second / rate if rate > 0 else self.full_scale
        horizon_s = spec.horizon_days * 86400
        # A cut sample holds 1/thinning of each entity's rows: the whole data's pace is thinning x that.
        self.entity_scale = horizon_s / sample.span_seconds * sample.thinning if sample.span_seconds > 0 else self.full_scale
        t = spec.time_field
        self.now_ms = int(sample.columns[t][-1]) if t else 0
        self.value_bytes = spec.value_bytes if spec.value_bytes is not None else sample.value_bytes
        self.queries: dict[str, list[dict[str, Any]]] = {}
        for p in spec.patterns:
            # Queries follow the write mix (a popular entity is read as often as it writes), from
            # the newest tenth for reads by time: a window or latest read asks about live entities.
            lo = int(n * 0.9) if p.kind in ("window", "latest") else 0
            picks = rng.integers(lo, n, size=min(QUERIES_PER_PATTERN, n - lo))
            self.queries[p.name] = [{f: _value(sample.columns[f], int(i)) for f in p.fields} for i in picks]

    def _columns(self, schema: KeySchema, where: str) -> dict[str, Any]:
        missing = [f for f in schema.field_names if f not in self.sample.columns]
        if missing:
            raise AdviseError(
                f"{where}: key field {missing[0]!r} is not a field of the sample or the workload file; name it in a pattern or [entity]"
            )
        return {f: self.sample.columns[f] for f in schema.field_names}

    def _keys(self, schema: KeySchema, where: str) -> KeyArray:
        try:
            return schema.encode_many(self._columns(schema, where), as_array=True)
        except (ValueError, TypeError) as exc:
            raise AdviseError(f"{where}: the sample's values do not fit the key ({exc})") from None

    def score(self, design: Design) -> Score:
        spec, model, sample = self.spec, self.model, self.sample
        keys = self._keys(design.schema, design.name)
        main = KeyIndex(keys.tolist())
        row_bytes = main.mean_key * sample.cells + self.value_bytes
        horizon_bytes = spec.horizon_rows * row_bytes
        regions_h = max(float(len(design.split_keys) + 1), horizon_bytes / spec.region_size)
        # Auto-split threshold in sample rows: the second half stands for the horizon's rows.
        floor = max(MIN_SPLIT_ROWS, (len(keys) - self.half) // (MAX_REGIONS_PER_SERVER * spec.servers))
        split_rows = max(floor, int(spec.region_size / row_bytes * (len(keys) - self.half) / spec.horizon_rows))
        acc = schema_analyzer(
            design.schema,
            len(keys) - self.half,
            split_keys=design.split_keys,
            servers=spec.servers,
            windows=self.windows,
            auto_split_rows=split_rows if split_rows < len(keys) - self.half else None,
            value_bytes=int(self.value_bytes),
            cells_per_row=sample.cells,
        )
        acc.update(keys[self.half :])
        analysis = finish_schema(acc, design.schema, source=sample.source, name=design.name, real_keys=True, lint=[])
        indexes = {p.name: (s, KeyIndex(self._keys(s, f"{design.name} index").tolist())) for p, s, _ in design.indexes}
        n_idx = len(design.index_tables)  # each table written once, whatever patterns it serves
        hot = max(1.0, analysis.hot_window_server_share * spec.servers)
        if design.shape.bucket_ms:  # time bucketing prices its packed rows and their compaction (timebucket.py)
            bucketed = score_bucketed(self, design, main.keys, regions_h)
            costs, write_amp, storage = bucketed.patterns, bucketed.write_amp, bucketed.storage_bytes
            write_cost = spec.rows_per_second * (write_amp * model.write_row_us + bucketed.compaction_reads * model.row_us) / 1000 * hot
        else:
            costs = [self._pattern(p, design.schema, main, row_bytes, regions_h, indexes.get(p.name)) for p in spec.patterns]
            write_amp = 1.0 + n_idx * (1.0 + spec.updates + spec.deletes)
            write_cost = spec.rows_per_second * write_amp * model.write_row_us / 1000 * hot
            tables = {id(s): ix for s, ix in indexes.values()}  # a shared index table stored once
            storage = horizon_bytes + sum(spec.horizon_rows * (ix.mean_key + 1) for ix in tables.values())
        weighted = sum(p.rate * c.cost_ms for p, c in zip(spec.patterns, costs)) + write_cost
        return Score(
            design=design,
            concentration=float(analysis.hot_window_server_share),
            region_concentration=float(analysis.hot_window_share),
            weighted_cost=float(weighted),
            storage_bytes=float(storage),
            write_cost=float(write_cost),
            write_amp=write_amp,
            patterns=costs,
            analysis=analysis,
            key_bytes=main.mean_key,
            rates={p.name: p.rate for p in spec.patterns},
        )

    def _pattern(
        self, p: Pattern, schema: KeySchema, main: KeyIndex, row_bytes: float, regions: float, index: tuple[KeySchema, KeyIndex] | None
    ) -> PatternCost:
        """The cheaper of reading ``p`` from the main table and (when the design has one for it)
        from its index table."""
        best = self._on(p, schema, main, row_bytes, regions)
        if index is not None:
            via = self._on(p, index[0], index[1], index[1].mean_key + 1, regions, follow_bytes=row_bytes)
            if via.cost_ms < best.cost_ms:
                best = via
        return best

    def _on(self, p: Pattern, table: KeySchema, keys: KeyIndex, row_bytes: float, regions: float, follow_bytes: float = 0.0) -> PatternCost:
        """``p`` read from ``table``: a get when every key field is given, a range over the longest
        run of given leading fields (the rest filtered), the event time's range or the newest first
        when the time follows them, or a full scan when no given field leads. ``follow_bytes``: the
        table is an index, and each row found is then fetched from the main table."""
        spec, model = self.spec, self.model
        names = table.field_names
        given = set(p.fields)
        lead = 0
        while lead < len(names) and names[lead] in given:
            lead += 1
        index = follow_bytes > 0

        def cost(route: str, ranges: float, rows: float, reverse: bool = False, follow_gets: float = 0.0) -> PatternCost:
            return pattern_cost(
                model, p, route=route, ranges=ranges, rows=rows, row_bytes=row_bytes, regions=regions, servers=spec.servers,
                reverse=reverse, follow_gets=follow_gets, follow_bytes=follow_bytes,
            )  # fmt: skip

        if p.kind == "scan" or (lead == 0 and not (p.kind in ("window", "latest") and names[0] == spec.time_field and not given)):
            if index:
                return cost("full scan", 1.0, float("inf"))  # an index no given field leads: never chosen
            # One scan over the table: a scanner per region, not per bucket (pattern_cost counts them).
            return cost("full scan", 1.0, spec.horizon_rows * (p.share if p.kind == "scan" else 1.0))
        if lead == len(names) and p.kind in ("get", "prefix", "lookup"):
            return cost("index" if index else "get", 1.0, 1.0, follow_gets=1.0 if index else 0.0)
        eq = names[:lead]
        whole = lead == len(given)
        t = spec.time_field
        time_next = whole and t is not None and len(names) > lead and names[lead] == t
        window = p.kind == "window" and time_next
        matched, ranges = query_rows(table, keys, eq, self.queries[p.name], t if window else None, p.window_s, self.now_ms)
        # An entity's rows grow with time at the sample's per-entity pace (a cut sample holds
        # 1/thinning of them); the whole table's (reads that give no field) grow to the horizon's rows.
        if window:
            rows = matched * (self.sample.thinning if given else self.rate_scale)
        else:
            rows = matched * (self.entity_scale if given else self.full_scale)
        reverse = False
        found = rows
        if p.kind == "latest" and time_next:
            rows = min(float(p.limit) * ranges, rows)
            found = min(float(p.limit), rows)
            reverse = not table.field(t).descending  # type: ignore[arg-type]
        elif p.kind == "latest":
            found = min(float(p.limit), rows)
        elif p.kind == "get":
            found = min(1.0, rows)
        route = "index" if index else ("range" if ranges <= 1 else "fan-out")
        return cost(route, ranges, rows, reverse=reverse, follow_gets=found if index else 0.0)


def _value(col: Any, i: int) -> Any:
    v = col[i]
    return v.item() if isinstance(v, np.generic) else v


@dataclass
class BucketScore:
    """What the scorer takes from a bucketed design instead of its per-event numbers."""

    patterns: list[PatternCost]
    storage_bytes: float
    write_amp: float
    compaction_reads: float  # rows read per event written (the compaction reads each cell once)
    events_per_row: float


def score_bucketed(scorer: Scorer, design: Design, keys: list[bytes], regions: float) -> BucketScore:
    """Per-pattern costs, storage and write amplification of a time-bucketed ``design`` whose
    sample keys (one per event, repeated within a bucket) are ``keys``."""
    spec, sample, model = scorer.spec, scorer.sample, scorer.model
    schema = design.schema
    events = KeyIndex(keys)
    rows = KeyIndex(list(set(keys)))
    key = rows.mean_key
    per_row = max(1.0, len(keys) / max(1, len(rows)) * sample.thinning)  # events in a closed row
    cell = OFFSET_BYTES + scorer.value_bytes
    packed = key + per_row * cell  # a closed, compacted bucket row
    loose = (key + OFFSET_BYTES) * sample.cells + scorer.value_bytes  # one event of the open bucket
    entity = design.shape.order[:-1]
    bf = design.shape.order[-1]
    b_s = design.shape.bucket_ms / 1000
    open_events = per_row / 2  # the open bucket is half full on average

    def read(p: Pattern, ranges: float, closed: float, open_: float) -> PatternCost:
        n = closed + open_
        nbytes = closed * packed + open_ * loose
        return pattern_cost(
            model, p, route="range" if ranges <= 1 else "fan-out", ranges=ranges, rows=n, row_bytes=nbytes / n if n else packed,
            regions=regions, servers=spec.servers, reverse=False,
        )  # fmt: skip

    costs: list[PatternCost] = []
    for p in spec.patterns:
        given = set(p.fields)
        if p.kind in ("window", "latest") and given == set(entity):
            if p.kind == "window":
                # Every bucket the window touches is read whole: back to the start of the edge bucket.
                lo = int(scorer.now_ms - p.window_s * 1000)
                reach = (scorer.now_ms - (lo - lo % design.shape.bucket_ms)) / 1000
                matched, ranges = query_rows(schema, events, entity, scorer.queries[p.name], bf, reach, scorer.now_ms)
                found = matched * sample.thinning
                buckets = math.ceil(reach / b_s)
                open_ = min(found, open_events)
                closed = min(max(0.0, buckets - 1.0), max(0.0, (found - open_) / per_row) if per_row else 0.0)
                closed = max(closed, 0.0)
            else:
                _, ranges = query_rows(schema, rows, entity, scorer.queries[p.name], None, 0.0, scorer.now_ms)
                open_ = open_events
                closed = math.ceil(max(0.0, p.limit - open_) / per_row)
            costs.append(read(p, ranges, closed, open_))
            continue
        if p.kind == "get" and set(entity) <= given and (spec.time_field in given or not spec.time_field):
            costs.append(pattern_cost(model, p, route="get", ranges=1.0, rows=1.0, row_bytes=packed, regions=regions, servers=spec.servers))
            continue
        if p.kind != "scan" and set(entity) <= given:
            # The entity's rows, all of them (the rest of the given fields are in the qualifier: filtered).
            matched, ranges = query_rows(schema, events, entity, scorer.queries[p.name], None, 0.0, scorer.now_ms)
            found = matched * scorer.entity_scale
            costs.append(read(p, ranges, found / per_row, 0.0))
            continue
        # Anything else reads the table: every packed row (a scanner per region).
        whole = spec.horizon_rows * (p.share if p.kind == "scan" else 1.0)
        costs.append(
            pattern_cost(model, p, route="full scan", ranges=1.0, rows=whole / per_row, row_bytes=packed, regions=regions, servers=spec.servers)
        )
    storage = spec.horizon_rows / per_row * key + spec.horizon_rows * cell
    return BucketScore(costs, storage, 2.0 + 1.0 / per_row, 1.0, per_row)
