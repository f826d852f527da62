"""``keyshape migrate --online`` end to end on the real HBase (issue 32).

An independent writer process (tests/online_writer.py) keeps putting, updating and deleting rows
of OLD, deleting rows and putting them again while the copy runs; ``keyshape migrate --online``
runs as a separate process, is stopped (kill -9 mid-stream, or Ctrl-C mid-copy) and run again
with ``--cutover``. A referee then reads both tables itself and compares them cell for cell:
decoded key, family, qualifier, timestamp and value of every stored version; rows the writer
deleted are absent from both. Plus: delete markers stay effective through a major compaction of
NEW whatever order the marker and the cell it masks arrive in, and the one-line refusals.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from existing_tables import fill, record, write_schema
from online_migration import BAD_KEY, ROOT, check_converged, cleanup, cli, start_writer, stop_writer, wait_for

from keyshape.ops.migrate import _write_batch
from keyshape.ops.migrate_online import KEEP_MARKERS, PURGE_DELETES, online_state_path, peer_id_for
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema
from keyshape.store.hbase import HBaseStore
from keyshape.store.hbase.walapply import apply_cells
from keyshape.store.hbase.walentry import CellType, WalCell

pytestmark = pytest.mark.hbase

ROWS = 300  # filled before the migration; the writer works on ids 0..ROWS+99


def run_online(
    store: HBaseStore,
    url: str,
    tmp_path: Path,
    old_path: Path,
    old: KeySchema,
    new_path: Path,
    new: KeySchema,
    interrupt: signal.Signals,
    when: str,
    rejects: bool = False,
) -> tuple[dict[str, int], str]:
    """Writer on; ``migrate --online`` stopped by ``interrupt`` once the copy is under way
    (``when`` = "copy") or streaming (``when`` = "stream"); writer on while it is down; then
    ``--online --cutover`` with the writer stopped a few seconds in. Returns the writer's counts
    and the cut-over run's output."""
    state = tmp_path / "state.json"
    online = online_state_path(state)
    common = ["migrate", str(old_path), str(new_path), "--online", "--hbase", url, "--state", str(state)]
    writer = start_writer(url, old_path, tmp_path / "writer.log", rows=ROWS + 100)
    procs = [writer]
    try:
        first = cli(*common, "--set-replication-scope", "--max-rows-per-sec", "100", "--batch-size", "50", log=tmp_path / "first.log")
        procs.append(first)
        if when == "copy":
            wait_for("the copy to start", lambda: state.is_file() and sum(r["rows"] for r in json.loads(state.read_text())["regions"]) > 0)
        else:
            wait_for("the stream phase", lambda: online.is_file() and json.loads(online.read_text())["phase"] == "stream")
            # mid-stream: NEW keeps every delete marker while the peer exists
            assert set(store.family_attributes(new.table.full_name, PURGE_DELETES, configuration=True).values()) == {KEEP_MARKERS}
            time.sleep(2)
        first.send_signal(interrupt)
        code = first.wait(60)
        first_log = (tmp_path / "first.log").read_text()
        assert code == (130 if interrupt == signal.SIGINT else -9), first_log
        if interrupt == signal.SIGINT:
            assert "run the same command again to resume" in first_log
        # the peer outlives the process: HBase keeps OLD's edits for the next run; Ctrl-C pauses
        # it (no edits held in memory for a sink that is gone), kill -9 cannot
        assert store.replication_peer_states()[peer_id_for(old, new)] is (interrupt != signal.SIGINT)
        time.sleep(2)  # the writer goes on while no sink runs
        second = cli(*common, "--cutover", "--max-lag", "1", log=tmp_path / "second.log")
        procs.append(second)
        time.sleep(4)
        counts = stop_writer(writer, tmp_path / "writer.log")
        code = second.wait(240)
        output = (tmp_path / "second.log").read_text()
        if rejects:  # cut over all the same, but the run fails, as an offline migrate with rejects
            assert code != 0 and "row(s) of" in output and "were not copied" in output, output
            assert "zz-not-a-key" in (tmp_path / "state.rejects.tsv").read_text()  # the copy's (written before the peer: never streamed)
        else:
            assert code == 0, output
        assert not online.with_name(online.name + ".lock").exists(), "a finished migration leaves no lock file"
        return counts, output
    finally:
        for proc in procs:  # after a failure: nothing of this test keeps running
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_resalt_16_to_12_with_the_migrate_process_killed_mid_stream(hbase: Any, hbase_store: HBaseStore, tmp_path: Path) -> None:
    store = hbase_store
    old_path, old = write_schema(tmp_path, "ksm_old16", prefix="mod", buckets=16, namespace="default")
    new_path, new = write_schema(tmp_path, "ksm_new12", prefix="mod", buckets=12, namespace="default")
    try:
        create_table_from_schema(store, old)
        fill(store, old, ROWS)
        counts, output = run_online(store, hbase.url, tmp_path, old_path, old, new_path, new, signal.SIGKILL, "stream")
        check_converged(store, old, new, counts, output, filled=ROWS, writer_rows=ROWS + 100)
    finally:
        cleanup(store, old, new)


def test_sequential_into_salted_with_ctrl_c_mid_copy_and_an_undecodable_row(hbase: Any, hbase_store: HBaseStore, tmp_path: Path) -> None:
    store = hbase_store
    old_path, old = write_schema(tmp_path, "ksm_seq", namespace="default")
    new_path, new = write_schema(tmp_path, "ksm_salted", prefix="mod", buckets=12, namespace="default")
    try:
        create_table_from_schema(store, old)
        fill(store, old, ROWS)
        store.put(old.table.full_name, BAD_KEY, {b"d:v": b"junk"})  # rejected by the copy, reported at the cut-over
        counts, output = run_online(store, hbase.url, tmp_path, old_path, old, new_path, new, signal.SIGINT, "copy", rejects=True)
        check_converged(store, old, new, counts, output, filled=ROWS, writer_rows=ROWS + 100)
    finally:
        cleanup(store, old, new)


