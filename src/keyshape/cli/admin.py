"""``keyshape admin``: region administration on a live HBase (split at a key, move a region,
list regions and servers, switch the balancer). Thin click commands over the Store protocol's
admin calls (``keyshape.store.hbase.admin`` on HBase)."""

from __future__ import annotations

from typing import Any

import click

from keyshape.cli.hbase import _console
from keyshape.cli.options import open_from_options as _open
from keyshape.cli.options import hbase_option, user_option, view_options, view_settings

__all__ = ["admin_group"]

_HBASE_OPTION = hbase_option(required=True, what="The HBase to administer:")


def _URL(fn: Any) -> Any:  # noqa: N802 - used as a decorator like the option it was
    return _HBASE_OPTION(user_option(fn))


def _run(url: str, call: Any) -> Any:
    store = _open(url)
    try:
        return call(store)
    finally:
        store.close()


@click.group("admin")
def admin_group() -> None:
    """Region administration on a live HBase: split, move, regions, servers, balancer."""


@admin_group.command("split")
@click.argument("table")
@click.argument("key")
@_URL
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for the daughter regions to come online.",
)
def split_command(table: str, key: str, url: str, timeout: float) -> None:
    """Split the region of TABLE holding KEY at exactly KEY and wait for both daughters.

    KEY is in HBase's toStringBinary form (\\xNN for any byte), as `keyshape admin regions` and
    the HBase shell print keys.
    """
    from keyshape.core.hbytes import to_bytes_binary
    from keyshape.core.splits import check_split_keys
    from keyshape.report.terminal import regions_table

    # The split key as createTable's are checked (an empty key is the table's start, no split point).
    at = check_split_keys([to_bytes_binary(key, strict=True)], "KEY")[0]
    daughters = _run(url, lambda s: s.split_region(table, at, timeout=timeout))
    _console().print(regions_table(daughters, f"split {table} at {key}: the daughter regions"))


@admin_group.command("move")
@click.argument("region")
@click.argument("server", required=False)
@_URL
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for the region to open on its new server.",
)
def move_command(region: str, server: str | None, url: str, timeout: float) -> None:
    """Move REGION (its full name as `keyshape admin regions` lists it, or its encoded name) to
    SERVER (HOST:PORT as `keyshape admin servers` lists it; default: the other live server with
    the fewest regions). Switch the balancer off first or HBase may move it back."""
    now = _run(url, lambda s: s.move_region(region, server, timeout=timeout))
    click.echo(f"region {region} is on {now}")


@admin_group.command("regions")
@click.argument("table")
@_URL
@view_options
def regions_command(table: str, url: str) -> None:
    """List TABLE's regions in key order with the server each is on (long keys cut with "…" to
    fit; --wide or --json for every key whole)."""
    from keyshape.report.terminal import fitting_console, print_regions

    wide, json_path = view_settings()
    regions = _run(url, lambda s: s.regions(table))
    print_regions(regions, f"{table}: {len(regions)} regions", wide, json_path, fitting_console(stderr=json_path == "-"))


@admin_group.command("servers")
@_URL
def servers_command(url: str) -> None:
    """List the live region servers with their region counts and request loads (as each
    server last reported them, every few seconds; system regions included)."""
    from keyshape.report.terminal import region_servers_table

    _console().print(region_servers_table(_run(url, lambda s: s.region_servers())))


@admin_group.command("balancer")
@click.argument("state", type=click.Choice(["on", "off"]))
@_URL
def balancer_command(state: str, url: str) -> None:
    """Switch HBase's balancer on or off; prints the state it had before."""
    before = _run(url, lambda s: s.set_balancer(state == "on"))
    click.echo(f"balancer {state} (was {'on' if before else 'off'})")
