"""``keyshape scan``: read a (salted) table in original-key order, page by page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from keyshape.cli.options import columns_option, hbase_option, user_option, view_options

from keyshape.errors import BadInput

if TYPE_CHECKING:  # annotations only
    from keyshape.read.merged import Row
    from keyshape.schema.keyschema import KeySchema

__all__ = ["print_rows", "scan_command"]


def print_rows(schema: KeySchema, rows: Sequence[Row], title: str) -> None:
    """Rows as a table: stored key (toStringBinary), decoded fields, the first cells.

    The table fits the terminal (80 columns when piped: no line is padded or wrapped), long values
    cut with "…"; ``--wide`` prints them whole, ``--json`` writes every row whole (issue 40)."""
    from rich.markup import escape
    from rich.table import Table

    from keyshape.cli.options import view_settings
    from keyshape.core.hbytes import to_string_binary
    from keyshape.report.terminal import fitting_console

    wide, json_path = view_settings()
    console = fitting_console(stderr=json_path == "-")
    if json_path is not None:
        from keyshape.report.output import write_json

        payload = {
            "title": title,
            "rows": [
                {
                    "key": to_string_binary(r.key),
                    "fields": {n: (r.fields or {}).get(n) for n in schema.field_names},
                    "cells": {to_string_binary(c): to_string_binary(v) for c, v in r.cells.items()},
                }
                for r in rows
            ],
        }
        write_json(json_path, payload, console)
        if json_path == "-":
            return
    header = ["row key", *schema.field_names, "cells"]
    lines = []
    for r in rows:
        f = r.fields or {}
        shown = ", ".join(f"{to_string_binary(c)}={to_string_binary(v)[:24]}" for c, v in list(r.cells.items())[:3])
        lines.append([to_string_binary(r.key), *(str(f.get(n, "?")) for n in schema.field_names), shown])
    widths = [max([len(h), *(len(line[i]) for line in lines)]) for i, h in enumerate(header)]
    if not wide:
        # Fit the console (80 columns when piped): each field keeps up to 10 characters, the key
        # and the cells share the rest 3:2, every cut value marked with "…" (issue 40).
        budget = console.width - (3 * len(header) + 1)
        for i in range(1, len(header) - 1):
            widths[i] = min(widths[i], 10)
        rest = max(12, budget - sum(widths[1:-1]))
        widths[0] = min(widths[0], max(6, rest * 3 // 5))
        widths[-1] = min(widths[-1], max(5, rest - widths[0]))
        lines = [[_cut(text, widths[i]) for i, text in enumerate(line)] for line in lines]
    out = Table(title=title)
    for h, width in zip(header, widths):
        out.add_column(_cut(h, width), no_wrap=True, width=width)
    for line in lines:
        out.add_row(*(escape(c) for c in line))  # keys may contain [..]
    if wide:  # keys print whole (users paste them back): widen past the terminal
        console.width = max(console.width, sum(w + 3 for w in widths) + 1)
    console.print(out)


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, a cut marked with "…"."""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


@click.command("scan")
@click.argument("schema_path", metavar="SCHEMA")
@click.argument("values", nargs=-1, metavar="[FIELD=VALUE]...")
@hbase_option()
@view_options
@user_option
@click.option(
    "--load-rows",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Embedded store only: it starts EMPTY in every new process, so first create the "
    "table and write N rows of the schema's [workload] to try the read path locally.",
)
@click.option("--start", default=None, help="Smallest original key (prefix stripped), toStringBinary.")
@click.option("--stop", default=None, help="Original key to stop before, toStringBinary.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most N rows (ignored with --page-size).")
@click.option("--reverse", is_flag=True, help="Descending original-key order.")
@click.option("--page-size", type=click.IntRange(min=1), default=None, help="Print one page of N rows and the next page token.")
@click.option("--page-token", default=None, help="Continue after the page that printed this token (same query).")
@columns_option
@click.option("--count", "count_only", is_flag=True, help="Print only how many rows match (no table drawn; with --limit, at most that many).")
@click.option(
    "--parallel",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Read the salt buckets' scanners on N threads (0: one after the other); the rows are "
    "merged in key order either way, so only the time changes.",
)
def scan_command(
    schema_path: str,
    values: tuple[str, ...],
    url: str | None,
    load_rows: int | None,
    start: str | None,
    stop: str | None,
    limit: int | None,
    reverse: bool,
    page_size: int | None,
    page_token: str | None,
    columns: list[bytes] | None,
    count_only: bool,
    parallel: int,
) -> None:
    """Rows of SCHEMA's table in original-key order, merged over every salt bucket.

    FIELD=VALUE pins leading key fields (the last may be FIELD=LO..HI). Rows print with their
    stored key and decoded fields; with --page-size the next page token prints last. Without
    --hbase the embedded store is used, which is empty in a new process: add --load-rows N.
    """
    from keyshape.cli.key import parse_assignments
    from keyshape.core.hbytes import to_bytes_binary
    from keyshape.read import scan, scan_page
    from keyshape.schema import load_schema
    from keyshape.cli.options import open_from_options
    from keyshape.ops.load import write_workload
    from keyshape.store import ensure_table

    schema = load_schema(schema_path)
    leading = parse_assignments(schema, values, allow_range=True)
    if load_rows is not None and url is not None:
        raise BadInput("--load-rows fills the embedded store only; drop --hbase, or load HBase separately")
    if page_token is not None and page_size is None:
        raise BadInput("--page-token needs --page-size (the size of the pages)")
    if count_only and page_size is not None:
        raise BadInput("--count counts every matching row; drop --page-size")
    store = open_from_options(url)
    try:
        table = schema.table.full_name
        if url is None and not store.table_exists(table):
            ensure_table(store, schema.table, schema.split_keys())
        if load_rows:
            write_workload(store, schema, load_rows)
        cols = columns
        low = None if start is None else to_bytes_binary(start, strict=True)
        high = None if stop is None else to_bytes_binary(stop, strict=True)
        token = None
        if count_only:
            # Rows are counted as they stream in: nothing is kept, nothing is drawn.
            n = sum(
                1 for _ in scan(store, schema, limit=limit, start=low, stop=high, reverse=reverse, columns=cols, parallel=parallel, where=leading)
            )
            click.echo(f"{n}")
            return
        if page_size is not None:
            page = scan_page(
                store, schema, page_size, page_token, start=low, stop=high, reverse=reverse, columns=cols, parallel=parallel, where=leading
            )
            rows, token = page.rows, page.next_token
        else:
            rows = list(scan(store, schema, limit=limit, start=low, stop=high, reverse=reverse, columns=cols, parallel=parallel, where=leading))
        print_rows(schema, rows, f"{table}: {len(rows)} rows")
        if page_size is not None:
            click.echo(f"next page token: {token}" if token else "last page")
        if not rows and url is None and not load_rows:
            click.echo("(the embedded store starts empty in every process; add --load-rows N)", err=True)
    finally:
        store.close()
