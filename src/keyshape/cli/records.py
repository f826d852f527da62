"""``keyshape get``, ``keyshape index lookup|repair`` and ``keyshape ids take|show``: records by key,
by secondary index, and id counters, from the command line.

Thin click commands over :func:`keyshape.read.get_many`, :func:`keyshape.read.read_by_index`,
:func:`keyshape.read.repair_index` and :class:`keyshape.read.IdAllocator`. ``--hbase`` selects a
real HBase; without it the embedded store is used, which starts empty in every process (the
schema's tables are created in it so the commands run, as a preview).
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from keyshape.cli.options import columns_option, hbase_option, user_option, view_options

from keyshape.errors import BadInput, KeyshapeError

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.counters import CounterSpec
    from keyshape.schema.keyschema import KeySchema
    from keyshape.store.base import Store

__all__ = ["get_command", "ids_group", "index_group", "put_command"]

_HBASE_OPTION = hbase_option()


def _HBASE(fn: Any) -> Any:  # noqa: N802 - used as a decorator like the option it was
    return _HBASE_OPTION(user_option(fn))


def _schema(path: str) -> KeySchema:
    from keyshape.schema import load_schema

    return load_schema(path)


def _open(url: str | None, schema: KeySchema) -> Store:
    """The store; an embedded one gets the schema's tables so the command can run."""
    from keyshape.cli.options import open_from_options as open_store
    from keyshape.store import create_table_from_schema

    store = open_store(url)
    if url is None:
        create_table_from_schema(store, schema, verify=False)
    return store


def _note_embedded(url: str | None, found: int) -> None:
    if url is None and not found:
        click.echo("(the embedded store starts empty in every process; use --hbase URL)", err=True)


def record_values(schema: KeySchema, items: dict[str, Any], where: str) -> dict[str, Any]:
    """Typed key fields of one record given as text; a missing or empty value is an error."""
    out: dict[str, Any] = {}
    for f in schema.fields:
        text = items.get(f.name)
        if text is None or (isinstance(text, str) and not text.strip()):
            raise BadInput(f"{where}: no value for key field {f.name!r}; give all of: {', '.join(schema.field_names)}")
        out[f.name] = f.coerce(text)
    return out


def _assignments(items: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, eq, text = item.partition("=")
        if not eq or not name:
            raise BadInput(f"expected FIELD=VALUE, got {item!r}")
        if name in out:
            raise BadInput(f"field {name!r} given twice")
        out[name] = text
    return out


def _csv_records(schema: KeySchema, path: str) -> list[dict[str, Any]]:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            lacking = [n for n in schema.field_names if n not in header]
            if lacking:
                raise BadInput(
                    f"{path}: the header lacks key field(s) {', '.join(lacking)}; the first line "
                    f"must name the columns, e.g. {','.join(schema.field_names)}"
                )
            return [record_values(schema, row, f"{path} line {reader.line_num}") for row in reader]
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path}: not UTF-8 text ({exc.reason}); save the CSV as UTF-8") from None


