"""``HBaseStore``: the Store protocol on a real HBase 2.x, over HBase's native RPC.

Talks to ZooKeeper (``hbase://host:port`` or ``host:port``) for the master and hbase:meta, routes
every row with its own region map read from hbase:meta (``rpc``), and sends Get, Mutate,
Multi and Scan requests built from hbase-driver's protobuf classes. Why not hbase-driver's
``Table``/``Admin``: tools/hbase/CLIENTS.md lists eight bugs (corrupt framing >= 128 KiB, wrong
region for rows equal to split keys, scans stopping at empty regions, ignored family options,
batches of single RPCs); each is avoided here as the module that owns it says.

Transient failures (region moved/not serving/opening, server not running yet, connection reset)
are retried a bounded number of times with exponential backoff after re-reading the region map;
every retry is logged on the ``keyshape.store.hbase`` logger and counted in ``store.retries``.
"""

from __future__ import annotations

import secrets
import struct
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

from hbasedriver.protobuf_py import Admin_pb2, Client_pb2, HBase_pb2, Master_pb2

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import StoreError
from keyshape.store.base import RegionInfo, RegionRecord, ScanBatch, as_bytes, scan_bounds, split_table_name
from keyshape.store.hbase.client import HBaseClient, cells_of
from keyshape.store.hbase.errors import ConnectionLost, ServerError
from keyshape.store.hbase.framing import RpcConnection
from keyshape.store.hbase.regions import Region
from keyshape.store.hbase.scan import keys_only_filter, scan_batches, scan_rows, stamp_of, versions_of
from keyshape.store.hbase.writer import HBaseWriter, run_multi

__all__ = ["HBaseStore"]

T = TypeVar("T")
_LONG = struct.Struct(">q")
_ALL_VERSIONS = 2**31 - 1
MutationType = Client_pb2.MutationProto.MutationType


