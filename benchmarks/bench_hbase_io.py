"""HBase I/O against the Java client: writes and scans of the same rows, side by side in one run.

The rows of examples/orders.toml (N rows, 41-byte keys, one 8-byte cell ``d:v`` = row_value(i),
100 buckets in 20 pre-split regions) are written, in interleaved rounds, each round into fresh
tables pre-split the same way, by:
  * keyshape writer — ``store.writer(table, batch_size=1000)``, one writer for all N rows (two
                      batches in flight, the default), and the same with ``in_flight=1``;
  * keyshape load   — ``keyshape.ops.live.load_workload`` (generates and encodes as it goes);
  * Java            — ``benchmarks/java/IoBench.java`` (``BufferedMutator`` with the client's
                      defaults, then a ``Scan`` with caching 1000), built with javac against
                      tools/hbase/lib/*; one fresh JVM per round writing two tables: the first is
                      the "fresh JVM" figure, the second (same JVM) the "warm JVM" one;
  * happybase       — ``batch(batch_size=1000)`` / ``scan(batch_size=1000)`` through a Thrift
                      gateway, when happybase is installed and ``--thrift HOST:PORT`` is given.
Scans, each round: keyshape's plain ``store.scan`` of the keyshape-written table, the merged salted
scan ``keyshape.read.scan`` (exact key order) of it (100 buckets) and of a 16-bucket copy loaded
once, the Java scanner of the Java-written table, happybase's scan.
Reported: medians over the rounds in rows/s, ratios of medians to Java fresh and warm, and the
CPU split: client CPU seconds (this process, or the child JVM) and server CPU seconds (the HBase
JVMs found listening on the ZooKeeper / region server ports, read from /proc) per wall second.
Keyshape runs in this process (a fresh store per round); the JVM start itself is not timed.

Run: .venv/bin/python benchmarks/bench_hbase_io.py [--rows N] [--rounds R] [--hbase HOST:PORT]
     [--thrift HOST:PORT] [--quick]
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, parser, print_table, write_json  # noqa: E402
from _hbase import THRIFT, add_hbase_arg, cluster_facts, drop_quietly, hbase_url, scratch_name, standalone  # noqa: E402

from keyshape import read  # noqa: E402
from keyshape.ops.live import load_workload, row_value  # noqa: E402
from keyshape.schema import KeySchema  # noqa: E402
from keyshape.store import ensure_table, open_store  # noqa: E402
from keyshape.workload import generate  # noqa: E402

NAMESPACE = "kbench"
ORDERS = ROOT / "examples" / "orders.toml"
JAVA_SRC = ROOT / "benchmarks" / "java" / "IoBench.java"
JAVA_BUILD = ROOT / "benchmarks" / "java" / "build"
LIB = standalone.LIB  # the default HBase line's jars (tools/hbase/lines/<version>/lib)
COLUMN = b"d:v"
JAVA_TIMEOUT = 900


def orders_schema(rows: int, buckets: int, regions: int, stem: str) -> KeySchema:
    """examples/orders.toml with ``buckets`` buckets in ``regions`` regions, plain family ``d``."""
    d = tomllib.loads(ORDERS.read_text())
    d["table"] = {"name": scratch_name(stem), "namespace": NAMESPACE, "families": [{"name": "d"}]}
    d["workload"]["rows"] = rows
    d["key"]["prefix"] = {"strategy": "mod", "buckets": buckets}
    d["splits"] = {"algorithm": "prefix", "regions": regions}
    return KeySchema.from_dict(d, source=f"bench_hbase_io ({stem})")


def workload_keys(schema: KeySchema, rows: int) -> list[bytes]:
    return [k for cols in generate(schema, rows, seed=0) for k in schema.encode_many(cols)]


# --- CPU accounting ------------------------------------------------------------------------------


def _listening_inodes(ports: set[int]) -> set[str]:
    inodes = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) in ports:  # 0A = LISTEN
                inodes.add(parts[9])
    return inodes


def server_pids(ports: set[int]) -> list[int]:
    """Pids of this user's processes listening on ``ports`` (the HBase JVMs); [] if unknown."""
    wanted = {f"socket:[{i}]" for i in _listening_inodes(ports)}
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) in wanted:
                    pids.append(int(entry.name))
                    break
        except OSError:
            continue
    return sorted(pids)


