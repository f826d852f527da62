"""``migrate --online`` with the copy through HBase's bulk-load path (issue 42), on the real
standalone HBase (marked `hbase`).

The operator's flow with an independent writer process putting, updating and deleting OLD during
the copy: ``migrate --online --via bulkload`` (or ``--spark``) copies while the replication peer
registered before the copy keeps NEW in step, streams while the writer writes; the writer is
stopped, Ctrl-C, then ``--cutover``. The referee (tests/online_migration.py) reads OLD and NEW
itself and finds them equal cell for cell, versions and deletes included.

And the same-timestamp case, made deterministic: a cell rewritten in OLD at its own timestamp
after the bulk copy read it and before its file is loaded, the rewrite streamed into NEW before
the load; the loaded file (sequence id above the stream's edit) puts the old value back on top.
The cut-over's repair must find and fix it.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path
from typing import Any

import pytest
from existing_tables import BASE_TIME, fill, record, write_schema
from online_migration import check_converged, cleanup, cli, content, start_writer, stop_writer, wait_for

import keyshape.ops.migrate_bulk as migrate_bulk_module
from keyshape.ops.migrate_bulk import migrate_bulk
from keyshape.ops.migrate_online import migrate_online, online_state_path
from keyshape.store import create_table_from_schema
from keyshape.store.hbase import HBaseStore

pytestmark = pytest.mark.hbase

ROWS = 300  # filled before the migration; the writer works on ids 0..ROWS+99


@pytest.mark.parametrize(
    ("copy", "ctrl_c_mid_copy"),
    [(["--via", "bulkload"], False), (["--spark", "--master", "local[2,4]"], False), (["--via", "bulkload"], True)],
    ids=["bulkload", "spark", "bulkload-ctrl-c-mid-copy"],
)
def test_online_bulk_copy_with_a_writer_ends_equal(
    hbase: Any, hbase_store: HBaseStore, tmp_path: Path, copy: list[str], ctrl_c_mid_copy: bool
) -> None:
    """The operator's flow; with ``ctrl_c_mid_copy`` the first run is stopped (Ctrl-C) once some
    source regions are loaded and checkpointed and not all, and the same command run again
    copies only the others (the writer writing all along), then streams."""
    store = hbase_store
    old_path, old = write_schema(tmp_path, "ksb_old", prefix="mod", buckets=4, namespace="default")
    new_path, new = write_schema(tmp_path, "ksb_new", prefix="mod", buckets=6, namespace="default")
    state = tmp_path / "state.json"
    online = online_state_path(state)
    common = ["migrate", str(old_path), str(new_path), "--online", "--hbase", hbase.url, "--state", str(state), *copy]
    procs = []
    try:
        create_table_from_schema(store, old)
        fill(store, old, ROWS)
        writer = start_writer(hbase.url, old_path, tmp_path / "writer.log", rows=ROWS + 100)
        procs.append(writer)
        # throttled, so the writer's puts, updates and deletes land while the copy reads and loads
        first = cli(*common, "--set-replication-scope", "--max-rows-per-sec", "20" if ctrl_c_mid_copy else "150", log=tmp_path / "first.log")
        procs.append(first)
        if ctrl_c_mid_copy:

            def loaded() -> list[bool]:
                return [r["done"] for r in json.loads(state.read_text())["regions"]] if state.is_file() else []

            wait_for("a first source region loaded", lambda: any(loaded()), timeout=120)
            first.send_signal(signal.SIGINT)
            assert first.wait(60) == 130, (tmp_path / "first.log").read_text()
            done_before = loaded()
            assert not all(done_before), "the copy ended before the Ctrl-C: nothing left to resume"
            first = cli(*common, "--max-rows-per-sec", "150", log=tmp_path / "again.log")
            procs.append(first)
        wait_for("the stream phase", lambda: online.is_file() and json.loads(online.read_text())["phase"] == "stream", timeout=240)
        copy_state = json.loads(state.read_text())
        assert copy_state["via"] == "bulkload" and all(r["done"] for r in copy_state["regions"]), copy_state
        log = tmp_path / ("again.log" if ctrl_c_mid_copy else "first.log")

        def streaming_the_writers_edits() -> bool:
            lines = re.findall(r"^stream: .*stream [\d,]+ cells received, ([\d,]+) applied", log.read_text(), re.M)
            return bool(lines) and int(lines[-1].replace(",", "")) > 0

        wait_for("the stream to apply the writer's edits", streaming_the_writers_edits, timeout=60)
        counts = stop_writer(writer, tmp_path / "writer.log")  # the applications are switched to NEW
        first.send_signal(signal.SIGINT)
        assert first.wait(60) == 130, log.read_text()
        third = cli(*common, "--cutover", "--max-lag", "1", log=tmp_path / "cutover.log")
        procs.append(third)
        code = third.wait(240)
        output = (tmp_path / "cutover.log").read_text()
        assert code == 0, output
        check_converged(store, old, new, counts, output, filled=ROWS, writer_rows=ROWS + 100)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        cleanup(store, old, new)


def test_a_same_timestamp_rewrite_streamed_before_the_load_is_repaired_at_the_cut_over(
    hbase_store: HBaseStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = hbase_store
    _, old = write_schema(tmp_path, "ksb_samets", namespace="default")  # one region: one load
    _, new = write_schema(tmp_path, "ksb_samets_new", prefix="mod", buckets=4, namespace="default")
    source, target = old.table.full_name, new.table.full_name
    rows = 40
    keys = [old.encode(record(i)) for i in range(rows)]
    new_keys = [new.encode(record(i)) for i in range(rows)]
    real_bulk_load = migrate_bulk_module.bulk_load
    seen: dict[str, Any] = {}

    def stream_applied_the_rewrites() -> bool:
        got = store.get_many(target, new_keys)
        return len(got) == rows and all(v.get(b"d:v", b"").startswith(b"new") for _, v in got)

    def load_after_the_rewrite(store_: Any, table: str, files: Any) -> Any:
        """The window of a bulk copy: its files are written from what it read; the writer
        rewrites every cell at its own timestamp and the stream applies it to NEW; then the load."""
        for i, key in enumerate(keys):
            store.put(source, key, {b"d:v": b"new%d" % i}, timestamp=BASE_TIME + i)
        wait_for("the stream to put the rewritten values into NEW", stream_applied_the_rewrites, timeout=60)
        done = real_bulk_load(store_, table, files)
        seen["stale"] = [i for i, (_, v) in enumerate(store.get_many(target, new_keys)) if v[b"d:v"].startswith(b"old")]
        return done

    monkeypatch.setattr(migrate_bulk_module, "bulk_load", load_after_the_rewrite)
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
            cutover=True,
            max_lag=1,
            cutover_timeout=60,
            interval=0.2,
            bulk_copy=migrate_bulk,
        )
        # the loaded file beat every streamed rewrite (the order rule), so all were stale
        assert seen["stale"] == list(range(rows)), seen["stale"]
        assert done.cut_over and done.verification is not None and done.verification.ok
        assert content(store, old) == content(store, new)
        said = " ".join(done.notes)
        assert f"{rows} cell(s) held another value at the same timestamp" in said, said
    finally:
        cleanup(store, old, new)
