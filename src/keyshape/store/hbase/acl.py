"""HBase access control (the AccessController): granting and revoking permissions (the master's
Grant/Revoke of AccessControlService, messages from hbase-driver's ``AccessControl_pb2``), and
turning the server's AccessDeniedException into one line naming the user, the table and the
permission missing."""

from __future__ import annotations

import re
from typing import Any

from hbasedriver.protobuf_py import AccessControl_pb2

from keyshape.errors import KeyshapeError, StoreError
from keyshape.store.base import join_table_name, split_table_name

__all__ = ["PermissionDenied", "denied_line", "grant", "revoke", "scope_label"]

ACTIONS = {"R": "READ", "W": "WRITE", "X": "EXEC", "C": "CREATE", "A": "ADMIN"}


class PermissionDenied(StoreError):
    """The server's AccessController refused an operation; the message names who lacks what."""


def _permission(actions: str, scope: str | None) -> Any:
    """An ``AccessControl_pb2.Permission`` of ``actions`` (letters of RWXCA; "" for none, as a
    revoke of everything sends) on ``scope``: a table (``t``, ``ns:t``), a namespace (``@ns``),
    or the cluster (None), as HBase shell writes them."""
    unknown = set(actions.upper()) - set(ACTIONS)
    if unknown:
        raise StoreError(f"permission {actions!r}: use letters of RWXCA (read, write, exec, create, admin)")
    Action = AccessControl_pb2.Permission.Action
    codes = [Action.Value(ACTIONS[a]) for a in dict.fromkeys(actions.upper())]
    permission = AccessControl_pb2.Permission()
    if scope is None:
        permission.type = AccessControl_pb2.Permission.Global
        permission.global_permission.action.extend(codes)
    elif scope.startswith("@"):
        namespace = scope[1:]
        if not namespace or ":" in namespace:
            raise StoreError(f"namespace {scope!r}: write a namespace as @NAME (HBase shell's '@ns')")
        permission.type = AccessControl_pb2.Permission.Namespace
        permission.namespace_permission.namespace_name = namespace.encode()
        permission.namespace_permission.action.extend(codes)
    else:
        namespace, name = split_table_name(scope)
        permission.type = AccessControl_pb2.Permission.Table
        permission.table_permission.table_name.namespace = namespace.encode()
        permission.table_permission.table_name.qualifier = name.encode()
        permission.table_permission.action.extend(codes)
    return permission


def scope_label(scope: str | None) -> str:
    """``scope`` in words: "table 't'", "namespace 'ns'" or "the whole cluster (global)"."""
    if scope is None:
        return "the whole cluster (global permissions)"
    if scope.startswith("@"):
        return f"namespace {scope[1:]!r}"
    return f"table {_table_as_named(scope)!r}"


def _check(client: Any, user: str, scope: str | None) -> None:
    """A user name, and a table or namespace that exists: HBase itself stores permissions for
    any name (a typo would grant nothing anyone notices); HBase shell checks as here."""
    if not user or not user.strip() or user.strip() != user:
        raise StoreError(f"user {user!r}: give a user name (bob, bob@REALM) or a group (@admins)")
    _permission("", scope)  # the scope's own form first
    if scope is not None and scope.startswith("@"):
        if not client.namespace_exists(scope[1:]):
            raise StoreError(f"namespace {scope[1:]!r} does not exist; check the name (a table is given without '@')")
    elif scope is not None and not client.table_exists(scope):
        raise StoreError(f"table {_table_as_named(scope)!r} does not exist; check the name (ns:table; a namespace is given as @ns)")


def grant(client: Any, user: str, actions: str, table: str | None = None, merge: bool = True) -> None:
    """Grant ``user`` (``@group`` for a group) the ``actions`` (letters of ``RWXCA``, as in HBase
    shell's ``grant``) on ``table`` (``t`` or ``ns:t``), a namespace (``@ns``), or globally when
    ``table`` is None. ``merge``: add to the permissions the user holds there already (False:
    replace them, as HBase shell's ``grant`` does). Needs ADMIN there (e.g. the superuser)."""
    if not actions:
        raise StoreError("no permission given: use letters of RWXCA (read, write, exec, create, admin)")
    _permission(actions, None)  # bad letters before any request
    _check(client, user, table)
    request = AccessControl_pb2.GrantRequest(
        user_permission=AccessControl_pb2.UserPermission(user=user.encode(), permission=_permission(actions, table)), merge_existing_permissions=merge
    )
    client._master("Grant", request, AccessControl_pb2.GrantResponse, table or "(global)", f"grant {actions} to {user}")


def revoke(client: Any, user: str, table: str | None = None, actions: str = "") -> None:
    """Revoke ``user``'s permissions on ``table`` (``t``, ``ns:t``), a namespace (``@ns``) or
    globally (None): all of them, as HBase shell's ``revoke``, or only ``actions`` (letters of
    RWXCA) when given. Revoking what the user does not hold is not an error (HBase ignores it).
    Needs ADMIN there."""
    _check(client, user, table)
    request = AccessControl_pb2.RevokeRequest(
        user_permission=AccessControl_pb2.UserPermission(user=user.encode(), permission=_permission(actions, table))
    )
    client._master("Revoke", request, AccessControl_pb2.RevokeResponse, table or "(global)", f"revoke {actions or 'the permissions'} of {user}")


# HBase 2.6.1's AccessController words a denial two ways:
# "Insufficient permissions for user 'bob' (table=t, action=READ)" (reads: a TableName, printed
# without its "default:" namespace) and
# "Insufficient permissions (user=bob@EXAMPLE.COM, scope=default:t, ..., action=[WRITE])" (the
# AuthResult: scope is "ns:table" for a table, "ns" for a namespace, "GLOBAL" for the cluster).
_USER = re.compile(r"user[= ]'?([^',)\s]+)")
_ACTION = re.compile(r"action=\[?([A-Z]+)")
_SCOPE = re.compile(r"scope=([^,)\s]+)")
_TABLE = re.compile(r"table=([^,)\]\s]+)")


def _table_as_named(name: str) -> str:
    """``name`` as a user writes it (HBase's listing): ``t`` in the default namespace, else ``ns:t``."""
    try:
        return join_table_name(*split_table_name(name))
    except KeyshapeError:
        return name


def denied_line(message: str, table: str, what: str) -> str:
    """One line from an AccessDeniedException message: who lacks which permission on what, and
    the HBase shell ``grant`` that gives it (``'t'`` or ``'ns:t'`` for a table, ``'@ns'`` for a
    namespace, no scope for a global permission)."""
    user = _USER.search(message)
    action = _ACTION.search(message)
    who = user.group(1) if user else "this user"
    perm = action.group(1) if action else "the permission"
    scope = _SCOPE.search(message)
    named = _TABLE.search(message)
    # Only the AuthResult's scope can name a namespace or the cluster; "table=" always names a
    # table (a bare "t" there is default:t, not a namespace), and without either the request's
    # own table is what was refused.
    if scope and scope.group(1) == "GLOBAL":
        where, target = "the cluster (a global permission)", ""
    elif scope and ":" not in scope.group(1):
        where, target = f"namespace {scope.group(1)!r}", f", '@{scope.group(1)}'"
    else:
        on = _table_as_named(scope.group(1) if scope else named.group(1) if named else table)
        where, target = f"table {on!r}", f", '{on}'"
    short_user = re.split(r"[/@]", who)[0]
    return (
        f"permission denied: {who} has no {perm} on {where} ({what} {table!r}); ask an HBase "
        f"admin to grant it (HBase shell: grant '{short_user}', '{perm[:1]}'{target})"
    )
