"""HBase's RPC framing and the per-server connection that speaks it: the connection header, the
request/response frames with their varint lengths, calls in flight on one socket (``RpcConnection``).

hbase-driver's framing corrupts requests of 128 KiB or more (tools/hbase/CLIENTS.md, bug 1):
``RpcConnection.call`` is the ONE place that frames a request, with a correct varint and ``sendall``.
"""

from __future__ import annotations

import itertools
import logging
import struct
import threading
from typing import NoReturn, TypeVar

from google.protobuf.message import DecodeError, Message
from hbasedriver.protobuf_py import RPC_pb2

from keyshape.store.hbase.auth import Security, open_channel
from keyshape.store.hbase.errors import _AUTH_DENIED, AuthenticationRequired, ConnectionLost, ServerError, _auth_required
from keyshape.store.hbase.identity import effective_user

__all__ = ["KEYVALUE_CODEC", "RpcConnection"]

log = logging.getLogger("keyshape.store.hbase")
M = TypeVar("M", bound=Message)

KEYVALUE_CODEC = "org.apache.hadoop.hbase.codec.KeyValueCodec"

# Far above hbase.ipc.max.response.size defaults; a larger length means the peer is not speaking
# HBase RPC (e.g. a SASL or TLS reply read as a frame), so waiting for that many bytes would hang.
_MAX_RESPONSE = 1 << 30


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

    def call(self, method: str, request: Message | bytes, response_cls: type[M], cells: bytes = b"") -> M:
        """Send ``request`` (a message, or its serialized bytes) as ``method`` and parse the
        answer as ``response_cls``: :meth:`send` then :meth:`receive`."""
        return self.receive(self.send(method, request, cells), response_cls)

    def send(self, method: str, request: Message | bytes, cells: bytes = b"") -> int:
        """Send ``request`` as ``method`` without waiting for the answer; the call's id, for
        :meth:`receive` (every id sent must be received, or the answer is kept until then).

        Framing (HBase's ``RpcServer``): a 4-byte big-endian total length, then the delimited
        ``RequestHeader`` and the delimited request, each preceded by its length as a protobuf
        varint. This is where hbase-driver's bug 1 is fixed: its varint was the UTF-8 encoding
        of a str of code points, which for lengths >= 128 KiB is not the varint.

        ``cells``: a cell block of KeyValues after the request (its length in the header's
        ``cell_block_meta``), the cells of mutations that name only how many they have
        (``associated_cell_count``), as the Java client sends Puts; only on a connection opened
        with ``cell_blocks`` (the server needs the codec from the connection header).
        """
        body = request if isinstance(request, bytes) else request.SerializeToString()
        with self._send_lock:
            if self.broken:
                raise ConnectionLost(f"connection to {self.host}:{self.port} is closed")
            call_id = next(self._ids) & 0x7FFFFFFF
            header = RPC_pb2.RequestHeader(call_id=call_id, method_name=method, request_param=True)
            if cells:
                if not self.cell_blocks:
                    raise ValueError("a cell block needs a connection opened with cell_blocks=True")
                header.cell_block_meta.length = len(cells)
            head = header.SerializeToString()
            frame = b"".join((_varint(len(head)), head, _varint(len(body)), body, cells))
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
