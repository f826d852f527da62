"""tools/hbase/cluster.py without starting Java: the configuration each JVM gets, the recorded
state that status/stop read, and start failures naming the step (the running cluster is tested in
test_hbase_cluster.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cluster
import pytest

SCRIPT = Path(cluster.__file__).resolve().parent / "standalone.py"


def site(conf_dir: Path) -> dict[str, str]:
    import xml.etree.ElementTree as ET

    root = ET.parse(conf_dir / "hbase-site.xml").getroot()
    return {p.findtext("name"): p.findtext("value") for p in root.iter("property")}  # type: ignore[misc]


def test_each_region_server_gets_its_own_port_and_the_cluster_settings(tmp_path: Path) -> None:
    c = cluster.Cluster(run_dir=tmp_path / "run", zk_port=12181, master_port=12000, rs_port=12020, thrift_port=19090, regionservers=3)
    assert c.rs_ports == [12020, 12021, 12022]
    c.write_config()
    for i in range(3):
        c.write_config(c.rs_conf(i), c.region_server_properties(i))
    main = site(c.conf_dir)
    assert main["hbase.cluster.distributed"] == "true"
    assert main["hbase.zookeeper.property.clientPort"] == "12181"
    assert main["hbase.master.wait.on.regionservers.mintostart"] == "3"
    assert int(main["zookeeper.session.timeout"]) <= 20_000  # ZooKeeper caps sessions at 20 ticks
    # the settings that make an acknowledged edit survive kill -9 and WAL splitting work on file://
    assert main["fs.file.impl"] == "org.apache.hadoop.fs.RawLocalFileSystem"
    assert main["hbase.wal.provider"] == "filesystem"
    assert main["hbase.rootdir"] == f"file://{c.data_dir}/hbase"
    assert [site(c.rs_conf(i))["hbase.regionserver.port"] for i in range(3)] == ["12020", "12021", "12022"]
    assert all(site(c.rs_conf(i))["hbase.rootdir"] == main["hbase.rootdir"] for i in range(3))


def test_relative_run_dirs_become_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    c = cluster.Cluster(run_dir=Path("rel"), regionservers=1)
    assert c.run_dir == tmp_path / "rel"


def test_nothing_running_reports_no_processes(tmp_path: Path) -> None:
    c = cluster.Cluster.with_free_ports(tmp_path / "run", 2)
    state = c.status()
    assert state["master"] is None and state["regionservers"] == [] and state["thrift"] is None
    assert cluster.Cluster.load(tmp_path / "run") is None


def test_missing_java_names_the_step_and_the_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    c = cluster.Cluster.with_free_ports(tmp_path / "run", 2)
    monkeypatch.setattr(c, "fetch", lambda: False)
    with pytest.raises(cluster.StartFailed) as err:
        c.start(timeout=5)
    assert err.value.step == "java"
    assert str(err.value).startswith("HBase cluster (2 region servers): step 'java' failed")
    assert json.loads(c.state_file.read_text())["rs_ports"] == c.rs_ports


def test_start_script_refuses_zero_region_servers(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "start", "--regionservers", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "KEYSHAPE_HBASE_RUN_DIR": str(tmp_path / "run")},
    )
    assert proc.returncode == 2 and "at least 1" in proc.stderr
