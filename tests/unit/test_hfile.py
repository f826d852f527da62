"""The HFile v3 writer's structure: cells read back in order (hypothesis), the trailer and file
info HBase reads, two-level indexes, GZ blocks, checksums that catch a flipped byte, Hadoop's
vint, refused orders and options. (HBase itself reads these files in
tests/hbase/test_bulkload.py: scans, a major compaction and HFilePrettyPrinter.)"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.errors import BadInput
from keyshape.store.hbase.hfile import (
    DELETE,
    DELETE_COLUMN,
    DELETE_FAMILY,
    PUT,
    Cell,
    HFileFormatError,
    HFileWriter,
    _read_vint,
    _vint,
    cell_sort_key,
    check_family_options,
    key_bytes,
    read_cells,
    read_file_info,
    read_trailer,
)


def _write(path: Path, cells: list[Cell], **options: object) -> None:
    with HFileWriter(path, b"f", **options) as w:  # type: ignore[arg-type]
        for c in cells:
            w.append(c.row, c.qualifier, c.timestamp, c.value, c.type, c.tags)


cells_strategy = st.lists(
    st.builds(
        Cell,
        row=st.binary(min_size=1, max_size=12),
        family=st.just(b"f"),
        qualifier=st.binary(max_size=6),
        timestamp=st.integers(0, 1 << 62),
        type=st.sampled_from([PUT, DELETE, DELETE_COLUMN, DELETE_FAMILY]),
        value=st.binary(max_size=40),
        tags=st.binary(max_size=8),
    ),
    min_size=1,
    max_size=200,
    unique_by=lambda c: cell_sort_key(c),
)


@settings(max_examples=60, deadline=None)
@given(cells=cells_strategy, block=st.sampled_from([64, 500, 65536]), compression=st.sampled_from(["NONE", "GZ", "SNAPPY", "LZ4", "ZSTD"]))
def test_cells_read_back_in_hbase_order(tmp_path_factory: pytest.TempPathFactory, cells: list[Cell], block: int, compression: str) -> None:
    path = tmp_path_factory.mktemp("h") / "f.hfile"
    ordered = sorted(cells, key=cell_sort_key)
    _write(path, ordered, block_size=block, compression=compression, index_chunk_size=200)
    assert list(read_cells(path)) == ordered
    trailer = read_trailer(path.read_bytes())
    assert trailer.entry_count == len(ordered)
    assert trailer.compression_codec == {"NONE": 2, "GZ": 1, "SNAPPY": 3, "LZ4": 4, "ZSTD": 6}[compression]
    info = read_file_info(path)
    last = ordered[-1]
    assert info[b"hfile.LASTKEY"] == key_bytes(last.row, b"f", last.qualifier, last.timestamp, last.type)


def test_trailer_and_file_info_as_hbase_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "a.hfile"
    _write(path, [Cell(b"r%03d" % i, b"f", b"q", 7, PUT, b"v" * 10) for i in range(50)], block_size=100)
    data = path.read_bytes()
    assert struct.unpack(">i", data[-4:])[0] == 3 | 3 << 24  # major 3, minor 3
    assert data[-4096:-4088] == b'TRABLK"$' and data[:8] == b"DATABLK*"
    trailer = read_trailer(data)
    assert trailer.num_data_index_levels == 1 and trailer.data_index_count > 5
    assert trailer.comparator_class_name == "org.apache.hadoop.hbase.KeyValue$KVComparator"
    assert data[trailer.load_on_open_data_offset : trailer.load_on_open_data_offset + 8] == b"IDXROOT2"
    assert data[trailer.file_info_offset : trailer.file_info_offset + 8] == b"FILEINF2"
    info = read_file_info(path)
    assert info[b"KEY_VALUE_VERSION"] == struct.pack(">i", 1) and info[b"MAX_MEMSTORE_TS_KEY"] == bytes(8)
    assert b"BULKLOAD_TIMESTAMP" in info and info[b"MAJOR_COMPACTION_KEY"] == b"\xff"
    assert info[b"hfile.MAX_TAGS_LEN"] == bytes(4)  # tags length written per cell


def test_two_level_index_when_the_root_is_too_big(tmp_path: Path) -> None:
    path = tmp_path / "b.hfile"
    cells = [Cell(b"row%05d" % i, b"f", b"q", 1, PUT, b"x") for i in range(2000)]
    _write(path, cells, block_size=64, index_chunk_size=1024)
    data = path.read_bytes()
    trailer = read_trailer(data)
    assert trailer.num_data_index_levels == 2
    assert b"IDXLEAF2" in data
    assert list(read_cells(path)) == cells


def test_a_flipped_byte_fails_the_checksum(tmp_path: Path) -> None:
    path = tmp_path / "c.hfile"
    _write(path, [Cell(b"row", b"f", b"q", 1, PUT, b"value")])
    data = bytearray(path.read_bytes())
    data[40] ^= 1  # inside the first data block's payload
    path.write_bytes(bytes(data))
    with pytest.raises(HFileFormatError, match="checksum"):
        list(read_cells(path))


def test_out_of_order_and_repeated_cells_are_refused(tmp_path: Path) -> None:
    with HFileWriter(tmp_path / "d.hfile", b"f") as w:
        w.append(b"b", b"q", 5, b"v")
        with pytest.raises(BadInput, match="out of HBase's order"):
            w.append(b"a", b"q", 5, b"v")
        with pytest.raises(BadInput, match="out of HBase's order"):
            w.append(b"b", b"q", 5, b"v")
        with pytest.raises(BadInput, match="out of HBase's order"):
            w.append(b"b", b"q", 5, b"", DELETE)  # a Delete sorts before the Put of its timestamp
        w.append(b"b", b"q", 4, b"older")


def test_an_empty_file_is_refused_and_removed(tmp_path: Path) -> None:
    w = HFileWriter(tmp_path / "e.hfile", b"f")
    with pytest.raises(BadInput, match="no cells"):
        w.close()
    assert not (tmp_path / "e.hfile").exists()


@pytest.mark.parametrize(
    "value, encoded",
    [(0, b"\x00"), (127, b"\x7f"), (-112, b"\x90"), (128, b"\x8f\x80"), (-113, b"\x87\x70"), (1 << 40, b"\x8a\x01\x00\x00\x00\x00\x00")],
)
def test_hadoop_vint(value: int, encoded: bytes) -> None:
    # WritableUtils.writeVLong's bytes for these values
    assert _vint(value) == encoded
    assert _read_vint(encoded, 0) == (value, len(encoded))


def test_family_options_refused_in_one_line() -> None:
    assert check_family_options("d", {"COMPRESSION": "NONE", "DATA_BLOCK_ENCODING": "NONE"}) == "NONE"
    assert check_family_options("d", {"COMPRESSION": "GZ"}) == "GZ"
    assert check_family_options("d", {"COMPRESSION": "snappy"}) == "SNAPPY"
    with pytest.raises(BadInput, match="COMPRESSION LZO") as e:
        check_family_options("d", {"COMPRESSION": "LZO"})
    assert "\n" not in str(e.value)
    with pytest.raises(BadInput, match="DATA_BLOCK_ENCODING FAST_DIFF"):
        check_family_options("d", {"DATA_BLOCK_ENCODING": "FAST_DIFF"})


@settings(max_examples=40, deadline=None)
@given(cells=cells_strategy)
def test_append_puts_writes_what_append_writes(tmp_path_factory: pytest.TempPathFactory, cells: list[Cell]) -> None:
    puts = sorted({(c.row, c.qualifier, -c.timestamp): c.value for c in cells}.items())
    d = tmp_path_factory.mktemp("p")
    with HFileWriter(d / "one", b"f", block_size=128) as w:
        for (row, qualifier, neg_ts), value in puts:
            w.append(row, qualifier, -neg_ts, value)
    with HFileWriter(d / "fast", b"f", block_size=128) as w:
        w.append_puts([(row, qualifier, neg_ts, value) for (row, qualifier, neg_ts), value in puts])
    assert list(read_cells(d / "fast")) == list(read_cells(d / "one"))
    one, fast = read_file_info(d / "one"), read_file_info(d / "fast")
    for info in (one, fast):
        del info[b"BULKLOAD_TIMESTAMP"], info[b"hfile.CREATE_TIME_TS"]
    assert one == fast


def test_append_puts_refuses_an_unsorted_list(tmp_path: Path) -> None:
    w = HFileWriter(tmp_path / "u", b"f")
    with pytest.raises(BadInput, match="out of HBase's order"):
        w.append_puts([(b"b", b"q", -5, b"v"), (b"a", b"q", -5, b"v")])
    assert not (tmp_path / "u").exists()  # aborted: half a list is never a file
