"""``advise --prove``: load the top designs and the hand designs into a real HBase, replay the
sample's writes and the access patterns, and compare measured with predicted *at the horizon*, the
scale the advisor ranked the designs at.

Each design's tables (the main table pre-split at its split points, and its index tables) are
created under ``<prefix>_<design>`` and written in two steps:

1. the sample's records in event-time order (one cell of the sample's value size per row; an
   index row holds the main key), timed in chunks: the put time per row, and the busiest
   server's share of all the design's puts (main and index rows of the sample's second half, the
   regions as the cluster placed them: the scorer's number on the cluster's placement);
2. the entities' history up to the horizon: ``copies - 1`` more copies of the sample, each one
   sample span further back in time (the scorer's own assumption: an entity keeps writing at the
   sample's pace, so at the horizon it holds ``horizon / span`` times its sampled rows); a copy
   gives the identifying fields no read names but a get new values (a new order id, a new event id,
   a new document), so the rows add up instead of overwriting. ``copies`` is the scorer's
   ``entity_scale``, at most :data:`MAX_COPIES` (a bound on the load's time).

Before step 2 and after it, every table is scanned whole (round-robin, a lower quartile each): the
difference is the time of the rows step 2 added, the table's measured time per row (no scanner
open or region crossing in it). Every read is the measured time of the query on the loaded table
plus the rows the horizon adds beyond those it read, at that measured time per row: the scorer
prices reads from the workload's rates (an entity's share of the rows at the horizon, a window at
the horizon's write rate, the whole table: 10^3-10^11 rows), which the history copies, at the
sample's pace and at most :data:`MAX_COPIES`, need not reach; a read the loaded table answers in
full (a get, the newest ``limit`` rows) has nothing added.

Then each pattern's queries (the scorer's own query values) run by the route the scorer chose for
the design at the horizon (a get, the key's scan ranges one after another, the index then a
multi-get, or a full scan; the newest ``limit`` rows by a reversed scan when the time ascends),
query by query over every design in an order rotated each round (a neighbour's burst slows the
same query of every design alike), one unmeasured round first, and each query keeps the lower
quartile of its rounds: the statistic the cost constants are fitted with
(:mod:`.calibrate`), since the neighbours' load only ever slows a run. The tables are dropped after.

Measured against predicted, per design, the *weighted cost* (ms of work per second):

- reads: each pattern's rate x the mean of its queries' times; predicted: the advisor's score of
  the design over exactly the queries run (``cost_ms``: every scanner's work summed, as the client
  runs the ranges one after another);
- writes: the workload's rows per second x the write amplification x the time of one put
  (predicted: ``write_row_us``; measured: step 1's time per row) x how far the busiest server is
  above its fair share (predicted: the scorer's replay; measured: the cluster's placement).

:attr:`Measured.extrapolated_read_cost` says how much of the measured reads is rows the loaded
table could not hold. On a standalone HBase one server holds every region (share 1.0 for every design); on
the 3-server cluster the share tells designs apart.
"""

from __future__ import annotations

import bisect
import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from keyshape.analysis.advise.advise import Advice
from keyshape.analysis.advise.score import QUERIES_PER_PATTERN, Score, Scorer
from keyshape.schema.keyschema import KeySchema
from keyshape.store.base import Store

__all__ = ["Proof", "Measured", "pick", "prove", "spearman", "spread", "MAX_COPIES"]

PUT_CHUNK = 250  # rows per timed write chunk
VALUE_QUALIFIER = b"v"
INDEX_QUALIFIER = b"k"
MAX_COPIES = 16  # the sample written at most this many times (the history up to the horizon)
QUANTILE = 25  # of each query's rounds, as calibrate keeps of its runs
MAX_RANGES = 64  # ranges of one request run at most (the rest counted at their measured time)


