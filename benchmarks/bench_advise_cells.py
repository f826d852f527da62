"""A cell in a wide row vs a row of its own, scanned on a real HBase: what time bucketing saves.

advise's time bucketing (src/keyshape/analysis/advise/timebucket.py) prices the open bucket's
cells as event rows, and saves only by packing a closed bucket into one cell. This measures the
assumption: the same CELLS cells (16-byte values) stored as CELLS one-cell rows, as rows of 100
cells and as rows of 1,000 cells, each table scanned whole through keyshape's store (key and
value to the client), round-robin, the lower quartile of the rounds kept. Reported: ms per scan,
us per cell, and the per-row overhead over a cell (the 1-cell and 1,000-cell runs' difference per
row), which is what a bucket row saves per event before any packing.

Run: .venv/bin/python benchmarks/bench_advise_cells.py [--cells N] [--rounds R] [--hbase HOST:PORT] [--quick]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, print_table, write_json  # noqa: E402
from _hbase import add_hbase_arg, cluster_facts, drop_quietly, hbase_url, scratch_name  # noqa: E402

from keyshape.schema import FamilySpec, TableSpec  # noqa: E402
from keyshape.store import open_store  # noqa: E402

WIDTHS = (1, 100, 1000)  # cells a row
VALUE = b"x" * 16


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=20_000, help="cells per table (default 20,000)")
    ap.add_argument("--rounds", type=int, default=15, help="timed round-robin rounds (default 15)")
    add_hbase_arg(ap)
    args = ap.parse_args()
    cells = 2_000 if args.quick else args.cells
    rounds = 3 if args.quick else args.rounds
    tables: dict[int, str] = {}
    with hbase_url(args.hbase) as (url, started):
        store = open_store(url)
        try:
            facts = cluster_facts(store, url, started)
            for width in WIDTHS:
                name = scratch_name(f"bench_cells_{width}")
                store.create_table(TableSpec(name=name, families=(FamilySpec(name="d"),)))
                tables[width] = name
                with store.writer(name) as w:
                    for r in range(cells // width):
                        w.put(b"dev000042_%08d" % r, {b"d:%06d" % c: VALUE for c in range(width)})
            times: dict[int, list[float]] = {w: [] for w in WIDTHS}
            for _ in range(1 + rounds):  # the first round warms the block cache, then is dropped
                for width, name in tables.items():
                    t0 = time.perf_counter()
                    seen = sum(len(c) for _, c in store.scan(name, batch_size=1000))
                    times[width].append(time.perf_counter() - t0)
                    if seen != cells // width * width:
                        raise SystemExit(f"{name}: scanned {seen} cells, wrote {cells // width * width}")
        finally:
            for name in tables.values():
                drop_quietly(store, name)
            store.close()
    ms = {w: float(np.percentile(t[1:], 25)) * 1000 for w, t in times.items()}
    results = [
        {"cells_per_row": w, "rows": cells // w, "cells": cells // w * w, "scan_ms": ms[w], "us_per_cell": ms[w] * 1000 / (cells // w * w)}
        for w in WIDTHS
    ]
    narrow, wide = results[0], results[-1]
    row_overhead_us = (narrow["scan_ms"] - wide["scan_ms"]) * 1000 / (narrow["rows"] - wide["rows"])
    print_table(
        f"{cells:,} cells of 16 bytes scanned whole (lower quartile of {rounds} rounds)",
        ["cells a row", "rows", "ms a scan", "us a cell"],
        [[r["cells_per_row"], r["rows"], r["scan_ms"], r["us_per_cell"]] for r in results],
    )
    print(f"per-row overhead over a cell: {row_overhead_us:.2f} us")
    path = write_json(
        "bench_advise_cells", args.out, {"hbase": facts, "cells": cells, "rounds": rounds, "results": results, "row_overhead_us": row_overhead_us}
    )
    print(f"-> {path}")


if __name__ == "__main__":
    main()
