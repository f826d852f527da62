"""How a connection to an HBase server is opened and secured: TLS, then SIMPLE or Kerberos
(SASL/GSSAPI) authentication, and the integrity/privacy wrapping of every byte afterwards.

Byte protocol (HBase 2.6's ``NettyRpcConnection``/``ServerRpcConnection`` and RFC 4752):

- TLS, when asked for, wraps the socket from the first byte (the server's SSL handler sits in
  front of its preamble decoder).
- Preamble ``"HBas" 0x00 <auth>``: 0x50 SIMPLE, 0x51 KERBEROS.
- Kerberos: the client sends ``u32 len | token`` (the GSS initial token right away), the server
  answers ``u32 status | u32 len | token`` (status 1: ``u32 len | exception class | u32 len |
  message``; length -88: the server is not secure). When the GSS context is complete the client
  sends an empty token, the server sends the wrapped 4-byte offer ``[layers][max buffer]`` and
  the client answers with the wrapped chosen layer; the server sends nothing more.
- Under integrity or privacy every later write in both directions is ``u32 len | gss_wrap(bytes)``.
  Token boundaries need not match RPC frames, so reads unwrap into a buffer.

The GSSAPI binding (``gssapi``, the ``keyshape[kerberos]`` extra) is imported only when Kerberos
is used, so the default install does not need the system's Kerberos libraries.
"""

from __future__ import annotations

import itertools
import os
import socket
import ssl
import struct
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from keyshape.errors import StoreError

__all__ = ["Channel", "Security", "SecurityError", "open_channel"]

PROTECTIONS = {"authentication": 0x01, "integrity": 0x02, "privacy": 0x04}
_SWITCH_TO_SIMPLE = -88
# The client's receive buffer it advertises; HBase's Java client wraps whole messages regardless.
_MAX_BUFFER = 1 << 16


class SecurityError(StoreError):
    """Authentication, TLS or protection-level negotiation failed; retrying will not help."""


@dataclass(frozen=True)
class Security:
    """How to authenticate and protect connections (see the README's "Secure clusters").

    ``server_principal``: ``_HOST`` is replaced by the server's host name; without ``@REALM`` the
    default realm of krb5.conf applies. ``principal``/``keytab``: the client's identity; without
    them the Kerberos credential cache (``kinit``) is used.
    """

    auth: str = "simple"
    principal: str | None = None
    keytab: str | None = None
    server_principal: str = "hbase/_HOST"
    protection: str = "authentication"
    tls: bool = False
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_verify_hostname: bool = True

    def __post_init__(self) -> None:
        if self.auth not in ("simple", "kerberos"):
            raise SecurityError(f"auth={self.auth!r} is not known; use auth=simple or auth=kerberos")
        if self.protection not in PROTECTIONS:
            raise SecurityError(f"protection={self.protection!r} is not known; use authentication, "
                                "integrity or privacy")
        if self.auth == "simple" and (self.principal or self.keytab or self.protection != "authentication"):
            raise SecurityError("principal, keytab and protection need auth=kerberos")
        for what, path in (("keytab", self.keytab), ("tls_ca", self.tls_ca), ("tls_cert", self.tls_cert),
                           ("tls_key", self.tls_key)):
            if path and not os.path.isfile(path):
                raise SecurityError(f"{what} file {path!r} does not exist")
        if (self.tls_ca or self.tls_cert) and not self.tls:
            raise SecurityError("tls_ca/tls_cert/tls_key need tls=true")
        if self.tls_key and not self.tls_cert:
            raise SecurityError("tls_key needs tls_cert (the client certificate)")
        if self.keytab and not self.principal:
            raise SecurityError("keytab needs principal (which key of the keytab to use)")

    _KEYS = ("auth", "principal", "keytab", "server_principal", "protection", "tls", "tls_ca",
             "tls_cert", "tls_key", "tls_verify_hostname")

    @classmethod
    def from_query(cls, query: str) -> Security:
        """``auth=kerberos&principal=alice&keytab=/p&protection=privacy&tls=true&tls_ca=/ca.pem``."""
        values: dict[str, Any] = {}
        for key, items in parse_qs(query, keep_blank_values=True, strict_parsing=False).items():
            if key not in cls._KEYS:
                raise SecurityError(f"unknown HBase URL option {key!r}; known: {', '.join(cls._KEYS)}")
            value = items[-1]
            if key in ("tls", "tls_verify_hostname"):
                if value.lower() not in ("true", "false", "1", "0", "yes", "no", ""):
                    raise SecurityError(f"{key}={value!r}: use true or false")
                values[key] = value.lower() in ("true", "1", "yes", "")
            else:
                values[key] = value
        return cls(**values)


