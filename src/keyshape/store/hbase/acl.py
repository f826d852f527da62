"""HBase access control (the AccessController): granting permissions, and turning the server's
AccessDeniedException into one line naming the user, the table and the permission missing."""

from __future__ import annotations

import re
from typing import Any

from hbasedriver.protobuf_py import AccessControl_pb2

from keyshape.errors import StoreError
from keyshape.store.base import split_table_name

__all__ = ["PermissionDenied", "denied_line", "grant"]

ACTIONS = {"R": "READ", "W": "WRITE", "X": "EXEC", "C": "CREATE", "A": "ADMIN"}


class PermissionDenied(StoreError):
    """The server's AccessController refused an operation; the message names who lacks what."""


def grant(client: Any, user: str, actions: str, table: str | None = None) -> None:
    """Grant ``user`` the ``actions`` (letters of ``RWXCA``, as in HBase shell's ``grant``) on
    ``table``, or globally when ``table`` is None. Needs a user with ADMIN (e.g. the superuser)."""
    unknown = set(actions.upper()) - set(ACTIONS)
    if unknown or not actions:
        raise StoreError(f"permission {actions!r}: use letters of RWXCA (read, write, exec, create, admin)")
    Action = AccessControl_pb2.Permission.Action
    codes = [Action.Value(ACTIONS[a]) for a in dict.fromkeys(actions.upper())]
    permission = AccessControl_pb2.Permission()
    if table is None:
        permission.type = AccessControl_pb2.Permission.Global
        permission.global_permission.action.extend(codes)
    else:
        namespace, name = split_table_name(table)
        permission.type = AccessControl_pb2.Permission.Table
        permission.table_permission.table_name.namespace = namespace.encode()
        permission.table_permission.table_name.qualifier = name.encode()
        permission.table_permission.action.extend(codes)
    request = AccessControl_pb2.GrantRequest(
        user_permission=AccessControl_pb2.UserPermission(user=user.encode(), permission=permission),
        merge_existing_permissions=True)
    client._master("Grant", request, AccessControl_pb2.GrantResponse, table or "(global)",
                   f"grant {actions} to {user}")


# "Insufficient permissions for user 'bob' (table=t, action=WRITE)" and
# "Insufficient permissions (user=bob@EXAMPLE.COM, scope=default:t, ..., action=[WRITE])".
_USER = re.compile(r"user[= ]'?([^',)\s]+)")
_ACTION = re.compile(r"action=\[?([A-Z]+)")
_SCOPE = re.compile(r"(?:scope|table)=([^,)\s]+)")


def denied_line(message: str, table: str, what: str) -> str:
    """One line from an AccessDeniedException message: who lacks which permission on what."""
    user = _USER.search(message)
    action = _ACTION.search(message)
    scope = _SCOPE.search(message)
    who = user.group(1) if user else "this user"
    perm = action.group(1) if action else "the permission"
    on = scope.group(1) if scope else table
    # A scope without ":" is a namespace (CREATE of a table is checked on its namespace).
    where, target = (f"table {on!r}", on) if ":" in on else (f"namespace {on!r}", "@" + on)
    return (f"permission denied: {who} has no {perm} on {where} ({what} {table!r}); ask an HBase "
            f"admin to grant it (HBase shell: grant '{who.split('@')[0]}', '{perm[:1]}', '{target}')")
