"""Namespaces and tables of ``HBaseStore``: MasterService requests, each waited for until its
procedure finishes (HBase's CreateTable/DeleteTable/CreateNamespace return before the work is
done; hbase-driver sleeps fixed seconds instead).
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from hbasedriver.protobuf_py import HBase_pb2, Master_pb2

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import StoreError, TableNotFound
from keyshape.store.base import as_bytes, join_table_name, split_table_name
from keyshape.store.hbase.families import family_schema, read_family_options
from keyshape.store.hbase.rpc import Cluster, ConnectionLost, ServerError

__all__ = ["HBaseAdmin"]

T = TypeVar("T")
_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9_]+$")


class HBaseAdmin:
    """The namespace/table half of ``HBaseStore`` (a mixin: needs ``cluster``, ``refused``,
    ``not_found``, ``_families`` and ``_nonce_group`` from the store)."""

    cluster: Cluster
    _families: dict[tuple[str, str], set[bytes]]
    _nonce_group: int

    if TYPE_CHECKING:
        def refused(self, exc: ServerError, table: str, what: str) -> StoreError: ...

        def not_found(self, table: str) -> TableNotFound: ...

    # --- namespaces and tables ---------------------------------------------------------------

    def _wait_procedure(self, proc_id: int, what: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        delay = 0.02
        while True:
            state = self.cluster.master_call("getProcedureResult", Master_pb2.GetProcedureResultRequest(
                proc_id=proc_id), Master_pb2.GetProcedureResultResponse)
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
        response = self._master("ListNamespaces", Master_pb2.ListNamespacesRequest(),
                                Master_pb2.ListNamespacesResponse, "hbase:namespace", "list namespaces")
        return sorted(response.namespaceName)

    def delete_namespace(self, namespace: str) -> None:
        """Remove an empty namespace (StoreError if it holds tables or is missing)."""
        try:
            response = self.cluster.master_call("DeleteNamespace", Master_pb2.DeleteNamespaceRequest(
                namespaceName=namespace), Master_pb2.DeleteNamespaceResponse)
            self._wait_procedure(response.proc_id, f"delete namespace {namespace!r}")
        except ServerError as exc:
            raise StoreError(f"cannot delete namespace {namespace!r}: {exc}") from None

    def create_table(self, spec: Any, split_keys: Sequence[bytes] = (),
                     attributes: Mapping[str, str] | None = None) -> None:
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
        splits = sorted(as_bytes(k, "a split key") for k in split_keys)
        if any(not k for k in splits):
            raise StoreError(f"cannot create table {full!r}: an empty split key is not allowed (HBase "
                             "refuses b'' in the split keys)")
        for a, b in zip(splits, splits[1:]):
            if a == b:
                raise StoreError(f"cannot create table {full!r}: split key {to_string_binary(a)!r} "
                                 "is listed twice (HBase: all split keys must be unique)")
        if not self.namespace_exists(namespace):
            raise StoreError(f"namespace {namespace!r} does not exist; create it first "
                             "(create_namespace, or keyshape.store.ensure_table)")
        request = Master_pb2.CreateTableRequest(split_keys=splits, nonce_group=self._nonce_group,
                                                nonce=secrets.randbits(63))
        request.table_schema.table_name.namespace = namespace.encode()
        request.table_schema.table_name.qualifier = name.encode()
        request.table_schema.column_families.extend(families)
        for key, value in (attributes or {}).items():
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
            raise StoreError(f"table {full!r} was created with {len(regions)} region(s), expected "
                             f"{len(splits) + 1}")

    def delete_table(self, name: str) -> None:
        """Disable and delete ``name``; TableNotFound if absent."""
        namespace, table = split_table_name(name)
        table_name = HBase_pb2.TableName(namespace=namespace.encode(), qualifier=table.encode())
        try:
            response = self.cluster.master_call("DisableTable", Master_pb2.DisableTableRequest(
                table_name=table_name), Master_pb2.DisableTableResponse)
            self._wait_procedure(response.proc_id, f"disable table {name!r}")
        except ServerError as exc:
            if exc.short_name != "TableNotEnabledException":
                raise self.refused(exc, name, "disable table") from None
        response = self._master("DeleteTable", Master_pb2.DeleteTableRequest(table_name=table_name),
                                Master_pb2.DeleteTableResponse, name, "delete table")
        try:
            self._wait_procedure(response.proc_id, f"delete table {name!r}")
        except ServerError as exc:
            raise self.refused(exc, name, "delete table") from None
        self._families.pop((namespace, table), None)
        self.cluster.forget(namespace, table)

    def _descriptor(self, name: str) -> HBase_pb2.TableSchema | None:
        namespace, table = split_table_name(name)
        request = Master_pb2.GetTableDescriptorsRequest(
            table_names=[HBase_pb2.TableName(namespace=namespace.encode(), qualifier=table.encode())])
        try:
            response = self.cluster.master_call("GetTableDescriptors", request,
                                                Master_pb2.GetTableDescriptorsResponse)
        except ServerError as exc:
            if exc.short_name in ("TableNotFoundException", "NamespaceNotFoundException"):
                return None
            raise self.refused(exc, name, "describe table") from None
        return response.table_schema[0] if response.table_schema else None

    def table_exists(self, name: str) -> bool:
        return self._descriptor(name) is not None

    def describe_table(self, name: str) -> dict[str, dict[str, str]]:
        """Each family's attributes as HBase reports them (``VERSIONS``, ``COMPRESSION`` ...)."""
        schema = self._descriptor(name)
        if schema is None:
            raise self.not_found(name)
        return {f.name.decode(): read_family_options(f) for f in schema.column_families}

    def families(self, name: str) -> set[bytes]:
        """The table's family names (cached per store; TableNotFound if absent)."""
        key = split_table_name(name)
        known = self._families.get(key)
        if known is None:
            known = self._families[key] = {f.encode() for f in self.describe_table(name)}
        return known

    def list_tables(self) -> list[str]:
        response = self._master("GetTableNames", Master_pb2.GetTableNamesRequest(include_sys_tables=False),
                                Master_pb2.GetTableNamesResponse, "*", "list tables")
        return sorted(join_table_name(t.namespace.decode(), t.qualifier.decode())
                      for t in response.table_names)
