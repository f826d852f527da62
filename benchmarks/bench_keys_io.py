"""Real key sets at I/O speed: the local engine and Spark against pyarrow's bare read.

One Parquet file of N salted 41-byte keys (examples/orders.toml, row groups of 1M rows) is read,
side by side in one run, by:

- ``pyarrow iter_batches``: pyarrow streaming the key column and doing nothing with it (the floor
  the local engine streams at; single-threaded);
- ``pyarrow read_table``: pyarrow reading the whole column at once with its thread pool;
- ``read_keys``: the way before this engine, a Python ``bytes`` per key into the Analyzer;
- ``local engine, 1 / 2 threads``: ``feed_key_files`` (Arrow buffers -> KeyArray, row groups
  counted in parallel and merged) plus ``finish`` (statistics and verdict), without and with every
  key checked against the schema (``keyshape.schema.keycheck``: decoded, salt re-derived); the
  check's cost is the ratio of the two;
- ``analyze_schema``: the whole ``keyshape analyze --keys`` call (schema, key check, lint, report data);
- the key check by itself: ``fit_codes`` over the file's batches already in memory, ns a key;
- whole processes, start-up included: ``keyshape analyze SCHEMA --keys FILE`` against a Python
  process that only streams the same file with pyarrow (best of the interleaved rounds);
- ``Spark local[1] / local[2]``: ``keyshape.spark.analyze`` on the same file, each master in its
  own process; the session start-up is reported apart from the analysis.

Local timings are ``--repeat`` interleaved rounds, reported as the median (and the best: other
load only adds time); the key check's cost and the process ratio are also taken round by round
(each round's ratio of two runs side by side) and their median reported. The processes run with
bytecode written (one warm-up round first, not timed), as an installed keyshape has it: with
PYTHONDONTWRITEBYTECODE set, every module edited since its .pyc was written is compiled again at
every start. Spark runs once. The load average at the end is printed and stored: the machine is
shared.
Run: .venv/bin/python benchmarks/bench_keys_io.py [--rows N] [--quick] [--no-spark]
(the key-check and whole-process targets: check <= 10% of the engine, process <= 1.5x pyarrow's)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, best_of, parser, print_table, write_json  # noqa: E402

SCHEMA = ROOT / "examples" / "orders.toml"


def make_file(path: Path, rows: int) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from keyshape.core.arrowkeys import to_arrow
    from keyshape.schema import KeySchema
    from keyshape.workload import generate

    schema = KeySchema.load(SCHEMA)
    writer = None
    width = 0
    for columns in generate(schema, rows, chunk_rows=1_000_000):
        keys = schema.encode_many(columns, as_array=True)
        width = max(width, keys.width)
        table = pa.table({"rowkey": to_arrow(keys)})
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=1_000_000)
    assert writer is not None
    writer.close()
    return width


def spark_child(path: str, master: str) -> None:
    from keyshape.spark import analyze, session

    t0 = time.perf_counter()
    spark = session(master)
    spark.sparkContext.setLogLevel("ERROR")
    startup = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = analyze(path, str(SCHEMA), spark=spark)
    seconds = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "master": master,
                "seconds": seconds,
                "startup_s": startup,
                "rows": result.rows,
                "verdict": result.verdict,
                "max_over_mean": result.max_over_mean,
            }
        )
    )


def run_local(path: Path, rows: int, repeat: int) -> list[dict]:
    import pyarrow.parquet as pq

    from keyshape.analysis import Analyzer
    from keyshape.analysis.designs import analyze_schema
    from keyshape.analysis.keyfiles import feed_key_files
    from keyshape.schema import KeySchema
    from keyshape.schema.keycheck import KeyCheck
    from keyshape.workload import read_keys

    schema = KeySchema.load(SCHEMA)
    splits = schema.split_keys()

    def bare_stream() -> int:
        return sum(b.num_rows for b in pq.ParquetFile(path).iter_batches(batch_size=131_072))

    def bare_table() -> int:
        return pq.read_table(path).num_rows

    def bytes_per_key() -> str:
        acc = Analyzer(splits, total_rows=rows)
        for chunk in read_keys(path, chunk_rows=100_000):
            acc.update(chunk)
        return acc.finish().verdict

    def engine(workers: int, check: bool = False):  # type: ignore[no-untyped-def]
        def run() -> str:
            acc = Analyzer(splits, total_rows=rows)
            checked = KeyCheck.of(schema) if check else None
            verdict = feed_key_files(acc, path, workers=workers, check=checked).finish().verdict
            assert checked is None or checked.fitting == rows
            return verdict

        return run

    def whole() -> str:
        return analyze_schema(str(SCHEMA), keys_file=path).verdict

    cases = [
        ("pyarrow iter_batches (floor)", bare_stream),
        ("pyarrow read_table (threads)", bare_table),
        ("read_keys: a bytes object per key", bytes_per_key),
        ("local engine, 1 thread", engine(1)),
        ("local engine, 2 threads", engine(2)),
        ("local engine, 1 thread + key check", engine(1, True)),
        ("local engine, 2 threads + key check", engine(2, True)),
        ("analyze_schema --keys (end to end)", whole),
    ]
    # Rounds interleave the readers, so a burst of load from other users of the machine hits
    # all of them alike instead of one reader's every run.
    times: dict[str, list[float]] = {name: [] for name, _ in cases}
    results: dict[str, object] = {}
    for round_ in range(repeat):
        for name, fn in cases:
            if "per key" in name and round_:
                continue  # the slow way: one run says enough
            seconds, results[name] = best_of(1, fn)
            times[name].append(seconds)
    out = []
    for name, _ in cases:
        median = statistics.median(times[name])
        out.append(
            {"what": name, "seconds": median, "best_s": min(times[name]), "runs_s": times[name], "keys_per_s": rows / median, "result": results[name]}
        )
    return out


def run_check_alone(path: Path, repeat: int) -> dict | None:
    """The key check by itself: ``fit_codes`` over every batch of the file (keys already in
    memory, one thread), ns a key as the median of ``repeat`` rounds; None without the C kernels."""
    import pyarrow.parquet as pq

    from keyshape.core import native
    from keyshape.core.arrowkeys import from_arrow
    from keyshape.schema import KeySchema
    from keyshape.schema.keycheck import fit_codes

    if not native.AVAILABLE:
        return None
    schema = KeySchema.load(SCHEMA)
    batches = [from_arrow(b.column(0)) for b in pq.ParquetFile(path).iter_batches(batch_size=131_072)]
    rows = sum(len(k) for k in batches)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for keys in batches:
            fit_codes(schema, keys)
        times.append(time.perf_counter() - t0)
    return {"ns_per_key": 1e9 * statistics.median(times) / rows, "best_ns_per_key": 1e9 * min(times) / rows}


def run_processes(path: Path, repeat: int) -> list[dict]:
    """Whole processes, start-up included, interleaved round by round: ``keyshape analyze --keys``
    and a Python process that only streams the file with pyarrow (the floor a user compares with)."""
    read = "import pyarrow.parquet as pq, sys; f = pq.ParquetFile(sys.argv[1]); print(sum(b.num_rows for b in f.iter_batches(batch_size=131072)))"
    cases = [
        ("process: python + pyarrow streaming read", [sys.executable, "-c", read, str(path)]),
        ("process: keyshape analyze --keys", [sys.executable, "-m", "keyshape.cli", "analyze", str(SCHEMA), "--keys", str(path)]),
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["COLUMNS"] = "120"
    times: dict[str, list[float]] = {name: [] for name, _ in cases}
    for round_ in range(repeat + 1):
        for name, cmd in cases:
            t0 = time.perf_counter()
            subprocess.run(cmd, capture_output=True, check=True, env=env)
            if round_:  # round 0 writes the bytecode an installed package has
                times[name].append(time.perf_counter() - t0)
    return [{"what": name, "seconds": statistics.median(times[name]), "best_s": min(times[name]), "runs_s": times[name]} for name, _ in cases]


def paired(slow: list[float], fast: list[float]) -> float:
    """The median over rounds of ``slow / fast``, each round's two runs side by side."""
    return statistics.median(s / f for s, f in zip(slow, fast))


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=None, help="keys in the file (default 10M)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-spark", action="store_true", help="skip the Spark runs")
    ap.add_argument("--spark-child", nargs=2, metavar=("PATH", "MASTER"), help=None)
    args = ap.parse_args()
    if args.spark_child:
        spark_child(*args.spark_child)
        return
    rows = args.rows or (200_000 if args.quick else 10_000_000)
    with tempfile.TemporaryDirectory(prefix="keyshape-keys-") as tmp:
        path = Path(tmp) / "keys.parquet"
        width = make_file(path, rows)
        repeat = 1 if args.quick else args.repeat
        local = run_local(path, rows, repeat)
        check_alone = run_check_alone(path, max(3, repeat))
        processes = run_processes(path, max(3, repeat))
        spark: list[dict] = []
        if not args.no_spark and not args.quick:
            for master in ("local[1]", "local[2]"):
                proc = subprocess.run([sys.executable, __file__, "--spark-child", str(path), master], capture_output=True, text=True, check=True)
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                r["what"] = f"Spark {master}"
                r["keys_per_s"] = rows / r["seconds"]
                spark.append(r)
    floor = local[0]["seconds"]
    table = [[r["what"], r["seconds"], r["best_s"], r["keys_per_s"] / 1e6, r["seconds"] / floor] for r in local]
    table += [[r["what"], r["seconds"], r["seconds"], r["keys_per_s"] / 1e6, r["seconds"] / floor] for r in spark]
    print_table(
        f"{rows:,} keys of {width} bytes in one Parquet file (median and best of {repeat}; Spark once)",
        ["reader", "median s", "best s", "M keys/s", "x pyarrow floor"],
        table,
    )
    for r in spark:
        print(f"{r['what']}: session start-up {r['startup_s']:.1f} s (not in the time above)")
    by_name = {r["what"]: r for r in local}
    check_cost = {
        w: by_name[f"local engine, {w} + key check"]["seconds"] / by_name[f"local engine, {w}"]["seconds"] - 1 for w in ("1 thread", "2 threads")
    }
    check_cost_paired = {
        w: paired(by_name[f"local engine, {w} + key check"]["runs_s"], by_name[f"local engine, {w}"]["runs_s"]) - 1 for w in ("1 thread", "2 threads")
    }
    for w, cost in check_cost.items():
        print(
            f"key check, {w}: {100 * cost:+.1f}% over the engine without it (medians; "
            f"{100 * check_cost_paired[w]:+.1f}% as the median of each round's ratio; target <= 10%)"
        )
    if check_alone is not None:
        print(
            f"the key check by itself (fit_codes, keys in memory, 1 thread): {check_alone['ns_per_key']:.1f} ns a key "
            f"(median; best {check_alone['best_ns_per_key']:.1f})"
        )
    floor_process = processes[0]["seconds"]
    for r in processes:
        print(f"{r['what']}: median {r['seconds']:.2f} s (best {r['best_s']:.2f}) = {r['seconds'] / floor_process:.2f}x the pyarrow process")
    process_ratio = processes[1]["seconds"] / floor_process
    process_paired = paired(processes[1]["runs_s"], processes[0]["runs_s"])
    print(
        f"keyshape analyze --keys as a whole process: {process_ratio:.2f}x a process that only "
        f"reads the file with pyarrow (medians; {process_paired:.2f}x as the median of each round's "
        f"ratio; target <= 1.5x)"
    )
    engine2 = next(r for r in local if r["what"] == "local engine, 2 threads")
    print(
        f"local engine, 2 threads: {engine2['keys_per_s'] / 1e6:.2f} M keys/s "
        f"(target 5.0) = {engine2['seconds'] / floor:.2f}x pyarrow's bare streaming read"
    )
    load = os.getloadavg()
    print(f"load average at the end (1/5/15 min): {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores")
    path_out = write_json(
        "bench_keys_io",
        args.out,
        {
            "rows": rows,
            "key_bytes": width,
            "local": local,
            "spark": spark,
            "load_average": load,
            "processes": processes,
            "process_over_pyarrow": process_ratio,
            "process_over_pyarrow_paired": process_paired,
            "key_check_cost": check_cost,
            "key_check_cost_paired": check_cost_paired,
            "key_check_alone": check_alone,
            "engine_2_threads_keys_per_s": engine2["keys_per_s"],
            "engine_over_pyarrow_floor": engine2["seconds"] / floor,
        },
    )
    print(f"-> {path_out}")


if __name__ == "__main__":
    main()
