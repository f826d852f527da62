"""``keyshape grant`` and ``keyshape revoke``: HBase permissions (the AccessController's Grant and
Revoke), with HBase shell's arguments and meaning. Thin click commands over
:mod:`keyshape.store.hbase.acl`."""

from __future__ import annotations

from typing import Any

import click

from keyshape.cli.options import open_from_options as _open
from keyshape.cli.options import hbase_option, user_option

__all__ = ["grant_command", "revoke_command"]

_HBASE_OPTION = hbase_option(
    required=True, what="The HBase whose permissions to change (as a user with ADMIN there, e.g. auth=kerberos&principal=hbase/HOST&keytab=...):"
)


def _URL(fn: Any) -> Any:  # noqa: N802 - used as a decorator like the option it was
    return _HBASE_OPTION(user_option(fn))


@click.command("grant")
@click.argument("user")
@click.argument("permissions", metavar="PERMS")
@click.argument("scope", required=False, metavar="[TABLE|@NAMESPACE]")
@_URL
def grant_command(user: str, permissions: str, scope: str | None, url: str) -> None:
    """Give USER the PERMS (letters of RWXCA: read, write, exec, create, admin) on TABLE
    ('t' or 'ns:t'), on @NAMESPACE, or on the whole cluster when neither is given.

    As HBase shell's grant: the permissions replace what USER held at that scope before, and
    USER may be a group (@admins). Example: keyshape grant bob R orders --hbase URL.
    """
    from keyshape.store.hbase.acl import grant, scope_label

    store = _open(url)
    try:
        grant(store, user, permissions, scope, merge=False)
    finally:
        store.close()
    click.echo(
        f"granted {permissions.upper()} to {user} on {scope_label(scope)}, replacing what {user} held there; granted as {getattr(store, 'user', '?')}"
    )


@click.command("revoke")
@click.argument("user")
@click.argument("scope", required=False, metavar="[TABLE|@NAMESPACE]")
@_URL
def revoke_command(user: str, scope: str | None, url: str) -> None:
    """Take every permission USER holds on TABLE ('t' or 'ns:t'), on @NAMESPACE, or globally
    when neither is given, as HBase shell's revoke. Permissions granted at another scope (a
    namespace's for one of its tables, a global one) stay: revoke them there."""
    from keyshape.store.hbase.acl import revoke, scope_label

    store = _open(url)
    try:
        revoke(store, user, scope)
    finally:
        store.close()
    click.echo(f"revoked every permission of {user} on {scope_label(scope)}; revoked as {getattr(store, 'user', '?')}")