def _cell(schema: KeySchema, qualifier: bytes) -> bytes:
    """``family:qualifier`` in the schema's first family (a hand design names its own)."""
    return schema.table.families[0].name.encode() + b":" + qualifier


@dataclass
class Measured:
    """One design on the real HBase: writes, per-pattern latency, and the weighted costs compared."""

    name: str
    label: str
    write_rows_per_s: float
    latency_ms: dict[str, tuple[float, float]]  # pattern -> (p50, p99) over the queries' times, at the horizon
    predicted_read_cost: float  # sum of rate x predicted cost_ms, at the horizon
    measured_read_cost: float  # sum of rate x measured mean time, at the horizon
    predicted_cost: float = 0.0  # the weighted cost: reads + writes
    measured_cost: float = 0.0
    predicted_share: float = 0.0  # busiest server's share of all the design's puts (main and index tables)
    measured_share: float = 0.0
    hand: bool = False
    extrapolated_read_cost: float = 0.0  # the part of measured_read_cost that is rows the table could not hold
    copies: int = 1

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class Proof:
    designs: list[Measured]
    spearman: float  # predicted vs measured weighted cost
    read_spearman: float = 0.0  # the reads alone
    skipped: list[str] = dataclasses.field(default_factory=list)  # designs not measured, each with why

    def to_dict(self) -> dict[str, Any]:
        return {
            "designs": [d.to_dict() for d in self.designs],
            "spearman": self.spearman,
            "read_spearman": self.read_spearman,
            "skipped": list(self.skipped),
        }


def _ranks(x: list[float]) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    order = a.argsort(kind="stable")
    ranks = np.empty(len(a))
    ranks[order] = np.arange(len(a), dtype=float)
    for v in np.unique(a):  # ties share their mean rank
        same = a == v
        ranks[same] = ranks[same].mean()
    return ranks


def spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rank correlation (ties by mean rank); 0.0 when either side is constant."""
    rx, ry = _ranks(x), _ranks(y)
    if len(x) < 2 or rx.std() == 0 or ry.std() == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def _table(schema: KeySchema, name: str) -> Any:
    return dataclasses.replace(schema.table, name=name, namespace="default")


def _scorer(advice: Advice, requests: int | None = None) -> Scorer:
    """The advisor's own scorer (the workload's horizon), its queries cut to the ``requests`` run."""
    scorer = Scorer(advice.spec, advice.sample, advice.model)
    if requests is not None:  # predicted over exactly the queries that are run
        scorer.queries = {name: qs[:requests] for name, qs in scorer.queries.items()}
    return scorer


def _rescore(scorer: Scorer, s: Score, requests: int | None) -> Score:
    """``s`` over the queries ``scorer`` runs: the advisor's own score when those are all of its
    queries (the same seeded draw, so the same numbers), else the design scored again."""
    if requests is None or requests >= QUERIES_PER_PATTERN:
        return s
    return scorer.score(s.design)


def _sample_scale(advice: Advice, requests: int | None = None) -> Scorer:
    """The scorer with the horizon set to the sample's span and rate (reads as on the sample alone)."""
    span = advice.sample.span_seconds
    spec = advice.spec
    if span > 0:
        spec = dataclasses.replace(spec, rows_per_second=advice.sample.rows / span, growth=0.0, horizon_days=span / 86400)
    scorer = Scorer(spec, advice.sample, advice.model)
    if requests is not None:
        scorer.queries = {name: qs[:requests] for name, qs in scorer.queries.items()}
    return scorer


def copies_for(scorer: Scorer) -> int:
    """How many times the sample is written: its entities' rows at the horizon (at most MAX_COPIES)."""
    return int(min(MAX_COPIES, max(1, round(scorer.entity_scale))))


@dataclass
class _Loaded:
    score: Score
    predicted: Score  # at the horizon, over the queries run
    tables: list[str]
    put_ms: float  # per row written (main and index rows)
    amp: float  # rows written per record
    share: float
    per_row_ms: list[float] = dataclasses.field(default_factory=list)  # each table's measured time per row


