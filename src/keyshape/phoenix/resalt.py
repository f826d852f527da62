"""Re-salt a Phoenix table N -> M buckets (Phoenix itself refuses: SALT_BUCKETS only on create,
error 1024).

Everything after the salt byte stays as it is, so the new key is the new salt byte plus the old
rest, and every cell is copied with its family, qualifier and value unchanged. The target table
must be created by Phoenix first from :func:`target_ddl` (same columns in the same order, so the
encoded column qualifiers match and Phoenix reads the copied cells as its own). Verification counts
rows and takes an order-independent checksum over (key after the salt, column, value) on both sides.
Cells are written at the time of the copy (the scan reads the newest version of each cell).

Online (issue 32, ``phoenix resalt --online``): :func:`online_schemas` gives the source and the
target as key schemas for :func:`keyshape.ops.migrate_online.migrate_online`, which then copies
and streams every cell with its own timestamp and type. Those schemas decode a key to Phoenix's
own values (a TIMESTAMP keeps its nanoseconds; the general Phoenix key schema gives milliseconds,
for workloads and time axes) and refuse a key that does not encode back to the same bytes, so
``new.encode(old.decode(key))`` is exactly the new salt byte plus the old rest, or the row is
rejected, never moved to another key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from keyshape.core.hashing import phoenix_salt
from keyshape.core.hbytes import to_string_binary
from keyshape.errors import KeyshapeError
from keyshape.phoenix.ddl import PhoenixTable, create_table_sql
from keyshape.phoenix.key import PhoenixKeyError
from keyshape.phoenix.schema import PhoenixKeySchema
from keyshape.store.base import Store

__all__ = [
    "ResaltReport",
    "ResaltSchema",
    "TableDigest",
    "check_target",
    "digest",
    "online_schemas",
    "resalt",
    "split_note",
    "target_ddl",
    "target_split_points",
]


@dataclass(frozen=True)
class TableDigest:
    """Row count and an order-independent checksum of a Phoenix table's rows with the salt byte
    taken off (so the same rows under different salts digest equal)."""

    rows: int
    cells: int
    checksum: str


@dataclass(frozen=True)
class ResaltReport:
    copied: int
    source: TableDigest
    target: TableDigest

    @property
    def verified(self) -> bool:
        return self.source == self.target


def target_ddl(source: PhoenixTable, target_name: str, buckets: int) -> str:
    """The ``CREATE TABLE`` Phoenix must run for the re-salted copy (the source's columns, PK and
    options, with ``SALT_BUCKETS=buckets``; an unsalted source's SPLIT ON translated by
    :func:`target_split_points`)."""
    if not 1 <= buckets <= 256:
        raise KeyshapeError(f"SALT_BUCKETS must be 1..256, got {buckets}")
    target = replace(source, name=target_name, split_on=[], split_literals=[])
    return create_table_sql(target, target_split_points(source, buckets) or None, salt_buckets=buckets)


def target_split_points(source: PhoenixTable, buckets: int) -> list[bytes]:
    """The re-salted table's split points for an unsalted source with ``SPLIT ON``: every region
    boundary of the source after each salt byte, with the bucket boundaries themselves (Phoenix
    uses SPLIT ON raw on a salted table and then makes no bucket regions of its own), so every
    bucket is split where the source was and no region spans two buckets. Empty (SALT_BUCKETS
    alone pre-splits) for a source without SPLIT ON or already salted (see :func:`split_note`)."""
    if not source.split_on or source.key.salt_buckets:
        return []
    salted = replace(source.key, salt_buckets=buckets)
    points = set(salted.salt_boundaries())
    for boundary in source.region_boundaries():
        points.update(bytes([bucket]) + boundary for bucket in range(buckets))
    return sorted(points)


def split_note(source: PhoenixTable, buckets: int) -> str | None:
    """What became of the source's ``SPLIT ON`` in :func:`target_ddl`, in one line (None: it had none)."""
    if not source.split_on:
        return None
    if source.key.salt_buckets:
        return (
            f"{source.name}'s SPLIT ON is dropped: on a salted table Phoenix used its points raw, before the salt byte "
            f"(lint phoenix-split-on-salted); SALT_BUCKETS={buckets} pre-splits the copy by bucket"
        )
    n = len(source.split_on)
    return (
        f"{source.name}'s SPLIT ON ({n} point{'s' * (n != 1)}) is kept in every bucket: each point after each of the "
        f"{buckets} salt bytes, with the bucket boundaries ({buckets * (n + 1)} regions)"
    )


def _rest(table: PhoenixTable, row: bytes) -> bytes:
    return row[1:] if table.key.salt_buckets else row


