"""A pseudo-distributed HBase on loopback: ZooKeeper, one HMaster and N HRegionServer JVMs, each
its own process, sharing one root dir (data + WALs) on the local filesystem.

`tools/hbase/start.sh --regionservers N` runs this (through hbasectl.py); tests use
`start_scratch`. Each region server can be killed alone (`kill -9 PID` from `status.sh --json`)
and the master reassigns its regions after splitting its WAL. What that needs here, found by
running it (HBase 2.6.1 and 2.6.4, JDK 17):

- the standalone's WAL settings (RawLocalFileSystem, `hbase.wal.provider=filesystem`,
  `hbase.unsafe.stream.capability.enforce=false`): an acknowledged edit has been handed to the OS,
  so a `kill -9` of the JVM loses nothing;
- WAL splitting is HBase 2.6's default procedure-based splitting (`hbase.split.wal.zk.coordinated`
  false): the master renames `WALs/<server>` to `-splitting` and the surviving region servers split
  it; lease recovery is skipped on a non-HDFS filesystem, so `file://` needs no extra switch;
- ZooKeeper runs as its own JVM (`ZooKeeperServerMain`, tickTime 1 s) and the servers ask for a
  short session (`zookeeper.session.timeout`, 6 s): the master notices a killed server when its
  ephemeral znode expires, so this bounds the time before recovery starts;
- `hbase.master.wait.on.regionservers.mintostart=N`: the master finishes initialising only when
  all N servers registered, so a pre-split table created right after start spreads over all.

Each process gets its own conf dir (a region server's port is in its hbase-site.xml), pid file
and log under the run folder; `cluster.json` there records the ports so status/stop work from any
process.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import standalone
from standalone import StartFailed, Standalone, _port_open, _tail, _wait_gone, _wait_port_closed, free_port

STATE_FILE = "cluster.json"
RS_READY = "Serving as localhost,"
ZK_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
RS_MAIN = "org.apache.hadoop.hbase.regionserver.HRegionServer"


@dataclass
class Cluster(Standalone):
    """ZooKeeper + HMaster + ``regionservers`` region servers from one run folder.

    Heaps are small on purpose (README: about 2 GB resident for 3 servers): ``heap`` is the
    master's, ``rs_heap`` each region server's, ``zk_heap`` ZooKeeper's.
    """

    regionservers: int = 3
    rs_ports: list[int] = field(default_factory=list)
    heap: str = field(default_factory=lambda: os.environ.get("KEYSHAPE_HBASE_MASTER_HEAP", "384m"))
    rs_heap: str = field(default_factory=lambda: os.environ.get("KEYSHAPE_HBASE_RS_HEAP", "448m"))
    zk_heap: str = "128m"
    session_timeout_ms: int = 6000

    def __post_init__(self) -> None:
        # The JVMs run with the run folder as their working directory: every path must be absolute.
        self.run_dir = Path(self.run_dir).resolve()
        if self.regionservers < 1:
            raise ValueError(f"--regionservers must be at least 1, got {self.regionservers}")
        if not self.rs_ports:
            self.rs_ports = [self.rs_port + i for i in range(self.regionservers)]
        if len(self.rs_ports) != self.regionservers:
            raise ValueError("one port per region server is needed")

    @classmethod
    def with_free_ports(
        cls,
        run_dir: Path,
        regionservers: int = 3,  # type: ignore[override]
        version: str | None = None,
    ) -> "Cluster":
        """A cluster on fresh free loopback ports, beside any other instance."""
        return cls(
            run_dir=run_dir,
            zk_port=free_port(),
            master_port=free_port(),
            rs_port=0,
            thrift_port=free_port(),
            regionservers=regionservers,
            rs_ports=[free_port() for _ in range(regionservers)],
            version=standalone.line(version).version,
        )

    @classmethod
    def load(cls, run_dir: Path) -> "Cluster | None":
        """The cluster recorded in ``run_dir/cluster.json``, or None when there is none."""
        try:
            state = json.loads((run_dir / STATE_FILE).read_text())
        except (OSError, ValueError):
            return None
        return cls(
            run_dir=run_dir,
            zk_port=state["zk_port"],
            master_port=state["master_port"],
            rs_port=0,
            thrift_port=state["thrift_port"],
            regionservers=len(state["rs_ports"]),
            rs_ports=list(state["rs_ports"]),
            # A cluster.json without a version was written before tools/hbase had lines: 2.6.1's.
            version=state.get("version", "2.6.1"),
        )

    # -- paths -----------------------------------------------------------------------------------
    state_file = property(lambda self: self.run_dir / STATE_FILE)
    zk_pid_file = property(lambda self: self.run_dir / "zookeeper.pid")
    zk_out = property(lambda self: self.log_dir / "zookeeper.out")

    def rs_pid_file(self, i: int) -> Path:
        return self.run_dir / f"regionserver-{i}.pid"

    def rs_log(self, i: int) -> Path:
        return self.log_dir / f"hbase-regionserver-{i}.log"

    def rs_conf(self, i: int) -> Path:
        return self.run_dir / f"conf-regionserver-{i}"

    # -- config ----------------------------------------------------------------------------------
    def site_properties(self) -> dict[str, str]:
        props = super().site_properties()
        props.pop("hbase.localcluster.assign.random.ports", None)
        props.pop("hbase.zookeeper.property.dataDir", None)  # ZooKeeper is its own process here
        props.update(
            {
                "hbase.cluster.distributed": "true",
                "hbase.regionserver.port": str(self.rs_ports[0]),
                "zookeeper.session.timeout": str(self.session_timeout_ms),
                "hbase.master.wait.on.regionservers.mintostart": str(self.regionservers),
                # ... and stops waiting once they all did (not after a further 4.5 s timeout)
                "hbase.master.wait.on.regionservers.maxtostart": str(self.regionservers),
                # Small heaps: flush at 32 MB instead of 128 MB so one region's memstore never needs
                # a large share of a 448 MB heap.
                "hbase.hregion.memstore.flush.size": str(32 * 1024 * 1024),
                "hbase.regionserver.global.memstore.size": "0.35",
                # A survivor claims a dead server's replication queue only after sleeping this
                # (ms) plus a random part of it (ReplicationSourceManager, read by the region
                # servers): 30 s by default, i.e. 30-60 s of a kill test spent waiting. The claim
                # still goes through HBase's own crash procedure and claim path; only the wait
                # shrinks, to what HBase's own replication tests use (1-2 s).
                "replication.sleep.before.failover": "2000",
            }
        )
        return props

    def region_server_properties(self, i: int) -> dict[str, str]:
        return {**self.site_properties(), "hbase.regionserver.port": str(self.rs_ports[i])}

    # -- state -----------------------------------------------------------------------------------
    def zk_pid(self) -> int | None:
        return self._pid(self.zk_pid_file)

    def rs_pid(self, i: int) -> int | None:
        return self._pid(self.rs_pid_file(i))

    def status(self) -> dict[str, Any]:
        """What `status.sh --json` prints: ZooKeeper, the master and each region server."""
        master = self.master_pid()
        thrift = self.thrift_pid()
        return {
            "zookeeper": self.url,
            "master": {"pid": master, "port": self.master_port} if master else None,
            "regionservers": [{"pid": self.rs_pid(i), "host": "localhost", "port": port} for i, port in enumerate(self.rs_ports) if self.rs_pid(i)],
            "thrift": {"pid": thrift, "port": self.thrift_port} if thrift else None,
        }

    def pids(self) -> list[int]:
        found = [self.zk_pid(), self.master_pid(), self.thrift_pid(), *(self.rs_pid(i) for i in range(self.regionservers))]
        return [p for p in found if p]

    def rss_mb(self) -> float | None:
        """Resident memory of all the cluster's JVMs together, in MB (None: nothing runs)."""
        total = 0.0
        for pid in self.pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) / 1024
            except OSError:
                pass
        return total or None

    # -- start / stop ----------------------------------------------------------------------------
    def start(self, thrift: bool = False, timeout: float = 240.0) -> None:
        """Start ZooKeeper, the master and every region server, and wait until the master has
        initialised (with all N servers registered), each server serves and a round trip works.
        Processes already running from this run folder are reused."""
        try:
            self._start(thrift, timeout)
        except StartFailed as exc:
            raise StartFailed(exc.step, exc.detail, exc.log, what=f"HBase cluster ({self.regionservers} region servers)") from None

    def _start(self, thrift: bool, timeout: float) -> None:
        if thrift:
            self.require_thrift()
        self.fetch()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + timeout
        self.state_file.write_text(
            json.dumps(
                {
                    "zk_port": self.zk_port,
                    "master_port": self.master_port,
                    "thrift_port": self.thrift_port,
                    "rs_ports": self.rs_ports,
                    "version": self.version,
                }
            )
            + "\n"
        )
        self.write_config()
        if self.zk_pid() is None:
            self._check_port_free(self.zk_port)
            zk_dir = self.data_dir / "zookeeper"
            zk_dir.mkdir(parents=True, exist_ok=True)
            # ZooKeeper's AdminServer would take port 8080; tickTime 1 s lets sessions be as
            # short as 2 s (HBase asks for session_timeout_ms).
            cmd = [
                self.java(),
                f"-Xmx{self.zk_heap}",
                "-Dzookeeper.admin.enableServer=false",
                "-Dzookeeper.4lw.commands.whitelist=ruok,srvr",
                "-cp",
                f"{self.lib}/*",
                ZK_MAIN,
                str(self.zk_port),
                str(zk_dir),
                "1000",
                "0",
            ]
            self._spawn(cmd, self.zk_out, self.zk_pid_file)
        while not _port_open(self.zk_port):
            if self.zk_pid() is None or time.monotonic() > deadline:
                raise StartFailed(
                    "zookeeper", f"ZooKeeper did not listen on 127.0.0.1:{self.zk_port}; last output: {_tail(self.zk_out, 3)}", self.zk_out
                )
            time.sleep(0.3)
        if self.master_pid() is None:
            self._check_port_free(self.master_port)
            self.master_log.unlink(missing_ok=True)
            self._spawn(
                self._java_cmd("master", self.master_log.name, "org.apache.hadoop.hbase.master.HMaster", "start"),
                self.master_out,
                self.master_pid_file,
            )
        offsets = {i: self.start_regionserver(i, wait=False) for i in range(self.regionservers)}
        self._wait_master(deadline)
        for i, offset in offsets.items():
            self._wait_regionserver(i, offset, deadline)
        self._wait_round_trip(deadline)
        if thrift:
            self.start_thrift(deadline)

    def _check_port_free(self, port: int) -> None:
        if not _wait_port_closed(port, 10.0):
            raise StartFailed(
                "launch", f"port {port} on 127.0.0.1 is already in use by another process; stop it or pick other ports (KEYSHAPE_HBASE_*_PORT)", None
            )

    def start_regionserver(self, i: int, wait: bool = True, timeout: float = 120.0) -> int:
        """Start region server ``i`` unless it runs; with ``wait``, until it serves. Returns the
        size its log had before (where this start's lines begin)."""
        log = self.rs_log(i)
        offset = log.stat().st_size if log.exists() else 0
        if self.rs_pid(i) is None:
            self._check_port_free(self.rs_ports[i])
            self.write_config(self.rs_conf(i), self.region_server_properties(i))
            self._spawn(
                self._java_cmd(f"regionserver{i}", log.name, RS_MAIN, "start", conf_dir=self.rs_conf(i), heap=self.rs_heap),
                self.log_dir / f"hbase-regionserver-{i}.out",
                self.rs_pid_file(i),
            )
        else:
            offset = 0
        if wait:
            self._wait_regionserver(i, offset, time.monotonic() + timeout)
        return offset

    def _wait_regionserver(self, i: int, offset: int, deadline: float) -> None:
        log = self.rs_log(i)
        while True:
            if self.rs_pid(i) is None:
                out = self.log_dir / f"hbase-regionserver-{i}.out"
                raise StartFailed(f"regionserver-{i}", f"the HRegionServer JVM exited; last output: {_tail(out, 3) or _tail(log, 3)}", log)
            try:
                with open(log, "rb") as f:
                    f.seek(offset)
                    if RS_READY.encode() in f.read():
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise StartFailed(f"regionserver-{i}", f"no '{RS_READY}...' in the log before the timeout", log)
            time.sleep(0.5)

    def kill_regionserver(self, i: int) -> int:
        """``kill -9`` region server ``i`` (a crash: its WAL is left for the master to split);
        returns the pid killed."""
        pid = self.rs_pid(i)
        if pid is None:
            raise RuntimeError(f"region server {i} is not running")
        os.kill(pid, signal.SIGKILL)
        _wait_gone(pid, 30)
        self.rs_pid_file(i).unlink(missing_ok=True)
        return pid

    def stop(self, keep_data: bool = False, timeout: float = 60.0) -> None:
        """Shut the cluster down (HMaster stop --shutDownCluster stops the region servers too),
        kill whatever hangs, stop ZooKeeper, then delete data/ unless keep_data. Logs stay.
        Without keep_data every JVM is killed instead (as Standalone.stop does: the data is
        deleted anyway, and a clean shutdown of five JVMs is the slow part of a test session's
        end)."""
        if not keep_data:
            self.kill()
            self.state_file.unlink(missing_ok=True)
            if self.data_dir.exists():
                import shutil

                shutil.rmtree(self.data_dir)
            return
        self._stop_pid(self.thrift_pid_file, timeout=10)
        if self.master_pid() is not None:
            self._shutdown_cluster(timeout)
        self._stop_pid(self.master_pid_file, timeout=timeout)
        for i in range(self.regionservers):
            self._stop_pid(self.rs_pid_file(i), timeout=20)
        self._stop_pid(self.zk_pid_file, timeout=0.5)
        self.state_file.unlink(missing_ok=True)
        if not keep_data and self.data_dir.exists():
            import shutil

            shutil.rmtree(self.data_dir)

    def kill(self) -> None:
        """SIGKILL every JVM of the cluster (data/ is kept)."""
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _wait_gone(pid, 30)
        for f in (self.zk_pid_file, self.master_pid_file, self.thrift_pid_file, *(self.rs_pid_file(i) for i in range(self.regionservers))):
            f.unlink(missing_ok=True)


def start_scratch(run_dir: Path, regionservers: int = 3, timeout: float | None = None, version: str | None = None) -> Cluster:
    """A started cluster on free loopback ports in ``run_dir`` for one test session or benchmark
    (the caller stops it). What a killed earlier run left there is stopped first; if starting
    fails every JVM is killed (logs stay) and ``StartFailed`` names the step and the log."""
    if timeout is None:
        timeout = float(os.environ.get("KEYSHAPE_HBASE_START_TIMEOUT", "240"))
    old = Cluster.load(run_dir)
    if old is not None:
        old.stop()
    instance = Cluster.with_free_ports(run_dir, regionservers, version)
    try:
        instance.start(timeout=timeout)
    except StartFailed:
        instance.kill()
        raise
    return instance


__all__ = ["Cluster", "StartFailed", "start_scratch", "standalone"]
