"""``keyshape create NEW --hbase URL --from OLD.toml`` on the real standalone HBase (issue 31): before
creating NEW's table, a sample of OLD's table's real keys is re-keyed by NEW and placed by NEW's
split points. A sequential source into a salted NEW passes quietly; a NEW whose split points miss
where the keys fall is warned about (against the source's regions and against NEW's own
[workload] plan); bad input is one line and a non-zero exit, with nothing created.
"""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from existing_tables import record, schema_text

from keyshape.ops.preflight import preflight
from keyshape.errors import StoreError
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema, open_store

pytestmark = pytest.mark.hbase

ROOT = Path(__file__).resolve().parents[2]
ROWS = 3000
SEQ_SPLITS = ["000000000750", "000000001500", "000000002250"]  # the source's 4 even regions


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def one_error_line(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


MADE: list[str] = []  # the kpc_ tables of the running test


@pytest.fixture
def store(hbase: Any) -> Iterator[Any]:
    """The shared HBase; every kpc_ table a test made is dropped after it."""
    opened = open_store(hbase.url)
    yield opened
    for table in MADE:
        try:
            if opened.table_exists(table):
                opened.delete_table(table)
        except StoreError:
            pass  # best effort
    MADE.clear()
    opened.close()


def schema(tmp_path: Path, stem: str, text_edit: Any = None, **options: Any) -> tuple[Path, KeySchema]:
    """A schema file of the existing-table design (event_id + event_time) under a fresh kpc_ name."""
    name = f"kpc_{stem}_{uuid.uuid4().hex[:8]}"
    text = schema_text(name, namespace="kpc", **options)
    if text_edit is not None:
        text = text_edit(text)
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    loaded = KeySchema.load(path)
    MADE.append(loaded.table.full_name)
    return path, loaded


def filled(store: Any, tmp_path: Path, splits: list[str]) -> tuple[Path, KeySchema]:
    """A sequential source table of 3,000 rows (ids 0-2,999) pre-split at ``splits``."""
    path, old = schema(tmp_path, "src", splits=splits)
    create_table_from_schema(store, old)
    with store.writer(old.table.full_name) as w:
        for i in range(ROWS):
            w.put(old.encode(record(i)), {b"d:v": b"x"})
    return path, old


@pytest.fixture
def source(store: Any, tmp_path: Path) -> tuple[Path, KeySchema]:
    """The sequential source over 4 regions pre-split at its ids' quarters."""
    return filled(store, tmp_path, SEQ_SPLITS)


def shares(line: str) -> tuple[int, int, int]:
    """(target, source, plan) busiest-region shares in percent from the preflight's first line."""
    m = re.search(r"would hold (\d+)% of them \(source: (\d+)% of \d+ regions; plan: (\d+)%", line)
    assert m, line
    return int(m[1]), int(m[2]), int(m[3])


def test_sequential_source_into_salted_new_passes(store: Any, hbase: Any, source: tuple[Path, KeySchema], tmp_path: Path) -> None:
    old_path, _ = source
    new_path, new = schema(tmp_path, "salted", prefix="mod", buckets=8)
    proc = run("create", str(new_path), "--hbase", hbase.url, "--from", str(old_path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"preflight on {ROWS:,} of the source's keys ({ROWS:,} rows): the busiest of the target's 8 regions"), lines[0]
    target, src, plan = shares(lines[0])
    assert target <= 14 and src == 25 and plan <= 14  # mod 8 over sequential ids: 1/8 each, as its [workload] plans
    assert "warning" not in proc.stdout
    assert len(store.regions(new.table.full_name)) == 8  # then created as today


def test_new_split_away_from_the_keys_is_warned(store: Any, hbase: Any, source: tuple[Path, KeySchema], tmp_path: Path) -> None:
    old_path, _ = source

    # Split for ids up to a million (its [workload] steps ids by 1,000, so it plans 25% a region),
    # while the source's ids stop at 2,999: every existing row lands in the first region.
    def wide(text: str) -> str:
        return text.replace('generator = "sequential", start = 1 }', 'generator = "sequential", start = 1, step = 1000 }')

    new_path, new = schema(tmp_path, "far", text_edit=wide, splits=["000000250000", "000000500000", "000000750000"])
    dry = run("create", str(new_path), "--hbase", hbase.url, "--from", str(old_path), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("create_namespace") or dry.stdout.startswith("create "), dry.stdout  # shell input stays clean
    assert "warning: the target spreads the existing rows worse than the source" in dry.stderr
    assert not store.table_exists(new.table.full_name)

    proc = run("create", str(new_path), "--hbase", hbase.url, "--from", str(old_path))
    assert proc.returncode == 0, proc.stderr  # as migrate: a warning never stops it
    lines = proc.stdout.splitlines()
    assert shares(lines[0]) == (100, 25, 25) and "plan: 25%, by its [workload]" in lines[0], lines[0]
    warnings = [line for line in lines if line.startswith("warning: ")]
    assert len(warnings) == 2, proc.stdout
    assert "holds 100% vs 25%" in warnings[0]
    assert "plan 25% (by its [workload])" in warnings[1]
    assert len(store.regions(new.table.full_name)) == 4


def test_bad_input_is_one_line_and_creates_nothing(store: Any, hbase: Any, source: tuple[Path, KeySchema], tmp_path: Path) -> None:
    new_path, new = schema(tmp_path, "new", prefix="mod", buckets=8)
    missing_path, missing = schema(tmp_path, "missing")  # a schema whose table was never created
    one_error_line(
        run("create", str(new_path), "--hbase", hbase.url, "--from", str(missing_path)), f"source table {missing.table.full_name}", "does not exist"
    )
    # The salted schema does not read the sequential source's keys (no mod prefix): not the schema it was written with.
    _, old = source
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(schema_text(old.table.name, namespace="kpc", prefix="mod", buckets=16))
    one_error_line(run("create", str(new_path), "--hbase", hbase.url, "--from", str(wrong)), f"none of the {ROWS:,} sampled keys", "give the schema")
    one_error_line(run("create", str(new_path), "--from", str(source[0])), "--from reads the source table's keys from a real HBase", "--hbase")
    assert not store.table_exists(new.table.full_name)


def test_each_region_weighs_its_rows_not_its_sample(store: Any, tmp_path: Path) -> None:
    # 2,900 rows in the first region, 100 in the second; 100 keys sampled from each. Counted a key
    # each, the small region would be half the rows: the source's busiest share 50%, and a target
    # split at the ids' quarters would see its last quarter (ids 2,250-2,999) hold 50%+.
    _, old = filled(store, tmp_path, ["000000002900"])
    _, quarters = schema(tmp_path, "quarters", splits=SEQ_SPLITS)
    result = preflight(store, old.table.full_name, old, quarters, sample=200)
    assert result.keys == 200 and result.rows == ROWS
    assert result.source_share == pytest.approx(2900 / 3000)
    assert result.target_share == pytest.approx(0.25, abs=0.03)  # the true share of each quarter
    assert not result.warnings
