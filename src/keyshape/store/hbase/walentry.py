"""What a replication source ships: HBase WAL entries (``WALEntry``/``WALKey`` of
``ReplicateWALEntryRequest``) and their cells, which travel after the request in ONE cell block,
concatenated in entry order (entry i owns the next ``associated_cell_count`` cells).

The cell block codec is the source's ``hbase.replication.rpc.codec`` (default
``KeyValueCodecWithTags``; ``KeyValueCodec`` is the same without tags). Per cell, big-endian:
``int32 len``, then a KeyValue ``int32 keylen, int32 vallen, int16 rowlen, row, int8 famlen,
family, qualifier, int64 timestamp, int8 type, value`` and, with tags, ``int16 tagslen, tags``.
"""

from __future__ import annotations

import struct
import uuid
from enum import IntEnum
from typing import NamedTuple

from hbasedriver.protobuf_py import Admin_pb2

__all__ = ["CODECS", "CellType", "WalCell", "WalEntry", "WalDecodeError", "decode_entries"]

# The cell block codecs a sink can read (the ConnectionHeader names one; anything else is refused).
CODECS = frozenset({"org.apache.hadoop.hbase.codec.KeyValueCodec", "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags"})

# WAL marker cells (bulk load, replication marker) use this family; they are not user data.
METAFAMILY = b"METAFAMILY"

_HEAD = struct.Struct(">iiih")  # cell length, key length, value length, row length
_TS_TYPE = struct.Struct(">qB")


class WalDecodeError(ValueError):
    """The request or its cell block is not what a replication source sends."""


class CellType(IntEnum):
    """``KeyValue.Type`` codes as they appear in WAL cells."""

    PUT = 4
    DELETE = 8  # one version, at exactly the timestamp
    DELETE_FAMILY_VERSION = 10  # every column of the family, at exactly the timestamp
    DELETE_COLUMN = 12  # every version of the column at or before the timestamp
    DELETE_FAMILY = 14  # every column of the family at or before the timestamp


# NamedTuples, not dataclasses: a sink builds one per replicated cell, and a frozen dataclass
# costs several times a tuple to build (it was a fifth of the sink's time, issue 32 profile).
class WalCell(NamedTuple):
    """One replicated cell (``value`` is empty for deletes)."""

    row: bytes
    family: bytes
    qualifier: bytes
    timestamp: int
    type: CellType
    value: bytes


class WalEntry(NamedTuple):
    """One WAL entry: the edits one region logged under one sequence id.

    ``table`` is ``TableName.getName()``: ``qual`` in namespace ``default``, else ``ns:qual``;
    ``encoded_region`` the region's encoded name (32 hex digits); ``sequence_id`` the region's
    sequence id; ``write_time`` the WAL append time (ms); ``cluster_ids`` every cluster that has
    seen the edit (loop control). METAFAMILY marker cells are left out of ``cells``."""

    table: str
    encoded_region: bytes
    sequence_id: int
    write_time: int
    cluster_ids: tuple[uuid.UUID, ...]
    cells: tuple[WalCell, ...]


_TYPES = {int(t): t for t in CellType}


def _uuid(most: int, least: int) -> uuid.UUID:
    return uuid.UUID(int=((most & (2**64 - 1)) << 64) | (least & (2**64 - 1)))


def _cells(block: bytes, pos: int, count: int, tags: bool) -> tuple[list[WalCell], int]:
    out: list[WalCell] = []
    end_of_block = len(block)
    head, ts_type, types = _HEAD.unpack_from, _TS_TYPE.unpack_from, _TYPES
    for _ in range(count):
        if pos + 14 > end_of_block:
            raise WalDecodeError(f"the cell block ends inside a cell header at byte {pos}")
        length, keylen, vallen, rowlen = head(block, pos)
        end = pos + 4 + length
        if keylen < 12 or vallen < 0 or end > end_of_block or length < 8 + keylen + vallen:
            raise WalDecodeError(f"a cell at byte {pos} has bad lengths (cell {length}, key {keylen}, value {vallen})")
        if not tags and length != 8 + keylen + vallen:
            raise WalDecodeError(f"a cell at byte {pos} carries tags but the codec has none")
        row_start = pos + 14
        fam_start = row_start + rowlen + 1
        famlen = block[fam_start - 1]
        key_end = pos + 12 + keylen
        qual_end = key_end - 9
        timestamp, code = ts_type(block, qual_end)
        kind = types.get(code)
        if kind is None:
            raise WalDecodeError(f"cell type {code} at byte {pos} is not Put or a Delete")
        family = block[fam_start : fam_start + famlen]
        if family != METAFAMILY:
            out.append(
                WalCell(
                    block[row_start : fam_start - 1], family, block[fam_start + famlen : qual_end], timestamp, kind, block[key_end : key_end + vallen]
                )
            )
        pos = end
    return out, pos


def decode_entries(request: Admin_pb2.ReplicateWALEntryRequest, block: bytes, codec: str) -> list[WalEntry]:
    """The request's entries with their cells cut from ``block`` (encoded with ``codec``, one of
    :data:`CODECS`); WalDecodeError when the counts and the block disagree."""
    if codec not in CODECS:
        raise WalDecodeError(f"cell block codec {codec!r} is not one keyshape reads ({', '.join(sorted(CODECS))})")
    tags = codec.endswith("WithTags")
    entries: list[WalEntry] = []
    tables: dict[bytes, str] = {}
    pos = 0
    for entry in request.entry:
        if entry.key_value_bytes:
            raise WalDecodeError("WALEntry.key_value_bytes is set; sources send cells in the cell block only")
        cells, pos = _cells(block, pos, entry.associated_cell_count, tags)
        key = entry.key
        raw_table = key.table_name
        table = tables.get(raw_table)
        if table is None:
            table = tables[raw_table] = raw_table.decode("utf-8", "replace")
        entries.append(
            WalEntry(
                table,
                key.encoded_region_name,
                key.log_sequence_number,
                key.write_time,
                tuple(_uuid(u.most_sig_bits, u.least_sig_bits) for u in key.cluster_ids),
                tuple(cells),
            )
        )
    if pos != len(block):
        raise WalDecodeError(f"the cell block has {len(block) - pos} byte(s) after the entries' {pos}")
    return entries