def measurable(score: Score) -> bool:
    """Whether :func:`prove` can load ``score``'s design as it is priced: not a time-bucketed one
    (its packed rows and their compaction are the writer's; prove writes one cell per record).
    A hand design is taken as written."""
    return score.design.hand or not score.design.shape.bucket_ms


def pick(advice: Advice, k: int = 3, chosen: list[Score] | None = None) -> tuple[list[Score], list[str]]:
    """The designs :func:`prove` measures: the top ``k`` and the hand designs (or ``chosen``),
    and the designs left out, each with why.

    A time-bucketed design packs a bucket's events into one row's qualifiers, which the loader
    does not write (one cell per record: a bucket's events would overwrite each other), so its
    numbers would be wrong: it is left out, said so, and the next design takes its place."""
    pool = chosen if chosen is not None else advice.ranked
    bucketed = [s for s in pool if not measurable(s)]
    skipped = [
        f"{s.design.name}: time-bucketed (its packed rows and their compaction are the writer's; prove writes one cell per record)"
        for s in bucketed
        if chosen is not None or s.rank <= k
    ]
    loadable = [s for s in pool if s not in bucketed]
    if chosen is not None:
        return loadable, skipped
    top = loadable[:k]  # in rank order, a hand design among them counting as one of the k
    return top + [s for s in loadable[k:] if s.design.hand], skipped


def prove(
    advice: Advice, store: Store, k: int = 3, requests: int = 20, prefix: str = "ksprove", repeats: int = 5, chosen: list[Score] | None = None
) -> Proof:
    """Measure the designs :func:`pick` chooses (the top ``k`` and the hand designs, or ``chosen``)
    on ``store`` (see the module docstring); those it leaves out are in :attr:`Proof.skipped`."""
    picked, skipped = pick(advice, k, chosen)
    scorer = _scorer(advice, requests)
    copies = copies_for(scorer)
    loaded: list[_Loaded] = []
    try:
        for s in picked:
            loaded.append(_create(s, _rescore(scorer, s, requests), store, f"{prefix}_{s.design.name}".replace("-", "_")))
        _load(loaded, scorer, store)
        before = _scan_times(store, loaded, repeats)
        if copies > 1:
            for ld in loaded:
                _load_history(ld, scorer, store, copies)
        after = _scan_times(store, loaded, repeats)
        _per_row(loaded, before, after)
        times = _measure(store, loaded, scorer, repeats)
    finally:
        for ld in loaded:
            for t in ld.tables:
                if store.table_exists(t):
                    store.delete_table(t)
    out = [_measured(ld, times[i], scorer, advice, copies) for i, ld in enumerate(loaded)]
    return Proof(
        out,
        spearman([m.predicted_cost for m in out], [m.measured_cost for m in out]),
        spearman([m.predicted_read_cost for m in out], [m.measured_read_cost for m in out]),
        skipped,
    )


_Times = dict[str, list[tuple[list[float], int, int]]]  # pattern -> per query: (times ms, rows read, bytes read)


def _measure(store: Store, loaded: list[_Loaded], scorer: Scorer, repeats: int) -> list[_Times]:
    """Every pattern's queries on every design, query by query, the designs in an order rotated
    each round; one unmeasured round first (region locations, connections, the block cache and
    the load's flushes settle before any timing counts)."""
    spec = scorer.spec
    out: list[_Times] = [{p.name: [([], 0, 0) for _ in scorer.queries[p.name]] for p in spec.patterns} for _ in loaded]
    n = len(loaded)
    for rnd in range(max(1, repeats) + 1):
        order = [(rnd + i) % n for i in range(n)]
        for pi, p in enumerate(spec.patterns):
            for qi, q in enumerate(scorer.queries[p.name]):
                for li in order:
                    ld = loaded[li]
                    route = ld.predicted.patterns[pi].route
                    if route == "full scan" and qi:  # the same rows whatever the query: scanned once a round
                        ms, rows, nbytes = out[li][p.name][0][0][-1] if rnd else 0.0, *out[li][p.name][0][1:]
                    else:
                        t0 = time.perf_counter()
                        rows, nbytes, scale = _run(store, ld.score, route, p, q, ld.tables[0], ld.tables, scorer)
                        ms = (time.perf_counter() - t0) * 1000 * scale
                    if rnd:
                        got = out[li][p.name][qi]
                        got[0].append(ms)
                        out[li][p.name][qi] = (got[0], rows, nbytes)
    return out


