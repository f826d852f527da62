#!/usr/bin/env python3
"""tools/hbase's command line: fetch, start (standalone or, with --regionservers, the cluster),
stop, kill, status and ready (start.sh, stop.sh, status.sh, ready.sh and fetch.sh run it;
`python tools/hbase/standalone.py ...` does too). The logic is in standalone.py and cluster.py;
this module only parses, calls one of them and prints.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import cluster
import standalone
from standalone import DEFAULT_VERSION, HERE, LINES, StartFailed, Standalone, UnknownVersion, _run_dir_line, line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(standalone.__doc__ or "").split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    version_help = f"the HBase line: {', '.join(LINES)} (default {DEFAULT_VERSION}, or $KEYSHAPE_HBASE_VERSION)"
    p = sub.add_parser("fetch", help="copy the line's HBase jars from Maven Central into tools/hbase/lines/V/lib")
    p.add_argument("--version", default=None, metavar="V", help=version_help)
    p = sub.add_parser("start", help="start and wait until ready")
    p.add_argument("--version", default=None, metavar="V", help=version_help)
    p.add_argument("--thrift", action="store_true", help="also start the Thrift1 gateway")
    p.add_argument(
        "--regionservers", type=int, default=None, metavar="N", help="a pseudo-distributed cluster: ZooKeeper, HMaster and N region server JVMs"
    )
    p.add_argument("--timeout", type=float, default=240.0)
    p = sub.add_parser("stop", help="shut down (the data stays for the next start unless --delete-data)")
    p.add_argument("--delete-data", action="store_true", help="also delete the data folder")
    p.add_argument("--keep-data", action="store_true", help="(the default; kept for old scripts)")
    sub.add_parser("kill", help="SIGKILL the master (keeps data)")
    p = sub.add_parser("status", help="print whether it runs; exit 0 if it does")
    p.add_argument("--json", action="store_true", help="print pids and ports as JSON")
    sub.add_parser("ready", help="exit 0 only if a round trip works")
    args = ap.parse_args(argv)
    hb: Standalone
    run_dir = Path(os.environ.get("KEYSHAPE_HBASE_RUN_DIR", HERE / "run"))
    try:
        # start/fetch: --version, else $KEYSHAPE_HBASE_VERSION, else the default line; the other
        # commands act on what runs in the run folder, so they use the line it was started with.
        version = line(getattr(args, "version", None) or (None if args.cmd in ("start", "fetch") else _run_dir_line(run_dir))).version
    except UnknownVersion as e:
        print(e, file=sys.stderr)
        return 2
    if args.cmd == "start" and args.regionservers is not None:
        if Standalone(version=version).master_pid() is not None and cluster.Cluster.load(run_dir) is None:
            print("a standalone HBase runs from this run folder; stop it first (tools/hbase/stop.sh)", file=sys.stderr)
            return 2
        try:
            hb = cluster.Cluster(regionservers=args.regionservers, version=version)
        except ValueError as e:
            print(e, file=sys.stderr)
            return 2
    else:
        hb = cluster.Cluster.load(run_dir) or Standalone(version=version)
    if args.cmd == "status" and args.json:
        if isinstance(hb, cluster.Cluster):
            state = hb.status()
        else:
            pid, tp = hb.master_pid(), hb.thrift_pid()
            state = {
                "zookeeper": hb.url,
                "master": {"pid": pid, "port": hb.master_port} if pid else None,
                "regionservers": [{"pid": pid, "host": "localhost", "port": hb.rs_port}] if pid else [],
                "thrift": {"pid": tp, "port": hb.thrift_port} if tp else None,
            }
        print(json.dumps(state))
        return 0 if state["master"] else 1
    try:
        if args.cmd == "fetch":
            t = time.monotonic()
            ran = hb.fetch()
            print(f"HBase {hb.version} jars in {hb.lib}" + (f" (fetched in {time.monotonic() - t:.0f}s)" if ran else " (up to date)"))
        elif args.cmd == "start":
            t = time.monotonic()
            hb.start(thrift=args.thrift, timeout=args.timeout)
            servers = f" with {hb.regionservers} region servers" if isinstance(hb, cluster.Cluster) else ""
            print(
                f"HBase {hb.version}{servers} ready in {time.monotonic() - t:.0f}s: ZooKeeper {hb.url} "
                f"(export KEYSHAPE_HBASE_URL={hb.url}); logs in {hb.log_dir}" + (f"; Thrift1 on 127.0.0.1:{hb.thrift_port}" if args.thrift else "")
            )
        elif args.cmd == "stop":
            # Deleting a user's tables is never the default of a command called "stop".
            hb.stop(keep_data=not args.delete_data)
            print("HBase stopped" + (f"; deleted {hb.data_dir}" if args.delete_data else f"; data kept in {hb.data_dir}"))
        elif args.cmd == "kill":
            hb.kill()
            print("HBase master killed; data kept")
        elif args.cmd == "status":
            pid = hb.master_pid()
            if pid is None:
                print("HBase is not running")
                return 1
            tp = hb.thrift_pid()
            print(
                f"HBase {hb.version} master pid {pid}, ZooKeeper {hb.url}, RSS {hb.rss_mb():.0f} MB"
                + (f"; Thrift1 pid {tp} on 127.0.0.1:{hb.thrift_port}" if tp else "")
            )
        elif args.cmd == "ready":
            ok = hb.is_ready()
            print("ready" if ok else "not ready")
            return 0 if ok else 1
    except StartFailed as e:
        print(e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
