#!/usr/bin/env python3
"""Fetch, start, check and stop a standalone HBase (master + region server + ZooKeeper in one JVM).

Usage: python tools/hbase/standalone.py (= hbasectl.py) [--version V] fetch|start [--thrift]|stop [--keep-data]|kill|status|ready

`--version` (or KEYSHAPE_HBASE_VERSION) picks the HBase line: one of LINES below, default
DEFAULT_VERSION. Every line's jars are tools/hbase/lines/<version>/lib, resolved from one POM
(lines/pom.xml) with the line's artifact version. A running instance remembers its line in its run
folder (line.txt), so stop/status/kill need no --version.

Everything lives under one run folder (default tools/hbase/run/, env KEYSHAPE_HBASE_RUN_DIR):
conf/ (hbase-site.xml, log4j2.properties), data/ (rootdir, ZooKeeper, tmp), logs/, *.pid.
Everything listens on 127.0.0.1 only. Ports come from the environment:
KEYSHAPE_HBASE_ZK_PORT (2181), KEYSHAPE_HBASE_MASTER_PORT (16000),
KEYSHAPE_HBASE_RS_PORT (16020), KEYSHAPE_HBASE_THRIFT_PORT (9090).

Any failure raises `StartFailed`, whose message names the step that failed and the log to read.
This file is importable as `standalone` (the tests and benchmarks/_hbase.py use it) and uses only
the standard library, except for the round-trip check, which needs the `hbase-driver` package.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import types
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
LINES_POM = HERE / "lines" / "pom.xml"
LINE_FILE = "line.txt"
READY_LINE = "Master has completed initialization"
PROBE_TABLE = b"keyshape_ready_probe"

# The flags HBase's own bin/hbase adds on JDK 11+ (HBASE-26054/HBASE-28152): netty and the
# region server reach into JDK internals that JDK 17 closes by default.
JDK17_FLAGS = [
    "-XX:+UseG1GC",
    "-Djava.net.preferIPv4Stack=true",
    "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
    "--add-modules",
    "jdk.unsupported",
    *[
        f"--add-opens=java.base/{p}=ALL-UNNAMED"
        for p in ("java.io", "java.nio", "sun.nio.ch", "java.lang", "jdk.internal.ref", "java.lang.reflect", "java.util", "java.util.concurrent")
    ],
    *[
        f"--add-exports={m}=ALL-UNNAMED"
        for m in ("java.base/jdk.internal.misc", "java.security.jgss/sun.security.krb5", "java.base/sun.net.dns", "java.base/sun.net.util")
    ],
]


@dataclass(frozen=True)
class Line:
    """One HBase release line tools/hbase can run: the Maven Central artifact version of its
    server jars (the ``-hadoop3`` build where Maven Central has one), and what else exists for it."""

    version: str
    artifact: str | None  # hbase-server's Maven version; None: its server cannot be assembled
    hadoop: str  # the Hadoop line its jars are built against
    extras: bool = False  # hbase-thrift and hbase-compression-aircompressor (Maven Central: plain 2.6.1 only)
    phoenix: bool = False  # Phoenix 5.2.1's server side (phoenix-hbase-compat-2.6.0 is its only compat jar there)
    missing: str = ""  # why the server cannot start, when artifact is None

    @property
    def lib(self) -> Path:
        return HERE / "lines" / self.version / "lib"


# Checked against Maven Central (2026-11-26) by resolving each line's whole dependency tree.
# The default is the newest 2.6.x whose -hadoop3 server Maven Central serves (2.6.1 was the default
# until issue 34 and stays a line).
DEFAULT_VERSION = "2.6.4"
LINES: dict[str, Line] = {
    line.version: line
    for line in (
        # 2.4 has no -hadoop3 artifacts on Maven Central: the plain build is the Hadoop 2.10 one.
        Line("2.4.18", "2.4.18", hadoop="2.10"),
        Line("2.5.11", "2.5.11-hadoop3", hadoop="3"),
        Line("2.6.1", "2.6.1-hadoop3", hadoop="3", extras=True, phoenix=True),
        Line("2.6.4", "2.6.4-hadoop3", hadoop="3", extras=True, phoenix=True),
        # Maven Central has 3.0.0-beta-1's hbase-client, -common, -protocol-shaded and hbase-server
        # jars, but not the server's own modules (hbase-zookeeper, -procedure, -http, -replication,
        # -balancer, -asyncfs): its protocol and byte functions are checked, its server cannot run.
        Line(
            "3.0.0-beta-1",
            None,
            hadoop="3",
            missing=(
                "HBase 3.0.0-beta-1 cannot be started from Maven Central: it serves the client jars "
                "(hbase-client, -common, -protocol-shaded) but not the server's modules (hbase-zookeeper, "
                "-procedure, -http, -replication, -balancer, -asyncfs; plain or -hadoop3, checked 2026-11-27); its protocol and golden vectors "
                "are checked against its jars instead (tests/hbase/test_hbase_lines.py)"
            ),
        ),
    )
}
# The default line's jars: what the test server runs, and the classpath of the Java reference
# clients (benchmarks) and of other projects' classes for a line that has only client jars.
LIB = LINES[DEFAULT_VERSION].lib


class UnknownVersion(ValueError):
    """--version names no line tools/hbase knows."""


def line(version: str | None = None) -> Line:
    """The Line for ``version`` (default: $KEYSHAPE_HBASE_VERSION, else DEFAULT_VERSION);
    ``UnknownVersion`` (one line naming the known ones) for any other."""
    version = (version or os.environ.get("KEYSHAPE_HBASE_VERSION", "") or DEFAULT_VERSION).strip()
    found = LINES.get(version)
    if found is None:
        raise UnknownVersion(f"unknown HBase version {version!r}; tools/hbase runs {', '.join(LINES)} (default {DEFAULT_VERSION})")
    return found


def _run_dir_line(run_dir: Path) -> str | None:
    """The line an instance in ``run_dir`` was started with (line.txt), if any."""
    try:
        return (run_dir / LINE_FILE).read_text().strip() or None
    except OSError:
        return None


class StartFailed(RuntimeError):
    """A step of fetch/start/stop failed; `step` and `log` say which and where to look."""

    def __init__(self, step: str, detail: str, log: Path | None, what: str = "standalone HBase") -> None:
        self.step, self.detail, self.log = step, detail, log
        where = f" Log: {log}" if log else ""
        super().__init__(f"{what}: step '{step}' failed: {detail}.{where}")


def _env_port(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise ValueError(f"{name}={raw!r} is not a TCP port; set it to a number from 1 to 65535")
    return int(raw)


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago (for test instances)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def close_client(client: Any) -> None:
    """Close an hbase-driver ``Client`` and stop its ZooKeeper session: ``Client.close`` leaves
    the registry's KazooClient running, whose thread then pings (drawing from the global
    ``random``, which Hypothesis reports in a seeded test) until the process exits, one more per
    readiness probe."""
    try:
        client.close()
    finally:
        zk = getattr(getattr(getattr(client, "cluster_connection", None), "registry", None), "zk", None)
        if zk is not None:
            zk.stop()
            zk.close()


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours still answers kill(0); treat it as dead.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return True


@dataclass
class Standalone:
    """One standalone HBase instance: its run folder and its loopback ports."""

    run_dir: Path = field(default_factory=lambda: Path(os.environ.get("KEYSHAPE_HBASE_RUN_DIR", HERE / "run")))
    zk_port: int = field(default_factory=lambda: _env_port("KEYSHAPE_HBASE_ZK_PORT", 2181))
    master_port: int = field(default_factory=lambda: _env_port("KEYSHAPE_HBASE_MASTER_PORT", 16000))
    rs_port: int = field(default_factory=lambda: _env_port("KEYSHAPE_HBASE_RS_PORT", 16020))
    thrift_port: int = field(default_factory=lambda: _env_port("KEYSHAPE_HBASE_THRIFT_PORT", 9090))
    heap: str = "1g"
    # Extra hbase-site.xml properties over the defaults (a test that needs a server setting).
    site: dict[str, str] = field(default_factory=dict)
    # The HBase line (a key of LINES); default $KEYSHAPE_HBASE_VERSION, else DEFAULT_VERSION.
    version: str = field(default_factory=lambda: line().version)

    @classmethod
    def with_free_ports(cls, run_dir: Path, site: dict[str, str] | None = None, version: str | None = None) -> "Standalone":
        """An instance on fresh free ports, so it can run beside a developer's instance."""
        return cls(
            run_dir=run_dir,
            zk_port=free_port(),
            master_port=free_port(),
            rs_port=free_port(),
            thrift_port=free_port(),
            site=dict(site or {}),
            version=line(version).version,
        )

    @property
    def line(self) -> Line:
        return line(self.version)

    @property
    def lib(self) -> Path:
        """This line's jars (tools/hbase/lines/<version>/lib)."""
        return self.line.lib

    # -- paths ---------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The ZooKeeper address clients connect to (keyshape's `--hbase` value)."""
        return f"127.0.0.1:{self.zk_port}"

    conf_dir = property(lambda self: self.run_dir / "conf")
    data_dir = property(lambda self: self.run_dir / "data")
    log_dir = property(lambda self: self.run_dir / "logs")
    master_log = property(lambda self: self.log_dir / "hbase-master.log")
    master_out = property(lambda self: self.log_dir / "hbase-master.out")
    thrift_log = property(lambda self: self.log_dir / "hbase-thrift.out")
    fetch_log = property(lambda self: self.log_dir / "fetch.log")
    master_pid_file = property(lambda self: self.run_dir / "master.pid")
    thrift_pid_file = property(lambda self: self.run_dir / "thrift.pid")

    # -- fetch ---------------------------------------------------------------------------------
    def fetch(self) -> bool:
        """Copy this line's runtime jars into tools/hbase/lines/<version>/lib with Maven (from
        lines/pom.xml); True if Maven ran.

        Skipped when the lib holds the jars for the current POM and version (a stamp stores their
        hash). Maven caches downloads in ~/.m2, so a re-fetch after `rm -rf lib` is offline and quick.
        """
        found = self.line
        if found.artifact is None:
            raise StartFailed("fetch", found.missing, None, what=f"HBase {found.version}")
        args = [f"-Dhbase.version={found.artifact}"] + (["-Dkeyshape.extras=true"] if found.extras else [])
        return copy_jars(LINES_POM, found.lib, "hbase-server-*.jar", self.fetch_log, args)

    # -- config --------------------------------------------------------------------------------
    def site_properties(self) -> dict[str, str]:
        data = self.data_dir
        return {
            "hbase.cluster.distributed": "false",
            "hbase.rootdir": f"file://{data}/hbase",
            "hbase.tmp.dir": f"{data}/tmp",
            "hbase.zookeeper.property.dataDir": f"{data}/zookeeper",
            "hbase.zookeeper.quorum": "127.0.0.1",
            "hbase.zookeeper.property.clientPort": str(self.zk_port),
            "hbase.master.port": str(self.master_port),
            "hbase.regionserver.port": str(self.rs_port),
            "hbase.localcluster.assign.random.ports": "false",
            "hbase.master.hostname": "localhost",
            "hbase.unsafe.regionserver.hostname": "localhost",
            "hbase.master.ipc.address": "127.0.0.1",
            "hbase.regionserver.ipc.address": "127.0.0.1",
            "hbase.master.info.port": "-1",
            "hbase.regionserver.info.port": "-1",
            "hbase.thrift.info.port": "-1",
            # The local filesystem has no hflush/hsync capability; HBase refuses to write a WAL
            # there unless told not to check.
            "hbase.unsafe.stream.capability.enforce": "false",
            # AsyncFSWAL needs HDFS internals; the classic WAL works on file://.
            "hbase.wal.provider": "filesystem",
            # Raw local FS: hflush goes straight to the OS, so a killed JVM loses no
            # acknowledged edit (the checksummed LocalFileSystem buffers in the JVM).
            "fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
            "fs.AbstractFileSystem.file.impl": "org.apache.hadoop.fs.local.RawLocalFs",
            # A small single-JVM cluster: keep memory and start time small.
            "hbase.regionserver.handler.count": "10",
            "hbase.master.handler.count": "10",
            "hbase.regionserver.global.memstore.size": "0.3",
            "hfile.block.cache.size": "0.2",
            "hbase.master.balancer.stochastic.maxRunningTime": "1000",
            "hbase.balancer.period": "3600000",
            # One region server (in the master's JVM): the master stops waiting for more as soon as
            # it registered, instead of HBase's 4.5 s (hbase.master.wait.on.regionservers.timeout)
            # on every start and restart.
            "hbase.master.wait.on.regionservers.maxtostart": "1",
            # Region servers report RegionLoad (request counts, store sizes) to the master at this
            # interval (default 3 s); 1 s makes a live heat map and its tests respond sooner.
            "hbase.regionserver.msginterval": "1000",
            # Pure-Java codecs from hbase-compression-aircompressor (pom.xml): standalone HBase has
            # no native Hadoop codecs, so without these a SNAPPY/ZSTD/LZ4/LZO family fails to open.
            # Only the 2.6 lines have that jar (Maven Central: plain 2.6.1 only).
            **(
                {
                    f"hbase.io.compress.{algo}.codec": f"org.apache.hadoop.hbase.io.compress.aircompressor.{cls}Codec"
                    for algo, cls in (("snappy", "Snappy"), ("zstd", "Zstd"), ("lz4", "Lz4"), ("lzo", "Lzo"))
                }
                if self.line.extras
                else {}
            ),
            **self.site,
        }

    def write_config(self, conf_dir: Path | None = None, properties: dict[str, str] | None = None) -> None:
        """Write hbase-site.xml and log4j2.properties for this instance into ``conf_dir``
        (default conf/) from ``properties`` (default ``site_properties()``)."""
        conf_dir = conf_dir or self.conf_dir
        conf_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        props = "\n".join(
            f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>" for k, v in (properties or self.site_properties()).items()
        )
        (conf_dir / "hbase-site.xml").write_text(
            f'<?xml version="1.0"?>\n<!-- written by tools/hbase/standalone.py -->\n<configuration>\n{props}\n</configuration>\n'
        )
        (conf_dir / "log4j2.properties").write_text(
            "status = warn\n"
            "appender.file.type = File\n"
            "appender.file.name = file\n"
            "appender.file.fileName = ${sys:hbase.log.dir}/${sys:hbase.log.file}\n"
            "appender.file.layout.type = PatternLayout\n"
            "appender.file.layout.pattern = %d{ISO8601} %-5p [%t] %c{2}: %m%n\n"
            "rootLogger = INFO,file\n"
            "logger.zookeeper.name = org.apache.zookeeper\n"
            "logger.zookeeper.level = WARN\n"
            "logger.hadoop.name = org.apache.hadoop\n"
            "logger.hadoop.level = WARN\n"
            "logger.hbase.name = org.apache.hadoop.hbase\n"
            "logger.hbase.level = INFO\n"
        )

    # -- java ----------------------------------------------------------------------------------
    def java(self) -> str:
        """The java executable (JAVA_HOME first, else PATH); must be JDK 11 or newer."""
        home = os.environ.get("JAVA_HOME")
        exe = str(Path(home) / "bin" / "java") if home else shutil.which("java")
        if not exe or not Path(exe).exists():
            raise StartFailed("java", "no java found (set JAVA_HOME or install openjdk-17-jre-headless)", None)
        out = subprocess.run([exe, "-version"], capture_output=True, text=True).stderr
        m = re.search(r'version "(\d+)', out)
        if not m or int(m.group(1)) < 11:
            raise StartFailed("java", f"HBase 2.6 needs JDK 11 or 17, found: {out.strip()[:80]}", None)
        return exe

    def _java_cmd(self, name: str, log_file: str, main: str, *args: str, conf_dir: Path | None = None, heap: str | None = None) -> list[str]:
        conf_dir = conf_dir or self.conf_dir
        return [
            self.java(),
            f"-Xmx{heap or self.heap}",
            *JDK17_FLAGS,
            f"-Dhbase.log.dir={self.log_dir}",
            f"-Dhbase.log.file={log_file}",
            f"-Dlog4j2.configurationFile={conf_dir / 'log4j2.properties'}",
            f"-Dproc_{name}",
            "-cp",
            f"{conf_dir}:{self.lib}/*",
            main,
            *args,
        ]

    def _spawn(self, cmd: list[str], out: Path, pid_file: Path) -> int:
        with open(out, "ab") as o:
            # Own session: the server outlives this process (start.sh returns) and a Ctrl-C in
            # the terminal that ran it does not reach it.
            p = subprocess.Popen(cmd, stdout=o, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.run_dir, start_new_session=True)
        pid_file.write_text(f"{p.pid}\n")
        return p.pid

    # -- state ---------------------------------------------------------------------------------
    def _pid(self, pid_file: Path) -> int | None:
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _pid_alive(pid) else None

    def master_pid(self) -> int | None:
        return self._pid(self.master_pid_file)

    def thrift_pid(self) -> int | None:
        return self._pid(self.thrift_pid_file)

    def round_trip(self) -> None:
        """Create a probe table, put, get, then drop it through hbase-driver; raise on any failure."""
        from hbasedriver.client.client import Client
        from hbasedriver.operations.get import Get
        from hbasedriver.operations.put import Put
        from hbasedriver.protobuf_py.HBase_pb2 import ColumnFamilySchema
        from hbasedriver.table_name import TableName

        client = Client({"hbase.zookeeper.quorum": self.url})
        try:
            admin = client.get_admin()
            tn = TableName.value_of(b"default", PROBE_TABLE)
            if admin.table_exists(tn):  # left over from an interrupted check
                admin.disable_table(tn)
                admin.delete_table(tn)
            admin.create_table(tn, [ColumnFamilySchema(name=b"f")])
            table = client.get_table(b"default", PROBE_TABLE)
            try:
                table.put(Put(b"probe").add_column(b"f", b"q", b"v"))
                row = table.get(Get(b"probe"))
                if row is None or row.get(b"f", b"q") != b"v":
                    raise RuntimeError(f"put b'v' but read back {row!r}")
            finally:
                table.close()
            admin.disable_table(tn)
            admin.delete_table(tn)
        finally:
            close_client(client)

    def is_ready(self) -> bool:
        """True when the master runs and a full round trip succeeds."""
        if self.master_pid() is None or not _port_open(self.zk_port):
            return False
        try:
            self.round_trip()
        except Exception:
            return False
        return True

    # -- start / stop --------------------------------------------------------------------------
    def start(self, thrift: bool = False, timeout: float = 240.0) -> None:
        """Start the master JVM (and the Thrift1 gateway) and wait until a round trip works.

        Idempotent: an instance already running from this run folder is reused. Data in
        data/ is kept across start/kill, so a restart after `kill()` recovers from the WAL.
        """
        if thrift:
            # Before any JVM starts (a refusal must not leave a master behind): first whether the
            # line has a gateway at all, then whether the client that checks it is installed.
            self.require_thrift()
            require_happybase()
        self.fetch()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        running = _run_dir_line(self.run_dir)
        if self.master_pid() is not None and running not in (None, self.version):
            raise StartFailed("launch", f"HBase {running} already runs from {self.run_dir}; stop it before starting {self.version} there", None)
        if self.master_pid() is None:
            (self.run_dir / LINE_FILE).write_text(self.version + "\n")
            for port in (self.zk_port, self.master_port, self.rs_port):
                if not _wait_port_closed(port, 10.0):
                    raise StartFailed(
                        "launch", f"port {port} on 127.0.0.1 is already in use by another process; stop it or set KEYSHAPE_HBASE_*_PORT", None
                    )
            self.write_config()
            # Fresh log per start, so the readiness line we wait for is from this run.
            self.master_log.unlink(missing_ok=True)
            self._spawn(
                self._java_cmd("master", self.master_log.name, "org.apache.hadoop.hbase.master.HMaster", "start"),
                self.master_out,
                self.master_pid_file,
            )
        deadline = time.monotonic() + timeout
        self._wait_master(deadline)
        self._wait_round_trip(deadline)
        if thrift:
            self.start_thrift(deadline)

    def _wait_master(self, deadline: float) -> None:
        while True:
            if self.master_pid() is None:
                tail = _tail(self.master_out, 5) or _tail(self.master_log, 5)
                raise StartFailed("master-init", f"the HMaster JVM exited; last output: {tail}", self.master_log)
            if self.master_log.exists() and READY_LINE in self.master_log.read_text(errors="replace"):
                return
            if time.monotonic() > deadline:
                raise StartFailed("master-init", f"no '{READY_LINE}' in the log before the timeout", self.master_log)
            time.sleep(0.5)

    def _wait_round_trip(self, deadline: float) -> None:
        while True:
            try:
                self.round_trip()
                return
            except Exception as e:  # master may still be assigning meta/namespace regions
                if time.monotonic() > deadline or self.master_pid() is None:
                    raise StartFailed(
                        "round-trip", f"create/put/get/drop through hbase-driver failed: {type(e).__name__}: {e}", self.master_log
                    ) from e
                time.sleep(1.0)

    def require_thrift(self) -> None:
        """StartFailed at once when this line has no Thrift gateway jar."""
        if not self.line.extras:
            raise StartFailed(
                "thrift",
                f"no Thrift gateway for HBase {self.version}: Maven Central has hbase-thrift only as 2.6.1, run with the 2.6 lines only",
                None,
            )

    def start_thrift(self, deadline: float) -> None:
        """Start the Thrift1 gateway (happybase's server) on 127.0.0.1 and wait until it answers."""
        happybase = require_happybase()
        self.require_thrift()
        if self.thrift_pid() is None:
            if _port_open(self.thrift_port):
                raise StartFailed("thrift", f"port {self.thrift_port} is already in use", None)
            self._spawn(
                self._java_cmd(
                    "thrift",
                    "hbase-thrift.log",
                    "org.apache.hadoop.hbase.thrift.ThriftServer",
                    "-b",
                    "127.0.0.1",
                    "-p",
                    str(self.thrift_port),
                    "start",
                ),
                self.thrift_log,
                self.thrift_pid_file,
            )
        log = self.log_dir / "hbase-thrift.log"
        while True:
            if self.thrift_pid() is None:
                raise StartFailed("thrift", "the ThriftServer JVM exited", log)
            try:
                conn = happybase.Connection("127.0.0.1", self.thrift_port, timeout=5000)
                conn.tables()
                conn.close()
                return
            except Exception as e:
                if time.monotonic() > deadline:
                    raise StartFailed("thrift", f"gateway did not answer: {e}", log) from e
                time.sleep(1.0)

    def _shutdown_cluster(self, timeout: float) -> None:
        """Ask the running master to shut the cluster down (``HMaster stop --shutDownCluster``),
        waiting at most ``timeout`` seconds; whatever still runs then is killed by the caller."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_dir / "hbase-stop.out", "ab") as o:
            try:
                subprocess.run(
                    self._java_cmd("stop", "hbase-stop.log", "org.apache.hadoop.hbase.master.HMaster", "stop", "--shutDownCluster"),
                    stdout=o,
                    stderr=subprocess.STDOUT,
                    timeout=timeout,
                )
            except subprocess.TimeoutExpired:
                pass

    def stop(self, keep_data: bool = False, timeout: float = 60.0) -> None:
        """Shut the cluster down cleanly (HMaster stop --shutDownCluster), kill it if it hangs,
        then delete data/ unless keep_data. Logs are kept.

        Without keep_data (test and benchmark instances, stop --delete-data) the JVMs are killed
        instead, as a crash would: the clean shutdown (a second JVM for the stop command, then
        every region flushed) took 7-20 s per instance on the 2-core CI machine, for files
        deleted the next moment."""
        if not keep_data:
            self._kill_pid(self.thrift_pid_file)
            self.kill()
            if self.data_dir.exists():
                shutil.rmtree(self.data_dir)
            return
        self._stop_pid(self.thrift_pid_file, timeout=10)
        pid = self.master_pid()
        if pid is not None:
            self._shutdown_cluster(timeout)
            self._stop_pid(self.master_pid_file, timeout=timeout)
        self.master_pid_file.unlink(missing_ok=True)
        if not keep_data and self.data_dir.exists():
            shutil.rmtree(self.data_dir)

    def kill(self) -> None:
        """SIGKILL the master JVM (a crash, for durability tests); data/ is kept."""
        pid = self.master_pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            _wait_gone(pid, 30)
            for port in (self.zk_port, self.master_port, self.rs_port):
                _wait_port_closed(port, 10.0)
        self.master_pid_file.unlink(missing_ok=True)

    def _kill_pid(self, pid_file: Path) -> None:
        pid = self._pid(pid_file)
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            _wait_gone(pid, 30)
        pid_file.unlink(missing_ok=True)

    def _stop_pid(self, pid_file: Path, timeout: float) -> None:
        pid = self._pid(pid_file)
        if pid is not None and not _wait_gone(pid, timeout):
            os.kill(pid, signal.SIGTERM)
            if not _wait_gone(pid, 20):
                os.kill(pid, signal.SIGKILL)
                _wait_gone(pid, 10)
        pid_file.unlink(missing_ok=True)

    def rss_mb(self) -> float | None:
        """Resident memory of the master JVM in MB, or None when it is not running."""
        pid = self.master_pid()
        if pid is None:
            return None
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return None


def copy_jars(pom: Path, lib: Path, marker: str, log: Path, args: list[str] | None = None) -> bool:
    """Copy ``pom``'s runtime jars into ``lib`` with Maven (extra Maven ``args``, e.g. a version
    property); True if Maven ran. Skipped when ``lib`` holds the jars for the current pom and args
    (a stamp stores their hash) and a jar matching the glob ``marker``. A ``lib`` that is a link
    (another checkout's jars) is replaced by a folder."""
    args = list(args or [])
    stamp = lib / ".pom.sha256"
    want = hashlib.sha256(pom.read_bytes() + "".join(args).encode()).hexdigest()
    if stamp.exists() and stamp.read_text().strip() == want and any(lib.glob(marker)):
        return False
    log.parent.mkdir(parents=True, exist_ok=True)
    mvn = shutil.which("mvn")
    if mvn is None:
        raise StartFailed("fetch", "Maven (mvn) is not on PATH; install it (apt-get install maven)", None)
    if lib.is_symlink():
        lib.unlink()
    elif lib.exists():
        shutil.rmtree(lib)
    cmd = [mvn, "-B", "-q", "-f", str(pom), "dependency:copy-dependencies", "-DincludeScope=runtime", f"-DoutputDirectory={lib}", *args]
    with open(log, "w") as out:
        rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=pom.parent)
    if rc != 0 or not any(lib.glob(marker)):
        raise StartFailed("fetch", f"mvn exited with {rc} for {pom.name} (Maven Central reachable?)", log)
    stamp.write_text(want + "\n")
    return True


