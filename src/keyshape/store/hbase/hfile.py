"""HBase store files (HFile format v3) written and read back in Python: what a region server
loads through the bulk-load path (``BulkLoadHFile``) without seeing the rows as writes.

The layout is HBase 2.x's ``HFileWriterImpl`` with ``HFileBlock`` version 2 blocks:

- data blocks (``DATABLK*``) of KeyValues, each ``keyLength:int valueLength:int key value
  tagsLength:short tags memstoreTS:vlong`` (tags length always, as v3 writes it; the memstore
  timestamp 0: a bulk-loaded file's cells take the sequence id the region assigns at load time);
- a KeyValue key is ``rowLength:short row familyLength:byte family qualifier timestamp:long
  type:byte``, cells sorted as ``CellComparatorImpl`` sorts them (row, family, qualifier
  ascending; timestamp, then type descending);
- the load-on-open section: the data index's root block (``IDXROOT2``; with intermediate leaf
  blocks ``IDXLEAF2`` when the root would exceed ``index_chunk_size``, as HBase's
  ``BlockIndexWriter`` does), an empty meta index, the file info (``FILEINF2``: ``PBUF`` +
  a delimited ``FileInfoProto``), then the fixed 4096-byte trailer (``TRABLK"$`` + a delimited
  ``FileTrailerProto``, zero padding, the version int ``3 | 3 << 24``);
- every block: a 33-byte header (magic, on-disk size without header, uncompressed size without
  header, previous block of the type, checksum type, bytes per checksum, on-disk data size with
  header), the (compressed) payload, then one CRC32 (``ChecksumType.CRC32``) per
  ``bytes_per_checksum`` bytes of header + payload, which region servers verify themselves.

The file info carries what ``HFileOutputFormat2`` puts there (``BULKLOAD_TIMESTAMP``,
``BULKLOAD_SOURCE_TASK``, ``MAJOR_COMPACTION_KEY``, ``EXCLUDE_FROM_MINOR_COMPACTION``,
``TIMERANGE``, ``EARLIEST_PUT_TS``) and ``HFileWriterImpl`` adds (``hfile.LASTKEY``, averages,
``hfile.MAX_TAGS_LEN``, ``MAX_MEMSTORE_TS_KEY``, ``KEY_VALUE_VERSION``), plus
``MAX_SEQ_ID_KEY`` 0 (the region replaces it with the sequence id it assigns the file).

Compression ``NONE``, ``GZ``, ``SNAPPY``, ``LZ4`` and ``ZSTD`` (each block's payload as HBase's
codecs frame it, header uncompressed: :mod:`keyshape.store.hbase.compression`, which also refuses
the others); data-block encoding ``NONE`` only (others refused by
:func:`check_family_options`). No Bloom filter is written: the file has none, which every reader
accepts, and the first major compaction writes the family's.
"""

from __future__ import annotations

import os
import struct
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np
from hbasedriver.protobuf_py import HBase_pb2, HFile_pb2

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import BadInput, StoreError
from keyshape.store.hbase.compression import ORDINALS, WRITABLE, check_writable, compress_block, decompress_block, name_of

__all__ = [
    "DELETE",
    "DELETE_COLUMN",
    "DELETE_FAMILY",
    "DELETE_FAMILY_VERSION",
    "PUT",
    "Cell",
    "HFileFormatError",
    "HFileSummary",
    "HFileWriter",
    "check_family_options",
    "cell_sort_key",
    "key_bytes",
    "read_cells",
    "read_file_info",
    "read_trailer",
]

# KeyValue.Type codes
PUT, DELETE, DELETE_FAMILY_VERSION, DELETE_COLUMN, DELETE_FAMILY = 4, 8, 10, 12, 14
_TYPES = {PUT, DELETE, DELETE_FAMILY_VERSION, DELETE_COLUMN, DELETE_FAMILY}

