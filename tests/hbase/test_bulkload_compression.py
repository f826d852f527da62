"""HBase reads the bulk copy's SNAPPY, LZ4 and ZSTD HFiles (marked `hbase`): a NEW table whose
families use the codec, bulk-copied from OLD (one row's value larger than a BlockCompressorStream
segment, so its block is framed in several chunks), read back cell for cell by the region server
(which decompresses the index blocks when it validates each file, and every data block in the
scans) and verified. On the default line (2.6.4, its codecs hbase-compression-aircompressor's, as
tools/hbase/standalone.py configures them) here; on the other lines (tests/hbase/test_hbase_lines.py
calls :func:`copy_on_a_line`) 2.5.11's SNAPPY is Hadoop 3.4's own SnappyCodec (snappy-java), and
where a line has no codec (2.5.11's LZ4 and ZSTD, all three on 2.4.18, whose Hadoop 2.10 codecs
need native libhadoop) HBase refuses the NEW table and keyshape says so in one line."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import standalone  # tools/hbase/standalone.py
from existing_tables import fill, record, write_schema

from keyshape.errors import BadInput
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema, open_store
from keyshape.store.hbase.compression import MAX_INPUT, check_line

pytestmark = pytest.mark.hbase

ROOT = Path(__file__).resolve().parents[2]
ROWS = 300


def _with_compression(path: Path, compression: str) -> KeySchema:
    """The schema file at ``path`` with both families (d, m) compressed with ``compression``."""
    text = path.read_text()
    for family in ("d", "m"):
        text = text.replace(f'name = "{family}"\n', f'name = "{family}"\ncompression = "{compression}"\n', 1)
    path.write_text(text)
    return KeySchema.load(path)


def _fill(store: Any, old: KeySchema) -> None:
    fill(store, old, ROWS)
    # a value larger than one compression segment: its data block is framed in several chunks
    big = random.Random(42).randbytes(MAX_INPUT + 50_000)
    with store.writer(old.table.full_name) as w:
        w.put(old.encode(record(ROWS)), {b"d:big": big})


def _copy_and_check(url: str, tmp_path: Path, compression: str) -> None:
    from keyshape.ops.migrate_bulk import migrate_bulk
    from keyshape.ops.verify import digest_rows, verify_migration

    _, old = write_schema(tmp_path, "zold", splits=["000000000100", "000000000200"])
    new_path, _ = write_schema(tmp_path, "znew", prefix="mod", buckets=4)
    new = _with_compression(new_path, compression)
    store = open_store(url)
    try:
        create_table_from_schema(store, old)
        _fill(store, old)
        before = digest_rows(store.scan_versions(old.table.full_name), old)
        result = migrate_bulk(store, old, new, state_path=tmp_path / f"{compression}.state")
        assert result.rows == ROWS + 1 and result.rejected == 0
        target = new.table.full_name
        assert {f: o["COMPRESSION"] for f, o in store.describe_table(target).items()} == {"d": compression, "m": compression}
        assert digest_rows(store.scan_versions(target), new) == before
        check = verify_migration(store, old, new)
        assert check.ok, check.lines()
    finally:
        for schema in (old, new):
            if store.table_exists(schema.table.full_name):
                store.delete_table(schema.table.full_name)
        store.close()


@pytest.mark.parametrize("compression", ["SNAPPY", "LZ4", "ZSTD"])
def test_bulk_copy_into_a_compressed_family_reads_back_equal(hbase: Any, tmp_path: Path, compression: str) -> None:
    _copy_and_check(hbase.url, tmp_path, compression)


# --- other lines (run in tests/hbase/test_hbase_lines.py on its line_hbase: one HBase per line) ---


def readable_on(line: Any) -> set[str]:
    """What a line's standalone HBase reads, per algorithm: the 2.6 lines all three (the
    aircompressor codecs tools/hbase/standalone.py configures), the other Hadoop 3 lines SNAPPY
    (their default class, Hadoop's SnappyCodec on snappy-java; Lz4Codec lacks lz4-java and
    ZStandardCodec needs libhadoop), 2.4.18 none (Hadoop 2.10's codecs are all native)."""
    if line.extras:
        return {"SNAPPY", "LZ4", "ZSTD"}
    return {"SNAPPY"} if line.hadoop == "3" else set()


def copy_on_a_line(instance: Any, tmp_path: Path, compression: str) -> None:
    """The bulk copy into a ``compression`` family on another line's HBase ``instance``: read
    back equal where the line reads the codec, else ``keyshape migrate`` fails with HBase's
    refusal in one line and NEW is not left behind."""
    if compression in readable_on(standalone.LINES[instance.version]):
        _copy_and_check(instance.url, tmp_path, compression)
        return
    old_path, old = write_schema(tmp_path, "zold", splits=["000000000100"])
    new_path, _ = write_schema(tmp_path, "znew", prefix="mod", buckets=4)
    new = _with_compression(new_path, compression)
    store = open_store(instance.url)
    try:
        version = store.hbase_version()  # the master's own word, what family_formats checks ZSTD against
        assert version.startswith(instance.version), version
        if compression == "ZSTD" and instance.version < "2.5":
            # were NEW there (a cluster with native libhadoop), keyshape refuses before writing a file
            with pytest.raises(BadInput, match=f"HBase {re.escape(version)} reads ZSTD only through Hadoop's ZStandardCodec"):
                check_line("d", "ZSTD", version)
        create_table_from_schema(store, old)
        fill(store, old, 20)
        proc = subprocess.run(
            [sys.executable, "-m", "keyshape.cli", "migrate", str(old_path), str(new_path), "--hbase", instance.url, "--via", "bulkload"]
            + ["--state", str(tmp_path / "s.json")],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=600,
        )
        assert proc.returncode != 0
        lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert re.search(r"refused create table", lines[0]) and re.search(r"snappy|lz4|zstandard", lines[0], re.I), lines[0]
        assert not store.table_exists(new.table.full_name)
    finally:
        for schema in (old, new):
            if store.table_exists(schema.table.full_name):
                store.delete_table(schema.table.full_name)
        store.close()
