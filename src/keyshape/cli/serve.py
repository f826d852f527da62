"""``keyshape serve``: the live Key Visualizer (a web UI, a JSON API and Prometheus metrics over a
cluster's region loads and their history). Thin: parse, call ``keyshape.serve``, print."""

from __future__ import annotations

import json

import click

from keyshape.cli.options import USER_KEY, hbase_option, user_option
from keyshape.core.files import check_sqlite_path


@click.command("serve")
@hbase_option(required=True, what="The HBase to watch (read-only: serve lists tables and reads region loads).")
@user_option
@click.option(
    "--tables", "tables", multiple=True, metavar="PATTERN", help="Tables to watch, shell patterns such as 'ns:*' (repeatable; default: all)."
)
@click.option(
    "--schemas",
    "schemas_dir",
    type=click.Path(file_okay=False),
    default=None,
    metavar="DIR",
    help="A folder of key schemas (*.toml): a table with one gets decoded key labels and its pattern's cause and fix named by field.",
)
@click.option(
    "--db",
    default="keyshape-serve.db",
    show_default=True,
    metavar="FILE",
    help="The history file (SQLite); kept across restarts.",
    callback=lambda _ctx, _param, value: check_sqlite_path(value, "--db"),  # a folder, a missing folder, not SQLite: one line (issue 40)
)
@click.option(
    "--bind", default="127.0.0.1:8080", show_default=True, metavar="HOST:PORT", help="Where the web UI listens; non-loopback needs --token."
)
@click.option("--interval", type=click.FloatRange(min=0.5), default=60.0, show_default=True, metavar="SECONDS", help="Seconds between polls.")
@click.option("--token", default=None, metavar="TOKEN", help="Require this token (Authorization: Bearer TOKEN, or ?token=TOKEN in the UI's address).")
@click.option(
    "--config",
    "config",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help='Alert thresholds (TOML): [alerts."ns:*"] busiest_region_share, busiest_server_share, patterns, verdict; '
    "shown in /metrics (keyshape_alert) and, with --once, in the JSON and the exit code.",
)
@click.option(
    "--once", is_flag=True, help="Poll twice --interval seconds apart, print each table's verdict and exit (for CI); exit 1 when an alert fires."
)
@click.option("--json", "as_json", is_flag=True, help="With --once: print the verdicts as JSON.")
@click.option(
    "--fail-on",
    type=click.Choice(["skewed", "hotspot"]),
    default=None,
    help="With --once: exit 1 when a table's verdict is this or worse.",
)
@click.option(
    "--max-share",
    type=click.FloatRange(min=0.0, max=1.0),
    default=None,
    metavar="FRACTION",
    help="With --once: exit 1 when a table's busiest region takes more than this share of its writes.",
)
def serve_command(
    url: str,
    tables: tuple[str, ...],
    schemas_dir: str | None,
    db: str,
    bind: str,
    interval: float,
    token: str | None,
    config: str | None,
    once: bool,
    as_json: bool,
    fail_on: str | None,
    max_share: float | None,
) -> None:
    """Watch a cluster's tables in a web UI that remembers: heat maps with a wall-clock axis,
    verdicts with the pattern's cause and fix, a live region table, /metrics for Prometheus.

    Binds 127.0.0.1:8080 by default; put a reverse proxy in front (or give --token) to reach it
    from elsewhere. Stop with Ctrl-C; the history stays in --db.
    """
    from keyshape.cli.hbase import _open
    from keyshape.errors import BadInput
    from keyshape.serve import ServeOptions, Service, alerts, check_bind, load_alerts, load_schemas, serve_once

    if (as_json or fail_on or max_share is not None) and not once:
        raise click.UsageError("--json, --fail-on and --max-share go with --once")
    check_bind(bind, token)
    schemas = load_schemas(schemas_dir)
    rules = load_alerts(config)
    ctx = click.get_current_context()
    user = ctx.meta.get(USER_KEY)
    options = ServeOptions(lambda: _open(url, user), db, tables, schemas, bind, interval, token, rules)
    if once:
        verdicts = serve_once(options)
        if not verdicts:  # a mistyped pattern must not make a CI gate pass forever
            if not tables:
                raise BadInput("the cluster lists no table to judge: create one, or point --hbase at the cluster that holds them")
            shown = " ".join(f"--tables {t!r}" for t in tables)
            raise BadInput(f"no table of the cluster matches {shown}: check the pattern (shell style, e.g. 'ns:*'), or leave --tables out")
        if as_json:
            click.echo(json.dumps({"tables": verdicts}, indent=2))
        else:
            for v in verdicts:
                pattern = (v.get("pattern") or {}).get("name", "")
                click.echo(f"{v['verdict']:<9} {v['table']}" + (f"  ({pattern})" if pattern else ""))
        problems = alerts(verdicts, fail_on, max_share, rules)
        for line in problems:
            click.echo(f"alert: {line}", err=True)
        ctx.exit(1 if problems else 0)
    service = Service(options).start()
    click.echo(f"keyshape serve: {service.url}/  (history in {db}; Ctrl-C stops)", err=True)
    try:
        service.wait()
    finally:
        service.stop()