# BlockType magics
DATA, LEAF_INDEX, ROOT_INDEX, FILE_INFO, TRAILER = b"DATABLK*", b"IDXLEAF2", b"IDXROOT2", b"FILEINF2", b'TRABLK"$'
HEADER_SIZE = 33  # HFileBlock header with checksum fields
CRC32 = 1  # ChecksumType.CRC32
TRAILER_SIZE = 4096  # FixedFileTrailer size of format version 3
MAJOR, MINOR = 3, 3  # HFileReaderImpl.MAX_MINOR_VERSION
COMPRESSIONS = {name: ORDINALS[name] for name in WRITABLE}  # what is written: Compression.Algorithm ordinals
# HBase 1-compatible name of CellComparatorImpl, as FixedFileTrailer writes it
COMPARATOR = "org.apache.hadoop.hbase.KeyValue$KVComparator"
DEFAULT_BLOCK_SIZE = 64 * 1024
INDEX_CHUNK_SIZE = 128 * 1024  # hfile.index.block.max.size
BYTES_PER_CHECKSUM = 16 * 1024  # hbase.hstore.bytes.per.checksum
_HEADER = struct.Struct(">8siiqbii")
_KV = struct.Struct(">ii")
_INDEX_ENTRY = struct.Struct(">qi")
_NO_MIN = (1 << 63) - 1


class HFileFormatError(StoreError):
    """A file that is not an HFile this module can read (bad magic, checksum, version)."""


class Cell(NamedTuple):
    row: bytes
    family: bytes
    qualifier: bytes
    timestamp: int
    type: int
    value: bytes
    tags: bytes = b""


def key_bytes(row: bytes, family: bytes, qualifier: bytes, timestamp: int, kind: int) -> bytes:
    """The serialized KeyValue key (``KeyValueUtil``'s key layout)."""
    return b"".join((struct.pack(">h", len(row)), row, bytes((len(family),)), family, qualifier, struct.pack(">qB", timestamp, kind)))


def cell_sort_key(cell: Cell) -> tuple[bytes, bytes, bytes, int, int]:
    """The order ``CellComparatorImpl`` puts cells in (newest timestamp, then highest type, first)."""
    return (cell.row, cell.family, cell.qualifier, -cell.timestamp, -cell.type)


def _vint(value: int) -> bytes:
    """Hadoop ``WritableUtils.writeVLong``."""
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    length = -112
    if value < 0:
        value ^= -1
        length = -120
    tmp = value
    while tmp:
        tmp >>= 8
        length -= 1
    n = -(length + 120) if length < -120 else -(length + 112)
    return struct.pack(">b", length) + value.to_bytes(n, "big")


def _read_vint(data: bytes, p: int) -> tuple[int, int]:
    first = struct.unpack_from(">b", data, p)[0]
    if first >= -112:
        return first, p + 1
    negative = first < -120
    n = -(first + 120) if negative else -(first + 112)
    value = int.from_bytes(data[p + 1 : p + 1 + n], "big")
    return (value ^ -1 if negative else value), p + 1 + n


