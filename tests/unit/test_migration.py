"""``keyshape.ops.migration.migrate_and_verify`` on the embedded store: the whole ``keyshape migrate``
workflow in one call, and each of its exit rules as the typed result says it (the same command
against a real HBase: tests/hbase/test_existing_hbase.py, test_cli_operator.py, test_migrate_online.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from existing_tables import fill, write_schema

from keyshape.errors import BadInput
from keyshape.ops.migration import VERIFIED, OnlineOptions, migrate_and_verify
from keyshape.store import EmbeddedStore, create_table_from_schema

ROWS = 600


@pytest.fixture
def store() -> EmbeddedStore:
    return EmbeddedStore()


def _tables(store: EmbeddedStore, tmp_path: Path, rows: int = ROWS):  # type: ignore[no-untyped-def]
    _, old = write_schema(tmp_path, "seq", splits=["000000000200", "000000000400"])
    _, new = write_schema(tmp_path, "mod8", prefix="mod", buckets=8)
    create_table_from_schema(store, old)
    fill(store, old, rows)
    return old, new


def test_a_clean_migration_passes_every_rule_and_says_each_line_as_it_comes(store: EmbeddedStore, tmp_path: Path) -> None:
    old, new = _tables(store, tmp_path)
    said: list[str] = []
    phases: list[tuple[str, int]] = []

    @contextmanager
    def phase(description: str) -> Iterator[Callable[[int], None]]:
        seen = [0]
        yield lambda done: seen.__setitem__(0, done)
        phases.append((description, seen[0]))

    run = migrate_and_verify(store, old, new, state_path=tmp_path / "s.json", batch_size=100, say=said.append, phase=phase)
    assert run.ok and run.failed is None and run.exit_code == 0 and run.message is None
    assert run.copy is not None and (run.copy.rows, run.copy.rejected) == (ROWS, 0)
    assert run.verification is not None and run.verification.ok
    assert run.preflight and run.lines[: len(run.preflight)] == run.preflight  # before the copy's line
    assert said == run.lines and run.lines[-1] == VERIFIED
    assert any(line.startswith(f"copied {ROWS:,} rows") for line in run.lines)
    # one bar per long step, in order; the copy's saw every row
    assert [p[0] for p in phases] == [f"copying {old.table.full_name} -> {new.table.full_name}", "verifying"]
    assert phases[0][1] == ROWS


def test_rows_that_do_not_decode_fail_the_rejected_rule_before_the_differences(store: EmbeddedStore, tmp_path: Path) -> None:
    old, new = _tables(store, tmp_path)
    store.put(old.table.full_name, b"junk-key", {b"d:v": b"?"})
    rejects = tmp_path / "rejects.tsv"
    run = migrate_and_verify(store, old, new, state_path=tmp_path / "s.json", reject_path=rejects)
    # the verification differs too (the source holds a row the target lacks): the rejects lead
    assert run.verification is not None and not run.verification.ok
    assert (run.failed, run.exit_code) == ("rejected", 2)
    assert run.message == f"1 row(s) of {old.table.full_name} could not be decoded with {old.source} and were not copied; see {rejects}"
    assert VERIFIED not in run.lines


def test_a_difference_fails_the_verify_rule(store: EmbeddedStore, tmp_path: Path) -> None:
    old, new = _tables(store, tmp_path)
    assert migrate_and_verify(store, old, new, state_path=tmp_path / "s.json").ok
    store.put(new.table.full_name, new.encode({"event_id": 10**9, "event_time": 0}), {b"d:v": b"extra"})
    run = migrate_and_verify(store, old, new, verify_only=True)
    assert run.copy is None and run.preflight == []  # verify only: nothing copied, no preflight
    assert (run.failed, run.exit_code) == ("differences", 2)
    assert run.message is not None and run.message.startswith("verify failed: ")
    assert run.verification is not None and all(d in run.lines for d in run.verification.differences)


def test_ctrl_c_during_the_copy_is_the_interrupted_rule_and_resume_finishes(store: EmbeddedStore, tmp_path: Path) -> None:
    old, new = _tables(store, tmp_path)
    state = tmp_path / "s.json"

    @contextmanager
    def interrupting(description: str) -> Iterator[Callable[[int], None]]:
        def update(done: int) -> None:
            if done >= 200:  # Ctrl-C once two batches are acknowledged
                raise KeyboardInterrupt

        yield update

    run = migrate_and_verify(store, old, new, state_path=state, batch_size=100, phase=interrupting)
    assert (run.failed, run.exit_code) == ("interrupted", 130)
    assert run.message == (
        f"interrupted: 200 rows copied and acknowledged by HBase in this run; the checkpoint {state} holds "
        "every acknowledged batch: run the same command with --resume to continue"
    )
    assert run.verification is None  # nothing verified after an interrupt
    done = migrate_and_verify(store, old, new, state_path=state, batch_size=100, resume=True)
    assert done.ok and done.preflight == [] and done.copy is not None and done.copy.total_rows == ROWS


def test_bad_combinations_are_refused_before_anything_is_written(store: EmbeddedStore, tmp_path: Path) -> None:
    old, new = _tables(store, tmp_path)
    with pytest.raises(BadInput, match="verify_only copies nothing"):
        migrate_and_verify(store, old, new, verify_only=True, resume=True)
    with pytest.raises(BadInput, match="drop resume/verify_only"):
        migrate_and_verify(store, old, new, online=OnlineOptions(), resume=True)
    with pytest.raises(BadInput, match="'puts' or 'bulkload'"):
        migrate_and_verify(store, old, new, via="hfiles")
    with pytest.raises(BadInput, match="needs a real HBase"):
        migrate_and_verify(store, old, new, online=OnlineOptions())
    assert not store.table_exists(new.table.full_name)


def test_a_copy_passed_in_is_the_copy_step(store: EmbeddedStore, tmp_path: Path) -> None:
    old, new = _tables(store, tmp_path)
    calls: list[dict[str, object]] = []

    def puts(store_: EmbeddedStore, old_, new_, **options):  # type: ignore[no-untyped-def]
        # the put copy under another name: what a Spark job bound to its URL is to the CLI
        from keyshape.ops.migrate import migrate

        calls.append(options)
        return migrate(store_, old_, new_, **options)

    run = migrate_and_verify(store, old, new, via="bulkload", copy=puts, state_path=tmp_path / "s.json")
    assert run.ok and len(calls) == 1
    assert set(calls[0]) == {"resume", "state_path", "reject_path", "max_rows_per_sec", "progress"}


def test_every_copy_builds_its_result_from_its_checkpoint(store: EmbeddedStore, tmp_path: Path) -> None:
    import json

    from keyshape.ops.migrate import MigrationResult

    old, new = _tables(store, tmp_path)
    state = tmp_path / "s.json"
    first = migrate_and_verify(store, old, new, state_path=state, batch_size=100)
    assert first.copy is not None
    written = json.loads(state.read_text())
    again = MigrationResult.from_state(
        written,
        rows=first.copy.rows,
        cells=first.copy.cells,
        rejected=0,
        seconds=first.copy.seconds,
        created_target=True,
        state_path=state,
        reject_path=first.copy.reject_path,
        resumed=False,
    )
    assert again == first.copy  # the put copy's own result is the checkpoint's
    assert (again.regions, again.total_rows) == (3, ROWS) and again.notes == []
