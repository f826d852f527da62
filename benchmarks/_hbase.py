"""A real HBase for the HBase benchmarks: the one named by ``--hbase``, or a standalone one started
here (tools/hbase/standalone.py on free loopback ports) and stopped again at the end.

Also: the HBase version and server count for the JSON, scratch table names, and table attributes
(MAX_FILESIZE ...) that keyshape's TableSpec does not model, set with a ModifyTable.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from _common import ROOT

TOOLS_HBASE = ROOT / "tools" / "hbase"
sys.path.insert(0, str(TOOLS_HBASE))
import standalone  # noqa: E402  (tools/hbase/standalone.py: a script folder, not a package)


def add_hbase_arg(p: argparse.ArgumentParser, cluster: bool = False) -> None:
    p.add_argument(
        "--hbase",
        metavar="HOST:PORT",
        default=os.environ.get("KEYSHAPE_HBASE_URL") or None,
        help="ZooKeeper of a running HBase (default: $KEYSHAPE_HBASE_URL, else start a "
        "standalone HBase from tools/hbase for this run and stop it afterwards)",
    )
    if cluster:
        p.add_argument(
            "--regionservers",
            type=int,
            default=None,
            metavar="N",
            help="start a pseudo-distributed HBase with N region server JVMs (tools/hbase/cluster.py) for this run instead of the standalone one",
        )


# host:port of the Thrift gateway hbase_url(..., thrift=True) started beside its HBase
THRIFT: dict[str, str] = {}


@contextmanager
def hbase_url(url: str | None, regionservers: int | None = None, thrift: bool = False) -> Iterator[tuple[str, bool]]:
    """Yield ``(zookeeper address, started_here)``. Without ``url`` a standalone HBase (or, with
    ``regionservers``, a cluster of that many region servers) is started in tools/hbase/run/bench/
    on free ports (jars fetched by Maven on first use) and always stopped, its data deleted, when
    the block ends."""
    if url:
        yield url.removeprefix("hbase://"), False
        return
    what, folder = (f"an HBase cluster with {regionservers} region servers", "bench-cluster") if regionservers else ("a standalone HBase", "bench")
    # run/bench, or run/bench-2... while another run on the machine holds it (as the test fixtures
    # claim theirs): starting in a held folder would stop the other run's HBase.
    run_dir, lock = standalone.claim_run_dir(TOOLS_HBASE / "run" / folder)
    print(f"starting {what} (tools/hbase/run/{run_dir.name}) ...", flush=True)
    t0 = time.perf_counter()
    try:
        if regionservers:
            import cluster

            instance: Any = cluster.start_scratch(run_dir, regionservers)
        else:
            instance = standalone.start_scratch(run_dir)
    except standalone.StartFailed as exc:
        lock.close()
        raise SystemExit(f"error: {exc}") from None
    print(f"HBase ready on {instance.url} after {time.perf_counter() - t0:.0f} s", flush=True)
    try:
        if thrift and not regionservers:
            instance.start_thrift(time.monotonic() + 240)  # happybase's gateway, for comparisons
            THRIFT[instance.url] = f"127.0.0.1:{instance.thrift_port}"
        yield instance.url, True
    finally:
        instance.stop()
        lock.close()


def cluster_facts(store: Any, url: str, started_here: bool) -> dict[str, Any]:
    """HBase version and live region servers, from the master's cluster status."""
    from hbasedriver.protobuf_py import Master_pb2

    status = store.cluster.master_call("GetClusterStatus", Master_pb2.GetClusterStatusRequest(), Master_pb2.GetClusterStatusResponse).cluster_status
    return {"url": url, "started_here": started_here, "version": status.hbase_version.version, "region_servers": len(status.live_servers)}


def scratch_name(stem: str) -> str:
    """A table name no other run (or concurrent helper) uses: ``stem_<8 hex>``."""
    return f"{stem}_{secrets.token_hex(4)}"


def set_table_attributes(store: Any, table: str, attributes: Mapping[str, str]) -> None:
    """Set table-level descriptor attributes (e.g. MAX_FILESIZE, MEMSTORE_FLUSHSIZE, SPLIT_POLICY)
    with a ModifyTable, and wait for it: keyshape's TableSpec models families only."""
    from hbasedriver.protobuf_py import Master_pb2

    descriptor = store._descriptor(table)
    kept = [a for a in descriptor.attributes if a.first.decode() not in attributes]
    del descriptor.attributes[:]
    descriptor.attributes.extend(kept)
    for k, v in attributes.items():
        descriptor.attributes.add(first=k.encode(), second=str(v).encode())
    request = Master_pb2.ModifyTableRequest(
        table_name=descriptor.table_name, table_schema=descriptor, nonce_group=store._nonce_group, nonce=secrets.randbits(63)
    )
    response = store._master("ModifyTable", request, Master_pb2.ModifyTableResponse, table, "modify table")
    store._wait_procedure(response.proc_id, f"modify table {table!r}")


def drop_quietly(store: Any, table: str) -> None:
    try:
        if store.table_exists(table):
            store.delete_table(table)
    except Exception as exc:  # cleanup must not hide the benchmark's own result or error
        print(f"warning: could not delete scratch table {table}: {exc}", file=sys.stderr)
