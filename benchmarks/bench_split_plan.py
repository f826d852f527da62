"""`keyshape split-plan --apply`: how long 7 splits of one loaded region take on a real HBase.

The speed claim of issue 30 (9 min 16 s for 7 splits on an idle standalone, then seconds), moved
here from tests/hbase/test_split_plan_speed_hbase.py (issue 43: the default test suite asserts no
measured time; the test keeps every correctness check). Seven cuts of one region make a split tree
three levels deep; waiting for HBase's CompactedHFilesDischarger chore (every 120 s by default)
instead of reopening each daughter would cost at least 2 x 120 s, so the report says whether the
run stayed under that bound. Rows as the test loads them: 300,000 (--quick: 40,000) in 4 flushes.

Run: .venv/bin/python benchmarks/bench_split_plan.py [--hbase HOST:PORT] [--rows N] [--quick]
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, parser, print_table, write_json  # noqa: E402
from _hbase import add_hbase_arg, cluster_facts, hbase_url, scratch_name  # noqa: E402

from keyshape.schema import TableSpec  # noqa: E402
from keyshape.store.hbase import HBaseStore  # noqa: E402

FLUSHES = 4
CHORE_BOUND_S = 2 * 120.0  # two levels of re-splits waiting for the discharger chore


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    add_hbase_arg(ap)
    ap.add_argument("--rows", type=int, default=300_000, help="rows loaded into the one region (default 300,000)")
    args = ap.parse_args()
    rows = 40_000 if args.quick else args.rows
    with hbase_url(args.hbase) as (url, started_here):
        store = HBaseStore.from_url(url)
        table = scratch_name("bench_split_plan")
        try:
            facts = cluster_facts(store, url, started_here)
            store.create_table(TableSpec(table))
            with store.writer(table) as writer:
                for i in range(rows):
                    writer.put(b"r%08d" % i, {b"d:v": b"%020d" % i})
                    if (i + 1) % (rows // FLUSHES) == 0:
                        writer.flush()
                        store.flush_table(table)  # store files: a split leaves the daughters references
            started = time.monotonic()
            proc = subprocess.run(
                [sys.executable, "-m", "keyshape.cli", "split-plan", table, "--hbase", url, "--target-regions", "8", "--apply"],
                capture_output=True,
                text=True,
                cwd=ROOT,
                timeout=1200,
            )
            seconds = time.monotonic() - started
            if proc.returncode != 0:
                raise SystemExit(f"error: split-plan --apply failed: {proc.stderr.strip()}")
            regions = len(store.regions(table))
        finally:
            if store.table_exists(table):
                store.delete_table(table)
            store.close()
    result = {
        "rows": rows,
        "splits": regions - 1,
        "seconds": round(seconds, 2),
        "chore_bound_s": CHORE_BOUND_S,
        "under_chore_bound": seconds < CHORE_BOUND_S,
    }
    print_table(
        "split-plan --apply, one loaded region cut into 8",
        ["rows", "splits", "seconds", "under 2 x 120 s"],
        [[rows, regions - 1, seconds, "yes" if seconds < CHORE_BOUND_S else "NO"]],
    )
    print(f"wrote {write_json('bench_split_plan', args.out, {'hbase': facts, 'result': result})}")


if __name__ == "__main__":
    main()
