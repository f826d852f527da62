"""Scans read their cells from the KeyValue cell block HBase sends after a ScanResponse (the
Java client's codec): the rows equal those read from protobuf Result messages, on a real HBase
and on generated blocks."""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyshape.schema import FamilySpec, TableSpec
from keyshape.store import ensure_table
from keyshape.store.hbase import cellblock
from keyshape.store.hbase.cellblock import CellBlockError, rows_of
from keyshape.store.hbase.client import cells_of
from keyshape.store.hbase.scan import keys_only_filter, scan_rows, stamp_of, versions_of


def pairs(columns: tuple[list[bytes], list[Any]]) -> list[tuple[bytes, Any]]:
    return list(zip(*columns))


def keyvalue(row: bytes, family: bytes, qualifier: bytes, ts: int, value: bytes) -> bytes:
    """One cell as KeyValueCodec writes it (KeyValueUtil.oswrite, no tags)."""
    key = struct.pack(">H", len(row)) + row + bytes([len(family)]) + family + qualifier + struct.pack(">qB", ts, 4)
    body = struct.pack(">ii", len(key), len(value)) + key + value
    return struct.pack(">i", len(body)) + body


names = st.binary(min_size=1, max_size=8)
cells = st.lists(st.tuples(names, st.binary(max_size=6), st.binary(max_size=40)), min_size=1, max_size=4)


@given(st.lists(st.tuples(st.binary(min_size=1, max_size=30), cells), max_size=12))
def test_rows_of_reads_every_cell_and_keeps_the_first_of_a_column(results: list[Any]) -> None:
    block, counts, want = b"", [], []
    for row, row_cells in results:
        expected: dict[bytes, bytes] = {}
        for family, qualifier, value in row_cells:
            block += keyvalue(row, family, qualifier, 1700000000000, value)
            expected.setdefault(family + b":" + qualifier, value)
        counts.append(len(row_cells))
        want.append((row, expected))
    assert pairs(rows_of(block, counts)) == want
    every = pairs(cellblock.versions_of(block, counts))
    assert [(row, {c: v[0][1] for c, v in cells.items()}) for row, cells in every] == want
    assert [sum(len(v) for v in cells.values()) for _, cells in every] == [len(c) for _, c in results]
    # a key-only scan's row and first-cell timestamp
    assert pairs(cellblock.stamps_of(block, counts)) == [(row, 1700000000000) for row, _ in results]
    if block:
        with pytest.raises(CellBlockError):
            rows_of(block[:-1], counts)
        with pytest.raises(CellBlockError):
            rows_of(block + b"\x00", counts)


def test_results_without_cells_are_skipped() -> None:
    block = keyvalue(b"r1", b"f", b"q", 1, b"v") + keyvalue(b"r2", b"f", b"q", 1, b"w")
    assert rows_of(block, [0, 1, 0, 1]) == ([b"r1", b"r2"], [{b"f:q": b"v"}, {b"f:q": b"w"}])


