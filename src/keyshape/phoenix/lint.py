"""Lints for Phoenix tables: what Phoenix will do with a DDL that its users do not expect, and what
to write instead. Each finding is grounded in Phoenix 5.2.1's behaviour, pinned by the golden and
live tests (tests/test_phoenix_*.py)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from keyshape.phoenix.ddl import PhoenixTable
from keyshape.phoenix.key import PhoenixKey
from keyshape.phoenix.types import PhoenixTypeError, decimal_value, fraction_digits
from keyshape.schema.lint import Finding

__all__ = ["lint_phoenix", "lint_values"]

_MONOTONIC_TYPES = ("DATE", "TIME", "TIMESTAMP", "UNSIGNED_DATE", "UNSIGNED_TIME", "UNSIGNED_TIMESTAMP")
_MONOTONIC_NAME = re.compile(r"(^|_)(ID|SEQ|SEQUENCE|TS|TIME|TIMESTAMP|CREATED|DATE|EVENT_TIME)($|_)", re.I)
_MANY_BUCKETS = 64


def lint_phoenix(table: PhoenixTable) -> list[Finding]:
    """Findings for a Phoenix table from its DDL (see the module docstring); errors first."""
    out: list[Finding] = []
    key = table.key
    first = key.columns[1] if key.multi_tenant and len(key.columns) > 1 else key.columns[0]
    if table.split_on and key.salt_buckets:
        out.append(
            Finding(
                "error",
                "phoenix-split-on-salted",
                f"SPLIT ON together with SALT_BUCKETS={key.salt_buckets}: Phoenix uses the split points raw, before "
                "the salt byte, so every bucket's rows land in the first regions (the table is effectively one region)",
                "drop SPLIT ON and let SALT_BUCKETS pre-split, or give split points that start with the salt byte "
                "(keyshape phoenix ddl prints them as X'..')",
            )
        )
    for literal in table.split_literals:
        if re.fullmatch(r"\d+", literal) and int(literal) < 2**31 and first.type.name in ("BIGINT", "UNSIGNED_LONG") and not key.salt_buckets:
            out.append(
                Finding(
                    "error",
                    "phoenix-split-on-integer-literal",
                    f"SPLIT ON ({literal}) on {first.type.name} column {first.name}: Phoenix encodes {literal} as an "
                    f"INTEGER and pads it, so the table splits at {int(literal)}*2^32 = {int(literal) << 32}, not at {literal}",
                    f"write CAST({literal} AS BIGINT) or X'{first.type.encode(int(literal)).hex().upper()}'",
                )
            )
            break
    if key.connection_dependent:
        tenant = key.columns[0]
        out.append(
            Finding(
                "warning",
                "phoenix-desc-tenant-column",
                f"{tenant.name} {tenant.type.sql} DESC is the tenant column of MULTI_TENANT {table.name}: Phoenix gives one row "
                "two keys by the connection that writes it — a tenant connection (TenantId=) writes and scans the tenant "
                "id's ascending bytes, the global connection the inverted ones — so the same tenant and PK values written "
                "through both are two rows; a tenant connection's queries find only the rows written through tenant "
                f"connections, and the global connection's WHERE {tenant.name} = ... only those it wrote itself",
                f"declare {tenant.name} ASC (one layout), or write and read every row through one kind of connection; "
                "keyshape phoenix key encode/decode/ranges --tenant-connection give the tenant connection's keys",
            )
        )
    for column in key.columns:
        if not column.desc and column.type.name == "DECIMAL" and column.type.scale is not None and column.data_type is None:
            scale = column.type.scale
            out.append(
                Finding(
                    "warning",
                    "phoenix-decimal-scale-cut",
                    f"{column.name} {column.type.sql}: Phoenix cuts a value with more than {scale} fraction digits to "
                    f"{scale} without an error (UPSERT of {_example(scale)} stores {_example(scale, cut=True)}, as does "
                    f"{_example(scale, up=True)}): values that differ only after digit {scale} get one row key, and the "
                    "later UPSERT overwrites the earlier row",
                    f"round values to {scale} fraction digits before upserting, or give {column.name} a larger scale",
                )
            )
        if column.desc and column.type.name == "DECIMAL" and column.type.scale is not None:
            out.append(
                Finding(
                    "warning",
                    "phoenix-desc-decimal-scale",
                    f"{column.name} DECIMAL({column.type.length},{column.type.scale}) DESC: a value with more than "
                    f"{column.type.scale} fraction digits is written in ASC order and Phoenix reads back another number "
                    "(12.345 into DECIMAL(10,2) DESC reads as -116.37)",
                    f"round values to {column.type.scale} digits before upserting, or make the column ASC",
                )
            )
        if column.desc and column.type.name == "BOOLEAN":
            out.append(
                Finding(
                    "warning",
                    "phoenix-desc-boolean",
                    f"{column.name} BOOLEAN DESC in the primary key: Phoenix writes 0xFE/0xFF but reads both back as false",
                    "make the column ASC (or use TINYINT)",
                )
            )
    for i, column in enumerate(key.columns):
        last = i == len(key.columns) - 1
        if column.type.name == "VARCHAR":
            out.append(
                Finding(
                    "info",
                    "phoenix-varchar-empty-is-null",
                    f"{column.name} VARCHAR in the primary key: '' is stored as NULL"
                    + ("" if last else "; a value containing the character U+0000 breaks decoding of the columns after it"),
                    "do not rely on '' differing from NULL",
                )
            )
    if not key.salt_buckets and (
        first.type.name in _MONOTONIC_TYPES
        or (first.type.name in ("BIGINT", "INTEGER", "UNSIGNED_LONG", "UNSIGNED_INT") and _MONOTONIC_NAME.search(first.name))
    ):
        out.append(
            Finding(
                "warning",
                "phoenix-monotonic-leading-column",
                f"the leading primary-key column {first.name} ({first.type.sql}) looks monotonic and the table has no "
                "SALT_BUCKETS: every new row goes to the last region (a hot spot)",
                "add SALT_BUCKETS (2-4x the region servers) or lead with a well-spread column",
            )
        )
    if key.salt_buckets and key.salt_buckets >= _MANY_BUCKETS:
        out.append(
            Finding(
                "info",
                "phoenix-many-buckets",
                f"SALT_BUCKETS={key.salt_buckets}: every range scan opens {key.salt_buckets} scanners and merges them",
                "for range-scan workloads keep SALT_BUCKETS near 2-4x the region servers",
            )
        )
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda f: order[f.level])


def _example(scale: int, cut: bool = False, up: bool = False) -> str:
    """1.239 / 1.23 / 1.235 for scale 2: a value with one digit too many, as Phoenix stores it."""
    digits = "23456789"[:scale] if scale else ""
    if cut:
        return f"1.{digits}" if scale else "1"
    return f"1.{digits}{5 if up else 9}"


def lint_values(key: PhoenixKey, record: Mapping[str, Any]) -> list[Finding]:
    """Findings for one record's PK values: a DECIMAL(p,s) value that Phoenix cuts to its scale
    (stored as another number, silently; Phoenix 5.2.1 truncates toward zero, it does not round)."""
    out = []
    for column in key.columns:
        value = record.get(column.name)
        t = column.type
        if value is None or t.name != "DECIMAL" or t.scale is None or column.data_type is not None or fraction_digits(value) <= t.scale:
            continue
        try:
            stored = decimal_value(t, value)
        except PhoenixTypeError:
            continue  # (the encoder gives the value's own error)
        out.append(
            Finding(
                "warning",
                "phoenix-decimal-scale-cut",
                f"{column.name}={value} is stored as {stored}: Phoenix cuts {t.sql} values to {t.scale} fraction digits without an error",
                f"round it to {t.scale} fraction digits yourself, or give {column.name} a larger scale",
            )
        )
    return out
