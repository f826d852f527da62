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
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from existing_tables import BASE_TIME, fill, record, write_schema
from online_migration import BAD_KEY, ROOT, check_converged, cleanup, cli, content, start_writer, stop_writer, wait_for

from keyshape.ops.migrate import _write_batch
from keyshape.ops.migrate_online import KEEP_MARKERS, PURGE_DELETES, migrate_online, online_state_path, peer_id_for
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
    """The operator's flow, with a crash in it. Writer on; ``migrate --online`` stopped by
    ``interrupt`` once the copy is under way (``when`` = "copy") or streaming (``when`` =
    "stream"); the writer goes on while no sink runs; the same command again (it resumes and
    streams) while the writer writes; the writer stopped (the applications switched); Ctrl-C;
    then ``--cutover``, which must resume and cut over. Every run says that keyshape set OLD's
    REPLICATION_SCOPE and how to set it back (issue 39 item 15). Returns the writer's counts and
    the cut-over run's output."""
    state = tmp_path / "state.json"
    online = online_state_path(state)
    common = ["migrate", str(old_path), str(new_path), "--online", "--hbase", url, "--state", str(state)]
    writer = start_writer(url, old_path, tmp_path / "writer.log", rows=ROWS + 100)
    procs = [writer]
    scope_told = "alter '{}', {{NAME => 'd', REPLICATION_SCOPE => 0}}, {{NAME => 'm', REPLICATION_SCOPE => 0}}".format(old.table.full_name)
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
        assert "was set by keyshape" in first_log and scope_told in first_log, first_log
        # the peer outlives the process: HBase keeps OLD's edits for the next run; Ctrl-C pauses
        # it (no edits held in memory for a sink that is gone), kill -9 cannot
        assert store.replication_peer_states()[peer_id_for(old, new)] is (interrupt != signal.SIGINT)
        time.sleep(2)  # the writer goes on while no sink runs
        second = cli(*common, "--max-rows-per-sec", "100", "--batch-size", "50", log=tmp_path / "second.log")
        procs.append(second)

        def streaming_the_writers_edits() -> bool:
            lines = re.findall(r"^stream: .*stream [\d,]+ cells received, ([\d,]+) applied", (tmp_path / "second.log").read_text(), re.M)
            return bool(lines) and int(lines[-1].replace(",", "")) > 0

        wait_for("the resumed run to stream the writer's edits into NEW", streaming_the_writers_edits)
        counts = stop_writer(writer, tmp_path / "writer.log")  # the applications are switched to NEW
        second.send_signal(signal.SIGINT)
        assert second.wait(60) == 130, (tmp_path / "second.log").read_text()
        second_log = (tmp_path / "second.log").read_text()
        assert "was set by keyshape" in second_log and scope_told in second_log, second_log
        third = cli(*common, "--cutover", "--max-lag", "1", log=tmp_path / "cutover.log")
        procs.append(third)
        code = third.wait(240)
        output = (tmp_path / "cutover.log").read_text()
        if rejects:  # cut over all the same, but the run fails, as an offline migrate with rejects
            assert code != 0 and "row(s) of" in output and "were not copied" in output, output
            assert "zz-not-a-key" in (tmp_path / "state.rejects.tsv").read_text()  # the copy's (written before the peer: never streamed)
        else:
            assert code == 0, output
        assert "set it back now" in output and scope_told in output, output
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
        hbase_store.remove_replication_peer(peer)
        # --sink-bind is bound exactly or refused before anything changes (issue 39 item 14):
        # a port in use is not swapped for another, an unresolvable host is named
        with socket.create_server(("127.0.0.1", 0)) as busy:
            port = busy.getsockname()[1]
            one_line(run("--hbase", hbase.url, "--set-replication-scope", "--sink-bind", f"127.0.0.1:{port}"), f"port {port} is in use")
        one_line(run("--hbase", hbase.url, "--set-replication-scope", "--sink-bind", "no-such-host.invalid:16999"), "'no-such-host.invalid'")
        assert set(hbase_store.family_attributes(old.table.full_name, "REPLICATION_SCOPE").values()) <= {"0", None}
        assert not hbase_store.table_exists(new.table.full_name) and peer not in hbase_store.replication_peers()
        assert not list(tmp_path.glob("s.*")), "a refused run leaves no state or lock file"
    finally:
        cleanup(hbase_store, old, new)
    nohbase = run("--hbase", "127.0.0.1:1")
    assert nohbase.returncode != 0 and "cannot reach ZooKeeper" in nohbase.stderr and "Traceback" not in nohbase.stderr


def _cells_differing(store: HBaseStore, old: KeySchema, new: KeySchema) -> int:
    """The referee's count of cells (decoded key, column, timestamp) whose value differs between
    OLD and NEW, or that one of them lacks."""

    def cells(schema: KeySchema) -> dict[tuple[Any, ...], bytes]:
        return {
            (key, column, ts): value
            for key, columns in content(store, schema).items()
            for column, versions in columns.items()
            for ts, value in versions
        }

    a, b = cells(old), cells(new)
    return sum(a.get(cell) != b.get(cell) for cell in a.keys() | b.keys())


