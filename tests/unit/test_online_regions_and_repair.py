"""The online migration's pure parts for issue 39: which WAL entries are OLD's own (a dropped
namesake's regions never reach NEW, item 13), how the cut-over's repair compares a row and names
what differs, and why a cut-over that cannot finish says what it saw (item 12). The real-HBase
proofs are in tests/hbase/test_migrate_online.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from keyshape.ops.migrate_online import OnlineStatus, _why
from keyshape.ops.online import SourceRegions, encoded_region_name
from keyshape.ops.online_repair import Repair, _compare, differing_ranges
from keyshape.ops.verify import SideDigest, Verification, compare_sides
from keyshape.store.base import RegionRecord

BORN = 1_800_000_000_000  # OLD's oldest region's id when the migration began


def record(encoded: str, created: int, start: bytes = b"") -> RegionRecord:
    return RegionRecord(f"t,{start.decode()},{created}.{encoded}.", start, b"", created, False, False)


def test_the_encoded_name_is_the_last_part_of_a_region_name() -> None:
    assert encoded_region_name("ns:t,a\\x00b.c,1800000000000.0123456789abcdef0123456789abcdef.") == b"0123456789abcdef0123456789abcdef"


def test_entries_of_old_regions_daughters_and_janitored_parents_are_admitted_a_namesakes_are_not() -> None:
    meta = [record("a" * 32, BORN)]
    lookups = []

    def lookup() -> list[RegionRecord]:
        lookups.append(1)
        return meta

    regions = SourceRegions.of(list(meta), lookup)
    assert regions.born_ms == BORN
    assert regions.admits(b"a" * 32, BORN - 10_000)  # OLD's own: any write time
    assert not lookups, "a known region needs no meta read"
    meta.append(record("d" * 32, BORN + 5_000))  # a daughter created by a split after the start
    assert regions.admits(b"d" * 32, BORN + 6_000) and len(lookups) == 1
    # a region meta does not list: a dropped namesake's (written before OLD was created) ...
    assert not regions.admits(b"f" * 32, BORN - 3_000)
    # ... looked up once, not on every batch
    assert not regions.admits(b"f" * 32, BORN - 2_000) and len(lookups) == 2
    # a region of OLD the catalog janitor already removed: its edits are newer than OLD's birth
    assert regions.admits(b"e" * 32, BORN + 1)


def test_a_resumed_run_keeps_the_birth_the_first_run_recorded() -> None:
    later = [record("d" * 32, BORN + 60_000)]  # the original regions split and were cleaned since
    regions = SourceRegions.of(later, lambda: later, born_ms=BORN)
    assert regions.born_ms == BORN and regions.admits(b"c" * 32, BORN + 10)


def side(table: str, rows: list[int], cells: list[int], sums: list[int]) -> SideDigest:
    return SideDigest(table, [b"", b"m", b"t"], rows, cells, sums)


def test_the_differing_ranges_are_the_regions_whose_digest_differs() -> None:
    source = side("old", [2, 3, 4], [5, 6, 7], [11, 12, 13])
    target = side("new", [2, 3, 4], [5, 6, 7], [11, 99, 13])
    assert differing_ranges(compare_sides(source, target)) == [(b"m", b"t")]
    moved = side("new", [3, 2, 4], [6, 5, 7], [12, 11, 14])  # rows in other regions, totals differ
    assert differing_ranges(Verification(source, moved, ["x"])) == [(b"", b"m"), (b"m", b"t"), (b"t", b"")]
    same_parts = side("new", [2, 3, 4], [5, 6, 7], [11, 12, 13])
    assert differing_ranges(Verification(source, same_parts, [])) == []


def test_a_row_is_compared_cell_by_cell_and_only_what_old_holds_is_written() -> None:
    repair = Repair(ranges=1)
    want = {b"d:v": [(2, b"new"), (1, b"a")], b"m:t": [(5, b"x")]}
    have = {b"d:v": [(2, b"old"), (1, b"a"), (0, b"zombie")]}
    assert _compare(b"row1", want, have, repair)
    assert (repair.same_timestamp, repair.missing, repair.extra) == (1, 1, 1)
    assert "row1 d:v @2" in repair.example and "@0" in repair.extra_example
    assert not _compare(b"row2", {b"d:v": [(1, b"a")]}, {b"d:v": [(1, b"a")]}, repair), "an equal row is not written"
    repair.rows_written = 1
    text = repair.text
    assert "1 cell(s) held another value at the same timestamp" in text and "missing" in text and "NEW holds 1 cell(s) OLD does not" in text


@given(st.dictionaries(st.integers(0, 20), st.binary(max_size=3), max_size=6), st.dictionaries(st.integers(0, 20), st.binary(max_size=3), max_size=6))
def test_compare_counts_every_differing_cell_once(old: dict[int, bytes], new: dict[int, bytes]) -> None:
    repair = Repair()
    write = _compare(b"r", {b"d:v": list(old.items())}, {b"d:v": list(new.items())}, repair)
    differing = sum(old.get(ts) != new.get(ts) for ts in old.keys() | new.keys())
    assert repair.same_timestamp + repair.missing + repair.extra == differing
    assert write == (repair.same_timestamp + repair.missing > 0)


def test_a_cut_over_that_cannot_finish_says_what_it_saw_never_blames_writers_it_has_not_seen() -> None:
    source = side("old", [1, 1, 1], [1, 1, 1], [1, 2, 3])
    check = compare_sides(source, side("new", [1, 1, 1], [1, 1, 1], [1, 2, 4]))
    quiet = OnlineStatus(phase="cutover", sources=[{"server": "rs1", "lag_ms": 0, "log_queue": 1, "report_ms": 1}])
    extra = Repair(ranges=1, rows_checked=1, extra=2, extra_example="row r d:v @7")
    said = _why(check, [extra], quiet, arrived=0)
    assert "NEW holds 2 cell(s) OLD does not" in said and "writers" not in said.replace("another writer of NEW", "")
    said = _why(check, [Repair(ranges=1, rows_checked=1)], quiet, arrived=0)
    assert "still writing" not in said and "no edit of OLD arriving" in said
    more = compare_sides(source, side("new", [1, 3, 1], [1, 3, 1], [1, 9, 3]))
    said = _why(more, [Repair(ranges=1, rows_checked=1)], quiet, arrived=0)
    assert "NEW holds 2 row(s) more than OLD" in said and "writers" not in said.replace("another writer of NEW", "")
    said = _why(check, [], quiet, arrived=42)
    assert "OLD is still changing: the stream received 42 cell(s)" in said
