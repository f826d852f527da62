"""``keyshape split-plan`` and ``keyshape migrate``: relieve and cure an existing table.

Thin click commands over :mod:`keyshape.ops.splitplan` and :mod:`keyshape.ops.migration` (preflight,
copy, verify and the exit rules in one call). Both need a real HBase (``--hbase HOST:PORT``): an
embedded table exists only inside the process that wrote it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

import click

from keyshape.cli.options import hbase_option, online_options, open_from_options, user_option

if TYPE_CHECKING:  # annotations only
    from rich.console import Console

    from keyshape.ops.migrate_online import OnlineStatus
    from keyshape.ops.migration import OnlineOptions
    from keyshape.schema import KeySchema
    from keyshape.store.base import Store

__all__ = ["migrate_command", "split_plan_command"]


def _store(url: str) -> Store:
    return open_from_options(url)


@click.command("split-plan")
@click.argument("table", metavar="NS:NAME")
@hbase_option(required=True)
@user_option
@click.option(
    "--schema",
    "schema_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="The table's key schema: with a salt, cuts keep whole buckets.",
)
@click.option(
    "--target-regions", type=click.IntRange(min=2), default=None, metavar="N", help="Split the biggest regions until the table has N regions."
)
@click.option(
    "--max-region-mb",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="M",
    help="Split every region bigger than M MiB (2^20 bytes, as HBase counts sizes; the store size its region servers report).",
)
@click.option(
    "--sample-per-region",
    type=click.IntRange(min=2),
    default=1000,
    show_default=True,
    help="Keys sampled per region (key-only scans) to place the cuts.",
)
@click.option("--partial-buckets", is_flag=True, help="Allow cuts inside a salt bucket (a region may be left without a whole bucket).")
@click.option("--apply", "apply_", is_flag=True, help="Perform the splits through the Admin API, wait for the daughters, verify.")
def split_plan_command(
    table: str,
    url: str,
    schema_path: str | None,
    target_regions: int | None,
    max_region_mb: float | None,
    sample_per_region: int,
    partial_buckets: bool,
    apply_: bool,
) -> None:
    """Split points for a live table's biggest regions, from its own keys.

    Prints HBase shell lines (split 'ns:t', 'key'); with --apply performs them and checks the
    regions read back are exactly the old ones cut at the planned keys.
    """
    from keyshape.core.hbytes import to_string_binary
    from keyshape.ops.sample import sample_table
    from keyshape.ops.splitplan import apply_plan, plan_splits
    from keyshape.schema import load_schema

    if (target_regions is None) == (max_region_mb is None):
        raise click.UsageError("give exactly one of --target-regions N and --max-region-mb M")
    schema = load_schema(schema_path) if schema_path else None
    store = _store(url)
    try:
        plan = plan_splits(
            sample_table(store, table, sample_per_region),
            schema=schema,
            target_regions=target_regions,
            max_region_mb=max_region_mb,
            partial_buckets=partial_buckets,
        )
        for note in plan.notes:
            click.echo(f"# {note}", err=True)
        for line in plan.shell_lines():
            click.echo(line)
        if apply_:

            def done(n: int, key: bytes) -> None:
                click.echo(f"# split {n}/{len(plan.keys)} at {to_string_binary(key)} done", err=True)

            regions = apply_plan(store, plan, progress=done)
            click.echo(f"# {table} now has {len(regions)} regions; boundaries verified", err=True)
    finally:
        store.close()


@click.command("migrate")
@click.argument("old_path", metavar="OLD.toml", type=click.Path(exists=True, dir_okay=False))
@click.argument("new_path", metavar="NEW.toml", type=click.Path(exists=True, dir_okay=False))
@hbase_option(required=True)
@user_option
@click.option("--resume", is_flag=True, help="Continue an interrupted copy from its checkpoint.")
@click.option("--verify-only", is_flag=True, help="Only compare source and target; copy nothing.")
@click.option(
    "--max-rows-per-sec", type=click.FloatRange(min=0, min_open=True), default=None, metavar="R", help="Throttle the copy to R rows per second."
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Rows per read and write batch (checkpoints follow acknowledged batches, at most every 0.5 s).",
)
@click.option(
    "--state", "state_path", type=click.Path(dir_okay=False), default=None, help="Checkpoint file (default: .keyshape-migrate-OLD-to-NEW.json here)."
)
@click.option(
    "--rejects",
    "reject_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Where rows whose key does not decode go (default: next to the checkpoint).",
)
@click.option(
    "--online",
    is_flag=True,
    help="Keep NEW in step while writers keep writing OLD: keyshape joins as an HBase replication peer of OLD's table "
    "and re-keys every replicated edit into NEW during and after the copy; a second run resumes.",
)
@click.option(
    "--via",
    type=click.Choice(["puts", "bulkload"]),
    default="puts",
    show_default=True,
    help="How NEW is written: puts through its WAL and memstores, or HFiles per NEW region handed over with HBase's bulk-load RPCs.",
)
@click.option("--spark", is_flag=True, help="Copy with a Spark job (one task per OLD region writing HFiles; implies --via bulkload).")
@click.option("--master", default=None, metavar="URL", help="Spark master for --spark (default local[*,4]: local tasks retried up to 4 times).")
@online_options
def migrate_command(
    old_path: str,
    new_path: str,
    url: str,
    resume: bool,
    verify_only: bool,
    max_rows_per_sec: float | None,
    batch_size: int,
    state_path: str | None,
    reject_path: str | None,
    online: bool,
    set_replication_scope: bool,
    cutover: bool,
    max_lag: float,
    sink_bind: str | None,
    via: str,
    spark: bool,
    master: str | None,
) -> None:
    """Copy OLD's table into NEW's key design (e.g. a re-salt), then verify nothing was lost.

    Creates NEW's table pre-split (if missing), copies every cell (all families, qualifiers,
    versions and timestamps) re-keyed from OLD to NEW, checkpointing each batch, then compares
    rows, cells and a checksum per source region on both sides. Exits non-zero on a difference
    or when any row was rejected.

    With --online the copy runs while keyshape receives OLD's edits as an HBase replication peer
    and writes them re-keyed to NEW; it keeps streaming until Ctrl-C (the peer stays: run again
    to resume) or, with --cutover, until NEW caught up and verified equal to OLD.
    """
    from keyshape.ops.migration import OnlineOptions
    from keyshape.schema import load_schema

    if verify_only and resume:
        raise click.UsageError("--verify-only copies nothing; drop --resume")
    if not online and (set_replication_scope or cutover or sink_bind):
        raise click.UsageError("--set-replication-scope, --cutover and --sink-bind apply to --online only")
    if online and (verify_only or resume):
        raise click.UsageError("--online resumes by itself and verifies at --cutover; drop --resume/--verify-only")
    if master and not spark:
        raise click.UsageError("--master applies to --spark only")
    old, new = load_schema(old_path), load_schema(new_path)
    copy: Any = None  # issue 42: the Spark job (a layer above ops) as the copy step
    verify: Any = None  # and the Spark job that checksums both sides per region as the verification
    if spark:
        from functools import partial

        from keyshape.spark.migrate import migrate_spark

        from keyshape.spark.verify import verify_spark

        copy, via = partial(_spark_copy, migrate_spark, url, master), "bulkload"
        verify = partial(_spark_verify, verify_spark, url, master)
    _migrate(
        url,
        old,
        new,
        resume=resume,
        verify_only=verify_only,
        via=via,
        copy=copy,
        verify=verify,
        online=OnlineOptions(set_replication_scope, cutover, max_lag, sink_bind) if online else None,
        state_path=state_path,
        reject_path=reject_path,
        max_rows_per_sec=max_rows_per_sec,
        batch_size=batch_size,
    )


def _migrate(url: str, old: KeySchema, new: KeySchema, *, online: OnlineOptions | None, **options: Any) -> None:
    """Run :func:`keyshape.ops.migration.migrate_and_verify` with progress bars (or the online
    status line), print its report as it comes and exit with its code."""
    from rich.console import Console

    from keyshape.ops.migration import migrate_and_verify
    from keyshape.report.terminal import progress_bar

    err = Console(stderr=True)
    store = _store(url)
    try:
        with _online_display(err) if online is not None else nullcontext(None) as status:
            run = migrate_and_verify(
                store,
                old,
                new,
                online=online,
                # online, the report comes at the end: printed once the live status line is gone
                say=click.echo if online is None else None,
                phase=lambda description: progress_bar(err, None, description),
                notice=lambda text: click.echo(text, err=True),
                status=status,
                **options,
            )
    finally:
        store.close()
    if online is not None:
        for line in run.lines:
            click.echo(line)
    if run.failed == "interrupted":
        for text in [run.message, *run.notices]:
            click.echo(text, err=True)
    elif run.failed is not None:
        click.echo(f"error: {run.message}", err=True)
    if run.exit_code:
        sys.exit(run.exit_code)


def _migrate_online(
    url: str,
    old: KeySchema,
    new: KeySchema,
    state_path: str | None,
    reject_path: str | None,
    set_replication_scope: bool,
    cutover: bool,
    max_lag: float,
    sink_bind: str | None,
    batch_size: int,
    max_rows_per_sec: float | None,
) -> None:
    """``migrate --online``'s run for another command (``phoenix resalt --apply --online``)."""
    from keyshape.ops.migration import OnlineOptions

    _migrate(
        url,
        old,
        new,
        online=OnlineOptions(set_replication_scope, cutover, max_lag, sink_bind),
        state_path=state_path,
        reject_path=reject_path,
        batch_size=batch_size,
        max_rows_per_sec=max_rows_per_sec,
    )


