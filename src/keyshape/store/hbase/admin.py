"""Namespaces, tables, regions and servers of ``HBaseStore``: MasterService requests, each waited
for until its procedure finishes (HBase's CreateTable/DeleteTable/CreateNamespace/SplitRegion
return before the work is done; hbase-driver sleeps fixed seconds instead) and, for splits and
moves, until hbase:meta shows the result.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from hbasedriver.protobuf_py import Admin_pb2, ClusterStatus_pb2, HBase_pb2, Master_pb2, Replication_pb2

from keyshape.core.hbytes import to_bytes_binary, to_string_binary
from keyshape.core.splits import verify_split_keys
from keyshape.errors import KeyshapeError, StoreError, TableNotFound
from keyshape.store.base import RegionInfo, ServerInfo, as_bytes, join_table_name, split_table_name
from keyshape.store.hbase.acl import PermissionDenied
from keyshape.store.hbase.cluster import Cluster
from keyshape.store.hbase.errors import ConnectionLost, ServerError
from keyshape.store.hbase.families import family_schema, read_family_options
from keyshape.store.hbase.regions import Region

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.specs import TableSpec

__all__ = ["HBaseAdmin", "servers_with_queue"]

T = TypeVar("T")
_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9_]+$")
# A region name since HBase 0.90: "table,start,id.ENCODED." where ENCODED is 32 hex digits (the
# MD5 of the part before it); MoveRegion wants ENCODED.
_ENCODED_RE = re.compile(rb"\.([0-9a-f]{32})\.$")
_HEX32_RE = re.compile(rb"^[0-9a-f]{32}$")
# A store file that still belongs to the region a split came from: a reference half-file
# ("HFILE.PARENTENCODED", StoreFileInfo's REF_NAME_PATTERN) or a link ("table=region-hfile").
_PARENT_FILE_RE = re.compile(r"[.=]")


class HBaseAdmin:
    """The namespace/table half of ``HBaseStore`` (a mixin: needs ``cluster``, ``refused``,
    ``not_found``, ``_families`` and ``_nonce_group`` from the store)."""

    cluster: Cluster
    _families: dict[tuple[str, str], set[bytes]]
    _nonce_group: int

    if TYPE_CHECKING:

        def refused(self, exc: ServerError, table: str, what: str) -> StoreError: ...

        def not_found(self, table: str) -> TableNotFound: ...

        def regions(self, table: str) -> list[RegionInfo]: ...

    # --- namespaces and tables ---------------------------------------------------------------

    def _wait_procedure(self, proc_id: int, what: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        delay = 0.02
        while True:
            state = self.cluster.master_call(
                "getProcedureResult", Master_pb2.GetProcedureResultRequest(proc_id=proc_id), Master_pb2.GetProcedureResultResponse
            )
            if state.state != Master_pb2.GetProcedureResultResponse.RUNNING:
                if state.HasField("exception"):
                    generic = state.exception.generic_exception
                    raise ServerError(generic.class_name, f"{generic.class_name}: {generic.message}")
                return
            if time.monotonic() > deadline:
                raise StoreError(f"{what}: HBase procedure {proc_id} still running after {timeout:.0f} s")
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def _master(self, method: str, request: Any, response_cls: type[T], table: str, what: str) -> T:
        try:
            return self.cluster.master_call(method, request, response_cls)
        except ServerError as exc:
            raise self.refused(exc, table, what) from None
        except ConnectionLost as exc:
            raise StoreError(f"{what}: lost the connection to the HBase master: {exc}") from exc

    def create_namespace(self, namespace: str) -> None:
        """Create ``namespace`` and wait until the master lists it (HBase's CreateNamespace returns
        before the procedure ends); StoreError if it exists or the name is bad."""
        if not isinstance(namespace, str) or not _NAMESPACE_RE.match(namespace):
            raise StoreError(f"bad namespace name {namespace!r}: use letters, digits and '_'")
        request = Master_pb2.CreateNamespaceRequest()
        request.namespaceDescriptor.name = namespace.encode()
        try:
            response = self.cluster.master_call("CreateNamespace", request, Master_pb2.CreateNamespaceResponse)
            self._wait_procedure(response.proc_id, f"create namespace {namespace!r}")
        except ServerError as exc:
            if exc.short_name == "NamespaceExistException":
                raise StoreError(f"namespace {namespace!r} already exists") from None
            raise StoreError(f"HBase refused to create namespace {namespace!r}: {exc}") from None
        deadline = time.monotonic() + 30
        while not self.namespace_exists(namespace):
            if time.monotonic() > deadline:
                raise StoreError(f"namespace {namespace!r} was created but is not visible after 30 s")
            time.sleep(0.05)

    def namespace_exists(self, namespace: str) -> bool:
        return namespace in self.list_namespaces()

    def list_namespaces(self) -> list[str]:
        response = self._master(
            "ListNamespaces", Master_pb2.ListNamespacesRequest(), Master_pb2.ListNamespacesResponse, "hbase:namespace", "list namespaces"
        )
        return sorted(response.namespaceName)

    def delete_namespace(self, namespace: str) -> None:
        """Remove an empty namespace (StoreError if it holds tables or is missing)."""
        try:
            response = self.cluster.master_call(
                "DeleteNamespace", Master_pb2.DeleteNamespaceRequest(namespaceName=namespace), Master_pb2.DeleteNamespaceResponse
            )
            self._wait_procedure(response.proc_id, f"delete namespace {namespace!r}")
        except ServerError as exc:
            raise StoreError(f"cannot delete namespace {namespace!r}: {exc}") from None

    def create_table(self, spec: TableSpec, split_keys: Sequence[bytes] = (), attributes: Mapping[str, str] | None = None) -> None:
        """Create ``spec`` (a TableSpec) pre-split at ``split_keys`` (sorted here; duplicates and
        b"" refused, as HBase's Admin does) with every family option validated against HBase's
        enums BEFORE anything is sent; returns once every region is open. ``attributes`` are
        table descriptor values, e.g. ``{"MAX_FILESIZE": "2097152", "MEMSTORE_FLUSHSIZE":
        "1048576", "SPLIT_POLICY": "org.apache...ConstantSizeRegionSplitPolicy"}``; HBase checks
        them (its sanity checks refuse a MAX_FILESIZE under 2 MiB or a flush size under 1 MiB)."""
        full = spec.name if ":" in spec.name else join_table_name(spec.namespace or "default", spec.name)
        namespace, name = split_table_name(full)
        families = [family_schema(f) for f in spec.families]
        if not families:
            raise StoreError(f"table {full!r} needs at least one column family")
        if len({f.name for f in families}) != len(families):
            raise StoreError(f"table {full!r}: a column family is listed twice")
        try:
            splits = verify_split_keys(as_bytes(k, "a split key") for k in split_keys)
        except KeyshapeError as exc:
            raise StoreError(f"cannot create table {full!r}: {exc}") from None
        if not self.namespace_exists(namespace):
            raise StoreError(f"namespace {namespace!r} does not exist; create it first (create_namespace, or keyshape.store.ensure_table)")
        request = Master_pb2.CreateTableRequest(split_keys=splits, nonce_group=self._nonce_group, nonce=secrets.randbits(63))
        request.table_schema.table_name.namespace = namespace.encode()
        request.table_schema.table_name.qualifier = name.encode()
        request.table_schema.column_families.extend(families)
        # The spec's own attributes ([table] max_filesize, ...), then any given here on top.
        for key, value in {**getattr(spec, "attributes", {}), **(attributes or {})}.items():
            request.table_schema.attributes.add(first=str(key).encode(), second=str(value).encode())
        response = self._master("CreateTable", request, Master_pb2.CreateTableResponse, full, "create table")
        try:
            self._wait_procedure(response.proc_id, f"create table {full!r}")
        except ServerError as exc:
            raise self.refused(exc, full, "create table") from None
        self._families.pop((namespace, name), None)
        self.cluster.forget(namespace, name)
        regions = self.cluster.region_list(namespace, name, refresh=True).regions
        if [r.start for r in regions[1:]] != splits:
            raise StoreError(f"table {full!r} was created with {len(regions)} region(s), expected {len(splits) + 1}")

    def delete_table(self, name: str) -> None:
        """Disable and delete ``name``; TableNotFound if absent."""
        namespace, table = split_table_name(name)
        table_name = HBase_pb2.TableName(namespace=namespace.encode(), qualifier=table.encode())
        try:
            response = self.cluster.master_call(
                "DisableTable", Master_pb2.DisableTableRequest(table_name=table_name), Master_pb2.DisableTableResponse
            )
            self._wait_procedure(response.proc_id, f"disable table {name!r}")
        except ServerError as exc:
            if exc.short_name != "TableNotEnabledException":
                raise self.refused(exc, name, "disable table") from None
        response = self._master(
            "DeleteTable", Master_pb2.DeleteTableRequest(table_name=table_name), Master_pb2.DeleteTableResponse, name, "delete table"
        )
        try:
            self._wait_procedure(response.proc_id, f"delete table {name!r}")
        except ServerError as exc:
            raise self.refused(exc, name, "delete table") from None
        self._families.pop((namespace, table), None)
        self.cluster.forget(namespace, table)

    def _descriptor(self, name: str) -> HBase_pb2.TableSchema | None:
        namespace, table = split_table_name(name)
        request = Master_pb2.GetTableDescriptorsRequest(table_names=[HBase_pb2.TableName(namespace=namespace.encode(), qualifier=table.encode())])
        try:
            response = self.cluster.master_call("GetTableDescriptors", request, Master_pb2.GetTableDescriptorsResponse)
        except ServerError as exc:
            if exc.short_name in ("TableNotFoundException", "NamespaceNotFoundException"):
                return None
            raise self.refused(exc, name, "describe table") from None
        return response.table_schema[0] if response.table_schema else None

    def table_exists(self, name: str) -> bool:
        """Whether the table exists. A user who may read and write the table but not describe it
        (the AccessController wants CREATE or ADMIN for its descriptor) is answered from
        hbase:meta, which every user may read, as HBase's own ``Admin.tableExists`` does."""
        try:
            return self._descriptor(name) is not None
        except PermissionDenied:
            return bool(self.cluster.region_list(*split_table_name(name), refresh=True).regions)

    def describe_table(self, name: str) -> dict[str, dict[str, str]]:
        """Each family's attributes as HBase reports them (``VERSIONS``, ``COMPRESSION`` ...)."""
        schema = self._descriptor(name)
        if schema is None:
            raise self.not_found(name)
        return {f.name.decode(): read_family_options(f) for f in schema.column_families}

    def table_attributes(self, name: str) -> dict[str, str]:
        """The table descriptor's own values as HBase stores them (``MAX_FILESIZE``, ...)."""
        schema = self._descriptor(name)
        if schema is None:
            raise self.not_found(name)
        return {a.first.decode(): a.second.decode() for a in schema.attributes}

    def families(self, name: str) -> set[bytes]:
        """The table's family names (cached per store; TableNotFound if absent)."""
        key = split_table_name(name)
        known = self._families.get(key)
        if known is None:
            known = self._families[key] = {f.encode() for f in self.describe_table(name)}
        return known

    def list_tables(self) -> list[str]:
        response = self._master(
            "GetTableNames", Master_pb2.GetTableNamesRequest(include_sys_tables=False), Master_pb2.GetTableNamesResponse, "*", "list tables"
        )
        return sorted(join_table_name(t.namespace.decode(), t.qualifier.decode()) for t in response.table_names)

    # --- regions and servers -----------------------------------------------------------------

    def hbase_version(self) -> str:
        """The master's HBase version, as ``VersionInfo.getVersion`` says it (``2.6.4-hadoop3``)."""
        request = Master_pb2.GetClusterStatusRequest(options=[ClusterStatus_pb2.HBASE_VERSION])
        status = self._master("GetClusterStatus", request, Master_pb2.GetClusterStatusResponse, "*", "read cluster status")
        return str(status.cluster_status.hbase_version.version)

    def _live_servers(self) -> list[ClusterStatus_pb2.LiveServerInfo]:
        request = Master_pb2.GetClusterStatusRequest(options=[ClusterStatus_pb2.LIVE_SERVERS])
        status = self._master("GetClusterStatus", request, Master_pb2.GetClusterStatusResponse, "*", "read cluster status")
        return list(status.cluster_status.live_servers)

    def region_servers(self) -> list[ServerInfo]:
        """The live region servers, sorted by ``host:port``, from the master's cluster status.

        Region counts and request counters are what each server last reported (every
        ``hbase.regionserver.msginterval``, 3 s by default) and include system regions
        (hbase:meta, hbase:namespace); ``requests_per_second`` is HBase's ``number_of_requests``.
        """
        out = []
        for live in self._live_servers():
            load = live.server_load
            out.append(
                ServerInfo(
                    name=f"{live.server.host_name}:{live.server.port}",
                    regions=len(load.region_loads),
                    read_requests=sum(int(r.read_requests_count) for r in load.region_loads),
                    write_requests=sum(int(r.write_requests_count) for r in load.region_loads),
                    requests_per_second=int(load.number_of_requests),
                    used_heap_mb=int(load.used_heap_MB),
                    max_heap_mb=int(load.max_heap_MB),
                )
            )
        return sorted(out, key=lambda s: s.name)

    def set_balancer(self, on: bool) -> bool:
        """Switch HBase's balancer on or off (synchronously: a balance run in progress finishes
        first) and return whether it was on before, like the shell's ``balance_switch``."""
        request = Master_pb2.SetBalancerRunningRequest(on=bool(on), synchronous=True)
        response = self._master("SetBalancerRunning", request, Master_pb2.SetBalancerRunningResponse, "*", "switch the balancer")
        return bool(response.prev_balance_value)

    def _online_region(self, namespace: str, table: str, match: Any) -> tuple[Region, HBase_pb2.RegionInfo] | None:
        for region, info, _ in self.cluster.read_meta(namespace, table):
            if not info.offline and not info.split and info.replica_id == 0 and region.host and match(region):
                return region, info
        return None

    def split_region(self, table: str, split_key: bytes, timeout: float = 60.0, *, reopen: bool = True) -> list[RegionInfo]:
        """Split the region of ``table`` holding ``split_key`` at exactly that key (HBase Admin
        ``split(table, splitPoint)``, the master's SplitTableRegionProcedure), wait until hbase:meta
        shows both daughters online, and return them (lower first).

        A daughter of an earlier split cannot be split again at once: HBase refuses while its
        stores hold files of its parent, and that lasts until the compaction it runs on opening
        has finished AND its CompactedHFilesDischarger chore has archived the compacted files
        (HStore.hasReferences counts them too, HBASE-20940; the chore runs every
        ``hbase.hfile.compaction.discharger.interval``, 2 minutes by default). With ``reopen``
        (the default) such a region is made splittable here: wait for its compaction (ask for a
        major one if none starts within seconds), then close and open it again (MasterService
        UnassignRegion + AssignRegion; closing a store archives its compacted files), which
        takes it offline for about 2 s. Other regions and tables are not touched.

        StoreError when the key already starts a region (HBase refuses to split at a region's
        start key), when HBase refuses, when the region still cannot split after ``timeout`` s
        (with ``reopen=False``: at once) or when the daughters are not online after ``timeout`` s.
        """
        key = as_bytes(split_key, "a split key")
        if not key:
            raise StoreError(f"cannot split {table!r} at the empty key: give the first row key of the new upper region")
        namespace, name = split_table_name(table)
        shown = to_string_binary(key)
        found = self._online_region(namespace, name, lambda r: r.contains(key))
        if found is None:
            if not self.table_exists(table):
                raise self.not_found(table)
            raise StoreError(
                f"cannot split {table!r} at {shown!r}: the region holding that key is not online (in transition?); try again in a few seconds"
            )
        parent, info = found
        if parent.start == key:
            raise StoreError(
                f"cannot split {table!r} at {shown!r}: a region already starts there ({to_string_binary(parent.name)}); pick a key inside a region"
            )
        if reopen:
            parent, info = self._ready_to_split(table, parent, info, shown, timeout)
        request = Master_pb2.SplitTableRegionRequest(region_info=info, split_row=key, nonce_group=self._nonce_group, nonce=secrets.randbits(63))
        what = f"split {table!r} at {shown!r}"
        response = self._master("SplitRegion", request, Master_pb2.SplitTableRegionResponse, table, what)
        try:
            self._wait_procedure(response.proc_id, what, timeout)
        except ServerError as exc:
            raise StoreError(f"HBase refused to {what}: {exc}") from None
        deadline = time.monotonic() + timeout
        while True:
            regions = self.cluster.region_list(namespace, name, refresh=True).regions
            bounds = {(r.start, r.end) for r in regions}
            if (parent.start, key) in bounds and (key, parent.end) in bounds:
                break
            if time.monotonic() > deadline:
                raise StoreError(f"{what}: the daughter regions are not online after {timeout:.0f} s")
            time.sleep(0.1)
        return [r for r in self.regions(table) if (r.start, r.end) in ((parent.start, key), (key, parent.end))]

    def _split_state(self, region: Region) -> tuple[bool, bool, list[str]]:
        """``(splittable, compacting, parent files)`` of an online region, asked of its server:
        GetRegionInfo's ``splittable`` (what the master's split procedure checks) and
        ``compaction_state``, and the store files (GetStoreFile) still of a split's parent."""
        conn = self.cluster.connection(region.host, region.port, "AdminService")
        info = conn.call(
            "GetRegionInfo", Admin_pb2.GetRegionInfoRequest(region=region.spec(), compaction_state=True), Admin_pb2.GetRegionInfoResponse
        )
        if info.splittable:
            return True, False, []
        files = conn.call("GetStoreFile", Admin_pb2.GetStoreFileRequest(region=region.spec()), Admin_pb2.GetStoreFileResponse).store_file
        compacting = info.compaction_state != Admin_pb2.GetRegionInfoResponse.NONE
        return False, compacting, [f for f in files if _PARENT_FILE_RE.search(f.rsplit("/", 1)[-1])]

    def _reopen_region(self, table: str, region: Region, timeout: float) -> tuple[Region, HBase_pb2.RegionInfo]:
        """Close ``region`` and open it again (UnassignRegion, AssignRegion: each returns once
        its procedure is done) and wait until hbase:meta shows it open; the region keeps its
        name and may land on another server."""
        namespace, name = split_table_name(table)
        shown = to_string_binary(region.name)
        what = f"reopen region {shown!r}"
        self._master("UnassignRegion", Master_pb2.UnassignRegionRequest(region=region.spec()), Master_pb2.UnassignRegionResponse, table, what)
        try:
            self._master("AssignRegion", Master_pb2.AssignRegionRequest(region=region.spec()), Master_pb2.AssignRegionResponse, table, what)
        except StoreError as exc:
            encoded = _ENCODED_RE.search(region.name)
            raise StoreError(
                f"{what}: it is closed and HBase did not open it again ({exc}); open "
                f"it in the HBase shell: assign '{encoded.group(1).decode() if encoded else shown}'"
            ) from None
        deadline = time.monotonic() + timeout
        while True:
            found = self._online_region(namespace, name, lambda r: r.name == region.name)
            if found is not None:
                self.cluster.forget(namespace, name)
                return found
            if time.monotonic() > deadline:
                raise StoreError(f"{what}: not open again after {timeout:.0f} s (see the master's log for the region's assignment)")
            time.sleep(0.1)

    def _ready_to_split(
        self, table: str, region: Region, info: HBase_pb2.RegionInfo, shown: str, timeout: float
    ) -> tuple[Region, HBase_pb2.RegionInfo]:
        """Wait until ``region`` can split (see ``split_region``): its parent's files compacted
        away (a major compaction asked for if none has started after 5 s), then, if it still
        cannot, reopen it once. Returns the region as it is online now."""
        namespace, name = split_table_name(table)
        deadline = time.monotonic() + timeout
        idle_since: float | None = None
        compaction_asked = reopened = False
        why = "its server did not answer"
        while True:
            try:
                splittable, compacting, parent_files = self._split_state(region)
            except (ServerError, ConnectionLost) as exc:  # moving, or its server is restarting
                why = f"its server did not answer ({exc})"
                found = self._online_region(namespace, name, lambda r: r.name == region.name)
                if found is not None:
                    region, info = found
            else:
                if splittable:
                    return region, info
                now = time.monotonic()
                if compacting:
                    idle_since = None
                    why = f"it is compacting {len(parent_files)} file(s) it holds of the region it was split from"
                elif parent_files:
                    idle_since = idle_since or now
                    why = f"it holds {len(parent_files)} file(s) of the region it was split from and no compaction is running" + (
                        " (a major compaction was requested)" if compaction_asked else ""
                    )
                    if not compaction_asked and now - idle_since > 5.0:
                        self._compact_region(table, region)
                        compaction_asked = True
                elif not reopened:
                    region, info = self._reopen_region(table, region, max(deadline - now, 10.0))
                    reopened = True
                    continue
                else:
                    why = "HBase says it cannot split, though it holds no file of its parent"
            if time.monotonic() > deadline:
                raise StoreError(
                    f"cannot split {table!r} at {shown!r}: region "
                    f"{to_string_binary(region.name)!r} is not splittable after "
                    f"{timeout:.0f} s: {why}; try again later"
                )
            time.sleep(0.2)

    def _compact_region(self, table: str, region: Region) -> None:
        """Ask the region's server for a major compaction (AdminService CompactRegion; queued,
        the call returns at once)."""
        conn = self.cluster.connection(region.host, region.port, "AdminService")
        try:
            conn.call("CompactRegion", Admin_pb2.CompactRegionRequest(region=region.spec(), major=True), Admin_pb2.CompactRegionResponse)
        except ServerError as exc:
            raise self.refused(exc, table, f"compact region {to_string_binary(region.name)!r}") from None

    def _full_region_name(self, region_name: str | bytes) -> bytes:
        """The full region name (the hbase:meta row) for a full name in bytes or toStringBinary
        form, or for an encoded name (32 hex digits, as the HBase shell's ``move`` takes)."""
        raw = region_name if isinstance(region_name, bytes) else to_bytes_binary(str(region_name))
        if not _HEX32_RE.match(raw):
            return raw
        for live in self._live_servers():
            for load in live.server_load.region_loads:
                match = _ENCODED_RE.search(load.region_specifier.value)
                if match and match.group(1) == raw:
                    return bytes(load.region_specifier.value)
        raise StoreError(
            f"no online region has the encoded name {raw.decode()!r}; list regions with 'keyshape admin regions TABLE --hbase HOST:PORT'"
        )

    def move_region(self, region_name: str | bytes, server: str | None = None, timeout: float = 60.0) -> str:
        """Move the region ``region_name`` (``RegionInfo.name``, its bytes, or the encoded name)
        to ``server`` (``host:port``, or HBase's ``host,port,startcode``, of a live region server;
        None: the other live server with the fewest regions), wait until hbase:meta shows it
        open there, and return that server (``host:port``).
        Moving a region to the server it is on does nothing. Turn the balancer off
        (``set_balancer(False)``) to keep HBase from moving it back."""
        full = self._full_region_name(region_name)
        shown = to_string_binary(full)
        encoded = _ENCODED_RE.search(full)
        table_part = full.split(b",", 1)[0].decode(errors="replace")
        if encoded is None or b"," not in full:
            raise StoreError(f"{shown!r} is not a region name of a user table (want 'table,start,id.ENCODED.' as 'keyshape admin regions' lists it)")
        namespace, name = split_table_name(table_part)
        found = self._online_region(namespace, name, lambda r: r.name == full)
        if found is None:
            raise StoreError(
                f"region {shown!r} is not online (split, merged, moving, or its table "
                "is gone); list the current regions with 'keyshape admin regions TABLE'"
            )
        region, _ = found
        current = f"{region.host}:{region.port}"
        live = {f"{s.server.host_name}:{s.server.port}": s for s in self._live_servers()}
        if server is not None and server.count(",") == 2:  # HBase's "host,port,startcode" form
            server = ":".join(server.split(",")[:2])
        if server is None:
            others = sorted((len(s.server_load.region_loads), n) for n, s in live.items() if n != current)
            if not others:
                raise StoreError(f"cannot move region {shown!r}: {current} is the only live region server")
            server = others[0][1]
        if server not in live:
            raise StoreError(f"cannot move region {shown!r} to {server!r}: not a live region server; live ones: {', '.join(sorted(live)) or 'none'}")
        if server == current:
            return current
        request = Master_pb2.MoveRegionRequest(
            region=HBase_pb2.RegionSpecifier(type=HBase_pb2.RegionSpecifier.ENCODED_REGION_NAME, value=encoded.group(1)),
            dest_server_name=live[server].server,
        )
        self._master("MoveRegion", request, Master_pb2.MoveRegionResponse, table_part, f"move region {shown!r}")
        deadline = time.monotonic() + timeout
        while True:
            found = self._online_region(namespace, name, lambda r: r.name == full)
            if found is not None and f"{found[0].host}:{found[0].port}" == server:
                self.cluster.forget(namespace, name)
                return server
            if time.monotonic() > deadline:
                where = f"{found[0].host}:{found[0].port}" if found else "no server"
                raise StoreError(f"move region {shown!r} to {server}: still on {where} after {timeout:.0f} s")
            time.sleep(0.1)

    # --- replication (the sink's peer, issue 32) ---------------------------------------------

    def set_replication_scope(self, table: str, families: Sequence[str | bytes], scope: int = 1) -> None:
        """Set ``REPLICATION_SCOPE`` of ``families`` (an alter: ModifyColumn per family, waited for
        until the regions reopened; only edits logged after the reopen carry the new scope). Scope 1
        (GLOBAL) ships the family's edits to replication peers; 0 (the default) does not."""
        schema = self._descriptor(table)
        if schema is None:
            raise self.not_found(table)
        wanted = {f.encode() if isinstance(f, str) else as_bytes(f, "a family") for f in families}
        known = {f.name for f in schema.column_families}
        if wanted - known:
            missing = ", ".join(sorted(to_string_binary(f) for f in wanted - known))
            raise StoreError(f"table {table!r} has no family {missing}; its families: {', '.join(sorted(f.decode() for f in known))}")
        for family in schema.column_families:
            if family.name not in wanted:
                continue
            attributes = [a for a in family.attributes if a.first != b"REPLICATION_SCOPE"]
            attributes.append(HBase_pb2.BytesBytesPair(first=b"REPLICATION_SCOPE", second=str(int(scope)).encode()))
            changed = HBase_pb2.ColumnFamilySchema(name=family.name, attributes=attributes, configuration=family.configuration)
            request = Master_pb2.ModifyColumnRequest(
                table_name=schema.table_name, column_families=changed, nonce_group=self._nonce_group, nonce=secrets.randbits(63)
            )
            response = self._master("ModifyColumn", request, Master_pb2.ModifyColumnResponse, table, "set REPLICATION_SCOPE")
            try:
                self._wait_procedure(response.proc_id, f"set REPLICATION_SCOPE of {table!r}")
            except ServerError as exc:
                raise self.refused(exc, table, "set REPLICATION_SCOPE") from None

    def add_replication_peer(
        self, peer_id: str, cluster_key: str, tables: Mapping[str, Sequence[str | bytes]], *, enabled: bool = True, serial: bool = False
    ) -> None:
        """Add replication peer ``peer_id`` (letters, digits, ``_``: HBase refuses ``-``) at
        ``cluster_key`` (``quorum:port:/parent``) shipping only ``tables`` (table -> families; no
        families = all of the table's scoped families), and wait for the master's procedure.

        ``replicate_all`` is sent as false: absent, HBase defaults it to true and then refuses
        table_cfs ("Need clean namespaces or table-cfs config firstly")."""
        if not re.fullmatch(r"[A-Za-z0-9_]+", peer_id):
            raise StoreError(f"bad replication peer id {peer_id!r}: use letters, digits and '_'")
        if not tables:
            raise StoreError("a keyshape replication peer must name at least one table (it never replicates everything)")
        peer = Replication_pb2.ReplicationPeer(clusterkey=cluster_key, replicate_all=False, serial=serial)
        for name, families in tables.items():
            namespace, qualifier = split_table_name(name)
            peer.table_cfs.add(
                table_name=HBase_pb2.TableName(namespace=namespace.encode(), qualifier=qualifier.encode()),
                families=[f.encode() if isinstance(f, str) else as_bytes(f, "a family") for f in families],
            )
        state = Replication_pb2.ReplicationState.ENABLED if enabled else Replication_pb2.ReplicationState.DISABLED
        request = Replication_pb2.AddReplicationPeerRequest(
            peer_id=peer_id, peer_config=peer, peer_state=Replication_pb2.ReplicationState(state=state)
        )
        what = f"add replication peer {peer_id!r}"
        try:
            response = self.cluster.master_call("AddReplicationPeer", request, Replication_pb2.AddReplicationPeerResponse)
            self._wait_procedure(response.proc_id, what)
        except ServerError as exc:
            raise StoreError(f"HBase refused to {what}: {exc}") from None

    def remove_replication_peer(self, peer_id: str) -> None:
        """Remove replication peer ``peer_id`` (its queues go with it) and wait for the procedure;
        StoreError if there is no such peer."""
        what = f"remove replication peer {peer_id!r}"
        try:
            response = self.cluster.master_call(
                "RemoveReplicationPeer", Replication_pb2.RemoveReplicationPeerRequest(peer_id=peer_id), Replication_pb2.RemoveReplicationPeerResponse
            )
            self._wait_procedure(response.proc_id, what)
        except ServerError as exc:
            raise StoreError(f"HBase refused to {what}: {exc}") from None

    def replication_peers(self) -> dict[str, str]:
        """Every replication peer of the cluster: peer id -> cluster key."""
        try:
            response = self.cluster.master_call(
                "ListReplicationPeers", Replication_pb2.ListReplicationPeersRequest(), Replication_pb2.ListReplicationPeersResponse
            )
        except ServerError as exc:
            raise StoreError(f"HBase refused to list replication peers: {exc}") from None
        return {p.id: p.config.clusterkey for p in response.peer_desc}

    # --- online migration (issue 32): family attributes, source metrics, forced compaction ---

    def family_attributes(self, table: str, name: str, *, configuration: bool = False) -> dict[str, str | None]:
        """Each family's value of attribute ``name`` (``REPLICATION_SCOPE``, ``KEEP_DELETED_CELLS``
        ...) as the descriptor stores it, or with ``configuration`` of its CONFIGURATION entry
        ``name`` (a per-family override of an hbase-site setting); None where the family leaves it
        at HBase's default."""
        schema = self._descriptor(table)
        if schema is None:
            raise self.not_found(table)
        out: dict[str, str | None] = {}
        for family in schema.column_families:
            if configuration:
                values = [c.value for c in family.configuration if c.name == name]
            else:
                values = [a.second.decode() for a in family.attributes if a.first == name.encode()]
            out[family.name.decode()] = values[-1] if values else None
        return out

    def set_family_attribute(self, table: str, families: Sequence[str], name: str, value: str | None, *, configuration: bool = False) -> None:
        """Set (None: remove, back to HBase's default) attribute ``name`` of ``families`` of
        ``table`` (with ``configuration``: the family's CONFIGURATION entry ``name``, which the
        family's stores read instead of hbase-site's): one ModifyColumn per family, waited for
        until its regions reopened."""
        schema = self._descriptor(table)
        if schema is None:
            raise self.not_found(table)
        wanted = {f.encode() for f in families}
        for family in schema.column_families:
            if family.name not in wanted:
                continue
            attributes = list(family.attributes)
            settings = list(family.configuration)
            if configuration:
                settings = [c for c in settings if c.name != name]
                if value is not None:
                    settings.append(HBase_pb2.NameStringPair(name=name, value=value))
            else:
                attributes = [a for a in attributes if a.first != name.encode()]
                if value is not None:
                    attributes.append(HBase_pb2.BytesBytesPair(first=name.encode(), second=value.encode()))
            changed = HBase_pb2.ColumnFamilySchema(name=family.name, attributes=attributes, configuration=settings)
            request = Master_pb2.ModifyColumnRequest(
                table_name=schema.table_name, column_families=changed, nonce_group=self._nonce_group, nonce=secrets.randbits(63)
            )
            what = f"set {name} of {table!r}"
            response = self._master("ModifyColumn", request, Master_pb2.ModifyColumnResponse, table, what)
            try:
                self._wait_procedure(response.proc_id, what)
            except ServerError as exc:
                raise self.refused(exc, table, what) from None

    def replication_sources(self, peer_id: str) -> list[dict[str, int | str]]:
        """What each live region server last reported (every ``hbase.regionserver.msginterval``,
        3 s by default) about its replication source(s) for ``peer_id``: ``server``,
        ``age_of_last_shipped_ms``, ``log_queue`` (WALs waiting), ``lag_ms`` (HBase's
        replicationLag), ``last_shipped_ms`` (a timestamp), ``report_ms`` (when the report ended).
        A queue claimed from a dead server reports under a ``peer_id-...`` queue id: counted too."""
        request = Master_pb2.GetClusterStatusRequest(options=[ClusterStatus_pb2.LIVE_SERVERS])
        status = self._master("GetClusterStatus", request, Master_pb2.GetClusterStatusResponse, "*", "read cluster status")
        out: list[dict[str, int | str]] = []
        for live in status.cluster_status.live_servers:
            load = live.server_load
            for source in load.replLoadSource:
                if source.peerID != peer_id and not source.queueId.startswith(peer_id + "-"):
                    continue
                out.append(
                    {
                        "server": f"{live.server.host_name}:{live.server.port}",
                        "age_of_last_shipped_ms": int(source.ageOfLastShippedOp),
                        "log_queue": int(source.sizeOfLogQueue),
                        "lag_ms": int(source.replicationLag),
                        "last_shipped_ms": int(source.timeStampOfLastShippedOp),
                        "report_ms": int(load.report_end_time),
                    }
                )
        return out

    def dead_servers(self) -> list[str]:
        """The region servers the master lists as dead, ``host,port,startcode`` (as ZooKeeper
        names them). A name can stay listed after the server's crash procedure has ended (until
        a server starts on the same host and port), so this says a server died, not that anything
        of it is still pending."""
        request = Master_pb2.GetClusterStatusRequest(options=[ClusterStatus_pb2.DEAD_SERVERS])
        status = self._master("GetClusterStatus", request, Master_pb2.GetClusterStatusResponse, "*", "read cluster status")
        return sorted(f"{s.host_name},{s.port},{s.start_code}" for s in status.cluster_status.dead_servers)

    def regions_in_transition(self, table: str | None = None) -> list[str]:
        """The regions the master has in transition (opening, closing, splitting...), each as
        ``region name: STATE``; empty when every region is settled. ``table``: only that table's
        (by the region's own table name, as the master reports it)."""
        request = Master_pb2.GetClusterStatusRequest(options=[ClusterStatus_pb2.REGIONS_IN_TRANSITION])
        status = self._master("GetClusterStatus", request, Master_pb2.GetClusterStatusResponse, "*", "read cluster status")
        return in_transition(status.cluster_status, table)

    def unclaimed_replication_queues(self, peer_id: str, servers: Sequence[str], parent: str = "/hbase") -> list[str] | None:
        """Which of ``servers`` (``host,port,startcode``: dead ones) still own a replication queue
        for ``peer_id`` that no live server has claimed: read from ZooKeeper, where HBase 2.x keeps
        the queues (``<parent>/replication/rs/<server>/<queue id>/<WAL>``; a claim moves the queue
        under the claiming server as ``<peer>-<dead server>``). None when the queues are not there
        (HBase 3 keeps them in the hbase:replication table); a StoreError when ZooKeeper fails."""
        from kazoo.client import KazooClient
        from kazoo.exceptions import KazooException, NoNodeError
        from kazoo.handlers.threading import KazooTimeoutError

        root = f"{parent}/replication/rs"
        client = KazooClient(hosts=self.cluster.quorum, timeout=10)
        try:
            client.start(timeout=self.cluster.connect_timeout + 2)
            if client.exists(root) is None:
                return None
            queues: dict[str, list[str]] = {}
            for server in servers:
                try:
                    queues[server] = client.get_children(f"{root}/{server}")
                except NoNodeError:  # its last queue was claimed: HBase removed the server's node
                    queues[server] = []
            return servers_with_queue(peer_id, queues)
        except (KazooException, KazooTimeoutError) as exc:
            raise StoreError(f"could not read the replication queues in ZooKeeper at {self.cluster.quorum}: {exc!r}") from None
        finally:
            client.stop()
            client.close()

    def major_compact_table(self, table: str, timeout: float = 60.0) -> None:
        """Flush ``table``, major-compact every region, and wait until each region reports a
        major compaction that ended after the request (``last_major_compaction_ts`` in the
        servers' load reports)."""
        namespace, name = split_table_name(table)
        regions = self.cluster.region_list(namespace, name, refresh=True).regions
        if not regions:
            raise self.not_found(table)
        # Asked before the flush: a flush that makes a store's third file starts HBase's own
        # compaction of all of them, whose output (a major compaction) counts.
        asked = int(time.time() * 1000)
        for region in regions:  # a major compaction compacts store files: the memstore first
            conn = self.cluster.connection(region.host, region.port, "AdminService")
            try:
                conn.call("FlushRegion", Admin_pb2.FlushRegionRequest(region=region.spec()), Admin_pb2.FlushRegionResponse)
            except ServerError as exc:
                raise self.refused(exc, table, "flush") from None
        for region in regions:
            self._compact_region(table, region)
        names = {bytes(r.name) for r in regions}
        deadline = time.monotonic() + timeout
        again = time.monotonic() + 10.0
        while True:
            done = {
                bytes(r.region_specifier.value)
                for live in self._live_servers()
                for r in live.server_load.region_loads
                if bytes(r.region_specifier.value) in names and int(r.last_major_compaction_ts) >= asked
            }
            if done >= names:
                return
            if time.monotonic() > deadline:
                raise StoreError(f"major compaction of {table!r}: {len(names - done)} region(s) not compacted after {timeout:.0f} s")
            if time.monotonic() > again:
                # A request that finds the store's files all taken by a running compaction (one
                # HBase starts by itself, e.g. after a bulk load) selects nothing and is dropped
                # without a word: ask again for the regions not done yet.
                for region in regions:
                    if bytes(region.name) not in done:
                        self._compact_region(table, region)
                again = time.monotonic() + 10.0
            time.sleep(0.5)

    def set_replication_peer_enabled(self, peer_id: str, enabled: bool) -> None:
        """Enable or disable replication peer ``peer_id`` and wait for the procedure. A disabled
        peer's sources keep their WALs and positions but read nothing into memory for it (an
        enabled peer nobody answers holds up to replication.source.size.capacity, 64 MB, of edits
        per source in the region server's heap)."""
        what = f"{'enable' if enabled else 'disable'} replication peer {peer_id!r}"
        try:
            if enabled:
                response: Any = self.cluster.master_call(
                    "EnableReplicationPeer",
                    Replication_pb2.EnableReplicationPeerRequest(peer_id=peer_id),
                    Replication_pb2.EnableReplicationPeerResponse,
                )
            else:
                response = self.cluster.master_call(
                    "DisableReplicationPeer",
                    Replication_pb2.DisableReplicationPeerRequest(peer_id=peer_id),
                    Replication_pb2.DisableReplicationPeerResponse,
                )
            self._wait_procedure(response.proc_id, what)
        except ServerError as exc:
            raise StoreError(f"HBase refused to {what}: {exc}") from None

    def replication_peer_states(self) -> dict[str, bool]:
        """Every replication peer of the cluster: peer id -> enabled."""
        try:
            response = self.cluster.master_call(
                "ListReplicationPeers", Replication_pb2.ListReplicationPeersRequest(), Replication_pb2.ListReplicationPeersResponse
            )
        except ServerError as exc:
            raise StoreError(f"HBase refused to list replication peers: {exc}") from None
        return {p.id: p.state.state == Replication_pb2.ReplicationState.ENABLED for p in response.peer_desc}


def servers_with_queue(peer_id: str, queues: Mapping[str, Sequence[str]]) -> list[str]:
    """The servers of ``queues`` (server -> its queue ids in ZooKeeper) that own a queue of
    ``peer_id``: its own (``peer_id``) or one it had claimed from an earlier dead server
    (``peer_id-<server>...``)."""
    return sorted(s for s, ids in queues.items() if any(q == peer_id or q.startswith(peer_id + "-") for q in ids))


def in_transition(status: ClusterStatus_pb2.ClusterStatus, table: str | None = None) -> list[str]:
    """``region name: STATE`` of each region in transition in a cluster status, only ``table``'s
    when given (matched on the region's own table name, not on a prefix of its region name)."""
    state = ClusterStatus_pb2.RegionState.State
    moving = list(status.regions_in_transition)
    if table is not None:
        namespace, name = (part.encode() for part in split_table_name(table))
        moving = [
            r
            for r in moving
            if (r.region_state.region_info.table_name.namespace, r.region_state.region_info.table_name.qualifier) == (namespace, name)
        ]
    return sorted(f"{to_string_binary(r.spec.value)}: {state.Name(r.region_state.state)}" for r in moving)