class Channel:
    """A connected, authenticated byte stream to one server: ``sendall``/``recv`` wrap and
    unwrap under integrity/privacy; ``user`` is the authenticated principal (None for SIMPLE)."""

    def __init__(self, sock: socket.socket, where: str, user: str | None = None, context: Any = None,
                 encrypt: bool = False) -> None:
        self.sock = sock
        self.where = where
        self._answered = False
        self.user = user
        self._context = context  # a gssapi.SecurityContext when a security layer was negotiated
        self._encrypt = encrypt
        self._buffer = bytearray()

    def sendall(self, data: bytes) -> None:
        if self._context is not None:
            data = self._context.wrap(data, self._encrypt).message
            data = struct.pack(">I", len(data)) + data
        self.sock.sendall(data)

    def recv(self, n: int) -> bytes:
        """Up to ``n`` bytes (at least one); b"" when the server closed the connection."""
        if self._context is None:
            data = self.sock.recv(n)
            if not data and not self._answered and self.user is None:
                self.sock.close()
                raise SecurityError(f"{self.where} closed the connection without answering: it may "
                                    "require TLS (tls=true, and a client certificate: tls_cert/tls_key) "
                                    "or Kerberos (auth=kerberos)")
            self._answered = True
            return data
        if not self._buffer:
            size = struct.unpack(">I", _recv_exact(self.sock, 4))[0]
            self._buffer += self._context.unwrap(_recv_exact(self.sock, size)).message
        out = bytes(self._buffer[:n])
        del self._buffer[:n]
        return out

    def settimeout(self, seconds: float | None) -> None:
        self.sock.settimeout(seconds)

    def close(self) -> None:
        self.sock.close()


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionResetError("server closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def open_channel(host: str, port: int, timeout: float, connect_timeout: float,
                 security: Security | None = None) -> Channel:
    """Connect, optionally start TLS, send the preamble and authenticate. OSError when the
    server cannot be reached; SecurityError when TLS or authentication fails."""
    security = security or Security()
    sock = socket.create_connection((host, port), timeout=connect_timeout)
    try:
        if security.tls:
            sock = _start_tls(sock, host, security)
        sock.settimeout(timeout)
        if security.auth == "simple":
            sock.sendall(b"HBas\x00\x50")
            return Channel(sock, f"{host}:{port}")
        return _kerberos(sock, host, port, security)
    except BaseException:
        sock.close()
        raise


