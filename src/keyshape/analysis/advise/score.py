"""Scoring one design on the sample with keyshape's own engines.

- Write concentration: every table the design writes (the main table and each index table) has
  the sample's second half, in event-time order, replayed onto its own pre-split regions (split
  points chosen from the first half). A daughter region stays on its parent's server and the
  balancer evens region counts, not load, so a server's puts are those of the pre-split regions it
  holds (:func:`placement`: the mean over seeded round-robin deals of the regions). The number kept
  is the busiest server's share of ALL the design's puts (main rows and index rows, an index row
  weighted ``1 + updates + deletes``): 1/servers is perfect, 1.0 is one server taking everything.
  It is a deterministic share of the whole replay, not a mean over windows whose size follows the
  sample (those add sampling noise that a real hash shows and a cycle does not); its own
  sampling noise is estimated as a binomial standard error over the replayed rows
  (``Score.concentration_se``), and :mod:`.ranking` calls designs within it equal. Each table
  still goes through the analyzer (:class:`keyshape.analysis.analyze.Analyzer`, with the
  auto-split simulation scaled so the half stands for the table at the horizon) for its
  predicted heat map.
- Per-pattern cost (:mod:`keyshape.analysis.advise.costs`), weighted by each pattern's rate. The
  rows a read touches come from the workload, not from the sample's pace: an entity's rows at the
  horizon are its share of the writes times ``horizon_rows``, a window's rows its share times the
  write rate at the horizon times the window; the share is estimated leave-one-out (the queried
  record's entity's other records over the sample's other records), which is unbiased for the
  write-weighted mix whether the sample is contiguous, evenly thinned or larger.
- Writes: every put costs ``write_row_us`` times the write amplification (index rows; an update
  or delete also removes the old index row) times how far the busiest server is above its fair
  share (it sets the cluster's write throughput).
- Storage at the horizon: the key is repeated in every cell (``cells`` per row), plus the value
  bytes; an index row holds its key and one small cell.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.analysis.advise.candidates import Design
from keyshape.analysis.advise.costs import CostModel, KeyIndex, PatternCost, entity_counts, pattern_cost, query_rows
from keyshape.analysis.advise.sample import Sample
from keyshape.analysis.advise.spec import AdviseError, AdviseSpec, Pattern
from keyshape.analysis.advise.timebucket import OFFSET_BYTES, repeat_share
from keyshape.analysis.analyze import Analysis
from keyshape.analysis.designs import finish_schema, schema_analyzer
from keyshape.core.keyarray import KeyArray
from keyshape.core.regions import RegionMap
from keyshape.schema.keyschema import KeySchema

__all__ = ["Score", "Scorer", "QUERIES_PER_PATTERN", "Placement", "placement"]

QUERIES_PER_PATTERN = 48  # query values drawn per pattern (records of the sample, seeded)
MIN_SPLIT_ROWS = 64  # the scaled auto-split threshold never goes below this many sample rows
# ... nor below the replayed rows / (this x servers): past ~8 regions a server, more splits do not
# change which server the writes pile on, and each costs the simulation a pass over its block.
MAX_REGIONS_PER_SERVER = 8
PLACEMENTS = 256  # seeded placements a design's regions are dealt in (the same for every design: paired)
MOVING_WINDOWS = 16  # windows of the replay in which a hot spot that moves with time is looked for


@dataclass(frozen=True)
class Placement:
    """Where a design's puts land over the whole replay: the busiest server's and the busiest
    region's share of all of them, and the sampling noise of the server share."""

    server_share: float
    region_share: float
    server_se: float
    table_server_shares: tuple[float, ...]  # per table: its busiest server's share of its own puts


def _deals(regions: int, servers: int, seed: int) -> np.ndarray:
    """``PLACEMENTS`` x ``regions``: the server of each region when the regions are dealt
    round-robin in a random order (seeded by the table's position and its region count, so two
    designs with the same layout are dealt alike)."""
    rng = np.random.default_rng([seed, regions, servers])
    order = np.argsort(rng.random((PLACEMENTS, regions)), axis=1)
    out = np.empty((PLACEMENTS, regions), dtype=np.int64)
    out[np.arange(PLACEMENTS)[:, None], order] = np.arange(regions) % servers
    return out


