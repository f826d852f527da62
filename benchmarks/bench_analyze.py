"""Analyzer scale: time and peak memory of analyze_schema at 1M and 10M keys (100M with --large).

Each size runs in a fresh subprocess (so one size's memory cannot hide another's) that generates
the workload of examples/orders.toml (salted composite keys), encodes it chunk by chunk and
analyzes it against the schema's 20 regions. Peak RSS is the child's ``ru_maxrss``; the per-key
cost at each size shows whether time grows linearly. The CPU seconds (both threads: the workload
is generated and encoded one chunk ahead in a second thread) and the 1-minute load average are
printed beside the wall time: on a shared machine the wall time also measures the neighbours.

Run: .venv/bin/python benchmarks/bench_analyze.py [--large] [--quick] [--schema FILE]
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, parser, print_table, write_json  # noqa: E402


def child(schema: str, rows: int) -> None:
    from keyshape.analysis.designs import analyze_schema

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0, c0 = time.perf_counter(), time.process_time()
    result = analyze_schema(schema, rows)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(
        json.dumps(
            {
                "rows": result.rows,
                "seconds": seconds,
                "cpu_seconds": cpu,
                "peak_rss_mb": peak / 1024,
                "rss_after_import_mb": base / 1024,
                "verdict": result.verdict,
            }
        )
    )


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--large", action="store_true", help="also 100M keys")
    ap.add_argument("--schema", default=str(ROOT / "examples" / "orders.toml"))
    ap.add_argument("--child", type=int, default=None, help=None)
    args = ap.parse_args()
    if args.child is not None:
        child(args.schema, args.child)
        return
    sizes = [2_000, 20_000] if args.quick else [1_000_000, 10_000_000] + ([100_000_000] if args.large else [])
    results, rows = [], []
    for n in sizes:
        proc = subprocess.run([sys.executable, __file__, "--schema", args.schema, "--child", str(n)], capture_output=True, text=True, check=True)
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        r["us_per_key"] = r["seconds"] / n * 1e6
        r["keys_per_s"] = n / r["seconds"]
        r["cpu_keys_per_s"] = n / r["cpu_seconds"]
        r["load_average"] = os.getloadavg()[0]
        results.append(r)
        rows.append([n, r["seconds"], r["keys_per_s"], r["us_per_key"], r["cpu_seconds"], r["peak_rss_mb"], r["load_average"], r["verdict"]])
    print_table(
        f"analyze_schema({Path(args.schema).name}), one fresh process per size",
        ["keys", "seconds", "keys/s", "µs/key", "CPU s (all threads)", "peak RSS MB", "load avg", "verdict"],
        rows,
    )
    growth = results[-1]["us_per_key"] / results[0]["us_per_key"]
    path = write_json(
        "bench_analyze", args.out, {"schema": Path(args.schema).name, "results": results, "per_key_cost_ratio_largest_over_smallest": growth}
    )
    print(f"per-key cost, largest / smallest size: {growth:.2f} (1.0 = linear)  -> {path}")


if __name__ == "__main__":
    main()
