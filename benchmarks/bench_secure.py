"""Secure connections on a real HBase: load and scan rows/s under Kerberos authentication,
integrity and privacy (and privacy inside TLS, and TLS alone), beside the plain connection, in one
run against one server.

A throw-away MIT KDC and a secured standalone HBase (tools/hbase/secure.py) are started on free
loopback ports for the run; the server offers all three protection levels, TLS beside plaintext,
and also lets SIMPLE clients in, so every mode talks to the same JVM. Each round writes N rows
(100-byte values, batches of 1000) into a fresh 8-region table per mode through
``store.writer`` and scans them back (caching 1000); modes are interleaved round by round and the
best round of each is reported (other load on a shared machine only ever adds time). The ratio
column is rows/s relative to the plain connection.

Run: .venv/bin/python benchmarks/bench_secure.py [--rows N] [--rounds R] [--quick]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, parser, print_table, write_json  # noqa: E402

sys.path.insert(0, str(ROOT / "tools" / "hbase"))
import secure  # noqa: E402
import standalone  # noqa: E402

from keyshape.schema.specs import FamilySpec, TableSpec  # noqa: E402
from keyshape.store import open_store  # noqa: E402


def modes(inst: Any) -> dict[str, str]:
    kt = str(inst.kdc.keytab("alice"))
    krb = {"auth": "kerberos", "principal": "alice", "keytab": kt}
    tls = {"tls": "true", "tls_ca": str(inst.tls_dir / "ca.pem")}
    return {
        "plain (SIMPLE)": inst.secure_url(),
        "kerberos authentication": inst.secure_url(**krb, protection="authentication"),
        "kerberos integrity": inst.secure_url(**krb, protection="integrity"),
        "kerberos privacy": inst.secure_url(**krb, protection="privacy"),
        "TLS (SIMPLE)": inst.secure_url(**tls),
        "TLS + kerberos privacy": inst.secure_url(**krb, protection="privacy", **tls),
    }


def one_round(url: str, rows: int, value: bytes) -> tuple[float, float]:
    """(load seconds, scan seconds) of ``rows`` rows into a fresh pre-split table."""
    table = f"bench_secure_{time.monotonic_ns()}"
    store = open_store(url)
    try:
        splits = [bytes([b]) for b in range(32, 256, 28)][1:8]
        store.create_table(TableSpec(table, families=[FamilySpec("d")]), splits)
        keys = [b"%c%07d" % (32 + (i * 2654435761) % 224, i) for i in range(rows)]
        t0 = time.perf_counter()
        with store.writer(table, batch_size=1000) as w:
            for key in keys:
                w.put(key, {b"d:v": value})
        load = time.perf_counter() - t0
        t0 = time.perf_counter()
        seen = sum(1 for _ in store.scan(table, batch_size=1000))
        scan = time.perf_counter() - t0
        if seen != rows:
            raise SystemExit(f"error: scanned {seen} rows of {rows} written in {table}")
        store.delete_table(table)
        return load, scan
    finally:
        store.close()


def main() -> None:
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    rows, rounds = (2000, 1) if args.quick else (args.rows, args.rounds)
    run = standalone.HERE / "run" / "bench-secure"
    print("starting a KDC and a secured standalone HBase (tools/hbase/run/bench-secure) ...", flush=True)
    t0 = time.perf_counter()
    try:
        inst = secure.start_secure(run, allow_simple=True, authorization=False)
    except standalone.StartFailed as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"ready after {time.perf_counter() - t0:.0f} s", flush=True)
    best: dict[str, list[float]] = {}
    try:
        urls = modes(inst)
        value = bytes(range(100))
        for r in range(rounds):
            for name, url in urls.items():
                load, scan = one_round(url, rows, value)
                old = best.setdefault(name, [load, scan])
                best[name] = [min(old[0], load), min(old[1], scan)]
                print(f"round {r + 1}/{rounds} {name}: load {rows / load:,.0f} rows/s, scan {rows / scan:,.0f} rows/s", flush=True)
    finally:
        secure.stop_secure(inst)
    plain_load, plain_scan = (rows / s for s in best["plain (SIMPLE)"])
    results = []
    for name, (load, scan) in best.items():
        results.append(
            {
                "mode": name,
                "load_rows_per_s": rows / load,
                "scan_rows_per_s": rows / scan,
                "load_ratio": rows / load / plain_load,
                "scan_ratio": rows / scan / plain_scan,
            }
        )
    print_table(
        f"{rows:,} rows, 100-byte values, best of {rounds} interleaved rounds",
        ["mode", "load rows/s", "vs plain", "scan rows/s", "vs plain"],
        [[r["mode"], r["load_rows_per_s"], r["load_ratio"], r["scan_rows_per_s"], r["scan_ratio"]] for r in results],
    )
    path = write_json("bench_secure", args.out, {"rows": rows, "rounds": rounds, "value_bytes": 100, "results": results})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