def _start_tls(sock: socket.socket, host: str, security: Security) -> socket.socket:
    try:
        context = ssl.create_default_context(cafile=security.tls_ca)
        context.check_hostname = security.tls_verify_hostname
        if security.tls_cert:
            context.load_cert_chain(security.tls_cert, security.tls_key)
    except (ssl.SSLError, OSError) as exc:
        raise SecurityError(f"cannot load the TLS files (tls_ca/tls_cert/tls_key): {exc}") from None
    try:
        return context.wrap_socket(sock, server_hostname=host)
    except ssl.SSLCertVerificationError as exc:
        raise SecurityError(f"TLS: the certificate of {host} is not trusted: {exc.verify_message}; "
                            "check tls_ca, and that the server's certificate names this host") from None
    except ssl.SSLError as exc:
        reason = str(exc.reason or exc)
        if "CERTIFICATE" in reason and not security.tls_cert:
            raise SecurityError(f"TLS handshake with {host} failed ({reason}): the server wants a client "
                                "certificate; give tls_cert and tls_key") from None
        if "CERTIFICATE" in reason:
            raise SecurityError(f"TLS handshake with {host} failed ({reason}): the server does not "
                                "accept the client certificate tls_cert (signed by a CA it trusts?)") from None
        raise SecurityError(f"TLS handshake with {host} failed ({reason}); does the server have TLS "
                            "on (hbase.server.netty.tls.enabled)?") from None
    except (TimeoutError, ConnectionError) as exc:
        raise SecurityError(f"TLS handshake with {host} failed ({exc or type(exc).__name__}); does "
                            "the server have TLS on (hbase.server.netty.tls.enabled)?") from None


def server_principal(pattern: str, host: str) -> str:
    """``_HOST`` replaced the way HBase's Java client does: the server's canonical host name,
    lowercased (``InetAddress.getCanonicalHostName``)."""
    if "_HOST" not in pattern:
        return pattern
    try:
        canonical = socket.gethostbyaddr(socket.gethostbyname(host))[0]
    except OSError:
        canonical = host
    return pattern.replace("_HOST", canonical.lower())


def _import_gssapi() -> Any:
    try:
        import gssapi
    except ImportError:
        raise SecurityError("auth=kerberos needs the GSSAPI binding: pip install 'keyshape[kerberos]' "
                            "(on Debian first: apt-get install libkrb5-dev gcc)") from None
    return gssapi


def credentials(security: Security) -> Any:
    """The client's Kerberos credentials: from ``keytab`` (MIT then gets and renews tickets
    itself, in a private in-memory cache) or from the credential cache (``kinit``)."""
    gssapi = _import_gssapi()
    name = gssapi.Name(security.principal, gssapi.NameType.kerberos_principal) if security.principal else None
    try:
        if security.keytab:
            # A fresh in-memory cache per acquisition: it never holds an expired ticket.
            store = {b"client_keytab": security.keytab.encode(),
                     b"ccache": f"MEMORY:keyshape-{os.getpid()}-{next(_CACHE_IDS)}".encode()}
            return gssapi.Credentials(name=name, usage="initiate", store=store)
        creds = gssapi.Credentials(name=name, usage="initiate")
        if creds.lifetime == 0:
            raise SecurityError("the Kerberos ticket has expired; run kinit again, or give a keytab "
                                "(principal=...&keytab=...)")
        return creds
    except gssapi.exceptions.ExpiredCredentialsError:
        raise SecurityError("the Kerberos ticket has expired; run kinit again, or give a keytab "
                            "(principal=...&keytab=...)") from None
    except gssapi.exceptions.GSSError as exc:
        raise SecurityError(f"no usable Kerberos credentials{' for ' + security.principal if security.principal else ''}"
                            f" ({_gss_message(exc)}); run kinit, or give principal=...&keytab=...") from None


def _gss_message(exc: Exception) -> str:
    """The useful part of a GSSError: its minor (mechanism) status, else its major status."""
    text = " ".join(str(exc).split())
    major, _, minor = text.partition(", Minor (")
    minor = minor.split("): ", 1)[-1].strip()
    major = major.split("): ", 1)[-1].strip()
    return minor if minor and minor not in ("Success", "Unknown error") else (major or type(exc).__name__)


_CREDS: dict[Security, Any] = {}
_CREDS_LOCK = threading.Lock()
_CACHE_IDS = itertools.count(1)
# Credentials closer than this to expiry are acquired again (from the keytab, or the cache that
# kinit may have renewed meanwhile) before a new connection authenticates.
_RENEW_BEFORE = 30


