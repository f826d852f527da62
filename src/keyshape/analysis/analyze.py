"""Analyze a stream of row keys in write order against a table's regions.

``analyze(keys, splits)`` is the library form of ``keyshape analyze``: it assigns every key to its
region, counts rows and bytes per region and per region server, cuts the write stream into time
windows (the heat map), and judges the design (see ``verdict``).

Memory: keys are processed chunk by chunk and dropped; what stays is O(regions x windows), also
with an auto-split simulation (``split_model`` or ``auto_split_rows``: ``keyshape.core.splitsim``
keeps bounded key samples per region, never the keys).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.analysis.signals import WriteOrder
from keyshape.analysis.stats import (
    Distribution,
    KeyLengths,
    chance_top_share,
    distribution,
    estimated_row_bytes,
    key_overhead_bytes,
    uniform_baseline,
)
from keyshape.analysis.timeline import (
    Moments,
    Timeline,
    by_server,
    hottest,
    dwell,
    moment_rows,
    moving_direction,
)
from keyshape.analysis.verdict import Evidence, SchemaHints, judge
from keyshape.core.hbytes import to_string_binary
from keyshape.core.keyarray import KeyArray
from keyshape.core.regions import RegionMap
from keyshape.core.splitsim import SplitHistory, SplitModel, SplitSimulator
from keyshape.errors import BadInput
from keyshape.schema.keycheck import KeyCheck

Progress = Callable[[int], None]
DEFAULT_SERVERS = 3  # region servers assumed when none are given (a small production cluster)


@dataclass(frozen=True)
class RegionLoad:
    """One region's share of the workload.

    - ``index``: the region's place in key order; ``start`` / ``end``: its bounds, b"" = unbounded.
    - ``rows``: rows (keys) it got; ``share``: their share of all rows.
    - ``key_bytes``: its keys' bytes; ``bytes``: its estimated size (keys in every cell plus values).
    - ``server``: the index of the region server it is on.
    - ``start_text``: the start key decoded by the schema (:mod:`keyshape.schema.labels`), "" if none.
    """

    index: int
    start: bytes
    end: bytes
    rows: int
    share: float
    key_bytes: int
    bytes: int
    server: int
    start_text: str = ""

    @property
    def label(self) -> str:
        """``[start, end)`` in toStringBinary form, unbounded ends shown as (start) / (end)."""
        start = to_string_binary(self.start) if self.start else "(start)"
        end = to_string_binary(self.end) if self.end else "(end)"
        return f"[{start}, {end})"


@dataclass
class Analysis:
    """Everything ``analyze`` measured, plus the verdict (built by :meth:`Analyzer.finish`).

    - ``name``: what reports call it; ``source``: the schema file or table it came from;
      ``schema_text``: the schema as written, when reports should show it.
    - ``rows``: rows (keys) analyzed; ``regions``: one :class:`RegionLoad` per region, in key order.
    - ``servers``: region servers the regions were spread over (round-robin); ``servers_assumed``:
      True when not given (``DEFAULT_SERVERS`` stood in); ``server_rows``: rows per server.
    - ``distribution`` / ``server_distribution``: the spread over regions / servers (max over
      mean, CV, Gini, the busiest share).
    - ``key_length_min`` / ``key_length_mean`` / ``key_length_max``: key lengths in bytes;
      ``key_bytes``: all keys' bytes; ``key_overhead_bytes``: ``key_bytes`` x ``cells_per_row``
      (HBase repeats the row key in every cell); ``value_bytes``: value bytes per row assumed.
    - ``heat``: windows x regions writes; ``window_hot_shares``: the busiest region's share of each
      window; ``hot_window_share`` / ``hot_window_server_share``: the typical busiest share of a
      window by region / server; ``hot_window_baseline``: that share if the keys were spread at
      random; ``moment_rows``: writes per window behind ``hot_window_share`` (0: the heat map's).
    - ``increasing_fraction`` / ``decreasing_fraction``: keys larger / smaller than the one before
      (write order); ``walk``: how long writes dwell in one region before moving on, and
      ``walk_chance`` the same for independent writes with the same per-region totals.
    - ``verdict``, ``reasons``, ``advice``: the judgement, why, and what to change.
    - ``lint``: the schema's lint findings; ``label_legend``: what ``RegionLoad.start_text`` is made
      of ("bucket · user_id · ts"); ``auto_split``: the split simulation's summary (None without
      one); ``key_check``: real keys checked against the schema (None for generated keys);
      ``row_count``: a live table's rows and how they were counted (None otherwise);
      ``count_label``: what ``RegionLoad.rows`` counts ("rows", or a watch's requests).
    """

    name: str
    rows: int
    regions: list[RegionLoad]
    servers: int
    server_rows: np.ndarray
    distribution: Distribution
    server_distribution: Distribution
    key_length_min: int
    key_length_mean: float
    key_length_max: int
    key_bytes: int
    cells_per_row: int
    value_bytes: int
    key_overhead_bytes: int
    heat: np.ndarray
    window_hot_shares: np.ndarray
    hot_window_share: float
    hot_window_server_share: float
    hot_window_baseline: float
    increasing_fraction: float
    decreasing_fraction: float
    verdict: str
    reasons: list[str]
    advice: list[str]
    schema_text: str | None = None
    lint: list[str] = field(default_factory=list)
    source: str = ""
    auto_split: dict[str, Any] | None = None
    label_legend: str = ""  # what RegionLoad.start_text is made of: "bucket · user_id · ts"
    servers_assumed: bool = False  # ``servers`` was not given: DEFAULT_SERVERS stood in
    moment_rows: int = 0  # writes per moment behind hot_window_share (0: the heat map's windows)
    walk: float = 0.0  # how much the writes dwell in one region before moving on (timeline.dwell)
    walk_chance: float = 0.0  # ... if writes were independent with the same per-region totals
    key_check: KeyCheck | None = None  # real keys checked against the schema (None: generated keys)
    # A live table's rows and how they were found (exact counts, or estimates with a bound):
    # keyshape.ops.sample.RowCount.to_dict(); None for keys the analysis was given.
    row_count: dict[str, Any] | None = None
    # What RegionLoad.rows counts: rows for keys; "write requests" / "read requests" for a watch
    # (counters of requests, not the rows a region holds).
    count_label: str = "rows"

    # The headline numbers under the names the JSON report uses.
    @property
    def max_over_mean(self) -> float:
        return self.distribution.max_over_mean

    @property
    def cv(self) -> float:
        return self.distribution.cv

    @property
    def gini(self) -> float:
        return self.distribution.gini

    @property
    def deviation_rate(self) -> float:
        return self.distribution.deviation_rate

    @property
    def empty_regions(self) -> int:
        return self.distribution.empty

    @property
    def windows(self) -> int:
        return int(self.heat.shape[0])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; keys are in toStringBinary form, "" for an unbounded end."""
        d = self.distribution
        return {
            "name": self.name,
            "source": self.source,
            "rows": self.rows,
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "advice": list(self.advice),
            "max_over_mean": d.max_over_mean,
            "cv": d.cv,
            "gini": d.gini,
            "deviation_rate": d.deviation_rate,
            "empty_regions": d.empty,
            "top_share": d.top_share,
            "hot_window_share": self.hot_window_share,
            "hot_window_server_share": self.hot_window_server_share,
            "hot_window_baseline": self.hot_window_baseline,
            "windows": self.windows,
            "servers_assumed": self.servers_assumed,
            "moment_rows": self.moment_rows,
            "walk": self.walk,
            "walk_chance": self.walk_chance,
            "increasing_fraction": self.increasing_fraction,
            "decreasing_fraction": self.decreasing_fraction,
            "key_length": {"min": self.key_length_min, "mean": self.key_length_mean, "max": self.key_length_max},
            "key_overhead": {
                "bytes": self.key_overhead_bytes,
                "cells_per_row": self.cells_per_row,
                "basis": "HBase repeats the row key in every cell: total key bytes x cells per row",
            },
            "regions": [
                {
                    "index": r.index,
                    "start": to_string_binary(r.start),
                    "end": to_string_binary(r.end),
                    "start_decoded": r.start_text,
                    "rows": r.rows,
                    "share": r.share,
                    "bytes": r.bytes,
                    "server": r.server,
                }
                for r in self.regions
            ],
            "servers": [{"server": i, "rows": int(n), "share": float(n) / self.rows if self.rows else 0.0} for i, n in enumerate(self.server_rows)],
            "heat": self.heat.tolist(),
            "auto_split": self.auto_split,
            "lint": list(self.lint),
            "label_legend": self.label_legend,
            "key_check": self.key_check.to_dict() if self.key_check is not None else None,
            "row_count": self.row_count,
            "counted": self.count_label,
        }

    def to_json(self, indent: int | None = 2) -> str:
        """``to_dict()`` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)


def _chunks(keys: Iterable[bytes] | Iterable[Sequence[bytes]]) -> Iterable[Sequence[bytes]]:
    """Accept a flat sequence of keys, or an iterable of chunks (lists / arrays of keys)."""
    if isinstance(keys, (list, tuple)) and (not keys or isinstance(keys[0], (bytes, bytearray))):
        yield keys
        return
    if isinstance(keys, np.ndarray):
        yield keys.tolist()
        return
    batch: list[bytes] = []
    for item in keys:
        if isinstance(item, (bytes, bytearray)):
            batch.append(bytes(item))
            if len(batch) >= 100_000:
                yield batch
                batch = []
        else:
            if batch:
                yield batch
                batch = []
            yield item.tolist() if isinstance(item, np.ndarray) else item
    if batch:
        yield batch


class Analyzer:
    """Chunk-by-chunk accumulator behind ``analyze``: ``update(keys)`` per chunk, then ``finish``.

    The parameters are :func:`analyze`'s: ``regions`` (split keys or a map), ``servers``,
    ``windows``, ``total_rows``, ``auto_split_rows``, ``value_bytes``, ``cells_per_row`` and
    ``split_model``, documented there.
    """

    def __init__(
        self,
        regions: RegionMap | Sequence[bytes],
        *,
        servers: int | None = None,
        windows: int = 50,
        total_rows: int | None = None,
        auto_split_rows: int | None = None,
        value_bytes: int = 100,
        cells_per_row: int = 1,
        split_model: SplitModel | None = None,
    ) -> None:
        if servers is not None and servers < 1:
            raise BadInput(f"servers must be at least 1, got {servers}")
        # Not given: the regions are spread over DEFAULT_SERVERS for the per-server numbers, and
        # nothing is advised about a server count nobody chose.
        self.servers_assumed = servers is None
        servers = DEFAULT_SERVERS if servers is None else servers
        if value_bytes < 0:
            raise BadInput(f"value_bytes must not be negative, got {value_bytes}")
        key_overhead_bytes(0, cells_per_row)  # validates cells_per_row
        if auto_split_rows is not None and auto_split_rows < 1:
            raise BadInput(f"auto_split_rows must be a positive row count, got {auto_split_rows}")
        self.map = regions if isinstance(regions, RegionMap) else RegionMap(list(regions))
        self.servers = servers
        self.windows = windows
        self.total_rows = total_rows
        self.auto_split_rows = auto_split_rows
        self.value_bytes = value_bytes
        self.cells_per_row = cells_per_row
        if auto_split_rows and split_model is not None:
            raise BadInput("give auto_split_rows (the idealized row-count model) or split_model (HBase's flush- and size-driven splits), not both")
        if auto_split_rows:
            split_model = SplitModel(policy="rows", max_rows=auto_split_rows)
        self.split_model = split_model
        self._sim = SplitSimulator(split_model, self.map.split_keys, windows=windows, servers=servers) if split_model is not None else None
        self._reset(self.map)

    def __getstate__(self) -> dict[str, Any]:
        # Partials travel between processes (Spark tasks): send the split keys, not the region
        # map's lookup tables, which the receiver rebuilds on first use.
        state = dict(self.__dict__)
        fresh = {id(m): RegionMap(m.split_keys) for m in (self.map, self._rmap)}
        state["map"], state["_rmap"] = fresh[id(self.map)], fresh[id(self._rmap)]
        return state

    def empty_like(self) -> Analyzer:
        """A new Analyzer with the same regions and settings and nothing counted: what each
        worker of a parallel or distributed run fills, before they :meth:`merge`."""
        return Analyzer(
            self.map,
            servers=None if self.servers_assumed else self.servers,
            windows=self.windows,
            total_rows=self.total_rows,
            value_bytes=self.value_bytes,
            cells_per_row=self.cells_per_row,
        )

    def _reset(self, rmap: RegionMap) -> None:
        n = len(rmap)
        self._rmap = rmap
        self._rows = np.zeros(n, dtype=np.int64)
        self._key_bytes = np.zeros(n, dtype=np.int64)
        self._lengths = KeyLengths()
        self._order = WriteOrder()
        self._timeline = Timeline(self.windows, n, self.total_rows)
        # The verdict's moments (see timeline.moment_rows). With the stream's length unknown the
        # width follows the rows seen; a wider accumulator replaces a finer one once the rows
        # call for 4x its width, and the finer one stays until the wider has seen half the rows.
        self._server_of = rmap.server_of(self.servers)
        width = moment_rows(self.total_rows if self.total_rows is not None else 0, n)
        self._moments: list[tuple[int, Moments]] = [(0, Moments(width, n, self._server_of))]
        self._sim_fed = 0  # keys fed to the auto-split simulation (their write positions)

    def update(self, keys: Sequence[bytes] | KeyArray, positions: np.ndarray | None = None, times: np.ndarray | None = None) -> None:
        """Add one chunk of keys, in write order (a KeyArray is the fast path).

        ``positions`` gives each key's position in the whole write stream (needs ``total_rows``):
        then Analyzers fed disjoint pieces of one stream :meth:`merge` into the result a single
        pass would give, which is how the parallel and Spark engines work. ``times`` (seconds, one
        per key) are the writes' times for an auto-split model without a rate.
        """
        if self._sim is None:
            self._count(keys, positions)
            return
        if positions is not None:
            raise BadInput("the auto-split simulation replays the stream in one pass; it cannot take keys by position")
        # The regions change as the stream splits them: the simulator counts per region; only
        # the key statistics are gathered here.
        if len(keys) == 0:
            return
        self._sim.feed(keys, times)
        lengths = keys.lengths if isinstance(keys, KeyArray) else np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
        self._lengths.update(lengths)
        self._order.update(keys, self._sim_fed)
        self._sim_fed += len(keys)

    def merge(self, other: Analyzer) -> None:
        """Add what another Analyzer (same regions, windows and ``total_rows``) counted."""
        if self._sim is not None or other._sim is not None:
            raise BadInput("auto-split analyses cannot be merged; run them in one pass")
        if other._rmap != self._rmap:
            raise BadInput("only analyzers over the same regions merge")
        self._rows += other._rows
        self._key_bytes += other._key_bytes
        self._lengths.merge(other._lengths)
        self._order.merge(other._order)
        self._timeline.merge(other._timeline)
        self._moments[-1][1].merge(other._moments[-1][1])

    def _count(self, keys: Sequence[bytes] | KeyArray, positions: np.ndarray | None = None) -> None:
        if len(keys) == 0:
            return
        if not isinstance(keys, KeyArray):
            keys = KeyArray.from_keys(keys if isinstance(keys, list) else list(keys))
        idx = self._rmap.assign(keys)
        lengths = keys.lengths
        n = len(self._rows)
        self._rows += np.bincount(idx, minlength=n)
        self._key_bytes += np.bincount(idx, weights=lengths, minlength=n).astype(np.int64)
        self._lengths.update(lengths)
        start = self._timeline.rows
        self._order.update(keys, start, positions)
        self._timeline.update(idx, positions)
        pos = np.arange(start, start + len(idx), dtype=np.int64) if positions is None else positions
        for _, m in self._moments:
            m.update(idx, pos)
        if self.total_rows is None:
            rows = self._timeline.rows
            want = moment_rows(rows, n)
            if want >= 4 * self._moments[-1][1].width:
                self._moments = [self._moments[-1], (rows, Moments(want, n, self._server_of))]

    def _verdict_moments(self, rows: int) -> Moments:
        """The moments the verdict reads: the widest accumulator that has seen at least half the
        rows (with the stream's length known there is only one, and it has seen them all)."""
        (_, first), *rest = self._moments
        for started, m in rest:
            if rows - started >= rows / 2:
                return m
        return first

    def finish(
        self,
        *,
        name: str = "",
        hints: SchemaHints | None = None,
        schema_text: str | None = None,
        lint: Sequence[str] = (),
        source: str = "",
        write_order: WriteOrder | None = None,
    ) -> Analysis:
        """Compute the statistics and the verdict for everything seen so far. ``write_order``:
        the keys' order measured elsewhere (a live table's sampled keys in their real write
        order), instead of the order of the stream given, whose keys then stand for many rows."""
        auto = None
        live_hot: np.ndarray | None = None
        live_server_hot: np.ndarray | None = None
        history: SplitHistory | None = None
        if self._sim is not None:
            history = self._sim.finish()
            self._rmap = history.region_map
            self._rows, self._key_bytes = history.rows, history.key_bytes
            heat = history.heat
            live_hot = history.window_hot_shares
            live_server_hot = history.window_server_hot_shares
            auto = history.to_dict()
            auto["split_rows"] = self.auto_split_rows
        else:
            heat = self._timeline.matrix()
        rows = int(self._rows.sum())
        if rows == 0:
            raise BadInput("no keys to analyze: the workload or key file produced zero rows")
        rmap = self._rmap
        R = len(rmap)
        server_of = rmap.server_of(self.servers)
        server_heat = by_server(heat, server_of, self.servers)
        server_rows = server_heat.sum(axis=0)
        est = estimated_row_bytes(self._key_bytes, self._rows, self.cells_per_row, self.value_bytes)
        loads = [
            RegionLoad(i, s, e, int(self._rows[i]), float(self._rows[i]) / rows, int(self._key_bytes[i]), int(est[i]), int(server_of[i]))
            for i, (s, e) in enumerate(zip(rmap.starts, rmap.ends))
        ]
        total = distribution(self._rows)
        hot = hottest(heat)
        walk, chance_walk = 0.0, 0.0
        if live_hot is None:
            moments = self._verdict_moments(rows)
            moment_shares, moment_server_shares, _ = moments.shares()
            width = moments.width
            walk, chance_walk = dwell(moments.same, moments.pairs, self._rows)
            # The picture's line: per heat-map column, the mean of the moments it spans.
            shares = np.asarray([part.mean() for part in np.array_split(moment_shares, heat.shape[0]) if part.size])
            hot_region, hot_server = float(moment_shares.mean()), float(moment_server_shares.mean())
        else:
            window_rows = heat.sum(axis=1)
            width = int(window_rows[window_rows > 0].mean())
            shares = live_hot
            hot_region = float(shares.mean())
            hot_server = float((live_server_hot if live_server_hot is not None else shares).mean())
        # With auto-split the yardstick is still a table pre-split into the final regions: the
        # windows before the splits caught up are exactly what pre-splitting would avoid.
        baseline = chance_top_share(width, R)
        ev = Evidence(
            rows=rows,
            regions=R,
            total=total,
            total_baseline=uniform_baseline(rows, R),
            hot_window_share=hot_region,
            hot_window_baseline=baseline,
            hot_direction=moving_direction(hot),
            hot_regions_seen=len(set(hot.tolist())),  # (np.unique imports numpy.ma: ~20 ms of every analyze's start-up)
            hottest_label=loads[int(np.argmax(self._rows))].label,
            hottest_edge=int(np.argmax(self._rows)) in (0, R - 1),
            increasing=(write_order or self._order).increasing,
            decreasing=(write_order or self._order).decreasing,
            servers=self.servers,
            servers_assumed=self.servers_assumed,
            hot_window_server_share=hot_server,
            moment_rows=width,
            walk=walk,
            walk_chance=chance_walk,
            hints=hints or SchemaHints(),
        )
        v = judge(ev)
        reasons = list(v.reasons)
        if history is not None and auto is not None and (auto["splits"] or (history.model is not None and history.model.policy != "rows")):
            # With HBase's model the time in each region count is the point, splits or not.
            reasons.append(split_summary(history, self.auto_split_rows))
        if history is not None and auto is not None and auto["splits"]:
            monotonic = ev.increasing >= 0.9 or ev.decreasing >= 0.9 or ev.hints.monotonic_field is not None
            if monotonic:
                # Each split of a monotonic key leaves a cold lower half behind and the writes
                # move on to the upper daughter: pre-splitting the same key range changes nothing.
                v.advice.append(
                    "Auto-split cannot spread a monotonic key: each split leaves a cold lower half "
                    "and the writes move on to the new last region; salt the key first, then "
                    "pre-split on the buckets."
                )
            elif auto["initial_regions"] < auto["final_regions"]:
                v.advice.append(
                    f"Pre-split to {auto['final_regions']} regions up front (the layout auto-split "
                    f"ends with) so the first {auto['first_split_write']:,} writes do not queue on "
                    f"{auto['initial_regions']} region(s)."
                )
        return Analysis(
            name=name,
            rows=rows,
            regions=loads,
            servers=self.servers,
            servers_assumed=self.servers_assumed,
            server_rows=server_rows,
            distribution=total,
            server_distribution=distribution(server_rows),
            key_length_min=int(self._lengths.min or 0),
            key_length_mean=self._lengths.mean,
            key_length_max=int(self._lengths.max or 0),
            key_bytes=int(self._lengths.total),
            cells_per_row=self.cells_per_row,
            value_bytes=self.value_bytes,
            key_overhead_bytes=key_overhead_bytes(self._lengths.total, self.cells_per_row),
            heat=heat,
            window_hot_shares=shares,
            hot_window_share=ev.hot_window_share,
            hot_window_server_share=ev.hot_window_server_share,
            hot_window_baseline=baseline,
            increasing_fraction=ev.increasing,
            decreasing_fraction=ev.decreasing,
            verdict=v.verdict,
            reasons=reasons,
            advice=list(v.advice),
            schema_text=schema_text,
            lint=list(lint),
            source=source,
            auto_split=auto,
            moment_rows=width if live_hot is None else 0,
            walk=walk,
            walk_chance=chance_walk,
        )


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


def split_summary(history: SplitHistory, split_rows: int | None = None) -> str:
    """One sentence on how a simulated table split: how many splits, and how long it stayed in
    its first few region counts (the cost of not pre-splitting, in seconds when times are known)."""
    m = history.model
    first = history.splits[0] if history.splits else None
    start = len(history.initial_splits) + 1
    if m is None or m.policy == "rows":
        how = f"at {split_rows or (m.max_rows if m else 0):,} rows"
    else:
        how = f"{m.policy} policy, MAX_FILESIZE {_mib(m.max_filesize)}, flush {_mib(m.flush_size)}" + (
            f", {m.write_rate:,.0f} rows/s" if m.write_rate else ""
        )
    text = f"Auto-split from {start} region(s) ({how}): {len(history.splits)} split(s), {len(history.region_map)} regions at the end"
    if first is not None:
        text += f"; the first split after {first.write_index + 1:,} writes"
        if first.seconds is not None:
            text += f" ({first.seconds:.1f} s)"
    if history.seconds is not None and history.seconds > 0:
        spans = []
        for stage in history.stages[:4]:
            share = 100 * (stage.seconds or 0.0) / history.seconds
            spans.append(f"{stage.regions} region(s) for {stage.seconds or 0.0:.1f} s ({share:.0f} %)")
        more = ", ..." if len(history.stages) > 4 else ""
        text += "; the table had " + ", ".join(spans) + more + f" of the {history.seconds:.1f} s run"
    shares, ends = history.window_hot_shares, history.window_seconds
    if shares.size and ends.size == shares.size:
        first_second = shares[: max(1, int(np.searchsorted(ends, 1.0)))]
        text += (
            f"; the busiest region took {100 * float(first_second.mean()):.0f} % of the writes in "
            f"the first second and {100 * float(shares.mean()):.0f} % on average"
        )
    return text + "; until a split, its region took every write to its range."


def analyze(
    keys: Iterable[bytes] | Iterable[Sequence[bytes]],
    regions: RegionMap | Sequence[bytes],
    *,
    servers: int | None = None,
    windows: int = 50,
    total_rows: int | None = None,
    auto_split_rows: int | None = None,
    value_bytes: int = 100,
    cells_per_row: int = 1,
    name: str = "",
    hints: SchemaHints | None = None,
    progress: Progress | None = None,
    split_model: SplitModel | None = None,
) -> Analysis:
    """Analyze row keys in write order against the regions of ``regions`` (split keys or a map).

    ``keys`` is a flat sequence of ``bytes`` or an iterable of chunks of keys (what
    ``keyshape.workload`` and ``read_keys`` yield). Windows are cut by row count: exact when
    ``total_rows`` is given or ``keys`` is a flat sequence, otherwise by doubling fine bins (see
    ``Timeline``). With
    ``split_model`` the table starts at ``regions`` and splits as HBase would at the model's
    write rate (``keyshape.core.splitsim``); ``auto_split_rows`` is the idealized model (a region
    splits at its sampled median key once it holds more rows than that, no flush or delay). Either
    way memory stays O(regions x windows).
    ``servers`` region servers host the regions round-robin (None: DEFAULT_SERVERS, assumed). ``value_bytes`` (per row) and
    ``cells_per_row`` feed the byte estimates. ``progress`` is called with the number of keys done
    after each chunk. ``windows`` is the number of write-order windows of the heat map (default 50);
    ``name`` names the analysis in reports; ``hints`` (what the schema says about its key, e.g.
    which fields only grow) let the verdict name the cause and the fix.
    """
    if total_rows is None and isinstance(keys, (list, tuple, np.ndarray)) and (len(keys) == 0 or not isinstance(keys[0], (list, tuple, np.ndarray))):
        total_rows = len(keys)  # a flat sequence: windows can be exact
    acc = Analyzer(
        regions,
        servers=servers,
        windows=windows,
        total_rows=total_rows,
        auto_split_rows=auto_split_rows,
        value_bytes=value_bytes,
        cells_per_row=cells_per_row,
        split_model=split_model,
    )
    done = 0
    for chunk in _chunks(keys):
        acc.update(chunk)
        done += len(chunk)
        if progress is not None:
            progress(done)
    return acc.finish(name=name, hints=hints)