def digest(store: Store, table: PhoenixTable, name: str | None = None) -> TableDigest:
    """:class:`TableDigest` of the HBase table holding ``table`` (``name`` overrides its name)."""
    total = 0
    rows = cells = 0
    for row, values in store.scan(name or table.hbase_table):
        rest = _rest(table, row)
        rows += 1
        for column, value in values.items():
            cells += 1
            h = hashlib.blake2b(digest_size=16)
            for part in (rest, column, value):
                h.update(len(part).to_bytes(4, "big"))
                h.update(part)
            total = (total + int.from_bytes(h.digest(), "big")) % (1 << 128)
    return TableDigest(rows, cells, f"{total:032x}")


def check_target(store: Store, source: PhoenixTable, target: PhoenixTable) -> None:
    """KeyshapeError unless ``target`` is a salted table with ``source``'s primary key that
    Phoenix has created already (a table keyshape made would be unknown to Phoenix)."""
    if source.key.columns != target.key.columns or source.key.multi_tenant != target.key.multi_tenant:
        raise KeyshapeError(f"{target.name} does not have {source.name}'s primary key; create it from keyshape phoenix resalt's CREATE TABLE")
    if not target.key.salt_buckets:
        raise KeyshapeError(f"{target.name} is not salted; give it SALT_BUCKETS")
    if not store.table_exists(target.hbase_table):
        raise KeyshapeError(f"table {target.hbase_table!r} does not exist; run the CREATE TABLE printed by keyshape phoenix resalt in Phoenix first")


class ResaltSchema(PhoenixKeySchema):
    """A Phoenix table as the key schema of a re-salt: keys decode to Phoenix's own values, and
    only when they encode back to the same bytes after the salt (module docstring)."""

    exact_decode = True  # decode below keeps Phoenix's own values and refuses a key that does not re-encode

    def _install_trampolines(self) -> None:
        # the compiled encoder shadows encode as for any key schema; decode stays the method below
        super()._install_trampolines()
        del self.decode

    def decode(self, key: bytes, verify: bool = True, tenant_connection: bool = False) -> dict[str, Any]:
        key = bytes(key)
        layout = self.phoenix.key.layout(tenant_connection)
        try:
            values: dict[str, Any] = layout.decode(key, verify)
        except PhoenixKeyError:
            if tenant_connection or not self.phoenix.key.connection_dependent:
                raise
            self.phoenix.key.through_tenant_connection().decode(key, verify)  # (its own error if not that either)
            raise PhoenixKeyError(
                f"'{to_string_binary(key)}' was written through a tenant connection (the DESC tenant column's "
                "ascending bytes): re-salting such rows online is not supported yet by keyshape; "
                "phoenix resalt --apply (offline) copies them as they are"
            ) from None
        salted = 1 if self.phoenix.key.salt_buckets else 0
        if layout.encode(values)[salted:] != key[salted:]:
            # e.g. a DESC DECIMAL written ASC: it decodes as Phoenix reads it, which re-encodes otherwise
            raise PhoenixKeyError(f"'{to_string_binary(key)}' does not encode back to the same bytes after the salt; it cannot be re-salted")
        return values


def online_schemas(store: Store, source: PhoenixTable, target: PhoenixTable, source_name: str) -> tuple[ResaltSchema, ResaltSchema]:
    """``(old, new)`` for :func:`~keyshape.ops.migrate_online.migrate_online`: ``source`` and
    ``target`` (checked by :func:`check_target`) as :class:`ResaltSchema`. ``source_name`` names
    the source's schema (its DDL file) in messages and the copy's checkpoint."""
    check_target(store, source, target)
    return (
        ResaltSchema(source, source=source_name),
        ResaltSchema(target, source=f"SALT_BUCKETS={target.key.salt_buckets}"),
    )


def resalt(
    store: Store, source: PhoenixTable, target: PhoenixTable, batch_size: int = 1000, progress: Callable[[int], None] | None = None
) -> ResaltReport:
    """Copy every row of ``source`` into ``target`` (an existing table Phoenix created from
    :func:`target_ddl`) under the target's salt, then verify both sides. KeyshapeError if the two
    keys differ in anything but the salt, or the target is missing."""
    check_target(store, source, target)
    buckets = target.key.salt_buckets
    assert buckets, "check_target refuses an unsalted target"
    copied = 0
    with store.writer(target.hbase_table, batch_size=batch_size) as writer:
        for row, values in store.scan(source.hbase_table):
            rest = _rest(source, row)
            writer.put(bytes([phoenix_salt(rest, buckets)]) + rest, values)
            copied += 1
            if progress is not None and copied % batch_size == 0:
                progress(copied)
    if progress is not None:
        progress(copied)
    return ResaltReport(copied, digest(store, source), digest(store, target))