def placement(tables: Sequence[tuple[Sequence[bytes] | KeyArray, Sequence[bytes], float]], servers: int) -> Placement:
    """The busiest server's share of all puts of ``tables`` (each: its replayed keys, its
    pre-split points, the puts each key stands for).

    HBase deals a new pre-split table's regions round-robin from a random server
    (``roundRobinAssignment``), a daughter stays on its parent's server, and the balancer later
    moves regions to even their counts, not their load: so a server carries whole pre-split
    regions, as many as the others, which ones is chance. The share is the mean over
    :data:`PLACEMENTS` seeded such deals (each table dealt on its own) of the busiest server's share
    of all puts: a hot region (a skewed hash bucket, a sequential key's newest region, an index
    table's) raises it whoever hosts it, while the region count alone is the same for every design."""
    regions: list[tuple[np.ndarray, int, float]] = []
    rows = 0
    for keys, splits, weight in tables:
        regions.append((RegionMap(list(splits)).assign(keys), len(splits) + 1, weight))
        rows = max(rows, len(regions[-1][0]))
    loads = [np.bincount(idx, minlength=n).astype(np.float64) * w for idx, n, w in regions]
    total = float(sum(r.sum() for r in loads)) or 1.0
    deals = [_deals(len(r), servers, i) for i, r in enumerate(loads)]
    server_load = np.zeros((PLACEMENTS, servers))
    own: list[float] = []
    for r, deal in zip(loads, deals):
        per = _by_server(r[None, :], deal, servers)[:, 0, :]
        server_load += per
        own.append(float(per.max(axis=1).mean() / (r.sum() or 1.0)))
    share = float((server_load.max(axis=1) / total).mean())
    region = max(float(r.max()) for r in loads) / total
    se = math.sqrt(max(share * (1 - share), 0.0) / max(rows, 1))  # the replayed rows are the draws
    share = min(1.0, share + _moving(regions, deals, servers, rows))
    return Placement(share, region, se, tuple(own))


def _by_server(counts: np.ndarray, deal: np.ndarray, servers: int) -> np.ndarray:
    """``counts`` (windows x regions) per server under each deal: placements x windows x servers."""
    out = np.zeros((deal.shape[0], counts.shape[0], servers))
    for srv in range(servers):
        out[:, :, srv] = (deal == srv).astype(np.float64) @ counts.T
    return out


