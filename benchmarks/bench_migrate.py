"""Migrate / re-salt speed on a real HBase, beside a plain load on the same HBase in the same run.

One logical table (a sequential 12-digit event id, one cell per row): N rows are written with
`keyshape.ops.live.load_workload` (batches of 1000) into
  * the sequential design (the migration's source)  -> "load (sequential)" rows/s;
then, alternating for --repeat rounds (best of each, since the machine is shared and noisy):
  * the `mod` 16 salted design, pre-split on its buckets -> "load (mod 16)" rows/s, the strongest
    alternative: writing the same rows straight into the target design;
  * `keyshape.ops.migrate.migrate` copies the sequential table into a fresh mod 16 table (decode,
    re-encode, every cell with its timestamp, a checkpoint per batch) -> "migrate" rows/s;
  * the bulk copy (issue 42): `keyshape.spark.migrate.migrate_spark` on Spark local[2] (one task
    per source region writing HFiles per target region, the driver bulk-loading them), and
    `keyshape.ops.migrate_bulk.migrate_bulk` (the same in this one process) -> rows/s each;
finally `verify_migration` reads both sides -> "verify" rows/s, and `verify_spark` (both sides'
per-region checksums in one Spark job) the Spark copy's target -> "verify Spark" rows/s. Ratios:
migrate / load (mod 16), bulk copy / put-path migrate.
Every copy's target table is created (empty) before its timing: creating 16 regions costs the
region server ~0.5 s of CPU, which is not a cost per copied row (it was in the copies' figures
before, 1.7 us/row at 300,000 rows, and not in the Java client's).
Region-server CPU per copied row: utime + stime of the HBase JVM(s) listening on the ZooKeeper and
region server ports (/proc/PID/stat, as bench_hbase_io measures the Java client), from a quiet
server (each measurement first waits until the JVM uses < 4 % of a core) through the copy and on
until it is quiet again, so what a copy makes HBase do right after it (the compactions a bulk load
triggers) is in its figure, minus the idle JVM's rate (measured over 2 s before) times the window
(its chores and GC accrue whatever runs: ~1 us/row over a 30 s window on this machine); divided
by the rows copied. The put path's memstore flush is not in
its figure (HBase flushes 128 MB memstores; 300,000 small rows stay in memory), so the ratio
flatters the put path, if anything. The Spark session is started before the timing.

The put path against the Java client: benchmarks/java/IoBench.java (BufferedMutator with the
client's defaults, as bench_hbase_io runs it; -Dkeyshape.iobench.scan=false: writes only) writes
the same NEW keys and 8-byte d:v values into a fresh mod 16 table; its region-server CPU per row
is the Java client's write side, beside the put path's write side (migrate's figure minus reading
OLD alone) and beside keyshape's writer alone (`store.writer(batch_size=B)`, the same keys and
values, no reading: the client against the client).
The 20-node projection: the per-task rate measured here (the Spark copy's rows/s over its
local[2] tasks, else the one-process bulk copy's) times the tasks a 20-node cluster runs at once
(--tasks-per-node, default 8: one per core of an 8-core worker), for 5 billion rows; the region
servers' side of a bulk load is not what limits it (their CPU per row is printed beside).

Run: .venv/bin/python benchmarks/bench_migrate.py [--rows N] [--batch B] [--hbase HOST:PORT] [--quick] [--no-spark] [--no-java]
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

from bench_hbase_io import build_java, cpu_seconds, run_java, server_pids, write_rows_file  # noqa: E402

from keyshape.ops.live import load_workload, row_value  # noqa: E402
from keyshape.ops.migrate_bulk import migrate_bulk  # noqa: E402
from keyshape.ops.migrate import migrate  # noqa: E402
from keyshape.ops.verify import verify_migration  # noqa: E402
from keyshape.schema import KeySchema  # noqa: E402
from keyshape.store import create_table_from_schema, open_store  # noqa: E402

NAMESPACE = "kbench"


def settle(servers: list[int], timeout: float = 60.0) -> float:
    """Wait until the HBase JVMs use under 4 % of a core over half a second (no flush or
    compaction running), at most ``timeout`` seconds; their CPU seconds per second then (the
    idle JVM's chores and GC: what a measurement window accrues whatever runs in it)."""
    end = time.monotonic() + timeout
    rate = 0.0
    while time.monotonic() < end:
        before = cpu_seconds(servers)
        time.sleep(0.5)
        rate = (cpu_seconds(servers) - before) / 0.5
        if rate <= 0.04:
            break
    before, t0 = cpu_seconds(servers), time.monotonic()
    time.sleep(2.0)  # the idle rate over a longer window (the clock ticks are 10 ms)
    return (cpu_seconds(servers) - before) / (time.monotonic() - t0)


class ServerCpu:
    """Region-server CPU seconds of what runs between ``start()`` and ``stop()``: from a quiet
    server until it is quiet again (what the work left HBase doing, e.g. compactions after a
    load, counts), minus the idle rate times the window (measured from a quiet server, before)."""

    def __init__(self, servers: list[int]) -> None:
        self.servers = servers

    def start(self) -> None:
        self.idle = settle(self.servers)
        self.before, self.t0 = cpu_seconds(self.servers), time.monotonic()

    def stop(self) -> float:
        settle(self.servers)  # the window ends once the server is quiet again
        used = cpu_seconds(self.servers) - self.before
        return max(used - self.idle * (time.monotonic() - self.t0), 0.0)


def design(stem: str, rows: int, buckets: int | None) -> KeySchema:
    d: dict[str, Any] = {
        "table": {"name": scratch_name(stem), "namespace": NAMESPACE, "families": [{"name": "d"}]},
        "key": {"separator": "_", "fields": [{"name": "event_id", "type": "int64", "encoding": "text", "width": 12}]},
        "workload": {"rows": rows, "fields": {"event_id": {"generator": "sequential", "start": 1}}},
    }
    if not buckets:  # the source: 4 regions, so the Spark copy has a task per region to run in parallel
        d["splits"] = {"algorithm": "explicit", "keys": [f"{rows * k // 4:012d}" for k in (1, 2, 3)]}
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
    ap.add_argument("--no-spark", action="store_true", help="skip the Spark bulk copy (no PySpark); --quick skips it too")
    ap.add_argument("--no-java", action="store_true", help="skip the Java BufferedMutator reference")
    ap.add_argument("--tasks-per-node", type=int, default=8, help="concurrent copy tasks per node of the projected 20-node cluster")
    add_hbase_arg(ap)
    args = ap.parse_args()
    rows = 3_000 if args.quick else args.rows
    repeat = 1 if args.quick else args.repeat
    created: list[str] = []
    loads, migrations = [], []
    spark_rates: list[float] = []
    spark_verify: list[float] = []
    writer_us: list[float] = []
    bulk_rates: list[float] = []
    cpu: dict[str, list[float]] = {"puts": [], "spark": [], "bulk": []}
    spark = None
    if not args.no_spark and not args.quick:  # --quick (the smoke test): no Spark JVM to start
        from keyshape.spark import session

        spark = session("local[2]", "bench-migrate", config={"spark.default.parallelism": "2"})
        spark.sparkContext.setLogLevel("ERROR")
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
            sample = list(store.scan_versions(source.table.full_name, batch_size=1000))[:1000]
            cells_per_row = sum(sum(len(v) for v in cols.values()) for _, cols in sample) / len(sample)
            bytes_per_cell = sum(len(val) for _, cols in sample for v in cols.values() for _, val in v) / (cells_per_row * len(sample))
            ports = {int(url.rsplit(":", 1)[1])} | {r.port for r in store.cluster.region_list(NAMESPACE, source.table.name).regions}
            servers = server_pids(ports)
            print(f"server pids for CPU accounting: {servers or 'not found'}", flush=True)

            # the region-server CPU of reading OLD alone (both copies read it the same way), so the
            # write side of each copy is its figure minus this one
            scan_cpu = []
            meter = ServerCpu(servers)
            for _ in range(2):
                meter.start()
                scanned = sum(1 for _ in store.scan_versions(source.table.full_name, batch_size=1000))
                scan_cpu.append(meter.stop() / max(scanned, 1))

            def server_cpu_per_row(kind: str, copy: Any) -> Any:
                meter.start()
                result = copy()
                cpu[kind].append(meter.stop() / max(result.rows, 1))  # with what the copy left HBase doing (compactions after loads)
                return result

            # load and migrate alternate, so both see the same (shared, noisy) machine
            for i in range(repeat):
                direct, target = design("mig_direct16", rows, 16), design("mig_target16", rows, 16)
                created += [direct.table.full_name, target.table.full_name]
                create_table_from_schema(store, direct)
                create_table_from_schema(store, target)  # created before the timing (see the docstring)
                print(f"round {i + 1}/{repeat}: load into mod 16, migrate sequential -> mod 16 ...", flush=True)
                loaded = load_workload(store, direct, rows)
                assert loaded.rows == rows
                loads.append(loaded.rows_per_second)
                result = server_cpu_per_row(
                    "puts", lambda: migrate(store, source, target, state_path=Path(tmp) / f"state{i}.json", batch_size=args.batch)
                )
                assert result.rows == rows and result.rejected == 0, result
                migrations.append(result.rows_per_second)
                bulk_target = design("mig_bulk16", rows, 16)
                created.append(bulk_target.table.full_name)
                create_table_from_schema(store, bulk_target)
                state = Path(tmp) / f"bulk{i}.json"
                bulk = server_cpu_per_row("bulk", lambda: migrate_bulk(store, source, bulk_target, state_path=state))
                assert bulk.rows == rows and bulk.rejected == 0, bulk
                bulk_rates.append(bulk.rows_per_second)
                extra = [bulk_target.table.full_name]
                if spark is not None:
                    from keyshape.spark.migrate import migrate_spark
                    from keyshape.spark.verify import verify_spark

                    spark_target = design("mig_spark16", rows, 16)
                    created.append(spark_target.table.full_name)
                    create_table_from_schema(store, spark_target)
                    extra.append(spark_target.table.full_name)
                    state = Path(tmp) / f"spark{i}.json"
                    done = server_cpu_per_row("spark", lambda: migrate_spark(url, source, spark_target, spark=spark, state_path=state))
                    assert done.rows == rows and done.rejected == 0, done
                    spark_rates.append(done.rows_per_second)
                    t0 = time.perf_counter()
                    check_spark = verify_spark(url, source, spark_target, spark=spark)
                    spark_verify.append(2 * rows / (time.perf_counter() - t0))  # both sides are read
                    assert check_spark.ok, check_spark.lines()
                for table in (direct.table.full_name, target.table.full_name, *extra):
                    if i < repeat - 1:
                        drop_quietly(store, table)
            java_us: float | None = None
            java_why = "skipped (--no-java)"
            if not args.no_java:
                try:
                    java = build_java()
                except SystemExit as exc:
                    java_why = f"not measured: {exc}"
                else:
                    java_table = design("mig_java16", rows, 16)
                    created.append(java_table.table.full_name)
                    create_table_from_schema(store, java_table)
                    rows_file = Path(tmp) / "java-rows.bin"
                    new_keys = [java_table.encode({"event_id": i}) for i in range(1, rows + 1)]
                    write_rows_file(rows_file, new_keys)
                    print("the Java client (BufferedMutator) writes the same NEW keys ...", flush=True)
                    meter.start()
                    run_java([java[0], "-Dkeyshape.iobench.scan=false", *java[1:]], url, rows_file, [java_table.table.full_name])
                    java_us = meter.stop() / rows * 1e6
                    # keyshape's writer alone, the same keys and values (bench_hbase_io's row_value)
                    writer_table = design("mig_writer16", rows, 16)
                    created.append(writer_table.table.full_name)
                    create_table_from_schema(store, writer_table)
                    meter.start()
                    with store.writer(writer_table.table.full_name, batch_size=args.batch) as writer:
                        for i, key in enumerate(new_keys):
                            writer.put(key, {b"d:v": row_value(i)})
                    writer_us.append(meter.stop() / rows * 1e6)
            t0 = time.perf_counter()
            check = verify_migration(store, source, target)
            t_verify = time.perf_counter() - t0
            assert check.ok, check.lines()
        finally:
            for table in created:
                drop_quietly(store, table)
            store.close()
            if spark is not None:
                spark.stop()
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
        "verify_spark_rows_per_s": max(spark_verify) if spark_verify else None,
        "migrate_over_load_mod16": migrate_rate / load_direct_rate,
        "cells_per_row": cells_per_row,
        "bytes_per_cell": bytes_per_cell,
        "bulk_rows_per_s": max(bulk_rates),
        "spark_bulk_rows_per_s": max(spark_rates) if spark_rates else None,
        "server_cpu_us_per_row": {k: min(v) * 1e6 for k, v in cpu.items() if v},
        "server_cpu_us_per_row_reading_old": min(scan_cpu) * 1e6,
    }
    best_bulk = numbers["spark_bulk_rows_per_s"] or numbers["bulk_rows_per_s"]
    numbers["bulk_over_migrate"] = best_bulk / migrate_rate
    us = numbers["server_cpu_us_per_row"]
    numbers["server_cpu_bulk_over_puts"] = us.get("spark", us["bulk"]) / us["puts"] if us["puts"] else None
    read = numbers["server_cpu_us_per_row_reading_old"]
    write_puts, write_bulk = us["puts"] - read, us.get("spark", us["bulk"]) - read
    numbers["server_cpu_write_side_bulk_over_puts"] = write_bulk / write_puts if write_puts > 0 else None
    numbers["server_cpu_us_per_row_java_write_side"] = java_us
    numbers["server_cpu_write_side_puts_over_java"] = write_puts / java_us if java_us and java_us > 0 else None
    numbers["server_cpu_us_per_row_writer_alone"] = min(writer_us) if writer_us else None
    numbers["server_cpu_writer_alone_over_java"] = min(writer_us) / java_us if writer_us and java_us else None
    # the projection: one task's rate here times the tasks a 20-node cluster runs at once
    if numbers["spark_bulk_rows_per_s"]:
        per_task, per_task_how = numbers["spark_bulk_rows_per_s"] / 2, "the Spark local[2] copy's rows/s / 2 tasks"
    else:
        per_task, per_task_how = numbers["bulk_rows_per_s"], "the one-process bulk copy's rows/s (no Spark run)"
    tasks = 20 * args.tasks_per_node
    numbers["projection"] = {
        "rows": 5_000_000_000,
        "per_task_rows_per_s": per_task,
        "per_task_from": per_task_how,
        "tasks": tasks,
        "hours": 5e9 / (per_task * tasks) / 3600,
    }
    print_table(
        f"{rows:,} rows on HBase {facts['version']}, best of {repeat} (rows/s)",
        [
            "load (sequential)",
            "load (mod 16)",
            "migrate seq -> mod 16",
            "verify (both sides)",
            "verify Spark (both sides)",
            "migrate / load (mod 16)",
        ],
        [
            [
                numbers["load_sequential_rows_per_s"],
                numbers["load_mod16_rows_per_s"],
                migrate_rate,
                numbers["verify_rows_per_s"],
                numbers["verify_spark_rows_per_s"] or "-",
                numbers["migrate_over_load_mod16"],
            ]
        ],
    )
    print_table(
        "region-server CPU of the write side (the copy's figure minus reading OLD alone), us/row",
        ["reading OLD", "puts write side", "bulk write side (Spark, else 1 process)", "bulk / puts (goal <= 0.2x)"],
        [[read, write_puts, write_bulk, numbers["server_cpu_write_side_bulk_over_puts"] or "-"]],
    )
    print_table(
        f"the copy: {rows:,} rows, {cells_per_row:.2f} cells/row, {bytes_per_cell:.1f} bytes/cell value; best of {repeat}",
        [
            "puts migrate rows/s",
            "bulk (1 process) rows/s",
            "bulk Spark local[2] rows/s",
            "bulk / puts (goal >= 3x)",
            "RS CPU us/row puts",
            "RS CPU us/row bulk 1p",
            "RS CPU us/row Spark",
            "RS CPU bulk / puts (goal <= 0.2x)",
        ],
        [
            [
                migrate_rate,
                numbers["bulk_rows_per_s"],
                numbers["spark_bulk_rows_per_s"] or "-",
                numbers["bulk_over_migrate"],
                us.get("puts"),
                us.get("bulk"),
                us.get("spark", "-"),
                numbers["server_cpu_bulk_over_puts"],
            ]
        ],
    )
    ratio = numbers["server_cpu_write_side_puts_over_java"]
    writer_ratio = numbers["server_cpu_writer_alone_over_java"]
    cpu_ratio = numbers["server_cpu_write_side_bulk_over_puts"]
    print_table(
        "the issue's three numbers, side by side",
        ["number", "measured", "goal", "met"],
        [
            ["copy rows/s, bulk / puts", f"{numbers['bulk_over_migrate']:.2f}x", ">= 3x", "yes" if numbers["bulk_over_migrate"] >= 3 else "NO"],
            [
                "RS CPU/row write side, bulk / puts",
                f"{cpu_ratio:.2f}x" if cpu_ratio is not None else "-",
                "<= 0.2x",
                "-" if cpu_ratio is None else "yes" if cpu_ratio <= 0.2 else "NO",
            ],
            [
                "RS CPU/row write side, puts / Java BufferedMutator",
                f"{ratio:.2f}x ({write_puts:.1f} vs {java_us:.1f} us)" if ratio is not None and java_us is not None else java_why,
                "<= 1.0x",
                "-" if ratio is None else "yes" if ratio <= 1.0 else "NO",
            ],
            [
                f"RS CPU/row, keyshape's writer alone (batch {args.batch}) / Java BufferedMutator",
                f"{numbers['server_cpu_writer_alone_over_java']:.2f}x ({numbers['server_cpu_us_per_row_writer_alone']:.1f} vs {java_us:.1f} us)"
                if numbers["server_cpu_writer_alone_over_java"] is not None and java_us is not None
                else java_why,
                "<= 1.0x",
                "-" if writer_ratio is None else "yes" if writer_ratio <= 1.0 else "NO",
            ],
        ],
    )
    proj = numbers["projection"]
    print(
        f"projection: 5,000,000,000 rows of this shape on a 20-node cluster = 5e9 / ({proj['per_task_rows_per_s']:,.0f} rows/s per task "
        f"[{proj['per_task_from']}] x {proj['tasks']} tasks [20 nodes x {args.tasks_per_node}]) = {proj['hours']:.1f} h; "
        "assumes the per-task rate measured on this shared 2-core machine holds per core there and that reading OLD and "
        "the region servers' loads keep up (untested here)"
    )
    path = write_json("bench_migrate", args.out, {"hbase": facts, **numbers})
    print(f"-> {path}")


if __name__ == "__main__":
    main()