@pytest.mark.hbase
def test_cell_block_scans_equal_protobuf_scans(hbase_store: Any) -> None:
    """Two families (one keeping 3 versions), rows of one to many columns, empty and 100 KB
    values, binary keys: every scan shape reads the same rows through both encodings."""
    store = hbase_store
    spec = TableSpec(f"ks_cellblock_{uuid.uuid4().hex[:10]}", families=[FamilySpec("a"), FamilySpec("b", versions=3)])
    ensure_table(store, spec, [b"\x40", b"\x80"])
    table = spec.full_name
    try:
        want = {}
        for i in range(300):
            row = bytes([i % 256, i // 256]) + b"\x00row"
            cells = {b"a:v": b"%d" % i}
            if i % 3 == 0:
                cells[b"b:" + bytes([i % 7])] = b""
            if i % 50 == 0:
                cells[b"a:big"] = bytes(range(256)) * 400
            for version in range(3 if i % 5 == 0 else 1):
                # explicit timestamps: two puts in one millisecond would be one version
                store.put(table, row, {c: v + b"#%d" % version for c, v in cells.items()}, timestamp=1_767_225_600_000 + version)
            want[row] = {c: v + b"#%d" % (2 if i % 5 == 0 else 0) for c, v in cells.items()}
        rows = sorted(want.items())
        assert list(store.scan(table)) == rows
        assert any(c.cell_blocks for c in store.cluster._pool.values())  # the scans took that route
        assert list(store.scan(table, reverse=True, batch_size=7)) == rows[::-1]
        assert list(store.scan(table, columns=[b"b"], batch_size=13)) == [
            (r, {c: v for c, v in cells.items() if c.startswith(b"b:")}) for r, cells in rows if any(c.startswith(b"b:") for c in cells)
        ]
        assert list(store.scan(table, start=b"\x41", limit=20, batch_size=6)) == [kv for kv in rows if kv[0] >= b"\x41"][:20]
        protobuf = list(scan_rows(store, table, (None, True), (None, True), False, None, [], 11, convert=lambda result: cells_of(result)))
        assert protobuf == rows
        # every version: the cell-block route (scan_versions) against the protobuf one
        every = list(store.scan_versions(table, batch_size=9))
        assert every == list(
            scan_rows(store, table, (None, True), (None, True), False, None, [], 9, max_versions=2**31 - 1, convert=lambda r: versions_of(r))
        )
        assert [(r, {c: v[0][1] for c, v in cells.items()}) for r, cells in every] == rows
        assert max(len(v) for _, cells in every for v in cells.values()) == 3
        # keys with their first cell's timestamp: the cell-block route against the protobuf one
        timed = [kt for keys, stamps in store.scan_key_times(table, batch_size=17) for kt in zip(keys, stamps)]
        assert timed == list(
            scan_rows(store, table, (None, True), (None, True), False, None, [], 17, filter=keys_only_filter(), convert=lambda r: stamp_of(r))
        )
        assert [k for k, _ in timed] == [r for r, _ in rows]
        assert {t for _, t in timed} == {1_767_225_600_000, 1_767_225_600_002}  # the newest version
    finally:
        store.delete_table(table)


@given(st.integers(8, 40), st.integers(1, 12), st.integers(0, 9), st.data())
def test_rows_of_one_layout_read_by_stride(n: int, row_len: int, value_len: int, data: Any) -> None:
    """Rows of one layout (fixed-width keys, one fixed-size cell) take the strided route; a
    single cell of another layout among them sends the block back to the cell-by-cell walk."""
    rows = data.draw(st.lists(st.binary(min_size=row_len, max_size=row_len), min_size=n, max_size=n))
    values = data.draw(st.lists(st.binary(min_size=value_len, max_size=value_len), min_size=n, max_size=n))
    want = [(r, {b"cf:q": v}) for r, v in zip(rows, values)]
    block = b"".join(keyvalue(r, b"cf", b"q", 1700000000000 + i, v) for i, (r, v) in enumerate(zip(rows, values)))
    assert pairs(rows_of(block, [1] * n)) == want
    odd = data.draw(st.integers(0, n - 1))
    for other in (
        (rows[odd] + b"x", b"cf", b"q", values[odd]),
        (rows[odd], b"cf", b"qq", values[odd]),
        (rows[odd], b"cf", b"q", values[odd] + b"\x00"),
    ):
        mixed = list(want)
        mixed[odd] = (other[0], {other[1] + b":" + other[2]: other[3]})
        block = b"".join(keyvalue(r, *next(iter(c)).split(b":"), 1, v) for r, c in mixed for v in c.values())
        assert pairs(rows_of(block, [1] * n)) == mixed


def as_versions(block: bytes, counts: list[int]) -> list[tuple[bytes, Any]]:
    """version_columns' rows in versions_of's form, whichever route it took."""
    keys, rows = cellblock.version_columns(block, counts)
    return list(zip(keys, rows.versions() if isinstance(rows, cellblock.UniformCells) else rows))


@given(st.integers(2, 30), st.integers(1, 12), st.integers(0, 9), st.integers(0, 4), st.data())
def test_version_columns_equal_versions_of(n: int, row_len: int, value_len: int, family_len: int, data: Any) -> None:
    """One-cell rows of one layout are read as columns (family, qualifier, every timestamp and
    value exact); a cell of another layout or type, or a row of two cells, sends the block to
    versions_of's walk: the rows are versions_of's either way."""
    family = b"f" * family_len
    rows = data.draw(st.lists(st.binary(min_size=row_len, max_size=row_len), min_size=n, max_size=n))
    values = data.draw(st.lists(st.binary(min_size=value_len, max_size=value_len), min_size=n, max_size=n))
    stamps = data.draw(st.lists(st.integers(0, 2**63 - 1), min_size=n, max_size=n))
    cells = [keyvalue(r, family, b"q", ts, v) for r, ts, v in zip(rows, stamps, values)]
    block = b"".join(cells)
    keys, got = cellblock.version_columns(block, [1] * n)
    assert isinstance(got, cellblock.UniformCells) and (got.family, got.qualifier) == (family, b"q")
    assert list(zip(keys, got.versions())) == pairs(cellblock.versions_of(block, [1] * n))
    assert [(int(t), bytes(v)) for t, v in zip(got.timestamps, got.values)] == list(zip(stamps, values))
    odd = data.draw(st.integers(0, n - 1))
    delete = cells[odd][: -1 - value_len] + b"\x08" + cells[odd][len(cells[odd]) - value_len :]  # type Delete instead of Put
    for other in (keyvalue(rows[odd] + b"x", family, b"q", 1, values[odd]), keyvalue(rows[odd], family, b"qq", 1, values[odd]), delete):
        mixed = b"".join(cells[:odd] + [other] + cells[odd + 1 :])
        keys, got = cellblock.version_columns(mixed, [1] * n)
        assert not isinstance(got, cellblock.UniformCells)
        assert as_versions(mixed, [1] * n) == pairs(cellblock.versions_of(mixed, [1] * n))
    two = [1] * (n - 2) + [2]  # the last row holds two versions
    assert not isinstance(cellblock.version_columns(block, two)[1], cellblock.UniformCells)
    assert as_versions(block, two) == pairs(cellblock.versions_of(block, two))
