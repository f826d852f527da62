"""keyshape's replication sink under faults, on the real HBase (issue 32): a sink PROCESS
(tests/sink_process.py: RunningSink + ops.online.ReKeyer, OLD sequential -> NEW mod 16) receives
OLD's edits while a writer keeps putting, updating and deleting rows; after each fault the referee
compares OLD and NEW cell for cell (decoded key, family, qualifier, every stored version's
timestamp and value).

* kill -9 mid-stream, restarted on the same address: HBase re-ships from its queue position;
  nothing is lost and the re-shipped duplicates change nothing.
* refused, then stopped for a while (the source queues), restarted: the source retries with a
  LINEAR backoff, ``replication.source.sleepforretries`` (1000 ms) x a multiplier that grows by
  one per failed attempt up to ``replication.source.maxretriesmultiplier`` (300)
  (HBaseInterClusterReplicationEndpoint.sleepForRetries). The refusals measure it (gaps of 1, 2,
  3, 4 s on a quiet machine; asserted as lower bounds, which a busy machine cannot break). After
  an outage of T s the multiplier m satisfies m(m-1)/2 <= T, so the next attempt comes at most m
  s after the sink is back (printed, not asserted: a measured time): ~5 s for the 12 s here,
  ~25 s for 5 minutes, ~35 s for 10 minutes, never more than 300 s (reached after 12.5 h).
  Nothing else changes with the outage's length: the source keeps the WALs its queue references,
  so minutes behave like seconds.
* NEW's regions split (three, one after the other) while the sink applies: writes to the old
  region fail over to the daughters (or the batch is refused and re-shipped); nothing is lost.
"""

from __future__ import annotations

import math
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from existing_tables import record, write_schema
from kazoo.client import KazooClient

from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema
from keyshape.store.hbase import HBaseStore
from mutation_mix import write_one

pytestmark = pytest.mark.hbase

