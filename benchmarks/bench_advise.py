"""keyshape advise at scale: time and peak memory for a 1M-record sample and 50+ designs.

Generates the orders scenario (examples/advise/orders/generate.py) with 1M records and takes its
workload plus one back-office pattern ("orders with a status, last day": a third key order, so the
search holds 50+ designs; the scenario's own file gives 36), then runs
``advise`` in a fresh subprocess per setting (so one setting's memory cannot hide another's):
the default (the sample thinned evenly to 200,000 records, ``advise``'s ``max_rows``) and the whole
1M records (``--whole``). Reported: designs scored, wall and CPU seconds, peak RSS (the child's
``ru_maxrss``) and the 1-minute load average (on a shared machine the wall time also measures the
neighbours). Goal (issue 31): under 60 s and 1 GB.

Run: .venv/bin/python benchmarks/bench_advise.py [--rows N] [--whole]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORDERS = ROOT / "examples" / "advise" / "orders"


EXTRA_PATTERN = """
[[pattern]]
name = "orders with a status, last day"
kind = "window"
fields = ["status"]
window = "1d"
rate = 2
goal_ms = 500
"""


def child(data: str, max_rows: int, workload: str) -> None:
    from keyshape.analysis.advise import advise

    began, cpu = time.perf_counter(), time.process_time()
    a = advise(data, workload, compare=[ORDERS / "hand-salted.toml"], max_rows=max_rows)
    print(
        json.dumps(
            {
                "records": a.sample.rows,
                "designs": len(a.ranked),
                "seconds": round(time.perf_counter() - began, 1),
                "cpu_seconds": round(time.process_time() - cpu, 1),
                "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "top": a.top.design.label,
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--whole", action="store_true", help="also score on every record (no thinning)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.child[2])
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "orders.parquet"
        workload = Path(tmp) / "WORKLOAD.toml"
        workload.write_text((ORDERS / "WORKLOAD.toml").read_text() + EXTRA_PATTERN)
        subprocess.run([sys.executable, str(ORDERS / "generate.py"), str(data), str(args.rows)], check=True, capture_output=True)
        settings = [200_000] + ([args.rows] if args.whole else [])
        for max_rows in settings:
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(data), str(max_rows), str(workload)], check=True, capture_output=True, text=True
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"{args.rows:,} records (scored on {r['records']:,}), {r['designs']} designs: {r['seconds']} s wall, "
                f"{r['cpu_seconds']} s CPU, peak {r['peak_mib']:,} MiB, load {os.getloadavg()[0]:.1f}; top: {r['top']}"
            )


if __name__ == "__main__":
    main()
