"""A live table: load a schema's workload into a store, and watch its regions' request counters.

- ``load_workload`` writes the schema's generated workload through ``store.writer`` in batches and
  reports how many rows were acknowledged (their batch's flush returned), how fast, and which were
  not.
- ``LiveHeat`` (``keyshape.ops.liveheat``) turns successive ``store.regions(table)`` snapshots
  into request DELTAS per poll, following region lineage across splits, merges and reopened
  regions so no write is lost or counted twice beyond one polling interval; ``watch`` polls a
  store into one.
- ``live_analysis`` judges such a matrix with the analyzer's statistics and verdict and returns an
  ``Analysis``, so the same terminal, HTML and PNG reports draw a LIVE table.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.analysis import Analysis, RegionLoad
from keyshape.analysis.stats import chance_top_share, distribution, uniform_baseline
from keyshape.analysis.timeline import by_server, hottest, moving_direction
from keyshape.analysis.verdict import Evidence, SchemaHints, judge
from keyshape.errors import BadInput, StoreError, WriteFailed
from keyshape.ops.liveheat import METRICS, LiveHeat, Sample, Vanished
from keyshape.schema import KeySchema
from keyshape.store.base import BatchWriter, RegionInfo, Store
from keyshape.workload import LOAD_QUALIFIER, LOAD_VALUE_BYTES, WorkloadSpec, row_value_bytes, row_values

__all__ = [
    "METRICS",
    "LiveHeat",
    "LoadResult",
    "Sample",
    "ServerShare",
    "Vanished",
    "count_rows",
    "live_analysis",
    "load_workload",
    "poller",
    "row_value",
    "shares_by_region",
    "shares_by_server",
    "wait_for_writes",
    "watch",
]


# --------------------------------------------------------------------------------------- load


@dataclass(frozen=True)
class LoadResult:
    """What ``load_workload`` did. ``rows`` counts acknowledged rows only (their batch flushed);
    ``failed`` lists the rows of every batch that was not acknowledged (some of them may still
    have been stored: a write can land while its acknowledgement is lost).

    - ``table``: the table written; ``requested``: the rows asked for; ``seconds``: the load's time.
    - ``errors``: the message of each failed batch.
    - ``longest_wait``: the longest wait between two acknowledged batches (or from the start to
      the first) and ``longest_wait_ended`` the wall-clock time (epoch seconds) it ended: after a
      region server crash, when the first batch after the crash was acknowledged.
    """

    table: str
    rows: int
    requested: int
    seconds: float
    failed: list[bytes] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    longest_wait: float = 0.0
    longest_wait_ended: float = 0.0

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


def row_value(index: int, size: int = LOAD_VALUE_BYTES) -> bytes:
    """The value ``load_workload`` stores for the ``index``-th row of the workload: the index as an
    8-byte big-endian long (so a reader can tell which write a cell came from), padded to the
    schema's ``[workload] value_bytes`` when it sets one (``keyshape.workload.row_values``):
    ``size`` bytes in all."""
    return row_values(index, 1, size)[0]


def load_workload(
    store: Store,
    schema: KeySchema,
    rows: int | None = None,
    batch_size: int = 1000,
    progress: Callable[[int, int], None] | None = None,
    *,
    seed: int = 0,
    family: str | None = None,
    keep_going: bool = False,
    chunk_rows: int = 100_000,
) -> LoadResult:
    """Write ``rows`` rows of the schema's workload (default: its ``[workload] rows``) into the
    schema's table, in write order, and return a ``LoadResult``.

    Keys come from ``keyshape.workload.generate(schema, rows, seed)`` encoded with
    ``schema.encode_many``, exactly the keys ``analyze_schema`` assigns for the same rows and
    seed. Each row gets one cell ``<family>:v`` (``family`` default: the schema's first) holding
    ``row_value(i)``: ``[workload] value_bytes`` bytes, else the 8-byte write index (the cell
    ``analyze --auto-split`` simulates). Rows go through one ``store.writer(table, batch_size)``, which keeps
    batches in flight while the next is built (HBase: two, like the Java client's
    ``BufferedMutator``); ``progress(done, rows)`` is called after each batch with the rows the
    store has acknowledged (its ``written`` count) plus those that failed, so it trails the
    rows sent by the batches still in flight, and never counts a row not stored.

    When a write fails (``WriteFailed`` naming exactly the rows not written, or any
    ``StoreError`` opening the writer, which fails that batch whole): with ``keep_going=False``
    (default) ``WriteFailed`` is raised with those rows, its message saying how many rows were
    acknowledged; with ``keep_going=True`` they go to ``LoadResult.failed`` and loading
    continues. The table must exist. ``batch_size``: rows per batch (default 1000); ``seed``: the
    workload's seed (default 0); ``chunk_rows``: rows generated at a time (memory, not keys).
    """
    from keyshape.workload import generate

    if batch_size < 1:
        raise BadInput(f"batch size must be at least 1, got {batch_size}")
    if rows is None:
        rows = WorkloadSpec.of(schema.workload).rows
    if rows < 1:
        raise BadInput(f"rows must be at least 1, got {rows}")
    table = schema.table.full_name
    names = [f.name for f in schema.table.families]
    family = family or names[0]
    if family not in names:
        raise BadInput(f"table {table!r} has no column family {family!r}; its families are: " + ", ".join(names))
    column = family.encode() + b":" + LOAD_QUALIFIER
    value_size = row_value_bytes(schema.workload)  # what the split simulation assumes too
    failed: list[bytes] = []
    errors: list[str] = []
    writer: BatchWriter | None = None
    started = time.perf_counter()
    last_ack, longest_wait, longest_wait_ended = started, 0.0, 0.0
    acked = 0

    def acknowledged() -> int:
        return writer.written if writer is not None else 0

    def fail(exc: StoreError, lost: Sequence[bytes]) -> None:
        failed.extend(lost)
        errors.append(str(exc))
        if keep_going:
            return
        if writer is not None:
            # Rows already handed to the writer are sent before giving up, so that every row up
            # to here is either acknowledged or named in the error: none is left in doubt.
            try:
                writer.flush()
            except WriteFailed as late:
                failed.extend(late.rows)
        raise WriteFailed(
            f"{errors[0]} ({acknowledged():,} row(s) of {rows:,} acknowledged, {len(failed):,} not written, the rest not sent)", failed
        ) from exc

    index = 0
    for columns in generate(schema, rows, seed=seed, chunk_rows=chunk_rows):
        keys = schema.encode_many(columns)
        for lo in range(0, len(keys), batch_size):
            batch = keys[lo : lo + batch_size]
            if writer is None:
                try:
                    writer = store.writer(table, batch_size=batch_size)
                except StoreError as exc:  # nothing of this batch can be sent
                    fail(exc, batch)
            if writer is not None:
                put = writer.put
                todo = iter(range(len(batch)))
                values = row_values(index, len(batch), value_size)
                while True:
                    try:
                        for at in todo:
                            put(batch[at], {column: values[at]})
                        break
                    except WriteFailed as exc:
                        # an earlier batch failed in the background; the row whose put raised
                        # it is buffered all the same, so go on with the next one
                        fail(exc, exc.rows)
            index += len(batch)
            now_acked = acknowledged()
            if now_acked > acked:
                now = time.perf_counter()
                if now - last_ack > longest_wait:
                    longest_wait, longest_wait_ended = now - last_ack, time.time()
                last_ack, acked = now, now_acked
            if progress is not None:
                progress(now_acked + len(failed), rows)
    if writer is not None:
        try:
            writer.flush()
        except WriteFailed as exc:
            fail(exc, exc.rows)
    acked = acknowledged()
    if progress is not None:
        progress(acked + len(failed), rows)
    return LoadResult(table, acked, rows, time.perf_counter() - started, failed, errors, longest_wait, longest_wait_ended)


# ----------------------------------------------------------------------------------- watch


COUNT_AT_START_BYTES = 64 * 2**20  # watch counts the rows of regions up to this size as it begins


def count_rows(store: Store, table: str, region: RegionInfo) -> int:
    """The rows of ``region`` of ``table`` in ``store``, by a key-only scan (no values cross the
    wire)."""
    return sum(len(keys) for keys, _ in store.scan_key_times(table, region.start, region.end, batch_size=5000))


def watch(
    store: Store,
    table: str,
    interval: float = 5.0,
    samples: int | None = None,
    *,
    duration: float | None = None,
    on_sample: Callable[[Sample], Any] | None = None,
    heat: LiveHeat | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    count_splits: bool = True,
) -> LiveHeat:
    """Poll the regions of ``table`` (``store.regions``) every ``interval`` seconds into a
    ``LiveHeat`` and return it (``sleep`` waits and ``clock`` times, in seconds: tests give their
    own).

    With ``count_splits`` (the default) the rows of every region a split or merge made are
    counted by key-only scans as soon as a poll finds it, and the table is polled again at once
    (a sample of its own), so the heat map can deal a split parent's writes to its daughters as
    they hold them (``LiveHeat.note_counts``); the regions of up to
    :data:`COUNT_AT_START_BYTES` are counted at the baseline too (what they held before the
    watch). Without it a parent's writes are shared equally (HBase splits at the data's middle).

    Stops after ``samples`` deltas (polls after the baseline) or once ``duration`` seconds have
    passed since the baseline, whichever comes first; with neither, runs until interrupted.
    Ctrl-C (KeyboardInterrupt) ends the watch early and returns what was gathered. ``on_sample``
    is called with each ``Sample``; returning ``False`` from it stops the watch. Pass ``heat`` to
    continue an earlier watch (its last poll is the baseline). Raises ``TableNotFound`` when the
    table is missing.
    """
    if interval <= 0:
        raise BadInput(f"interval must be positive seconds, got {interval}")
    if samples is not None and samples < 1:
        raise BadInput(f"samples must be at least 1, got {samples}")
    heat = heat if heat is not None else LiveHeat()
    taken = 0
    try:
        if heat._last is None:
            heat.add(store.regions(table), clock())
            if count_splits:
                heat.note_counts({r.name: count_rows(store, table, r) for r in heat.latest if r.store_size_bytes <= COUNT_AT_START_BYTES})
        begun = clock()
        while samples is None or taken < samples:
            if duration is not None and clock() - begun >= duration:
                break
            sleep(interval)
            sample = heat.add(store.regions(table), clock())
            taken += 1
            if on_sample is not None and sample is not None and on_sample(sample) is False:
                break
            stop = False
            # Until a poll finds no new region: a split that ends while the daughters of the
            # last one are counted (a slow scan on a busy server) has daughters of its own to count.
            while count_splits and heat.born and (samples is None or taken < samples):
                # the daughters' rows now, then a poll at once: the writes during the count
                # are that poll's (half of them are taken to have come before the count ended)
                heat.note_counts({r.name: count_rows(store, table, r) for r in heat.born})
                sample = heat.add(store.regions(table), clock())
                taken += 1
                if on_sample is not None and sample is not None and on_sample(sample) is False:
                    stop = True
                    break
            if stop:
                break
    except KeyboardInterrupt:
        pass
    return heat


def wait_for_writes(
    store: Store,
    table: str,
    baseline: Sequence[RegionInfo],
    writes: int,
    timeout: float = 15.0,
    interval: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    heat: LiveHeat | None = None,
) -> list[RegionInfo]:
    """Poll the regions of ``table`` in ``store`` (every ``interval`` seconds, waiting with
    ``sleep`` and timing with ``clock``) until their write counters have grown by at least
    ``writes`` since ``baseline`` (a store whose counters lag its writes, such as the master's
    copy when a region server does not answer, catches up meanwhile), or ``timeout`` seconds
    pass; returns the last poll either way.

    With ``heat`` (already holding ``baseline`` and any polls since, e.g. from ``poller``) every
    poll is added to it and its counted writes are what must reach ``writes``: that follows
    regions that split meanwhile, which a comparison with ``baseline`` alone cannot."""
    deadline = clock() + timeout
    while True:
        regions = store.regions(table)
        if heat is not None:
            heat.add(regions, clock())
            counted = sum(s.total_writes for s in heat.samples)
        else:
            probe = LiveHeat()
            probe.add(baseline, 0.0)
            sample = probe.add(regions, 1.0)
            counted = sample.total_writes if sample is not None else 0
        if counted >= writes or clock() >= deadline:
            return regions
        sleep(interval)


def poller(store: Store, table: str, heat: LiveHeat, interval: float = 1.0, clock: Callable[[], float] = time.monotonic) -> Callable[[], None]:
    """A function that adds a poll of ``table``'s regions to ``heat`` when ``interval`` seconds
    have passed since its last call that polled; call it often (a load's progress callback), so
    regions that split during the load are followed with at most ``interval`` seconds between
    polls. ``store`` holds ``table``; ``clock`` gives the time in seconds (monotonic)."""
    last = [clock()]

    def poll() -> None:
        now = clock()
        if now - last[0] >= interval:
            heat.add(store.regions(table), now)
            last[0] = now

    return poll


# -------------------------------------------------------------------------------- verdict


def live_analysis(heat: LiveHeat, name: str = "", metric: str = "write", hints: SchemaHints | None = None, source: str = "") -> Analysis:
    """Judge a live matrix (``heat``) like the analyzer judges a simulated one, as an ``Analysis``
    named ``name``, with the schema's ``hints`` (what its key says, for the verdict's causes) and
    ``source`` (where the counts come from) in it.

    Regions are the latest poll's; a region's ``rows`` is the ``metric`` requests of the watch
    that landed in its key range (one write request per put, as HBase's RegionLoad counts them;
    ``count_label`` says so), those of regions that split since placed as ``LiveHeat.matrix``
    places them; ``bytes`` is the store size last
    reported; servers are the distinct server names, numbered in key order of first appearance.
    Key lengths and write order are unknown from counters, so they are reported as 0. Raises
    ``KeyshapeError`` when no request was counted.
    """
    heat_m = heat.matrix(metric)
    if heat_m.shape[0] == 0:
        raise BadInput("no samples yet: watch needs at least two polls of the table")
    totals = heat_m.sum(axis=0)
    rows = int(round(float(totals.sum())))
    if rows == 0:
        raise BadInput(f"no {metric} requests were counted on {name or 'the table'} while watching; write to it (keyshape load) or watch longer")
    latest = heat.latest
    server_ids: dict[str, int] = {}
    for r in latest:
        server_ids.setdefault(r.server, len(server_ids))
    server_of = np.array([server_ids[r.server] for r in latest], dtype=np.int64)
    servers = len(server_ids)
    loads = [
        RegionLoad(i, r.start, r.end, int(round(float(totals[i]))), float(totals[i]) / rows, 0, int(r.store_size_bytes), int(server_of[i]))
        for i, r in enumerate(latest)
    ]
    R = len(latest)
    total = distribution(totals)
    server_heat = by_server(heat_m, server_of, servers)
    # Each interval is judged by the regions that existed then (a split parent is one region),
    # never by the later layout its writes are projected onto for the heat map.
    # Polls do not split writes evenly (a poll can land just after a load's last few puts), so
    # each interval weighs by its requests against the chance level of its own size: three
    # writes in one region at the end of a load are not a hot moment.
    shares, server_shares, window_rows, window_regions = heat.sample_shares(metric)
    weights = window_rows / window_rows.sum()
    chance = np.array([chance_top_share(int(round(n)), int(k)) for n, k in zip(window_rows, window_regions)])
    baseline = float(np.dot(weights, chance))
    hot_index = int(np.argmax(totals))
    hot = hottest(heat_m)
    ev = Evidence(
        rows=rows,
        regions=R,
        total=total,
        total_baseline=uniform_baseline(rows, R),
        hot_window_share=float(np.dot(weights, shares)),
        hot_window_baseline=baseline,
        hot_direction=moving_direction(hot),
        hot_regions_seen=int(np.unique(hot).size),
        hottest_label=loads[hot_index].label,
        hottest_edge=hot_index in (0, R - 1),
        increasing=0.0,
        decreasing=0.0,
        servers=servers,
        hot_window_server_share=float(np.dot(weights, server_shares)),
        single_region_share=float(weights[window_regions == 1].sum()),
        hints=hints or SchemaHints(),
    )
    v = judge(ev)
    return Analysis(
        name=name,
        rows=rows,
        regions=loads,
        servers=servers,
        server_rows=server_heat.sum(axis=0),
        distribution=total,
        server_distribution=distribution(server_heat.sum(axis=0)),
        key_length_min=0,
        key_length_mean=0.0,
        key_length_max=0,
        key_bytes=0,
        cells_per_row=1,
        value_bytes=0,
        key_overhead_bytes=0,
        heat=heat_m,
        window_hot_shares=shares,
        hot_window_share=ev.hot_window_share,
        hot_window_server_share=ev.hot_window_server_share,
        hot_window_baseline=baseline,
        increasing_fraction=0.0,
        decreasing_fraction=0.0,
        verdict=v.verdict,
        reasons=list(v.reasons) + _split_note(heat, metric),
        advice=list(v.advice),
        source=source,
        count_label=f"{metric} requests",
    )


def _split_note(heat: LiveHeat, metric: str) -> list[str]:
    """How the writes of regions that split during the watch were placed on today's regions."""
    counted, splits = heat.split_counts
    if not splits or metric != "write":
        return []
    if counted == splits:
        return [
            f"{splits} split(s) during the watch: each split's daughters were counted (key-only "
            "scans) when seen, and the parent's writes placed as they hold them."
        ]
    return [
        f"{splits} split(s) during the watch, {counted} with their daughters counted: the "
        f"writes of the other {splits - counted} are ESTIMATED on today's regions (half to each "
        "daughter, as HBase splits at the middle of the data)."
    ]


