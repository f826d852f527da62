"""keyshape's replication sink: an HBase RPC server that poses as a peer cluster's one region
server and receives what HBase's replication sources ship (``AdminService.ReplicateWALEntry``).

The server side of the wire ``framing.py`` speaks as a client: the 6-byte preamble (``HBas``,
version 0, auth SIMPLE=80, or KERBEROS=81 with a :class:`KerberosAcceptor`: SASL GSSAPI and its
security layer; other auth methods are refused), the
``ConnectionHeader`` (its cell block codec must be one ``walentry.CODECS`` names; no compressor),
then calls: ``int32 total`` + varint-delimited ``RequestHeader`` + varint-delimited request + the
cell block of ``cell_block_meta.length`` bytes. Answers: ``int32 total`` + delimited
``ResponseHeader`` + delimited response, or a header with ``exception`` set.

A batch is handed to the callback and acknowledged only after the callback returns; an exception
from it becomes an ExceptionResponse, so the source ships the batch again (at least once). Calls
on one connection are served in the order they arrive.

:class:`RunningSink` adds the registration: ``<parent>/hbaseid`` and ``<parent>/rs/<server>`` in
ZooKeeper (``zk.register_peer_cluster``), and the cluster key to give ``AddReplicationPeer``.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Literal

from google.protobuf.message import DecodeError
from hbasedriver.protobuf_py import Admin_pb2, RPC_pb2
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from keyshape.store.hbase.framing import _read_varint, _varint
from keyshape.store.hbase.walentry import CODECS, WalDecodeError, WalEntry, decode_entries
from keyshape.store.hbase.zk import register_peer_cluster, unregister_peer_cluster

__all__ = ["BatchCallback", "KerberosAcceptor", "ReplicationSink", "RunningSink", "SaslRefused", "clear_stale_registration"]

log = logging.getLogger("keyshape.store.hbase.sink")

BatchCallback = Callable[[list[WalEntry]], None]

_PREAMBLE = b"HBas"
_AUTH_SIMPLE = 80
_AUTH_KERBEROS = 81
_MAX_FRAME = 1 << 30  # above hbase.ipc.max.request.size (256 MB): anything larger is not HBase RPC
_IO_ERROR = "java.io.IOException"
_DO_NOT_RETRY = "org.apache.hadoop.hbase.DoNotRetryIOException"
_FATAL = "org.apache.hadoop.hbase.ipc.FatalConnectionException"


class _Closed(Exception):
    """The peer closed the connection (or the sink is stopping)."""


def _recv(sock: Any, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise _Closed
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _frame(header: RPC_pb2.ResponseHeader, body: bytes | None) -> bytes:
    head = header.SerializeToString()
    data = _varint(len(head)) + head + (b"" if body is None else _varint(len(body)) + body)
    return struct.pack(">I", len(data)) + data


def _exception(call_id: int, class_name: str, message: str, do_not_retry: bool = False) -> bytes:
    header = RPC_pb2.ResponseHeader(call_id=call_id)
    header.exception.exception_class_name = class_name
    header.exception.stack_trace = f"{class_name}: {message}"
    header.exception.do_not_retry = do_not_retry
    return _frame(header, None)


class SaslRefused(Exception):
    """A Kerberos login the sink does not accept (bad token, a principal not allowed)."""


def _sasl_error(message: str) -> bytes:
    """HBase's SASL failure reply: status 1 (ERROR), then the exception class and message as
    Hadoop writable strings (``ServerRpcConnection.doRawSaslReply``)."""
    cls, text = b"org.apache.hadoop.security.AccessControlException", message.encode()
    return struct.pack(">II", 1, len(cls)) + cls + struct.pack(">I", len(text)) + text


class _Wrapped:
    """The byte stream after a SASL integrity/privacy layer: every write is ``u32 len |
    gss_wrap(bytes)``; reads unwrap into a buffer (token boundaries need not match frames)."""

    def __init__(self, sock: socket.socket, context: Any, encrypt: bool) -> None:
        self.sock, self.context, self.encrypt = sock, context, encrypt
        self._buffer = bytearray()

    def sendall(self, data: bytes) -> None:
        token = self.context.wrap(data, self.encrypt).message
        self.sock.sendall(struct.pack(">I", len(token)) + token)

    def recv(self, n: int) -> bytes:
        if not self._buffer:
            size = struct.unpack(">I", _recv(self.sock, 4))[0]
            if size > _MAX_FRAME:
                raise _Closed
            self._buffer += self.context.unwrap(_recv(self.sock, size)).message
        out = bytes(self._buffer[:n])
        del self._buffer[:n]
        return out


class KerberosAcceptor:
    """The server side of HBase's SASL GSSAPI login (RFC 4752, as ``ServerRpcConnection`` runs
    it), for a sink on a Kerberized cluster. A source region server logs in as ITS OWN principal
    (``hbase/<its host>@REALM``) to the server principal it derives from
    ``hbase.regionserver.kerberos.principal`` with ``_HOST`` = the host of the sink's registered
    server name: the sink needs that principal's key in ``keytab`` (the peer's configuration map
    can name another principal pattern for the sink). ``allowed``: a predicate on the client's
    principal (default: every principal whose first component is ``hbase``). ``protection``: the
    SASL layers offered, as ``hbase.rpc.protection`` names them; the client picks one.

    Wire: client ``u32 len | token`` ..., server ``u32 status(0) | u32 len | token``; once the GSS
    context is complete the client sends an empty token, the server the wrapped 4-byte offer
    ``[layers][max buffer]``, the client the wrapped choice; the server sends nothing more."""

    _LAYERS = {"authentication": 0x01, "integrity": 0x02, "privacy": 0x04}

    def __init__(
        self,
        principal: str,
        keytab: str,
        allowed: Callable[[str], bool] | None = None,
        protection: tuple[str, ...] = ("authentication", "integrity", "privacy"),
    ) -> None:
        import gssapi  # the keyshape[kerberos] extra; only a Kerberized sink needs it

        self._gssapi = gssapi
        name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
        self.principal = principal
        self.creds = gssapi.Credentials(name=name, usage="accept", store={"keytab": keytab})
        self.allowed = allowed or (lambda who: who.split("/", 1)[0].split("@", 1)[0] == "hbase")
        self.offer = sum(self._LAYERS[p] for p in protection)
        self.chosen: list[str] = []  # the security layer each login chose

    def login(self, sock: socket.socket) -> tuple[Any, str]:
        """Run the login on a connection whose preamble said KERBEROS; the stream to use from now
        on and the client's principal."""
        gssapi = self._gssapi
        context = gssapi.SecurityContext(creds=self.creds, usage="accept")
        try:
            while not context.complete:
                token = _recv(sock, struct.unpack(">I", _recv(sock, 4))[0])
                out = context.step(token) or b""
                sock.sendall(struct.pack(">II", 0, len(out)) + out)
            client = str(context.initiator_name)
            if not self.allowed(client):
                raise SaslRefused(f"principal {client} may not replicate to this sink")
            _recv(sock, struct.unpack(">I", _recv(sock, 4))[0])  # the client's empty token
            offer = context.wrap(bytes([self.offer]) + (1 << 16).to_bytes(3, "big"), False).message
            sock.sendall(struct.pack(">II", 0, len(offer)) + offer)
            answer = context.unwrap(_recv(sock, struct.unpack(">I", _recv(sock, 4))[0])).message
        except gssapi.exceptions.GSSError as exc:
            raise SaslRefused(f"GSSAPI: {exc}") from None
        chosen = answer[0] if answer else 0
        if not chosen & self.offer or chosen not in (1, 2, 4):
            raise SaslRefused(f"the client chose security layer {chosen}, not one of those offered ({self.offer})")
        self.chosen.append(next(name for name, bit in self._LAYERS.items() if bit == chosen))
        if chosen == 0x01:
            return sock, client
        return _Wrapped(sock, context, encrypt=chosen == 0x04), client


