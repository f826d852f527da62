"""``keyshape autopilot TABLE``: from a hot table to a proven new design running live.

Thin: parse, observe the table (serve's history or a bounded poll: ``serve.observe``), call
:func:`keyshape.ops.autopilot.run`, print the plan (:mod:`keyshape.report.plan`). Dry-run by
default; ``--apply`` starts the online migration of the saved plan, ``--cutover`` finishes it.
"""

from __future__ import annotations

from pathlib import Path

import click

from keyshape.cli.options import hbase_option, html_option, json_option, online_options


@click.command("autopilot")
@click.argument("table")
@hbase_option(required=True, what="The cluster the table lives on.")
@click.option("--schema", "schema_path", default=None, metavar="S.toml", help="The table's key schema (the live keys are decoded by it).")
@click.option("--queries", default=None, metavar="W.toml", help="The read patterns (a WORKLOAD.toml); default: proposed from what the cluster shows.")
@click.option("--db", default=None, metavar="serve.sqlite", help="The history of a 'keyshape serve' watching the table; default: a bounded poll now.")
@click.option("--since", "since_s", type=click.FloatRange(min=1), default=3600.0, show_default=True, help="--db: seconds of history read.")
@click.option("--poll-seconds", type=click.FloatRange(min=1), default=30.0, show_default=True, help="Without --db: how long to poll the table.")
@click.option("--interval", type=click.FloatRange(min=0.5), default=3.0, show_default=True, help="Without --db: seconds between polls.")
@click.option(
    "--stage",
    type=click.Choice(["diagnose", "learn", "advise", "predict", "prove", "plan"]),
    default="plan",
    show_default=True,
    help="Stop after this stage (the state file keeps what each finished stage found).",
)
@click.option("--prove", is_flag=True, help="Load the chosen and the current design into scratch tables of the cluster and measure (dropped after).")
@click.option("--apply", is_flag=True, help="Act on the saved plan: create NEW and start the online migration (the peer stays until --cutover).")
@online_options
@click.option(
    "--state", "state_path", type=click.Path(dir_okay=False), default=None, help="State file (default: .keyshape-autopilot-TABLE.json here)."
)
@click.option(
    "--out-dir", type=click.Path(file_okay=False), default=None, help="Where NEW's schema file is written (default: the state file's folder)."
)
@json_option("Write every stage's result as JSON ('-': stdout).")
@html_option("Write the plan as an HTML page (the two replayed heat maps side by side).")
def autopilot_command(
    table: str,
    url: str,
    schema_path: str | None,
    queries: str | None,
    db: str | None,
    since_s: float,
    poll_seconds: float,
    interval: float,
    stage: str,
    prove: bool,
    apply: bool,
    cutover: bool,
    set_replication_scope: bool,
    max_lag: float,
    sink_bind: str | None,
    state_path: str | None,
    out_dir: str | None,
    json_path: str | None,
    html_path: str | None,
) -> None:
    """Diagnose a hot TABLE, learn its workload, advise, replay, plan the fix (dry run), and with
    --apply / --cutover move it online to the new design."""
    from keyshape.cli.options import open_from_options
    from keyshape.ops.autopilot import run
    from keyshape.report.output import write_json
    from keyshape.report.plan import plan_lines, write_plan_html
    from keyshape.schema import KeySchema
    from keyshape.serve.observe import observe

    if (set_replication_scope or sink_bind) and not (apply or cutover):
        raise click.UsageError("--set-replication-scope and --sink-bind apply to --apply and --cutover only")
    schema = KeySchema.load(schema_path) if schema_path else None
    to_stderr = json_path == "-"

    def say(line: str) -> None:
        # --stage learn: stdout is the learned WORKLOAD.toml alone (`> WORKLOAD.toml`), progress on stderr
        click.echo(line, err=to_stderr or stage == "learn")

    store = open_from_options(url)
    try:
        result = run(
            store,
            table,
            schema,
            lambda: observe(lambda: open_from_options(url), table, schema, db=db, since_s=since_s, poll_seconds=poll_seconds, interval=interval),
            hbase_url=url,
            queries=queries,
            stop_after=stage,
            prove=prove,
            apply=apply,
            cutover=cutover,
            set_replication_scope=set_replication_scope,
            max_lag=max_lag,
            sink_bind=sink_bind,
            state_path=Path(state_path) if state_path else None,
            out_dir=Path(out_dir) if out_dir else None,
            say=say,
        )
    except KeyboardInterrupt:
        click.echo(
            "interrupted: scratch tables dropped; an online migration started with --apply keeps its peer (run --cutover or --apply again)", err=True
        )
        raise SystemExit(130) from None
    finally:
        store.close()
    if result.learned is not None and stage == "learn":
        click.echo(result.learned.toml, err=to_stderr)
    if result.plan is not None:
        for line in plan_lines(result.plan.to_dict()):
            click.echo(line, err=to_stderr)
        if not (apply or cutover):
            click.echo(f"dry run: nothing changed. To act: keyshape autopilot {table} --hbase {url} --apply", err=to_stderr)
    if json_path:
        from rich.console import Console

        write_json(json_path, result.to_dict(), Console(stderr=to_stderr or stage == "learn"))
    if html_path and result.plan is not None:
        write_plan_html(result.plan.to_dict(), html_path)
        click.echo(f"wrote {html_path}", err=to_stderr)
    elif html_path:
        click.echo(f"no plan to write to {html_path}: the run stopped after {result.stopped_after}", err=True)


