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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qs

from keyshape.errors import StoreError

__all__ = ["Channel", "Security", "SecurityError", "client_principal", "keytab_principals", "open_channel"]

T = TypeVar("T")

PROTECTIONS = {"authentication": 0x01, "integrity": 0x02, "privacy": 0x04}
_SWITCH_TO_SIMPLE = -88
# The client's receive buffer it advertises; HBase's Java client wraps whole messages regardless.
_MAX_BUFFER = 1 << 16
# How long one exchange with the KDC (a ticket from a keytab, a service ticket) may take. MIT
# libkrb5 1.20 has no setting for it and waits ~50 s for a KDC that accepts a connection but
# never answers (kinit gives up at 25 s); a healthy KDC answers in milliseconds, a distant one
# listed after a dead one in a few seconds.
KDC_TIMEOUT = 20.0


# Addresses that have answered a plain (SIMPLE, no TLS) connection in this process.
_ANSWERED: set[str] = set()


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
            raise SecurityError(f"protection={self.protection!r} is not known; use authentication, integrity or privacy")
        if self.auth == "simple" and (self.principal or self.keytab or self.protection != "authentication"):
            raise SecurityError("principal, keytab and protection need auth=kerberos")
        for what, path in (("keytab", self.keytab), ("tls_ca", self.tls_ca), ("tls_cert", self.tls_cert), ("tls_key", self.tls_key)):
            if path and not os.path.isfile(path):
                raise SecurityError(f"{what} file {path!r} does not exist")
        if (self.tls_ca or self.tls_cert) and not self.tls:
            raise SecurityError("tls_ca/tls_cert/tls_key need tls=true")
        if self.tls_key and not self.tls_cert:
            raise SecurityError("tls_key needs tls_cert (the client certificate)")
        if self.keytab and not self.principal:
            raise SecurityError("keytab needs principal (which key of the keytab to use)")

    _KEYS = ("auth", "principal", "keytab", "server_principal", "protection", "tls", "tls_ca", "tls_cert", "tls_key", "tls_verify_hostname")

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

    def __init__(self, sock: socket.socket, where: str, user: str | None = None, context: Any = None, encrypt: bool = False) -> None:
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
                if self.where in _ANSWERED:
                    # This address spoke plain RPC to us before: a server going down (or a new
                    # process on its port during a failover), which the caller retries elsewhere.
                    raise ConnectionResetError(f"{self.where} closed the connection without answering")
                raise SecurityError(
                    f"{self.where} closed the connection without answering: it may "
                    "require TLS (tls=true, and a client certificate: tls_cert/tls_key) "
                    "or Kerberos (auth=kerberos)"
                )
            if data and not self._answered:
                _ANSWERED.add(self.where)
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


def open_channel(host: str, port: int, timeout: float, connect_timeout: float, security: Security | None = None) -> Channel:
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
        raise SecurityError(
            f"TLS: the certificate of {host} is not trusted: {exc.verify_message}; check tls_ca, and that the server's certificate names this host"
        ) from None
    except ssl.SSLError as exc:
        reason = str(exc.reason or exc)
        if "CERTIFICATE" in reason and not security.tls_cert:
            raise SecurityError(
                f"TLS handshake with {host} failed ({reason}): the server wants a client certificate; give tls_cert and tls_key"
            ) from None
        if "CERTIFICATE" in reason:
            raise SecurityError(
                f"TLS handshake with {host} failed ({reason}): the server does not accept the client certificate tls_cert (signed by a CA it trusts?)"
            ) from None
        raise SecurityError(f"TLS handshake with {host} failed ({reason}); does the server have TLS on (hbase.server.netty.tls.enabled)?") from None
    except (TimeoutError, ConnectionError) as exc:
        raise SecurityError(
            f"TLS handshake with {host} failed ({exc or type(exc).__name__}); does the server have TLS on (hbase.server.netty.tls.enabled)?"
        ) from None


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
        raise SecurityError(
            "auth=kerberos needs the GSSAPI binding: pip install 'keyshape[kerberos]' (on Debian first: apt-get install libkrb5-dev gcc)"
        ) from None
    return gssapi


def credentials(security: Security) -> Any:
    """The client's Kerberos credentials: from ``keytab`` (MIT then gets and renews tickets
    itself, in a private in-memory cache) or from the credential cache (``kinit``)."""
    gssapi = _import_gssapi()
    name = gssapi.Name(security.principal, gssapi.NameType.kerberos_principal) if security.principal else None
    try:
        if security.keytab:
            # A fresh in-memory cache per acquisition: it never holds an expired ticket.
            store = {b"client_keytab": security.keytab.encode(), b"ccache": f"MEMORY:keyshape-{os.getpid()}-{next(_CACHE_IDS)}".encode()}
            # Acquiring from a keytab asks the KDC for a ticket right away: bounded.
            return _within_kdc_timeout(
                f"a ticket for {_canonical(security.principal or '')}", lambda: gssapi.Credentials(name=name, usage="initiate", store=store)
            )
        creds = gssapi.Credentials(name=name, usage="initiate")
        if creds.lifetime == 0:
            raise SecurityError("the Kerberos ticket has expired; run kinit again, or give a keytab (principal=...&keytab=...)")
        return creds
    except gssapi.exceptions.ExpiredCredentialsError:
        raise SecurityError("the Kerberos ticket has expired; run kinit again, or give a keytab (principal=...&keytab=...)") from None
    except gssapi.exceptions.GSSError as exc:
        raise SecurityError(_credentials_problem(security, _gss_message(exc))) from None


