"""What each access pattern costs on a design: RPCs, scanners, rows and bytes read, and time.

The rows a read touches are counted on the sample's own keys in the design's order
(:meth:`KeySchema.scan_ranges` gives the ranges, a sorted copy of the keys gives the count), for
query values drawn from the sample's records (so popular entities are asked about as often as they
write), then scaled to the table at the horizon (``prefix``, ``lookup``, full scans: the table grows
to ``horizon_rows``) or to the live write rate (``window``: the rows of one window at
``rows_per_second``). Time comes from :class:`CostModel`, a handful of constants with defaults
typical of an HBase 2 cluster on SSDs over a LAN; ``keyshape advise --calibrate`` is meant to fit
them on the cluster at hand (:mod:`.calibrate`).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from keyshape.analysis.advise.spec import Pattern
from keyshape.schema.keyschema import KeySchema

__all__ = ["CostModel", "PatternCost", "KeyIndex", "entity_counts", "pattern_cost", "query_rows"]


@dataclass(frozen=True)
class CostModel:
    """Cost constants (time per unit). Defaults: an HBase 2 cluster on SSDs, client on the LAN.

    - ``rpc_ms``: one round trip of a scanner ``next`` or a Multi.
    - ``get_ms``: one point Get, end to end (HBase serves a Get on its own path: measured apart).
    - ``scanner_ms``: opening a scanner on a region (seek in every store file of the range).
    - ``row_us``: reading one row on the server (block cache hit, filter, encode).
    - ``byte_ns``: moving one byte to the client.
    - ``write_row_us``: a server's work for one put (WAL append, memstore insert).
    - ``parallel``: scanners a client runs at once (Phoenix's default thread pool is larger,
      plain HBase clients run one: 10 is a typical application pool).
    - ``reverse_factor``: a reversed scan's cost per row over a forward one (newest-first reads on
      an ascending time key; HBase seeks back block by block).
    - ``scan_result_bytes``: bytes a scanner returns per ``next`` RPC
      (``hbase.client.scanner.max.result.size``, 2 MiB).
    """

    rpc_ms: float = 0.5
    get_ms: float = 0.5
    scanner_ms: float = 1.0
    row_us: float = 2.0
    byte_ns: float = 8.0
    write_row_us: float = 25.0
    parallel: int = 10
    reverse_factor: float = 1.5
    scan_result_bytes: int = 2 << 20

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PatternCost:
    """One pattern on one design, per request (rows and bytes as the table will be at the horizon)."""

    pattern: str
    route: str  # get | range | fan-out | index | full scan
    rpcs: float
    scanners: float
    rows: float
    bytes: float
    latency_ms: float
    cost_ms: float  # server + client time per request, all scanners summed
    goal_ms: float
    rows_rel_se: float = 0.0  # the sampling noise of ``rows`` (relative standard error; 0: not from the sample's shares)

    @property
    def over_goal(self) -> float:
        return self.latency_ms / self.goal_ms if self.goal_ms else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["over_goal"] = round(self.over_goal, 3)
        return d


class KeyIndex:
    """The sample's keys of one design, sorted, to count the rows in any ``[start, stop)``."""

    def __init__(self, keys: list[bytes]) -> None:
        self.keys = sorted(keys)
        self.mean_key = float(np.mean([len(k) for k in keys])) if keys else 0.0

    def count(self, ranges: list[tuple[bytes, bytes]]) -> int:
        n = 0
        for start, stop in ranges:
            lo = bisect.bisect_left(self.keys, start)
            hi = len(self.keys) if stop == b"" else bisect.bisect_left(self.keys, stop)
            n += max(0, hi - lo)
        return n

    def __len__(self) -> int:
        return len(self.keys)


