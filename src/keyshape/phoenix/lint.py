"""Lints for Phoenix tables: what Phoenix will do with a DDL that its users do not expect, and what
to write instead. Each finding is grounded in Phoenix 5.2.1's behaviour, pinned by the golden and
live tests (tests/test_phoenix_*.py)."""

from __future__ import annotations

import re

from keyshape.phoenix.ddl import PhoenixTable
from keyshape.schema.lint import Finding

__all__ = ["lint_phoenix"]

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
    for column in key.columns:
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