def _spark_copy(migrate_spark: Any, url: str, master: str | None, store: Any, old: KeySchema, new: KeySchema, **copy: Any) -> Any:
    """The copy step as a Spark job (its tasks open their own connections to ``url``)."""
    return migrate_spark(url, old, new, master=master, **copy)


def _spark_verify(verify_spark: Any, url: str, master: str | None, store: Any, old: KeySchema, new: KeySchema, progress: Any = None) -> Any:
    """The verification as a Spark job: each side's per-region checksums in its tasks (Spark's
    own progress shows; ``progress`` is not fed)."""
    return verify_spark(url, old, new, master=master)


@contextmanager
def _online_display(err: Console) -> Iterator[Callable[[OnlineStatus], None]]:
    """``migrate --online``'s status: one live line on a terminal, else a line every 5 s (at once
    when a dead server's queue appears or is claimed)."""
    import time

    from rich.live import Live

    printed = [0.0]
    dead: list[list[str]] = [[]]  # the dead servers with an unclaimed queue in the last status
    live = Live(console=err, transient=False, auto_refresh=False) if err.is_terminal else None

    def show(status: OnlineStatus) -> None:
        if live is not None:
            live.update(status.line(), refresh=True)
        elif time.monotonic() - printed[0] >= 5.0 or status.unclaimed != dead[0]:
            # a server dying or its queue being claimed is news at once, not in 5 s
            printed[0], dead[0] = time.monotonic(), status.unclaimed
            click.echo(status.line(), err=True)

    if live is None:
        yield show
        return
    live.start()
    try:
        yield show
    finally:
        live.stop()