@click.command("get")
@view_options
@click.argument("schema_path", metavar="SCHEMA")
@click.argument("values", nargs=-1, metavar="[FIELD=VALUE]...")
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Many records: a CSV whose header names the key fields (other columns are ignored).",
)
@columns_option
@_HBASE
def get_command(schema_path: str, values: tuple[str, ...], csv_path: str | None, columns: list[bytes] | None, url: str | None) -> None:
    """The stored rows of one record (FIELD=VALUE for every key field) or of every record of a CSV.

    A deterministic prefix is one Get per record; a random prefix probes every bucket (one
    multi-get). Records with no row are listed on stderr.
    """
    from keyshape.cli.read import print_rows
    from keyshape.core.hbytes import to_string_binary
    from keyshape.read import get_many
    from keyshape.read.plan import original_key

    schema = _schema(schema_path)
    if csv_path is not None and values:
        raise BadInput("give FIELD=VALUE arguments or --csv FILE, not both")
    if csv_path is None:
        given = _assignments(values)
        for name in given:
            schema.field(name)  # an unknown name fails here, naming the fields
        records = [record_values(schema, given, "arguments")]
    else:
        records = _csv_records(schema, csv_path)
    store = _open(url, schema)
    try:
        rows = get_many(store, schema, records, columns=columns)
    finally:
        store.close()
    print_rows(schema, rows, f"{schema.table.full_name}: {len(rows)} rows for {len(records)} record(s)")
    found = {r.original for r in rows}
    missing = [r for r in records if original_key(schema, schema.encode(r)) not in found]
    for r in missing[:20]:
        click.echo("not found: " + " ".join(f"{k}={to_string_binary(v) if isinstance(v, bytes) else v}" for k, v in r.items()), err=True)
    if len(missing) > 20:
        click.echo(f"... and {len(missing) - 20} more not found", err=True)
    _note_embedded(url, len(rows))


def _record_fields(schema: KeySchema) -> dict[str, Any]:
    """Every field a record is typed by: the key's fields and the index fields of [[index]]."""
    fields: dict[str, Any] = {f.name: f for f in schema.fields}
    for spec in schema.indexes:
        for f in spec.fields:
            fields.setdefault(f.name, f)
    return fields


def _typed_record(schema: KeySchema, items: dict[str, Any], family: str, where: str) -> tuple[dict[str, Any], dict[bytes, bytes]]:
    """(record, cells) of one input row: key and index fields typed by the schema; any other
    column is a cell (``family:qualifier``, or a qualifier in ``family``) holding its UTF-8 text."""
    fields = _record_fields(schema)
    record: dict[str, Any] = {}
    cells: dict[bytes, bytes] = {}
    for name, value in items.items():
        if name in fields:
            if value is None or (isinstance(value, str) and not value.strip()):
                continue  # a missing key field is named below; a missing index field by the writer
            try:
                record[name] = fields[name].coerce(value) if isinstance(value, str) else value
            except (KeyshapeError, TypeError, ValueError, OverflowError) as exc:
                raise BadInput(f"{where}: field {name!r}: {exc}") from None
        elif value is not None:
            column = name if ":" in name else f"{family}:{name}"
            text = value if isinstance(value, str) else json.dumps(value)
            cells[column.encode()] = text.encode("utf-8")
    lacking = [n for n in schema.field_names if n not in record]
    if lacking:
        raise BadInput(f"{where}: no value for key field(s) {', '.join(lacking)}; give all of: {', '.join(schema.field_names)}")
    return record, cells


