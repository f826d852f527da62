"""``advise --prove``: load the top designs and the hand designs into a real HBase, replay the
sample's writes and the access patterns, and compare measured with predicted.

Each design's tables (the main table pre-split at its split points, and its index tables) are
created under ``<prefix>_<design>``, the sample's records written in event-time order (one cell of
the sample's value size per row; an index row holds the main key). Then, with every design loaded,
each pattern's queries (the scorer's own query values) are run by the route the scorer chose for
that design (a get, the key's scan ranges one after another, the index then a multi-get, or a full
scan; the newest ``limit`` rows by a reversed scan when the time ascends), in ``repeats``
round-robin rounds over the designs: a neighbour's burst slows one round of every design, and each
query keeps the median of its rounds. The tables are dropped after.

Measured against predicted, per design, the *weighted cost* (ms of work per second):

- reads: each pattern's rate x the mean of its queries' times. The prediction is the same design
  rescored at the *sample's* scale (the horizon set to the sample's span and rate, so both sides
  read the same rows) and the same queries, priced as ``cost_ms`` (every scanner's work summed: the
  client runs the ranges one after another, as the measurement does);
- writes: the workload's rows per second x the write amplification x the time of one put (predicted:
  ``write_row_us``; measured: the load's own time per row) x how far the busiest server is above its
  fair share. The measured share is the cluster's: the regions as HBase assigned them after the
  load, read back from the master, and the sample's second half (as the scorer replays it) counted
  per server in the scorer's windows.

On a standalone HBase one server holds every region (share 1.0 for every design); on the 3-server
cluster the share tells designs apart.
"""

from __future__ import annotations

import bisect
import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from keyshape.analysis.advise.advise import Advice
from keyshape.analysis.advise.score import Score, Scorer
from keyshape.schema.keyschema import KeySchema
from keyshape.store.base import Store

__all__ = ["Proof", "Measured", "prove", "spearman", "spread"]

PUT_CHUNK = 250  # rows per timed write chunk
VALUE_QUALIFIER = b"v"
INDEX_QUALIFIER = b"k"


def _cell(schema: KeySchema, qualifier: bytes) -> bytes:
    """``family:qualifier`` in the schema's first family (a hand design names its own)."""
    return schema.table.families[0].name.encode() + b":" + qualifier


@dataclass
class Measured:
    """One design on the real HBase: writes, per-pattern latency, and the weighted costs compared."""

    name: str
    label: str
    write_rows_per_s: float
    latency_ms: dict[str, tuple[float, float]]  # pattern -> (p50, p99) over the queries' medians
    predicted_read_cost: float  # sum of rate x predicted cost_ms, at the sample's scale
    measured_read_cost: float  # sum of rate x measured mean time
    predicted_cost: float = 0.0  # the weighted cost: reads + writes
    measured_cost: float = 0.0
    predicted_share: float = 0.0  # busiest server's mean share of a window's writes
    measured_share: float = 0.0
    hand: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class Proof:
    designs: list[Measured]
    spearman: float  # predicted vs measured weighted cost
    read_spearman: float = 0.0  # the reads alone

    def to_dict(self) -> dict[str, Any]:
        return {"designs": [d.to_dict() for d in self.designs], "spearman": self.spearman, "read_spearman": self.read_spearman}


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


def _sample_scale(advice: Advice, requests: int | None = None) -> Scorer:
    span = advice.sample.span_seconds
    spec = advice.spec
    if span > 0:
        spec = dataclasses.replace(spec, rows_per_second=advice.sample.rows / span, growth=0.0, horizon_days=span / 86400)
    scorer = Scorer(spec, advice.sample, advice.model)
    if requests is not None:  # predicted over exactly the queries that are run
        scorer.queries = {name: qs[:requests] for name, qs in scorer.queries.items()}
    return scorer


@dataclass
class _Loaded:
    score: Score
    predicted: Score
    tables: list[str]
    put_ms: float  # per row written (main and index rows)
    amp: float  # rows written per record
    share: float


