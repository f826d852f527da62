"""``advise --prove``: load the top designs and the hand designs into a real HBase, replay the
sample's writes and the access patterns, and compare measured with predicted.

Each design's tables (the main table pre-split at its split points, and its index tables) are
created under ``<prefix>_<design>``, the sample's records written in event-time order (one cell of
the sample's value size per row; an index row holds the main key), then each pattern's queries
(the scorer's own query values) are run one by one, by the route the scorer chose for that design
(a get, the key's scan ranges, the index then a multi-get, or a full scan), timed end to end. The
prediction it is compared with is the same design rescored at the *sample's* scale (the horizon set
to the sample's span and rate), so both sides read the same rows. The tables are dropped after.

What it cannot show on a standalone HBase: write spread over servers (one server holds every
region); the rank agreement is over the read cost (rate x mean latency per pattern).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from keyshape.analysis.advise.advise import Advice
from keyshape.analysis.advise.score import Score, Scorer
from keyshape.schema.keyschema import KeySchema
from keyshape.store.base import Store

__all__ = ["Proof", "Measured", "prove", "spearman"]

FAMILY_CELL = b"d:v"
INDEX_CELL = b"d:k"


@dataclass
class Measured:
    """One design on the real HBase: writes per second, and per pattern p50/p99 latency in ms."""

    name: str
    label: str
    write_rows_per_s: float
    latency_ms: dict[str, tuple[float, float]]  # pattern -> (p50, p99)
    predicted_read_cost: float  # sum of rate x predicted latency, at the sample's scale
    measured_read_cost: float  # sum of rate x measured mean latency

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class Proof:
    designs: list[Measured]
    spearman: float

    def to_dict(self) -> dict[str, Any]:
        return {"designs": [d.to_dict() for d in self.designs], "spearman": self.spearman}


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


def _sample_scale(advice: Advice) -> Scorer:
    span = advice.sample.span_seconds
    spec = advice.spec
    if span > 0:
        spec = dataclasses.replace(spec, rows_per_second=advice.sample.rows / span, growth=0.0, horizon_days=span / 86400)
    return Scorer(spec, advice.sample, advice.model)


def prove(advice: Advice, store: Store, k: int = 3, requests: int = 20, prefix: str = "ksprove") -> Proof:
    """Measure the top ``k`` designs and the hand designs on ``store`` (see the module docstring)."""
    chosen = [s for s in advice.ranked if s.rank <= k or s.design.hand]
    scorer = _sample_scale(advice)
    out: list[Measured] = []
    for s in chosen:
        out.append(_measure(s, scorer, store, requests, f"{prefix}_{s.design.name}".replace("-", "_")))
    return Proof(out, spearman([m.predicted_read_cost for m in out], [m.measured_read_cost for m in out]))


def _measure(s: Score, scorer: Scorer, store: Store, requests: int, name: str) -> Measured:
    sample, spec = scorer.sample, scorer.spec
    predicted = scorer.score(s.design)
    cols = {f: sample.columns[f] for f in s.design.schema.field_names}
    keys = s.design.schema.encode_many(cols)
    value = b"x" * max(1, int(scorer.value_bytes))
    tables = [name] + [f"{name}_i{j}" for j in range(len(s.design.indexes))]
    admin = store
    for t in tables:
        if admin.table_exists(t):
            admin.delete_table(t)
    admin.create_table(_table(s.design.schema, name), s.design.split_keys)
    index_keys = []
    for j, (_, ischema, _) in enumerate(s.design.indexes):
        admin.create_table(_table(ischema, tables[j + 1]), [])
        index_keys.append(ischema.encode_many({f: sample.columns[f] for f in ischema.field_names}))
    try:
        began = time.perf_counter()
        with store.writer(name) as w:
            for key in keys:
                w.put(key, {FAMILY_CELL: value})
        for j, ik in enumerate(index_keys):
            with store.writer(tables[j + 1]) as w:
                for key, main in zip(ik, keys):
                    w.put(key, {INDEX_CELL: main})
        write_rate = len(keys) / (time.perf_counter() - began)
        latency: dict[str, tuple[float, float]] = {}
        measured_cost = 0.0
        predicted_cost = 0.0
        for p, cost in zip(spec.patterns, predicted.patterns):
            times = []
            for q in scorer.queries[p.name][:requests]:
                t0 = time.perf_counter()
                _run(store, s, cost.route, p, q, name, tables, scorer)
                times.append((time.perf_counter() - t0) * 1000)
            latency[p.name] = (float(np.percentile(times, 50)), float(np.percentile(times, 99)))
            measured_cost += p.rate * float(np.mean(times))
            predicted_cost += p.rate * cost.latency_ms
    finally:
        for t in tables:
            if admin.table_exists(t):
                admin.delete_table(t)
    return Measured(s.design.name, s.design.label, write_rate, latency, predicted_cost, measured_cost)


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
        if p.kind == "window" and len(given) == lead and lead < len(names) and names[lead] == t:
            eq[t] = (scorer.now_ms - int(p.window_s * 1000), scorer.now_ms + 1)
        limit = p.limit if p.kind == "latest" and lead < len(names) and names[lead] == t and schema.field(t).descending else None
        rows = [r for start, stop in schema.scan_ranges(**eq) for r in store.scan(table, start, stop, limit=limit)]
    if route == "index":
        mains = [cells.get(INDEX_CELL) for _, cells in rows if cells]
        wanted = [m for m in mains if m is not None][: p.limit or None]
        return len(store.get_many(name, wanted))
    return len(rows)