_Scans = list[list[tuple[float, int, int]]]  # per design, per table: (lower-quartile ms, rows, bytes)


def _scan_times(store: Store, loaded: list[_Loaded], repeats: int) -> _Scans:
    """Each table scanned whole, round-robin, one unmeasured round first."""
    times: list[list[list[float]]] = [[[] for _ in ld.tables] for ld in loaded]
    size: list[list[tuple[int, int]]] = [[(0, 0) for _ in ld.tables] for ld in loaded]
    for rnd in range(max(1, repeats) + 1):
        for li, ld in enumerate(loaded):
            for tj, t in enumerate(ld.tables):
                t0 = time.perf_counter()
                got = list(store.scan(t))
                if rnd:
                    times[li][tj].append((time.perf_counter() - t0) * 1000)
                size[li][tj] = (len(got), _size(got))
    return [[(float(np.percentile(ts, QUANTILE)), *size[li][tj]) for tj, ts in enumerate(tt)] for li, tt in enumerate(times)]


def _per_row(loaded: list[_Loaded], before: _Scans, after: _Scans) -> None:
    """Each table's time per row read: ``ms = rows x a + bytes x b`` fitted by least squares on
    what the history added to every table's whole scan (the same scanners and regions before and
    after, so no fixed cost is in the difference), over all the tables at once: one table's pair
    of scans alone is mostly the noise's, and the tables differ truly in their bytes per row.
    Without a history, the whole scans' own time per row."""
    pairs = [(a[0] - b[0], a[1] - b[1], a[2] - b[2]) for da, db in zip(after, before) for a, b in zip(da, db) if a[1] > b[1]]
    a_ms = b_ms = 0.0
    if pairs:
        m = np.array([[r, n] for _, r, n in pairs], dtype=float)
        y = np.array([ms for ms, _, _ in pairs], dtype=float)
        (a_ms, b_ms), *_ = np.linalg.lstsq(m, y, rcond=None)
        if a_ms <= 0 or b_ms <= 0:  # one side inside the noise: rows alone
            a_ms, b_ms = max(0.0, float(y.sum() / m[:, 0].sum())), 0.0
    for ld, da in zip(loaded, after):
        if pairs:
            ld.per_row_ms = [float(a_ms + b_ms * n / max(1, r)) for _, r, n in da]
        else:
            ld.per_row_ms = [ms / max(1, r) for ms, r, _ in da]


