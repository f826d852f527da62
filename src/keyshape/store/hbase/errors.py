"""What an HBase server or the socket to it can answer instead of a response: a server exception
(``ServerError``, and which of them mean the region moved), a lost connection, a refused
SIMPLE authentication.
"""

from __future__ import annotations

from keyshape.errors import StoreError

__all__ = ["RELOCATE", "AuthenticationRequired", "ServerError", "ConnectionLost"]

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
