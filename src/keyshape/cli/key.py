"""``keyshape key encode|decode|ranges`` and ``keyshape lint``: a key schema from the command line.

Keys are printed and read in HBase ``toStringBinary`` form. Field values are typed as
``name=value``; the schema's field type parses them (timestamps accept ms or ISO-8601, bytes
accept toStringBinary text). A range on the last field is ``name=LO..HI`` (half-open, either side
may be empty).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from keyshape.cli.options import json_option
from keyshape.errors import BadInput, KeyshapeError

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.keyschema import KeySchema

__all__ = ["key_group", "lint_command"]


def _schema(path: str) -> KeySchema:
    from keyshape.schema import load_schema

    return load_schema(path)


def _is_ddl(path: str) -> bool:
    return path.lower().endswith(".sql")


def parse_assignments(schema: KeySchema, items: tuple[str, ...], allow_range: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        name, eq, text = item.partition("=")
        if not eq or not name:
            raise BadInput(f"expected field=value, got {item!r}")
        if name in out:  # the last used to win in silence (issue 40)
            raise BadInput(f"field {name!r} is given twice ({name}={text}); give each field once")
        f = schema.field(name)
        if allow_range and ".." in text:
            lo, _, hi = text.partition("..")
            out[name] = (f.coerce(lo) if lo else None, f.coerce(hi) if hi else None)
        else:
            out[name] = f.coerce(text)
    return out


@click.group("key")
def key_group() -> None:
    """Encode, decode and plan scans with a key schema (TOML)."""


@key_group.command("encode")
@click.argument("schema_path", metavar="SCHEMA")
@click.argument("values", nargs=-1, metavar="FIELD=VALUE...")
def key_encode(schema_path: str, values: tuple[str, ...]) -> None:
    """Print the row key of FIELD=VALUE... (toStringBinary) and its length in bytes. SCHEMA may
    also be a Phoenix DDL file (.sql): see ``keyshape phoenix key``."""
    from keyshape.core.hbytes import to_string_binary

    if _is_ddl(schema_path):
        from keyshape.cli.phoenix import phoenix_key_encode

        return click.get_current_context().invoke(phoenix_key_encode, ddl_path=schema_path, values=values, table_name=None, as_hex=False)

    schema = _schema(schema_path)
    key = schema.encode(parse_assignments(schema, values, allow_range=False))
    click.echo(to_string_binary(key))
    click.echo(f"length: {len(key)} bytes")


@key_group.command("decode")
@click.argument("schema_path", metavar="SCHEMA")
@click.argument("key")
def key_decode(schema_path: str, key: str) -> None:
    """Print the fields of KEY (given in toStringBinary form), one name=value per line. SCHEMA may
    also be a Phoenix DDL file (.sql)."""
    from keyshape.core.hbytes import to_bytes_binary, to_string_binary

    looks_hex = len(key) >= 4 and len(key) % 2 == 0 and all(c in "0123456789abcdefABCDEF" for c in key)
    if _is_ddl(schema_path):
        from keyshape.cli.phoenix import phoenix_key_decode

        try:
            return click.get_current_context().invoke(phoenix_key_decode, ddl_path=schema_path, key=key, table_name=None, as_hex=False)
        except KeyshapeError as exc:
            if looks_hex:  # a key copied from a log or the shell in hex, read here as its characters
                raise BadInput(f"{exc}; {key!r} looks like hex: decode it with keyshape phoenix key decode {schema_path} --hex {key}") from None
            raise

    schema = _schema(schema_path)
    try:
        decoded = schema.decode(to_bytes_binary(key, strict=True))
    except KeyshapeError as exc:
        if looks_hex:
            raise BadInput(
                f"{exc}; {key!r} looks like hex, but KEY is read in toStringBinary form (\\xNN for other bytes): write each byte as \\xNN"
            ) from None
        raise
    for name, value in decoded.items():
        shown = to_string_binary(value) if isinstance(value, bytes) else value
        click.echo(f"{name}={shown}")


@key_group.command("ranges")
@click.argument("schema_path", metavar="SCHEMA")
@click.argument("values", nargs=-1, metavar="FIELD=VALUE...")
def key_ranges(schema_path: str, values: tuple[str, ...]) -> None:
    """Print the [start, stop) scan ranges for leading FIELD=VALUE... (last may be LO..HI).

    One line per range: start, a tab, stop (toStringBinary; an empty stop is the table's end).
    SCHEMA may also be a Phoenix DDL file (.sql).
    """
    from keyshape.core.hbytes import to_string_binary

    if _is_ddl(schema_path):
        from keyshape.cli.phoenix import phoenix_key_ranges

        return click.get_current_context().invoke(phoenix_key_ranges, ddl_path=schema_path, values=values, table_name=None)

    schema = _schema(schema_path)
    for start, stop in schema.scan_ranges(**parse_assignments(schema, values, allow_range=True)):
        click.echo(f"{to_string_binary(start)}\t{to_string_binary(stop)}")


@click.command("lint")
@click.argument("schema_path", metavar="SCHEMA")
@json_option("Write the findings as JSON ('-' for stdout: then the JSON alone).")
def lint_command(schema_path: str, json_path: str | None = None) -> None:
    """Check a key schema's design; exit 1 when there are errors."""
    findings = _schema(schema_path).lint()
    errors = sum(f.level == "error" for f in findings)
    warnings = sum(f.level == "warning" for f in findings)
    if json_path is not None:
        from rich.console import Console

        from keyshape.report.output import write_json

        payload = {
            "schema": schema_path,
            "errors": errors,
            "warnings": warnings,
            "findings": [{"level": f.level, "code": f.code, "message": f.message, "advice": f.advice} for f in findings],
        }
        write_json(json_path, payload, Console(stderr=True))
    if json_path != "-":
        for f in findings:
            click.echo(str(f))
        click.echo(f"{schema_path}: {errors} error(s), {warnings} warning(s)")
    if errors:
        sys.exit(1)