def query_rows(
    schema: KeySchema, index: KeyIndex, eq: Sequence[str], queries: list[dict[str, Any]], time_field: str | None, window_s: float, now_ms: int
) -> tuple[float, float]:
    """Mean (rows matched in the sample, ranges scanned) of the queries giving the leading fields
    ``eq`` on ``schema``; with ``time_field`` the event time (next in the key) is limited to the
    ``window_s`` seconds before ``now_ms``."""
    rows, ranges = 0.0, 0.0
    seen: dict[tuple[Any, ...], tuple[int, int]] = {}  # a popular entity is asked about often; count it once
    for q in queries:
        values = tuple(q[n] for n in eq)
        if values not in seen:
            lead: dict[str, Any] = dict(zip(eq, values))
            if time_field is not None:
                lead[time_field] = (now_ms - int(window_s * 1000), now_ms + 1)
            r = schema.scan_ranges(**lead)
            seen[values] = (index.count(r), len(r))
        found, scanned = seen[values]
        rows += found
        ranges += scanned
    k = max(1, len(queries))
    return rows / k, ranges / k


def entity_counts(schema: KeySchema, index: KeyIndex, eq: Sequence[str], queries: list[dict[str, Any]]) -> np.ndarray:
    """Per query, the sample's rows that hold the query's values of the leading fields ``eq`` on
    ``schema`` (the queried record itself included: its values were drawn from it)."""
    seen: dict[tuple[Any, ...], int] = {}
    out = np.zeros(len(queries))
    for i, q in enumerate(queries):
        values = tuple(q[n] for n in eq)
        if values not in seen:
            seen[values] = index.count(schema.scan_ranges(**dict(zip(eq, values))))
        out[i] = seen[values]
    return out


def _time(model: CostModel, rpcs: float, scanners: float, rows: float, nbytes: float, waves: float, reverse: bool = False) -> tuple[float, float]:
    """(latency, total cost) in ms of a read: ``waves`` rounds of parallel scanners/RPCs."""
    per_row = model.row_us / 1000 * (model.reverse_factor if reverse else 1.0)
    work = rows * per_row + nbytes * model.byte_ns / 1e6
    cost = rpcs * model.rpc_ms + scanners * model.scanner_ms + work
    spread = max(1.0, min(max(scanners, 1.0), float(model.parallel)))
    latency = waves * model.rpc_ms + math.ceil(scanners / model.parallel) * model.scanner_ms + work / spread
    return latency, cost


def pattern_cost(
    model: CostModel,
    p: Pattern,
    *,
    route: str,
    ranges: float,
    rows: float,
    row_bytes: float,
    regions: float,
    servers: int,
    reverse: bool = False,
    follow_gets: float = 0.0,
    follow_bytes: float = 0.0,
) -> PatternCost:
    """The cost of one request of ``p`` that scans ``ranges`` ranges reading ``rows`` rows of
    ``row_bytes`` each (``route`` says how), then (an index) fetches ``follow_gets`` main rows."""
    nbytes = rows * row_bytes
    if route == "get":
        rpcs, scanners, waves = 1.0, 0.0, 1.0
        latency, cost = _time(model, 0.0, 0.0, rows, nbytes, 0.0)
        latency, cost = latency + model.get_ms, cost + model.get_ms
    else:
        scanners = max(ranges, 1.0)
        if route == "full scan":
            scanners = max(scanners, regions * p.share)
        rpcs = scanners + max(0.0, nbytes / model.scan_result_bytes - scanners)
        waves = max(1.0, rpcs / max(1.0, min(scanners, float(model.parallel))))
        latency, cost = _time(model, rpcs, scanners, rows, nbytes, waves, reverse)
    if follow_gets:
        batches = min(follow_gets, float(servers))  # one Multi per server holding the rows
        fl, fc = _time(model, batches, 0.0, follow_gets, follow_gets * follow_bytes, 1.0)
        rpcs += batches
        latency += fl
        cost += fc
        rows += follow_gets
        nbytes += follow_gets * follow_bytes
    return PatternCost(p.name, route, rpcs, 0.0 if route == "get" else scanners, rows, nbytes, latency, cost, p.goal_ms)
