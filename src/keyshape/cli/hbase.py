"""``keyshape create``, ``keyshape load`` and ``keyshape watch``: a schema's table on a live store.

Thin click commands over :mod:`keyshape.schema.ddl` and :mod:`keyshape.ops.live`. ``--hbase`` selects a real
HBase (``HOST:PORT`` of its ZooKeeper, or ``hbase://HOST:PORT``); without it ``create`` and
``load`` run against a fresh in-process embedded store (a preview: nothing outlives the command),
and ``watch`` refuses, since an embedded table exists only inside the process that wrote it.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import click

from keyshape.cli.options import open_from_options as _open  # also imported from here by cli.phoenix and cli.serve
from keyshape.cli.options import hbase_option, html_option, json_option, png_option, seed_option, user_option, view_options
from keyshape.errors import BadInput
from keyshape.report.output import write_json, write_reports

if TYPE_CHECKING:  # annotations only
    from keyshape.ops.load import LoadRun
    from keyshape.schema.keyschema import KeySchema
    from keyshape.store.base import Store

__all__ = ["create_command", "load_command", "watch_command"]


def _console(stderr: bool = False) -> Any:
    from keyshape.report.terminal import cli_console

    return cli_console(stderr=stderr)


def _create(store: Store, schema: KeySchema) -> list[Any]:
    """Create the schema's table (and namespace), then read its regions back and verify them."""
    from keyshape.store import create_table_from_schema

    return create_table_from_schema(store, schema)


def _where(url: str | None) -> str:
    return f"HBase at {url}" if url else "the embedded store (preview; nothing is kept)"


def _print_connection(out: Any, url: str | None, store: Store) -> None:
    """The HBase address and the user every request acts as (what HBase's ACLs check): under
    Kerberos the authenticated principal, else the SIMPLE user name."""
    if url:
        security = getattr(getattr(store, "cluster", None), "security", None)
        who = "Kerberos principal" if security is not None and security.auth == "kerberos" else "user"
        # soft_wrap: one line however long the URL (it is copied, and searched for in logs)
        out.print(f"[dim]connected to HBase at {url} as {who} {getattr(store, 'user', '?')}[/dim]", highlight=False, soft_wrap=True)


@click.command("create")
@click.argument("schema_path", metavar="SCHEMA", type=click.Path(exists=True, dir_okay=False))
@hbase_option()
@user_option
@click.option("--dry-run", is_flag=True, help="Print the equivalent HBase shell statements instead; needs no HBase.")
@click.option(
    "--from",
    "source_path",
    metavar="OLD.toml",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="The schema of an existing table whose rows SCHEMA's table will receive (as migrate's OLD.toml): "
    "first report how SCHEMA's regions would take a sample of its real keys; needs --hbase.",
)
@view_options
def create_command(schema_path: str, url: str | None, dry_run: bool, source_path: str | None) -> None:
    """Create SCHEMA's table pre-split at the schema's split keys, and verify its regions.

    Creates the namespace when missing, then the table (and its [[index]] and [[counter]]
    tables) with every column family and its
    options (versions, compression, bloom filter, block size, TTL, in-memory, data block
    encoding). The regions are then read back from the store and compared with the split keys;
    any difference is an error. --dry-run prints `create_namespace` / `create` for `hbase shell`.

    With --from OLD.toml, first the preflight migrate prints: OLD's table's keys (a key-only
    sample of every region) re-keyed by SCHEMA and placed by its split points, the busiest
    region's share against OLD's regions and against SCHEMA's plan, with a warning when SCHEMA
    spreads them worse (a warning never stops the create; with --dry-run it goes to stderr).
    """
    from keyshape.schema import load_schema

    schema = load_schema(schema_path)
    _check_tables(schema)
    if source_path is not None:
        _preflight(url, load_schema(source_path), schema, err=dry_run)
    if dry_run:
        from keyshape.schema.ddl import shell_create_statements

        click.echo(shell_create_statements(schema), nl=False)
        return
    store = _open(url)
    try:
        regions = _create(store, schema)
    finally:
        store.close()
    from keyshape.cli.options import view_settings
    from keyshape.report.terminal import assignment_line, fitting_console, print_regions

    wide, json_path = view_settings()
    out = fitting_console(stderr=json_path == "-")
    _print_connection(out, url, store)
    title = f"created {schema.table.full_name} on {_where(url)}: {len(regions)} regions, as the schema asks"
    print_regions(regions, title, wide, json_path, out)
    from keyshape.schema.ddl import schema_tables

    for role, spec, splits in schema_tables(schema)[1:]:
        out.print(f"created {role} table {spec.full_name}: {len(splits) + 1} region(s)")
    out.print(assignment_line(regions))


def _check_tables(schema: KeySchema) -> None:
    """Every table the schema creates (main, index, counter) has a name and split keys HBase takes,
    checked before a statement is printed or sent (keyshape.core.names, core.splits; issue 40)."""
    from keyshape.core.names import check_table_name
    from keyshape.core.splits import check_split_keys
    from keyshape.schema.ddl import schema_tables

    for role, spec, keys in schema_tables(schema):
        check_table_name(spec.full_name, f"the {role} table")
        check_split_keys(keys, f"the {role} table's split keys")