def test_a_value_rewritten_at_its_own_timestamp_during_a_throttled_copy_is_repaired_at_the_cut_over(hbase_store: HBaseStore, tmp_path: Path) -> None:
    """Issue 39 item 12, as the issue measured it. A throttled copy (batches of 20) of 160 rows in
    one region; once its first batch is written (its region scanner is open: a snapshot of OLD as
    it was), every cell is rewritten in OLD at its OWN timestamp (the writer), and the copy waits
    until the stream has put the new values into NEW. The copy then writes the later batches as
    its snapshot holds them, over the stream's newer values (HBase keeps the later write of one
    timestamp): NEW differs from OLD in those cells, deterministically (the copy waits in its
    progress callback; nothing is left to timing). The writer is done before the copy ends, so the
    cut-over runs in the same run (as an operator's --cutover after the writers stopped), and its
    first status is taken before any verify: the referee counts the differing cells there. The
    cut-over must repair them, end equal and say what it repaired.

    Why one run and not the stream/Ctrl-C/--cutover flow: a restarted peer made HBase ship the
    rewrites again (seen here: the second run's stream healed all 120 cells), which would hide
    the hole by luck, not repair it."""
    store = hbase_store
    _, old = write_schema(tmp_path, "ksm_samets", namespace="default")  # one region
    _, new = write_schema(tmp_path, "ksm_samets_new", prefix="mod", buckets=4, namespace="default")
    source, target = old.table.full_name, new.table.full_name
    rows, batch = 160, 20
    keys = [old.encode(record(i)) for i in range(rows)]
    new_keys = [new.encode(record(i)) for i in range(rows)]
    seen: dict[str, Any] = {}

    def stream_applied_the_rewrites() -> bool:
        got = store.get_many(target, new_keys)
        return len(got) == rows and all(v.get(b"d:v", b"").startswith(b"new") for _, v in got)

    def writer_and_referee(status: Any) -> None:
        if status.phase == "copy" and "rewritten" not in seen:
            for i, key in enumerate(keys):
                store.put(source, key, {b"d:v": b"new%d" % i}, timestamp=BASE_TIME + i)
            seen["rewritten"] = True
            wait_for("the stream to put the rewritten values into NEW", stream_applied_the_rewrites, timeout=60)
        if status.phase == "cutover" and "stale" not in seen:  # the cut-over's first look, before its verify
            seen["stale"] = [i for i, (_, v) in enumerate(store.get_many(target, new_keys)) if v[b"d:v"].startswith(b"old")]
            seen["differing"] = _cells_differing(store, old, new)

    try:
        create_table_from_schema(store, old)
        with store.writer(source) as w:
            for i, key in enumerate(keys):
                w.put(key, {b"d:v": b"old%d" % i}, timestamp=BASE_TIME + i)
        done = migrate_online(
            store,
            old,
            new,
            state_path=tmp_path / "state.json",
            set_replication_scope=True,
            batch_size=batch,
            max_rows_per_sec=400,
            cutover=True,
            max_lag=1,
            cutover_timeout=60,
            progress=writer_and_referee,
            interval=0.2,
        )
        # the hole: the batches the copy wrote after the stream applied the rewrites (batch 1
        # was written before; batch 2 was read ahead and may have been written either way)
        stale = seen["stale"]
        assert set(range(2 * batch, rows)) <= set(stale) <= set(range(batch, rows)), stale
        assert seen["differing"] == len(stale) >= 120, seen["differing"]
        assert done.cut_over and done.verification is not None and done.verification.ok
        assert content(store, old) == content(store, new) and _cells_differing(store, old, new) == 0
        said = " ".join(done.notes)
        assert f"{len(stale)} cell(s) held another value at the same timestamp" in said, said
    finally:
        cleanup(store, old, new)


def test_edits_of_a_dropped_namesake_never_reach_new(hbase_store: HBaseStore, tmp_path: Path) -> None:
    """Issue 39 item 13. OLD already had REPLICATION_SCOPE 1 (as a table replicated to a DR
    cluster has); it is dropped and created again with scope 1 and other rows. A new peer reads
    the current WAL from its start, so HBase ships the dropped table's edits too (the test waits
    until the sink has received them: otherwise it would prove nothing). Only OLD's own regions'
    edits may reach NEW: after the operator's flow (stream, then --cutover) NEW holds exactly
    OLD's cells and the cut-over passes."""
    store = hbase_store
    _, old = write_schema(tmp_path, "ksm_namesake", namespace="default")
    _, new = write_schema(tmp_path, "ksm_namesake_new", prefix="mod", buckets=4, namespace="default")
    source = old.table.full_name
    dropped, kept = 200, 100
    state = tmp_path / "state.json"
    try:
        for first, count in ((10_000, dropped), (0, kept)):  # the namesake's rows, then OLD's own
            if store.table_exists(source):
                store.delete_table(source)
            create_table_from_schema(store, old)
            store.set_replication_scope(source, ["d", "m"])
            with store.writer(source) as w:
                for i in range(first, first + count):
                    w.put(old.encode(record(i)), {b"d:v": b"v%d" % i}, timestamp=BASE_TIME + i)
        stream = migrate_online(
            store,
            old,
            new,
            state_path=state,
            interval=0.2,
            stream_until=lambda status: status.phase == "stream" and status.received >= dropped + kept,
        )
        assert stream.status.received >= dropped + kept, "HBase did not ship the dropped table's edits: this test proves nothing"
        done = migrate_online(store, old, new, state_path=state, cutover=True, max_lag=1, cutover_timeout=30, interval=0.2)
        assert done.cut_over
        old_cells, new_cells = content(store, old), content(store, new)
        assert len(old_cells) == kept and new_cells == old_cells, f"{len(new_cells) - len(old_cells)} extra row(s) in NEW"
    finally:
        cleanup(store, old, new)