def _input_rows(values: tuple[str, ...], csv_path: str | None, jsonl_path: str | None) -> Iterator[tuple[dict[str, Any], str]]:
    """(column -> value, where) of every input record, streamed."""
    if csv_path is not None:
        try:
            with open(csv_path, newline="", encoding="utf-8") as fh:
                reader = csv.DictReader(fh)
                if not reader.fieldnames:
                    raise BadInput(f"{csv_path}: empty file; the first line must name the columns")
                for row in reader:
                    yield dict(row), f"{csv_path} line {reader.line_num}"
        except UnicodeDecodeError as exc:
            raise BadInput(f"{csv_path}: not UTF-8 text ({exc.reason}); save the CSV as UTF-8") from None
    elif jsonl_path is not None:
        with open(jsonl_path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise BadInput(f"{jsonl_path} line {number}: not JSON ({exc.msg}); give one JSON object per line") from None
                if not isinstance(item, dict):
                    raise BadInput(f"{jsonl_path} line {number}: a JSON object is needed, got {type(item).__name__}")
                yield item, f"{jsonl_path} line {number}"
    else:
        yield _assignments(values), "arguments"


@click.command("put")
@click.argument("schema_path", metavar="SCHEMA")
@click.argument("values", nargs=-1, metavar="[FIELD=VALUE]...")
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Many records: a CSV whose header names the columns (key fields, index fields, cells).",
)
@click.option("--jsonl", "jsonl_path", type=click.Path(exists=True, dir_okay=False), default=None, help="Many records: one JSON object per line.")
@click.option("--family", default=None, metavar="NAME", help="Family of the cells named without one (default: the table's first family).")
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Records per round of writes (the main table, then each index table).",
)
@_HBASE
def put_command(
    schema_path: str, values: tuple[str, ...], csv_path: str | None, jsonl_path: str | None, family: str | None, batch_size: int, url: str | None
) -> None:
    """Write records through the schema: the main row and every [[index]] row, one copy each.

    Each record gives every key field and every index field (FIELD=VALUE, typed by the schema);
    any other column becomes a cell: FAMILY:QUALIFIER=TEXT, or QUALIFIER=TEXT in --family. A record
    already stored keeps its row (under a random salt: its bucket) and its index rows are moved,
    never left dangling. Ctrl-C says how many records HBase acknowledged.
    """
    from keyshape.read import IndexedWriter

    schema = _schema(schema_path)
    if sum(x is not None for x in (csv_path, jsonl_path)) + bool(values) > 1:
        raise BadInput("give FIELD=VALUE arguments, --csv FILE or --jsonl FILE: one source of records")
    if not values and csv_path is None and jsonl_path is None:
        raise BadInput("no records: give FIELD=VALUE for every key field, --csv FILE or --jsonl FILE")
    families = [f.name for f in schema.table.families]
    family = family or families[0]
    if family not in families:
        raise BadInput(f"--family {family!r} is not a family of {schema.table.full_name}; families: {', '.join(families)}")
    store = _open(url, schema)
    written = buffered = 0
    try:
        with IndexedWriter(store, schema, batch_size=batch_size) as writer:
            for items, where in _input_rows(values, csv_path, jsonl_path):
                record, cells = _typed_record(schema, items, family, where)
                writer.put(record, cells)
                buffered += 1
                if buffered % batch_size == 0:
                    written = buffered  # the writer flushed this batch (it raises when it cannot)
        written = buffered
    except KeyboardInterrupt:
        click.echo(
            f"interrupted: {written:,} record(s) written and acknowledged; the "
            f"{buffered - written:,} buffered after them were not written (put them again: a "
            "put of a stored record changes nothing)",
            err=True,
        )
        sys.exit(130)
    finally:
        store.close()
    indexes = ", ".join(i.table.full_name for i in schema.indexes)
    click.echo(
        f"put {written:,} record(s) into {schema.table.full_name}"
        + (f" and index table(s) {indexes}" if indexes else "")
        + (f" on HBase at {url}" if url else " (the embedded store: gone when this process ends; use --hbase URL)")
    )


@click.group("index")
def index_group() -> None:
    """Read a table through its [[index]] tables, and check or repair them."""


@index_group.command("lookup")
@view_options
@click.argument("schema_path", metavar="SCHEMA")
@click.argument("index")
@click.argument("values", nargs=-1, metavar="[FIELD=VALUE]...")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most N rows.")
@click.option("--reverse", is_flag=True, help="Descending index order.")
@_HBASE
def index_lookup(schema_path: str, index: str, values: tuple[str, ...], limit: int | None, reverse: bool, url: str | None) -> None:
    """Main rows found through INDEX; FIELD=VALUE pins leading index fields (the last may be
    FIELD=LO..HI). Index rows whose main row is gone or changed are skipped."""
    from keyshape.cli.key import parse_assignments
    from keyshape.cli.read import print_rows
    from keyshape.read import read_by_index
    from keyshape.read.index import index_of

    schema = _schema(schema_path)
    spec = index_of(schema, index)
    for item in values:
        if item.partition("=")[2] == "":
            raise BadInput(f"no value in {item!r}; write FIELD=VALUE")
    leading = parse_assignments(spec.key, values, allow_range=True)
    store = _open(url, schema)
    try:
        rows = list(read_by_index(store, schema, spec, limit=limit, reverse=reverse, where=leading))
    finally:
        store.close()
    print_rows(schema, rows, f"{schema.table.full_name} by {spec.name}: {len(rows)} rows")
    _note_embedded(url, len(rows))


