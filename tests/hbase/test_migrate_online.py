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
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from existing_tables import fill, record, write_schema

from keyshape.ops.migrate import _write_batch
from keyshape.ops.migrate_online import KEEP_MARKERS, PURGE_DELETES, online_state_path, peer_id_for
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema
from keyshape.store.hbase import HBaseStore
from keyshape.store.hbase.walapply import apply_cells
from keyshape.store.hbase.walentry import CellType, WalCell

pytestmark = pytest.mark.hbase

ROOT = Path(__file__).resolve().parents[2]
WRITER = ROOT / "tests" / "online_writer.py"
ROWS = 300  # filled before the migration; the writer works on ids 0..ROWS+99
BAD_KEY = b"zz-not-a-key"  # a row OLD's schema cannot decode


def cli(*args: str, log: Path) -> subprocess.Popen[str]:
    out = open(log, "w")  # noqa: SIM115 - the process owns it until it ends
    return subprocess.Popen([sys.executable, "-m", "keyshape.cli", *args], stdout=out, stderr=subprocess.STDOUT, text=True, cwd=ROOT)


def start_writer(url: str, schema_path: Path, log: Path) -> subprocess.Popen[str]:
    out = open(log, "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), url, str(schema_path), "--rows", str(ROWS + 100), "--rate", "150"],
        stdout=out,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while "started" not in log.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    return proc


def stop_writer(proc: subprocess.Popen[str], log: Path) -> dict[str, int]:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0, log.read_text()
    return dict(json.loads(log.read_text().strip().splitlines()[-1]))


def content(store: HBaseStore, schema: KeySchema) -> dict[tuple[Any, ...], dict[bytes, list[tuple[int, bytes]]]]:
    """The referee's view: decoded key -> column -> every stored (timestamp, value)."""
    return {
        tuple(sorted(schema.decode(key).items())): {c: sorted(v) for c, v in columns.items()}
        for key, columns in store.scan_versions(schema.table.full_name)
        if key != BAD_KEY
    }


def wait_for(what: str, check: Any, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f} s"
        time.sleep(0.2)


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
    writer = start_writer(url, old_path, tmp_path / "writer.log")
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


def check_converged(store: HBaseStore, old: KeySchema, new: KeySchema, counts: dict[str, int], output: str) -> None:
    assert counts["ops"] > 500 and counts["row_deletes"] > 20, counts
    old_cells, new_cells = content(store, old), content(store, new)
    ids = {dict(k)["event_id"] for k in old_cells}
    assert len(old_cells) > ROWS // 2
    assert len(ids) < ROWS + 100, "some rows should be deleted (and not put again) in OLD"
    assert max(ids) >= ROWS, "the writer's new rows are there"
    assert old_cells == new_cells
    assert "verify: OK" in output and "cut over" in output
    # the resumed run received what HBase queued while no sink ran, and applied all of it
    # (a batch refused before the copy resumed, or failed, is received again: then more received)
    final = re.search(r"^done: .*stream ([\d,]+) cells received, ([\d,]+) applied, ([\d,]+) batches refused", output, re.M)
    assert final is not None, output
    received, applied, refused = (int(g.replace(",", "")) for g in final.groups())
    assert 0 < applied <= received and (refused > 0 or applied == received), final.group(0)
    assert peer_id_for(old, new) not in store.replication_peers()
    assert set(store.family_attributes(new.table.full_name, PURGE_DELETES, configuration=True).values()) == {None}


def test_resalt_16_to_12_with_the_migrate_process_killed_mid_stream(hbase: Any, hbase_store: HBaseStore, tmp_path: Path) -> None:
    store = hbase_store
    old_path, old = write_schema(tmp_path, "ksm_old16", prefix="mod", buckets=16, namespace="default")
    new_path, new = write_schema(tmp_path, "ksm_new12", prefix="mod", buckets=12, namespace="default")
    try:
        create_table_from_schema(store, old)
        fill(store, old, ROWS)
        counts, output = run_online(store, hbase.url, tmp_path, old_path, old, new_path, new, signal.SIGKILL, "stream")
        check_converged(store, old, new, counts, output)
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
        check_converged(store, old, new, counts, output)
    finally:
        cleanup(store, old, new)


def cleanup(store: HBaseStore, *schemas: KeySchema) -> None:
    peer = peer_id_for(schemas[0], schemas[1])
    if peer in store.replication_peers():
        store.remove_replication_peer(peer)
    for schema in schemas:
        if store.table_exists(schema.table.full_name):
            store.delete_table(schema.table.full_name)


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