SCRIPT = Path(__file__).resolve().parents[1] / "sink_process.py"
SLEEP_FOR_RETRIES_S = 1.0  # replication.source.sleepforretries: HBase's default, the test HBase sets none


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SinkProcess:
    """tests/sink_process.py, started and killed by pid."""

    def __init__(self, url: str, parent: str, port: int, cluster_id: uuid.UUID, old: Path, new: Path, log: Path) -> None:
        self.args = [
            sys.executable, str(SCRIPT), "--quorum", url, "--parent", parent, "--port", str(port),
            "--cluster-id", str(cluster_id), "--old", str(old), "--new", str(new), "--log", str(log),
        ]  # fmt: skip
        self.log = log
        self.proc: subprocess.Popen[str] | None = None

    def start(self, refuse_calls: int = 0) -> float:
        """Start and wait until registered; returns the time it was ready."""
        err = open(self.log.with_suffix(".err"), "a")
        self.proc = subprocess.Popen([*self.args, "--refuse-calls", str(refuse_calls)], stdout=subprocess.PIPE, stderr=err, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("ready "), f"the sink process did not start: {line!r}, see {err.name}"
        return time.time()

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, sig)
        self.proc.wait(timeout=30)

    def _lines(self) -> list[list[str]]:
        return [line.split() for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def calls(self) -> list[tuple[float, str, int]]:
        """(time, ok|refused, cells) of every call answered so far."""
        return [(float(t), outcome, int(cells)) for t, outcome, _, cells, _ in self._lines()]

    def acknowledged_through(self) -> int:
        """The newest WAL write time (ms) of an entry in a batch the sink acknowledged: every OLD
        edit written up to then is in NEW (OLD is one region, whose edits the source ships in WAL
        order, the next batch only once this one is acknowledged)."""
        return max((int(newest) for _, outcome, _, _, newest in self._lines() if outcome == "ok"), default=0)

    def wait_for(self, what: str, check: Any, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not check(self.calls()):
            assert time.monotonic() < deadline, f"{what} within {timeout:.0f} s; calls: {self.calls()[-10:]}"
            time.sleep(0.1)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.signal(signal.SIGTERM)


@dataclass
class Online:
    store: HBaseStore
    url: str
    old: KeySchema
    new: KeySchema
    sink: SinkProcess
    peer: str
    parent: str
    writes: dict[str, int] = field(default_factory=lambda: {"ops": 0})
    stop: threading.Event = field(default_factory=threading.Event)
    writer: threading.Thread | None = None

    def start_writer(self) -> None:
        self.writer = threading.Thread(target=churn, args=(self.url, self.old, self.stop, self.writes), daemon=True)
        self.writer.start()

    def stop_writer(self) -> None:
        self.stop.set()
        if self.writer is not None:
            self.writer.join(timeout=60)

    def converge(self, timeout: float = 90) -> None:
        """Once the sink has acknowledged the batch carrying a marker put after the writer stopped,
        OLD and NEW hold the same cells.

        The marker's mere arrival in NEW proves nothing about the rest of its batch: the sink
        applies a batch in rounds (a row's k-th mutation in round k, so one row's mutations keep
        their order) and one Multi per region server per round, so the marker (a row's only
        mutation: the first round) is readable while a row's later mutations of the same batch are still
        on their way, and a batch refused halfway is shipped again whole. Only the acknowledgment
        says the whole batch is in NEW: the sink gives it once every mutation was stored."""
        self.stop_writer()
        assert self.writer is None or not self.writer.is_alive(), "the writer did not stop within 60 s"
        time.sleep(0.002)  # the writer's last WAL write time (ms) < written_after <= the marker's
        written_after = int(time.time() * 1000)
        marker = self.new.encode(record(1000))
        self.store.put(self.old.table.full_name, self.old.encode(record(1000)), {b"d:v": b"marker"}, int(time.time() * 1000) + 10_000)
        deadline = time.monotonic() + timeout
        while self.sink.acknowledged_through() < written_after:
            assert time.monotonic() < deadline, f"the sink did not acknowledge the marker within {timeout:.0f} s; calls: {self.sink.calls()[-10:]}"
            time.sleep(0.2)
        assert self.store.get(self.new.table.full_name, marker).get(b"d:v") == b"marker", "the sink acknowledged the marker's batch without it"
        old_cells, new_cells = content(self.store, self.old), content(self.store, self.new)
        assert len(old_cells) > 100, f"the writer wrote too little to prove anything ({len(old_cells)} rows)"
        assert old_cells == new_cells, f"{len(set(old_cells) ^ set(new_cells))} row(s) differ"


def content(store: HBaseStore, schema: KeySchema) -> dict[tuple[Any, ...], dict[bytes, list[tuple[int, bytes]]]]:
    """The referee's view: every stored version of every cell, keyed by the decoded key."""
    return {
        tuple(sorted(schema.decode(key).items())): {c: sorted(v) for c, v in columns.items()}
        for key, columns in store.scan_versions(schema.table.full_name)
    }


def churn(url: str, schema: KeySchema, stop: threading.Event, counts: dict[str, int]) -> None:
    """Put, update and delete rows of ``schema``'s table until ``stop`` (put timestamps strictly
    increasing: two values of one cell at one timestamp converge only in arrival order)."""
    rng = random.Random(32)
    table = schema.table.full_name
    last = 0
    store = HBaseStore.from_url(url)
    try:
        with store.writer(table, batch_size=50, in_flight=1) as w:
            while not stop.is_set():
                key = schema.encode(record(rng.randrange(400)))
                last = write_one(w, key, rng, last)
                counts["ops"] += 1
                if counts["ops"] % 50 == 0:
                    w.flush()
                    time.sleep(0.02)
    finally:
        store.close()


@pytest.fixture
def online(hbase: Any, hbase_store: HBaseStore, tmp_path: Path) -> Iterator[Online]:
    store = hbase_store
    old_path, old = write_schema(tmp_path, "ksr_fold", namespace="default")
    new_path, new = write_schema(tmp_path, "ksr_fnew", prefix="mod", buckets=16, namespace="default")
    peer = "ksr" + uuid.uuid4().hex[:12]
    parent = f"/keyshape-sink-{peer}"
    sink = SinkProcess(hbase.url, parent, free_port(), uuid.uuid4(), old_path, new_path, tmp_path / "calls.log")
    created: list[str] = []
    state = Online(store, hbase.url, old, new, sink, peer, parent)
    try:
        create_table_from_schema(store, old)
        created.append(old.table.full_name)
        store.set_replication_scope(old.table.full_name, ["d", "m"])
        create_table_from_schema(store, new)
        created.append(new.table.full_name)
        yield state
    finally:
        state.stop_writer()
        try:
            if peer in store.replication_peers():
                store.remove_replication_peer(peer)
        finally:
            sink.close()
            zk = KazooClient(hosts=hbase.url)
            zk.start(timeout=10)
            try:
                zk.delete(parent, recursive=True)
            except Exception:
                pass  # already gone (the sink unregistered)
            finally:
                zk.stop()
                zk.close()
            for table in created:
                store.delete_table(table)


def add_peer(online: Online) -> None:
    online.store.add_replication_peer(online.peer, f"{online.url}:{online.parent}", {online.old.table.full_name: []})


def oks(calls: list[tuple[float, str, int]], after: float = 0.0) -> int:
    return sum(1 for t, outcome, _ in calls if outcome == "ok" and t >= after)


def test_sink_killed_with_kill_9_mid_stream_and_restarted_loses_nothing(online: Online) -> None:
    sink = online.sink
    sink.start()
    add_peer(online)
    online.start_writer()
    sink.wait_for("two batches applied before the kill", lambda calls: oks(calls) >= 2)
    ops_before = online.writes["ops"]
    sink.signal(signal.SIGKILL)
    assert sink.proc is not None and sink.proc.returncode == -signal.SIGKILL
    time.sleep(1.0)  # the writer keeps writing while nothing listens
    restarted = sink.start()
    sink.wait_for("a batch applied after the restart", lambda calls: oks(calls, restarted) >= 1)
    time.sleep(1.0)
    online.converge()
    assert online.writes["ops"] > ops_before + 20, "the writer kept writing across the kill"
    assert oks(sink.calls(), restarted) >= 1


def test_sink_refused_then_stopped_for_12_s_backs_off_and_catches_up(online: Online) -> None:
    sink = online.sink
    refuse_calls = 5  # refused at 0, 1, 3, 6 and 10 s (the back-off), taken at 15 s
    sink.start(refuse_calls=refuse_calls)
    add_peer(online)
    online.start_writer()
    sink.wait_for("a batch applied once the refusals end", lambda calls: oks(calls) >= 1, timeout=90)
    refusals = [t for t, outcome, _ in sink.calls() if outcome == "refused"]
    gaps = [b - a for a, b in zip(refusals, refusals[1:])]
    # one batch in flight at a time (one sink): each gap is sleepforretries x (1, 2, 3, ...)
    assert len(refusals) == refuse_calls, f"refusals at {refusals}"
    print(f"\nrefusal gaps (s): {', '.join(f'{g:.2f}' for g in gaps)}")
    # A lower bound only: a sleep never ends early, while a busy machine (a CPU hog beside the
    # suite) delays the retry after it by any amount (issue 43: no upper bound on a measured time).
    # Each gap at least its multiple of sleepforretries shows the back-off growing as the note says.
    for multiplier, gap in enumerate(gaps[:4], start=1):
        assert gap >= multiplier * SLEEP_FOR_RETRIES_S - 0.3, f"gap {multiplier} was {gap:.2f} s; gaps {gaps}"

    sink.signal(signal.SIGTERM)  # stopped cleanly: unregistered, nothing listens; the source queues
    down_at = time.time()
    outage = 12.0
    time.sleep(outage)
    back = sink.start()
    sink.wait_for("a batch applied after the outage", lambda calls: oks(calls, back) >= 1, timeout=60)
    first_ok = min(t for t, outcome, _ in sink.calls() if outcome == "ok" and t >= back)
    down = back - down_at
    # after an outage of `down` s the multiplier m has m(m-1)/2 <= down: the next try is <= m s away
    bound = SLEEP_FOR_RETRIES_S * (0.5 + math.sqrt(0.25 + 2 * down / SLEEP_FOR_RETRIES_S))
    # printed, not asserted: how soon after the restart is a measured time (the wait above gives
    # it 60 s); the source's back-off keeps it near the bound on a quiet machine
    print(f"outage {down:.1f} s: first batch applied {first_ok - back:.2f} s after the restart (backoff bound {bound:.1f} s)")
    online.converge()


def test_new_split_while_the_sink_applies_loses_nothing(online: Online) -> None:
    """Three regions of NEW split one after the other, each while the writer writes and the sink
    applies (a batch the sink applies after each split, its region cache stale at first)."""
    store, sink, new = online.store, online.sink, online.new
    sink.start()
    add_peer(online)
    online.start_writer()
    sink.wait_for("a batch applied before the split", lambda calls: oks(calls) >= 1)
    split_at = time.time()
    keys = sorted(new.encode(record(i)) for i in range(400))
    for bucket in sorted({k[:2] for k in keys})[:3]:
        # split the bucket's region at its middle key of the writer's rows
        in_bucket = [k for k in keys if k[:2] == bucket]
        before = store.regions(new.table.full_name)
        store.split_region(new.table.full_name, in_bucket[len(in_bucket) // 2])
        after = store.regions(new.table.full_name)
        assert len(after) == len(before) + 1, f"{len(before)} regions before the split, {len(after)} after"
        split_done = time.time()
        sink.wait_for("a batch applied after the split", lambda calls: oks(calls, split_done) >= 1)
    online.converge()
    assert oks(sink.calls(), split_at) >= 3