def prove(
    advice: Advice, store: Store, k: int = 3, requests: int = 20, prefix: str = "ksprove", repeats: int = 5, chosen: list[Score] | None = None
) -> Proof:
    """Measure the top ``k`` designs and the hand designs (or ``chosen``) on ``store`` (see the
    module docstring)."""
    picked = chosen if chosen is not None else [s for s in advice.ranked if s.rank <= k or s.design.hand]
    scorer = _sample_scale(advice, requests)
    loaded: list[_Loaded] = []
    try:
        for s in picked:
            loaded.append(_load(s, scorer, store, f"{prefix}_{s.design.name}".replace("-", "_")))
        spec = scorer.spec
        times: list[dict[str, list[list[float]]]] = [{p.name: [[] for _ in scorer.queries[p.name]] for p in spec.patterns} for _ in loaded]
        # One round unmeasured first: region locations, connections, the block cache, and the
        # flushes the load left behind settle before any timing counts.
        for rnd in range(max(1, repeats) + 1):
            for li, ld in enumerate(loaded):
                for p, cost in zip(spec.patterns, ld.predicted.patterns):
                    for qi, q in enumerate(scorer.queries[p.name]):
                        t0 = time.perf_counter()
                        _run(store, ld.score, cost.route, p, q, ld.tables[0], ld.tables, scorer)
                        if rnd:
                            times[li][p.name][qi].append((time.perf_counter() - t0) * 1000)
    finally:
        for ld in loaded:
            for t in ld.tables:
                if store.table_exists(t):
                    store.delete_table(t)
    out = [_measured(ld, times[i], scorer, advice) for i, ld in enumerate(loaded)]
    return Proof(
        out,
        spearman([m.predicted_cost for m in out], [m.measured_cost for m in out]),
        spearman([m.predicted_read_cost for m in out], [m.measured_read_cost for m in out]),
    )


def spread(advice: Advice, k: int, requests: int | None = None, gaps: tuple[float, ...] = (0.25, 0.15, 0.1, 0.05, 0.0)) -> list[Score]:
    """``k`` designs to prove whose predicted weighted costs (at the sample's scale, as :func:`prove`
    compares them) differ, plus the hand designs: the top design, then designs at evenly spaced
    places among those at least a gap (relative) apart in predicted cost, the widest of ``gaps``
    that still leaves ``k``. Designs the model prices alike cannot show a rank agreement: their
    measured order is the noise's."""
    scorer = _sample_scale(advice, requests)
    cost = {s.design.name: _predicted_total(scorer.score(s.design), advice) for s in advice.ranked}
    top = advice.ranked[0]
    hands = [s for s in advice.hand() if s is not top]
    others = sorted((s for s in advice.ranked if s is not top and not s.design.hand), key=lambda s: cost[s.design.name])
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


def _predicted_total(predicted: Score, advice: Advice) -> float:
    """Reads at the sample's scale plus the writes at the workload's rate (as :func:`_measured`)."""
    model, spec = advice.model, advice.spec
    reads = sum(p.rate * c.cost_ms for p, c in zip(spec.patterns, predicted.patterns))
    return reads + spec.rows_per_second * predicted.write_amp * model.write_row_us / 1000 * max(1.0, predicted.concentration * spec.servers)


def _measured(ld: _Loaded, times: dict[str, list[list[float]]], scorer: Scorer, advice: Advice) -> Measured:
    latency: dict[str, tuple[float, float]] = {}
    measured_read = predicted_read = 0.0
    for p, cost in zip(scorer.spec.patterns, ld.predicted.patterns):
        per_query = [float(np.median(t)) for t in times[p.name]]
        latency[p.name] = (float(np.percentile(per_query, 50)), float(np.percentile(per_query, 99)))
        measured_read += p.rate * float(np.mean(per_query))
        predicted_read += p.rate * cost.cost_ms
    # Writes at the workload's own rate (a put costs the same in a small table as in a big one).
    servers, rate = advice.spec.servers, advice.spec.rows_per_second
    predicted_write = _predicted_total(ld.predicted, advice) - predicted_read
    measured_write = rate * ld.amp * ld.put_ms * max(1.0, ld.share * servers)
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
    )


def _server_share(store: Store, table: str, keys: list[bytes], half: int, windows: int) -> float:
    """The busiest server's mean share of a window's writes, over the keys from ``half`` on, with
    the regions where the cluster put them."""
    regions = sorted(store.regions(table), key=lambda r: r.start)
    starts = [r.start for r in regions]
    servers = [r.server for r in regions]
    late = keys[half:]
    if not late:
        return 0.0
    shares = []
    for chunk in np.array_split(np.arange(len(late)), min(windows, len(late))):
        counts: dict[str, int] = {}
        for i in chunk.tolist():
            server = servers[max(0, bisect.bisect_right(starts, late[i]) - 1)]
            counts[server] = counts.get(server, 0) + 1
        shares.append(max(counts.values()) / len(chunk))
    return float(np.mean(shares))


