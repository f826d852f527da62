"""``keyshape migrate --spark`` from the command line (marked `spark` and `hbase`): the copy AND
the verification run as Spark jobs (issue 42, "verification that scales": each side's per-region
checksums in the Spark job's tasks), judged by the same exit rules: a clean copy ends with the
verified line and exit 0; a value changed in NEW afterwards fails ``--verify-only --spark`` with
the OLD region it came from, exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

from existing_tables import fill, write_schema  # noqa: E402

from keyshape.ops.migration import VERIFIED  # noqa: E402
from keyshape.store import create_table_from_schema, open_store  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.hbase]

ROOT = Path(__file__).resolve().parents[2]
SPLITS = ["000000000100", "000000000200", "000000000300"]


def test_migrate_spark_copies_and_verifies_in_spark_and_the_exit_rules_hold(hbase: Any, tmp_path: Path) -> None:
    old_path, old = write_schema(tmp_path, "sparkcli_old", splits=SPLITS)
    new_path, new = write_schema(tmp_path, "sparkcli_new", prefix="mod", buckets=8)
    store = open_store(hbase.url)

    def migrate(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "keyshape.cli", "migrate", str(old_path), str(new_path), "--hbase", hbase.url]
        argv += ["--spark", "--master", "local[2]"]
        return subprocess.run([*argv, *args], capture_output=True, text=True, cwd=ROOT, timeout=600)

    try:
        create_table_from_schema(store, old)
        fill(store, old, 400)
        done = migrate("--state", str(tmp_path / "state.json"))
        assert done.returncode == 0, done.stderr
        assert "copied 400 rows" in done.stdout and VERIFIED in done.stdout, done.stdout
        # a value of NEW changed, in a row whose OLD key is in the second OLD region
        low, high = SPLITS[0].encode(), SPLITS[1].encode()
        row, cells = next((r, c) for r, c in store.scan_versions(new.table.full_name) if low <= old.encode(new.decode(r)) < high)
        column, versions = next(iter(cells.items()))
        with store.writer(new.table.full_name, batch_size=1) as writer:
            writer.put(row, {column: versions[0][1] + b"!"}, versions[0][0])
        tampered = migrate("--verify-only")
        assert tampered.returncode == 2, (tampered.stdout, tampered.stderr)
        assert "source region 1 ['000000000100', '000000000200'): checksum differs" in tampered.stdout, tampered.stdout
        # nothing is copied with --verify-only: the Spark session it started was the verification's
        assert "Using Spark's default log4j profile" in tampered.stderr, tampered.stderr
        assert "Traceback" not in tampered.stderr and "verify failed: 1 difference(s)" in tampered.stderr, tampered.stderr
    finally:
        for schema in (old, new):
            if store.table_exists(schema.table.full_name):
                store.delete_table(schema.table.full_name)
        store.close()