@index_group.command("repair")
@click.argument("schema_path", metavar="SCHEMA")
@click.argument("index")
@click.option("--check", is_flag=True, help="Only report; exit 1 when the index is inconsistent.")
@click.option("--batch-size", type=click.IntRange(min=1), default=1000, show_default=True, help="Rows read, and rows fixed, per round trip.")
@_HBASE
def index_repair(schema_path: str, index: str, check: bool, batch_size: int, url: str | None) -> None:
    """Check INDEX against the main table both ways and (without --check) fix it: delete index
    rows whose main row is missing (dangling) or changed (stale), add missing ones."""
    import sys

    from keyshape.core.hbytes import to_string_binary
    from keyshape.read import repair_index

    schema = _schema(schema_path)
    store = _open(url, schema)
    try:
        report = repair_index(store, schema, index, fix=not check, batch_size=batch_size, max_listed=5)
    finally:
        store.close()
    click.echo(f"index {report.index}: {report.index_rows_checked} index rows, {report.main_rows_checked} main rows checked")
    for kind in ("dangling", "stale", "missing", "unindexable"):
        n = report.counts.get(kind, 0)
        keys = ", ".join(to_string_binary(k) for k in getattr(report, kind))
        action = "" if check or kind == "unindexable" or not n else (" (added)" if kind == "missing" else " (deleted)")
        click.echo(f"  {kind}: {n}{action}" + (f"  e.g. {keys}" if n else ""))
    click.echo("consistent" if report.consistent else ("inconsistent" if check else "repaired"))
    if check and not report.consistent:
        sys.exit(1)


@click.group("ids")
def ids_group() -> None:
    """Unique ids from a schema's [[counter]] (blocks reserved with one atomic increment)."""


def _counter(schema: KeySchema, name: str) -> CounterSpec:
    for c in schema.counters:
        if c.name == name:
            return c
    names = ", ".join(c.name for c in schema.counters) or "(none: add [[counter]] to the schema)"
    raise BadInput(f"no counter {name!r} in schema {schema.source}; counters: {names}")


@ids_group.command("take")
@click.argument("schema_path", metavar="SCHEMA")
@click.argument("counter")
@click.option("-n", "count", type=click.IntRange(min=1, max=10**7), default=1, show_default=True, help="How many ids.")
@click.option(
    "--floor",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="The highest id known to be used: refuse ids at or below it (a reset counter).",
)
@_HBASE
def ids_take(schema_path: str, counter: str, count: int, floor: int, url: str | None) -> None:
    """Print COUNT new ids of COUNTER, one per line."""
    from keyshape.read import IdAllocator

    schema = _schema(schema_path)
    spec = _counter(schema, counter)
    store = _open(url, schema)
    try:
        alloc = IdAllocator(store, spec.table.full_name, spec.row, spec.column, block=count, floor=floor)
        ids = alloc.take(count)
    finally:
        store.close()
    click.echo("\n".join(map(str, ids)))
    if url is None:
        click.echo("(the embedded store starts empty in every process, so its counters start at 0; use --hbase URL)", err=True)


@ids_group.command("show")
@click.argument("schema_path", metavar="SCHEMA")
@click.argument("counter")
@_HBASE
def ids_show(schema_path: str, counter: str, url: str | None) -> None:
    """Print COUNTER's current value: the highest id reserved so far (0 before the first)."""
    from keyshape.read import IdAllocator

    schema = _schema(schema_path)
    spec = _counter(schema, counter)
    store = _open(url, schema)
    try:
        click.echo(str(IdAllocator.for_counter(store, spec).current()))
    finally:
        store.close()
