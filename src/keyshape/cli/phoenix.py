"""``keyshape phoenix ...``: Phoenix tables from their DDL or from SYSTEM.CATALOG — key layout,
region boundaries, lints, keys encoded and decoded, and re-salting N -> M buckets.

DDL files hold ``CREATE TABLE`` / ``CREATE INDEX`` statements separated by ``;`` (a statement
keyshape cannot read fails only the commands that name it). Keys are printed and read in HBase
``toStringBinary`` form; ``--hex`` reads/prints hex instead. DATE/TIME/TIMESTAMP values print as
Phoenix's UTC date-time (``2026-11-27 10:00:00.123456789`` for a TIMESTAMP), which COLUMN=VALUE
takes back.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from keyshape.cli.options import hbase_option, online_options, user_option

from keyshape.errors import KeyshapeError

__all__ = ["phoenix_group"]


def _table(path: str, name: str | None) -> Any:
    from keyshape.phoenix.schema import load_phoenix_schema

    return load_phoenix_schema(path, name).phoenix


def _show(column: Any, value: Any) -> str:
    """A decoded value as text that COLUMN=VALUE takes back (toStringBinary for bytes)."""
    from keyshape.core.hbytes import to_string_binary
    from keyshape.phoenix.types import format_text

    if isinstance(value, bytes):
        return to_string_binary(value)
    return format_text(column.type, value)


def _record(table: Any, values: tuple[str, ...]) -> dict[str, Any]:
    """PK values from COLUMN=VALUE arguments, in PK order as given; a value Phoenix stores as
    another number (a DECIMAL(p,s) cut to its scale) is a warning on stderr."""
    from keyshape.phoenix.lint import lint_values
    from keyshape.phoenix.types import parse_text

    columns = {c.name: c for c in table.key.columns}
    record: dict[str, Any] = {}
    for item in values:
        name, eq, text = item.partition("=")
        column = columns.get(name.upper()) or columns.get(name)
        if not eq or column is None:
            raise KeyshapeError(f"expected PK_COLUMN=VALUE with a column of {', '.join(columns)}; got {item!r}")
        if column.name in record:  # the last used to win in silence (issue 40)
            raise KeyshapeError(f"column {column.name} is given twice ({item}); give each PK column once")
        record[column.name] = parse_text(column.type, text)
    for finding in lint_values(table.key, record):
        click.echo(f"warning: {finding.message}; {finding.advice}", err=True)
    return record


_TABLE = click.option("--table", "table_name", default=None, help="Table or index in the file (default: the first).")
_TENANT_CONNECTION = click.option(
    "--tenant-connection",
    is_flag=True,
    help="The key as a tenant-specific connection (TenantId=) writes and scans it: a DESC tenant column's ascending bytes.",
)


@click.group("phoenix")
def phoenix_group() -> None:
    """Phoenix tables: row keys byte-exact with Phoenix 5.2, splits, lints, re-salting."""


@phoenix_group.command("ddl")
@click.argument("ddl_path", metavar="DDL.sql")
@_TABLE
def phoenix_ddl(ddl_path: str, table_name: str | None) -> None:
    """Print a table's key layout, its region boundaries, and its CREATE TABLE with the split
    points as binary literals (the one form Phoenix applies byte for byte)."""
    from keyshape.core.hbytes import to_string_binary
    from keyshape.phoenix import create_table_sql

    table = _table(ddl_path, table_name)
    key = table.key
    salt = f"salt byte (SALT_BUCKETS={key.salt_buckets}) + " if key.salt_buckets else ""
    click.echo(
        f"{table.name}: {salt}"
        + " + ".join(f"{c.name} {c.type.sql}{' DESC' if c.desc else ''}{'' if c.nullable else ' NOT NULL'}" for c in key.columns)
    )
    bounds = table.region_boundaries()
    click.echo(f"regions: {len(bounds) + 1}")
    for b in bounds:
        click.echo(f"  {to_string_binary(b)}")
    if table.index_of is None:
        click.echo(create_table_sql(table, bounds if table.split_on else None) + ";")


@phoenix_group.command("lint")
@click.argument("ddl_path", metavar="DDL.sql")
@_TABLE
def phoenix_lint(ddl_path: str, table_name: str | None) -> None:
    """What Phoenix will do with the table that its users do not expect; exit 1 on errors."""
    from keyshape.phoenix.lint import lint_phoenix

    findings = lint_phoenix(_table(ddl_path, table_name))
    for f in findings:
        click.echo(str(f))
    errors = sum(f.level == "error" for f in findings)
    click.echo(f"{ddl_path}: {errors} error(s), {sum(f.level == 'warning' for f in findings)} warning(s)")
    if errors:
        sys.exit(1)


@phoenix_group.group("key")
def phoenix_key() -> None:
    """Encode and decode Phoenix row keys."""


@phoenix_key.command("encode")
@click.argument("ddl_path", metavar="DDL.sql")
@click.argument("values", nargs=-1, metavar="COLUMN=VALUE...")
@_TABLE
@click.option("--hex", "as_hex", is_flag=True, help="Print the key as hex.")
@_TENANT_CONNECTION
def phoenix_key_encode(ddl_path: str, values: tuple[str, ...], table_name: str | None, as_hex: bool, tenant_connection: bool) -> None:
    """Print the row key Phoenix writes for COLUMN=VALUE... (PK columns; absent ones are NULL)."""
    from keyshape.core.hbytes import to_string_binary

    table = _table(ddl_path, table_name)
    record = _record(table, values)
    key = table.key.encode(record, tenant_connection)
    click.echo(key.hex() if as_hex else to_string_binary(key))


@phoenix_key.command("decode")
@click.argument("ddl_path", metavar="DDL.sql")
@click.argument("key")
@_TABLE
@click.option("--hex", "as_hex", is_flag=True, help="KEY is hex (as the HBase shell's or a log's bytes).")
@_TENANT_CONNECTION
def phoenix_key_decode(ddl_path: str, key: str, table_name: str | None, as_hex: bool, tenant_connection: bool) -> None:
    """Print the PK values of KEY (toStringBinary, or hex with --hex), one COLUMN=VALUE per line.
    With a DESC tenant column a key reads in the global or the tenant-connection layout: without
    --tenant-connection both are tried, and stderr says which one read it (both: the global one
    is printed, the other on stderr)."""
    from keyshape.core.hbytes import to_bytes_binary, to_string_binary

    table = _table(ddl_path, table_name)
    if as_hex:
        try:
            raw = bytes.fromhex(key.removeprefix("0x"))
        except ValueError:
            raise KeyshapeError(f"{key!r} is not hex; drop --hex for toStringBinary text") from None
    else:
        raw = to_bytes_binary(key, strict=True)
    columns = {c.name: c for c in table.key.columns}
    readings = [("tenant", table.key.through_tenant_connection().decode(raw))] if tenant_connection else table.key.decode_any(raw)
    # A key that ends before a NOT NULL column is no row Phoenix wrote: refused, not shown as NULL (issue 40).
    missing = [name for name, value in readings[0][1].items() if value is None and not columns[name].nullable]
    if missing:
        raise KeyshapeError(
            f"key '{to_string_binary(raw)}' ends before NOT NULL column {missing[0]} ({len(raw)} byte(s)); "
            "no row of this table has it: check the key (whole, with its salt byte) and --table"
        )
    for name, value in readings[0][1].items():
        click.echo(f"{name}={_show(columns[name], value)}")
    if not tenant_connection and readings[0][0] == "tenant":
        click.echo("note: read in the tenant-connection layout (written through TenantId=: ascending tenant id)", err=True)
    for _, other in readings[1:]:
        shown = " ".join(f"{n}={_show(columns[n], v)}" for n, v in other.items())
        click.echo(f"note: read in the global-connection layout; in the tenant-connection one it is {shown}", err=True)


@phoenix_key.command("ranges")
@click.argument("ddl_path", metavar="DDL.sql")
@click.argument("values", nargs=-1, metavar="COLUMN=VALUE...")
@_TABLE
@_TENANT_CONNECTION
def phoenix_key_ranges(ddl_path: str, values: tuple[str, ...], table_name: str | None, tenant_connection: bool) -> None:
    """Print the [start, stop) scan ranges holding every row with these leading PK values (one per
    salt bucket): start, a tab, stop (toStringBinary; an empty stop is the table's end)."""
    from keyshape.core.hbytes import to_string_binary

    table = _table(ddl_path, table_name)
    for start, stop in table.key.scan_ranges(tenant_connection, **_record(table, values)):
        click.echo(f"{to_string_binary(start)}\t{to_string_binary(stop)}")


@phoenix_group.command("catalog")
@click.argument("table_name", metavar="TABLE")
@hbase_option(required=True, what="The HBase that Phoenix runs on:")
@user_option
@click.option("--tenant", default=None, help="Tenant id of a tenant-specific table.")
def phoenix_catalog(table_name: str, url: str, tenant: str | None) -> None:
    """Print TABLE's CREATE TABLE as Phoenix's SYSTEM.CATALOG describes it (no JDBC needed)."""
    from keyshape.phoenix import create_table_sql
    from keyshape.cli.hbase import _open
    from keyshape.phoenix.catalog import catalog_table

    from keyshape.errors import TableNotFound

    store = _open(url)
    try:
        if not store.table_exists("SYSTEM.CATALOG") and not store.table_exists("SYSTEM:CATALOG"):
            # Phoenix creates SYSTEM.CATALOG on its first connection; the generic "does not exist:
            # create it with keyshape create" pointed the wrong way (issue 40).
            raise TableNotFound(
                f"the HBase at {url} has no Phoenix (no SYSTEM.CATALOG table): connect Phoenix to it once (sqlline.py, or any JDBC "
                "client) so it creates its catalog, or use 'keyshape phoenix ddl DDL.sql' with the table's CREATE TABLE"
            )
        click.echo(create_table_sql(catalog_table(store, table_name, tenant)) + ";")
    finally:
        store.close()


@phoenix_group.command("resalt")
@click.argument("ddl_path", metavar="DDL.sql")
@click.option("--buckets", type=int, required=True, help="The new SALT_BUCKETS.")
@click.option("--target", "target_name", required=True, help="Name of the re-salted copy.")
@_TABLE
@hbase_option(what="With --apply: the HBase that Phoenix runs on.", embedded=False)
@user_option
@click.option("--apply", is_flag=True, help="Copy every row into TARGET (created in Phoenix from the printed DDL) and verify.")
@click.option(
    "--online",
    is_flag=True,
    help="With --apply: keep TARGET in step while writers keep writing the table, as 'keyshape migrate --online' "
    "(keyshape joins as an HBase replication peer; every cell keeps its timestamp and type; a second run resumes).",
)
@online_options
@click.option(
    "--state",
    "state_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="--online: checkpoint file (default: .keyshape-migrate-OLD-to-NEW.json here).",
)
def phoenix_resalt(
    ddl_path: str,
    buckets: int,
    target_name: str,
    table_name: str | None,
    url: str | None,
    apply: bool,
    online: bool,
    set_replication_scope: bool,
    cutover: bool,
    max_lag: float,
    sink_bind: str | None,
    state_path: str | None,
) -> None:
    """Re-salt a table to BUCKETS: print the target's CREATE TABLE; with --apply copy and verify;
    with --apply --online copy while the table keeps changing (--cutover to finish)."""
    from keyshape.phoenix import parse_ddl
    from keyshape.phoenix.resalt import resalt, split_note, target_ddl

    if online and not (apply and url):
        raise click.UsageError("--online needs --apply and --hbase HOST:PORT (the HBase that Phoenix runs on)")
    if not online and (set_replication_scope or cutover or state_path or sink_bind):
        raise click.UsageError("--set-replication-scope, --cutover, --sink-bind and --state apply to --online only")
    source = _table(ddl_path, table_name)
    if target_name.upper() == source.name.upper():  # the copy would overwrite its own source (issue 40)
        raise click.UsageError(f"--target {target_name} is the source table {source.name} itself; name a new table for the re-salted copy")
    ddl = target_ddl(source, target_name.upper(), buckets)
    if not apply:
        click.echo("-- run this in Phoenix, then: keyshape phoenix resalt ... --apply --hbase HOST:PORT")
        note = split_note(source, buckets)
        if note:
            click.echo(f"-- {note}")
        click.echo(ddl + ";")
        return
    if not url:
        raise KeyshapeError("--apply needs --hbase HOST:PORT (the HBase that Phoenix runs on)")
    if online:
        _resalt_online(url, source, parse_ddl(ddl), ddl_path, state_path, set_replication_scope, cutover, max_lag, sink_bind)
        return
    from rich.console import Console

    from keyshape.cli.hbase import _open
    from keyshape.report.terminal import progress_bar

    store = _open(url)
    try:
        with progress_bar(Console(stderr=True), None, "copying rows") as advance:
            report = resalt(store, source, parse_ddl(ddl), progress=advance)
    finally:
        store.close()
    click.echo(f"copied {report.copied} rows")
    for side, d in (("source", report.source), ("target", report.target)):
        click.echo(f"{side}: {d.rows} rows, {d.cells} cells, checksum {d.checksum}")
    if not report.verified:
        raise KeyshapeError("verify failed: source and target differ (see the digests above)")
    click.echo("verified: same rows and cells")


def _resalt_online(
    url: str,
    source: Any,
    target: Any,
    ddl_path: str,
    state_path: str | None,
    set_replication_scope: bool,
    cutover: bool,
    max_lag: float,
    sink_bind: str | None,
) -> None:
    """``resalt --apply --online``: ``migrate --online``'s run (status line, Ctrl-C, cut-over) with
    the re-salt's key schemas, once TARGET is known to be Phoenix's own table."""
    from keyshape.cli.existing import _migrate_online
    from keyshape.cli.hbase import _open
    from keyshape.phoenix.resalt import online_schemas

    store = _open(url)
    try:
        old, new = online_schemas(store, source, target, ddl_path)
    finally:
        store.close()
    _migrate_online(url, old, new, state_path, None, set_replication_scope, cutover, max_lag, sink_bind, 1000, None)
