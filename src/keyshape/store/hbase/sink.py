"""keyshape's replication sink: an HBase RPC server that poses as a peer cluster's one region
server and receives what HBase's replication sources ship (``AdminService.ReplicateWALEntry``).

The server side of the wire ``framing.py`` speaks as a client: the 6-byte preamble (``HBas``,
version 0, auth SIMPLE=80; other auth methods are refused in this increment), the
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
from typing import Literal

from google.protobuf.message import DecodeError
from hbasedriver.protobuf_py import Admin_pb2, RPC_pb2
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from keyshape.store.hbase.framing import _read_varint, _varint
from keyshape.store.hbase.walentry import CODECS, WalDecodeError, WalEntry, decode_entries
from keyshape.store.hbase.zk import register_peer_cluster, unregister_peer_cluster

__all__ = ["BatchCallback", "ReplicationSink", "RunningSink", "clear_stale_registration"]

log = logging.getLogger("keyshape.store.hbase.sink")

BatchCallback = Callable[[list[WalEntry]], None]

_PREAMBLE = b"HBas"
_AUTH_SIMPLE = 80
_MAX_FRAME = 1 << 30  # above hbase.ipc.max.request.size (256 MB): anything larger is not HBase RPC
_IO_ERROR = "java.io.IOException"
_DO_NOT_RETRY = "org.apache.hadoop.hbase.DoNotRetryIOException"
_FATAL = "org.apache.hadoop.hbase.ipc.FatalConnectionException"


class _Closed(Exception):
    """The peer closed the connection (or the sink is stopping)."""


def _recv(sock: socket.socket, n: int) -> bytes:
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


class ReplicationSink:
    """The RPC server. ``on_batch`` gets each ``ReplicateWALEntry`` call's entries (in WAL order
    per region within the call) and must return only once they are durable wherever they go.

    ``host`` is the address the source region servers will connect to (their own view of it: it
    goes into the server name registered in ZooKeeper); ``port`` 0 picks a free one."""

    def __init__(self, on_batch: BatchCallback, host: str = "127.0.0.1", port: int = 0) -> None:
        self._on_batch = on_batch
        self._listener = socket.create_server((host, port))
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
            codec = self._handshake(conn)
            if codec is not None:
                while not self._stopping:
                    conn.sendall(self._answer(conn, codec))
        except (_Closed, OSError):
            pass
        finally:
            with self._lock:
                self._connections.discard(conn)
            conn.close()

    def _handshake(self, conn: socket.socket) -> str | None:
        """Read the preamble and ConnectionHeader; the codec, or None after refusing the connection."""
        preamble = _recv(conn, 6)
        if preamble[:4] != _PREAMBLE or preamble[4] != 0:
            log.warning("replication sink: %r is not an HBase RPC preamble; closing", preamble)
            return None
        if preamble[5] != _AUTH_SIMPLE:
            # HBase's own server answers an auth method it does not serve with a fatal
            # exception for call id -1 (no call yet) and closes.
            conn.sendall(
                _exception(-1 & 0xFFFFFFFF, _FATAL, f"keyshape's sink accepts SIMPLE authentication only, not auth code {preamble[5]}", True)
            )
            return None
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
        return header.cell_block_codec_class

    def _answer(self, conn: socket.socket, codec: str) -> bytes:
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
    client.start(timeout=10)
    try:
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
    ) -> None:
        self.quorum, self.parent = quorum, parent
        self.cluster_id = cluster_id or uuid.uuid4()
        if resume:
            clear_stale_registration(quorum, parent, self.cluster_id)
        self.sink = ReplicationSink(on_batch, host, port).start()
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