CLIENT_MODULES = ("hbase-common", "hbase-client", "hbase-protocol-shaded", "hbase-server")


def client_jars(version: str) -> list[Path]:
    """``version``'s own hbase-common, -client, -protocol-shaded and -server jars (for the golden
    vectors and the protocol check): from the line's lib when its server runs, else (3.0.0-beta-1)
    copied one by one from Maven Central (`dependency:copy`, no dependency tree) into
    tools/hbase/lines/<version>/client. The classes they need from other projects come from the
    default line's lib (``LIB``)."""
    found = line(version)
    if found.artifact is not None:
        Standalone(run_dir=HERE / "lines" / found.version, version=found.version).fetch()
        jars = [next(found.lib.glob(f"{m}-{found.version}*.jar"), None) for m in CLIENT_MODULES]
    else:
        out = HERE / "lines" / found.version / "client"
        out.mkdir(parents=True, exist_ok=True)
        mvn = shutil.which("mvn")
        if mvn is None:
            raise StartFailed("fetch", "Maven (mvn) is not on PATH; install it (apt-get install maven)", None)
        for module in CLIENT_MODULES:
            if not any(out.glob(f"{module}-{found.version}*.jar")):
                log = out / "fetch.log"
                with open(log, "w") as o:
                    rc = subprocess.call(
                        [mvn, "-B", "-q", "dependency:copy", f"-DoutputDirectory={out}", f"-Dartifact=org.apache.hbase:{module}:{found.version}"],
                        stdout=o,
                        stderr=subprocess.STDOUT,
                        cwd=out,
                    )
                if rc != 0:
                    raise StartFailed("fetch", f"mvn could not copy {module} {found.version}", log, what=f"HBase {found.version}")
        jars = [next(out.glob(f"{m}-{found.version}*.jar"), None) for m in CLIENT_MODULES]
    missing = [m for m, j in zip(CLIENT_MODULES, jars) if j is None]
    if missing:
        raise StartFailed("fetch", f"no {', '.join(missing)} jar for {found.version}", None)
    return [j for j in jars if j is not None]