def _load(s: Score, scorer: Scorer, store: Store, name: str) -> _Loaded:
    sample = scorer.sample
    predicted = scorer.score(s.design)
    keys = s.design.schema.encode_many({f: sample.columns[f] for f in s.design.schema.field_names})
    value = b"x" * max(1, int(scorer.value_bytes))
    tables = [name] + [f"{name}_i{j}" for j in range(len(s.design.indexes))]
    for t in tables:
        if store.table_exists(t):
            store.delete_table(t)
    store.create_table(_table(s.design.schema, name), s.design.split_keys)
    index_keys = []
    for j, (_, ischema, _) in enumerate(s.design.indexes):
        store.create_table(_table(ischema, tables[j + 1]), ischema.split_keys())  # pre-split as the design's index TOML says
        index_keys.append(ischema.encode_many({f: sample.columns[f] for f in ischema.field_names}))
    # Written in chunks, each timed to its flush: the lower quartile of the per-row times is the
    # cluster's put cost for this design, a neighbour's burst during one chunk aside.
    per_row: list[float] = []
    cell = _cell(s.design.schema, VALUE_QUALIFIER)
    icells = [_cell(ischema, INDEX_QUALIFIER) for _, ischema, _ in s.design.indexes]
    for lo in range(0, len(keys), PUT_CHUNK):
        began = time.perf_counter()
        with store.writer(name) as w:
            for key in keys[lo : lo + PUT_CHUNK]:
                w.put(key, {cell: value})
        for j, ik in enumerate(index_keys):
            with store.writer(tables[j + 1]) as w:
                for key, main in zip(ik[lo : lo + PUT_CHUNK], keys[lo : lo + PUT_CHUNK]):
                    w.put(key, {icells[j]: main})
        rows = len(keys[lo : lo + PUT_CHUNK]) * (1 + len(index_keys))
        per_row.append((time.perf_counter() - began) * 1000 / rows)
    written = len(keys) * (1 + len(index_keys))
    put_ms = float(np.percentile(per_row, 25))
    share = _server_share(store, name, keys, scorer.half, scorer.windows)
    return _Loaded(s, predicted, tables, put_ms, written / max(1, len(keys)), share)


def _run(store: Store, s: Score, route: str, p: Any, q: dict[str, Any], name: str, tables: list[str], scorer: Scorer) -> int:
    """One request of pattern ``p`` by ``route``; returns the rows read."""
    if route == "full scan":
        return sum(1 for _ in store.scan(name))
    if route == "index":
        j = next(i for i, (ip, _, _) in enumerate(s.design.indexes) if ip.name == p.name)
        schema, table = s.design.indexes[j][1], tables[j + 1]
    else:
        schema, table = s.design.schema, name
    names = schema.field_names
    given = [n for n in names if n in q]
    lead = 0
    while lead < len(names) and names[lead] in q:
        lead += 1
    if lead == len(names):
        rows = [(schema.encode(q), store.get(table, schema.encode(q)))]
    else:
        eq: dict[str, Any] = {n: q[n] for n in names[:lead]}
        t = scorer.spec.time_field
        time_next = t is not None and len(given) == lead and lead < len(names) and names[lead] == t
        if p.kind == "window" and time_next and t is not None:
            eq[t] = (scorer.now_ms - int(p.window_s * 1000), scorer.now_ms + 1)
        latest = p.kind == "latest" and time_next
        rows = []
        for start, stop in schema.scan_ranges(**eq):
            if latest and not schema.field(t).descending:  # type: ignore[arg-type]
                # The newest first on an ascending time: a reversed scan from the range's end.
                got = store.scan(table, stop, b"", reverse=True, limit=p.limit + 1)
                rows += [r for r in got if start <= r[0] and (stop == b"" or r[0] < stop)][: p.limit]
            else:
                rows += list(store.scan(table, start, stop, limit=p.limit if latest else None))
    if route == "index":
        mains = [cells.get(_cell(schema, INDEX_QUALIFIER)) for _, cells in rows if cells]
        wanted = [m for m in mains if m is not None][: p.limit or None]
        return len(store.get_many(name, wanted))
    return len(rows)
