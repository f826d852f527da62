"""The connection-level half of ``HBaseStore`` that its scan, writer and admin parts share:
the cluster handle, bounded retries with backoff, one-line errors for a server's refusals, column
selection and mutation building. ``scan`` and ``writer`` import this module, never the store's
entry module, so the package has no import cycle.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, wait
from typing import Any, Self, TypeVar

from hbasedriver.protobuf_py import Client_pb2

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import StoreError, TableNotFound
from keyshape.store.base import as_bytes, split_table_name
from keyshape.store.hbase.acl import PermissionDenied, denied_line
from keyshape.store.hbase.admin import HBaseAdmin
from keyshape.store.hbase.auth import Security
from keyshape.store.hbase.cluster import Cluster
from keyshape.store.hbase.errors import ConnectionLost, ServerError
from keyshape.store.hbase.framing import RpcConnection
from keyshape.store.hbase.regions import Region
from keyshape.store.hbase.senders import SenderPool

log = logging.getLogger("keyshape.store.hbase")

__all__ = ["HBaseClient", "cells_of"]

T = TypeVar("T")
MutationType = Client_pb2.MutationProto.MutationType


def cells_of(result: Client_pb2.Result) -> dict[bytes, bytes]:
    """``{b"family:qualifier": value}`` of a Result (the first, i.e. newest, cell per column)."""
    cells = result.cell
    if len(cells) == 1:  # the usual row of one cell: no loop, no setdefault
        cell = cells[0]
        return {cell.family + b":" + cell.qualifier: cell.value}
    out: dict[bytes, bytes] = {}
    for cell in cells:
        out.setdefault(cell.family + b":" + cell.qualifier, cell.value)
    return out


class HBaseClient(HBaseAdmin):
    """Connection, retries and request building of a real HBase cluster (``HBaseStore`` adds the
    Store protocol's data operations).

    ``retries``: how many times one request (or the failed rows of one batch) is retried after a
    transient error; the waits double from ``backoff`` seconds up to ``max_backoff``.
    ``timeout``: socket timeout of one RPC in seconds. ``user``: the user named in the RPC
    connection header (SIMPLE authentication; default ``HADOOP_USER_NAME``, else the login user;
    under Kerberos it is the authenticated principal). ``security``: TLS and Kerberos
    (``auth.Security``; ``from_url`` reads it from the URL's query).
    """

    def __init__(
        self,
        quorum: str,
        retries: int = 10,
        backoff: float = 0.1,
        max_backoff: float = 5.0,
        timeout: float = 60.0,
        user: str | None = None,
        security: Security | None = None,
    ) -> None:
        self.quorum = quorum
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.cluster = Cluster(quorum, timeout=timeout, user=user, security=security)
        self.user = self.cluster.user
        self.retry_count = 0  # transient failures retried since the store was opened
        self._families: dict[tuple[str, str], set[bytes]] = {}
        self._lock = threading.Lock()
        # Nonces let the server apply a retried Increment/CreateTable once. They come from
        # `secrets`, not `random`: test frameworks (Hypothesis) reseed `random`, and a repeated
        # nonce makes HBase silently treat a NEW request as a retry of an old one.
        self._nonce_group = secrets.randbits(63)
        self._closed = False
        # batch writers' batches being sent in the background (see HBaseWriter), on the
        # store's own sender threads (shut down when the store closes)
        self._writes_in_flight: set[Future[Any]] = set()
        self.senders = SenderPool()

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Self:
        """``hbase://host:port[,host:port][?options]`` or ``host:port``: the ZooKeeper quorum of
        the cluster, and how to authenticate (``auth=kerberos&principal=...&keytab=...&
        protection=privacy&tls=true&tls_ca=...``, see ``auth.Security``). StoreError (quickly)
        when nothing listens there."""
        address, _, query = url.partition("?")
        quorum = address.removeprefix("hbase://").rstrip("/")
        if not quorum or "/" in quorum:
            raise StoreError(f"bad HBase address {url!r}: use hbase://HOST:PORT (ZooKeeper)")
        if query and "security" not in options:
            options["security"] = Security.from_query(query)
        return cls(quorum, **options)

    def settle_writes(self) -> None:
        """Wait for every batch this store's writers are sending in the background, so a read
        through this store sees the store's own writes (their errors surface at the writer)."""
        if self._writes_in_flight:
            wait(self._writes_in_flight.copy())  # copy(): other threads discard finished ones

    # --- retries ---------------------------------------------------------------------------

    def note_retry(self, attempt: int, what: str, error: BaseException) -> None:
        """Count, log and sleep before retry number ``attempt`` (1-based)."""
        with self._lock:
            self.retry_count += 1
        delay = min(self.backoff * 2 ** (attempt - 1), self.max_backoff)
        log.warning("%s: %s; retry %d/%d in %.2f s", what, error, attempt, self.retries, delay)
        if isinstance(error, ConnectionLost):
            self.cluster.relocate()
        time.sleep(delay)

    def with_region(self, table: str, row: bytes, what: str, call: Callable[[RpcConnection, Region], T]) -> T:
        """Run ``call`` against the region holding ``row``, retrying transient failures."""
        namespace, name = split_table_name(table)
        attempt = 0
        while True:
            try:
                regions = self.cluster.region_list(namespace, name, refresh=attempt > 0)
                if not regions.regions:
                    raise self.not_found(table)
                region = regions.at(row)
                return call(self.cluster.connection(region.host, region.port), region)
            except (ConnectionLost, ServerError) as exc:
                if isinstance(exc, ServerError) and not exc.relocate:
                    raise self.refused(exc, table, what) from None
                attempt += 1
                if attempt > self.retries:
                    raise StoreError(f"{what} on {table!r} failed after {self.retries} retries: {exc}") from exc
                self.note_retry(attempt, f"{what} on {table!r}", exc)

    def not_found(self, table: str) -> TableNotFound:
        namespace, _ = split_table_name(table)
        if namespace != "default" and not self.namespace_exists(namespace):
            return TableNotFound(
                f"table {table!r} does not exist: namespace {namespace!r} does not "
                "exist either; check the name (namespace:table), or create both from "
                "the schema (keyshape create SCHEMA --hbase HOST:PORT)"
            )
        return TableNotFound(
            f"table {table!r} does not exist; check the name (namespace:table), or "
            "create it from its schema (keyshape create SCHEMA --hbase HOST:PORT)"
        )

    def refused(self, exc: ServerError, table: str, what: str) -> StoreError:
        """A one-line StoreError (or TableNotFound) for a server's refusal."""
        short = exc.short_name
        if short in ("TableNotFoundException", "TableNotEnabledException"):
            return (
                self.not_found(table)
                if short == "TableNotFoundException"
                else StoreError(f"table {table!r} is disabled; enable it in the HBase shell (enable '{table}')")
            )
        if short == "NoSuchColumnFamilyException":
            return StoreError(f"table {table!r}: {self.family_hint(table)} ({exc.message.split(' in region')[0]})")
        if short == "NamespaceNotFoundException":
            return StoreError(
                f"namespace {split_table_name(table)[0]!r} does not exist; create it first (create_namespace, or keyshape.store.ensure_table)"
            )
        if short == "TableExistsException":
            return StoreError(
                f"table {table!r} already exists; use it as it is, drop it in the HBase "
                f"shell (disable '{table}'; drop '{table}'), or give the schema's "
                "[table] another name"
            )
        if short == "AccessDeniedException":
            return PermissionDenied(denied_line(exc.message, table, what))
        return StoreError(f"HBase refused {what} on {table!r}: {exc}")

    def family_hint(self, table: str) -> str:
        try:
            known = ", ".join(sorted(f.decode() for f in self.families(table)))
        except StoreError:
            return "unknown column family"
        return f"unknown column family; its families are: {known}"

    # --- columns -----------------------------------------------------------------------------

    def require_table(self, table: str) -> None:
        """TableNotFound now rather than at the first request. A user who may read and write but
        not describe the table (HBase's AccessController wants CREATE or ADMIN for that) passes:
        the server checks every request itself."""
        try:
            self.families(table)
        except PermissionDenied:
            pass

    def check_family(self, table: str, family: bytes) -> None:
        try:
            known = self.families(table)
        except PermissionDenied:
            return  # may not describe the table: the server rejects an unknown family per request
        if family not in known:
            raise StoreError(f"table {table!r} has no column family {to_string_binary(family)!r}; {self.family_hint(table).split('; ', 1)[-1]}")

    def column_selection(self, table: str, columns: Iterable[bytes] | None) -> list[Client_pb2.Column]:
        """Get/Scan ``Column``s for ``columns`` (b"family" or b"family:qualifier"); a family
        selected whole also swallows its single columns (HBase would narrow it instead)."""
        if columns is None:
            return []
        if isinstance(columns, (bytes, bytearray)):
            columns = [columns]
        whole: set[bytes] = set()
        singles: dict[bytes, list[bytes]] = {}
        for column in columns:
            family, sep, qualifier = as_bytes(column, "a column").partition(b":")
            self.check_family(table, family)
            if sep:
                singles.setdefault(family, []).append(qualifier)
            else:
                whole.add(family)
        out = [Client_pb2.Column(family=f) for f in sorted(whole)]
        out += [Client_pb2.Column(family=f, qualifier=q) for f, q in sorted(singles.items()) if f not in whole]
        return out

    def mutation(
        self,
        table: str,
        row: Any,
        cells: Mapping[bytes, bytes] | None,
        timestamp: int | None = None,
        columns: Iterable[bytes] | None = None,
        check: bool = True,
    ) -> Client_pb2.MutationProto:
        """A PUT (``cells`` given) or DELETE MutationProto; ``check`` validates families here
        (the batch writer leaves that to the server, which reports the row)."""
        row = as_bytes(row, "a row key")
        if not row:
            raise StoreError("a row key must not be empty")
        proto = Client_pb2.MutationProto(row=row)
        grouped: dict[bytes, list[Client_pb2.MutationProto.ColumnValue.QualifierValue]] = {}
        QV = Client_pb2.MutationProto.ColumnValue.QualifierValue
        if cells is not None:
            proto.mutate_type = MutationType.PUT
            if not cells:
                raise StoreError(f"put to row {to_string_binary(row)!r} has no cells")
            for column, value in cells.items():
                family, sep, qualifier = as_bytes(column, "a column").partition(b":")
                if not sep:
                    raise StoreError(f"column {to_string_binary(bytes(column))!r} has no ':'; name cells b'family:qualifier'")
                if check:
                    self.check_family(table, family)
                grouped.setdefault(family, []).append(QV(qualifier=qualifier, value=as_bytes(value, "a cell value")))
            if timestamp is not None:
                proto.timestamp = int(timestamp)
        else:
            proto.mutate_type = MutationType.DELETE
            if isinstance(columns, (bytes, bytearray)):
                columns = [columns]
            for column in columns or ():
                family, sep, qualifier = as_bytes(column, "a column").partition(b":")
                if check:
                    self.check_family(table, family)
                kind = Client_pb2.MutationProto.DELETE_MULTIPLE_VERSIONS if sep else Client_pb2.MutationProto.DELETE_FAMILY
                grouped.setdefault(family, []).append(QV(qualifier=qualifier, delete_type=kind))
        proto.column_value.extend(Client_pb2.MutationProto.ColumnValue(family=f, qualifier_value=qvs) for f, qvs in grouped.items())
        return proto