def _cached_credentials(security: Security, renew: bool = False) -> Any:
    with _CREDS_LOCK:
        creds = _CREDS.get(security)
        if creds is None or renew or _lifetime(creds) < _RENEW_BEFORE:
            creds = _CREDS[security] = credentials(security)
        return creds


def _lifetime(creds: Any) -> int:
    try:
        return int(creds.lifetime or 0)
    except Exception:  # an expired cache raises instead of answering 0
        return 0


def _kerberos(sock: socket.socket, host: str, port: int, security: Security) -> Channel:
    gssapi = _import_gssapi()
    target = server_principal(security.server_principal, host)
    creds = _cached_credentials(security)
    flags = [gssapi.RequirementFlag.mutual_authentication, gssapi.RequirementFlag.integrity,
             gssapi.RequirementFlag.confidentiality]
    context = gssapi.SecurityContext(name=gssapi.Name(target, gssapi.NameType.kerberos_principal),
                                     creds=creds, usage="initiate", flags=flags)
    where = f"{host}:{port}"
    try:
        token = context.step()
    except gssapi.exceptions.GSSError as exc:
        raise SecurityError(f"Kerberos: cannot get a ticket for {target} ({_gss_message(exc)}); check "
                            "server_principal and that the KDC is reachable") from None
    sock.sendall(b"HBas\x00\x51" + struct.pack(">I", len(token)) + token)
    try:
        while not context.complete:
            reply = _sasl_reply(sock, where, security)
            token = context.step(reply) or b""
            sock.sendall(struct.pack(">I", len(token)) + token)
        offer = context.unwrap(_sasl_reply(sock, where, security)).message
    except gssapi.exceptions.GSSError as exc:
        raise SecurityError(f"Kerberos handshake with {where} failed ({_gss_message(exc)})") from None
    if len(offer) != 4:
        raise SecurityError(f"Kerberos handshake with {where}: unexpected security-layer offer {offer!r}")
    wanted = PROTECTIONS[security.protection]
    if not offer[0] & wanted:
        offered = [name for name, bit in PROTECTIONS.items() if offer[0] & bit]
        raise SecurityError(f"{where} does not offer protection={security.protection} (it offers "
                            f"{', '.join(offered)}; see the server's hbase.rpc.protection)")
    size = 0 if wanted == 0x01 else _MAX_BUFFER
    answer = context.wrap(bytes([wanted]) + size.to_bytes(3, "big"), False).message
    sock.sendall(struct.pack(">I", len(answer)) + answer)
    user = str(context.initiator_name)
    if wanted == 0x01:
        return Channel(sock, where, user)
    return Channel(sock, where, user, context, encrypt=wanted == 0x04)


def _sasl_reply(sock: socket.socket, where: str, security: Security) -> bytes:
    try:
        status, size = struct.unpack(">Ii", _recv_exact(sock, 8))
    except (ConnectionError, TimeoutError, OSError) as exc:
        raise SecurityError(f"{where} closed the connection during the Kerberos handshake ({exc}); "
                            f"is server_principal {security.server_principal!r} right?") from None
    if status != 0:
        body = struct.pack(">i", size) + _read_rest(sock)
        cls_len = struct.unpack(">i", body[:4])[0]
        cls = body[4:4 + cls_len].decode(errors="replace")
        msg = body[8 + cls_len:].decode(errors="replace").strip()
        raise SecurityError(f"{where} refused the Kerberos login: {cls.rsplit('.', 1)[-1]}: {msg}")
    if size == _SWITCH_TO_SIMPLE:
        raise SecurityError(f"{where} does not use Kerberos (hbase.security.authentication=simple); "
                            "connect without auth=kerberos")
    return _recv_exact(sock, size)


def _read_rest(sock: socket.socket) -> bytes:
    """What the server sent before closing (an error), bounded by the socket's timeout."""
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except OSError:
        pass
    return b"".join(chunks)
