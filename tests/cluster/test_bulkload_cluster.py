"""``migrate`` through HBase's bulk-load path on the 3-region-server HBase (issue 42).

The servers share one root dir on this machine's filesystem (tools/hbase/cluster.py), so the
staging directory keyshape writes its HFiles to is readable by every region server: each NEW
region's files go to the server that holds it, and all three load some.

Two migrations in one test (one cluster start): an offline ``migrate --spark`` of a mod 16 table
into mod 12 (copied and verified by Spark jobs), and ``migrate --online --spark`` of a sequential table (pre-split in 4) into
mod 12 in the operator's flow: an independent writer puts, updates and deletes OLD during the
copy, the run streams, the writer stops, Ctrl-C, then ``--cutover``. The referee reads OLD and NEW
itself and finds them equal cell for cell, versions and deletes included.

Cost on the 2-core machine (cluster start excluded): ~180 s at its first run, most of it Spark's
JVM and Python workers starting and the throttled copy (150 rows/s) under the writer.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from existing_tables import fill, write_schema
from online_migration import check_converged, cleanup, cli, content, start_writer, stop_writer, wait_for

from keyshape.ops.migrate_online import online_state_path
from keyshape.store import create_table_from_schema
from keyshape.store.hbase import HBaseStore

pytestmark = [pytest.mark.hbase, pytest.mark.hbase_cluster]

FILLED = 300


def test_bulk_copy_offline_and_online_with_a_writer_ends_equal(hbase_cluster: Any, tmp_path: Path) -> None:
    url = hbase_cluster.url
    store = HBaseStore.from_url(url)
    off_old_path, off_old = write_schema(tmp_path, "kbc_old16", prefix="mod", buckets=16, namespace="default")
    off_new_path, off_new = write_schema(tmp_path, "kbc_new12", prefix="mod", buckets=12, namespace="default")
    on_old_path, on_old = write_schema(tmp_path, "kbc_seq", splits=["%012d" % i for i in (100, 200, 300)], namespace="default")
    on_new_path, on_new = write_schema(tmp_path, "kbc_salted12", prefix="mod", buckets=12, namespace="default")
    procs: list[subprocess.Popen[str]] = []
    try:
        for schema in (off_old, on_old):
            create_table_from_schema(store, schema)
            fill(store, schema, FILLED)
        # offline: Spark copies and verifies, the driver loads; NEW's regions are on all three servers
        off_args = ["migrate", str(off_old_path), str(off_new_path), "--hbase", url, "--spark", "--master", "local[2,4]"]
        off_args += ["--state", str(tmp_path / "off.json")]
        offline = cli(*off_args, log=tmp_path / "off.log")
        procs.append(offline)
        assert offline.wait(300) == 0, (tmp_path / "off.log").read_text()
        assert "verify: OK" in (tmp_path / "off.log").read_text()
        assert len({r.server for r in store.regions(off_new.table.full_name)}) == 3
        assert content(store, off_old) == content(store, off_new)
        # online, copied by Spark while the writer writes
        state = tmp_path / "on.json"
        args = ["migrate", str(on_old_path), str(on_new_path), "--online", "--hbase", url, "--state", str(state), "--spark", "--master", "local[2,4]"]
        writer = start_writer(url, on_old_path, tmp_path / "writer.log", rows=FILLED + 100, rate=120)
        procs.append(writer)
        first = cli(*args, "--set-replication-scope", "--max-rows-per-sec", "150", log=tmp_path / "first.log")
        procs.append(first)
        online = online_state_path(state)
        wait_for("the stream phase", lambda: online.is_file() and json.loads(online.read_text())["phase"] == "stream", timeout=300)

        def streaming() -> bool:
            lines = re.findall(r"^stream: .*stream [\d,]+ cells received, ([\d,]+) applied", (tmp_path / "first.log").read_text(), re.M)
            return bool(lines) and int(lines[-1].replace(",", "")) > 0

        wait_for("the stream to apply the writer's edits", streaming, timeout=120)
        counts = stop_writer(writer, tmp_path / "writer.log")
        first.send_signal(signal.SIGINT)
        assert first.wait(120) == 130, (tmp_path / "first.log").read_text()
        cut = cli(*args, "--cutover", "--max-lag", "1", log=tmp_path / "cutover.log")
        procs.append(cut)
        code = cut.wait(300)
        output = (tmp_path / "cutover.log").read_text()
        assert code == 0, output
        check_converged(store, on_old, on_new, counts, output, filled=FILLED, writer_rows=FILLED + 100)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for pair in ((off_old, off_new), (on_old, on_new)):
            try:
                cleanup(store, *pair)
            except Exception:  # the cluster goes away with the session
                pass
        store.close()
