"""The batch writer with several batches in flight, on a real HBase: per-row results, exact
failed rows and per-row order hold when batches are sent in the background."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hbase_fixture import scan_after_restart

from keyshape.errors import WriteFailed
from keyshape.schema import FamilySpec, TableSpec
from keyshape.store import ensure_table
from keyshape.store.hbase import HBaseStore

pytestmark = pytest.mark.hbase


@pytest.fixture
def store(hbase_store: HBaseStore) -> HBaseStore:
    return hbase_store


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


def test_a_with_block_reports_the_rows_of_a_put_error_and_of_the_final_flush(store: HBaseStore, table: str) -> None:
    rows = [b"r%03d" % i for i in range(400)]
    bad = {rows[i] for i in range(3, 400, 50)}
    put: list[bytes] = []
    with pytest.raises(WriteFailed) as info:
        with store.writer(table, batch_size=7, in_flight=2) as writer:
            for row in rows:
                put.append(row)
                writer.put(row, {(b"nope:v" if row in bad else b"cf:v"): row})
    assert set(info.value.rows) == set(put) & bad
    assert {r for r, _ in store.scan(table)} == set(put) - bad


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


def test_kill_9_with_batches_in_flight_loses_no_acknowledged_row(hbase: Any) -> None:
    """HBase SIGKILLed while a long-lived writer has several batches in flight, then restarted:
    every row a flush acknowledged (its chunk flushed, the row not named by any WriteFailed) is
    there after the restart, and writing resumes on the same writer."""
    instance = hbase.require_standalone()
    # few, short retries so the outage shows up as reported failures instead of a long wait
    store = HBaseStore.from_url(hbase.url, retries=3, backoff=0.1, max_backoff=0.5)
    spec = TableSpec(f"ks_pipekill_{uuid.uuid4().hex[:10]}", families=[FamilySpec("cf")])
    ensure_table(store, spec, [b"r%06d" % i for i in range(2_000, 16_000, 2_000)])
    rows = [b"r%06d" % ((i * 7_919) % 16_000) for i in range(16_000)]  # spread over the regions
    acknowledged: list[bytes] = []
    failed: set[bytes] = set()
    restart = threading.Thread(target=lambda: (time.sleep(3), instance.start(timeout=240)))
    writer = store.writer(spec.full_name, batch_size=150, in_flight=3)
    for lo in range(0, len(rows), 1_000):
        chunk = rows[lo : lo + 1_000]
        if lo == 8_000:
            restart.join()  # the rest is written to the restarted HBase, once its regions are back
            scan_after_restart(hbase.url, spec.full_name)  # (the writer's few, short retries would not wait for them)
        try:
            for n, row in enumerate(chunk):
                if lo == 5_000 and n == 500:
                    instance.kill()  # batches of this chunk are being sent right now
                    restart.start()
                try:
                    writer.put(row, {b"cf:v": row})
                except WriteFailed as exc:
                    failed.update(exc.rows)
            writer.flush()
        except WriteFailed as exc:
            failed.update(exc.rows)
        acknowledged += [r for r in chunk if r not in failed]
    store.close()
    assert failed, "the outage should have failed some rows"
    assert set(rows[-1_000:]) <= set(acknowledged), "writing did not resume after the restart"
    stored = scan_after_restart(hbase.url, spec.full_name)  # regions re-assigned after the restart
    lost = [r for r in acknowledged if stored.get(r) != {b"cf:v": r}]
    assert not lost, f"{len(lost)} acknowledged row(s) lost after kill -9 and restart"
