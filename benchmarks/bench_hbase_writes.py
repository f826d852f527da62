"""Writes on a real HBase: a hand-written row-key write test (a RowKeyPerformanceTester), done properly.

The same N rows (event ids 1..N, one 8-byte cell each) are written through keyshape's HBase store
in batches of 1000 (`keyshape.ops.live.load_workload`) into four tables:
  (a) sequential keys (Bytes.toBytes(long id)), one region, no pre-split;
  (b) the same keys into R regions pre-split at id = N*i/R;
  (c) md5_hex(id)[:8] + id, pre-split with HexStringSplit into R regions;
  (d) "%02d" % (hash(id) % R) + id (bucket salt), one region per bucket.
All four get the same small split settings (MAX_FILESIZE, MEMSTORE_FLUSHSIZE, constant-size split
policy; --split-mb 0 keeps HBase's defaults) so HBase's own splitting shows at benchmark sizes.
Reported per table: rows/s and its ratio to (a); regions at the end (the splits that happened);
max/mean write requests per region from the cluster's RegionLoad; max/mean rows per final
region; and the hot-region share: of the writes counted in each ~1 s poll during the load, the
share that went to the busiest region (1.0 = one hot region, 1/R = even), and the same share per
write batch computed from the keys and the created regions (exact; the polls smear ~1 s).
Designs (b)-(d) use R regions (--regions, default 16); (a) starts with one.
Per region server (the point of salting on a cluster): each server's share of the write requests
in the final region loads, max/mean over the servers holding the table, and the hot-server share
per poll (of the writes counted in a poll, the share of the busiest server; 1/servers = even).
With --regionservers N a pseudo-distributed cluster of N region server JVMs is started for the
run (tools/hbase/cluster.py). On a 2-core machine those JVMs share the cores with the client, so
rows/s cannot grow with N here; the per-server spread is what the cluster run shows.

Run: .venv/bin/python benchmarks/bench_hbase_writes.py [--rows N] [--hbase HOST:PORT]
     [--regionservers N] [--quick]
"""

from __future__ import annotations

import os
import struct
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, print_table, write_json  # noqa: E402
from _hbase import (  # noqa: E402
    add_hbase_arg,
    cluster_facts,
    drop_quietly,
    hbase_url,
    scratch_name,
    set_table_attributes,
)

from keyshape.core.hbytes import to_string_binary  # noqa: E402
from keyshape.core.regions import RegionMap  # noqa: E402
from keyshape.ops.live import LiveHeat, load_workload  # noqa: E402
from keyshape.schema import KeySchema  # noqa: E402
from keyshape.store import ensure_table, open_store  # noqa: E402
from keyshape.workload import generate  # noqa: E402

NAMESPACE = "kbench"
SPLIT_POLICY = "org.apache.hadoop.hbase.regionserver.ConstantSizeRegionSplitPolicy"


