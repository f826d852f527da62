"""``Cluster``: one HBase cluster as the client sees it -- ZooKeeper first, then hbase:meta's region
lists, a pool of per-server connections, and relocation when a server answers that a region moved.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import TypeVar

from google.protobuf.message import Message
from hbasedriver.protobuf_py import Client_pb2, HBase_pb2
from kazoo.handlers.threading import KazooTimeoutError

from keyshape.errors import StoreError
from keyshape.store.hbase.auth import Security, client_principal
from keyshape.store.hbase.errors import ConnectionLost, ServerError
from keyshape.store.hbase.framing import RpcConnection
from keyshape.store.hbase.identity import effective_user
from keyshape.store.hbase.regions import Region, RegionList, meta_row_prefix, region_name
from keyshape.store.hbase.zk import locate_master_and_meta, quiet_driver_logs

__all__ = ["Cluster"]

M = TypeVar("M", bound=Message)
log = logging.getLogger("keyshape.store.hbase")


class Cluster:
    """Connections to one HBase cluster found through ZooKeeper: the master, the region server
    holding hbase:meta, a pool of region server connections and per-table region maps."""

    def __init__(
        self, quorum: str, timeout: float = 60.0, connect_timeout: float = 3.0, user: str | None = None, security: Security | None = None
    ) -> None:
        quiet_driver_logs()
        self.quorum = quorum
        if security is not None and security.auth == "kerberos":
            if user is not None:
                # HBase would take any other name than the principal for impersonation (and
                # refuse it); ignoring it silently would act as someone the caller did not name.
                acting = f" ({security.principal})" if security.principal else " (the ticket's, from kinit)"
                raise StoreError(
                    f"user {user!r} (--user) names the user of SIMPLE connections; under Kerberos "
                    f"the connection acts as its principal{acting}: drop --user, or authenticate "
                    f"as {user} (principal={user}&keytab=..., or kinit {user})"
                )
            self.user = ""  # the principal: read from the credentials once the servers are found
        else:
            self.user = effective_user(user)
        self.security = security
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._lock = threading.RLock()
        self._pool: dict[tuple[str, int, str], RpcConnection] = {}
        self._maps: dict[tuple[str, str], RegionList] = {}
        # Set by _locate below (which raises when ZooKeeper names no servers).
        self._master: tuple[str, int] = ("", 0)
        self._meta: tuple[str, int] = ("", 0)
        self._check_zookeeper()
        self._locate()
        if security is not None and security.auth == "kerberos":
            # The identity every request acts as (and HBase's ACLs check): the principal.
            self.user = client_principal(security)

    # -- discovery ---------------------------------------------------------------------------

    def _check_zookeeper(self) -> None:
        """Fail fast when nothing listens on any ZooKeeper address (kazoo would retry for its
        whole session timeout)."""
        errors = []
        for hostport in self.quorum.split(","):
            host, _, port = hostport.strip().rpartition(":") if ":" in hostport else (hostport.strip(), "", "")
            if port and not (port.isdigit() and 0 < int(port) < 65536):
                # A typo, not an unreachable server: say so at once, before any connection attempt.
                raise StoreError(f"ZooKeeper address {hostport.strip()!r}: {port!r} is not a port number (give HOST:PORT, e.g. localhost:2181)")
            try:
                socket.create_connection((host or "127.0.0.1", int(port or 2181)), timeout=self.connect_timeout).close()
                return
            except (OSError, ValueError) as exc:
                errors.append(f"{hostport}: {exc}")
        raise StoreError(
            f"cannot reach ZooKeeper at {self.quorum} ({'; '.join(errors)}); is HBase running? (tools/hbase/start.sh starts a local one)"
        )

    def _locate(self) -> None:
        wait = self.connect_timeout + 2
        try:
            master, meta = locate_master_and_meta(self.quorum, wait)
        except KazooTimeoutError as exc:
            # The port took the connection (checked above) but no ZooKeeper session came of it.
            raise StoreError(
                f"{self.quorum} accepted a connection but did not answer as ZooKeeper within "
                f"{wait:.0f} s; give the ZooKeeper quorum's client port (HBase's "
                "hbase.zookeeper.property.clientPort, 2181 by default), not a master or "
                "region server port"
            ) from exc
        except Exception as exc:  # kazoo raises many types; all mean "not located (yet)"
            raise StoreError(
                f"ZooKeeper at {self.quorum} does not name an HBase master and "
                f"hbase:meta server ({exc}); is HBase (still) starting, or does it use "
                "another zookeeper.znode.parent than /hbase?"
            ) from exc
        self._master = (str(master.host_name), int(master.port))
        self._meta = (str(meta.host_name), int(meta.port))

    def relocate(self) -> None:
        """Forget every connection and region map and ask ZooKeeper again (after a server died
        or restarted)."""
        with self._lock:
            for conn in self._pool.values():
                # A connection with calls in flight (another scan's read-ahead, a writer's batch)
                # is left to its callers: they take their answers, or its failure, themselves;
                # it leaves the pool either way, so new calls open new connections.
                if not conn.in_flight:
                    conn.close()
            self._pool.clear()
            self._maps.clear()
            try:
                # ZooKeeper gone too (HBase stopped): say so in milliseconds, not after the
                # ZooKeeper session wait with a message about a port that is not ZooKeeper's.
                self._check_zookeeper()
                self._locate()
            except StoreError as exc:
                log.warning("re-locating HBase servers failed: %s", exc)

    def connection(self, host: str, port: int, service: str = "ClientService", lane: int = 0, cell_blocks: bool = False) -> RpcConnection:
        """The pooled connection to ``host:port`` for ``service``; ``lane`` > 0 picks another
        socket to the same server, so concurrent callers' requests are not serialized.
        ``cell_blocks``: a connection whose answers carry their cells as a KeyValue block
        (scans read them with :mod:`keyshape.store.hbase.cellblock`); every other call uses
        a connection without, whose results carry their cells as protobuf messages."""
        name = f"{service}#{lane}" if lane else service
        key = (host, port, name + "+cells" if cell_blocks else name)
        with self._lock:
            conn = self._pool.get(key)
            if conn is None or conn.broken:
                conn = self._pool[key] = RpcConnection(host, port, service, self.timeout, self.connect_timeout, self.user, self.security, cell_blocks)
            return conn

    def master_call(self, method: str, request: Message, response_cls: type[M]) -> M:
        """A MasterService call; one reconnect (via ZooKeeper) if the connection is lost."""
        for attempt in range(2):
            try:
                return self.connection(*self._master, "MasterService").call(method, request, response_cls)
            except ConnectionLost:
                if attempt:
                    raise
                self.relocate()
        raise AssertionError("unreachable")

    def meta_call(self, request: Client_pb2.ScanRequest) -> Client_pb2.ScanResponse:
        for attempt in range(2):
            try:
                return self.connection(*self._meta).call("Scan", request, Client_pb2.ScanResponse)
            except (ConnectionLost, ServerError) as exc:
                if attempt or (isinstance(exc, ServerError) and not exc.relocate):
                    raise
                self.relocate()
        raise AssertionError("unreachable")

    # -- regions -----------------------------------------------------------------------------

    def _meta_results(self, namespace: str, table: str, versions: int = 1) -> list[Client_pb2.Result]:
        """Every hbase:meta row of the table (its ``info`` cells, up to ``versions`` each)."""
        name = meta_row_prefix(namespace, table)[:-1]
        # hbase:meta sorts with MetaCellComparator (table name, then start key, then region id);
        # these are the bounds HBase's MetaTableAccessor uses for one table's region rows.
        scan = Client_pb2.Scan(start_row=name + b",,", stop_row=name + b" ,,", column=[Client_pb2.Column(family=b"info")], max_versions=versions)
        meta = HBase_pb2.RegionSpecifier(type=HBase_pb2.RegionSpecifier.REGION_NAME, value=b"hbase:meta,,1")
        response = self.meta_call(Client_pb2.ScanRequest(region=meta, scan=scan, number_of_rows=10000))
        results = list(response.results)
        # A busy or just-restarted server answers with partial "heartbeat" pages: keep paging
        # with the scanner id until the server says the region (meta is one region) is done; the
        # server closes the scanner itself when it reports the end.
        while (
            response.HasField("scanner_id")
            and response.more_results
            and (not response.HasField("more_results_in_region") or response.more_results_in_region)
        ):
            response = self.meta_call(Client_pb2.ScanRequest(scanner_id=response.scanner_id, number_of_rows=10000))
            results.extend(response.results)
        return [r for r in results if r.cell]

    def _meta_rows(self, namespace: str, table: str) -> list[tuple[bytes, dict[bytes, bytes]]]:
        """Every hbase:meta row of the table: (region name, {info qualifier: value})."""
        return [(result.cell[0].row, {c.qualifier: c.value for c in result.cell}) for result in self._meta_results(namespace, table)]

    def read_meta(self, namespace: str, table: str) -> list[tuple[Region, HBase_pb2.RegionInfo, bytes]]:
        """Every hbase:meta region row of the table: (Region, RegionInfo, info:state)."""
        rows = []
        for row, values in self._meta_rows(namespace, table):
            info_bytes = values.get(b"regioninfo")
            if not info_bytes:
                continue
            info = HBase_pb2.RegionInfo.FromString(info_bytes[4:])  # skip the b"PBUF" magic
            host, _, port = values.get(b"server", b"").decode().rpartition(":")
            region = Region(row, info.start_key, info.end_key, host, int(port or 0))
            rows.append((region, info, values.get(b"state", b"")))
        return rows

    def read_lineage(self, namespace: str, table: str) -> tuple[dict[bytes, tuple[bytes, ...]], dict[bytes, int]]:
        """``({region name: names of the regions it came from}, {gone region: ms it had closed})``
        from hbase:meta: a split parent's row names its daughters in ``info:splitA``
        and ``info:splitB``; a merged region's row names its parents in ``info:merge0000``,
        ``info:merge0001``... (``mergeA``/``mergeB`` before HBase 2.3). Meta keeps 3 versions of
        ``info:state``, so a gone region's CLOSED (else CLOSING) cell tells when it had stopped
        taking writes (a closing region still takes writes while it flushes its memstore). The
        catalog janitor deletes a parent's row once no daughter references its files any more;
        then neither is known."""
        table_name = meta_row_prefix(namespace, table)[:-1]
        out: dict[bytes, list[bytes]] = {}
        closed: dict[bytes, int] = {}
        for result in self._meta_results(namespace, table, versions=3):
            row = result.cell[0].row
            seen: set[bytes] = set()
            states: dict[bytes, int] = {}
            for cell in result.cell:  # newest version of each qualifier first
                if cell.qualifier == b"state":
                    states.setdefault(cell.value, cell.timestamp)
                    states[cell.value] = min(states[cell.value], cell.timestamp)
                if cell.qualifier in seen or not cell.value.startswith(b"PBUF"):
                    continue
                seen.add(cell.qualifier)
                if cell.qualifier in (b"splitA", b"splitB"):
                    child = HBase_pb2.RegionInfo.FromString(cell.value[4:])
                    out.setdefault(region_name(table_name, child.start_key, child.region_id), []).append(row)
                elif cell.qualifier.startswith(b"merge"):
                    parent = HBase_pb2.RegionInfo.FromString(cell.value[4:])
                    out.setdefault(row, []).append(region_name(table_name, parent.start_key, parent.region_id))
            when = states.get(b"CLOSED") or states.get(b"CLOSING")
            if when:
                closed[row] = int(when)
        return {k: tuple(v) for k, v in out.items()}, closed

    def region_list(self, namespace: str, table: str, refresh: bool = False) -> RegionList:
        """The table's online regions in key order (cached; ``refresh`` re-reads hbase:meta).
        An empty list means the table does not exist. Raises ConnectionLost/ServerError when
        meta cannot be read; StoreError if some region has no server yet after a short wait."""
        key = (namespace, table)
        with self._lock:
            cached = self._maps.get(key)
        if cached is not None and not refresh:
            return cached
        deadline = time.monotonic() + 30
        while True:
            rows = [(r, i, s) for r, i, s in self.read_meta(namespace, table) if not i.offline and not i.split and i.replica_id == 0]
            regions = sorted((r for r, _, _ in rows), key=lambda r: r.start)
            complete = (
                all(r.host for r in regions)
                and all(regions[k].end == regions[k + 1].start for k in range(len(regions) - 1))
                and (not regions or (regions[0].start == b"" and regions[-1].end == b""))
            )
            if complete:
                break
            if time.monotonic() > deadline:
                raise StoreError(
                    f"table {namespace}:{table} has regions without a server or with gaps in hbase:meta after 30 s (regions in transition?)"
                )
            time.sleep(0.1)
        region_list = RegionList(regions)
        with self._lock:
            if regions:
                self._maps[key] = region_list
            else:
                self._maps.pop(key, None)
        return region_list

    def forget(self, namespace: str, table: str) -> None:
        with self._lock:
            self._maps.pop((namespace, table), None)

    def close(self) -> None:
        with self._lock:
            for conn in self._pool.values():
                conn.close()
            self._pool.clear()
            self._maps.clear()
