"""Replication throughput: HBase's own inter-cluster replication to a real peer HBase beside
keyshape's replication sink (re-keying into a NEW table), fed by the same source table in one run.

Source: the HBase named by --hbase, else a standalone one started here in a claimed run folder
(tools/hbase/run/bench-replsource; prefer this: see source_hbase). Peer: a second standalone
HBase started here (tools/hbase/standalone.py start_scratch, run folder tools/hbase/run/bench-replpeer
claimed with its lock), holding a table of the source table's name; its cluster key is added as
replication peer A of the source. keyshape's sink (ops.online.ReKeyer: decode by the sequential
OLD design, encode by the mod 16 NEW design, pre-split into 16 regions, NEW on the source cluster)
is peer B of the same table. A writer PROCESS puts rows into OLD at --rate rows/s for --seconds
(one 12-digit id per row, one 100-byte cell), and every 100 ms updates a clock row (its value is
the wall time in ms).

Printed, side by side:
  * edits/s: rows / (time from the writer's first put to the writer's last edit visible on the
    target); the clock row is written last in the same region, and both HBase and the sink apply
    one region's edits in order, so its final value being visible means every row is;
  * lag: sampled every 250 ms while the writer runs: now - the clock value visible on the target
    (the age of the newest applied edit, to the clock's 100 ms resolution), p50 / p95 / max;
  * the rate the writer actually reached (a Python writer on a 2-core machine shared with two
    HBase JVMs and the sink).
Rows on both targets are counted at the end (must equal the rows written).

Run: .venv/bin/python benchmarks/bench_replication.py [--rate 20000] [--seconds 30] [--hbase HOST:PORT] [--quick]
(without --hbase and with $KEYSHAPE_HBASE_URL unset: two HBase JVMs of 1 GB each, ~1 minute to start)
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, parser, print_table, write_json  # noqa: E402
from _hbase import add_hbase_arg, cluster_facts, drop_quietly, scratch_name, standalone  # noqa: E402

from keyshape.ops.online import ReKeyer  # noqa: E402
from keyshape.schema import FamilySpec, KeySchema, TableSpec  # noqa: E402
from keyshape.store import create_table_from_schema  # noqa: E402
from keyshape.store.hbase import HBaseStore  # noqa: E402
from keyshape.store.hbase.sink import RunningSink  # noqa: E402

CLOCK_ID = 999_999_999_999  # the clock row's id: after every data row, in OLD's one region
VALUE = b"x" * 100


def design(name: str, buckets: int | None) -> KeySchema:
    d: dict[str, Any] = {
        "table": {"name": name, "namespace": "default", "families": [{"name": "d"}]},
        "key": {"separator": "_", "fields": [{"name": "event_id", "type": "int64", "encoding": "text", "width": 12}]},
        "workload": {"rows": 1000, "fields": {"event_id": {"generator": "sequential", "start": 1}}},
    }
    if buckets:
        d["key"]["prefix"] = {"strategy": "mod", "buckets": buckets}
        d["key"]["hash_fields"] = ["event_id"]
        d["splits"] = {"algorithm": "prefix", "regions": buckets}
    return KeySchema.from_dict(d, source=f"bench_replication ({name})")


def write_steadily(url: str, table: str, rate: int, seconds: float, out: Any) -> None:
    """The writer process: ``rate`` rows/s (0 = as fast as it can) for ``seconds``, a clock row
    update every 100 ms and once more at the end; sends (rows, first put wall s, elapsed s, final
    clock value) to ``out``."""
    store = HBaseStore.from_url(url)
    clock = b"%012d" % CLOCK_ID
    n = 0
    last_clock = 0.0
    try:
        with store.writer(table, batch_size=1000, in_flight=2) as w:
            first_wall = time.time()
            t0 = time.monotonic()
            while True:
                now = time.monotonic() - t0
                if now >= seconds:
                    break
                target = int(now * rate) + 200 if rate else n + 1000
                while n < target:
                    w.put(b"%012d" % n, {b"d:v": VALUE})
                    n += 1
                if now - last_clock >= 0.1:
                    w.put(clock, {b"d:v": b"%d" % int(time.time() * 1000)})
                    w.flush()  # the clock's value is the time it left, not when a buffer filled
                    last_clock = now
                if rate:
                    time.sleep(0.005)
            final = b"%d" % int(time.time() * 1000)
            w.put(clock, {b"d:v": final})
        elapsed = time.monotonic() - t0
    finally:
        store.close()
    out.send((n, first_wall, elapsed, final))
    out.close()


class Side:
    """One target: where to read the clock row, and what was seen of it."""

    def __init__(self, name: str, store: HBaseStore, table: str, clock_key: bytes) -> None:
        self.name, self.store, self.table, self.clock_key = name, store, table, clock_key
        self.lags_ms: list[int] = []
        self.visible_at: float | None = None  # wall time the final clock value was first seen

    def clock(self) -> bytes | None:
        return self.store.get(self.table, self.clock_key, [b"d:v"]).get(b"d:v")


def sample(sides: list[Side], stop: threading.Event) -> None:
    while not stop.is_set():
        for side in sides:
            value = side.clock()
            if value is not None:
                side.lags_ms.append(int(time.time() * 1000) - int(value))
        stop.wait(0.25)


def count(store: HBaseStore, table: str) -> int:
    return sum(1 for _ in store.scan_keys(table, batch_size=5000))


def pct(values: list[int], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


@contextmanager
def source_hbase(url: str | None) -> Iterator[tuple[str, bool]]:
    """The source HBase: ``url``, else a standalone one started in a run folder this run claims
    (tools/hbase/run/bench-replsource[-N]) and stopped at the end. Better than the shared
    developer HBase: 20,000 rows/s plus two replication peers filled a 1 GB heap there (G1 old
    generation pauses of 1-4 s, its ZooKeeper session expired and it aborted)."""
    if url:
        yield url.removeprefix("hbase://"), False
        return
    run_dir, lock = standalone.claim_run_dir(ROOT / "tools" / "hbase" / "run" / "bench-replsource")
    print(f"starting the source HBase in {run_dir} ...", flush=True)
    instance = standalone.start_scratch(run_dir)
    try:
        yield instance.url, True
    finally:
        instance.stop()
        lock.close()


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--rate", type=int, default=20_000, help="rows/s the writer aims at (0 = as fast as it can; default 20,000)")
    ap.add_argument("--seconds", type=float, default=30.0, help="how long the writer runs (default 30)")
    add_hbase_arg(ap)
    args = ap.parse_args()
    seconds = 5.0 if args.quick else args.seconds
    old = design(scratch_name("ksr_repl_old"), None)
    new = design(scratch_name("ksr_repl_new"), 16)
    assert old.encode({"event_id": 7}) == b"%012d" % 7, "the writer writes OLD's keys without the schema"
    table = old.table.full_name
    peer_ids = ["ksrhbase" + uuid.uuid4().hex[:8], "ksrsink" + uuid.uuid4().hex[:8]]
    results: dict[str, Any] = {}
    with source_hbase(args.hbase) as (url, started):
        store = HBaseStore.from_url(url)
        run_dir, lock = standalone.claim_run_dir(ROOT / "tools" / "hbase" / "run" / "bench-replpeer")
        print(f"starting the peer HBase in {run_dir} ...", flush=True)
        t0 = time.perf_counter()
        peer_hbase = standalone.start_scratch(run_dir)
        print(f"  peer HBase up in {time.perf_counter() - t0:.0f} s at {peer_hbase.url}", flush=True)
        peer_store = HBaseStore.from_url(peer_hbase.url)
        added: list[str] = []
        try:
            facts = cluster_facts(store, url, started)
            create_table_from_schema(store, old)
            store.set_replication_scope(table, ["d"])
            create_table_from_schema(store, new)
            peer_store.create_table(TableSpec(old.table.name, families=[FamilySpec("d")]))
            rekeyer = ReKeyer(store, old, new)
            with RunningSink(rekeyer, url, f"/keyshape-sink-{peer_ids[1]}") as running:
                store.add_replication_peer(peer_ids[0], f"{peer_hbase.url}:/hbase", {table: []})
                added.append(peer_ids[0])
                store.add_replication_peer(peer_ids[1], running.cluster_key, {table: []})
                added.append(peer_ids[1])
                clock_old = old.encode({"event_id": CLOCK_ID})
                sides = [
                    Side("HBase replication -> peer HBase", peer_store, old.table.name, clock_old),
                    Side("keyshape sink -> NEW (re-keyed)", HBaseStore.from_url(url), new.table.full_name, new.encode({"event_id": CLOCK_ID})),
                ]
                print(f"writing at {args.rate or 'max'} rows/s for {seconds:.0f} s ...", flush=True)
                receive, send = mp.get_context("spawn").Pipe(duplex=False)
                writer = mp.get_context("spawn").Process(target=write_steadily, args=(url, table, args.rate, seconds, send))
                stop = threading.Event()
                sampler = threading.Thread(target=sample, args=(sides, stop), daemon=True)
                writer.start()
                sampler.start()
                rows, first_wall, elapsed, final = receive.recv()
                writer.join()
                stop.set()
                sampler.join()
                deadline = time.monotonic() + 600
                while any(s.visible_at is None for s in sides):
                    for side in sides:
                        if side.visible_at is None and side.clock() == final:
                            side.visible_at = time.time()
                    if time.monotonic() > deadline:
                        raise SystemExit("the last edit did not reach both targets within 600 s")
                    time.sleep(0.05)
                counts = [count(peer_store, old.table.name), count(store, new.table.full_name)]
            for side, n in zip(sides, counts):
                assert side.visible_at is not None
                span = side.visible_at - first_wall
                results[side.name] = {
                    "rows_on_target": n,
                    "seconds_first_put_to_last_visible": round(span, 2),
                    "edits_per_s": round(rows / span),
                    "lag_ms_p50": pct(side.lags_ms, 0.5),
                    "lag_ms_p95": pct(side.lags_ms, 0.95),
                    "lag_ms_max": max(side.lags_ms, default=float("nan")),
                    "lag_samples": len(side.lags_ms),
                    "drain_after_writer_s": round(side.visible_at - (first_wall + elapsed), 2),
                }
            writer_rate = rows / elapsed
            print(f"\nwriter: {rows:,} rows in {elapsed:.1f} s = {writer_rate:,.0f} rows/s (aimed at {args.rate or 'max'})")
            print(f"sink: {running.sink.batches} batches acknowledged, {running.sink.rejected} refused, {rekeyer.cells:,} cells applied\n")
            print_table(
                "replication: HBase's own vs keyshape's sink, same source rows",
                ["target", "rows", "s first put->last visible", "edits/s", "lag p50 ms", "lag p95 ms", "lag max ms", "drain s"],
                [
                    [
                        name,
                        f"{r['rows_on_target']:,}",
                        f"{r['seconds_first_put_to_last_visible']:.2f}",
                        f"{r['edits_per_s']:,}",
                        f"{r['lag_ms_p50']:.0f}",
                        f"{r['lag_ms_p95']:.0f}",
                        f"{r['lag_ms_max']:.0f}",
                        f"{r['drain_after_writer_s']:.2f}",
                    ]
                    for name, r in results.items()
                ],
            )
            for name, n in zip(results, counts):
                if n != rows + 1:
                    print(f"MISMATCH: {name} holds {n:,} rows, {rows + 1:,} written (with the clock row)")
            write_json(
                "bench_replication",
                args.out,
                {
                    "hbase": facts,
                    "rate_aimed": args.rate,
                    "seconds": seconds,
                    "writer_rows": rows,
                    "writer_rows_per_s": round(writer_rate),
                    "sides": results,
                },
            )
        finally:
            for peer_id in added:
                try:
                    store.remove_replication_peer(peer_id)
                except Exception as exc:  # cleanup must not hide the result
                    print(f"warning: could not remove peer {peer_id}: {exc}", file=sys.stderr)
            drop_quietly(store, old.table.full_name)
            drop_quietly(store, new.table.full_name)
            peer_store.close()
            peer_hbase.stop()
            lock.close()
            store.close()


if __name__ == "__main__":
    main()
