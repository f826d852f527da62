"""Migrate / re-salt speed on a real HBase, beside a plain load on the same HBase in the same run.

One logical table (a sequential 12-digit event id, one cell per row): N rows are written with
`keyshape.ops.live.load_workload` (batches of 1000) into
  * the sequential design (the migration's source)  -> "load (sequential)" rows/s;
then, alternating for --repeat rounds (best of each, since the machine is shared and noisy):
  * the `mod` 16 salted design, pre-split on its buckets -> "load (mod 16)" rows/s, the strongest
    alternative: writing the same rows straight into the target design;
  * `keyshape.ops.migrate.migrate` copies the sequential table into a fresh mod 16 table (decode,
    re-encode, every cell with its timestamp, a checkpoint per batch) -> "migrate" rows/s;
finally `verify_migration` reads both sides -> "verify" rows/s. Ratio: migrate / load (mod 16).

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
        "key": {"separator": "_", "fields": [{"name": "event_id", "type": "int64", "encoding": "text", "width": 12}]},
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
    ap.add_argument("--repeat", type=int, default=3, help="alternating load/migrate rounds; best of each")
    add_hbase_arg(ap)
    args = ap.parse_args()
    rows = 3_000 if args.quick else args.rows
    repeat = 1 if args.quick else args.repeat
    created: list[str] = []
    loads, migrations = [], []
    with hbase_url(args.hbase) as (url, started), tempfile.TemporaryDirectory() as tmp:
        store = open_store(url)
        try:
            facts = cluster_facts(store, url, started)
            source = design("mig_seq", rows, None)
            created.append(source.table.full_name)
            create_table_from_schema(store, source)
            print(f"loading {rows:,} rows into the sequential design ...", flush=True)
            load_seq = load_workload(store, source, rows)
            assert load_seq.rows == rows
            # load and migrate alternate, so both see the same (shared, noisy) machine
            for i in range(repeat):
                direct, target = design("mig_direct16", rows, 16), design("mig_target16", rows, 16)
                created += [direct.table.full_name, target.table.full_name]
                create_table_from_schema(store, direct)
                print(f"round {i + 1}/{repeat}: load into mod 16, migrate sequential -> mod 16 ...", flush=True)
                loaded = load_workload(store, direct, rows)
                assert loaded.rows == rows
                loads.append(loaded.rows_per_second)
                result = migrate(store, source, target, state_path=Path(tmp) / f"state{i}.json", batch_size=args.batch)
                assert result.rows == rows and result.rejected == 0, result
                migrations.append(result.rows_per_second)
                for table in (direct.table.full_name, target.table.full_name):
                    if i < repeat - 1:
                        drop_quietly(store, table)
            t0 = time.perf_counter()
            check = verify_migration(store, source, target)
            t_verify = time.perf_counter() - t0
            assert check.ok, check.lines()
        finally:
            for table in created:
                drop_quietly(store, table)
            store.close()
    load_direct_rate = max(loads)
    migrate_rate = max(migrations)
    numbers = {
        "rows": rows,
        "batch": args.batch,
        "repeat": repeat,
        "load_sequential_rows_per_s": load_seq.rows_per_second,
        "load_mod16_rows_per_s": load_direct_rate,
        "migrate_rows_per_s": migrate_rate,
        "load_mod16_rounds": loads,
        "migrate_rounds": migrations,
        "verify_rows_per_s": 2 * rows / t_verify,  # both sides are read
        "migrate_over_load_mod16": migrate_rate / load_direct_rate,
    }
    print_table(
        f"{rows:,} rows on HBase {facts['version']}, best of {repeat} (rows/s)",
        ["load (sequential)", "load (mod 16)", "migrate seq -> mod 16", "verify (both sides)", "migrate / load (mod 16)"],
        [
            [
                numbers["load_sequential_rows_per_s"],
                numbers["load_mod16_rows_per_s"],
                migrate_rate,
                numbers["verify_rows_per_s"],
                numbers["migrate_over_load_mod16"],
            ]
        ],
    )
    path = write_json("bench_migrate", args.out, {"hbase": facts, **numbers})
    print(f"-> {path}")


if __name__ == "__main__":
    main()