def _moving(regions: list[tuple[np.ndarray, int, float]], deals: list[np.ndarray], servers: int, rows: int) -> float:
    """What a hot spot that moves with time adds to the whole replay's busiest share: a key led by
    the time on a table pre-split over the replayed range spreads its writes over the whole replay
    but writes each moment to one region. The replay is cut into :data:`MOVING_WINDOWS` windows of
    equal rows; the busiest server's share per window is compared with the same on the replay
    shuffled (seeded: the same rows, no order, so the same skew and the same window noise). The
    excess counts when it is above three of its standard errors over the windows (otherwise it
    is noise, and the whole replay's share stands)."""
    w = min(MOVING_WINDOWS, rows // 50)
    if w < 4:
        return 0.0
    order = np.random.default_rng(rows).permutation(rows)
    window = np.minimum(np.arange(rows) * w // rows, w - 1)

    def per_window(shuffle: bool) -> np.ndarray:
        load = np.zeros((PLACEMENTS, w, servers))
        for (idx, n, weight), deal in zip(regions, deals):
            at = idx[order] if shuffle else idx
            counts = np.bincount(window[: len(at)] * n + at, minlength=w * n).reshape(w, n) * weight
            load += _by_server(counts, deal, servers)
        totals = load.sum(axis=2)
        return (load.max(axis=2) / np.maximum(totals, 1e-12)).mean(axis=0)

    d = per_window(False) - per_window(True)
    excess = float(d.mean())
    noise = float(d.std(ddof=1) / math.sqrt(w))
    return excess if excess > 3 * noise else 0.0


@dataclass
class Score:
    """A design's numbers: the three objectives and what makes them up."""

    design: Design
    concentration: float  # busiest server's share of all the design's puts over the replay
    region_concentration: float  # busiest region's (of any of its tables)
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
    concentration_se: float = 0.0  # the sampling noise of ``concentration`` (a standard error)
    write_cost_se: float = 0.0  # the write cost's noise that ``concentration_se`` carries
    tables: list[tuple[str, Analysis]] = field(default_factory=list)  # every table written: (name, its analysis), main first
    table_shares: tuple[float, ...] = ()  # per table: its busiest server's share of its own puts
    tie: int = 0  # the rank of the design this one is equal to within the model's precision (0: none)

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
        # The sample's own pace scaled (kept for prove's history copies); reads are priced from the
        # workload's rates and the sample's shares instead (rows_at_horizon).
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

    @property
    def rate_at_horizon(self) -> float:
        """Rows written per second at the end of the horizon (the declared rate grown linearly)."""
        return self.spec.rate_at_horizon

    def shares(self, table: KeySchema, keys: KeyIndex, eq: Sequence[str], pattern: str) -> tuple[float, float]:
        """The mean share of the writes held by the entity each query of ``pattern`` names with the
        leading fields ``eq`` of ``table``, and its standard error. Leave-one-out: the queried
        record's own row is not counted (its values were drawn from it), so a value seen once
        estimates 0 and the mean is unbiased for the write-weighted mix, whatever the sample's
        size or pace."""
        counts = entity_counts(table, keys, eq, self.queries[pattern])
        n = max(1, len(keys) - 1)
        loo = np.maximum(counts - 1, 0) / n
        mean = float(loo.mean()) if loo.size else 0.0
        se = float(loo.std(ddof=1) / math.sqrt(loo.size)) if loo.size > 1 else 0.0
        return mean, se

    def _analysis(self, schema: KeySchema, keys: KeyArray, split_keys: Sequence[bytes], row_bytes: float, name: str) -> Analysis:
        """One table's replay through the analyzer: the second half on its pre-split regions, the
        auto-split simulation scaled so the half stands for the table at the horizon."""
        spec, sample = self.spec, self.sample
        replayed = len(keys) - self.half
        floor = max(MIN_SPLIT_ROWS, replayed // (MAX_REGIONS_PER_SERVER * spec.servers))
        split_rows = max(floor, int(spec.region_size / row_bytes * replayed / spec.horizon_rows))
        acc = schema_analyzer(
            schema,
            replayed,
            split_keys=split_keys,
            servers=spec.servers,
            windows=self.windows,
            auto_split_rows=split_rows if split_rows < replayed else None,
            value_bytes=int(self.value_bytes),
            cells_per_row=sample.cells,
        )
        acc.update(keys[self.half :])
        return finish_schema(acc, schema, source=sample.source, name=name, real_keys=True, lint=[])

    def score(self, design: Design) -> Score:
        spec, model, sample = self.spec, self.model, self.sample
        keys = self._keys(design.schema, design.name)
        main = KeyIndex(keys.tolist())
        row_bytes = main.mean_key * sample.cells + self.value_bytes
        horizon_bytes = spec.horizon_rows * row_bytes
        regions_h = max(float(len(design.split_keys) + 1), horizon_bytes / spec.region_size)
        analysis = self._analysis(design.schema, keys, design.split_keys, row_bytes, design.name)
        # Every index table is written once per record, whatever patterns it serves: its keys, its
        # own pre-splits, its own replay; an update or a delete also removes the old index row.
        index_keys = [(s, self._keys(s, f"{design.name} index")) for s in design.index_tables]
        index_weight = 1.0 + spec.updates + spec.deletes
        analysed = [(design.name, analysis)]
        written: list[tuple[KeyArray, Sequence[bytes], float]] = [(keys[self.half :], design.split_keys, 1.0)]
        indexes_by_table: list[KeyIndex] = []
        for i, (s, ikeys) in enumerate(index_keys):
            ix = KeyIndex(ikeys.tolist())
            indexes_by_table.append(ix)
            isplits = s.split_keys()
            analysed.append((s.table.full_name, self._analysis(s, ikeys, isplits, ix.mean_key + 1, f"{design.name} index {i + 1}")))
            written.append((ikeys[self.half :], isplits, index_weight))
        placed = placement(written, spec.servers)
        indexes = {p.name: (s, indexes_by_table[design.index_table(p.name)]) for p, s, _ in design.indexes}
        n_idx = len(design.index_tables)  # each table written once, whatever patterns it serves
        hot = max(1.0, placed.server_share * spec.servers)
        if design.shape.bucket_ms:  # time bucketing prices its packed rows and their compaction (timebucket.py)
            bucketed = score_bucketed(self, design, main.keys, regions_h)
            costs, write_amp, storage = bucketed.patterns, bucketed.write_amp, bucketed.storage_bytes
            write_cost = spec.rows_per_second * (write_amp * model.write_row_us + bucketed.compaction_reads * model.row_us) / 1000 * hot
        else:
            costs = [self._pattern(p, design.schema, main, row_bytes, regions_h, indexes.get(p.name)) for p in spec.patterns]
            write_amp = 1.0 + n_idx * (1.0 + spec.updates + spec.deletes)
            write_cost = spec.rows_per_second * write_amp * model.write_row_us / 1000 * hot
            stored = {id(s): ix for s, ix in indexes.values()}  # a shared index table stored once
            storage = horizon_bytes + sum(spec.horizon_rows * (ix.mean_key + 1) for ix in stored.values())
        weighted = sum(p.rate * c.cost_ms for p, c in zip(spec.patterns, costs)) + write_cost
        # The write cost moves with the busiest share only above the fair share (hot > 1).
        write_se = write_cost / hot * spec.servers * placed.server_se if placed.server_share * spec.servers > 1 else 0.0
        return Score(
            design=design,
            concentration=placed.server_share,
            region_concentration=placed.region_share,
            weighted_cost=float(weighted),
            storage_bytes=float(storage),
            write_cost=float(write_cost),
            write_amp=write_amp,
            patterns=costs,
            analysis=analysis,
            key_bytes=main.mean_key,
            rates={p.name: p.rate for p in spec.patterns},
            concentration_se=placed.server_se,
            write_cost_se=float(write_se),
            tables=analysed,
            table_shares=placed.table_server_shares,
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
        _, ranges = query_rows(table, keys, eq, self.queries[p.name], t if window else None, p.window_s, self.now_ms)
        # From the workload's rates, not the sample's pace: the entity's share of the writes (the
        # whole table when no field is given) times the rows at the horizon, or, for a window on
        # the time next in the key, times the rows the horizon's write rate puts in the window.
        share, share_se = self.shares(table, keys, eq, p.name) if eq else (1.0, 0.0)
        rel_se = share_se / share if share > 0 else 0.0
        if window:
            rows = share * min(float(spec.horizon_rows), self.rate_at_horizon * p.window_s)
        else:
            rows = share * spec.horizon_rows
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
        out = cost(route, ranges, rows, reverse=reverse, follow_gets=found if index else 0.0)
        return dataclasses.replace(out, rows_rel_se=rel_se) if rel_se else out


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
    # Events in a closed row, as one event's row holds them: itself and its entity's other events
    # of the bucket at the horizon's rate (the entity's share estimated leave-one-out).
    entity = design.shape.order[:-1]
    per_row = 1.0 + repeat_share(sample, entity) * scorer.rate_at_horizon * design.shape.bucket_ms / 1000
    cell = OFFSET_BYTES + scorer.value_bytes
    packed = key + per_row * cell  # a closed, compacted bucket row
    loose = (key + OFFSET_BYTES) * sample.cells + scorer.value_bytes  # one event of the open bucket
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
                _, ranges = query_rows(schema, events, entity, scorer.queries[p.name], bf, reach, scorer.now_ms)
                found = scorer.shares(schema, events, entity, p.name)[0] * scorer.rate_at_horizon * reach
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
            _, ranges = query_rows(schema, events, entity, scorer.queries[p.name], None, 0.0, scorer.now_ms)
            found = scorer.shares(schema, events, entity, p.name)[0] * spec.horizon_rows
            costs.append(read(p, ranges, found / per_row, 0.0))
            continue
        # Anything else reads the table: every packed row (a scanner per region).
        whole = spec.horizon_rows * (p.share if p.kind == "scan" else 1.0)
        costs.append(
            pattern_cost(model, p, route="full scan", ranges=1.0, rows=whole / per_row, row_bytes=packed, regions=regions, servers=spec.servers)
        )
    storage = spec.horizon_rows / per_row * key + spec.horizon_rows * cell
    return BucketScore(costs, storage, 2.0 + 1.0 / per_row, 1.0, per_row)
