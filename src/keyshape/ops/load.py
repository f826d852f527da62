"""Load a schema's workload into its live table and compare where the writes went with the
prediction: the whole of ``keyshape load``, callable from Python.

``load_table`` creates the table when it is missing (pre-split at the schema's split keys and
verified, as ``keyshape create``), writes the workload in acknowledged batches while polling the
region loads (so regions that split during the load are followed), waits for the region servers to
report the writes, reconciles writes no counter saw with the loader's own count, and judges the
live counts beside the analyzer's prediction for the same rows and seed. It returns a
:class:`LoadRun`; the CLI prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from keyshape.analysis import Analysis
from keyshape.analysis.designs import analyze_schema, schema_hints, with_key_labels
from keyshape.errors import BadInput
from keyshape.ops.live import (
    LiveHeat,
    LoadResult,
    ServerShare,
    live_analysis,
    load_workload,
    poller,
    shares_by_region,
    shares_by_server,
    wait_for_writes,
)
from keyshape.schema import KeySchema
from keyshape.store.base import RegionInfo, Store
from keyshape.workload import WorkloadSpec

__all__ = ["LoadRun", "load_table", "write_workload"]


@dataclass(frozen=True)
class LoadRun:
    """What :func:`load_table` did and saw.

    - ``table``: the table loaded; ``rows``: the rows asked for; ``settle``: the seconds given to
      the region servers to report the writes.
    - ``created``: the table's regions when this load created it (read back and verified), else None.
    - ``result``: the writes (rows acknowledged, throughput, the longest wait for a batch).
    - ``heat``: every poll of the region loads, from before the first write to the settle.
    - ``live``: the analyzer's verdict on the live write counts, with key labels from the schema.
    - ``predicted``: the analyzer's verdict on the same rows and seed, without a cluster.
    - ``predicted_shares``: each predicted region's share, by its start key.
    - ``servers``: each region server's share of the live writes.
    - ``counted``: the writes the region loads show (``live.rows``); fewer than ``result.rows``
      when a region took writes just before it split or moved (in no counter).
    - ``estimated``: writes attributed to regions that split before reporting them.
    - ``reconciled``: writes the counters missed, attributed from the loader's own total to the
      regions that split (negative when estimates were taken back; 0 when none: then the
      ``estimated`` writes are estimates).
    - ``retries``: transient errors the store retried during the load.
    - ``servers_seen``: the region servers holding the table's regions at the last poll.
    """

    table: str
    rows: int
    settle: float
    created: list[RegionInfo] | None
    result: LoadResult
    heat: LiveHeat
    live: Analysis
    predicted: Analysis
    predicted_shares: dict[bytes, float]
    servers: list[ServerShare]
    counted: int
    estimated: int
    reconciled: int
    retries: int = 0
    servers_seen: list[str] = field(default_factory=list)


def load_table(
    store: Store,
    schema: KeySchema,
    rows: int | None = None,
    *,
    batch_size: int = 1000,
    seed: int = 0,
    settle: float = 15.0,
    source: str = "",
    progress: Callable[[int, int], None] | None = None,
    on_created: Callable[[list[RegionInfo]], None] | None = None,
) -> LoadRun:
    """Write ``schema``'s workload into its table on ``store`` and judge the live spread.

    - ``rows``: rows to write; default the schema's ``[workload] rows`` (100,000 when it has a
      ``[workload]`` section without rows). Without either, :class:`~keyshape.errors.BadInput`.
    - ``batch_size``: rows per acknowledged batch (default 1000).
    - ``seed``: the workload's seed (default 0); the prediction uses the same rows and seed.
    - ``settle``: seconds to wait, at most, for the region servers to report the writes in their
      region loads (default 15).
    - ``source``: where the counts come from, as the live analysis says it (e.g. "HBase at zk:2181").
    - ``progress(done, rows)``: called after each batch with the rows acknowledged so far (also
      what was stored when a KeyboardInterrupt ends the load early).
    - ``on_created(regions)``: called when the table did not exist and was created, before the
      first write.

    The store stays open: the caller closes it. A batch that cannot be written raises
    :class:`~keyshape.errors.WriteFailed` naming the rows not stored.
    """
    from keyshape.store import create_table_from_schema

    if schema.workload is None and rows is None:
        raise BadInput(f"{schema.table.full_name}: the schema has no [workload] section to generate rows from; add one or pass rows (--rows N)")
    if rows is None:
        rows = WorkloadSpec.of(schema.workload).rows
    table = schema.table.full_name
    created = None
    if not store.table_exists(table):
        created = create_table_from_schema(store, schema)
        if on_created is not None:
            on_created(created)
    baseline = store.regions(table)
    # Polled every second during the load, so regions that split are followed (a parent's
    # counters vanish with it) and every write is counted once.
    heat = LiveHeat()
    heat.add(baseline)
    poll = poller(store, table, heat, 1.0)

    def each_batch(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total)
        poll()

    result = load_workload(store, schema, rows, batch_size, progress=each_batch, seed=seed)
    retries = int(getattr(store, "retry_count", 0))
    wait_for_writes(store, table, baseline, result.rows, timeout=settle, heat=heat)
    # Writes a region took between its last load report and its split are in no counter; the
    # loader knows its own count, so they go to the regions that split, on their key ranges.
    reconciled = heat.reconcile(result.rows + len(result.failed))
    live = with_key_labels(live_analysis(heat, name=table, hints=schema_hints(schema), source=source), schema)
    predicted = analyze_schema(schema, rows, seed=seed, windows=1)
    return LoadRun(
        table=table,
        rows=rows,
        settle=settle,
        created=created,
        result=result,
        heat=heat,
        live=live,
        predicted=predicted,
        predicted_shares=dict(shares_by_region(predicted)),
        servers=shares_by_server(heat, live),
        counted=int(live.rows),
        estimated=sum(s.estimated_writes for s in heat.samples),
        reconciled=reconciled,
        retries=retries,
        servers_seen=list(dict.fromkeys(r.server for r in heat.latest)),
    )


def write_workload(store: Store, schema: KeySchema, rows: int) -> int:
    """Write ``rows`` rows of the schema's ``[workload]`` into its (existing) table, one small cell
    each: a quick fill to try the read path on (``keyshape scan --load-rows``), no timing.

    store: the store holding ``schema``'s table.
    schema: the key schema whose workload generates the rows and whose first family gets the cell.
    rows: how many rows to write (>= 1).

    Returns the rows written. Each row's cell ``FAMILY:v`` holds ``x`` repeated the schema's
    ``value_bytes`` (default 100), at most 64 bytes.
    """
    from keyshape.workload import generate

    family = schema.table.families[0].name.encode()
    given = WorkloadSpec.of(schema.workload).value_bytes  # None: the schema sets no value size
    value = b"x" * min(100 if given is None else given or 1, 64)
    n = 0
    with store.writer(schema.table.full_name) as w:
        for chunk in generate(schema, rows=rows):
            for key in schema.encode_many(chunk):
                w.put(key, {family + b":v": value})
                n += 1
    return n
