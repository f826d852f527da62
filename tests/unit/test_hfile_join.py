"""Joining HFiles by their data blocks (issue 42: one file per NEW region per load, so a load
does not push the store into a compaction): the joined file holds exactly the cells of its
inputs in order and the file info one writer of all the cells would have written (hypothesis);
files whose rows overlap are left alone. (HBase itself reads joined files in
tests/hbase/test_bulkload.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.errors import BadInput
from keyshape.store.hbase.bulkload import join_files
from keyshape.store.hbase.hfile import PUT, Cell, HFileSummary, HFileWriter, cell_sort_key, read_cells, read_file_info, read_trailer

# file info entries that hold the time of writing, not what the cells are
_CLOCK = {b"BULKLOAD_TIMESTAMP", b"hfile.CREATE_TIME_TS"}


def _write(path: Path, cells: list[Cell], **options: object) -> HFileSummary:
    with HFileWriter(path, b"f", **options) as w:  # type: ignore[arg-type]
        for c in cells:
            w.append(c.row, c.qualifier, c.timestamp, c.value, c.type, c.tags)
        return w.close()


cells_strategy = st.lists(
    st.builds(
        Cell,
        row=st.binary(min_size=1, max_size=6),
        family=st.just(b"f"),
        qualifier=st.binary(max_size=4),
        timestamp=st.integers(0, 1 << 62),
        type=st.just(PUT),
        value=st.binary(max_size=30),
        tags=st.binary(max_size=4),
    ),
    min_size=2,
    max_size=300,
    unique_by=lambda c: cell_sort_key(c),
)


@settings(max_examples=50, deadline=None)
@given(cells=cells_strategy, cuts=st.lists(st.integers(1, 299), max_size=4), block=st.sampled_from([40, 300, 65536]), gz=st.booleans())
def test_joined_files_hold_the_cells_and_file_info_of_one_writer(
    tmp_path_factory: pytest.TempPathFactory, cells: list[Cell], cuts: list[int], block: int, gz: bool
) -> None:
    tmp = tmp_path_factory.mktemp("join")
    cells = sorted(cells, key=cell_sort_key)
    rows = sorted({c.row for c in cells})
    # split at row boundaries: each part's rows all before the next part's
    bounds = sorted({rows[k % len(rows)] for k in cuts} - {rows[0]})
    parts: list[list[Cell]] = [[] for _ in range(len(bounds) + 1)]
    for c in cells:
        parts[sum(c.row >= b for b in bounds)].append(c)
    compression = "GZ" if gz else "NONE"
    files = [_write(tmp / f"part{i}", part, block_size=block, compression=compression) for i, part in enumerate(parts)]
    whole = _write(tmp / "whole", cells, block_size=block, compression=compression)
    joined = join_files(list(reversed(files)))  # any order in, sorted by first row
    assert len(joined) == 1
    assert list(read_cells(joined[0].path)) == cells
    assert {k: v for k, v in read_file_info(joined[0].path).items() if k not in _CLOCK} == {
        k: v for k, v in read_file_info(whole.path).items() if k not in _CLOCK
    }
    assert (joined[0].first_row, joined[0].last_row, joined[0].entries) == (cells[0].row, cells[-1].row, len(cells))
    if len(files) > 1:
        assert not any(f.path.exists() for f in files)  # the inputs are gone


def test_overlapping_files_are_not_joined(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", [Cell(b"a", b"f", b"q", 1, PUT, b"1"), Cell(b"c", b"f", b"q", 1, PUT, b"1")])
    b = _write(tmp_path / "b", [Cell(b"b", b"f", b"q", 1, PUT, b"2")])  # inside a's rows
    c = _write(tmp_path / "c", [Cell(b"c", b"f", b"r", 1, PUT, b"3")])  # a's last row again
    d = _write(tmp_path / "d", [Cell(b"d", b"f", b"q", 1, PUT, b"4")])
    out = join_files([a, b, c, d])
    # by first row: a | b, c, d (each after the one before it; none may join a)
    assert sorted(f.entries for f in out) == [2, 3]
    assert a in out and a.path.exists()
    joined = next(f for f in out if f.entries == 3)
    assert [(cell.row, cell.value) for cell in read_cells(joined.path)] == [(b"b", b"2"), (b"c", b"3"), (b"d", b"4")]


def test_a_file_that_does_not_follow_is_refused(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", [Cell(b"b", b"f", b"q", 1, PUT, b"1")])
    b = _write(tmp_path / "b", [Cell(b"b", b"f", b"r", 1, PUT, b"2")])
    with HFileWriter(tmp_path / "j", b"f") as w:
        w.append_file(a)
        with pytest.raises(BadInput, match="not after"):
            w.append_file(b)
        with pytest.raises(BadInput, match="out of HBase's order"):
            w.append(b"b", b"z", 1, b"x")  # a's last row again, after its cells
        w.append(b"b\x00", b"", 5, b"x")  # the next row is fine


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(32, 400),
    row_len=st.integers(1, 9),
    value_len=st.integers(0, 20),
    versions=st.integers(1, 3),
    block=st.sampled_from([50, 333, 4096]),
    split=st.integers(0, 400),
    seed=st.integers(0, 1 << 30),
)
def test_one_layout_fast_path_writes_what_append_writes(
    tmp_path_factory: pytest.TempPathFactory, n: int, row_len: int, value_len: int, versions: int, block: int, split: int, seed: int
) -> None:
    """append_puts' array path (cells of one layout) against append, cell by cell: the same
    cells, file info and block cuts, also when a list is appended in two calls."""
    import random

    rng = random.Random(seed)
    rows = sorted({rng.randbytes(row_len) for _ in range(n)})
    puts = [(row, b"q", -ts, rng.randbytes(value_len)) for row in rows for ts in sorted(rng.sample(range(1, 1 << 40), versions), reverse=True)]
    d = tmp_path_factory.mktemp("u")
    with HFileWriter(d / "one", b"f", block_size=block) as w:
        for row, qualifier, neg_ts, value in puts:
            w.append(row, qualifier, -neg_ts, value)
    with HFileWriter(d / "fast", b"f", block_size=block) as w:
        w.append_puts(puts[:split])
        w.append_puts(puts[split:])
    assert list(read_cells(d / "fast")) == list(read_cells(d / "one"))
    one, fast = read_file_info(d / "one"), read_file_info(d / "fast")
    assert {k: v for k, v in one.items() if k not in _CLOCK} == {k: v for k, v in fast.items() if k not in _CLOCK}
    t1, t2 = (read_trailer((d / name).read_bytes()) for name in ("one", "fast"))
    assert (t1.data_index_count, t1.last_data_block_offset, t1.entry_count) == (t2.data_index_count, t2.last_data_block_offset, t2.entry_count)


def test_one_layout_out_of_order_is_refused_as_the_loop_refuses(tmp_path: Path) -> None:
    puts = [(b"%04d" % i, b"q", -5, b"v") for i in range(100)]
    puts[50], puts[51] = puts[51], puts[50]
    w = HFileWriter(tmp_path / "u", b"f")
    with pytest.raises(BadInput, match="out of HBase's order"):
        w.append_puts(puts)
    assert not (tmp_path / "u").exists()
    repeated = [(b"%04d" % (i // 2), b"q", -5, b"v") for i in range(100)]  # each cell twice
    w = HFileWriter(tmp_path / "r", b"f")
    with pytest.raises(BadInput, match="repeated"):
        w.append_puts(repeated)