@click.command("load-split")
@click.argument("table")
@hbase_option(required=True, what="The cluster the table lives on.")
@click.option(
    "--watch", type=click.FloatRange(min=1), default=5.0, show_default=True, help="Seconds between the two counter polls that find the hot region."
)
@click.option("--lookback", type=click.FloatRange(min=1), default=300.0, show_default=True, help="Seconds of the hot region's recent writes sampled.")
@click.option("--max-rows", type=click.IntRange(min=1), default=200_000, show_default=True, help="Keys of the hot region scanned at most.")
@click.option("--apply", is_flag=True, help="Split the region at the chosen key (only when the replay shows relief).")
@json_option("Write the candidates, the replay and the shell line as JSON ('-': stdout).")
def load_split_command(table: str, url: str, watch: float, lookback: float, max_rows: int, apply: bool, json_path: str | None) -> None:
    """Relief now, as TiKV does it: split TABLE's hot region where its recent writes halve
    (printed as HBase shell lines; --apply splits), with the replayed busiest share before/after."""
    from rich.console import Console

    from keyshape.cli.options import open_from_options
    from keyshape.core.hbytes import to_string_binary
    from keyshape.ops.loadsplit import apply_load_split, load_split
    from keyshape.report.output import write_json

    to_stderr = json_path == "-"
    store = open_from_options(url)
    try:
        found = load_split(store, table, watch=watch, lookback=lookback, max_rows=max_rows)
        r = found.region
        click.echo(
            f"hot region {r.name} [{to_string_binary(r.start)}, {to_string_binary(r.end)}): {found.writes_per_s:,.1f} writes/s; "
            f"{found.sampled:,} writes of the last {lookback:g} s sampled",
            err=to_stderr,
        )
        if found.chosen is not None:
            c = found.chosen
            click.echo(
                f"split key {to_string_binary(c.key)}: {c.left:,} | {c.right:,} sampled writes (balance {c.balance:.2f}, crossing {c.crossing:.2f})",
                err=to_stderr,
            )
        click.echo(f"replayed busiest share: {found.before_share:.0%} now, {found.after_share:.0%} after the split", err=to_stderr)
        for note in found.notes:
            click.echo(f"note: {note}", err=to_stderr)
        for line in found.shell_lines():
            click.echo(line, err=to_stderr)
        if apply:
            regions = apply_load_split(store, found)
            click.echo(f"split applied: {table} has {len(regions)} regions", err=to_stderr)
    finally:
        store.close()
    if json_path:
        write_json(json_path, found.to_dict(), Console(stderr=to_stderr))