def require_happybase() -> "types.ModuleType":
    """The happybase module, which the Thrift gateway's readiness check calls through; StartFailed
    (at once, not after the start timeout) when it is not installed."""
    try:
        import happybase
    except ImportError:
        raise StartFailed(
            "thrift", "the Python package happybase is needed to check the gateway; pip install happybase (or pip install -e '.[bench]')", None
        ) from None
    return happybase


def claim_run_dir(base: Path) -> tuple[Path, "IO[str]"]:
    """``base``, or ``base-2``, ``base-3``... : the first whose lock file no live process holds,
    with that lock held (keep the returned file open for as long as the instance runs).

    start_scratch stops whatever an earlier run left in its folder; without the lock, two test
    sessions on one machine (several developers' checkouts share nothing else) would stop each
    other's HBase. A folder whose owner died is free again and its leftovers are stopped as before."""
    import fcntl

    for n in range(1, 100):
        run_dir = base if n == 1 else base.with_name(f"{base.name}-{n}")
        run_dir.mkdir(parents=True, exist_ok=True)
        lock = open(run_dir / "session.lock", "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        return run_dir, lock
    raise StartFailed("launch", f"every run folder {base}[-2..-99] is held by a live session", None)


def start_scratch(run_dir: Path, timeout: float | None = None, site: dict[str, str] | None = None, version: str | None = None) -> Standalone:
    """A started standalone HBase on free loopback ports in ``run_dir``, for one test session or
    benchmark run beside a developer's own instance (the caller stops it).

    Whatever a killed earlier run left in ``run_dir`` is stopped first. ``timeout`` (seconds)
    defaults to $KEYSHAPE_HBASE_START_TIMEOUT, else 240. If starting fails, the half-started JVM
    is killed (it may not answer a clean stop; data/ and logs stay for reading) and
    ``StartFailed`` is raised.
    """
    if timeout is None:
        timeout = float(os.environ.get("KEYSHAPE_HBASE_START_TIMEOUT", "240"))
    instance = Standalone.with_free_ports(run_dir, site, version)
    instance.stop()
    try:
        instance.start(timeout=timeout)
    except StartFailed:
        instance.kill()
        raise
    return instance


def _wait_gone(pid: int, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.waitpid(pid, os.WNOHANG)  # reap if it is our child
        except ChildProcessError:
            pass
        if not _pid_alive(pid):
            return True
        time.sleep(0.2)
    return not _pid_alive(pid)


def _wait_port_closed(port: int, timeout: float) -> bool:
    """True once nothing listens on 127.0.0.1:port; a just-killed JVM's sockets linger briefly."""
    end = time.monotonic() + timeout
    while _port_open(port):
        if time.monotonic() > end:
            return False
        time.sleep(0.2)
    return True


def _tail(path: Path, n: int) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(lines[-n:])


if __name__ == "__main__":
    # The command line is hbasectl.py (it drives cluster.py too, which builds on this module);
    # this path stays a way to run it. exec, not import: this module imports nothing above it.
    os.execv(sys.executable, [sys.executable, str(HERE / "hbasectl.py"), *sys.argv[1:]])
