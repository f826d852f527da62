"""Migrate / re-salt speed on a real HBase, beside a plain load on the same HBase in the same run.

One logical table (a sequential 12-digit event id, one cell per row): N rows are written with
`keyshape.ops.live.load_workload` (batches of 1000) into
  * the sequential design (the migration's source)  -> "load (sequential)" rows/s;
  * the `mod` 16 salted design, pre-split on its buckets -> "load (mod 16)" rows/s, the strongest
    alternative: writing the same rows straight into the target design;
then `keyshape.ops.migrate.migrate` copies the sequential table into a fresh mod 16 table
(decode, re-encode, every cell with its timestamp, a checkpoint per batch) -> "migrate" rows/s,
and `verify_migration` reads both sides -> "verify" rows/s. Ratio: migrate / load (mod 16).

Run: .venv/bin/python benchmarks/bench_migrate.py [--rows N] [--batch B] [--hbase HOST:PORT] [--quick]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, print_table, write_json  # noqa: E402
from _hbase import add_hbase_arg, cluster_facts, drop_quietly, hbase_url, scratch_name  # noqa: E402

from keyshape.ops.live import load_workload  # noqa: E402
from keyshape.ops.migrate import migrate  # noqa: E402
from keyshape.ops.verify import verify_migration  # noqa: E402
from keyshape.schema import KeySchema  # noqa: E402
from keyshape.store import create_table_from_schema, open_store  # noqa: E402

NAMESPACE = "kbench"


def design(stem: str, rows: int, buckets: int | None) -> KeySchema:
    d: dict[str, Any] = {
        "table": {"name": scratch_name(stem), "namespace": NAMESPACE, "families": [{"name": "d"}]},
        "key": {"separator": "_", "fields": [{"name": "event_id", "type": "int64", "encoding": "text",
                                              "width": 12}]},
        "workload": {"rows": rows, "fields": {"event_id": {"generator": "sequential", "start": 1}}},
    }
    if buckets:
        d["key"]["prefix"] = {"strategy": "mod", "buckets": buckets}
        d["key"]["hash_fields"] = ["event_id"]
        d["splits"] = {"algorithm": "prefix", "regions": buckets}
    return KeySchema.from_dict(d, source=f"bench_migrate ({stem})")


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000, help="rows (default 100,000)")
    ap.add_argument("--batch", type=int, default=1000, help="migrate batch size (default 1,000)")
    add_hbase_arg(ap)
    args = ap.parse_args()
    rows = 3_000 if args.quick else args.rows
    created: list[str] = []
    with hbase_url(args.hbase) as (url, started), tempfile.TemporaryDirectory() as tmp:
        store = open_store(url)
        try:
            facts = cluster_facts(store, url, started)
            source, direct, target = design("mig_seq", rows, None), design("mig_direct16", rows, 16), \
                design("mig_target16", rows, 16)
            for schema in (source, direct):
                created.append(schema.table.full_name)
                create_table_from_schema(store, schema)
            print(f"loading {rows:,} rows into the sequential and the mod 16 designs ...", flush=True)
            load_seq = load_workload(store, source, rows)
            load_direct = load_workload(store, direct, rows)
            assert load_seq.rows == load_direct.rows == rows
            created.append(target.table.full_name)
            print("migrating sequential -> mod 16 ...", flush=True)
            result = migrate(store, source, target, state_path=Path(tmp) / "state.json",
                             batch_size=args.batch)
            assert result.rows == rows and result.rejected == 0, result
            t0 = time.perf_counter()
            check = verify_migration(store, source, target)
            t_verify = time.perf_counter() - t0
            assert check.ok, check.lines()
        finally:
            for table in created:
                drop_quietly(store, table)
            store.close()
    migrate_rate = result.rows_per_second
    numbers = {
        "rows": rows, "batch": args.batch,
        "load_sequential_rows_per_s": load_seq.rows_per_second,
        "load_mod16_rows_per_s": load_direct.rows_per_second,
        "migrate_rows_per_s": migrate_rate,
        "verify_rows_per_s": 2 * rows / t_verify,  # both sides are read
        "migrate_over_load_mod16": migrate_rate / load_direct.rows_per_second,
    }
    print_table(f"{rows:,} rows on HBase {facts['version']} (rows/s)",
                ["load (sequential)", "load (mod 16)", "migrate seq -> mod 16", "verify (both sides)",
                 "migrate / load (mod 16)"],
                [[numbers["load_sequential_rows_per_s"], numbers["load_mod16_rows_per_s"], migrate_rate,
                  numbers["verify_rows_per_s"], numbers["migrate_over_load_mod16"]]])
    path = write_json("bench_migrate", args.out, {"hbase": facts, **numbers})
    print(f"-> {path}")


if __name__ == "__main__":
    main()