def spread(advice: Advice, k: int, requests: int | None = None, gaps: tuple[float, ...] = (0.25, 0.15, 0.1, 0.05, 0.0)) -> list[Score]:
    """``k`` designs to prove whose predicted weighted costs (at the horizon, over the queries
    :func:`prove` runs) differ, plus the hand designs: the top design, then designs at evenly
    spaced places among those at least a gap (relative) apart in predicted cost, the widest of
    ``gaps`` that still leaves ``k``. Designs the model prices alike cannot show a rank agreement:
    their measured order is the noise's."""
    scorer = _scorer(advice, requests)
    cost = {s.design.name: _rescore(scorer, s, requests).weighted_cost for s in advice.ranked}
    top = advice.ranked[0]
    hands = [s for s in advice.hand() if s is not top]
    # A time-bucketed design packs many events into one row's qualifiers, which _load does not
    # write (one row per record): it is left out rather than measured as another layout.
    others = sorted((s for s in advice.ranked if s is not top and not s.design.hand and measurable(s)), key=lambda s: cost[s.design.name])
    want = max(0, k - 1 - len(hands))
    rest: list[Score] = []
    for gap in gaps:
        distinct = [top, *hands]
        for s in others:
            c = cost[s.design.name]
            if all(abs(c - cost[d.design.name]) > gap * min(c, cost[d.design.name]) for d in distinct):
                distinct.append(s)
        rest = distinct[1 + len(hands) :]
        if len(rest) >= want:
            break
    if len(rest) > want:
        rest = [rest[round(i * (len(rest) - 1) / max(1, want - 1))] for i in range(want)] if want > 1 else rest[-want:] if want else []
    return [top, *rest, *hands]


def _measured(ld: _Loaded, times: _Times, scorer: Scorer, advice: Advice, copies: int) -> Measured:
    latency: dict[str, tuple[float, float]] = {}
    measured_read = predicted_read = extrapolated = 0.0
    for p, cost in zip(scorer.spec.patterns, ld.predicted.patterns):
        per_query = [float(np.percentile(t, QUANTILE)) for t, _, _ in times[p.name]]
        mean = float(np.mean(per_query))
        # The rows the horizon adds beyond those the query read, at the read table's measured time
        # per row: the scorer prices every read from the workload's rates (an entity's share of the
        # rows at the horizon, a window at the horizon's rate), which the history copies, at the
        # sample's pace, need not reach (issue 39). A query that read as many rows gets nothing added.
        read = float(np.mean([r for _, r, _ in times[p.name]]))
        table = 0 if cost.route != "index" else 1 + ld.score.design.index_table(p.name)
        extra = max(0.0, cost.rows - read) * ld.per_row_ms[table]
        per_query = [t + extra for t in per_query]
        mean += extra
        extrapolated += p.rate * extra
        latency[p.name] = (float(np.percentile(per_query, 50)), float(np.percentile(per_query, 99)))
        measured_read += p.rate * mean
        predicted_read += p.rate * cost.cost_ms
    servers, rate = advice.spec.servers, advice.spec.rows_per_second
    predicted_write = ld.predicted.write_cost
    measured_write = rate * ld.predicted.write_amp * ld.put_ms * max(1.0, ld.share * servers)
    return Measured(
        ld.score.design.name,
        ld.score.design.label,
        1000.0 / ld.put_ms if ld.put_ms else 0.0,
        latency,
        predicted_read,
        measured_read,
        predicted_read + predicted_write,
        measured_read + measured_write,
        float(ld.predicted.concentration),
        ld.share,
        ld.score.design.hand,
        extrapolated,
        copies,
    )


def _server_share(store: Store, tables: list[str], keys: list[list[bytes]], weights: list[float], half: int) -> float:
    """The busiest server's share of all the design's puts (every table's keys from ``half`` on,
    an index row weighted as the scorer weighs it), with the regions where the cluster put them:
    the scorer's number, measured on the placement the cluster made."""
    counts: dict[str, float] = {}
    for table, table_keys, weight in zip(tables, keys, weights):
        regions = sorted(store.regions(table), key=lambda r: r.start)
        starts = [r.start for r in regions]
        servers = [r.server for r in regions]
        for key in table_keys[half:]:
            server = servers[max(0, bisect.bisect_right(starts, key) - 1)]
            counts[server] = counts.get(server, 0.0) + weight
    total = sum(counts.values())
    return max(counts.values()) / total if total else 0.0


