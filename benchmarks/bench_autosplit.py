"""Auto-split simulation: the chunked SplitSimulator against the per-key simulate_auto_split.

Both replay the same writes into one region that splits at its median once it holds more than
ROWS rows (SplitSimulator's idealized "rows" policy; simulate_auto_split keeps every key and
splits at the exact median). Reported side by side: seconds, peak Python memory (tracemalloc) and
the region counts (the sampled median may put a split a little off the exact one). Then the
HBase model (flushes, stepping policy, references) on the same stream, which `analyze
--auto-split` runs.

Run: .venv/bin/python benchmarks/bench_autosplit.py [--keys N] [--quick]
"""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, parser, print_table, write_json  # noqa: E402

from keyshape.core.keyarray import KeyArray  # noqa: E402
from keyshape.core.regions import simulate_auto_split  # noqa: E402
from keyshape.core.splitsim import SplitModel, SplitSimulator  # noqa: E402

CHUNK = 100_000


def _peak(fn: Any) -> tuple[Any, float]:
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def _chunked(stream: KeyArray, model: SplitModel) -> Any:
    sim = SplitSimulator(model, windows=50)
    for lo in range(0, len(stream), CHUNK):
        sim.feed(stream[lo : lo + CHUNK])
    return sim.finish()


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=2_000_000, help="writes (default 2,000,000)")
    args = ap.parse_args()
    n = 20_000 if args.quick else args.keys
    rng = np.random.default_rng(0)
    streams = {
        "sequential": KeyArray(np.arange(n, dtype=">u8").view(np.uint8).reshape(n, 8)),
        "random": KeyArray(rng.integers(0, 256, size=(n, 16), dtype=np.uint8)),
    }
    limit = max(n // 64, 2)
    rows, results = [], []
    for name, stream in streams.items():
        keys = stream.tolist()  # what the per-key simulation needs (built outside the timing)
        t_old, old = best_of(1, lambda keys=keys: simulate_auto_split(keys, max_rows=limit))
        _, mem_old = _peak(lambda keys=keys: simulate_auto_split(keys, max_rows=limit))
        model = SplitModel(policy="rows", max_rows=limit)
        t_new, new = best_of(1, lambda stream=stream: _chunked(stream, model))
        _, mem_new = _peak(lambda stream=stream: _chunked(stream, model))
        hbase = SplitModel(max_filesize=64 << 20, flush_size=16 << 20, write_rate=20_000)
        t_hb, hb = best_of(1, lambda stream=stream: _chunked(stream, hbase))
        row = {
            "stream": name,
            "writes": n,
            "split_rows": limit,
            "per_key_s": t_old,
            "chunked_s": t_new,
            "speedup": t_old / t_new,
            "per_key_peak_mb": mem_old,
            "chunked_peak_mb": mem_new,
            "memory_ratio": mem_old / max(mem_new, 1e-9),
            "per_key_regions": len(old.region_map),
            "chunked_regions": len(new.region_map),
            "hbase_model_s": t_hb,
            "hbase_model_regions": len(hb.region_map),
        }
        results.append(row)
        rows.append(
            [name, t_old, t_new, row["speedup"], mem_old, mem_new, row["memory_ratio"], f"{row['per_key_regions']}/{row['chunked_regions']}", t_hb]
        )
    print_table(
        f"Auto-split, {n:,} writes, split at {limit:,} rows (seconds, MB)",
        ["stream", "per-key s", "chunked s", "speed-up", "per-key MB", "chunked MB", "memory ratio", "regions", "HBase model s"],
        rows,
    )
    path = write_json("bench_autosplit", args.out, {"writes": n, "results": results})
    print(f"-> {path}")


if __name__ == "__main__":
    main()
