"""Salted reads on a real HBase: merged scan vs plain scan, parallel vs sequential, random-salt gets.

The orders layout of examples/orders.toml (bucket + user + reverse time + order id) with B = 8, 16
and 100 buckets, and an unsalted copy (no prefix, one region), all holding the same N rows
(`keyshape.ops.live.load_workload`, batches of 1000). Per B, best of 3:
  * plain    — one range scan of the unsalted table (`store.scan`), N rows;
  * merged   — `keyshape.read.scan` over all B buckets, the same N rows in original key order,
               sequential (parallel=0) and with `--parallel` fetch threads;
  * gets     — K point reads of existing records: `keyshape.read.get` on the bucket-salted
               table (the bucket is computed: one Get) vs on a random-salted copy (the bucket
               is unknown: one multi-get of all B candidate keys).
Ratios: merged/plain rows/s (target >= 0.8), parallel/sequential, random-salt/direct gets/s.

Run: .venv/bin/python benchmarks/bench_hbase_reads.py [--rows N] [--hbase HOST:PORT] [--quick]
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, best_of, parser, print_table, write_json  # noqa: E402
from _hbase import add_hbase_arg, cluster_facts, drop_quietly, hbase_url, scratch_name  # noqa: E402

from keyshape import read  # noqa: E402
from keyshape.ops.live import load_workload  # noqa: E402
from keyshape.schema import KeySchema  # noqa: E402
from keyshape.store import create_table_from_schema, open_store  # noqa: E402
from keyshape.workload import generate  # noqa: E402

NAMESPACE = "kbench"
ORDERS = ROOT / "examples" / "orders.toml"


def orders_schema(rows: int, prefix: dict[str, Any] | None, regions: int | None, stem: str) -> KeySchema:
    """examples/orders.toml with another prefix (None = unsalted), plain family, scratch table."""
    d = tomllib.loads(ORDERS.read_text())
    d["table"] = {"name": scratch_name(stem), "namespace": NAMESPACE, "families": [{"name": "d"}]}
    d["workload"]["rows"] = rows
    d.pop("splits", None)
    if prefix is None:
        d["key"].pop("prefix", None)
        d["key"].pop("hash_fields", None)  # they feed a prefix only (a schema refuses them without one)
    else:
        d["key"]["prefix"] = prefix
        d["splits"] = {"algorithm": "prefix", "regions": regions}
    return KeySchema.from_dict(d, source=f"bench_hbase_reads ({stem})")


def load(store: Any, schema: KeySchema, rows: int) -> float:
    create_table_from_schema(store, schema)
    result = load_workload(store, schema, rows)
    return result.rows_per_second


def sample_records(schema: KeySchema, rows: int, k: int) -> list[dict[str, Any]]:
    """``k`` records of the workload (same seed as the load), spread over the whole run."""
    want = set(np.random.default_rng(1).choice(rows, size=min(k, rows), replace=False).tolist())
    out, base = [], 0
    for cols in generate(schema, rows, seed=0):
        n = len(next(iter(cols.values())))
        for i in sorted(j - base for j in want if base <= j < base + n):
            out.append({name: (v[i].item() if hasattr(v[i], "item") else v[i]) for name, v in cols.items()})
        base += n
    return out


def count(it: Any) -> int:
    n = 0
    for _ in it:
        n += 1
    return n


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000, help="rows per table (default 200,000)")
    ap.add_argument("--buckets", default="8,16,100", help="bucket counts (default 8,16,100)")
    ap.add_argument("--gets", type=int, default=2000, help="point reads per design (default 2,000)")
    ap.add_argument("--parallel", type=int, default=8, help="fetch threads of the parallel merged scan")
    add_hbase_arg(ap)
    args = ap.parse_args()
    rows = 5_000 if args.quick else args.rows
    gets = 200 if args.quick else args.gets
    repeat = 1 if args.quick else 3
    buckets = [int(b) for b in args.buckets.split(",")]
    created: list[str] = []
    scans, point = [], []
    with hbase_url(args.hbase) as (url, started):
        store = open_store(url)
        try:
            facts = cluster_facts(store, url, started)
            plain_schema = orders_schema(rows, None, None, "orders_plain")
            created.append(plain_schema.table.full_name)
            print(f"loading {rows:,} rows into the unsalted copy ...", flush=True)
            load(store, plain_schema, rows)
            plain_table = plain_schema.table.full_name
            t_plain, n_plain = best_of(repeat, lambda: count(store.scan(plain_table)))
            t_plain_rows, _ = best_of(repeat, lambda: count(read.scan(store, plain_schema)))
            assert n_plain == rows, (n_plain, rows)
            for b in buckets:
                regions = min(b, 20)
                salted = orders_schema(rows, {"strategy": "mod", "buckets": b}, regions, f"orders_mod{b}")
                rand = orders_schema(rows, {"strategy": "random", "buckets": b}, regions, f"orders_rnd{b}")
                created += [salted.table.full_name, rand.table.full_name]
                print(f"B={b}: loading the bucket-salted and random-salted tables ...", flush=True)
                load(store, salted, rows)
                load(store, rand, rows)
                t_seq, n_seq = best_of(repeat, lambda: count(read.scan(store, salted, parallel=0)))
                t_par, n_par = best_of(repeat, lambda: count(read.scan(store, salted, parallel=args.parallel)))
                assert n_seq == n_par == rows, (n_seq, n_par, rows)
                scans.append(
                    {
                        "buckets": b,
                        "regions": regions,
                        "rows": rows,
                        "plain_rows_per_s": rows / t_plain,
                        "plain_read_scan_rows_per_s": rows / t_plain_rows,
                        "merged_seq_rows_per_s": rows / t_seq,
                        "merged_par_rows_per_s": rows / t_par,
                        "merged_seq_over_plain": t_plain / t_seq,
                        "merged_par_over_plain": t_plain / t_par,
                        "parallel_over_sequential": t_seq / t_par,
                        "parallel": args.parallel,
                    }
                )
                records = sample_records(salted, rows, gets)
                # the workload is the same for both tables; only the prefix differs

                def direct() -> int:
                    return sum(len(read.get(store, salted, r)) for r in records)

                def fanout() -> int:
                    return sum(len(read.get(store, rand, r)) for r in records)

                t_direct, found_direct = best_of(repeat, direct)
                t_fanout, found_fanout = best_of(repeat, fanout)
                # order ids are unique, so every record is exactly one row in either table
                assert found_direct == found_fanout == len(records), (found_direct, found_fanout)
                point.append(
                    {
                        "buckets": b,
                        "gets": len(records),
                        "direct_gets_per_s": len(records) / t_direct,
                        "random_salt_gets_per_s": len(records) / t_fanout,
                        "random_over_direct": t_direct / t_fanout,
                    }
                )
        finally:
            for table in created:
                drop_quietly(store, table)
            store.close()
    print_table(
        f"Scans of {rows:,} rows on HBase {facts['version']}, best of {repeat} (rows/s)",
        ["buckets", "plain scan", "merged seq", f"merged par{args.parallel}", "seq/plain", "par/plain", "par/seq"],
        [
            [
                s["buckets"],
                s["plain_rows_per_s"],
                s["merged_seq_rows_per_s"],
                s["merged_par_rows_per_s"],
                s["merged_seq_over_plain"],
                s["merged_par_over_plain"],
                s["parallel_over_sequential"],
            ]
            for s in scans
        ],
    )
    print_table(
        f"Point reads of existing records, {gets:,} per design, best of {repeat} (gets/s)",
        ["buckets", "direct (1 Get)", "random salt (B-key multi-get)", "random/direct"],
        [[p["buckets"], p["direct_gets_per_s"], p["random_salt_gets_per_s"], p["random_over_direct"]] for p in point],
    )
    best = max(max(s["merged_seq_over_plain"], s["merged_par_over_plain"]) for s in scans)
    print(
        f"merged/plain target >= 0.8: {'met' if best >= 0.8 else 'missed'} "
        f"(best {best:.2f}; plain scan through keyshape.read.scan: {rows / t_plain_rows:,.0f} rows/s)"
    )
    path = write_json(
        "bench_hbase_reads",
        args.out,
        {"hbase": facts, "rows": rows, "repeat": repeat, "scans": scans, "gets": point, "plain_read_scan_rows_per_s": rows / t_plain_rows},
    )
    print(f"-> {path}")


if __name__ == "__main__":
    main()