def _canonical(principal: str) -> str:
    """``principal`` with its realm (krb5.conf's default realm when it names none)."""
    try:
        gssapi = _import_gssapi()
        name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
        return str(name.canonicalize(gssapi.MechType.kerberos))
    except Exception:  # noqa: BLE001 - no default realm configured: the name as given
        return principal


def _realm(principal: str) -> str:
    return principal.rpartition("@")[2]


def _krb5_conf() -> str:
    return os.environ.get("KRB5_CONFIG", "/etc/krb5.conf")


def _credentials_problem(security: Security, reason: str) -> str:
    """One line for credentials that could not be acquired: what is actually wrong (MIT's own
    words are often beside the point, e.g. "No credentials cache found" for a principal the
    keytab holds no key for) and how to fix it."""
    given = security.principal
    principal = _canonical(given) if given else ""
    default_realm = _realm(_canonical("x"))
    other_realm = bool(principal) and _realm(principal) != default_realm
    hint = f" (krb5.conf's default realm is {default_realm}: principal={given.split('@')[0]}@{default_realm}?)" if other_realm and given else ""
    if security.keytab and principal:
        held = keytab_principals(security.keytab)
        if held is not None and principal not in held:
            return (
                f"keytab {security.keytab} holds no key for {principal}{hint}; it holds "
                f"{', '.join(held) or 'no keys'}: give one of those as principal=, or {principal}'s keytab"
            )
    if "Cannot find KDC for realm" in reason:
        realm = _realm(principal) if principal else reason.split('"')[-2] if '"' in reason else "?"
        return (
            f"Kerberos realm {realm} is unknown to this client: {_krb5_conf()} names no KDC for it"
            f"{hint}; check the principal's realm, or add {realm} to [realms] in krb5.conf"
        )
    if "not found in Kerberos database" in reason and "Client" in reason:
        return (
            f"the KDC of realm {_realm(principal) or default_realm} does not know the principal "
            f"{principal or reason}{hint}; check its name, or have it created (kadmin: addprinc)"
        )
    if "Cannot contact any KDC" in reason:
        return f"cannot reach a Kerberos KDC ({reason}); is the KDC running, and does {_krb5_conf()} name it under [realms]?"
    if "Can't find client principal" in reason:
        return f"the Kerberos credential cache holds no ticket for {principal}{hint}; kinit {principal}, or give principal=...&keytab=..."
    return f"no usable Kerberos credentials{' for ' + principal if principal else ''} ({reason}); run kinit, or give principal=...&keytab=..."


def keytab_principals(path: str) -> list[str] | None:
    """The principals a keytab holds keys for (MIT's keytab file format, versions 1 and 2), or
    None when the file cannot be read as one (MIT then says what is wrong)."""
    try:
        data = open(path, "rb").read()
    except OSError:
        return None
    if len(data) < 2 or data[0] != 5 or data[1] not in (1, 2):
        return None
    version, pos, found = data[1], 2, []
    try:
        while pos + 4 <= len(data):
            size = struct.unpack_from(">i", data, pos)[0]
            pos += 4
            if size < 0:  # a hole left by a removed entry
                pos -= size
                continue
            if size == 0:
                break
            entry, pos = data[pos : pos + size], pos + size

            def counted(at: int) -> tuple[bytes, int]:
                n = struct.unpack_from(">H", entry, at)[0]
                return entry[at + 2 : at + 2 + n], at + 2 + n

            count = struct.unpack_from(">H", entry, 0)[0] - (1 if version == 1 else 0)
            realm, at = counted(2)
            parts = []
            for _ in range(count):
                part, at = counted(at)
                parts.append(part.decode(errors="replace"))
            name = "/".join(parts) + "@" + realm.decode(errors="replace")
            if name not in found:
                found.append(name)
    except struct.error:
        return None
    return found