def schemas(rows: int, regions: int) -> list[tuple[str, str, KeySchema]]:
    """The four designs, all over the same workload (event_id = 1..rows, written in order)."""
    field = {"name": "event_id", "type": "int64", "encoding": "hbase"}
    workload = {"rows": rows, "fields": {"event_id": {"generator": "sequential", "start": 1}}}
    seq_splits = [to_string_binary(struct.pack(">q", rows * i // regions)) for i in range(1, regions)]
    designs: list[tuple[str, str, dict[str, Any], dict[str, Any] | None]] = [
        ("a", "seq", {"strategy": "none"}, None),
        ("b", "seq, pre-split", {"strategy": "none"}, {"algorithm": "explicit", "keys": seq_splits}),
        ("c", "md5, hex splits", {"strategy": "md5", "length": 8}, {"algorithm": "hex", "regions": regions}),
        ("d", "salt, aligned", {"strategy": "mod", "buckets": regions}, {"algorithm": "prefix", "regions": regions}),
    ]
    out = []
    for case, label, prefix, splits in designs:
        d: dict[str, Any] = {
            "table": {"name": scratch_name(f"writes_{case}"), "namespace": NAMESPACE, "families": [{"name": "d"}]},
            "key": {"prefix": prefix, "fields": [field]},
            "workload": workload,
        }
        if splits:
            d["splits"] = splits
        out.append((case, label, KeySchema.from_dict(d, source=f"bench_hbase_writes ({case})")))
    return out


def settle(store: Any, table: str, timeout: float = 20.0) -> list[Any]:
    """Regions once the region servers' reported write counters (sent every msginterval) and
    the region layout stop changing for two polls in a row, or after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        regions = store.regions(table)
        view = [(r.name, r.write_requests) for r in regions]
        if view == last or time.monotonic() > deadline:
            return regions
        last = view
        time.sleep(1.5)


def run_case(store: Any, case: str, label: str, schema: KeySchema, rows: int, batch: int, attributes: dict[str, str]) -> dict[str, Any]:
    table = schema.table.full_name
    ensure_table(store, schema.table, schema.split_keys(), verify=True)
    if attributes:
        set_table_attributes(store, table, attributes)
    heat = LiveHeat()
    heat.add(store.regions(table))
    polled = [time.monotonic()]

    def progress(done: int, total: int) -> None:
        # one cluster-status poll per second at most, so polling costs the load next to nothing
        if time.monotonic() - polled[0] >= 1.0:
            heat.add(store.regions(table))
            polled[0] = time.monotonic()

    result = load_workload(store, schema, rows, batch_size=batch, progress=progress)
    regions = settle(store, table)
    heat.add(regions)
    writes = np.array([r.write_requests for r in regions], dtype=np.float64)
    keys = [k for cols in generate(schema, rows, seed=0) for k in schema.encode_many(cols)]
    per_region = np.bincount(RegionMap([r.start for r in regions[1:]]).assign(keys), minlength=len(regions))
    # by key: each batch's rows in the regions the table was created with (exact, no counter lag)
    created = RegionMap(schema.split_keys()).assign(keys)
    batch_share = float(np.mean([np.bincount(created[lo : lo + batch]).max() / len(created[lo : lo + batch]) for lo in range(0, len(keys), batch)]))
    shares = [(s.writes.max() / s.total_writes, s.total_writes) for s in heat.samples if s.total_writes > 0]
    hot = sum(sh * w for sh, w in shares) / sum(w for _, w in shares) if shares else None
    server_shares = [(max(by_server(s.servers, s.writes).values()) / s.total_writes, s.total_writes) for s in heat.samples if s.total_writes > 0]
    hot_server = sum(sh * w for sh, w in server_shares) / sum(w for _, w in server_shares) if server_shares else None
    per_server = by_server([r.server for r in regions], writes)
    server_total = sum(per_server.values())
    server_mean = server_total / len(per_server)
    return {
        "case": case,
        "design": label,
        "table": table,
        "rows": result.rows,
        "seconds": result.seconds,
        "rows_per_s": result.rows_per_second,
        "regions_created": len(schema.split_keys()) + 1,
        "regions_end": len(regions),
        "splits_happened": len(regions) - (len(schema.split_keys()) + 1),
        "write_requests_max": int(writes.max()),
        "write_requests_mean": float(writes.mean()),
        "write_requests_max_over_mean": float(writes.max() / writes.mean()) if writes.mean() > 0 else None,
        "rows_per_region_max": int(per_region.max()),
        "rows_per_region_mean": float(per_region.mean()),
        "rows_max_over_mean": float(per_region.max() / per_region.mean()),
        "hot_region_share": hot,
        "polls": len(heat.samples),
        "batch_hot_share": batch_share,
        "servers": sorted({r.server for r in regions}),
        "server_write_share": {k: v / server_total if server_total else None for k, v in sorted(per_server.items())},
        "server_writes_max_over_mean": max(per_server.values()) / server_mean if server_mean else None,
        "hot_server_share": hot_server,
    }


def by_server(servers: Any, writes: Any) -> dict[str, float]:
    """Write requests summed per server name."""
    out: dict[str, float] = {}
    for server, w in zip(servers, writes):
        out[server] = out.get(server, 0.0) + float(w)
    return out


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000, help="rows per table (default 200,000)")
    ap.add_argument("--regions", type=int, default=16, help="pre-split regions / buckets (default 16)")
    ap.add_argument("--batch", type=int, default=1000, help="rows per write batch (default 1000)")
    ap.add_argument(
        "--split-mb",
        type=int,
        default=2,
        help="MAX_FILESIZE in MB for every table (default 2; 0 = HBase's defaults, 10 GB, so no split happens at these sizes)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the tables (default: delete them)")
    add_hbase_arg(ap, cluster=True)
    args = ap.parse_args()
    rows = 5_000 if args.quick else args.rows
    attributes = (
        {}
        if args.split_mb <= 0
        else {
            "MAX_FILESIZE": str(args.split_mb * 2**20),
            # HBase refuses flush sizes below 1 MB; a split needs flushed store files to measure
            "MEMSTORE_FLUSHSIZE": str(max(1, args.split_mb // 2) * 2**20),
            "SPLIT_POLICY": SPLIT_POLICY,
        }
    )
    with hbase_url(args.hbase, args.regionservers) as (url, started):
        store = open_store(url)
        try:
            facts = cluster_facts(store, url, started)
            results = []
            for case, label, schema in schemas(rows, args.regions):
                try:
                    print(f"({case}) {label}: writing {rows:,} rows ...", flush=True)
                    results.append(run_case(store, case, label, schema, rows, args.batch, attributes))
                finally:
                    if not args.keep:
                        drop_quietly(store, schema.table.full_name)
        finally:
            store.close()
    base = results[0]["rows_per_s"]
    for r in results:
        r["ratio_to_a"] = r["rows_per_s"] / base if base > 0 else None
    print_table(
        f"Writes, {rows:,} rows in batches of {args.batch} on HBase {facts['version']} "
        f"({facts['region_servers']} region server(s)); split at {args.split_mb or 'default'} MB",
        [
            "design",
            "rows/s",
            "vs (a)",
            "regions",
            "splits",
            "writes max/mean",
            "rows max/mean",
            "hot share/poll",
            "hot share/batch",
            "servers",
            "server max/mean",
            "hot server/poll",
        ],
        [
            [
                f"({r['case']}) {r['design']}",
                r["rows_per_s"],
                r["ratio_to_a"],
                r["regions_end"],
                r["splits_happened"],
                r["write_requests_max_over_mean"],
                r["rows_max_over_mean"],
                r["hot_region_share"],
                r["batch_hot_share"],
                len(r["servers"]),
                r["server_writes_max_over_mean"],
                r["hot_server_share"],
            ]
            for r in results
        ],
    )
    if facts["region_servers"] > 1:
        print_table(
            "Write share per region server (final region loads)",
            ["design", *sorted({s for r in results for s in r["server_write_share"]})],
            [
                [
                    f"({r['case']}) {r['design']}",
                    *(r["server_write_share"].get(s) for s in sorted({s for q in results for s in q["server_write_share"]})),
                ]
                for r in results
            ],
        )
        print(
            f"{facts['region_servers']} region server JVMs on {os.cpu_count()} cores: they share the "
            "cores with this client, so rows/s shows no cluster speed-up here; the per-server "
            "shares show where a real cluster's load would go."
        )
    if facts["region_servers"] == 1:
        print(
            "One region server: every region shares one JVM, one WAL and one disk, so spreading "
            "writes over regions cannot add write capacity here; the hot-region share shows "
            "where the load went, which on a cluster decides which server saturates."
        )
    path = write_json(
        "bench_hbase_writes",
        args.out,
        {"hbase": facts, "rows": rows, "batch": args.batch, "regions": args.regions, "table_attributes": attributes, "results": results},
    )
    print(f"-> {path}")


if __name__ == "__main__":
    main()
