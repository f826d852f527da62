"""HBase reads keyshape's HFiles (marked `hbase`): files handed over with the bulk-load RPCs
(prepare, BulkLoadHFile, cleanup), split at region boundaries, re-grouped after a region split
the loader had not seen, then scanned back cell for cell (families, qualifiers, timestamps, all
versions, Delete / DeleteColumn / DeleteFamily markers applied), the same after a major
compaction, and HBase's own HFilePrettyPrinter run over the files inside the region.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from existing_tables import write_schema

from keyshape.errors import BadInput
from keyshape.store import create_table_from_schema, open_store
from keyshape.store.hbase.bulkload import bulk_load, check_staging
from keyshape.store.hbase.hfile import DELETE, DELETE_COLUMN, DELETE_FAMILY, PUT, HFileWriter

pytestmark = pytest.mark.hbase

SPLITS = ["000000000010", "000000000020"]


def _row(i: int) -> bytes:
    return b"%012d_x" % i


def _files(staging: Path) -> list[Any]:
    """Family d: rows 0..29 (crossing both boundaries), d:v in 3 versions, a Delete of one version
    of row 3, a DeleteColumn of row 4's d:v at its middle version; family m: m:tag, masked by a
    DeleteFamily at row 5."""
    staging.mkdir(parents=True, exist_ok=True)
    out = []
    with HFileWriter(staging / "d1", b"d", block_size=256) as w:
        for i in range(30):
            r = _row(i)
            for ts in (102, 101, 100):
                if i == 4 and ts == 101:
                    w.append(r, b"v", ts, b"", DELETE_COLUMN)  # masks 101 and 100
                if i == 3 and ts == 101:
                    w.append(r, b"v", ts, b"", DELETE)  # masks 101 only
                w.append(r, b"v", ts, b"v%d.%d" % (i, ts), PUT)
        out.append(w.close())
    with HFileWriter(staging / "m1", b"m") as w:
        for i in range(30):
            if i == 5:
                w.append(_row(i), b"", 500, b"", DELETE_FAMILY)
            w.append(_row(i), b"tag", 200 + i, b"t%d" % i, PUT)
        out.append(w.close())
    return out


def _expected() -> dict[bytes, dict[bytes, list[tuple[int, bytes]]]]:
    rows = {}
    for i in range(30):
        versions = [(ts, b"v%d.%d" % (i, ts)) for ts in (102, 101, 100)]
        if i == 3:
            versions = [v for v in versions if v[0] != 101]
        if i == 4:
            versions = versions[:1]
        cells = {b"d:v": versions}
        if i != 5:
            cells[b"m:tag"] = [(200 + i, b"t%d" % i)]
        rows[_row(i)] = cells
    return rows


def _pretty_print(hbase: Any, path: Path) -> str:
    lib = hbase.standalone.lib
    cmd = [
        "java",
        "-Xmx256m",
        "-XX:+UseSerialGC",
        "-cp",
        f"{lib}/*",
        "org.apache.hadoop.hbase.io.hfile.HFilePrettyPrinter",
        "-k",
        "-m",
        "-p",
        "-f",
        path.as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_bulk_loaded_files_scan_back_cell_for_cell(hbase: Any, tmp_path: Path) -> None:
    _, schema = write_schema(tmp_path, "bulk", splits=SPLITS)
    table = schema.table.full_name
    store = open_store(hbase.url)
    stale = open_store(hbase.url)
    try:
        create_table_from_schema(store, schema)
        staging = tmp_path / "staging"
        check_staging(store, table, staging)  # this machine's servers: the local directory will do
        files = _files(staging)
        stale.regions(table)  # `stale` caches the three regions ...
        namespace, name = table.split(":")
        stale.cluster.region_list(namespace, name)
        store.split_region(table, _row(25))  # ... and one of them splits behind its back
        result = bulk_load(stale, table, files)
        # d1 and m1 each split at 10, 20 and then at 25 (found after the first round's refusal)
        assert result.splits == 6 and result.files == 8 and result.rounds == 2
        assert not any(staging.iterdir())  # every file moved into a region
        got = dict(store.scan_versions(table))
        assert got == _expected()
        # HBase's own reader over a store file inside a region
        data = hbase.standalone.data_dir if hbase.standalone else None
        if data is not None:
            region_files = [Path(root) / f for root, _, names in os.walk(data / "hbase" / "data" / namespace / name) for f in names if "_SeqId_" in f]
            assert len(region_files) == 8
            printed = _pretty_print(hbase, region_files[0])
            assert "BULKLOAD_TIMESTAMP" in printed and "majorVersion=3" in printed and "Key out of order" not in printed
        store.major_compact_table(table)
        assert dict(store.scan_versions(table)) == _expected()
    finally:
        store.delete_table(table)
        store.close()
        stale.close()


def test_a_region_server_elsewhere_is_refused_in_one_line(hbase: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, schema = write_schema(tmp_path, "bulkfar")
    store = open_store(hbase.url)
    try:
        create_table_from_schema(store, schema)
        monkeypatch.setattr("keyshape.store.hbase.bulkload._local_names", lambda: {"some-other-host"})
        with pytest.raises(BadInput, match="cannot read them there") as e:
            check_staging(store, schema.table.full_name, tmp_path)
        assert "\n" not in str(e.value)
    finally:
        store.delete_table(schema.table.full_name)
        store.close()


def test_migrate_via_bulkload_is_exact_and_rejects_as_the_put_path(hbase: Any, tmp_path: Path) -> None:
    from existing_tables import fill

    from keyshape.ops.migrate_bulk import migrate_bulk
    from keyshape.ops.verify import digest_rows, verify_migration

    _, old = write_schema(tmp_path, "bulk_old", splits=["000000000100", "000000000200"])
    _, new = write_schema(tmp_path, "bulk_new", prefix="mod", buckets=8)
    store = open_store(hbase.url)
    try:
        create_table_from_schema(store, old)
        fill(store, old, 300)
        before = digest_rows(store.scan_versions(old.table.full_name), old)
        with store.writer(old.table.full_name) as w:
            w.put(b"zz-not-a-key", {b"d:v": b"x"})  # the old design cannot decode it: a reject
        state = tmp_path / "state.json"
        result = migrate_bulk(store, old, new, state_path=state, run_rows=50)  # several runs per region
        assert result.rows == 300 and result.rejected == 1 and result.regions == 3
        assert "zz-not-a-key" in Path(result.reject_path).read_text()
        store.delete(old.table.full_name, b"zz-not-a-key")  # the referee counts it as a difference (the CLI exits 1)
        check = verify_migration(store, old, new)
        assert check.ok, check.lines()
        assert digest_rows(store.scan_versions(new.table.full_name), new) == before
        assert len(store.regions(new.table.full_name)) == 8
        # a resume of a finished copy copies nothing more
        again = migrate_bulk(store, old, new, state_path=state, resume=True)
        assert again.rows == 0 and again.total_rows == 300
    finally:
        for schema in (old, new):
            if store.table_exists(schema.table.full_name):
                store.delete_table(schema.table.full_name)
        store.close()


def test_one_cell_rows_are_copied_from_columns_exactly(hbase: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Responses of one-cell rows of one layout go from the scan's cell block to the HFiles as
    columns (no row objects); a response holding a row of two versions, and one holding a key
    the old design cannot decode (same width, same cell layout), take the row path: every
    cell, timestamp and version still copied, the reject as the put path words it."""
    from existing_tables import BASE_TIME, record

    from keyshape.ops import migrate_bulk as bulk
    from keyshape.ops.verify import digest_rows, verify_migration

    _, old = write_schema(tmp_path, "cols_old", splits=["000000000100", "000000000200"])
    _, new = write_schema(tmp_path, "cols_new", prefix="mod", buckets=8)
    columnar = []
    real = bulk._new_key_matrix
    monkeypatch.setattr(bulk, "_new_key_matrix", lambda *a: columnar.append(real(*a)) or columnar[-1])
    store = open_store(hbase.url)
    try:
        create_table_from_schema(store, old)
        table = old.table.full_name
        keys = [old.encode(record(i)) for i in range(300)]
        with store.writer(table) as w:
            for i, key in enumerate(keys):
                w.put(key, {b"d:v": b"%08d" % i}, timestamp=BASE_TIME + i)
            w.put(keys[57], {b"d:v": b"%08d" % -57}, timestamp=BASE_TIME + 1000)  # a second version: region 0 is read as rows
        before = digest_rows(store.scan_versions(table), old)
        bad = b"z" * len(keys[0])  # the last row of region 2, of the same layout as its neighbours
        with store.writer(table) as w:
            w.put(bad, {b"d:v": b"%08d" % 0}, timestamp=BASE_TIME)
        result = bulk.migrate_bulk(store, old, new, state_path=tmp_path / "state.json", run_rows=150)
        assert result.rows == 300 and result.rejected == 1
        assert "zzz" in Path(result.reject_path).read_text()
        # region 1 (and the part of region 2 before a batch of the bad key) came as columns
        assert any(m is not None for m in columnar) and any(m is None for m in columnar)
        store.delete(table, bad)
        check = verify_migration(store, old, new)
        assert check.ok, check.lines()
        assert digest_rows(store.scan_versions(new.table.full_name), new) == before
        assert store.cells(new.table.full_name, new.encode(record(57)), b"d:v") == [(BASE_TIME + 1000, b"%08d" % -57), (BASE_TIME + 57, b"%08d" % 57)]
        assert store.cells(new.table.full_name, new.encode(record(150)), b"d:v") == [(BASE_TIME + 150, b"%08d" % 150)]
    finally:
        for schema in (old, new):
            if store.table_exists(schema.table.full_name):
                store.delete_table(schema.table.full_name)
        store.close()


