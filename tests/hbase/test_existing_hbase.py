"""Existing tables on a real HBase (marked `hbase`): diagnose from live keys, split-plan --apply,
migrate / re-salt with verify, kill -9 mid-migration then --resume, dual reads, and one-line
errors for bad input. Tables get unique names, so the tests can share the session's HBase
(the kill test needs the fixture's own instance).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from existing_tables import fill
from existing_tables import write_schema as _write_schema

from keyshape.core.hbytes import to_bytes_binary
from keyshape.errors import StoreError
from keyshape.ops.migrate import migrate
from keyshape.ops.verify import digest_rows, verify_migration
from keyshape.read.dual import dual_scan
from keyshape.store import create_table_from_schema, open_store

pytestmark = pytest.mark.hbase

ROOT = Path(__file__).resolve().parents[2]
ROWS = 3000
SEQ_SPLITS = ["000000000750", "000000001500", "000000002250"]


def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def one_error_line(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


_created: list[str] = []


def write_schema(tmp_path: Path, stem: str, **options: Any) -> tuple[Path, Any]:
    path, schema = _write_schema(tmp_path, stem, **options)
    _created.append(schema.table.full_name)
    return path, schema


@pytest.fixture(autouse=True)
def drop_tables(hbase: Any) -> Any:
    """Drop every table a test made: the shared HBase should not fill up with test tables."""
    yield
    if not _created:
        return
    cleanup = open_store(hbase.url)
    try:
        for table in _created:
            try:
                if cleanup.table_exists(table):
                    cleanup.delete_table(table)
            except StoreError:
                pass  # best effort: a table of a crashed instance may be unreachable
    finally:
        _created.clear()
        cleanup.close()


@pytest.fixture
def store(hbase: Any) -> Any:
    opened = open_store(hbase.url)
    yield opened
    opened.close()


def loaded(store: Any, tmp_path: Path, stem: str, rows: int = ROWS, **options: Any) -> tuple[Path, Any]:
    path, schema = write_schema(tmp_path, stem, **options)
    create_table_from_schema(store, schema)
    fill(store, schema, rows)
    return path, schema


def test_live_keys_judge_a_sequential_table_hotspot_and_a_salted_one_balanced(hbase: Any, store: Any, tmp_path: Path) -> None:
    seq_path, seq = loaded(store, tmp_path, "diag_seq", splits=SEQ_SPLITS)
    salt_path, salted = loaded(store, tmp_path, "diag_salt", prefix="mod", buckets=16, regions=8)
    png = tmp_path / "live.png"
    hot = run(
        "analyze", str(seq_path), "--hbase", hbase.url, "--table", seq.table.full_name, "--sample-per-region", "200", "--json", "-", "--png", str(png)
    )
    assert hot.returncode == 0, hot.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"  # the same reports as the offline analyzer
    report = json.loads(hot.stdout)
    assert report["verdict"] == "hotspot", report["reasons"]
    assert len(report["regions"]) == 4  # the table's actual regions
    good = run("analyze", str(salt_path), "--hbase", hbase.url, "--table", salted.table.full_name, "--json", "-")
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["verdict"] == "balanced"
    # raw keys, no schema: still analyzed against the real regions
    raw = run("analyze", "--hbase", hbase.url, "--table", seq.table.full_name, "--json", "-")
    assert raw.returncode == 0, raw.stderr
    assert len(json.loads(raw.stdout)["regions"]) == 4
    # the wrong schema for the table is one clear line
    one_error_line(run("analyze", str(salt_path), "--hbase", hbase.url, "--table", seq.table.full_name), "does not match table")


def test_split_plan_apply_gives_exactly_the_planned_boundaries(hbase: Any, store: Any, tmp_path: Path) -> None:
    # two regions of 1000 rows, one cut each (a daughter could not be split again at once)
    _, seq = loaded(store, tmp_path, "split_seq", rows=2000, splits=["000000001000"])
    table = seq.table.full_name
    dry = run("split-plan", table, "--hbase", hbase.url, "--target-regions", "4")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith(f"split '{table}', '") for line in lines)
    planned = [to_bytes_binary(line.split(", ", 1)[1].strip("'")) for line in lines]
    assert planned[0] < b"000000001000" < planned[1]
    applied = run("split-plan", table, "--hbase", hbase.url, "--target-regions", "4", "--apply")
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout == dry.stdout  # the same plan, then performed
    assert [r.start for r in store.regions(table)[1:]] == [planned[0], b"000000001000", planned[1]]
    assert sum(1 for _ in store.scan_keys(table)) == 2000


def test_migrate_sequential_to_mod16_then_resalt_to_32_preserves_every_cell(hbase: Any, store: Any, tmp_path: Path) -> None:
    seq_path, seq = loaded(store, tmp_path, "mig_seq", splits=SEQ_SPLITS)
    mod16_path, mod16 = write_schema(tmp_path, "mig_mod16", prefix="mod", buckets=16)
    mod32_path, mod32 = write_schema(tmp_path, "mig_mod32", prefix="mod", buckets=32)
    before = digest_rows(store.scan_versions(seq.table.full_name), seq)
    for old, new in ((seq_path, mod16_path), (mod16_path, mod32_path)):
        proc = run("migrate", str(old), str(new), "--hbase", hbase.url, "--state", str(tmp_path / f"{Path(new).stem}.json"))
        assert proc.returncode == 0, proc.stderr
        assert "verify: OK" in proc.stdout and f"copied {ROWS:,} rows" in proc.stdout
    # counts per source region equal, and the same cells under the new keys
    check = verify_migration(store, mod16, mod32)
    assert check.ok and check.source.rows == check.target.rows and check.target.total_rows == ROWS
    assert len(store.regions(mod32.table.full_name)) == 32
    assert digest_rows(store.scan_versions(mod32.table.full_name), mod32) == before
    # dual reads over the two salted designs: each row once, in original key order
    ids = [r.fields["event_id"] for r in dual_scan(store, mod16, mod32)]
    assert ids == list(range(ROWS))
    # again without --resume into a target that holds rows: refused, nothing written
    again = run("migrate", str(seq_path), str(mod16_path), "--hbase", hbase.url, "--state", str(tmp_path / "again.json"))
    one_error_line(again, "already holds rows", "--resume")
    assert run("migrate", str(seq_path), str(mod16_path), "--hbase", hbase.url, "--verify-only").returncode == 0


def test_bad_input_is_one_line_each(hbase: Any, store: Any, tmp_path: Path) -> None:
    missing_path, missing = write_schema(tmp_path, "gone")
    new_path, _ = write_schema(tmp_path, "gone_new", prefix="mod", buckets=16)
    one_error_line(run("migrate", str(missing_path), str(new_path), "--hbase", hbase.url, "--state", str(tmp_path / "s.json")), "does not exist")
    one_error_line(run("analyze", "--hbase", hbase.url, "--table", missing.table.full_name), "does not exist")
    seq_path, seq = loaded(store, tmp_path, "wrong_old", rows=50)
    wrong_path = tmp_path / "wrong.toml"  # the sequential table described as mod 16 salted
    wrong_path.write_text(new_path.read_text().replace(new_path.stem, seq.table.name))
    one_error_line(run("migrate", str(wrong_path), str(new_path), "--hbase", hbase.url, "--state", str(tmp_path / "w.json")), "does not match table")
    _, single = loaded(store, tmp_path, "one_row", rows=1)
    one_error_line(run("split-plan", single.table.full_name, "--hbase", hbase.url, "--target-regions", "4"), "holds 1 row")


def test_kill_9_mid_migration_then_resume_completes_and_verifies(hbase: Any, tmp_path: Path) -> None:
    from keyshape.store.hbase import HBaseStore

    instance = hbase.require_standalone()
    setup = open_store(hbase.url)
    _, seq = loaded(setup, tmp_path, "crash_seq", rows=ROWS, splits=SEQ_SPLITS)
    _, mod16 = write_schema(tmp_path, "crash_mod16", prefix="mod", buckets=16)
    setup.close()
    state = tmp_path / "crash.json"
    # One retry and a short ZooKeeper wait, so the copy gives up soon after HBase dies instead
    # of waiting it out: every failed retry re-locates the servers through ZooKeeper (here: a
    # dead port), and each batch in flight runs its own retries, one after the other. With
    # retries=2 and the default 3 s connect timeout that was ~100 s of the test's ~150 s.
    copier = HBaseStore.from_url(hbase.url, retries=1, max_backoff=1.0)
    copier.cluster.connect_timeout = 0.5
    third = threading.Event()
    killed = threading.Event()
    outcome: dict[str, Any] = {}

    def progress(rows: int) -> None:
        if rows >= ROWS // 3 and not killed.is_set():
            third.set()
            killed.wait(120)

    def copy() -> None:
        try:
            outcome["result"] = migrate(copier, seq, mod16, state_path=state, batch_size=200, progress=progress)
        except BaseException as exc:  # noqa: BLE001 - inspected in the test thread
            outcome["error"] = exc

    worker = threading.Thread(target=copy)
    worker.start()
    try:
        assert third.wait(300), "the copy never got a third of the way"
        instance.kill()
        killed.set()
        worker.join(300)
        assert not worker.is_alive(), "the copy hung with HBase dead"
    finally:
        killed.set()
    copier.close()
    assert "error" in outcome, "the copy finished although HBase was killed under it"
    assert isinstance(outcome["error"], StoreError) and "--resume" in str(outcome["error"])
    checkpoint = json.loads(state.read_text())
    assert 0 < sum(r["rows"] for r in checkpoint["regions"]) < ROWS
    instance.start(timeout=240)
    deadline = time.monotonic() + 300
    while True:  # regions are re-assigned after the crash; each attempt resumes where it stopped
        resumer = open_store(hbase.url)
        try:
            done = migrate(resumer, seq, mod16, state_path=state, batch_size=200, resume=True)
            check = verify_migration(resumer, seq, mod16)
            break
        except StoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(5)
        finally:
            resumer.close()
    assert done.total_rows == ROWS and done.rows < ROWS
    assert check.ok, check.lines()
    assert check.target.total_rows == ROWS
