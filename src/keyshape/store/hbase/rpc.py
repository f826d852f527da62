"""HBase's native RPC, spoken directly: framing, ZooKeeper lookup and the region map from hbase:meta.

hbase-driver (PyPI ``hbase-driver``, import ``hbasedriver``) supplies the protobuf classes and the
ZooKeeper znode parsing; the request/response framing and region routing live here because the
driver's own versions are wrong in ways tools/hbase/CLIENTS.md documents:

- Bug 1 (``to_varint(n).encode("utf-8")``): requests of 128 KiB or more carry a corrupt length
  varint. ``RpcConnection.call`` is the ONE place that frames a request, with a correct varint and
  ``sendall`` (the driver's ``socket.send`` may send only part of a large request).
- Bug 2 (rows equal to a split key routed to the previous region) and bug 8 (a region cache keyed
  by region id only): ``Cluster.regions`` reads the whole table's region list from hbase:meta and
  ``locate`` bisects it; the list is re-read when a server answers NotServingRegion,
  RegionMoved, WrongRegion or the connection drops.
"""

from __future__ import annotations

import bisect
import getpass
import hashlib
import itertools
import logging
import os
import socket
import struct
import threading
import time
from dataclasses import dataclass
from typing import NoReturn, TypeVar

from google.protobuf.message import DecodeError, Message
from hbasedriver.protobuf_py import Client_pb2, HBase_pb2, RPC_pb2, ZooKeeper_pb2
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.handlers.threading import KazooTimeoutError

from keyshape.errors import StoreError
from keyshape.store.hbase.auth import Security, client_principal, open_channel

__all__ = ["AuthenticationRequired", "Cluster", "ConnectionLost", "Region", "RpcConnection", "ServerError", "effective_user", "quiet_driver_logs"]

log = logging.getLogger("keyshape.store.hbase")
M = TypeVar("M", bound=Message)

KEYVALUE_CODEC = "org.apache.hadoop.hbase.codec.KeyValueCodec"

# Far above hbase.ipc.max.response.size defaults; a larger length means the peer is not speaking
# HBase RPC (e.g. a SASL or TLS reply read as a frame), so waiting for that many bytes would hang.
_MAX_RESPONSE = 1 << 30

# Server exceptions after which re-reading the region map and retrying is the right move.
RELOCATE = frozenset(
    "org.apache.hadoop.hbase." + name
    for name in (
        "NotServingRegionException",
        "exceptions.RegionMovedException",
        "exceptions.RegionOpeningException",
        "regionserver.WrongRegionException",
        "exceptions.FailedSanityCheckException",
        "RegionTooBusyException",
        "ipc.ServerNotRunningYetException",
        "regionserver.RegionServerStoppedException",
        "ipc.CallQueueTooBigException",
        "RetryImmediatelyException",
        "PleaseHoldException",
        "exceptions.UnknownProtocolException",
    )
)


def effective_user(user: str | None = None) -> str:
    """The user keyshape names in the RPC connection header, chosen as HBase's Java client does
    under SIMPLE authentication (``User.getCurrent()`` via Hadoop's UserGroupInformation): the
    explicit ``user`` (``--user``), else ``HADOOP_USER_NAME``, else the operating-system login
    user. On a cluster with ACLs this is the identity every request is checked against."""
    for candidate in (user, os.environ.get("HADOOP_USER_NAME")):
        if candidate is not None and candidate.strip():
            return candidate.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError) as exc:  # no login name and no passwd entry (e.g. a bare container uid)
        raise StoreError(
            "cannot tell which user to connect to HBase as (no login name for this process); pass --user NAME or set HADOOP_USER_NAME"
        ) from exc


class AuthenticationRequired(StoreError):
    """The server refused SIMPLE authentication: the cluster requires SASL (Kerberos)."""


# What RpcServer answers a SIMPLE preamble with when hbase.security.authentication is kerberos
# and fallback to simple auth is off (ServerRpcConnection.processPreamble): an error response
# carrying AccessDeniedException("Authentication is required"), then it closes the connection.
_AUTH_DENIED = "org.apache.hadoop.hbase.security.AccessDeniedException"


def _auth_required(host: str, port: int, detail: str) -> AuthenticationRequired:
    first = detail.strip().splitlines()[0] if detail.strip() else "Authentication is required"
    return AuthenticationRequired(
        f"HBase at {host}:{port} requires SASL (Kerberos) authentication ({first}); this connection "
        "uses SIMPLE: connect with auth=kerberos (hbase://HOST:PORT?auth=kerberos after kinit, or "
        "with principal=...&keytab=...)"
    )  # never advise letting unauthenticated clients in (fallback-to-simple-auth on the servers)