MARKERS = [
    (CellType.DELETE, b"v"),  # the one version at its timestamp
    (CellType.DELETE_COLUMN, b"v"),  # every version of d:v at or before
    (CellType.DELETE_FAMILY, b""),  # every column of d at or before
    (CellType.DELETE_FAMILY_VERSION, b""),  # every column of d at exactly its timestamp
]


def test_a_marker_that_arrives_first_still_masks_the_copied_cell_after_a_major_compaction(hbase_store: HBaseStore, tmp_path: Path) -> None:
    """The stream delivers a delete marker (each type) before the copy delivers the cell it
    masks, and NEW is major-compacted in between. With the setting migrate_online gives NEW's
    families (purge markers only after 2**62 ms) the cell stays masked; the control table without
    it shows the cell back, which proves the compaction really dropped the marker there. A third
    table pins that KEEP_DELETED_CELLS => TRUE is not enough (HBase 2.6.4 drops the marker)."""
    store = hbase_store
    tables = {what: write_schema(tmp_path, f"ksm_{what}", prefix="mod", buckets=4, namespace="default")[1] for what in ("purge", "kdc", "control")}
    ts = 1_767_225_600_000  # in the past, as a writer's deletes are
    try:
        for schema in tables.values():
            create_table_from_schema(store, schema)
        store.set_family_attribute(tables["purge"].table.full_name, ["d", "m"], PURGE_DELETES, KEEP_MARKERS, configuration=True)
        store.set_family_attribute(tables["kdc"].table.full_name, ["d", "m"], "KEEP_DELETED_CELLS", "TRUE")
        seen = {}
        for what, schema in tables.items():
            table = schema.table.full_name
            keys = [schema.encode(record(i)) for i in range(len(MARKERS))]
            # the stream's path: each marker at its own type and timestamp
            apply_cells(store, table, [(key, [WalCell(key, b"d", qualifier, ts, kind, b"")]) for key, (kind, qualifier) in zip(keys, MARKERS)])
            store.major_compact_table(table)
            # the copy's path, later: the cell as OLD held it when the copy read it
            batch = [(key, {b"d:v": [(ts, b"old value")]}) for key in keys]
            _write_batch(store, table, keys, batch)
            seen[what] = [store.get(table, key) for key in keys]
        names = [kind.name for kind, _ in MARKERS]
        assert seen["purge"] == [{}] * 4, f"a compacted-away marker let the cell back: {dict(zip(names, seen['purge']))}"
        back = [{b"d:v": b"old value"}] * 4
        assert seen["control"] == back, f"the control kept markers, so this test proves nothing: {dict(zip(names, seen['control']))}"
        assert seen["kdc"] == back, "KEEP_DELETED_CELLS now keeps markers that mask nothing: it would do instead"
    finally:
        for schema in tables.values():
            if store.table_exists(schema.table.full_name):
                store.delete_table(schema.table.full_name)


def test_refusals_are_one_line(hbase: Any, hbase_store: HBaseStore, tmp_path: Path) -> None:
    """A missing source, NEW with other key fields, scope 0 without --set-replication-scope, a
    peer of this migration's id that is not keyshape's, no HBase: one line, non-zero, nothing
    created or changed."""
    old_path, old = write_schema(tmp_path, "ksm_ref_old", namespace="default")
    new_path, new = write_schema(tmp_path, "ksm_ref_new", prefix="mod", buckets=12, namespace="default")
    args = ["migrate", str(old_path), str(new_path), "--online", "--state", str(tmp_path / "s.json")]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "keyshape.cli", *args, *extra], capture_output=True, text=True, cwd=ROOT, timeout=120)

    def one_line(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
        assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and all(n in proc.stderr for n in needles), proc.stderr

    one_line(run("--hbase", hbase.url), "does not exist")
    other = tmp_path / "other-fields.toml"
    other.write_text(new_path.read_text().replace('name = "event_time"', 'name = "event_ts"').replace("fields.event_time", "fields.event_ts"))
    args[2] = str(other)
    one_line(run("--hbase", hbase.url), "other key fields", "event_ts")
    args[2] = str(new_path)
    peer = peer_id_for(old, new)
    try:
        create_table_from_schema(hbase_store, old)
        one_line(run("--hbase", hbase.url), "--set-replication-scope", "REPLICATION_SCOPE 0")
        assert not hbase_store.table_exists(new.table.full_name)
        assert peer not in hbase_store.replication_peers()
        # a peer with this migration's id that is not keyshape's sink: refused before anything changes
        hbase_store.add_replication_peer(peer, f"{hbase.url.removeprefix('hbase://')}:/ksm-somebody-else", {old.table.full_name: []}, enabled=False)
        one_line(run("--hbase", hbase.url, "--set-replication-scope"), f"replication peer {peer} exists", "remove_peer")
        assert set(hbase_store.family_attributes(old.table.full_name, "REPLICATION_SCOPE").values()) <= {"0", None}
        assert not hbase_store.table_exists(new.table.full_name)
        assert not list(tmp_path.glob("s.*")), "a refused run leaves no state or lock file"
    finally:
        cleanup(hbase_store, old, new)
    nohbase = run("--hbase", "127.0.0.1:1")
    assert nohbase.returncode != 0 and "cannot reach ZooKeeper" in nohbase.stderr and "Traceback" not in nohbase.stderr