class HBaseStore(HBaseClient):
    """A Store on a real HBase cluster (see the module docstring and ``HBaseClient``)."""

    # --- writes ------------------------------------------------------------------------------

    def _mutate(self, table: str, mutation: Client_pb2.MutationProto, what: str) -> Client_pb2.MutateResponse:
        def call(conn: RpcConnection, region: Region) -> Client_pb2.MutateResponse:
            request = Client_pb2.MutateRequest(region=region.spec(), mutation=mutation, nonce_group=self._nonce_group)
            return conn.call("Mutate", request, Client_pb2.MutateResponse)

        return self.with_region(table, mutation.row, what, call)

    def put(self, table: str, row: bytes, cells: Mapping[bytes, bytes], timestamp: int | None = None) -> None:
        """Write ``cells`` to ``row`` at ``timestamp`` (ms; default: the server's now)."""
        self._mutate(table, self.mutation(table, row, cells, timestamp), "put")

    def delete(self, table: str, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        """Delete the row, or every version of the selected families/columns."""
        self._mutate(table, self.mutation(table, row, None, columns=columns), "delete")

    def increment(self, table: str, row: bytes, column: bytes, amount: int = 1) -> int:
        """HBase Increment: atomically add ``amount`` to an 8-byte big-endian long (absent: 0);
        a nonce makes a retried increment apply once."""
        family, sep, qualifier = as_bytes(column, "a column").partition(b":")
        if not sep:
            raise StoreError(f"column {to_string_binary(bytes(column))!r} has no ':'")
        self.check_family(table, family)
        QV = Client_pb2.MutationProto.ColumnValue.QualifierValue
        value = _LONG.pack((int(amount) + 2**63) % 2**64 - 2**63)
        mutation = Client_pb2.MutationProto(
            row=as_bytes(row, "a row key"),
            mutate_type=MutationType.INCREMENT,
            nonce=secrets.randbits(63),
            column_value=[Client_pb2.MutationProto.ColumnValue(family=family, qualifier_value=[QV(qualifier=qualifier, value=value)])],
        )
        response = self._mutate(table, mutation, "increment")
        stored = cells_of(response.result).get(bytes(column))
        if stored is None or len(stored) != 8:
            raise StoreError(f"increment of {to_string_binary(bytes(column))!r} returned no 8-byte long")
        return int(_LONG.unpack(stored)[0])

    def writer(self, table: str, batch_size: int = 1000, max_bytes: int = 2 * 1024 * 1024, in_flight: int = 2) -> HBaseWriter:
        """A buffered writer sending one Multi per region server, up to ``in_flight`` batches at
        once (see ``HBaseWriter``)."""
        self.require_table(table)  # TableNotFound now rather than at the first flush
        return HBaseWriter(self, table, batch_size, max_bytes, in_flight)

    # --- reads -------------------------------------------------------------------------------

    def _get(self, table: str, row: Any, columns: list[Client_pb2.Column], versions: int) -> Client_pb2.Result:
        get = Client_pb2.Get(row=as_bytes(row, "a row key"), column=columns, max_versions=versions)
        self.settle_writes()

        def call(conn: RpcConnection, region: Region) -> Client_pb2.Result:
            request = Client_pb2.GetRequest(region=region.spec(), get=get)
            return conn.call("Get", request, Client_pb2.GetResponse).result

        return self.with_region(table, get.row, "get", call)

    def get(self, table: str, row: bytes, columns: Iterable[bytes] | None = None) -> dict[bytes, bytes]:
        """Newest value of every selected cell of ``row``; {} when there is none."""
        return cells_of(self._get(table, row, self.column_selection(table, columns), 1))

    def cells(self, table: str, row: bytes, column: bytes, versions: int | None = None) -> list[tuple[int, bytes]]:
        """Stored ``(timestamp_ms, value)`` versions of one cell, newest first."""
        selection = self.column_selection(table, [column])
        if versions is not None and int(versions) <= 0:
            return []
        result = self._get(table, row, selection, _ALL_VERSIONS if versions is None else int(versions))
        return [(c.timestamp, c.value) for c in result.cell]

    def get_many(self, table: str, rows: Iterable[bytes], columns: Iterable[bytes] | None = None) -> list[tuple[bytes, dict[bytes, bytes]]]:
        """``(row, cells)`` for requested rows with selected cells, in request order; one Multi of
        Gets per region server."""
        selection = self.column_selection(table, columns)
        keys = [as_bytes(r, "a row key") for r in rows]
        self.settle_writes()

        def action(i: int) -> Client_pb2.Action:
            return Client_pb2.Action(index=i, get=Client_pb2.Get(row=keys[i], column=selection, max_versions=1))

        results, failed = run_multi(self, table, keys, action, "get_many")
        if failed:
            index, message = next(iter(sorted(failed.items())))
            raise StoreError(f"get_many on {table!r}: {len(failed)} row(s) failed, first {to_string_binary(keys[index])!r}: {message}")
        found = [(keys[i], cells_of(results[i])) for i in range(len(keys)) if i in results]
        return [(row, cells) for row, cells in found if cells]

    def get_versions_many(self, table: str, rows: Iterable[bytes]) -> list[tuple[bytes, dict[bytes, list[tuple[int, bytes]]]]]:
        """``(row, every stored version of every cell)`` of the requested rows that exist, in
        request order, one Multi of Gets per region server: ``scan_versions`` for chosen rows."""
        keys = [as_bytes(r, "a row key") for r in rows]
        self.settle_writes()

        def action(i: int) -> Client_pb2.Action:
            return Client_pb2.Action(index=i, get=Client_pb2.Get(row=keys[i], max_versions=_ALL_VERSIONS))

        results, failed = run_multi(self, table, keys, action, "get_versions_many")
        if failed:
            index, message = next(iter(sorted(failed.items())))
            raise StoreError(f"get_versions_many on {table!r}: {len(failed)} row(s) failed, first {to_string_binary(keys[index])!r}: {message}")
        found = [(keys[i], versions_of(results[i])) for i in range(len(keys)) if i in results]
        return [(row, cells) for row, cells in found if cells]

    def scan(
        self,
        table: str,
        start: bytes = b"",
        stop: bytes = b"",
        prefix: bytes | None = None,
        reverse: bool = False,
        limit: int | None = None,
        columns: Iterable[bytes] | None = None,
        batch_size: int = 1000,
    ) -> Iterator[tuple[bytes, dict[bytes, bytes]]]:
        """Rows like HBase's Scan (see ``Store.scan``), region by region, ``batch_size`` rows per
        RPC (``Scan.caching``); empty regions are crossed in both directions."""
        low, high = scan_bounds(start, stop, prefix, reverse, limit, batch_size)
        selection = self.column_selection(table, columns)  # also TableNotFound, eagerly
        return scan_rows(self, table, low, high, reverse, limit, selection, batch_size)

    def scan_batches(
        self,
        table: str,
        start: bytes = b"",
        stop: bytes = b"",
        prefix: bytes | None = None,
        reverse: bool = False,
        limit: int | None = None,
        columns: Iterable[bytes] | None = None,
        batch_size: int = 1000,
    ) -> Iterator[ScanBatch]:
        """``scan`` one server response at a time (see ``Store.scan_batches``)."""
        low, high = scan_bounds(start, stop, prefix, reverse, limit, batch_size)
        selection = self.column_selection(table, columns)
        return scan_batches(self, table, low, high, reverse, limit, selection, batch_size)

    def scan_versions(
        self, table: str, start: bytes = b"", stop: bytes = b"", batch_size: int = 1000
    ) -> Iterator[tuple[bytes, dict[bytes, list[tuple[int, bytes]]]]]:
        """Rows in ``[start, stop)`` with every stored version of every cell (see
        ``Store.scan_versions``): a Scan with ``max_versions`` = all."""
        low, high = scan_bounds(start, stop, None, False, None, batch_size)
        self.require_table(table)  # TableNotFound now, not at the first row
        return scan_rows(self, table, low, high, False, None, [], batch_size, max_versions=_ALL_VERSIONS, convert=versions_of)

    def scan_keys(self, table: str, start: bytes = b"", stop: bytes = b"", limit: int | None = None, batch_size: int = 1000) -> Iterator[bytes]:
        """Row keys in ``[start, stop)``, at most ``limit``, with no values sent (FirstKeyOnly +
        KeyOnly filters on the server)."""
        low, high = scan_bounds(start, stop, None, False, limit, batch_size)
        self.require_table(table)
        rows = scan_rows(self, table, low, high, False, limit, [], batch_size, filter=keys_only_filter(), convert=lambda result: None)
        return (row for row, _ in rows)

    def scan_key_times(
        self, table: str, start: bytes = b"", stop: bytes = b"", limit: int | None = None, batch_size: int = 1000
    ) -> Iterator[tuple[list[bytes], list[int]]]:
        """Row keys in ``[start, stop)`` with the timestamp (ms) of each row's first cell, a
        server response at a time, at most ``limit`` rows; no values sent (the key-only filters)."""
        low, high = scan_bounds(start, stop, None, False, limit, batch_size)
        self.require_table(table)
        return scan_batches(self, table, low, high, False, limit, [], batch_size, filter=keys_only_filter(), convert=stamp_of)

    # --- regions -----------------------------------------------------------------------------

    def regions(self, table: str) -> list[RegionInfo]:
        """Regions in key order from hbase:meta, with RegionLoad asked of their region servers.

        ``parents`` names the regions a region was split or merged from while hbase:meta still
        has them (``parents_closed_ms``: when each had closed); ``reported_ms`` is when its
        server took the counters.

        Counters are each server's own, at the moment of the call (``GetRegionLoad``, what the
        Java ``Admin.getRegionMetrics(server, table)`` asks), so ``reported_ms`` is the client's
        clock around that call. The master's cluster status would be up to
        ``hbase.regionserver.msginterval`` (3 s) old, longer on a busy server, and a split
        parent's writes after its last report are in no counter: every second of staleness is
        writes a watch of a splitting table must estimate. A server that does not answer falls
        back to the master's copy (its regions with the report's own time). HBase reports store
        sizes in whole MB only, so ``store_size_bytes = (storefile_size_MB + mem_store_size_MB)
        * 2**20`` (0 below 1 MB).
        """
        namespace, name = split_table_name(table)
        try:
            regions = self.cluster.region_list(namespace, name, refresh=True).regions
        except (ConnectionLost, ServerError) as exc:
            raise StoreError(f"cannot read the regions of {table!r} from hbase:meta: {exc}") from exc
        if not regions:
            raise self.not_found(table)
        try:
            lineage, closed = self.cluster.read_lineage(namespace, name)
        except (ConnectionLost, ServerError) as exc:
            raise StoreError(f"cannot read the regions of {table!r} from hbase:meta: {exc}") from exc
        loads, reported = self._region_loads(table, namespace, name, regions)
        infos = []
        for region in regions:
            load = loads.get(region.name)
            infos.append(
                RegionInfo(
                    start=region.start,
                    end=region.end,
                    name=to_string_binary(region.name),
                    server=f"{region.host}:{region.port}",
                    read_requests=int(load.read_requests_count) if load else 0,
                    write_requests=int(load.write_requests_count) if load else 0,
                    store_size_bytes=(int(load.storefile_size_MB) + int(load.mem_store_size_MB)) * 2**20 if load else 0,
                    parents=tuple(to_string_binary(p) for p in lineage.get(region.name, ())),
                    reported_ms=reported.get(region.name, 0),
                    parents_closed_ms=tuple(closed.get(p, 0) for p in lineage.get(region.name, ())),
                    memstore_bytes=int(load.mem_store_size_MB) * 2**20 if load else 0,
                    store_files=int(load.storefiles) if load else 0,
                )
            )
        return infos

    def _region_loads(self, table: str, namespace: str, name: str, regions: Iterable[Region]) -> tuple[dict[bytes, Any], dict[bytes, int]]:
        """``({region name: RegionLoad}, {region name: ms when counted})`` from each server that
        holds a region of the table, the master's cluster status for servers that fail."""
        loads: dict[bytes, Any] = {}
        reported: dict[bytes, int] = {}
        missing = False
        request = Admin_pb2.GetRegionLoadRequest(table_name=HBase_pb2.TableName(namespace=namespace.encode(), qualifier=name.encode()))
        for host, port in dict.fromkeys((r.host, r.port) for r in regions):
            try:
                before = time.time()
                response = self.cluster.connection(host, port, "AdminService").call("GetRegionLoad", request, Admin_pb2.GetRegionLoadResponse)
                at = int(500 * (before + time.time()))
            except (ConnectionLost, ServerError):
                missing = True
                continue
            for load in response.region_loads:
                loads[load.region_specifier.value] = load
                reported[load.region_specifier.value] = at
        if missing:
            status = self._master(
                "GetClusterStatus", Master_pb2.GetClusterStatusRequest(), Master_pb2.GetClusterStatusResponse, table, "read cluster status"
            )
            for server in status.cluster_status.live_servers:
                for load in server.server_load.region_loads:
                    if load.region_specifier.value not in loads:
                        loads[load.region_specifier.value] = load
                        reported[load.region_specifier.value] = int(server.server_load.report_end_time)
        return loads, reported

    def region_history(self, table: str) -> list[RegionRecord]:
        """Every region hbase:meta records for ``table``, online or split parents not yet
        cleaned up, in key order then creation order: the table's split history."""
        namespace, name = split_table_name(table)
        try:
            rows = self.cluster.read_meta(namespace, name)
            # info:state's cell time: when the region turned OPEN (meta keeps the newest first)
            opened = {
                result.cell[0].row: next((c.timestamp for c in result.cell if c.qualifier == b"state" and c.value == b"OPEN"), None)
                for result in self.cluster._meta_results(namespace, name)
            }
        except (ConnectionLost, ServerError) as exc:
            raise StoreError(f"cannot read the regions of {table!r} from hbase:meta: {exc}") from exc
        if not rows:
            raise self.not_found(table)
        records = [
            RegionRecord(to_string_binary(r.name), r.start, r.end, int(i.region_id), bool(i.split), bool(i.offline), opened.get(r.name))
            for r, i, _ in rows
            if i.replica_id == 0
        ]
        return sorted(records, key=lambda x: (x.start, x.created_ms))

    def flush_table(self, table: str) -> None:
        """Flush every region's memstore to store files (HBase shell ``flush 'table'``)."""
        namespace, name = split_table_name(table)
        regions = self.cluster.region_list(namespace, name, refresh=True).regions
        if not regions:
            raise self.not_found(table)
        for region in regions:
            conn = self.cluster.connection(region.host, region.port, "AdminService")
            try:
                conn.call("FlushRegion", Admin_pb2.FlushRegionRequest(region=region.spec()), Admin_pb2.FlushRegionResponse)
            except ServerError as exc:
                raise self.refused(exc, table, "flush") from None

    # --- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        self._closed = True
        self.senders.shutdown()
        self.cluster.close()

    def __enter__(self) -> HBaseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