def quiet_driver_logs() -> None:
    """Keep kazoo's and hbase-driver's connection chatter off the console; keyshape reports
    failures itself as one StoreError line."""
    for name in ("kazoo", "kazoo.client", "kazoo.protocol.connection", "pybase", "hbasedriver"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # hbasedriver.zk sets its own logger to DEBUG at import time.
    logging.getLogger("pybase.hbasedriver.zk").setLevel(logging.CRITICAL)


class ServerError(Exception):
    """An exception the HBase server sent back (``class_name`` is the Java class)."""

    def __init__(self, class_name: str, detail: str) -> None:
        self.class_name = class_name
        self.short_name = class_name.rsplit(".", 1)[-1]
        # The server's "stack trace" starts with "ClassName: message"; keep the message line.
        first = (detail or "").strip().splitlines()[0] if (detail or "").strip() else ""
        self.message = first.split(": ", 1)[1] if first.startswith(class_name + ": ") else first
        super().__init__(f"{self.short_name}: {self.message}")

    @property
    def relocate(self) -> bool:
        return self.class_name in RELOCATE


class ConnectionLost(Exception):
    """The socket to a server failed (refused, reset, closed or timed out)."""


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(0x80 | bits)
        else:
            out.append(bits)
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


class RpcConnection:
    """One socket to an HBase server for one service (ClientService, MasterService,
    AdminService). Threads may share a connection, and one caller may keep several calls in
    flight: :meth:`send` returns a call id at once and :meth:`receive` waits for that call's
    answer. HBase answers calls in the order it finishes them, not the order they came in: one
    waiting caller at a time reads the socket, keeps an answer that belongs to another call for
    it and wakes the others, so a caller whose answer is already read takes it without waiting
    for the socket."""

    def __init__(
        self,
        host: str,
        port: int,
        service: str,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        user: str | None = None,
        security: Security | None = None,
        cell_blocks: bool = False,
    ) -> None:
        self.host, self.port, self.service = host, port, service
        self.cell_blocks = cell_blocks
        self.user = effective_user(user)
        self._send_lock = threading.Lock()
        self._cond = threading.Condition(threading.Lock())  # guards _answers and _reading
        self._reading = False  # a caller is reading the socket (only one at a time)
        self._ids = itertools.count(1)
        self._waiting: dict[int, str] = {}  # call id -> method, for calls not answered yet
        self._answers: dict[int, bytes] = {}  # answers read for calls whose caller is not reading
        try:
            # TLS, the preamble and authentication (auth.py); then the ConnectionHeader.
            self._sock = open_channel(host, port, timeout, connect_timeout, security)
            header = RPC_pb2.ConnectionHeader(service_name=service)
            # Under Kerberos the effective user must be the authenticated principal (any other
            # name is impersonation, which the server refuses).
            if self._sock.user:
                self.user = self._sock.user
            header.user_info.effective_user = self.user
            if cell_blocks:
                # Cells of results then come after the response message as one block of
                # KeyValues (what the Java client asks for), not as protobuf messages: see
                # keyshape.store.hbase.cellblock.
                header.cell_block_codec_class = KEYVALUE_CODEC
            body = header.SerializeToString()
            self._sock.sendall(struct.pack(">I", len(body)) + body)
        except OSError as exc:
            raise ConnectionLost(f"cannot connect to {service} at {host}:{port}: {exc}") from exc
        self.broken = False

    @property
    def in_flight(self) -> int:
        """Calls sent and not answered yet."""
        return len(self._waiting)

    def call(self, method: str, request: Message | bytes, response_cls: type[M]) -> M:
        """Send ``request`` (a message, or its serialized bytes) as ``method`` and parse the
        answer as ``response_cls``: :meth:`send` then :meth:`receive`."""
        return self.receive(self.send(method, request), response_cls)

    def send(self, method: str, request: Message | bytes) -> int:
        """Send ``request`` as ``method`` without waiting for the answer; the call's id, for
        :meth:`receive` (every id sent must be received, or the answer is kept until then).

        Framing (HBase's ``RpcServer``): a 4-byte big-endian total length, then the delimited
        ``RequestHeader`` and the delimited request, each preceded by its length as a protobuf
        varint. This is where hbase-driver's bug 1 is fixed: its varint was the UTF-8 encoding
        of a str of code points, which for lengths >= 128 KiB is not the varint.
        """
        body = request if isinstance(request, bytes) else request.SerializeToString()
        with self._send_lock:
            if self.broken:
                raise ConnectionLost(f"connection to {self.host}:{self.port} is closed")
            call_id = next(self._ids) & 0x7FFFFFFF
            header = RPC_pb2.RequestHeader(call_id=call_id, method_name=method, request_param=True)
            head = header.SerializeToString()
            frame = _varint(len(head)) + head + _varint(len(body)) + body
            self._waiting[call_id] = method
            try:
                self._sock.sendall(struct.pack(">I", len(frame)) + frame)
            except OSError as exc:
                self._waiting.pop(call_id, None)
                with self._cond:  # the socket is read here only when no caller is reading it
                    reader = not self._reading
                    self._reading = True
                try:
                    self._fail(method, exc, reader)
                finally:
                    with self._cond:
                        if reader:
                            self._reading = False
                        self._cond.notify_all()
        return call_id

    def receive(self, call_id: int, response_cls: type[M]) -> M:
        """The answer to call ``call_id`` (from :meth:`send`), parsed as ``response_cls``;
        ServerError when the server answered with an exception."""
        return self.receive_with_cells(call_id, response_cls)[0]

    def receive_with_cells(self, call_id: int, response_cls: type[M]) -> tuple[M, bytes]:
        """:meth:`receive`, plus the cell block that followed the answer (empty when none: a
        connection opened without ``cell_blocks`` never gets one)."""
        method = self._waiting.get(call_id, "call")
        with self._cond:
            while True:
                data = self._answers.pop(call_id, None)
                if data is not None:
                    break
                if call_id not in self._waiting:  # a caller's bug, not the server's: say so now
                    raise ConnectionLost(f"call {call_id} to {self.host}:{self.port} was never sent or was answered already")
                if self.broken:
                    self._waiting.pop(call_id, None)
                    raise ConnectionLost(f"{method} to {self.host}:{self.port} failed: the connection is closed")
                if self._reading:
                    self._cond.wait()
                    continue
                self._reading = True
                self._cond.release()
                try:
                    got, frame = self._read_frame(method)
                finally:
                    self._cond.acquire()
                    self._reading = False
                    self._cond.notify_all()
                if got == call_id:
                    data = frame
                    break
                self._answers[got] = frame  # another caller's: it takes it from here
            self._waiting.pop(call_id, None)
        return self._parse(data, method, response_cls)

    def _read_frame(self, method: str) -> tuple[int, bytes]:
        """The next answer on the socket: its call id and the bytes after its header (the
        caller is the one reading: ``_reading``)."""
        try:
            size = struct.unpack(">I", self._recv(4))[0]
            if size > _MAX_RESPONSE:
                raise ConnectionResetError(f"announced a {size}-byte response, more than any HBase sends")
            data = self._recv(size)
        except OSError as exc:
            self._fail(method, exc)
        try:
            head_len, pos = _read_varint(data, 0)
            response_header = RPC_pb2.ResponseHeader.FromString(data[pos : pos + head_len])
        except (IndexError, DecodeError) as exc:
            self._break()
            raise ConnectionLost(
                f"{self.host}:{self.port} answered {method} with bytes that are not an HBase RPC response ({exc}); is this an HBase server port?"
            ) from exc
        pos += head_len
        got = response_header.call_id
        if got == 0xFFFFFFFF and response_header.HasField("exception") and response_header.exception.exception_class_name == _AUTH_DENIED:
            # Sent for the connection (call id -1), not for this call, before the server hangs up;
            # an AccessDeniedException answering this call id is a permission refusal instead.
            self._break()
            raise _auth_required(self.host, self.port, response_header.exception.stack_trace)
        if got not in self._waiting:
            self._break()
            raise ConnectionLost(f"{self.host}:{self.port} answered call {got}, which was not sent or was answered already (reading {method})")
        if response_header.HasField("exception"):
            exc_pb = response_header.exception
            return got, b"E" + exc_pb.SerializeToString()
        return got, b"R" + data[pos:]

    @staticmethod
    def _parse(data: bytes, method: str, response_cls: type[M]) -> tuple[M, bytes]:
        if data[:1] == b"E":
            exc_pb = RPC_pb2.ExceptionResponse.FromString(data[1:])
            raise ServerError(exc_pb.exception_class_name, exc_pb.stack_trace)
        body_len, pos = _read_varint(data, 1)
        end = pos + body_len
        return response_cls.FromString(data[pos:end]), data[end:]

    def _fail(self, method: str, exc: OSError, read: bool = True) -> NoReturn:
        """The socket failed: say why (an authentication refusal sent before the server hung
        up, else the lost connection) and break the connection for every caller. ``read``:
        whether the socket may be read for that refusal (no other caller is reading it)."""
        refusal = self._pending_refusal() if read else None
        self._break()
        if refusal is not None:
            raise refusal from None
        raise ConnectionLost(f"{method} to {self.host}:{self.port} failed: {exc}") from exc

    def _pending_refusal(self) -> AuthenticationRequired | None:
        """After a failed send or read: the authentication refusal the server may have sent
        before it hung up (it answers the preamble, so the reply can beat our first call)."""
        try:
            self._sock.settimeout(1.0)
            size = struct.unpack(">I", self._recv(4))[0]
            data = self._recv(min(size, 1 << 16))
            head_len, pos = _read_varint(data, 0)
            header = RPC_pb2.ResponseHeader.FromString(data[pos : pos + head_len])
        except (OSError, IndexError, DecodeError, struct.error):
            return None
        if header.call_id == 0xFFFFFFFF and header.HasField("exception") and header.exception.exception_class_name == _AUTH_DENIED:
            return _auth_required(self.host, self.port, header.exception.stack_trace)
        return None

    def _recv(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = self._sock.recv(min(left, 1 << 20))
            if not chunk:
                raise ConnectionResetError("server closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _break(self) -> None:
        self.broken = True
        try:
            self._sock.close()
        except OSError:
            pass

    def close(self) -> None:
        with self._send_lock:
            self._break()
        with self._cond:
            self._cond.notify_all()  # callers waiting for an answer see the connection closed


@dataclass(frozen=True)
class Region:
    """One online region: ``name`` is the full region name (the hbase:meta row key), which
    ``RegionSpecifier(type=REGION_NAME)`` and RegionLoad use."""

    name: bytes
    start: bytes
    end: bytes
    host: str
    port: int

    def spec(self) -> HBase_pb2.RegionSpecifier:
        return HBase_pb2.RegionSpecifier(type=HBase_pb2.RegionSpecifier.REGION_NAME, value=self.name)

    def contains(self, row: bytes) -> bool:
        return self.start <= row and (not self.end or row < self.end)


class RegionList:
    """A table's regions sorted by start key, for bisecting rows to regions."""

    def __init__(self, regions: list[Region]) -> None:
        self.regions = regions
        self.starts = [r.start for r in regions]

    def at(self, row: bytes) -> Region:
        """The region holding ``row`` (start inclusive, end exclusive)."""
        return self.regions[max(bisect.bisect_right(self.starts, row) - 1, 0)]

    def below(self, row: bytes) -> Region:
        """The region holding the largest key < ``row`` (for reverse scans)."""
        return self.regions[max(bisect.bisect_left(self.starts, row) - 1, 0)]


def region_name(table_name: bytes, start: bytes, region_id: int) -> bytes:
    """A region's full name as HBase writes it (``RegionInfo.createRegionName``, new format):
    ``table,start,id.`` followed by the MD5 hex of ``table,start,id`` and a dot."""
    head = table_name + b"," + start + b"," + str(region_id).encode()
    return head + b"." + hashlib.md5(head).hexdigest().encode() + b"."


def meta_row_prefix(namespace: str, table: str) -> bytes:
    name = table if namespace == "default" else f"{namespace}:{table}"
    return name.encode() + b","


def _znode_message(data: bytes, message: type[M]) -> M:
    """Parse an HBase znode: 0xff, a 4-byte id length, the id, b"PBUF", then the protobuf."""
    if len(data) < 5 or data[:1] != b"\xff":
        raise StoreError(f"not an HBase znode payload: {data[:16]!r}")
    body = data[5 + struct.unpack(">I", data[1:5])[0] :]
    if body[:4] != b"PBUF":
        raise StoreError("HBase znode payload lacks the PBUF magic")
    return message.FromString(body[4:])


def locate_master_and_meta(
    quorum: str, connect_timeout: float, missing_retries: int = 5, parent: str = "/hbase"
) -> tuple[HBase_pb2.ServerName, HBase_pb2.ServerName]:
    """The active master's and hbase:meta's ServerName, read from ZooKeeper ``parent``; a missing
    znode (HBase starting) is retried ``missing_retries`` times, a second apart.

    Replaces hbase-driver's ``locate_master``/``locate_meta_region``, which leave their
    KazooClient running when they raise: the orphaned connection thread then pings (and draws from
    the global ``random`` module, breaking seeded callers such as Hypothesis) until the process
    exits. Here the client is always stopped and closed.
    """
    client = KazooClient(hosts=quorum, timeout=10)
    try:
        client.start(timeout=connect_timeout)
        found: list[HBase_pb2.ServerName] = []
        for path, message in ((f"{parent}/master", ZooKeeper_pb2.Master), (f"{parent}/meta-region-server", ZooKeeper_pb2.MetaRegionServer)):
            for attempt in range(missing_retries + 1):
                try:
                    data, _ = client.get(path)
                    break
                except NoNodeError:
                    if attempt == missing_retries:
                        raise StoreError(f"znode {path} does not exist") from None
                    time.sleep(1)
            parsed = _znode_message(data, message)
            if isinstance(parsed, ZooKeeper_pb2.Master):
                found.append(parsed.master)
            elif isinstance(parsed, ZooKeeper_pb2.MetaRegionServer):
                found.append(parsed.server)
        return found[0], found[1]
    finally:
        client.stop()
        client.close()


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
