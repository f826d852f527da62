"""keyshape's replication sink re-keying a live table (issue 32, first increment) on a real HBase:
while a writer keeps putting and deleting rows of OLD (a sequential design), the copy
(``ops.migrate``) and the stream (the sink with ``ops.online.ReKeyer``) fill NEW (mod 16 salted);
afterwards OLD and NEW hold the same cells (decoded key, family, qualifier, timestamp, value,
every stored version), and an OLD row whose key does not decode is rejected, not written."""

from __future__ import annotations

import random
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from existing_tables import fill, record, write_schema

from keyshape.ops.migrate import migrate
from keyshape.ops.online import ReKeyer
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema
from keyshape.store.hbase import HBaseStore
from keyshape.store.hbase.sink import RunningSink
from mutation_mix import write_one

pytestmark = pytest.mark.hbase

BAD_KEY = b"zz-not-a-key"


def content(store: HBaseStore, schema: KeySchema) -> dict[tuple[Any, ...], dict[bytes, list[tuple[int, bytes]]]]:
    """Every stored version of every cell, keyed by the decoded key (undecodable rows left out)."""
    out = {}
    for key, columns in store.scan_versions(schema.table.full_name):
        if key == BAD_KEY:
            continue
        out[tuple(sorted(schema.decode(key).items()))] = {c: sorted(v) for c, v in columns.items()}
    return out


def churn(url: str, schema: KeySchema, stop: threading.Event, counts: dict[str, int]) -> None:
    """Put, update and delete rows of ``schema``'s table until ``stop``. Put timestamps are the
    clock, kept strictly increasing: two values of one cell at one timestamp would make the
    winner depend on arrival order (see the report of issue 32)."""
    rng = random.Random(32)
    table = schema.table.full_name
    last = 0
    store = HBaseStore.from_url(url)
    try:
        with store.writer(table, batch_size=25, in_flight=1) as w:
            w.put(BAD_KEY, {b"d:v": b"undecodable"})
            while not stop.is_set():
                key = schema.encode(record(rng.randrange(400)))
                last = write_one(w, key, rng, last)
                counts["ops"] += 1
                if counts["ops"] % 25 == 0:
                    time.sleep(0.01)
    finally:
        store.close()


def test_old_and_new_converge_while_a_writer_runs(hbase: Any, hbase_store: HBaseStore, tmp_path: Path) -> None:
    store = hbase_store
    _, old = write_schema(tmp_path, "ksr_old", namespace="default")
    _, new = write_schema(tmp_path, "ksr_new", prefix="mod", buckets=16, namespace="default")
    created: list[str] = []
    peer = "ksr" + uuid.uuid4().hex[:12]
    try:
        create_table_from_schema(store, old)
        created.append(old.table.full_name)
        fill(store, old, 300)
        store.set_replication_scope(old.table.full_name, ["d", "m"])
        create_table_from_schema(store, new)
        created.append(new.table.full_name)
        ready = threading.Event()  # the sink refuses batches until the copy checked NEW is empty
        rekeyer = ReKeyer(store, old, new, reject_path=tmp_path / "stream-rejects.tsv", ready=ready)
        with RunningSink(rekeyer, hbase.url, f"/keyshape-sink-{peer}") as running:
            try:
                store.add_replication_peer(peer, running.cluster_key, {old.table.full_name: []})
                stop, counts = threading.Event(), {"ops": 0}
                writer = threading.Thread(target=churn, args=(hbase.url, old, stop, counts))
                writer.start()
                try:
                    copied = migrate(
                        store, old, new, state_path=tmp_path / "state.json", reject_path=tmp_path / "copy-rejects.tsv", progress=lambda n: ready.set()
                    )
                    ready.set()
                    # the writer goes on after the copy: until it has made the ops checked below
                    # (a count, not a time: it shares the GIL with the sink and the copy)
                    deadline, target = time.monotonic() + 120, max(200, counts["ops"] + 100)  # and some after the copy
                    while counts["ops"] <= target and writer.is_alive():
                        assert time.monotonic() < deadline, f"the writer made {counts['ops']} ops in 120 s"
                        time.sleep(0.1)
                finally:
                    stop.set()
                    writer.join()
                marker = new.encode(record(1000))
                store.put(old.table.full_name, old.encode(record(1000)), {b"d:v": b"marker"}, int(time.time() * 1000) + 10_000)
                deadline = time.monotonic() + 40
                while store.get(new.table.full_name, marker).get(b"d:v") != b"marker":
                    assert time.monotonic() < deadline, f"the marker did not reach NEW within 40 s ({rekeyer.cells} cells applied)"
                    time.sleep(0.1)
            finally:
                store.remove_replication_peer(peer)
        assert counts["ops"] > 200 and rekeyer.cells > counts["ops"]
        assert copied.rows >= 300
        old_cells, new_cells = content(store, old), content(store, new)
        assert len(old_cells) > 250
        assert old_cells == new_cells
        assert rekeyer.rejected >= 1 and "zz-not-a-key" in (tmp_path / "stream-rejects.tsv").read_text()
    finally:
        for table in created:
            store.delete_table(table)
