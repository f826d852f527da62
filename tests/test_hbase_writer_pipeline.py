"""The batch writer with several batches in flight, on a real HBase: per-row results, exact
failed rows and per-row order hold when batches are sent in the background."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from keyshape.errors import WriteFailed
from keyshape.schema import FamilySpec, TableSpec
from keyshape.store import ensure_table
from keyshape.store.hbase import HBaseStore

pytestmark = pytest.mark.hbase


@pytest.fixture
def store(hbase: Any) -> Iterator[HBaseStore]:
    opened = HBaseStore.from_url(hbase.url)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def table(store: HBaseStore) -> Iterator[str]:
    spec = TableSpec(f"ks_pipe_{uuid.uuid4().hex[:10]}", families=[FamilySpec("cf")])
    ensure_table(store, spec, [b"r100", b"r200", b"r300"])
    yield spec.full_name
    store.delete_table(spec.full_name)


def test_background_failures_name_exactly_the_rows_not_written(store: HBaseStore, table: str) -> None:
    rows = [b"r%03d" % i for i in range(400)]
    bad = {rows[i] for i in (3, 57, 58, 211, 399)}
    surfaced: list[bytes] = []
    try:
        with store.writer(table, batch_size=7, in_flight=3) as writer:
            for row in rows:
                try:
                    writer.put(row, {(b"nope:v" if row in bad else b"cf:v"): row})
                except WriteFailed as exc:  # a background batch's failure, raised by a later put
                    surfaced += exc.rows
    except WriteFailed as exc:  # the rest, from the flush on exit
        surfaced += exc.rows
    assert sorted(surfaced) == sorted(bad)  # each failed row reported exactly once
    assert [r for r, _ in store.scan(table)] == [r for r in rows if r not in bad]


def test_a_rows_mutations_apply_in_order_across_batches_in_flight(store: HBaseStore, table: str) -> None:
    rows = [b"r%03d" % i for i in range(0, 400, 37)]
    with store.writer(table, batch_size=3, in_flight=4) as writer:
        for version in range(30):
            for row in rows:
                writer.put(row, {b"cf:v": b"%d" % version})
            if version % 7 == 3:
                writer.delete(rows[version % len(rows)])
    got = dict(store.scan(table))
    assert got == {row: {b"cf:v": b"29"} for row in rows}