def test_cli_migrate_via_bulkload_verifies(hbase: Any, tmp_path: Path) -> None:
    import subprocess
    import sys

    from existing_tables import fill

    old_path, old = write_schema(tmp_path, "cli_old", splits=["000000000050"])
    new_path, new = write_schema(tmp_path, "cli_new", prefix="mod", buckets=4)
    store = open_store(hbase.url)
    root = Path(__file__).resolve().parents[2]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "keyshape.cli", "migrate", str(old_path), str(new_path), "--hbase", hbase.url, *args],
            capture_output=True,
            text=True,
            cwd=root,
            timeout=600,
        )

    try:
        create_table_from_schema(store, old)
        fill(store, old, 100)
        refused = run("--via", "bulkload", "--master", "local[2]")
        assert refused.returncode != 0 and "Traceback" not in refused.stderr and "--master applies to --spark only" in refused.stderr
        proc = run("--via", "bulkload", "--state", str(tmp_path / "s.json"))
        assert proc.returncode == 0, proc.stderr
        assert "copied 100 rows" in proc.stdout and "verify: OK" in proc.stdout
    finally:
        for schema in (old, new):
            if store.table_exists(schema.table.full_name):
                store.delete_table(schema.table.full_name)
        store.close()


def test_same_timestamp_order_of_stream_edits_and_a_bulk_loaded_file(hbase: Any, tmp_path: Path) -> None:
    """The rule an online bulk copy has to live with (issue 42): a bulk-loaded file gets a
    sequence id above every edit its region holds, so at one cell and timestamp the file's value
    beats a put made BEFORE the load, and a put made AFTER the load beats the file -- also after
    a major compaction. A stream edit applied before the copy's file of the same row is loaded
    is therefore overwritten by the (older) copied value, as with the put path's copy: the
    online migration's repair step has to catch it."""
    _, schema = write_schema(tmp_path, "bulkorder")
    table = schema.table.full_name
    store = open_store(hbase.url)
    try:
        create_table_from_schema(store, schema)
        store.put(table, _row(1), {b"d:v": b"stream-before"}, timestamp=1000)
        staging = tmp_path / "s"
        staging.mkdir()
        with HFileWriter(staging / "f", b"d") as w:
            w.append(_row(1), b"v", 1000, b"copied")
            w.append(_row(2), b"v", 1000, b"copied")
            summary = w.close()
        bulk_load(store, table, [summary])
        store.put(table, _row(2), {b"d:v": b"stream-after"}, timestamp=1000)
        for _ in range(2):  # as loaded, then after a major compaction
            got = dict(store.scan_versions(table))
            assert got[_row(1)] == {b"d:v": [(1000, b"copied")]}  # the file's seq id > the earlier put's
            assert got[_row(2)] == {b"d:v": [(1000, b"stream-after")]}  # a later put's seq id > the file's
            store.major_compact_table(table)
    finally:
        store.delete_table(table)
        store.close()
