"""Record writes: what keeping one copy costs, beside a hand-written buffered-writer loop.

The same N records (one 8-byte cell each) are written twice — an insert pass, then an update pass
over the same records — in batches of 1000 into a fresh table per run, by:
  (hand)     ``with store.writer(t) as w: w.put(schema.encode(r), cells)`` — the strongest plain
             alternative: no lookup, so under a ``random`` prefix every update writes a SECOND copy;
  (keyshape) ``IndexedWriter(store, schema, indexes=[])`` — deterministic prefixes: no lookup;
             ``random``: one multi-get over every bucket per flush, updates land in the bucket found.
Reported per prefix and pass: records/s of each, keyshape / hand, and the copies per record left in
the table afterwards (the correctness the lookup buys). Embedded store by default; --hbase URL
(or $KEYSHAPE_HBASE_URL) runs the same on a real HBase.

Run: .venv/bin/python benchmarks/bench_writes.py [--rows N] [--hbase HOST:PORT] [--quick]
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, print_table, write_json  # noqa: E402

from keyshape.read import IndexedWriter  # noqa: E402
from keyshape.read.plan import original_key  # noqa: E402
from keyshape.schema import KeySchema  # noqa: E402
from keyshape.store import create_table_from_schema, open_store  # noqa: E402


def schema_for(strategy: str) -> KeySchema:
    return KeySchema.from_dict(
        {
            "table": {"name": f"bw_{strategy}_{uuid.uuid4().hex[:8]}"},
            "key": {
                "separator": "_",
                "prefix": {"strategy": strategy, "buckets": 16},
                "fields": [{"name": "user", "type": "string", "width": 8}, {"name": "n", "type": "int64"}],
            },
        }
    )


def hand(store: Any, schema: KeySchema, records: list[dict[str, Any]], value: bytes) -> None:
    with store.writer(schema.table.full_name, batch_size=1000) as w:
        for r in records:
            w.put(schema.encode(r), {b"d:v": value})


def keyshape_writer(store: Any, schema: KeySchema, records: list[dict[str, Any]], value: bytes) -> None:
    with IndexedWriter(store, schema, indexes=[], batch_size=1000) as w:
        for r in records:
            w.put(r, {b"d:v": value})


def copies_per_record(store: Any, schema: KeySchema, n: int) -> float:
    keys = {original_key(schema, k) for k, _ in store.scan(schema.table.full_name, columns=[b"d"])}
    rows = sum(1 for _ in store.scan(schema.table.full_name, columns=[b"d"]))
    return rows / max(len(keys), 1) if len(keys) == n else float("nan")


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=20_000)
    p.add_argument("--hbase", default=os.environ.get("KEYSHAPE_HBASE_URL") or None, metavar="HOST:PORT")
    args = p.parse_args()
    n = 500 if args.quick else args.rows
    records = [{"user": f"u{i % 997:07d}", "n": i} for i in range(n)]
    store = open_store(args.hbase)
    results, rows = [], []
    try:
        for strategy in ("mod", "random"):
            for who, fn in (("hand", hand), ("keyshape", keyshape_writer)):
                schema = schema_for(strategy)
                create_table_from_schema(store, schema, verify=False)
                try:
                    for pass_name, value in (("insert", b"1"), ("update", b"2")):
                        t0 = time.perf_counter()
                        fn(store, schema, records, value)
                        seconds = time.perf_counter() - t0
                        results.append({"prefix": strategy, "writer": who, "pass": pass_name, "records_per_s": n / seconds})
                    results[-1]["copies_per_record"] = copies_per_record(store, schema, n)
                finally:
                    store.delete_table(schema.table.full_name)
        for strategy in ("mod", "random"):
            for pass_name in ("insert", "update"):
                h = next(r for r in results if (r["prefix"], r["writer"], r["pass"]) == (strategy, "hand", pass_name))
                k = next(r for r in results if (r["prefix"], r["writer"], r["pass"]) == (strategy, "keyshape", pass_name))
                ratio = k["records_per_s"] / h["records_per_s"]
                k["ratio_to_hand"] = ratio
                rows.append(
                    [f"{strategy} {pass_name}", h["records_per_s"], k["records_per_s"], ratio, h.get("copies_per_record"), k.get("copies_per_record")]
                )
    finally:
        store.close()
    print_table(
        f"{n:,} records, batches of 1000, {'HBase ' + args.hbase if args.hbase else 'embedded store'}",
        ["prefix / pass", "hand rec/s", "keyshape rec/s", "keyshape / hand", "hand copies", "keyshape copies"],
        rows,
    )
    path = write_json("bench_writes", args.out, {"rows": n, "store": args.hbase or "embedded", "results": results})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