def _write_chunk(store: Store, s: Score, tables: list[str], keys: list[bytes], index_keys: list[list[bytes]], lo: int, value: bytes) -> float:
    """Write rows ``lo`` to ``lo + PUT_CHUNK`` (main and index rows), timed to their flush; ms per row."""
    cell = _cell(s.design.schema, VALUE_QUALIFIER)
    began = time.perf_counter()
    with store.writer(tables[0]) as w:
        for key in keys[lo : lo + PUT_CHUNK]:
            w.put(key, {cell: value})
    for j, (ik, ischema) in enumerate(zip(index_keys, s.design.index_tables)):
        icell = _cell(ischema, INDEX_QUALIFIER)
        with store.writer(tables[j + 1]) as w:
            for key, main in zip(ik[lo : lo + PUT_CHUNK], keys[lo : lo + PUT_CHUNK]):
                w.put(key, {icell: main})
    rows = len(keys[lo : lo + PUT_CHUNK]) * (1 + len(index_keys))
    return (time.perf_counter() - began) * 1000 / max(1, rows)


def _encode(s: Score, columns: dict[str, Any]) -> tuple[list[bytes], list[list[bytes]]]:
    schema = s.design.schema
    keys = schema.encode_many({f: columns[f] for f in schema.field_names})
    return keys, [ischema.encode_many({f: columns[f] for f in ischema.field_names}) for ischema in s.design.index_tables]


def _create(s: Score, predicted: Score, store: Store, name: str) -> _Loaded:
    """The design's tables, created empty at their split points."""
    tables = [name] + [f"{name}_i{j}" for j in range(len(s.design.index_tables))]
    for t in tables:
        if store.table_exists(t):
            store.delete_table(t)
    store.create_table(_table(s.design.schema, name), s.design.split_keys)
    for j, ischema in enumerate(s.design.index_tables):
        store.create_table(_table(ischema, tables[j + 1]), ischema.split_keys())  # pre-split as the design's index TOML says
    return _Loaded(s, predicted, tables, 0.0, 1.0 + len(s.design.index_tables), 0.0)


def _load(loaded: list[_Loaded], scorer: Scorer, store: Store) -> None:
    """Step 1: the sample into every design, chunk by chunk over the designs in an order rotated
    each chunk (a neighbour's burst slows the same chunk of every design alike); the lower quartile
    of a design's chunks is the cluster's put cost for it. Then the busiest server's share."""
    sample = scorer.sample
    value = b"x" * max(1, int(scorer.value_bytes))
    encoded = [_encode(ld.score, sample.columns) for ld in loaded]
    per_row: list[list[float]] = [[] for _ in loaded]
    n = len(loaded)
    for ci, lo in enumerate(range(0, sample.rows, PUT_CHUNK)):
        for li in [(ci + i) % n for i in range(n)]:
            keys, index_keys = encoded[li]
            per_row[li].append(_write_chunk(store, loaded[li].score, loaded[li].tables, keys, index_keys, lo, value))
    index_weight = 1.0 + scorer.spec.updates + scorer.spec.deletes
    for ld, (keys, index_keys), pr in zip(loaded, encoded, per_row):
        ld.put_ms = float(np.percentile(pr, QUANTILE))
        weights = [1.0] + [index_weight] * len(index_keys)
        ld.share = _server_share(store, ld.tables, [keys, *index_keys], weights, scorer.half)


def history(scorer: Scorer, copy: int) -> dict[str, Any]:
    """The sample's columns as ``copy`` sample spans earlier: the event time moved back, and the
    identifying fields that no read but a get names given new values (an older order has another
    order id); every field a read selects by keeps its value (the same user, device, tenant)."""
    spec, sample = scorer.spec, scorer.sample
    kept = {f for p in spec.patterns if p.kind != "get" for f in p.fields}
    out = dict(sample.columns)
    t = spec.time_field
    if t is not None:
        shift = int(sample.span_seconds * 1000) + 1
        out[t] = np.asarray(sample.columns[t], dtype=np.int64) - copy * shift
    for f in spec.id_fields:
        if f == t or f in kept:
            continue
        col = sample.columns[f]
        if sample.types.get(f) == "int64":
            a = np.asarray(col, dtype=np.int64)
            out[f] = a + copy * (int(a.max()) - int(a.min()) + 1)
        elif sample.types.get(f) == "string":
            out[f] = [f"{v}h{copy}" for v in col]
    return out


