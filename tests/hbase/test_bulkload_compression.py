"""HBase reads the bulk copy's SNAPPY, LZ4 and ZSTD HFiles (marked `hbase`): a NEW table whose
families use the codec, bulk-copied from OLD (one row's value larger than a BlockCompressorStream
segment, so its block is framed in several chunks), read back cell for cell by the region server
(which decompresses the index blocks when it validates each file, and every data block in the
scans) and verified. On the default line (2.6.4, its codecs hbase-compression-aircompressor's, as
tools/hbase/standalone.py configures them) and on 2.5.11, whose SNAPPY is Hadoop 3.4's own
SnappyCodec (snappy-java); 2.5.11 without a configured LZ4/ZSTD codec and 2.4.18 (Hadoop 2.10's
codecs need native libhadoop, which standalone HBase has not) refuse the NEW table, and keyshape
says so in one line."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import standalone  # tools/hbase/standalone.py
from existing_tables import fill, record, write_schema

from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema, open_store
from keyshape.store.hbase.compression import MAX_INPUT

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


# --- other lines ----------------------------------------------------------------------------

# What each line's standalone HBase reads, per algorithm (its default codec classes, nothing configured)
OTHER_LINES = {"2.5.11": {"SNAPPY"}, "2.4.18": set()}


@pytest.fixture(scope="module", params=list(OTHER_LINES))
def other_line(request: pytest.FixtureRequest) -> Iterator[Any]:
    version = request.param
    try:
        instance = standalone.start_scratch(Path(standalone.HERE) / "run" / f"pytest-zline-{version}", version=version)
    except (standalone.StartFailed, standalone.UnknownVersion) as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield instance
    finally:
        instance.stop()


@pytest.mark.hbase_lines
@pytest.mark.parametrize("compression", ["SNAPPY", "LZ4", "ZSTD"])
def test_other_lines_read_what_their_codecs_read_and_refuse_the_rest_in_one_line(other_line: Any, tmp_path: Path, compression: str) -> None:
    if compression in OTHER_LINES[other_line.version]:
        _copy_and_check(other_line.url, tmp_path, compression)
        return
    old_path, old = write_schema(tmp_path, "zold", splits=["000000000100"])
    new_path, _ = write_schema(tmp_path, "znew", prefix="mod", buckets=4)
    new = _with_compression(new_path, compression)
    store = open_store(other_line.url)
    try:
        create_table_from_schema(store, old)
        fill(store, old, 20)
        proc = subprocess.run(
            [sys.executable, "-m", "keyshape.cli", "migrate", str(old_path), str(new_path), "--hbase", other_line.url, "--via", "bulkload"]
            + ["--state", str(tmp_path / "s.json")],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=600,
        )
        assert proc.returncode != 0
        lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert re.search(compression, lines[0], re.I), lines[0]
        print(f"{other_line.version} {compression}: {lines[0]}")
        assert not store.table_exists(new.table.full_name)
    finally:
        for schema in (old, new):
            if store.table_exists(schema.table.full_name):
                store.delete_table(schema.table.full_name)
        store.close()
