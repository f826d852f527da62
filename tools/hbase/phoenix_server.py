"""A standalone HBase with Apache Phoenix 5.2.1's server side on its classpath (tools/hbase/phoenix).

Maven Central has no phoenix-server-hbase-* jar, so the server classpath is assembled from
phoenix-core-server, phoenix-core-client and phoenix-hbase-compat-2.6.0 (phoenix/pom.xml), placed
after the HBase line's own jars (the default 2.6.4, or 2.6.1 with version=) so HBase's versions of
shared libraries win. Phoenix needs its WAL codec for mutable global indexes; SYSTEM.LOG is kept to
one salt bucket so the first connection does not create 32 regions on a 2-core machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import standalone

PHOENIX = standalone.HERE / "phoenix"
PHOENIX_LIB = PHOENIX / "lib"
PHOENIX_POM = PHOENIX / "pom.xml"


@dataclass
class PhoenixStandalone(standalone.Standalone):
    """``standalone.Standalone`` plus Phoenix's server jars and settings."""

    def fetch(self) -> bool:
        if not self.line.phoenix:
            raise standalone.StartFailed(
                "fetch",
                f"no Phoenix server for HBase {self.version}: Phoenix 5.2.1 supports the 2.4, 2.5 and "
                "2.6 lines, but Maven Central has only its phoenix-hbase-compat-2.6.0 jar (not 2.4.1, 2.5.0 "
                "or 2.5.4), so tools/hbase runs Phoenix on the 2.6 lines only",
                None,
                what=f"Phoenix on HBase {self.version}",
            )
        ran = super().fetch()
        return standalone.copy_jars(PHOENIX_POM, PHOENIX_LIB, "phoenix-core-server-*.jar", self.log_dir / "fetch-phoenix.log") or ran

    def site_properties(self) -> dict[str, str]:
        props = super().site_properties()
        props.update(
            {
                # Without Phoenix's WAL codec, CREATE INDEX on a mutable table fails (ERROR 1029).
                "hbase.regionserver.wal.codec": "org.apache.hadoop.hbase.regionserver.wal.IndexedWALEditCodec",
                "phoenix.log.saltBuckets": "1",
                "phoenix.schema.isNamespaceMappingEnabled": "false",
            }
        )
        return props

    def _java_cmd(self, name: str, log_file: str, main: str, *args: str) -> list[str]:
        cmd = super()._java_cmd(name, log_file, main, *args)
        i = cmd.index("-cp") + 1
        cmd[i] = f"{cmd[i]}:{PHOENIX_LIB}/*"
        return cmd


def start_scratch(run_dir: Path, timeout: float = 300.0, version: str | None = None) -> PhoenixStandalone:
    """A started Phoenix-enabled standalone HBase on free loopback ports (the caller stops it);
    ``version``: the HBase line (default $KEYSHAPE_HBASE_VERSION, else the default line)."""
    run_dir = run_dir.resolve()
    base = standalone.Standalone.with_free_ports(run_dir, version=version)
    instance = PhoenixStandalone(
        run_dir=run_dir, zk_port=base.zk_port, master_port=base.master_port, rs_port=base.rs_port, thrift_port=base.thrift_port, version=base.version
    )
    instance.stop()
    try:
        instance.start(timeout=timeout)
    except standalone.StartFailed:
        instance.kill()
        raise
    return instance