def _load_history(ld: _Loaded, scorer: Scorer, store: Store, copies: int) -> None:
    """Step 2: the ``copies - 1`` earlier copies of the sample (untimed)."""
    value = b"x" * max(1, int(scorer.value_bytes))
    cell = _cell(ld.score.design.schema, VALUE_QUALIFIER)
    icells = [_cell(ischema, INDEX_QUALIFIER) for ischema in ld.score.design.index_tables]
    for c in range(1, copies):
        keys, index_keys = _encode(ld.score, history(scorer, c))
        with store.writer(ld.tables[0]) as w:
            for key in keys:
                w.put(key, {cell: value})
        for j, ik in enumerate(index_keys):
            with store.writer(ld.tables[j + 1]) as w:
                for key, main in zip(ik, keys):
                    w.put(key, {icells[j]: main})


def _size(rows: list[tuple[bytes, dict[bytes, bytes]]]) -> int:
    return sum(len(k) + sum(len(v) for v in cells.values()) for k, cells in rows)


def _run(store: Store, s: Score, route: str, p: Any, q: dict[str, Any], name: str, tables: list[str], scorer: Scorer) -> tuple[int, int, float]:
    """One request of pattern ``p`` by ``route``; returns the rows and bytes read, and by how much
    the request's time is to be multiplied: a fan-out over more than :data:`MAX_RANGES` ranges (a
    hash prefix of 65,536 buckets) runs every n-th range only, each the same scan over another
    bucket, and counts for all of them."""
    if route == "full scan":
        got = list(store.scan(name))
        return len(got), _size(got), 1.0
    if route == "index":
        j = s.design.index_table(p.name)
        schema, table = s.design.index_tables[j], tables[j + 1]
    else:
        schema, table = s.design.schema, name
    names = schema.field_names
    given = [n for n in names if n in q]
    lead = 0
    while lead < len(names) and names[lead] in q:
        lead += 1
    if lead == len(names):
        key = schema.encode(q)
        cells = store.get(table, key)
        rows = [(key, cells)] if cells else []
        scale = 1.0
    else:
        eq: dict[str, Any] = {n: q[n] for n in names[:lead]}
        t = scorer.spec.time_field
        time_next = t is not None and len(given) == lead and lead < len(names) and names[lead] == t
        if p.kind == "window" and time_next and t is not None:
            eq[t] = (scorer.now_ms - int(p.window_s * 1000), scorer.now_ms + 1)
        latest = p.kind == "latest" and time_next
        rows = []
        ranges = schema.scan_ranges(**eq)
        step = -(-len(ranges) // MAX_RANGES)  # ceil
        scale = len(ranges) / len(ranges[::step]) if ranges else 1.0
        for start, stop in ranges[::step]:
            if latest and not schema.field(t).descending:  # type: ignore[arg-type]
                # The newest first on an ascending time: a reversed scan from the range's end.
                back = store.scan(table, stop, b"", reverse=True, limit=p.limit + 1)
                rows += [r for r in back if start <= r[0] and (stop == b"" or r[0] < stop)][: p.limit]
            else:
                rows += list(store.scan(table, start, stop, limit=p.limit if latest else None))
    if route == "index":
        mains = [cells.get(_cell(schema, INDEX_QUALIFIER)) for _, cells in rows if cells]
        wanted = [m for m in mains if m is not None][: p.limit or None]
        fetched = store.get_many(name, wanted)
        return round((len(rows) + len(fetched)) * scale), round((_size(rows) + _size(fetched)) * scale), scale
    return round(len(rows) * scale), round(_size(rows) * scale), scale