def shares_by_region(analysis: Analysis) -> Mapping[bytes, float]:
    """``{region start key: share}`` of ``analysis``, to line a live table up with a prediction."""
    return {r.start: r.share for r in analysis.regions}


@dataclass(frozen=True)
class ServerShare:
    """One region server's part of a live analysis: the ``server``, how many of the table's
    ``regions`` it holds now, the ``requests`` counted on them, and that count's ``share`` of the
    table's."""

    server: str
    regions: int
    requests: int
    share: float


def shares_by_server(heat: LiveHeat, analysis: Analysis) -> list[ServerShare]:
    """Per-server totals of ``analysis`` (``live_analysis`` of the live ``heat``), busiest first.
    A region's requests count for the server it was on at the last poll (the analysis numbers
    servers in that order); requests a crashed server took are lost with its counters, as in
    HBase's RegionLoad."""
    names = list(dict.fromkeys(r.server for r in heat.latest))
    regions = [0] * len(names)
    for r in analysis.regions:
        regions[r.server] += 1
    total = float(np.sum(analysis.server_rows)) or 1.0
    out = [
        ServerShare(name, regions[i], int(round(float(analysis.server_rows[i]))), float(analysis.server_rows[i]) / total)
        for i, name in enumerate(names)
    ]
    return sorted(out, key=lambda s: (-s.requests, s.server))
