"""Existing tables on the embedded store: diagnose from live keys, migrate / re-salt with verify,
resume after a failure, rejects, dual reads. The same operations run against a real HBase in
tests/hbase/test_existing_hbase.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from existing_tables import fill, record, write_schema

from keyshape.errors import KeyshapeError, StoreError
from keyshape.ops.migrate import WRITERS, migrate
from keyshape.ops.sample import analyze_live, sample_table
from keyshape.ops.verify import digest_rows, verify_migration
from keyshape.read.dual import dual_scan
from keyshape.store import EmbeddedStore, create_table_from_schema

ROWS = 1200


@pytest.fixture
def store() -> EmbeddedStore:
    return EmbeddedStore()


def loaded(store: EmbeddedStore, tmp_path: Path, stem: str, rows: int = ROWS, **options):  # type: ignore[no-untyped-def]
    path, schema = write_schema(tmp_path, stem, **options)
    create_table_from_schema(store, schema)
    fill(store, schema, rows)
    return path, schema


def test_sequential_table_is_a_hotspot_and_salted_one_balanced(store: EmbeddedStore, tmp_path: Path) -> None:
    # the sequential table has 4 regions (as after a few auto-splits): the writes walk through them
    _, seq = loaded(store, tmp_path, "seq", splits=["000000000300", "000000000600", "000000000900"])
    _, salted = loaded(store, tmp_path, "salted", prefix="mod", buckets=16, regions=8)
    hot = analyze_live(sample_table(store, seq.table.full_name, per_region=100), seq)
    assert hot.order == "event_time"
    assert hot.analysis.verdict == "hotspot", hot.analysis.reasons
    assert len(hot.analysis.regions) == 4
    assert hot.estimated_rows == [300, 300, 300, 300]  # small regions are read whole: exact
    good = analyze_live(sample_table(store, salted.table.full_name, per_region=100), salted)
    assert good.analysis.verdict == "balanced", good.analysis.reasons
    assert len(good.analysis.regions) == 8


def test_wrong_schema_is_refused_and_raw_keys_still_analyze(store: EmbeddedStore, tmp_path: Path) -> None:
    _, seq = loaded(store, tmp_path, "seq")
    _, salted = write_schema(tmp_path, "other", prefix="mod", buckets=16)
    sample = sample_table(store, seq.table.full_name, per_region=50)
    with pytest.raises(KeyshapeError, match="does not match table"):
        analyze_live(sample, salted)
    raw = analyze_live(sample)
    # no schema: the rows' cell timestamps give the write order (fill writes them in id order;
    # the rows whose d:q it deleted show the first cell left, d:v, at its explicit version time)
    assert raw.order == "cell timestamps" and raw.analysis.verdict == "hotspot"  # one region
    assert raw.analysis.increasing_fraction >= 0.8
    with pytest.raises(KeyshapeError, match="needs the table's SCHEMA"):
        analyze_live(sample, time_field="event_time")


def test_sample_of_a_big_region_spans_the_region(store: EmbeddedStore, tmp_path: Path) -> None:
    _, seq = loaded(store, tmp_path, "big", rows=3000)
    sample = sample_table(store, seq.table.full_name, per_region=40, scan_factor=2, probes=8, count_rows=0)  # not counted whole: probed
    region = sample.regions[0]
    assert not region.exhausted and 8 <= len(region.keys) <= 40
    ids = sorted(seq.decode(k)["event_id"] for k in region.keys)
    assert ids[0] == 0 and ids[-1] > 2000  # not just the first rows of the region


def test_migrate_sequential_to_mod16_then_resalt_to_32_keeps_every_cell(store: EmbeddedStore, tmp_path: Path) -> None:
    _, seq = loaded(store, tmp_path, "seq", splits=["000000000600"])
    _, mod16 = write_schema(tmp_path, "mod16", prefix="mod", buckets=16)
    _, mod32 = write_schema(tmp_path, "mod32", prefix="mod", buckets=32)
    before = digest_rows(store.scan_versions(seq.table.full_name), seq)
    first = migrate(store, seq, mod16, state_path=tmp_path / "a.json", batch_size=100)
    assert (first.rows, first.rejected, first.created_target) == (ROWS, 0, True)
    assert first.cells == before[1]
    check = verify_migration(store, seq, mod16)
    assert check.ok, check.lines()
    assert check.source.rows == check.target.rows == [600, 600]
    second = migrate(store, mod16, mod32, state_path=tmp_path / "b.json", batch_size=100)
    assert second.rows == ROWS
    assert verify_migration(store, mod16, mod32).ok
    assert digest_rows(store.scan_versions(mod32.table.full_name), mod32) == before
    # the same cells, timestamps and versions, under the re-salted key
    i = next(i for i in range(ROWS) if mod16.encode(record(i))[:2] != mod32.encode(record(i))[:2])
    key16, key32 = mod16.encode(record(i)), mod32.encode(record(i))
    assert store.cells(mod32.table.full_name, key32, b"d:v") == store.cells(mod16.table.full_name, key16, b"d:v")
    assert len(store.cells(mod32.table.full_name, key32, b"d:v")) == 1 + i % 3


def test_verify_catches_a_changed_a_missing_and_an_extra_cell(store: EmbeddedStore, tmp_path: Path) -> None:
    _, seq = loaded(store, tmp_path, "seq", rows=200)
    _, mod16 = write_schema(tmp_path, "mod16", prefix="mod", buckets=16)
    migrate(store, seq, mod16, state_path=tmp_path / "s.json")
    target = mod16.table.full_name
    store.put(target, mod16.encode(record(3)), {b"d:v": b"tampered"}, timestamp=1)
    assert not verify_migration(store, seq, mod16).ok
    store.delete(target, mod16.encode(record(3)), [b"d:v"])
    check = verify_migration(store, seq, mod16)
    assert not check.ok and "cells" in " ".join(check.differences)
    store.put(target, mod16.encode(record(5000)), {b"m:tag": b"extra"})
    assert any("rows" in d for d in verify_migration(store, seq, mod16).differences)


def test_refusals_leave_nothing_behind(store: EmbeddedStore, tmp_path: Path) -> None:
    _, seq = loaded(store, tmp_path, "seq", rows=50)
    _, mod16 = write_schema(tmp_path, "mod16", prefix="mod", buckets=16)
    _, missing = write_schema(tmp_path, "gone")
    with pytest.raises(StoreError, match="does not exist"):
        migrate(store, missing, mod16, state_path=tmp_path / "x.json")
    assert not store.table_exists(mod16.table.full_name)
    with pytest.raises(KeyshapeError, match="no checkpoint"):
        migrate(store, seq, mod16, resume=True, state_path=tmp_path / "none.json")
    migrate(store, seq, mod16, state_path=tmp_path / "s.json")
    with pytest.raises(KeyshapeError, match="already holds rows"):
        migrate(store, seq, mod16, state_path=tmp_path / "s2.json")
    with pytest.raises(KeyshapeError, match="same fields|other key fields"):
        _, other = write_schema(tmp_path, "o")
        other.fields = other.fields[:1]
        migrate(store, seq, other, state_path=tmp_path / "s3.json")


def test_a_failed_copy_resumes_exactly_at_the_checkpoint(store: EmbeddedStore, tmp_path: Path) -> None:
    _, seq = loaded(store, tmp_path, "seq", splits=["000000000400", "000000000800"])
    _, mod16 = write_schema(tmp_path, "mod16", prefix="mod", buckets=16)
    state = tmp_path / "state.json"
    real_writer = store.writer
    calls = {"n": 0}

    def failing_writer(table: str, **kw):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 6:
            raise StoreError("simulated: region server went away")
        return real_writer(table, **kw)

    store.writer = failing_writer  # type: ignore[method-assign]
    with pytest.raises(StoreError, match="--resume"):
        migrate(store, seq, mod16, state_path=state, batch_size=100)
    store.writer = real_writer  # type: ignore[method-assign]
    copied = sum(1 for _ in store.scan_keys(mod16.table.full_name))
    # five batches acknowledged; with more than one writer thread, a batch being written beside
    # the failed one could land too (copied again on resume: the same cells, which changes nothing)
    assert 500 <= copied <= 500 + 100 * (WRITERS - 1)
    done = migrate(store, seq, mod16, state_path=state, batch_size=100, resume=True)
    assert done.rows == ROWS - 500 and done.total_rows == ROWS
    assert verify_migration(store, seq, mod16).ok


def test_undecodable_rows_go_to_the_reject_file(store: EmbeddedStore, tmp_path: Path) -> None:
    _, seq = loaded(store, tmp_path, "seq", rows=100)
    store.put(seq.table.full_name, b"junk-key", {b"d:v": b"?"})
    _, mod16 = write_schema(tmp_path, "mod16", prefix="mod", buckets=16)
    result = migrate(store, seq, mod16, state_path=tmp_path / "s.json", reject_path=tmp_path / "rejects.tsv")
    assert (result.rows, result.rejected) == (100, 1)
    lines = (tmp_path / "rejects.tsv").read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("junk-key\t")
    assert not verify_migration(store, seq, mod16).ok  # the source still holds a row the target lacks


def test_dual_read_merges_both_designs_in_original_key_order(store: EmbeddedStore, tmp_path: Path) -> None:
    _, mod16 = loaded(store, tmp_path, "mod16", rows=300, prefix="mod", buckets=16)
    _, mod32 = write_schema(tmp_path, "mod32", prefix="mod", buckets=32)
    create_table_from_schema(store, mod32)
    new = mod32.table.full_name
    # half copied, plus a newer write that only the new table has (dual writes)
    for i in range(0, 300, 2):
        store.put(new, mod32.encode(record(i)), {b"m:tag": b"new%d" % i})
    store.put(new, mod32.encode(record(1000)), {b"m:tag": b"only-new"})
    rows = list(dual_scan(store, mod16, mod32, columns=[b"m:tag"]))
    ids = [r.fields["event_id"] for r in rows]
    assert ids == list(range(300)) + [1000]
    assert rows[0].cells == {b"m:tag": b"new0"} and rows[1].cells == {b"m:tag": b"t1"}
    assert [r.fields["event_id"] for r in dual_scan(store, mod16, mod32, limit=5)] == [0, 1, 2, 3, 4]
    _, other = write_schema(tmp_path, "o")
    other.separator = b"|"
    with pytest.raises(KeyshapeError, match="same key fields"):
        dual_scan(store, mod16, other)


def test_split_plan_cuts_the_biggest_region_at_its_quantiles_and_applies_exactly(store: EmbeddedStore, tmp_path: Path) -> None:
    from keyshape.ops.splitplan import apply_plan, plan_splits

    _, seq = loaded(store, tmp_path, "seq", rows=1000, splits=["000000000100"])
    table = seq.table.full_name
    plan = plan_splits(sample_table(store, table, per_region=200), target_regions=4)
    # both new cuts go to the 900-row region [100, 1000), at its thirds
    assert {s.region for s in plan.splits} == {1}
    ids = [seq.decode(k)["event_id"] for k in plan.keys]
    assert len(ids) == 2 and abs(ids[0] - 400) <= 10 and abs(ids[1] - 700) <= 10, ids
    assert plan.shell_lines()[0] == f"split '{table}', '{plan.keys[0].decode()}'"
    regions = apply_plan(store, plan)
    assert [r.start for r in regions[1:]] == [b"000000000100"] + plan.keys


def test_split_plan_keeps_whole_buckets_of_a_salted_table(store: EmbeddedStore, tmp_path: Path) -> None:
    from keyshape.ops.splitplan import plan_splits

    _, salted = loaded(store, tmp_path, "salted", rows=800, prefix="mod", buckets=16, regions=4)
    plan = plan_splits(sample_table(store, salted.table.full_name), target_regions=8, schema=salted)
    assert plan.keys and all(k in salted.buckets() for k in plan.keys)
    raw = plan_splits(sample_table(store, salted.table.full_name), target_regions=8)
    assert any(k not in salted.buckets() for k in raw.keys)


def test_split_plan_on_a_one_row_table_is_refused(store: EmbeddedStore, tmp_path: Path) -> None:
    from keyshape.ops.splitplan import plan_splits

    _, seq = loaded(store, tmp_path, "one", rows=1)
    with pytest.raises(KeyshapeError, match="holds 1 row"):
        plan_splits(sample_table(store, seq.table.full_name), target_regions=4)


def test_split_plan_by_size_cuts_only_regions_over_the_limit(store: EmbeddedStore, tmp_path: Path) -> None:
    from keyshape.ops.splitplan import plan_splits

    _, seq = loaded(store, tmp_path, "size", rows=1000, splits=["000000000100"])
    sample = sample_table(store, seq.table.full_name, per_region=300)
    small, big = (r.region.store_size_bytes / 2**20 for r in sample.regions)
    assert big > 8 * small > 0
    limit = big / 3.5  # the big region needs 4 pieces, the small one none
    plan = plan_splits(sample, max_region_mb=limit)
    assert len(plan.keys) == 3 and {s.region for s in plan.splits} == {1}
    with pytest.raises(KeyshapeError, match="exactly one"):
        plan_splits(sample, max_region_mb=limit, target_regions=4)


def test_resalt_phoenix_8_to_16_keeps_every_cell(store: EmbeddedStore, tmp_path: Path) -> None:
    _, p8 = loaded(store, tmp_path, "p8", rows=500, prefix="phoenix", buckets=8)
    _, p16 = write_schema(tmp_path, "p16", prefix="phoenix", buckets=16)
    result = migrate(store, p8, p16, state_path=tmp_path / "s.json")
    assert (result.rows, result.rejected) == (500, 0)
    assert len(store.regions(p16.table.full_name)) == 16
    assert verify_migration(store, p8, p16).ok
    assert digest_rows(store.scan_versions(p16.table.full_name), p16) == digest_rows(store.scan_versions(p8.table.full_name), p8)


def test_migrate_with_the_wrong_old_schema_is_refused_before_anything_is_written(store: EmbeddedStore, tmp_path: Path) -> None:
    _, seq = loaded(store, tmp_path, "seq", rows=100)
    _, wrong = write_schema(tmp_path, "wrong", prefix="mod", buckets=16)
    wrong.table = seq.table  # the sequential table, described as mod 16 salted
    _, target = write_schema(tmp_path, "t", prefix="mod", buckets=32)
    with pytest.raises(KeyshapeError, match="does not match table"):
        migrate(store, wrong, target, state_path=tmp_path / "s.json")
    assert not store.table_exists(target.table.full_name)
