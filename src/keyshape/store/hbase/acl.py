"""HBase access control (the AccessController): granting permissions, and turning the server's
AccessDeniedException into one line naming the user, the table and the permission missing."""

from __future__ import annotations

import re
from typing import Any

from hbasedriver.protobuf_py import AccessControl_pb2

from keyshape.errors import KeyshapeError, StoreError
from keyshape.store.base import join_table_name, split_table_name

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
    return (f"permission denied: {who} has no {perm} on {where} ({what} {table!r}); ask an HBase "
            f"admin to grant it (HBase shell: grant '{short_user}', '{perm[:1]}'{target})")