class ReplicationSink:
    """The RPC server. ``on_batch`` gets each ``ReplicateWALEntry`` call's entries (in WAL order
    per region within the call) and must return only once they are durable wherever they go.

    ``host`` is the address the source region servers will connect to (their own view of it: it
    goes into the server name registered in ZooKeeper); ``port`` 0 picks a free one."""

    def __init__(self, on_batch: BatchCallback, host: str = "127.0.0.1", port: int = 0, kerberos: KerberosAcceptor | None = None) -> None:
        self._on_batch = on_batch
        self._kerberos = kerberos
        # bind the loopback address itself when "localhost" is advertised (a Kerberos server
        # principal names a host): getaddrinfo may list ::1 first, the JVM's client uses IPv4
        self._listener = socket.create_server(("127.0.0.1" if host == "localhost" else host, port))
        self.host = host
        self.port = self._listener.getsockname()[1]
        self.start_code = int(time.time() * 1000)
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._stopping = False
        self.batches = 0  # calls acknowledged
        self.rejected = 0  # calls answered with an exception (callback or decoding failed)
        self.connection_headers: list[RPC_pb2.ConnectionHeader] = []  # of every connection accepted (who, which codec)
        self.authenticated: list[str] = []  # the Kerberos principal of every connection that logged in

    @property
    def server_name(self) -> str:
        """``host,port,startcode``, the form ``ServerName.parseServerName`` reads."""
        return f"{self.host},{self.port},{self.start_code}"

    def start(self) -> ReplicationSink:
        thread = threading.Thread(target=self._accept, name=f"keyshape-sink-{self.port}", daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def stop(self) -> None:
        """Stop accepting, close every connection (calls in progress are not acknowledged, so
        their sources ship them again) and wait for the threads."""
        self._stopping = True
        try:
            # close() alone does not wake a thread blocked in accept(); shutdown() does (Linux)
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in self._threads:
            thread.join(timeout=10)

    def _accept(self) -> None:
        while not self._stopping:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._connections.add(conn)
            thread = threading.Thread(target=self._serve, args=(conn,), name=f"keyshape-sink-conn-{self.port}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, conn: socket.socket) -> None:
        try:
            accepted = self._handshake(conn)
            if accepted is not None:
                stream, codec = accepted
                while not self._stopping:
                    stream.sendall(self._answer(stream, codec))
        except (_Closed, OSError):
            pass
        finally:
            with self._lock:
                self._connections.discard(conn)
            conn.close()

    def _handshake(self, conn: socket.socket) -> tuple[Any, str] | None:
        """Read the preamble (and log in under Kerberos) and the ConnectionHeader; the stream to
        read calls from (the socket, or a channel unwrapping a SASL security layer) and the codec,
        or None after refusing the connection."""
        preamble = _recv(conn, 6)
        if preamble[:4] != _PREAMBLE or preamble[4] != 0:
            log.warning("replication sink: %r is not an HBase RPC preamble; closing", preamble)
            return None
        stream: Any = conn
        wanted = _AUTH_KERBEROS if self._kerberos is not None else _AUTH_SIMPLE
        if preamble[5] != wanted:
            # HBase's own server answers an auth method it does not serve with a fatal
            # exception for call id -1 (no call yet) and closes.
            what = "Kerberos (SASL GSSAPI)" if self._kerberos is not None else "SIMPLE"
            conn.sendall(
                _exception(-1 & 0xFFFFFFFF, _FATAL, f"keyshape's sink accepts {what} authentication only, not auth code {preamble[5]}", True)
            )
            return None
        if self._kerberos is not None:
            try:
                stream, principal = self._kerberos.login(conn)
            except SaslRefused as exc:
                log.warning("replication sink: Kerberos login refused: %s", exc)
                conn.sendall(_sasl_error(str(exc)))
                return None
            with self._lock:
                self.authenticated.append(principal)
        conn = stream
        size = struct.unpack(">I", _recv(conn, 4))[0]
        if size > _MAX_FRAME:
            return None
        try:
            header = RPC_pb2.ConnectionHeader.FromString(_recv(conn, size))
        except DecodeError:
            return None
        with self._lock:
            self.connection_headers.append(header)
        problem = None
        if header.service_name != "AdminService":
            problem = f"keyshape's sink serves AdminService only, not {header.service_name!r}"
        elif header.cell_block_compressor_class:
            problem = f"cell block compressor {header.cell_block_compressor_class!r} is not supported; unset hbase.client.rpc.compressor for the peer"
        elif header.cell_block_codec_class not in CODECS:
            problem = f"cell block codec {header.cell_block_codec_class!r} is not supported; set hbase.replication.rpc.codec to KeyValueCodecWithTags"
        if problem is not None:
            conn.sendall(_exception(-1 & 0xFFFFFFFF, _FATAL, problem, True))
            return None
        return conn, header.cell_block_codec_class

    def _answer(self, conn: Any, codec: str) -> bytes:
        """Read one call and return the bytes that answer it."""
        size = struct.unpack(">I", _recv(conn, 4))[0]
        if size > _MAX_FRAME:
            raise _Closed
        data = _recv(conn, size)
        try:
            head_len, pos = _read_varint(data, 0)
            header = RPC_pb2.RequestHeader.FromString(data[pos : pos + head_len])
            pos += head_len
            body_len, pos = _read_varint(data, pos)
            body = data[pos : pos + body_len]
            block = data[pos + body_len :]
        except (IndexError, DecodeError):
            raise _Closed from None  # not HBase RPC: nothing sensible to answer
        call_id = header.call_id
        if header.method_name != "ReplicateWALEntry":
            return _exception(call_id, _DO_NOT_RETRY, f"keyshape's replication sink answers ReplicateWALEntry only, not {header.method_name}", True)
        if header.cell_block_meta.length != len(block):
            self.rejected += 1
            return _exception(call_id, _IO_ERROR, f"cell block of {len(block)} bytes, header says {header.cell_block_meta.length}")
        try:
            entries = decode_entries(Admin_pb2.ReplicateWALEntryRequest.FromString(body), block, codec)
        except (DecodeError, WalDecodeError) as exc:
            self.rejected += 1
            return _exception(call_id, _IO_ERROR, f"cannot decode the WAL entries: {exc}")
        try:
            self._on_batch(entries)
        except Exception as exc:  # any failure: not acknowledged, HBase ships the batch again
            self.rejected += 1
            log.warning("replication sink: batch of %d entries not applied: %s", len(entries), exc)
            return _exception(call_id, _IO_ERROR, f"keyshape's sink did not apply the batch: {type(exc).__name__}: {exc}")
        self.batches += 1
        return _frame(RPC_pb2.ResponseHeader(call_id=call_id), Admin_pb2.ReplicateWALEntryResponse().SerializeToString())


def clear_stale_registration(quorum: str, parent: str, cluster_id: uuid.UUID) -> bool:
    """Delete ``parent`` if its hbaseid names ``cluster_id`` (an earlier run of the same sink left
    it); True if something was deleted. Both hbaseid forms carry the UUID as text."""
    client = KazooClient(hosts=quorum, timeout=10)
    try:
        client.start(timeout=10)  # inside the try: a client that failed to start still retries until stopped
        try:
            data, _ = client.get(f"{parent}/hbaseid")
        except NoNodeError:
            return False
        if str(cluster_id).encode() not in data:
            return False
        client.delete(parent, recursive=True)
        return True
    finally:
        client.stop()
        client.close()


class RunningSink:
    """A started :class:`ReplicationSink` registered as a peer cluster under ``parent`` in
    ZooKeeper ``quorum`` (``host:port``); use as a context manager. ``cluster_key`` is what
    ``add_replication_peer`` takes. ``cluster_id`` should be stable per sink so a restarted sink
    is the same peer; it must differ from the source cluster's own id (HBase refuses a peer that
    is itself).

    ``resume``: a registration left under ``parent`` by an earlier run of this same sink (its
    hbaseid holds ``cluster_id``: a process killed with kill -9 never unregistered, and its
    ephemeral server node lives until its ZooKeeper session expires) is replaced; a parent
    holding another id is still refused. HBase keeps the peer's queue meanwhile and re-ships
    from its position, so a restarted sink picks up where the killed one stopped."""

    def __init__(
        self,
        on_batch: BatchCallback,
        quorum: str,
        parent: str,
        cluster_id: uuid.UUID | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        hbaseid_form: Literal["master", "plain"] = "master",
        resume: bool = False,
        kerberos: KerberosAcceptor | None = None,
        sink: ReplicationSink | None = None,
    ) -> None:
        self.quorum, self.parent = quorum, parent
        self.cluster_id = cluster_id or uuid.uuid4()
        try:
            if resume:
                clear_stale_registration(quorum, parent, self.cluster_id)
        except BaseException:
            if sink is not None:
                sink.stop()
            raise
        # ``sink``: one already bound (and not started), so a bad address is refused before the
        # caller changes anything; its own callback, host and port are used
        self.sink = (sink or ReplicationSink(on_batch, host, port, kerberos)).start()
        try:
            self._zk = register_peer_cluster(quorum, parent, self.cluster_id, self.sink.server_name, hbaseid_form)
        except BaseException:
            self.sink.stop()
            raise

    @property
    def cluster_key(self) -> str:
        """``quorum-hosts:client-port:parent`` (HBase's cluster key: one port for every host)."""
        hosts = [h.strip() for h in self.quorum.split(",")]
        port = hosts[0].rpartition(":")[2] if ":" in hosts[0] else "2181"
        return f"{','.join(h.partition(':')[0] for h in hosts)}:{port}:{self.parent}"

    def stop(self) -> None:
        """Unregister (delete the znodes), then stop the server."""
        try:
            unregister_peer_cluster(self._zk, self.parent)
        finally:
            self.sink.stop()

    def __enter__(self) -> RunningSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