def _pb_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_pb_varint(data: bytes, p: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[p]
        p += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, p
        shift += 7


def check_family_options(family: str, options: Mapping[str, str]) -> str:
    """The compression name this writer uses for a family with HBase's ``options``
    (``describe``'s attributes); BadInput, in one line, for what it cannot write."""
    compression = check_writable(family, options.get("COMPRESSION", "NONE"))
    encoding = options.get("DATA_BLOCK_ENCODING", "NONE").upper()
    if encoding != "NONE":
        raise BadInput(
            f"family {family!r} of the new table uses DATA_BLOCK_ENCODING {encoding}; the bulk copy writes unencoded blocks: "
            f"alter it to NONE for the copy (and back after; a major compaction encodes the files), or copy with --via puts"
        )
    return compression


@dataclass
class HFileSummary:
    """What a closed writer wrote."""

    path: Path
    family: bytes
    first_row: bytes
    last_row: bytes
    entries: int
    size: int
    # what the file info records, kept so files can be joined (:meth:`HFileWriter.append_file`)
    # without reading their cells
    key_bytes: int = 0
    value_bytes: int = 0
    min_ts: int = _NO_MIN
    max_ts: int = 0
    earliest_put: int = _NO_MIN
    max_tags: int = 0
    last_key: bytes = b""
    compression: str = "NONE"


@dataclass
class _Block:
    offset: int
    on_disk_size: int  # with header and checksums
    first_key: bytes


@dataclass
class HFileWriter:
    """Write one family's cells, appended in ``CellComparatorImpl`` order, into an HFile v3.

    ``block_size``: uncompressed bytes after which a data block is closed (the family's
    BLOCKSIZE). ``compression``: a name of ``COMPRESSIONS``. ``index_chunk_size``: the largest root index
    before leaf index blocks are written. ``task``: the ``BULKLOAD_SOURCE_TASK`` recorded.
    """

    path: Path
    family: bytes
    block_size: int = DEFAULT_BLOCK_SIZE
    compression: str = "NONE"
    index_chunk_size: int = INDEX_CHUNK_SIZE
    bytes_per_checksum: int = BYTES_PER_CHECKSUM
    task: str = "keyshape"
    _out: BinaryIO = field(init=False, repr=False)
    _offset: int = field(init=False, default=0)
    _buffer: list[bytes] = field(init=False, default_factory=list)
    _buffered: int = field(init=False, default=0)
    _block_first_key: bytes | None = field(init=False, default=None)
    _blocks: list[_Block] = field(init=False, default_factory=list)
    _prev_by_type: dict[bytes, int] = field(init=False, default_factory=dict)
    _last: tuple[bytes, bytes, bytes, int, int] | None = field(init=False, default=None)
    _first_row: bytes | None = field(init=False, default=None)
    _last_key: bytes = field(init=False, default=b"")
    _last_row: bytes = field(init=False, default=b"")
    _entries: int = field(init=False, default=0)
    _key_bytes: int = field(init=False, default=0)
    _value_bytes: int = field(init=False, default=0)
    _uncompressed: int = field(init=False, default=0)
    _min_ts: int = field(init=False, default=_NO_MIN)
    _max_ts: int = field(init=False, default=0)
    _earliest_put: int = field(init=False, default=_NO_MIN)
    _max_tags: int = field(init=False, default=0)
    _closed: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self.compression = self.compression.upper()
        if self.compression not in COMPRESSIONS:
            raise BadInput(f"HFile compression {self.compression!r} is not supported here; use {', '.join(COMPRESSIONS)}")
        if not 0 < len(self.family) < 128:
            raise BadInput(f"a column family name must be 1 to 127 bytes, got {len(self.family)}")
        self._out = open(self.path, "wb")

    def __enter__(self) -> HFileWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._closed:
            return
        if exc[0] is None:
            self.close()
        else:
            self.abort()

    def append(self, row: bytes, qualifier: bytes, timestamp: int, value: bytes, kind: int = PUT, tags: bytes = b"") -> None:
        """Add one cell of this file's family; cells must come in HBase's order (BadInput if not)."""
        if kind not in _TYPES:
            raise BadInput(f"unknown KeyValue type {kind}")
        if not row or len(row) > 32767:
            raise BadInput(f"a row key must be 1 to 32767 bytes, got {len(row)}")
        order = (row, self.family, qualifier, -timestamp, -kind)
        if self._last is not None and order <= self._last:
            raise BadInput(
                f"cells out of HBase's order (or repeated): {to_string_binary(row)}/{to_string_binary(qualifier)}/{timestamp} "
                f"after {to_string_binary(self._last[0])}/{to_string_binary(self._last[2])}/{-self._last[3]}"
            )
        self._last = order
        key = key_bytes(row, self.family, qualifier, timestamp, kind)
        if self._block_first_key is None:
            self._block_first_key = key
        if self._first_row is None:
            self._first_row = row
        self._last_row, self._last_key = row, key
        # keyLength valueLength key value tagsLength tags memstoreTS(vlong 0)
        record = b"".join((_KV.pack(len(key), len(value)), key, value, struct.pack(">H", len(tags)), tags, b"\x00"))
        self._buffer.append(record)
        self._buffered += len(record)
        self._entries += 1
        self._key_bytes += len(key)
        self._value_bytes += len(value)
        self._min_ts = min(self._min_ts, timestamp)
        self._max_ts = max(self._max_ts, timestamp)
        if kind == PUT:
            self._earliest_put = min(self._earliest_put, timestamp)
        self._max_tags = max(self._max_tags, len(tags))
        if self._buffered >= self.block_size:
            self._finish_data_block()

    def append_puts(self, cells: list[tuple[bytes, bytes, int, bytes]]) -> None:
        """Add Put cells without tags given as ``(row, qualifier, -timestamp, value)``, sorted
        (plain tuple order is HBase's order then): :meth:`append`'s loop for the bulk copy, a
        third of its cost per cell. A refused cell aborts the file (deleted).
        Cells all of one layout (one row length, one qualifier, one value length: fixed-width
        keys and one fixed-size cell per row, as a salted copy holds) are laid out as one array
        (:meth:`_append_uniform`), the same bytes for a tenth of the cost."""
        if len(cells) >= 32 and self._append_uniform(cells):
            return
        family_part = bytes((len(self.family),)) + self.family
        pack_row, pack_tail, pack_kv = struct.Struct(">h").pack, struct.Struct(">qB").pack, _KV.pack
        last = self._last
        buffer, buffered, block_size = self._buffer, self._buffered, self.block_size
        key_bytes_total = value_bytes_total = 0
        low, high = self._min_ts, self._max_ts
        key = b""
        for cell in cells:
            row, qualifier, neg_ts, value = cell
            order = (row, self.family, qualifier, neg_ts, -PUT)
            if last is not None and order <= last:
                self.abort()  # part of the list is buffered: the file cannot be finished
                raise BadInput(f"cells out of HBase's order (or repeated): {to_string_binary(row)}/{to_string_binary(qualifier)}/{-neg_ts}")
            if not row or len(row) > 32767:
                self.abort()
                raise BadInput(f"a row key must be 1 to 32767 bytes, got {len(row)}")
            last = order
            key = b"".join((pack_row(len(row)), row, family_part, qualifier, pack_tail(-neg_ts, PUT)))
            if self._block_first_key is None:
                self._block_first_key = key
                if self._first_row is None:
                    self._first_row = row
            record = b"".join((pack_kv(len(key), len(value)), key, value, b"\x00\x00\x00"))  # no tags, memstoreTS 0
            buffer.append(record)
            buffered += len(record)
            key_bytes_total += len(key)
            value_bytes_total += len(value)
            if -neg_ts < low:
                low = -neg_ts
            if -neg_ts > high:
                high = -neg_ts
            if buffered >= block_size:
                self._buffered = buffered
                self._finish_data_block()
                buffer, buffered = self._buffer, 0
        self._buffered = buffered
        self._last = last
        if cells:
            self._last_row, self._last_key = cells[-1][0], key
            self._entries += len(cells)
            self._key_bytes += key_bytes_total
            self._value_bytes += value_bytes_total
            self._min_ts, self._max_ts = low, high
            self._earliest_put = min(self._earliest_put, low)

    def _append_uniform(self, cells: list[tuple[bytes, bytes, int, bytes]]) -> bool:
        """:meth:`append_puts` for cells of one layout, with numpy: the records are one
        ``(cells, record size)`` byte array cut into blocks where the loop would cut them.
        False (nothing appended) when the cells are not of one layout or not in order: the loop
        then says which cell is wrong."""
        row0, qualifier, neg0, value0 = cells[0]
        n, row_len, value_len = len(cells), len(row0), len(value0)
        if not 0 < row_len <= 32767:
            return False
        # map/itemgetter/set: the checks run in C, not as a Python loop per cell
        rows = list(map(itemgetter(0), cells))
        values = list(map(itemgetter(3), cells))
        if set(map(len, rows)) != {row_len} or set(map(len, values)) != {value_len} or set(map(itemgetter(1), cells)) != {qualifier}:
            return False
        if self._last is not None and (row0, self.family, qualifier, neg0, -PUT) <= self._last:
            return False
        try:
            neg = np.fromiter(map(itemgetter(2), cells), dtype=np.int64, count=n)
        except OverflowError:
            return False
        keys = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(n, row_len)
        values_matrix = np.frombuffer(b"".join(values), dtype=np.uint8).reshape(n, value_len)
        return self.append_put_columns(keys, qualifier, neg, values_matrix)

    def append_put_columns(self, keys: np.ndarray, qualifier: bytes, neg: np.ndarray, values: np.ndarray) -> bool:
        """:meth:`append_puts` for cells given as columns, all of one layout: ``keys`` the rows
        (``(n, row length)`` uint8), one ``qualifier``, ``neg`` the negated timestamps (int64),
        ``values`` ``(n, value length)`` uint8; sorted as :meth:`append_puts` wants them. The
        records are one byte array cut into blocks where the loop would cut them. False (nothing
        appended) when the cells are not in order after each other and what the file holds:
        :meth:`append_puts` with the same cells then says which one is wrong."""
        n, row_len = keys.shape
        value_len = values.shape[1]
        if n == 0 or not 0 < row_len <= 32767:
            return False
        row0 = keys[0].tobytes()
        if self._last is not None and (row0, self.family, qualifier, int(neg[0]), -PUT) <= self._last:
            return False
        # in order: each row after the one before, or the same row with an older timestamp
        diff = keys[1:] != keys[:-1]
        first = diff.argmax(axis=1)
        pairs = np.arange(n - 1)
        later = keys[1:][pairs, first] > keys[:-1][pairs, first]
        if not np.where(diff.any(axis=1), later, neg[1:] > neg[:-1]).all():
            return False
        family_part = bytes((len(self.family),)) + self.family + qualifier
        key_len = 2 + row_len + len(family_part) + 9
        size = 8 + key_len + value_len + 3  # no tags (length 0), memstore timestamp 0
        records = np.zeros((n, size), dtype=np.uint8)
        records[:, :10] = np.frombuffer(_KV.pack(key_len, value_len) + struct.pack(">h", row_len), dtype=np.uint8)
        p = 10 + row_len
        records[:, 10:p] = keys
        records[:, p : p + len(family_part)] = np.frombuffer(family_part, dtype=np.uint8)
        p += len(family_part)
        records[:, p : p + 8] = (-neg).astype(">i8").view(np.uint8).reshape(n, 8)
        records[:, p + 8] = PUT
        records[:, p + 9 : p + 9 + value_len] = values
        data = records.tobytes()
        i = 0
        while i < n:  # a block is closed after the record that takes it to block_size
            take = min(n - i, -(-(self.block_size - self._buffered) // size))
            if self._block_first_key is None:
                self._block_first_key = data[i * size + 8 : i * size + 8 + key_len]
            chunk = data[i * size : (i + take) * size]
            self._buffer.append(chunk)
            self._buffered += len(chunk)
            i += take
            if self._buffered >= self.block_size:
                self._finish_data_block()
        if self._first_row is None:
            self._first_row = row0
        last_row = keys[-1].tobytes()
        self._last = (last_row, self.family, qualifier, int(neg[-1]), -PUT)
        self._last_row, self._last_key = last_row, data[(n - 1) * size + 8 : (n - 1) * size + 8 + key_len]
        self._entries += n
        self._key_bytes += n * key_len
        self._value_bytes += n * value_len
        low, high = -int(neg.max()), -int(neg.min())
        self._min_ts, self._max_ts = min(self._min_ts, low), max(self._max_ts, high)
        self._earliest_put = min(self._earliest_put, low)
        return True

    def append_file(self, summary: HFileSummary) -> None:
        """Add every cell of the closed HFile ``summary`` (this module's, same family), whose
        first row comes after every row appended so far, by copying its data blocks (each given
        a new header and checksums at its new offset): no cell is read or rebuilt, so joining
        files costs a few operations per 64 KiB block, not per cell. The file is left as is."""
        if summary.family != self.family:
            raise BadInput(f"HFile {summary.path} holds family {summary.family!r}, not {self.family!r}")
        if self._entries and summary.first_row <= self._last_row:
            raise BadInput(f"HFile {summary.path} starts at {to_string_binary(summary.first_row)}, not after this file's last row")
        if not summary.last_key:
            raise BadInput(f"HFile {summary.path}: its summary lacks the file's statistics (written by an older keyshape?)")
        self._finish_data_block()
        data = Path(summary.path).read_bytes()
        for payload in _data_blocks(data, read_trailer(data)):
            (klen,) = struct.unpack_from(">i", payload, 0)
            at, on_disk = self._write_block(DATA, payload)
            self._blocks.append(_Block(at, on_disk, payload[8 : 8 + klen]))
        if self._first_row is None:
            self._first_row = summary.first_row
        self._last_row, self._last_key = summary.last_row, summary.last_key
        # below every cell of a later row and above every cell of this file's last row (the
        # smallest row after it, with an order key no cell of that row can have)
        self._last = (summary.last_row + b"\x00", self.family, b"", -(1 << 64), -(1 << 8))
        self._entries += summary.entries
        self._key_bytes += summary.key_bytes
        self._value_bytes += summary.value_bytes
        self._min_ts = min(self._min_ts, summary.min_ts)
        self._max_ts = max(self._max_ts, summary.max_ts)
        self._earliest_put = min(self._earliest_put, summary.earliest_put)
        self._max_tags = max(self._max_tags, summary.max_tags)

    @property
    def entries(self) -> int:
        return self._entries

    @property
    def bytes_written(self) -> int:
        return self._offset + self._buffered

    def _write_block(self, magic: bytes, data: bytes) -> tuple[int, int]:
        """Write one block; returns its (offset, on-disk size with header)."""
        payload = compress_block(self.compression, data)
        chunks = -(-(HEADER_SIZE + len(payload)) // self.bytes_per_checksum)
        prev = self._prev_by_type.get(magic, -1)
        header = _HEADER.pack(magic, len(payload) + 4 * chunks, len(data), prev, CRC32, self.bytes_per_checksum, HEADER_SIZE + len(payload))
        body = header + payload
        bpc = self.bytes_per_checksum
        sums = b"".join(struct.pack(">I", zlib.crc32(body[i : i + bpc])) for i in range(0, len(body), bpc))
        offset = self._offset
        self._out.write(body)
        self._out.write(sums)
        size = len(body) + len(sums)
        self._offset += size
        self._uncompressed += HEADER_SIZE + len(data)
        self._prev_by_type[magic] = offset
        return offset, size

    def _finish_data_block(self) -> None:
        if not self._buffer:
            return
        assert self._block_first_key is not None
        offset, size = self._write_block(DATA, b"".join(self._buffer))
        self._blocks.append(_Block(offset, size, self._block_first_key))
        self._buffer, self._buffered, self._block_first_key = [], 0, None

    @staticmethod
    def _root_entries(blocks: list[_Block]) -> bytes:
        return b"".join(_INDEX_ENTRY.pack(b.offset, b.on_disk_size) + _vint(len(b.first_key)) + b.first_key for b in blocks)

    @staticmethod
    def _leaf(blocks: list[_Block]) -> bytes:
        """A non-root index block: count, the secondary index of entry offsets, the entries."""
        entries = [_INDEX_ENTRY.pack(b.offset, b.on_disk_size) + b.first_key for b in blocks]
        offsets, at = [], 0
        for e in entries:
            offsets.append(at)
            at += len(e)
        offsets.append(at)
        return struct.pack(f">i{len(offsets)}i", len(entries), *offsets) + b"".join(entries)

    def _write_index(self) -> tuple[int, int, int]:
        """The data index; returns (root offset, levels, root entries)."""
        blocks = self._blocks
        root = self._root_entries(blocks)
        if len(root) <= self.index_chunk_size or len(blocks) < 2:
            offset, _ = self._write_block(ROOT_INDEX, root)
            return offset, 1, len(blocks)
        # two levels: leaf chunks of about index_chunk_size, the root pointing at them, then the
        # mid-key metadata (the leaf holding the middle data block, its size, the entry in it)
        leaves: list[tuple[_Block, int, int]] = []  # (leaf block, first data block index, count)
        chunk: list[_Block] = []
        chunk_bytes, first = 0, 0
        for i, b in enumerate(blocks):
            chunk.append(b)
            chunk_bytes += 16 + len(b.first_key)
            if chunk_bytes >= self.index_chunk_size or i == len(blocks) - 1:
                off, size = self._write_block(LEAF_INDEX, self._leaf(chunk))
                leaves.append((_Block(off, size, chunk[0].first_key), first, len(chunk)))
                first, chunk, chunk_bytes = i + 1, [], 0
        mid = (len(blocks) - 1) // 2
        leaf, start, _ = next(item for item in leaves if item[1] <= mid < item[1] + item[2])
        metadata = struct.pack(">qii", leaf.offset, leaf.on_disk_size, mid - start)
        offset, _ = self._write_block(ROOT_INDEX, self._root_entries([item[0] for item in leaves]) + metadata)
        return offset, 2, len(leaves)

    def close(self) -> HFileSummary:
        """Write the index, file info and trailer; the file is complete (and fsynced) after this."""
        if self._closed:
            raise StoreError(f"HFile {self.path} is already closed")
        if not self._entries:
            self.abort()
            raise BadInput(f"HFile {self.path}: no cells appended (HBase refuses an empty bulk-load file)")
        self._finish_data_block()
        last_data = self._blocks[-1].offset
        root_offset, levels, root_count = self._write_index()
        self._write_block(ROOT_INDEX, b"")  # the meta index: no meta blocks
        now = int(time.time() * 1000)
        info = {
            b"BULKLOAD_SOURCE_TASK": self.task.encode(),
            b"BULKLOAD_TIMESTAMP": struct.pack(">q", now),
            b"EARLIEST_PUT_TS": struct.pack(">q", self._earliest_put if self._earliest_put < (1 << 63) - 1 else -(1 << 63)),
            b"EXCLUDE_FROM_MINOR_COMPACTION": b"\x00",
            b"KEY_VALUE_VERSION": struct.pack(">i", 1),
            b"MAJOR_COMPACTION_KEY": b"\xff",
            b"MAX_MEMSTORE_TS_KEY": struct.pack(">q", 0),
            b"MAX_SEQ_ID_KEY": struct.pack(">q", 0),
            b"TIMERANGE": b"PBUF" + HBase_pb2.TimeRangeTracker(**{"from": self._min_ts, "to": self._max_ts}).SerializeToString(),
            b"hfile.AVG_KEY_LEN": struct.pack(">i", self._key_bytes // self._entries),
            b"hfile.AVG_VALUE_LEN": struct.pack(">i", self._value_bytes // self._entries),
            b"hfile.CREATE_TIME_TS": struct.pack(">q", now),
            b"hfile.LASTKEY": self._last_key,
            b"hfile.MAX_TAGS_LEN": struct.pack(">i", self._max_tags),
            b"hfile.TAGS_COMPRESSED": b"\x00",
        }
        file_info_offset = self._offset
        proto = HFile_pb2.FileInfoProto(map_entry=[HBase_pb2.BytesBytesPair(first=k, second=v) for k, v in sorted(info.items())])
        body = proto.SerializeToString()
        self._write_block(FILE_INFO, b"PBUF" + _pb_varint(len(body)) + body)
        trailer = HFile_pb2.FileTrailerProto(
            file_info_offset=file_info_offset,
            load_on_open_data_offset=root_offset,
            uncompressed_data_index_size=0,
            total_uncompressed_bytes=self._uncompressed + TRAILER_SIZE,
            data_index_count=root_count,
            meta_index_count=0,
            entry_count=self._entries,
            num_data_index_levels=levels,
            first_data_block_offset=0,
            last_data_block_offset=last_data,
            comparator_class_name=COMPARATOR,
            compression_codec=COMPRESSIONS[self.compression],
        ).SerializeToString()
        delimited = _pb_varint(len(trailer)) + trailer
        padding = TRAILER_SIZE - 12 - len(delimited)
        self._out.write(TRAILER + delimited + b"\x00" * padding + struct.pack(">i", MAJOR | MINOR << 24))
        self._offset += TRAILER_SIZE
        self._out.flush()
        os.fsync(self._out.fileno())
        self._out.close()
        self._closed = True
        assert self._first_row is not None
        return HFileSummary(
            self.path,
            self.family,
            self._first_row,
            self._last_row,
            self._entries,
            self._offset,
            self._key_bytes,
            self._value_bytes,
            self._min_ts,
            self._max_ts,
            self._earliest_put,
            self._max_tags,
            self._last_key,
            self.compression,
        )

    def abort(self) -> None:
        """Close and delete a file that will not be finished."""
        if not self._closed:
            self._out.close()
            self._closed = True
            self.path.unlink(missing_ok=True)


# --- reading (keyshape's own files: splitting a file at a region boundary, tests) --------------


def read_trailer(data: bytes) -> HFile_pb2.FileTrailerProto:
    """The trailer of a whole HFile v3 ``data``."""
    if len(data) < TRAILER_SIZE or struct.unpack(">i", data[-4:])[0] & 0xFFFFFF != MAJOR:
        raise HFileFormatError("not an HFile of format version 3")
    t = data[-TRAILER_SIZE:]
    if t[:8] != TRAILER:
        raise HFileFormatError("bad HFile trailer magic")
    n, p = _read_pb_varint(t, 8)
    return HFile_pb2.FileTrailerProto.FromString(t[p : p + n])


def _data_blocks(data: bytes, trailer: HFile_pb2.FileTrailerProto) -> Iterator[bytes]:
    """The payload of every data block of the file ``data`` (its ``trailer`` read), in file order."""
    offset = trailer.first_data_block_offset
    while offset <= trailer.last_data_block_offset:
        magic, payload, size = _block_at(data, offset, trailer.compression_codec)
        offset += size
        if magic == DATA:
            yield payload


def _block_at(data: bytes, offset: int, compression: int) -> tuple[bytes, bytes, int]:
    """(magic, uncompressed payload, on-disk size with header) of the block at ``offset``,
    checksums verified."""
    magic, on_disk, uncompressed, _, ctype, bpc, data_with_header = _HEADER.unpack_from(data, offset)
    end = offset + HEADER_SIZE + on_disk
    body = data[offset : offset + data_with_header]
    if ctype == CRC32:
        sums = data[offset + data_with_header : end]
        for i, start in enumerate(range(0, len(body), bpc)):
            if struct.unpack_from(">I", sums, 4 * i)[0] != zlib.crc32(body[start : start + bpc]):
                raise HFileFormatError(f"checksum mismatch in the block at offset {offset}")
    try:
        payload = decompress_block(name_of(compression), body[HEADER_SIZE:], uncompressed)
    except StoreError as e:
        raise HFileFormatError(f"block at offset {offset}: {e}") from None
    if len(payload) != uncompressed:
        raise HFileFormatError(f"block at offset {offset}: {len(payload)} bytes, header says {uncompressed}")
    return magic, payload, end - offset


def read_file_info(path: str | Path) -> dict[bytes, bytes]:
    """The file info map of an HFile v3."""
    data = Path(path).read_bytes()
    trailer = read_trailer(data)
    magic, payload, _ = _block_at(data, trailer.file_info_offset, trailer.compression_codec)
    if magic != FILE_INFO or payload[:4] != b"PBUF":
        raise HFileFormatError("bad file info block")
    n, p = _read_pb_varint(payload, 4)
    return {e.first: e.second for e in HFile_pb2.FileInfoProto.FromString(payload[p : p + n]).map_entry}


def read_cells(path: str | Path) -> Iterator[Cell]:
    """Every cell of an HFile v3 with unencoded data blocks, in file order."""
    data = Path(path).read_bytes()
    trailer = read_trailer(data)
    info = read_file_info(path)
    mvcc = struct.unpack(">i", info.get(b"KEY_VALUE_VERSION", b"\x00\x00\x00\x00"))[0] == 1
    tags = b"hfile.MAX_TAGS_LEN" in info
    for block in _data_blocks(data, trailer):
        p = 0
        while p < len(block):
            klen, vlen = _KV.unpack_from(block, p)
            p += 8
            key, value = block[p : p + klen], block[p + klen : p + klen + vlen]
            p += klen + vlen
            tag = b""
            if tags:
                (tlen,) = struct.unpack_from(">H", block, p)
                tag = block[p + 2 : p + 2 + tlen]
                p += 2 + tlen
            if mvcc:
                _, p = _read_vint(block, p)
            (rlen,) = struct.unpack_from(">h", key, 0)
            row = key[2 : 2 + rlen]
            flen = key[2 + rlen]
            family = key[3 + rlen : 3 + rlen + flen]
            qualifier = key[3 + rlen + flen : -9]
            timestamp, kind = struct.unpack(">qB", key[-9:])
            yield Cell(row, family, qualifier, timestamp, kind, value, tag)