def _within_kdc_timeout(what: str, call: Callable[[], T]) -> T:
    """``call`` (which may wait for the KDC), given up after ``KDC_TIMEOUT`` seconds. It runs on
    a daemon thread (python-gssapi releases the GIL while libkrb5 waits), which is left to
    finish on its own when the KDC does not answer."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name="keyshape-kdc", daemon=True)
    worker.start()
    worker.join(KDC_TIMEOUT)
    if not outcome:
        raise SecurityError(
            f"the Kerberos KDC did not answer within {KDC_TIMEOUT:.0f} s (asking for {what}); "
            f"is the KDC that {_krb5_conf()} names under [realms] running and reachable?"
        )
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def client_principal(security: Security) -> str:
    """The principal a Kerberos connection made with ``security`` authenticates as (from its
    keytab or credential cache); SecurityError when there are no usable credentials."""
    return _canonical(str(_cached_credentials(security).name))


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
    flags = [gssapi.RequirementFlag.mutual_authentication, gssapi.RequirementFlag.integrity, gssapi.RequirementFlag.confidentiality]
    context = gssapi.SecurityContext(name=gssapi.Name(target, gssapi.NameType.kerberos_principal), creds=creds, usage="initiate", flags=flags)
    where = f"{host}:{port}"
    try:
        # The first step asks the KDC for a service ticket (unless cached): bounded.
        token = _within_kdc_timeout(f"a ticket for {target}", context.step)
    except gssapi.exceptions.GSSError as exc:
        reason = _gss_message(exc)
        if "Server" in reason and "not found" in reason:
            raise SecurityError(
                f"Kerberos: the KDC does not know the server principal {target} ({reason}); check server_principal (default hbase/_HOST)"
            ) from None
        if "Cannot contact any KDC" in reason or "Cannot find KDC" in reason or "Client" in reason:
            raise SecurityError(_credentials_problem(security, reason)) from None
        raise SecurityError(f"Kerberos: cannot get a ticket for {target} ({reason}); check server_principal and that the KDC is reachable") from None
    sock.sendall(b"HBas\x00\x51" + struct.pack(">I", len(token)) + token)
    try:
        while not context.complete:
            reply = _sasl_reply(sock, host, port, security)
            token = context.step(reply) or b""
            sock.sendall(struct.pack(">I", len(token)) + token)
        offer = context.unwrap(_sasl_reply(sock, host, port, security)).message
    except gssapi.exceptions.GSSError as exc:
        raise SecurityError(f"Kerberos handshake with {where} failed ({_gss_message(exc)})") from None
    if len(offer) != 4:
        raise SecurityError(f"Kerberos handshake with {where}: unexpected security-layer offer {offer!r}")
    wanted = PROTECTIONS[security.protection]
    if not offer[0] & wanted:
        offered = [name for name, bit in PROTECTIONS.items() if offer[0] & bit]
        raise SecurityError(
            f"{where} does not offer protection={security.protection} (it offers {', '.join(offered)}; see the server's hbase.rpc.protection)"
        )
    size = 0 if wanted == 0x01 else _MAX_BUFFER
    answer = context.wrap(bytes([wanted]) + size.to_bytes(3, "big"), False).message
    sock.sendall(struct.pack(">I", len(answer)) + answer)
    user = str(context.initiator_name)
    if wanted == 0x01:
        return Channel(sock, where, user)
    return Channel(sock, where, user, context, encrypt=wanted == 0x04)


def _sasl_reply(sock: socket.socket, host: str, port: int, security: Security) -> bytes:
    where = f"{host}:{port}"
    try:
        status, size = struct.unpack(">Ii", _recv_exact(sock, 8))
    except (ConnectionError, TimeoutError, OSError) as exc:
        # A server that accepts only TLS hangs up on the plaintext preamble without a word: ask
        # it (a TLS handshake on a new connection) before blaming the principal.
        if not security.tls and _speaks_tls(host, port, sock.gettimeout() or 5.0):
            raise SecurityError(
                f"{where} accepts only TLS connections (it hung up on plaintext): connect "
                "with tls=true&tls_ca=CA.pem (and tls_cert/tls_key if it asks for a "
                "client certificate)"
            ) from None
        raise SecurityError(
            f"{where} closed the connection during the Kerberos handshake ({exc}); is server_principal {security.server_principal!r} right?"
        ) from None
    if status != 0:
        body = struct.pack(">i", size) + _read_rest(sock)
        cls_len = struct.unpack(">i", body[:4])[0]
        cls = body[4 : 4 + cls_len].decode(errors="replace")
        msg = body[8 + cls_len :].decode(errors="replace").strip()
        raise SecurityError(f"{where} refused the Kerberos login: {cls.rsplit('.', 1)[-1]}: {msg}")
    if size == _SWITCH_TO_SIMPLE:
        raise SecurityError(f"{where} does not use Kerberos (hbase.security.authentication=simple); connect without auth=kerberos")
    return _recv_exact(sock, size)


def _speaks_tls(host: str, port: int, timeout: float) -> bool:
    """Whether ``host:port`` answers a TLS handshake (certificates unchecked: this only asks
    whether the server speaks TLS). A server alert (e.g. for a missing client certificate) is a
    TLS answer too; a reset, an end of stream or a non-TLS reply is not."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=min(timeout, 5.0)) as raw:
            with context.wrap_socket(raw, server_hostname=host):
                return True
    except ssl.SSLError as exc:
        return "ALERT" in str(exc.reason or "").upper()
    except OSError:
        return False


def _read_rest(sock: socket.socket) -> bytes:
    """What the server sent before closing (an error), bounded by the socket's timeout."""
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except OSError:
        pass
    return b"".join(chunks)