def _preflight(url: str | None, source: KeySchema, target: KeySchema, err: bool) -> None:
    """``create --from``: print how ``target`` would spread ``source``'s real keys (issue 31)."""
    from keyshape.ops.preflight import create_preflight

    if not url:
        raise BadInput("--from reads the source table's keys from a real HBase: add --hbase HOST:PORT")
    store = _open(url)
    try:
        result = create_preflight(store, source, target)
    finally:
        store.close()
    for line in result.lines():
        click.echo(line, err=err)


@click.command("load")
@click.argument("schema_path", metavar="SCHEMA", type=click.Path(exists=True, dir_okay=False))
@hbase_option()
@user_option
@click.option("--rows", type=click.IntRange(min=1), default=None, help="Rows to write (default: the schema's [workload] rows).")
@click.option("--batch-size", type=click.IntRange(min=1), default=1000, show_default=True, help="Rows per acknowledged batch.")
@seed_option
@click.option(
    "--settle",
    type=click.FloatRange(min=0),
    default=15.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for the region servers to report the writes in their region loads.",
)
@json_option("Write the load's numbers (rows, throughput, live and predicted verdicts) as JSON ('-' for stdout).")
def load_command(
    schema_path: str, url: str | None, rows: int | None, batch_size: int, seed: int, settle: float, json_path: str | None = None
) -> None:
    """Write SCHEMA's workload into its table and show how the writes spread over regions.

    Creates the table (as `keyshape create`) when it does not exist. Prints the throughput,
    then the per-region write requests read back from the store's region loads, beside the
    share the analyzer predicts for the same rows and seed, and the analyzer's verdict on the
    live counts. A batch that cannot be written ends the load with one error line saying how
    many rows were acknowledged (stored) before it.
    """
    from keyshape.ops.load import load_table
    from keyshape.schema import load_schema
    from keyshape.report.terminal import progress_bar
    from keyshape.workload import WorkloadSpec

    schema = load_schema(schema_path)
    if schema.workload is None and rows is None:
        raise BadInput(f"{schema_path}: no [workload] section to generate rows from; add one or pass --rows N (default generators)")
    table = schema.table.full_name
    total = rows if rows is not None else WorkloadSpec.of(schema.workload).rows
    out, err = _console(stderr=json_path == "-"), _console(stderr=True)  # with --json - the JSON owns stdout
    store = _open(url)
    _print_connection(out, url, store)

    def created(regions: list[Any]) -> None:
        out.print(f"created {table} on {_where(url)} with {len(regions)} region{'' if len(regions) == 1 else 's'}")

    acknowledged = [0]
    try:
        with progress_bar(err, total, f"loading {table}") as update:

            def progress(done: int, _total: int) -> None:
                acknowledged[0] = done
                update(done)

            try:
                run = load_table(
                    store, schema, total, batch_size=batch_size, seed=seed, settle=settle, source=_where(url), progress=progress, on_created=created
                )
            except KeyboardInterrupt:
                err.print(
                    f"interrupted: {acknowledged[0]:,} of {total:,} rows written and acknowledged by "
                    f"{_where(url)} before Ctrl-C (batches still in flight may be stored too)",
                    highlight=False,
                )
                sys.exit(130)
    finally:
        store.close()
    _print_load(out, err, run, batch_size)
    if json_path:
        write_json(json_path, _load_json(run), out)


def _load_json(run: LoadRun) -> dict[str, Any]:
    """``load --json``: what the terminal view says, as numbers."""
    result = run.result
    return {
        "table": run.table,
        "rows_requested": result.requested,
        "rows_acknowledged": result.rows,
        "seconds": result.seconds,
        "rows_per_second": result.rows_per_second,
        "longest_wait_seconds": result.longest_wait,
        "retries": run.retries,
        "counted": run.counted,
        "estimated": run.estimated,
        "reconciled": run.reconciled,
        "live": run.live.to_dict(),
        "predicted": run.predicted.to_dict(),
    }


def _print_load(out: Any, err: Any, run: LoadRun, batch_size: int) -> None:
    """What ``keyshape load`` prints of an :class:`keyshape.ops.load.LoadRun`."""
    from keyshape.report.terminal import load_regions_table, servers_table, verdict_view

    result = run.result
    out.print(
        f"wrote {result.rows:,} rows to {run.table} in {result.seconds:.1f} s: {result.rows_per_second:,.0f} rows/s (batches of {batch_size:,})"
    )
    if result.longest_wait_ended > 0:
        ended = datetime.fromtimestamp(result.longest_wait_ended, timezone.utc).strftime("%H:%M:%S.%f")[:-3]
        waited = f"longest wait for a batch acknowledgement: {result.longest_wait:.2f} s, ended {ended} UTC"
    else:  # no batch was waited for (0 is no time of day: it printed "ended 00:00:00.000 UTC"; issue 40)
        waited = "every batch acknowledged at once (no wait measured)"
    out.print(f"{waited}; {run.retries} transient error(s) retried")
    if run.counted < result.rows:
        err.print(
            f"[yellow]note:[/yellow] the region loads show {run.counted:,} of {result.rows:,} "
            f"writes after {run.settle:.0f} s; writes a region took just before it split or "
            "moved are in no counter"
        )
    out.print(load_regions_table(run.live, run.predicted_shares, run.servers_seen))
    out.print(servers_table(run.servers, "write"))
    out.print(
        verdict_view(
            run.live,
            f"live: {run.counted:,} write requests"
            + (
                f" ({run.estimated:,} of them written to regions that split before reporting them"
                + (", counted from the loader's own total" if run.reconciled else ", estimated")
                + ")"
                if run.estimated
                else ""
            ),
        )
    )
    out.print(f"[dim]predicted by keyshape analyze for the same {run.rows:,} rows: {run.predicted.verdict}[/dim]")


