"""Multi-region scans, forward and reverse, with exact HBase bounds.

hbase-driver's ``ResultScanner`` ends at the first empty region and cannot cross regions in
reverse (CLIENTS.md bug 3), ignores ``limit`` and includes the stop row (bug 4). Here a scan
walks the table's regions itself: it opens one server-side scanner per region, clamped to the
region's ``[start, end)``, reads ``batch_size`` rows per RPC, then moves to the next region up
(forward) or down (reverse). After a transient failure it re-reads the region map and resumes
just past the last row it returned, so no row is returned twice or skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import Any

from hbasedriver.protobuf_py import Client_pb2, Filter_pb2

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import StoreError
from keyshape.store.base import split_table_name
from keyshape.store.hbase import cellblock
from keyshape.store.hbase.cellblock import CellBlockError
from keyshape.store.hbase.client import HBaseClient, cells_of
from keyshape.store.hbase.errors import ConnectionLost, ServerError
from keyshape.store.hbase.framing import RpcConnection
from keyshape.store.hbase.regions import Region

Bound = tuple[bytes | None, bool]  # (key or None for unbounded, inclusive)
Rows = Iterator[tuple[bytes, Any]]
Batch = tuple[list[bytes], list[Any]]  # (row keys, converted rows): Store.scan_batches' columns
# A region's rows are a generator so that a caller stopping early can close its scanner.
RegionRows = Generator[Batch, None, None]
Convert = Callable[[Client_pb2.Result], Any]

# Scanner errors after which reopening from the last returned row is correct.
_REOPEN = {"UnknownScannerException", "OutOfOrderScannerNextException", "ScannerResetException", "LeaseException"}


def versions_of(result: Client_pb2.Result) -> dict[bytes, list[tuple[int, bytes]]]:
    """``{b"family:qualifier": [(timestamp_ms, value), ...]}`` of a Result, newest first (the
    server sends a column's versions newest first)."""
    out: dict[bytes, list[tuple[int, bytes]]] = {}
    for cell in result.cell:
        out.setdefault(cell.family + b":" + cell.qualifier, []).append((cell.timestamp, cell.value))
    return out


def stamp_of(result: Client_pb2.Result) -> int:
    """The timestamp (ms) of a Result's first cell (a key-only scan's one cell per row)."""
    return int(result.cell[0].timestamp)


def version_columns_of(result: Client_pb2.Result) -> dict[bytes, list[tuple[int, bytes]]]:
    """:func:`versions_of`, as the conversion of :func:`scan_version_columns` (whose cell
    blocks are read as columns where they can be: :func:`keyshape.store.hbase.cellblock.version_columns`)."""
    return versions_of(result)


# The conversions whose rows are read from a cell block instead (the same rows: tests/hbase/test_hbase_cellblock.py).
_BLOCK_READERS: dict[Convert, Callable[[bytes, Any], tuple[list[bytes], Any]]] = {
    cells_of: cellblock.rows_of,
    versions_of: cellblock.versions_of,
    stamp_of: cellblock.stamps_of,
    version_columns_of: cellblock.version_columns,
}


def keys_only_filter() -> Filter_pb2.Filter:
    """FirstKeyOnlyFilter + KeyOnlyFilter: one empty cell per row, so a key sample moves no
    values over the wire (what ``hbase org.apache.hadoop.hbase.mapreduce.RowCounter`` uses)."""

    def named(name: str, message: Any) -> Filter_pb2.Filter:
        return Filter_pb2.Filter(name=f"org.apache.hadoop.hbase.filter.{name}", serialized_filter=message.SerializeToString())

    both = Filter_pb2.FilterList(
        operator=Filter_pb2.FilterList.MUST_PASS_ALL,
        filters=[named("FirstKeyOnlyFilter", Filter_pb2.FirstKeyOnlyFilter()), named("KeyOnlyFilter", Filter_pb2.KeyOnlyFilter(len_as_val=False))],
    )
    return named("FilterList", both)


# Calls one connection keeps in flight for scans reading ahead. HBase queues at most
# 10 x hbase.regionserver.handler.count (30) = 300 calls per call queue and refuses more
# (CallQueueTooBigException), so a merged scan over thousands of buckets must not send all its
# opening requests at once. Measured on a 100-bucket merged scan (200,000 rows): 64 in flight
# 240k rows/s, 128 259k, 256 and unbounded 253-258k (one round trip per bucket at a time: 212k).
AHEAD = 128
# What a scan generator yields first, once its first request is on the wire (see scan_batches).
_SENT: Batch = ([], [])


def _open_after(response: Client_pb2.ScanResponse) -> bool:
    """Whether the server keeps the scanner open after ``response`` (more rows in the region)."""
    in_region = response.more_results_in_region if response.HasField("more_results_in_region") else response.more_results
    return bool(response.more_results and in_region)


def _region_scan(
    conn: RpcConnection, region: Region, scan: Client_pb2.Scan, batch: int, remaining: int | None, convert: Convert = cells_of, announce: bool = False
) -> RegionRows:
    """Rows of one region's scanner, a list per response (one list comprehension per RPC, not
    a generator step per row); closes the scanner if the caller stops early.

    The next batch is asked for as soon as a response shows there is more, before this one is
    handed out, so the server reads it while the caller works on this one (the Java client's
    scanner prefetch), unless the connection already has :data:`AHEAD` calls in flight (many
    scans at once, as a merged scan's buckets: the server's call queue is bounded too); then it
    is asked for when the caller comes back. Stopping early first takes the answer in flight,
    then closes the scanner. ``announce``: yield :data:`_SENT` first (the opening request is
    sent by then, if the connection has room)."""

    def rows_wanted() -> int:
        return batch if remaining is None else max(min(batch, remaining), 1)

    request: Client_pb2.ScanRequest | None = Client_pb2.ScanRequest(region=region.spec(), scan=scan, number_of_rows=rows_wanted())
    pending: int | None = None
    if not announce or conn.in_flight < AHEAD:
        pending, request = conn.send("Scan", request), None
    scanner: int | None = None
    open_ = False  # a scanner the server keeps for us
    try:
        if announce:
            yield _SENT
        while True:
            if pending is None:
                if request is None:
                    return
                pending, request = conn.send("Scan", request), None
            call, pending = pending, None  # answered or failed: not to be taken again below
            response, block = conn.receive_with_cells(call, Client_pb2.ScanResponse)
            if scanner is None and response.HasField("scanner_id"):
                scanner, open_ = response.scanner_id, True
            if block:  # a cell-block connection: only for cells_of and versions_of (_BLOCK_READERS)
                try:
                    keys, values = _BLOCK_READERS[convert](block, response.cells_per_result)
                except CellBlockError as exc:
                    raise ConnectionLost(f"{conn.host}:{conn.port} answered a scan with cells that do not parse: {exc}") from exc
            else:
                results = [result for result in response.results if result.cell]
                keys = [result.cell[0].row for result in results]
                values = [convert(result) for result in results]
            if remaining is not None:
                del keys[remaining:], values[remaining:]
                remaining -= len(keys)
            if not _open_after(response) or scanner is None:
                open_ = False  # the server closes its scanner when it reports the end
            elif remaining is None or remaining > 0:
                request = Client_pb2.ScanRequest(scanner_id=scanner, number_of_rows=rows_wanted())
                if conn.in_flight < AHEAD:
                    pending, request = conn.send("Scan", request), None
            if keys:
                yield keys, values
    finally:
        if pending is not None:
            try:
                response = conn.receive(pending, Client_pb2.ScanResponse)  # the read-ahead
                if scanner is None and response.HasField("scanner_id"):
                    scanner = response.scanner_id
                open_ = scanner is not None and _open_after(response)
            except (ConnectionLost, ServerError):
                open_ = False  # the connection is gone, or the scanner with it
        if open_:
            try:
                conn.call("Scan", Client_pb2.ScanRequest(scanner_id=scanner, number_of_rows=0, close_scanner=True), Client_pb2.ScanResponse)
            except (ConnectionLost, ServerError):
                pass  # the lease expires on its own


def scan_rows(
    store: HBaseClient,
    table: str,
    low: Bound,
    high: Bound,
    reverse: bool,
    limit: int | None,
    columns: list[Client_pb2.Column],
    batch: int,
    *,
    max_versions: int = 1,
    filter: Filter_pb2.Filter | None = None,
    convert: Convert = cells_of,
) -> Rows:
    """Rows with ``low <= row <= high`` (each bound inclusive or not, None = unbounded),
    ascending or (``reverse``) descending, at most ``limit``. Each row comes as
    ``convert(result)`` (default: newest value per column) with up to ``max_versions`` versions
    per column read, after the server-side ``filter``."""
    batches = _scan_batches(store, table, low, high, reverse, limit, columns, batch, max_versions=max_versions, filter=filter, convert=convert)
    try:
        for keys, values in batches:
            yield from zip(keys, values)
    finally:
        batches.close()


def scan_batches(
    store: HBaseClient,
    table: str,
    low: Bound,
    high: Bound,
    reverse: bool,
    limit: int | None,
    columns: list[Client_pb2.Column],
    batch: int,
    *,
    max_versions: int = 1,
    filter: Filter_pb2.Filter | None = None,
    convert: Convert = cells_of,
) -> Generator[Batch, None, None]:
    """:func:`scan_rows` a server response at a time: non-empty ``(keys, rows)`` columns, in
    scan order.

    The first request is sent before this returns, so a reader opening many scans (a merged
    scan's buckets) has every server reading at once instead of one scan per round trip; errors
    found before that request (no such table) are raised here. Close the generator (or exhaust
    it) to release the scanner."""
    gen = _scan_batches(
        store, table, low, high, reverse, limit, columns, batch, max_versions=max_versions, filter=filter, convert=convert, announce=True
    )
    first = next(gen, None)  # None: nothing to read (a limit of 0), the generator is exhausted
    assert first is None or first is _SENT, "a scan handed out rows before announcing its first request"
    return gen


def _scan_batches(
    store: HBaseClient,
    table: str,
    low: Bound,
    high: Bound,
    reverse: bool,
    limit: int | None,
    columns: list[Client_pb2.Column],
    batch: int,
    *,
    max_versions: int = 1,
    filter: Filter_pb2.Filter | None = None,
    convert: Convert = cells_of,
    announce: bool = False,
) -> Generator[Batch, None, None]:
    namespace, name = split_table_name(table)
    store.settle_writes()
    returned = 0
    attempt = 0
    region: Region | None = None
    while limit is None or returned < limit:
        try:
            regions = store.cluster.region_list(namespace, name, refresh=attempt > 0)
            if not regions.regions:
                raise store.not_found(table)
            if reverse:
                if high[0] is None:
                    region = regions.regions[-1]
                else:
                    region = regions.at(high[0]) if high[1] else regions.below(high[0])
                r_low: Bound = low if region.start == b"" or (low[0] is not None and low[0] >= region.start) else (region.start, True)
                r_high = high
            else:
                region = regions.at(low[0] or b"")
                r_low = low
                r_high = high if region.end == b"" or (high[0] is not None and high[0] <= region.end) else (region.end, False)
            scan = Client_pb2.Scan(column=columns, max_versions=max_versions, reversed=reverse, caching=batch)
            if filter is not None:
                scan.filter.CopyFrom(filter)
            first, last = (r_high, r_low) if reverse else (r_low, r_high)
            if first[0] is not None:
                scan.start_row, scan.include_start_row = first[0], first[1]
            if last[0] is not None:
                scan.stop_row, scan.include_stop_row = last[0], last[1]
            conn = store.cluster.connection(region.host, region.port, cell_blocks=convert in _BLOCK_READERS)
            rows = _region_scan(conn, region, scan, batch, None if limit is None else limit - returned, convert, announce)
            try:
                for got in rows:
                    yield got
                    if got is _SENT:
                        announce = False
                        continue
                    returned += len(got[0])
                    attempt = 0
                    if reverse:
                        high = (got[0][-1], False)
                    else:
                        low = (got[0][-1], False)
                    if limit is not None and returned >= limit:
                        return
            finally:
                rows.close()
        except (ConnectionLost, ServerError) as exc:
            if isinstance(exc, ServerError) and not exc.relocate and exc.short_name not in _REOPEN:
                raise store.refused(exc, table, "scan") from None
            attempt += 1
            if attempt > store.retries:
                # Name the region and where the scan stood, so the caller knows what is missing
                # (a scan never ends early without saying so).
                bound = high if reverse else low
                where = f" in region {to_string_binary(region.name)!r} ({region.host}:{region.port})" if region is not None else ""
                at = f" after row {to_string_binary(bound[0])!r}" if bound[0] is not None and returned else ""
                raise StoreError(f"scan of {table!r} failed{where}{at} after {store.retries} retries: {exc}") from exc
            store.note_retry(attempt, f"scan of {table!r}", exc)
            continue
        # this region is done: stop, or move to the next one in scan order
        if reverse:
            if region.start == b"" or (low[0] is not None and low[0] >= region.start):
                return
            high = (region.start, False)
        else:
            if region.end == b"" or (high[0] is not None and high[0] <= region.end):
                return
            low = (region.end, True)


_ALL_VERSIONS = 2**31 - 1  # a Scan's max_versions for every stored version (the store's scan_versions)


def scan_version_columns(
    store: HBaseClient, table: str, start: bytes = b"", stop: bytes = b"", batch_size: int = 1000
) -> Generator[Batch, None, None]:
    """Every version of every cell of the rows in ``[start, stop)`` (``stop == b""``: to the
    end), a server response at a time: ``(row keys, rows)`` where rows are either a list of
    ``versions_of`` dicts or, for a response of one-cell rows of one layout, one
    :class:`~keyshape.store.hbase.cellblock.UniformCells` (columns, no object per row: what a
    bulk copy writes HFiles from)."""
    low: Bound = (start or None, True)
    high: Bound = (stop or None, False)
    return scan_batches(store, table, low, high, False, None, [], batch_size, max_versions=_ALL_VERSIONS, convert=version_columns_of)