def cpu_seconds(pids: list[int]) -> float:
    """utime + stime of ``pids`` (all threads), in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError):
            pass
    return total / tick


class Meter:
    """Wall, client CPU (this process + waited-for children) and server CPU of one timed step."""

    def __init__(self, servers: list[int]) -> None:
        self.servers = servers

    def __call__(self, fn: Callable[[], Any]) -> tuple[dict[str, float], Any]:
        me0 = time.process_time()
        ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        sv0 = cpu_seconds(self.servers)
        t0 = time.perf_counter()
        result = fn()
        wall = time.perf_counter() - t0
        ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        client = time.process_time() - me0 + (ch1.ru_utime + ch1.ru_stime) - (ch0.ru_utime + ch0.ru_stime)
        return {"wall": wall, "client_cpu": client, "server_cpu": cpu_seconds(self.servers) - sv0}, result


# --- the clients -------------------------------------------------------------------------------


def build_java() -> list[str]:
    """Compile IoBench.java when its class is missing or older; the java command prefix."""
    if shutil.which("javac") is None or not any(LIB.glob("*.jar")):
        raise SystemExit("error: the Java reference client needs javac (JDK 11+) and the HBase jars (tools/hbase/fetch.sh)")
    target = JAVA_BUILD / "IoBench.class"
    if not target.exists() or target.stat().st_mtime < JAVA_SRC.stat().st_mtime:
        JAVA_BUILD.mkdir(parents=True, exist_ok=True)
        subprocess.run(["javac", "-nowarn", "-cp", f"{LIB}/*", "-d", str(JAVA_BUILD), str(JAVA_SRC)], check=True, capture_output=True)
    return ["java", "-Xmx1g", *standalone.JDK17_FLAGS, "-cp", f"{LIB}/*:{JAVA_BUILD}", "IoBench"]


def write_rows_file(path: Path, keys: list[bytes]) -> None:
    with open(path, "wb") as f:
        f.write(b"".join(struct.pack(">H", len(k)) + k + row_value(i) for i, k in enumerate(keys)))


def run_java(java: list[str], url: str, rows_file: Path, tables: list[str]) -> list[dict[str, Any]]:
    try:
        out = subprocess.run([*java, url, str(rows_file), "d", *tables], capture_output=True, text=True, timeout=JAVA_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise SystemExit(
            f"error: the Java reference client took over {JAVA_TIMEOUT} s (is every region server up? the client retries for minutes)"
        ) from None
    if out.returncode != 0:
        tail = "\n".join(out.stderr.strip().splitlines()[-5:])
        raise SystemExit(f"error: the Java reference client failed ({out.returncode}):\n{tail}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def keyshape_writer(store: Any, table: str, keys: list[bytes], in_flight: int = 2) -> int:
    with store.writer(table, batch_size=1000, in_flight=in_flight) as writer:
        for i, key in enumerate(keys):
            writer.put(key, {COLUMN: row_value(i)})
    return len(keys)


def count(it: Iterator[Any]) -> int:
    n = 0
    for _ in it:
        n += 1
    return n


def happybase_connection(thrift: str | None) -> Any:
    if not thrift:
        return None
    try:
        import happybase
    except ImportError:
        print("happybase is not installed: its rows are skipped", flush=True)
        return None
    host, _, port = thrift.rpartition(":")
    return happybase.Connection(host or "127.0.0.1", int(port or 9090), autoconnect=True)


def happybase_write(conn: Any, table: str, keys: list[bytes]) -> int:
    t = conn.table(table)
    with t.batch(batch_size=1000) as b:
        for i, key in enumerate(keys):
            b.put(key, {COLUMN: row_value(i)})
    return len(keys)


# --- main ----------------------------------------------------------------------------------------


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000, help="rows (default 200,000)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5); medians")
    ap.add_argument(
        "--thrift",
        default=None,
        help="HOST:PORT of a Thrift gateway for happybase (when this script starts its own HBase and happybase is installed, it starts one)",
    )
    add_hbase_arg(ap)
    args = ap.parse_args()
    # a plain `kill` still drops the scratch tables and stops an HBase started for the run
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    rows = 5_000 if args.quick else args.rows
    rounds = 1 if args.quick else args.rounds
    java = build_java()
    samples: dict[str, list[dict[str, float]]] = {}

    def note(name: str, m: dict[str, float], n: int) -> None:
        if n != rows:
            raise SystemExit(f"error: {name} handled {n} rows, expected {rows}")
        samples.setdefault(name, []).append(m)

    try:
        import happybase  # noqa: F401

        thrift_here = not args.hbase and not args.thrift
    except ImportError:
        thrift_here = False
    with hbase_url(args.hbase, thrift=thrift_here) as (url, started):
        store = open_store(url)
        hb = happybase_connection(args.thrift or THRIFT.get(url))
        facts = cluster_facts(store, url, started)
        ports = {int(url.rsplit(":", 1)[1])}
        base = orders_schema(rows, 100, 20, "io_base")
        keys = workload_keys(base, rows)
        rows_file = ROOT / "benchmarks" / "results" / f"io_rows_{os.getpid()}.tmp"
        write_rows_file(rows_file, keys)
        s16 = orders_schema(rows, 16, 16, "io_m16")
        created = [s16.table.full_name]
        try:
            ensure_table(store, s16.table, s16.split_keys())
            load_workload(store, s16, rows)
            ports |= {r.port for r in store.cluster.region_list(NAMESPACE, s16.table.name).regions}
            meter = Meter(server_pids(ports))
            print(f"server pids for CPU accounting: {meter.servers or 'not found'}", flush=True)
            for rnd in range(rounds):
                print(f"round {rnd + 1}/{rounds} ...", flush=True)
                tables = {
                    name: orders_schema(rows, 100, 20, f"io_{name}")
                    for name in ("writer", "writer1", "load", "java0", "java1", *(["hb"] if hb else []))
                }
                for s in tables.values():
                    created.append(s.table.full_name)
                    ensure_table(store, s.table, s.split_keys())
                # rotate the order so no client always runs first (memstore, compactions)
                order = ["writer", "writer1", "load", "java", "hb"][: 5 if hb else 4]
                order = order[rnd % len(order) :] + order[: rnd % len(order)]
                for client in order:
                    if client == "writer":
                        m, n = meter(lambda: keyshape_writer(store, tables["writer"].table.full_name, keys))
                        note("ks writer", m, n)
                    elif client == "writer1":
                        m, n = meter(lambda: keyshape_writer(store, tables["writer1"].table.full_name, keys, 1))
                        note("ks writer 1 in flight", m, n)
                    elif client == "load":
                        m, res = meter(lambda: load_workload(store, tables["load"], rows))
                        note("ks load", m, res.rows)
                    elif client == "java":
                        names = [tables["java0"].table.full_name, tables["java1"].table.full_name]
                        m, lines = meter(lambda: run_java(java, url, rows_file, names))
                        for line in lines:
                            label = f"Java {'mutator' if line['op'] == 'write' else 'scan'} {'fresh' if line['round'] == 0 else 'warm'}"
                            # the JVM's CPU is split over its four timed steps by wall time
                            share = line["seconds"] / sum(x["seconds"] for x in lines)
                            note(
                                label,
                                {"wall": line["seconds"], "client_cpu": m["client_cpu"] * share, "server_cpu": m["server_cpu"] * share},
                                line["rows"],
                            )
                    elif client == "hb":
                        m, n = meter(lambda: happybase_write(hb, tables["hb"].table.full_name, keys))
                        note("happybase batch", m, n)
                written = tables["writer"]
                scans: list[tuple[str, Callable[[], int]]] = [
                    ("ks plain scan", lambda: count(store.scan(written.table.full_name))),
                    ("ks merged 100", lambda: count(read.scan(store, written))),
                    ("ks merged 16", lambda: count(read.scan(store, s16))),
                ]
                if hb:
                    scans.append(("happybase scan", lambda: count(hb.table(written.table.full_name).scan(batch_size=1000))))
                for name, fn in scans[rnd % len(scans) :] + scans[: rnd % len(scans)]:
                    m, n = meter(fn)
                    note(name, m, n)
                for s in tables.values():
                    drop_quietly(store, s.table.full_name)
        finally:
            rows_file.unlink(missing_ok=True)
            for table in created:
                drop_quietly(store, table)
            store.close()
    results = summarize(samples, rows)
    print_table(
        f"HBase I/O, {rows:,} rows of examples/orders.toml (100 buckets, 20 regions), HBase "
        f"{facts['version']}, {facts['region_servers']} region server(s), medians of {rounds} "
        "interleaved rounds",
        ["client", "rows/s", "vs Java fresh", "vs Java warm", "client cores", "server cores"],
        [[r["client"], r["rows_per_s"], r["vs_java_fresh"], r["vs_java_warm"], r["client_cores"], r["server_cores"]] for r in results],
    )
    print(
        f"client/server cores = CPU seconds per wall second (median); {os.cpu_count()} cores shared "
        "by client and server" + ("" if meter.servers else "; server pids not found, server CPU is 0")
    )
    path = write_json(
        "bench_hbase_io",
        args.out,
        {"hbase": facts, "rows": rows, "rounds": rounds, "server_pids": meter.servers, "results": results, "samples": samples},
    )
    print(f"-> {path}")


def summarize(samples: dict[str, list[dict[str, float]]], rows: int) -> list[dict[str, Any]]:
    def med(name: str, key: str = "rows_per_s") -> float | None:
        ms = samples.get(name)
        if not ms:
            return None
        if key == "rows_per_s":
            return statistics.median(rows / m["wall"] for m in ms)
        return statistics.median(m[key] / m["wall"] for m in ms)

    out = []
    for name in samples:
        kind = "scan" if "scan" in name or "merged" in name else "mutator"
        fresh, warm = med(f"Java {kind} fresh"), med(f"Java {kind} warm")
        rate = med(name)
        out.append(
            {
                "client": name,
                "rows_per_s": rate,
                "vs_java_fresh": rate / fresh if rate and fresh else None,
                "vs_java_warm": rate / warm if rate and warm else None,
                "client_cores": med(name, "client_cpu"),
                "server_cores": med(name, "server_cpu"),
            }
        )
    order = [
        "Java mutator fresh",
        "Java mutator warm",
        "happybase batch",
        "ks writer",
        "ks writer 1 in flight",
        "ks load",
        "Java scan fresh",
        "Java scan warm",
        "ks plain scan",
        "ks merged 100",
        "ks merged 16",
        "happybase scan",
    ]
    return sorted(out, key=lambda r: order.index(r["client"]) if r["client"] in order else len(order))


if __name__ == "__main__":
    main()
