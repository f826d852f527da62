"""keyshape serve's history store at cluster scale, on a synthetic cluster shape.

No HBase: the polls are made up (region names, key ranges, Poisson request counts with a few hot
regions per table, store sizes), fed through ``History.record`` exactly as the poller feeds it.

* ``poll``: one poll of 100 tables x 100 regions (10,000 regions) into every layer: wall and CPU
  seconds (median of ``--polls``). The poller's own cost (region loads over the wire) is not here.
* ``28 days``: the file's bytes per stored frame, measured after an hour of 1-minute polls of all
  100 tables, times the frames 28 days keep per table (60 polls + 360 x 1 min + 576 x 10 min
  + 672 x 1 h = 1,668): an EXTRAPOLATION from the measured frame size, said so when printed.
* ``heat``: one table of 1,500 regions polled 1,500 times; ``History.heat`` over all of it
  (1,500 x 1,500 cells) and the API's JSON body of it (with the server lane): median of 3; and a
  zoomed window (a quarter of the keys, the last quarter of the time) as the page asks for it.
* ``replay``: the predicted heat map under a fix (``serve.predict``): 60 polls x 100 regions of
  a sequential int64 key re-encoded under a 16-bucket salt and replayed through the split
  simulation: median of 3; and ``plan_fix`` (``serve.fixes``: every candidate design replayed
  and checked, what the poller runs for a hot table at each poll): CPU seconds, median of 3.

* ``poller`` (with ``--hbase URL``, or ``--scratch`` to start a private standalone HBase in
  tools/hbase/run/bench-serve): ``--poll-tables`` tables of ``--poll-regions`` pre-split regions
  created on the REAL HBase, polled by the service's ``Poller`` (region loads over the wire,
  lineage, history, verdicts): wall and CPU seconds a poll (median of 5), and the CPU of 10,000
  regions EXTRAPOLATED linearly from it (said so when printed); the tables are dropped after.

Run: .venv/bin/python benchmarks/bench_serve.py [--polls N] [--quick] [--hbase URL | --scratch]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from keyshape.serve.history import LAYERS, Cell, History, Layer

TABLES, REGIONS = 100, 100
FRAMES_28_DAYS = 60 + 360 + 576 + 672


def regions(table: int, n: int) -> list[tuple[str, bytes, bytes]]:
    bounds = [b""] + [struct.pack(">Q", (i * 2**64) // n) for i in range(1, n)] + [b""]
    return [(f"t{table},{bounds[i].hex()},1700000000000.{table:04d}{i:028d}.", bounds[i], bounds[i + 1]) for i in range(n)]


def poll_cells(rng: np.random.Generator, table_regions: list[tuple[str, bytes, bytes]]) -> list[Cell]:
    n = len(table_regions)
    rates = rng.poisson(50, n).astype(np.float64)
    rates[rng.integers(0, n, 3)] += rng.poisson(5000, 3)  # a few hot regions
    size = rng.integers(1, 10_000, n) * 2**20
    return [
        Cell(name, start, end, f"rs{i % 10}:16020", float(rates[i]), float(rates[i] // 3), int(size[i]), int(size[i] // 50), int(1 + i % 7))
        for i, (name, start, end) in enumerate(table_regions)
    ]


def bench_poll(folder: Path, polls: int) -> tuple[float, float, int]:
    rng = np.random.default_rng(1)
    h = History(folder / "poll.db")
    shapes = [regions(t, REGIONS) for t in range(TABLES)]
    base = 1_800_000_000.0
    walls, cpus = [], []
    for p in range(polls):
        cells = [poll_cells(rng, s) for s in shapes]
        w0, c0 = time.perf_counter(), time.process_time()
        for t in range(TABLES):
            h.record(f"ns:t{t}", base + 60 * p, cells[t])
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    frames = sum(len(h.frames(f"ns:t{t}", k)) for t in range(TABLES) for k in range(len(LAYERS)))
    h.checkpoint()
    size = h.size_bytes()
    h.close()
    return statistics.median(walls), statistics.median(cpus), size // max(frames, 1)


def bench_heat(folder: Path, n: int) -> tuple[float, float, float, tuple[int, int]]:
    from keyshape.serve.app import heatmap_body

    rng = np.random.default_rng(2)
    h = History(folder / "heat.db", layers=(Layer(0, 10**9),))
    shape = regions(0, n)
    base = time.time() - n - 100
    for p in range(n):
        h.record("big", base + p, poll_cells(rng, shape))

    class _Poller:  # what heatmap_body reads of a Poller: no cluster needed
        interval = 60.0

        @staticmethod
        def label(table: str, key: bytes) -> str:
            return key.hex()

        @staticmethod
        def schema_for(table: str) -> None:
            return None

    walls, jsons, zooms = [], [], []
    shape_seen = (0, 0)
    for _ in range(3):
        w0 = time.perf_counter()
        q = h.heat("big", base - 1, base + n, max_times=1500, max_keys=1500)
        walls.append(time.perf_counter() - w0)
        shape_seen = q.writes.shape
        w0 = time.perf_counter()
        # the API's whole answer, as JSON text (times of this synthetic run are in the past: ask for them all)
        body = heatmap_body(_Poller(), h, "big", time.time() - base + 10, "write")  # type: ignore[arg-type]
        json.dumps(body)
        jsons.append(time.perf_counter() - w0)
        w0 = time.perf_counter()
        json.dumps(heatmap_body(_Poller(), h, "big", n / 4, "write", until=base + n, k0=0.5, k1=0.75))  # type: ignore[arg-type]
        zooms.append(time.perf_counter() - w0)
    h.close()
    return statistics.median(walls), statistics.median(jsons), statistics.median(zooms), (int(shape_seen[0]), int(shape_seen[1]))


def bench_replay() -> tuple[float, int, float, int]:
    from keyshape.schema import KeySchema
    from keyshape.serve.fixes import plan_fix
    from keyshape.serve.predict import Traffic, predict

    schema = KeySchema.load(Path(__file__).resolve().parents[1] / "examples" / "sequential.toml")
    n, polls = 100, 60
    starts = [b""] + [struct.pack(">q", 10_000 * i) for i in range(1, n)]
    ends = [*starts[1:], b""]
    writes = np.full((polls, n), 5.0)
    writes[np.arange(polls), np.minimum(np.arange(polls) * n // polls, n - 1)] = 5000.0  # the diagonal
    traffic = Traffic(np.arange(polls, dtype=np.float64) * 60, starts, ends, writes, np.zeros_like(writes))
    walls, keys = [], 0
    for _ in range(3):
        w0 = time.perf_counter()
        p = predict(schema, {"strategy": "phoenix", "buckets": 16}, traffic)
        walls.append(time.perf_counter() - w0)
        keys = p.keys if p is not None else 0
    plans, tried = [], 0
    for _ in range(3):
        c0 = time.process_time()
        plan = plan_fix("sequential diagonal", schema, traffic, 16)
        plans.append(time.process_time() - c0)
        tried = len(plan.checked)
    return statistics.median(walls), keys, statistics.median(plans), tried


def bench_poller(url: str, tables: int, per_table: int, polls: int = 5) -> tuple[float, float, int]:
    import uuid

    from keyshape.schema import KeySchema
    from keyshape.serve import History, Poller
    from keyshape.store import open_store

    tag = uuid.uuid4().hex[:6]
    store = open_store(url)
    names = [f"kss_bench_{tag}_{i}" for i in range(tables)]
    splits = [struct.pack(">q", (i * 2**63) // per_table) for i in range(1, per_table)]
    try:
        for name in names:
            spec = KeySchema.from_dict(
                {"table": {"name": name, "families": [{"name": "d"}]}, "key": {"fields": [{"name": "id", "type": "int64", "encoding": "hbase"}]}}
            ).table
            store.create_table(spec, splits)
        with tempfile.TemporaryDirectory() as tmp:
            history = History(Path(tmp) / "poller.db")
            poller = Poller(lambda: open_store(url), history, [f"kss_bench_{tag}_*"], {}, 60.0)
            poller.poll_once()  # the baseline (opens the connection)
            walls, cpus = [], []
            for _ in range(polls):
                w0, c0 = time.perf_counter(), time.process_time()
                if not poller.poll_once():
                    raise SystemExit(f"the poll failed: {poller.last_error}")
                walls.append(time.perf_counter() - w0)
                cpus.append(time.process_time() - c0)
            regions = sum(len(s.regions) for s in poller.snapshot().values())
            if poller.store is not None:
                poller.store.close()
            history.close()
    finally:
        for name in names:
            try:
                store.delete_table(name)
            except Exception:  # noqa: BLE001 - best effort: a table that was never created
                pass
        store.close()
    return statistics.median(walls), statistics.median(cpus), regions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--polls", type=int, default=60, help="1-minute polls of the 10,000 regions (default 60: one hour)")
    ap.add_argument("--quick", action="store_true", help="10 polls and a 300 x 300 heat map (a smoke run)")
    ap.add_argument("--hbase", default=None, metavar="URL", help="also measure the poller on this real HBase (creates and drops kss_bench_* tables)")
    ap.add_argument("--scratch", action="store_true", help="also measure the poller on a private standalone HBase started for the run")
    ap.add_argument("--poll-tables", type=int, default=10)
    ap.add_argument("--poll-regions", type=int, default=100)
    args = ap.parse_args()
    polls, n = (10, 300) if args.quick else (args.polls, 1500)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        wall, cpu, frame_bytes = bench_poll(folder, polls)
        where = f"poll of {TABLES * REGIONS:,} regions ({TABLES} tables) into 4 layers"
        print(f"{where}: {wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU (median of {polls})")
        per_table = FRAMES_28_DAYS * frame_bytes
        print(
            f"28 days at 1-minute polls: {frame_bytes:,} bytes a frame of {REGIONS} regions (measured) x {FRAMES_28_DAYS:,} frames x {TABLES} tables "
            f"= {TABLES * per_table / 2**20:,.0f} MiB (extrapolated from the measured frame size)"
        )
        q, j, z, shape = bench_heat(folder, n)
        print(
            f"heat map {shape[0]:,} x {shape[1]:,} cells: query {q * 1000:.0f} ms, the API's JSON of it (with the server lane) "
            f"{j * 1000:.0f} ms; a zoomed window (1/4 of time x 1/4 of keys) {z * 1000:.0f} ms (median of 3)"
        )
        r, keys, plan, tried = bench_replay()
        print(f"fix replay (60 polls x 100 regions, {keys:,} keys through the split simulation): {r * 1000:.0f} ms (median of 3)")
        print(f"plan_fix ({tried} candidate designs sampled once, each replayed and checked): {plan * 1000:.0f} ms of CPU (median of 3)")
        if args.hbase or args.scratch:
            instance, lock, url = None, None, args.hbase
            if args.scratch:
                sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "hbase"))
                import standalone  # tools/hbase/standalone.py

                run_dir, lock = standalone.claim_run_dir(Path(standalone.__file__).resolve().parent / "run" / "bench-serve")
                instance = standalone.start_scratch(run_dir)
                url = instance.url
            try:
                pw, pc, nreg = bench_poller(str(url), args.poll_tables, args.poll_regions)
            finally:
                if instance is not None:
                    instance.stop()
                if lock is not None:
                    lock.close()
            print(
                f"poller on the real HBase: {nreg:,} regions ({args.poll_tables} tables) a poll: {pw * 1000:.0f} ms wall, {pc * 1000:.0f} ms CPU "
                f"(median of 5); 10,000 regions: about {pc * 10_000 / max(nreg, 1):.1f} s CPU a poll (extrapolated linearly)"
            )
        print(f"(cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}, python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
