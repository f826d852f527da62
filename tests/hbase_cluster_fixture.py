"""The session-scoped `hbase_cluster` fixture: ONE pseudo-distributed HBase (ZooKeeper, HMaster and
3 region server JVMs, tools/hbase/cluster.py) for the tests marked `@pytest.mark.hbase_cluster`.

It always starts its own cluster on free loopback ports in tools/hbase/run/pytest-cluster/ (or
pytest-cluster-2... while another session holds that one, as the standalone fixture claims its
folder; the tests kill region servers, so a shared instance will not do) and always stops it and deletes its
data at the end. A start failure FAILS every test using it, naming the step and the log.
Measurements the tests make (e.g. the time from a crash to the next acknowledged write) are
printed in pytest's terminal summary.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cluster  # tools/hbase/cluster.py, on the path through pyproject's pytest `pythonpath`
import pytest

REGIONSERVERS = 3
MEASURED: list[str] = []  # lines for the terminal summary (conftest's pytest_terminal_summary)


@dataclass
class ClusterHandle:
    """What the tests get: the ZooKeeper address and the running cluster."""

    url: str
    cluster: Any  # tools/hbase/cluster.Cluster

    def server_index(self, name: str) -> int:
        """The index of region server ``host:port``."""
        port = int(name.rpartition(":")[2])
        return self.cluster.rs_ports.index(port)

    def meta_server(self) -> str:
        """``host:port`` of the region server holding hbase:meta (read from ZooKeeper)."""
        from keyshape.store.hbase.rpc import locate_master_and_meta

        _, meta = locate_master_and_meta(self.url, 5.0)
        return f"{meta.host_name}:{meta.port}"

    def spread(self, store: Any, table: str) -> None:
        """``table``'s regions on every region server. A server an earlier test killed (and
        restarted) can be left out of a new table's assignment while the master still processes
        its old instance's crash, and the balancer (every 5 minutes) would place regions on it only
        later: a server without a region gets one moved to it from the busiest."""
        for server in [s.name for s in store.region_servers()]:
            regions = store.regions(table)
            held = {r.server for r in regions}
            if server in held:
                continue
            counts = {s: sum(r.server == s for r in regions) for s in held}
            busiest = max(counts, key=lambda s: counts[s])
            store.move_region(next(r.name for r in regions if r.server == busiest), server)

    def all_up(self, timeout: float = 120.0) -> None:
        """Restart any region server an earlier test killed and wait until the master lists all
        of them as live, so every test starts with the full cluster."""
        from keyshape.store.hbase import HBaseStore

        restarted = False
        for i in range(self.cluster.regionservers):
            if self.cluster.rs_pid(i) is None:
                self.cluster.start_regionserver(i, wait=True)
                restarted = True
        deadline = time.monotonic() + timeout
        with HBaseStore.from_url(self.url) as store:
            while len(store.region_servers()) < self.cluster.regionservers:
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"the master does not list {self.cluster.regionservers} live region "
                        f"servers after {timeout:.0f} s; see {self.cluster.log_dir}",
                        pytrace=False,
                    )
                time.sleep(0.5)
            # and, after a restart, until the master has processed the old instance's crash:
            # until then it leaves the new one out of new tables' assignments. Best effort: a
            # test that needs the spread checks it (the master may keep listing a dead server)
            from keyshape.ops.autopilot.safety import cluster_problems

            settled = time.monotonic() + 60
            while restarted and cluster_problems(store) and time.monotonic() < settled:
                time.sleep(0.5)


@pytest.fixture(scope="session")
def hbase_cluster_session() -> Iterator[ClusterHandle]:
    try:
        run_dir, lock = cluster.standalone.claim_run_dir(Path(cluster.__file__).resolve().parent / "run" / "pytest-cluster")
        instance = cluster.start_scratch(run_dir, REGIONSERVERS)
    except (cluster.StartFailed, ValueError) as e:  # ValueError: an unknown $KEYSHAPE_HBASE_VERSION
        pytest.fail(str(e), pytrace=False)
    try:
        yield ClusterHandle(url=instance.url, cluster=instance)
    finally:
        instance.stop()
        lock.close()


@pytest.fixture
def hbase_cluster(hbase_cluster_session: ClusterHandle) -> ClusterHandle:
    """The session's cluster with all its region servers up (restarted if a test killed one)."""
    hbase_cluster_session.all_up()
    return hbase_cluster_session