@click.command("watch")
@click.argument("table")
@hbase_option(what="The HBase to watch (required: an embedded table lives only in the process that wrote it).", embedded=False)
@user_option
@click.option(
    "--interval", type=click.FloatRange(min=0.1), default=5.0, show_default=True, metavar="SECONDS", help="Seconds between polls of the region loads."
)
@click.option("--samples", type=click.IntRange(min=1), default=None, help="Stop after N samples (default: until --duration or Ctrl-C).")
@click.option("--duration", type=click.FloatRange(min=0.1), default=None, metavar="SECONDS", help="Stop after this many seconds.")
@click.option("--metric", type=click.Choice(["write", "read"]), default="write", show_default=True, help="Which request counter to draw.")
@html_option("Write the live heat map report as self-contained HTML.")
@png_option()
@json_option("Write the analysis as JSON (- for stdout: the rest goes to stderr).")
@click.option(
    "--schema",
    "schema_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="The table's key schema: region labels show start keys decoded by it.",
)
@click.option(
    "--count-splits/--no-count-splits",
    default=True,
    show_default=True,
    help="Count the rows of each region a split makes (key-only scans, when a poll finds "
    "it), so the parent's writes are drawn where they are; without, half to each daughter.",
)
def watch_command(
    table: str,
    url: str | None,
    interval: float,
    samples: int | None,
    duration: float | None,
    metric: str,
    html_path: str | None,
    png_path: str | None,
    json_path: str | None,
    schema_path: str | None,
    count_splits: bool = True,
) -> None:
    """Poll TABLE's region loads and draw the live time x key-space heat map.

    Every --interval seconds the per-region request counters are read and their increase since
    the last poll becomes one column of the heat map (regions that split meanwhile are
    followed). Ctrl-C stops early; the region table, the verdict and the --html/--png reports
    cover what was seen. Run `keyshape load` against the same --hbase meanwhile to watch it.
    """
    from keyshape.ops.watch import watch_table
    from keyshape.schema import load_schema

    schema = load_schema(schema_path) if schema_path is not None else None  # bad file: fail first
    if url is None:
        raise click.UsageError("watch needs --hbase HOST:PORT: an embedded store's tables live only inside the keyshape process that wrote them")
    out = _console(stderr=json_path == "-")  # with --json - the JSON owns stdout
    store = _open(url)
    _print_connection(out, url, store)

    def show(sample: Any) -> None:
        values = sample.writes if metric == "write" else sample.reads
        gone = sum(v.writes if metric == "write" else v.reads for v in sample.vanished)
        total = int(values.sum()) + gone
        busiest = int(values.argmax())
        share = values[busiest] / total if total else 0.0
        split = f"  ({len(sample.vanished)} region(s) split/merged, ~{gone:,} estimated)" if sample.vanished else ""
        out.print(f"t={sample.at:7.1f}s  {metric}s {total:>10,}  busiest region #{busiest} {100 * share:5.1f}% of {len(values)}{split}")

    try:
        run = watch_table(
            store,
            table,
            interval,
            samples,
            duration=duration,
            metric=metric,
            schema=schema,
            source=f"live, {_where(url)}",
            on_sample=show,
            count_splits=count_splits,
        )
    finally:
        store.close()
    from keyshape.report.terminal import analysis_view, regions_table, servers_table

    if run.analysis is None:
        # An idle table is an answer too: its regions as they stand, and no verdict to give.
        out.print(regions_table(list(run.heat.latest), f"{table}: {len(run.heat.latest)} region(s), idle"))
        out.print(
            f"IDLE      {table}: no {metric} requests in {len(run.heat.samples)} poll(s) over "
            f"{run.seconds:.0f} s, so there is nothing to judge; watch while it is written to "
            "(keyshape load, or your writers)"
        )
        for path in (html_path, png_path):
            if path:
                _console(stderr=True).print(f"no report written to {path}: nothing was counted", highlight=False)
        if json_path:
            write_json(json_path, run.to_dict(), out)
        return
    out.print(analysis_view(run.analysis, width=out.width))
    out.print(servers_table(run.servers, metric))
    write_reports(out, run.analysis, html_path=html_path, png_path=png_path, json_path=json_path, payload=run.to_dict())
