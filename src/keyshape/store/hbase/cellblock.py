"""Rows out of a cell block: the KeyValues HBase sends after a response instead of protobuf cells.

A connection whose header names ``org.apache.hadoop.hbase.codec.KeyValueCodec`` (what the Java
client does) gets the cells of a Scan's results as one block after the ScanResponse, with
``cells_per_result`` saying how many belong to each row. Each cell is written by
``KeyValueUtil.oswrite`` without tags::

    int32 total (= 8 + key length + value length)
    int32 key length, int32 value length
    key:   int16 row length, row, int8 family length, family, qualifier, int64 timestamp, int8 type
    value

:func:`rows_of` reads the newest value per column (what a scan returns), :func:`versions_of`
every version (what a migration copies). Reading a row here is one ``struct`` unpack and three slices, about half of what reading the
same row from protobuf ``Result``/``Cell`` messages costs (each field access builds an object);
a merged scan over 100 buckets spent 44 % of its time on those messages.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["CellBlockError", "UniformCells", "rows_of", "stamps_of", "version_columns", "versions_of"]

_HEAD = struct.Struct(">iiiH").unpack_from  # total, key length, value length, row length


class CellBlockError(ValueError):
    """The block does not hold the cells the response announced."""


def _row_cells(block: bytes, p: int, n: int, names: dict[bytes, bytes]) -> tuple[int, bytes, list[tuple[bytes, int, int]]]:
    """The ``n`` cells of one row starting at byte ``p``: the offset after them, the row, and per
    cell ``(b"family:qualifier", value offset, value length)``; ``names`` caches column names by
    their bytes in the key (family length, family, qualifier)."""
    found = []
    row = b""
    for _ in range(n):
        total, klen, vlen, rlen = _HEAD(block, p)
        r0 = p + 14
        f0 = r0 + rlen
        v0 = p + 12 + klen
        fq = block[f0 : v0 - 9]
        col = names.get(fq)
        if col is None:
            col = names[fq] = fq[1 : 1 + fq[0]] + b":" + fq[1 + fq[0] :]
        found.append((col, v0, vlen))
        row = row or block[r0:f0]
        p += 4 + total
    return p, row, found


def rows_of(block: bytes, counts: Sequence[int]) -> tuple[list[bytes], list[dict[bytes, bytes]]]:
    """The rows of a block as columns: row keys and, row for row, ``{b"family:qualifier": value}``
    (``counts``: cells per result; results without cells are skipped), the first cell of a
    column winning as in :func:`keyshape.store.hbase.client.cells_of` (newest first)."""
    if len(counts) >= 8 and len(block) >= 14 and 0 not in counts and sum(counts) == len(counts):
        same = _uniform(block, len(counts))
        if same is not None:
            return same
    rows: list[bytes] = []
    out: list[dict[bytes, bytes]] = []
    add_row, append = rows.append, out.append
    names: dict[bytes, bytes] = {}  # family-length byte + family + qualifier -> b"family:qualifier"
    p = 0
    try:
        for n in counts:
            if n == 1:  # the usual row of one cell: _row_cells inlined (no call, no list per row)
                total, klen, vlen, rlen = _HEAD(block, p)
                r0 = p + 14
                f0 = r0 + rlen
                v0 = p + 12 + klen
                fq = block[f0 : v0 - 9]
                col = names.get(fq)
                if col is None:
                    col = names[fq] = fq[1 : 1 + fq[0]] + b":" + fq[1 + fq[0] :]
                add_row(block[r0:f0])
                append({col: block[v0 : v0 + vlen]})
                p += 4 + total
            elif n:
                p, row, found = _row_cells(block, p, n, names)
                cells: dict[bytes, bytes] = {}
                for col, v0, vlen in found:
                    if col not in cells:
                        cells[col] = block[v0 : v0 + vlen]
                add_row(row)
                append(cells)
    except (struct.error, IndexError) as exc:
        raise CellBlockError(f"a cell block ended inside a cell at byte {p} of {len(block)}") from exc
    if p != len(block):
        raise CellBlockError(f"a cell block holds {len(block) - p} bytes after the cells its response announced")
    return rows, out


_TS = struct.Struct(">q").unpack_from


def _uniform(block: bytes, n: int) -> tuple[list[bytes], list[dict[bytes, bytes]]] | None:
    """:func:`rows_of` for ``n`` one-cell rows that all have the first cell's layout (the same
    key, row and value lengths and the same column: fixed-width keys, one fixed-size cell, as
    most salted tables hold), read by stride; None when they do not. The layout is checked over
    every cell at once (numpy), then rows and values are sliced at fixed offsets."""
    total, klen, vlen, rlen = _HEAD(block, 0)
    stride = 4 + total
    if stride * n != len(block) or klen < rlen + 12:  # row length, row, family length, ts, type
        return None
    f0 = 14 + rlen
    q_end = 12 + klen - 9
    m = np.frombuffer(block, dtype=np.uint8).reshape(n, stride)
    if not ((m[:, :14] == m[0, :14]).all() and (m[:, f0:q_end] == m[0, f0:q_end]).all()):
        return None
    fq = block[f0:q_end]
    flen = fq[0]
    if flen + 1 > len(fq):
        return None
    col = fq[1 : 1 + flen] + b":" + fq[1 + flen :]
    v0 = 12 + klen
    size = len(block)  # = n * stride; an empty value of the last cell starts AT the end
    return ([block[o : o + rlen] for o in range(14, size, stride)], [{col: block[o : o + vlen]} for o in range(v0, v0 + size, stride)])


def versions_of(block: bytes, counts: Iterable[int]) -> tuple[list[bytes], list[dict[bytes, list[tuple[int, bytes]]]]]:
    """Row keys and, per row, ``{b"family:qualifier": [(timestamp_ms, value), ...]}``: every
    version in the order sent (newest first), as :func:`keyshape.store.hbase.scan.versions_of`
    reads them from protobuf."""
    keys: list[bytes] = []
    out: list[dict[bytes, list[tuple[int, bytes]]]] = []
    names: dict[bytes, bytes] = {}
    p = 0
    try:
        for n in counts:
            if not n:
                continue
            p, row, found = _row_cells(block, p, n, names)
            versions: dict[bytes, list[tuple[int, bytes]]] = {}
            for col, v0, vlen in found:
                versions.setdefault(col, []).append((_TS(block, v0 - 9)[0], block[v0 : v0 + vlen]))
            keys.append(row)
            out.append(versions)
    except (struct.error, IndexError) as exc:
        raise CellBlockError(f"a cell block ended inside a cell at byte {p} of {len(block)}") from exc
    if p != len(block):
        raise CellBlockError(f"a cell block holds {len(block) - p} bytes after the cells its response announced")
    return keys, out


def stamps_of(block: bytes, counts: Iterable[int]) -> tuple[list[bytes], list[int]]:
    """Row keys and, row for row, the timestamp (ms) of the row's first cell: what a key-only
    scan (FirstKeyOnlyFilter) returns, the newest version of the row's first column, i.e. when
    a row written once was written (:func:`keyshape.store.hbase.scan.stamp_of` from protobuf)."""
    keys: list[bytes] = []
    stamps: list[int] = []
    p = 0
    try:
        for n in counts:
            if not n:
                continue
            total, klen, _vlen, rlen = _HEAD(block, p)
            keys.append(block[p + 14 : p + 14 + rlen])
            stamps.append(_TS(block, p + 12 + klen - 9)[0])
            p += 4 + total
            for _ in range(n - 1):
                p += 4 + _HEAD(block, p)[0]
    except (struct.error, IndexError) as exc:
        raise CellBlockError(f"a cell block ended inside a cell at byte {p} of {len(block)}") from exc
    if p != len(block):
        raise CellBlockError(f"a cell block holds {len(block) - p} bytes after the cells its response announced")
    return keys, stamps


@dataclass(frozen=True)
class UniformCells:
    """The cells of a block of one-cell rows all of one layout, as columns: every row's one
    cell has ``family``:``qualifier``, type Put, and a value of one length. ``rows`` and
    ``values``: ``(n, length)`` uint8 arrays; ``timestamps``: int64 (ms)."""

    family: bytes
    qualifier: bytes
    rows: np.ndarray
    timestamps: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.timestamps)

    def versions(self) -> list[dict[bytes, list[tuple[int, bytes]]]]:
        """The rows as :func:`versions_of` gives them (the same values, for a fallback)."""
        column = self.family + b":" + self.qualifier
        return [{column: [(int(ts), value.tobytes())]} for ts, value in zip(self.timestamps, self.values)]


_PUT = 4


def version_columns(block: bytes, counts: Sequence[int]) -> tuple[list[bytes], UniformCells | list[dict[bytes, list[tuple[int, bytes]]]]]:
    """:func:`versions_of` for a copy: a block of one-cell rows all of one layout (fixed-width
    keys, one fixed-size Put cell per row, as most salted tables hold) as
    :class:`UniformCells` columns, read by stride with numpy (no dict or tuple per row); any
    other block as :func:`versions_of` reads it (row keys are always a list of bytes)."""
    n = len(counts)
    if n >= 2 and len(block) >= 14 and sum(counts) == n and 0 not in counts:
        total, klen, vlen, rlen = _HEAD(block, 0)
        stride = 4 + total
        if stride * n == len(block) and klen >= rlen + 12 and total == 8 + klen + vlen:
            f0, t0 = 14 + rlen, 12 + klen - 9
            m = np.frombuffer(block, dtype=np.uint8).reshape(n, stride)
            flen = block[f0]
            if f0 + 1 + flen <= t0 and (m[:, :14] == m[0, :14]).all() and (m[:, f0:t0] == m[0, f0:t0]).all() and (m[:, t0 + 8] == _PUT).all():
                rows = m[:, 14:f0]
                return [block[o : o + rlen] for o in range(14, len(block), stride)], UniformCells(
                    family=block[f0 + 1 : f0 + 1 + flen],
                    qualifier=block[f0 + 1 + flen : t0],
                    rows=rows,
                    timestamps=m[:, t0 : t0 + 8].copy().view(">i8").reshape(n).astype(np.int64),
                    values=m[:, 12 + klen : 12 + klen + vlen],
                )
    return versions_of(block, counts)
