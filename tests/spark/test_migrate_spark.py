"""``migrate --spark`` on a real local SparkSession against the real HBase (marked `spark` and
`hbase`): one task per OLD region writing HFiles, the driver bulk-loading them; a task that fails
once is re-run for its range only and the copy is still exact (the referee: per-region checksums
and the digest of every decoded cell); a region whose task fails for good leaves the others loaded
and a resume copies that region only.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

from existing_tables import fill, write_schema  # noqa: E402

from keyshape.errors import StoreError  # noqa: E402
from keyshape.ops.verify import digest_rows, verify_migration  # noqa: E402
from keyshape.spark.migrate import migrate_spark  # noqa: E402
from keyshape.store import create_table_from_schema, open_store  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.hbase]

# the fault injector below runs in Spark's Python workers, which cannot import this test module
from pyspark import cloudpickle  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])

SPLITS = ["000000000100", "000000000200", "000000000300"]  # 4 source regions
ROWS = 400


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from keyshape.spark import session

    # local[2,2]: two task threads, a failed task tried twice (local mode's maxFailures)
    s = session("local[2,2]", config={"spark.default.parallelism": "2"})
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


class Attempts:
    """Records (region, attempt) per task in files (tasks run in Spark's Python workers) and
    fails the tasks of ``fail`` regions on the attempts listed."""

    def __init__(self, directory: Path, fail: dict[int, set[int]]) -> None:
        self.directory, self.fail = directory, fail
        directory.mkdir(parents=True, exist_ok=True)

    def __call__(self, region: int, attempt: int) -> None:
        (self.directory / f"{region}-{attempt}").touch()
        if attempt in self.fail.get(region, set()):
            raise RuntimeError(f"injected failure of region {region}, attempt {attempt}")

    def seen(self) -> set[tuple[int, int]]:
        return {tuple(int(x) for x in p.name.split("-")) for p in self.directory.iterdir()}  # type: ignore[misc]


def _tables(hbase: Any, tmp_path: Path, stem: str) -> tuple[Any, Any, Any, Any]:
    _, old = write_schema(tmp_path, f"{stem}_old", splits=SPLITS)
    _, new = write_schema(tmp_path, f"{stem}_new", prefix="mod", buckets=8)
    store = open_store(hbase.url)
    create_table_from_schema(store, old)
    fill(store, old, ROWS)
    return store, old, new, digest_rows(store.scan_versions(old.table.full_name), old)


def _drop(store: Any, *schemas: Any) -> None:
    for schema in schemas:
        if store.table_exists(schema.table.full_name):
            store.delete_table(schema.table.full_name)
    store.close()


def test_a_task_that_fails_once_is_rerun_for_its_range_only(hbase: Any, spark: Any, tmp_path: Path) -> None:
    store, old, new, before = _tables(hbase, tmp_path, "sparkmig")
    try:
        attempts = Attempts(tmp_path / "attempts", {1: {0}})
        result = migrate_spark(hbase.url, old, new, spark=spark, state_path=tmp_path / "s.json", on_task=attempts, run_rows=60)
        assert attempts.seen() == {(0, 0), (1, 0), (1, 1), (2, 0), (3, 0)}
        assert result.rows == ROWS and result.total_rows == ROWS and result.regions == 4
        check = verify_migration(store, old, new)
        assert check.ok, check.lines()
        assert digest_rows(store.scan_versions(new.table.full_name), new) == before
    finally:
        _drop(store, old, new)


def test_a_region_that_fails_for_good_is_all_a_resume_copies(hbase: Any, spark: Any, tmp_path: Path) -> None:
    store, old, new, before = _tables(hbase, tmp_path, "sparkres")
    state = tmp_path / "s.json"
    try:
        with pytest.raises(StoreError, match="1 source region.s. failed: region 3 .*--resume"):
            migrate_spark(hbase.url, old, new, spark=spark, state_path=state, on_task=Attempts(tmp_path / "a1", {2: {0, 1}}))
        resumed = Attempts(tmp_path / "a2", {})
        result = migrate_spark(hbase.url, old, new, spark=spark, state_path=state, resume=True, on_task=resumed)
        assert resumed.seen() == {(2, 0)}  # only the failed region's range again
        assert result.total_rows == ROWS and result.rows == 100
        check = verify_migration(store, old, new)
        assert check.ok, check.lines()
        assert digest_rows(store.scan_versions(new.table.full_name), new) == before
    finally:
        _drop(store, old, new)


def test_verify_as_one_spark_job_finds_what_verify_finds(hbase: Any, spark: Any, tmp_path: Path) -> None:
    """Both sides digested by Spark tasks (one per OLD and per NEW region) in one job: the same
    per-region rows, cells and checksums as verify_migration, and a value changed in NEW is found
    in the OLD region its row came from."""
    from keyshape.spark.verify import verify_spark

    store, old, new, _ = _tables(hbase, tmp_path, "sparkver")
    try:
        migrate_spark(hbase.url, old, new, spark=spark, state_path=tmp_path / "s.json")
        by_spark, alone = verify_spark(hbase.url, old, new, spark=spark), verify_migration(store, old, new)
        assert by_spark.ok, by_spark.lines()
        assert (by_spark.source, by_spark.target) == (alone.source, alone.target)
        # a row of NEW whose OLD key is in the second OLD region: one of its values changed
        low, high = SPLITS[0].encode(), SPLITS[1].encode()
        row, cells = next((r, c) for r, c in store.scan_versions(new.table.full_name) if low <= old.encode(new.decode(r)) < high)
        column, versions = next(iter(cells.items()))
        with store.writer(new.table.full_name, batch_size=1) as writer:
            writer.put(row, {column: versions[0][1] + b"!"}, versions[0][0])
        tampered = verify_spark(hbase.url, old, new, spark=spark)
        assert not tampered.ok
        assert tampered.differences == ["source region 1 ['000000000100', '000000000200'): checksum differs"], tampered.lines()
        assert tampered.differences == verify_migration(store, old, new).differences
    finally:
        _drop(store, old, new)
