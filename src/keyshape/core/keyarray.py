"""KeyArray: many row keys held as one zero-padded byte matrix, so batch work stays in numpy.

A list of ``bytes`` costs a Python object per key and a Python step per key for every pass over it.
A :class:`KeyArray` holds ``n`` keys as an ``(n, width)`` uint8 matrix (key ``i`` is
``matrix[i, :lengths[i]]``, every byte after it is 0) plus an int64 ``lengths`` vector. Encoding
(:meth:`keyshape.schema.KeySchema.encode_many` with ``as_array=True``), hashing
(:func:`keyshape.core.hashing.java_bytes_hash_many`) and region assignment
(:meth:`keyshape.core.regions.RegionMap.assign`) all take it directly; :meth:`KeyArray.tolist` gives the
exact ``bytes`` back when they are needed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from keyshape.errors import KeyshapeError

__all__ = ["KeyArray", "zero_past"]


class KeyArray:
    """``n`` row keys as a zero-padded ``(n, width)`` uint8 ``matrix`` and int64 ``lengths``.

    ``lengths`` defaults to ``width`` for every row (fixed-width keys). The caller guarantees the
    padding after each key is zero; the builders here (:meth:`from_keys`, :meth:`concat`,
    :meth:`constant`) always produce it, and the vectorized consumers rely on it.
    """

    __slots__ = ("matrix", "lengths", "_list")

    def __init__(self, matrix: np.ndarray, lengths: np.ndarray | None = None) -> None:
        if not (isinstance(matrix, np.ndarray) and matrix.dtype == np.uint8 and matrix.ndim == 2):
            raise KeyshapeError(
                f"a KeyArray needs a 2-D uint8 matrix (one key per row), got "
                f"{getattr(matrix, 'dtype', type(matrix).__name__)} shape {getattr(matrix, 'shape', '?')}"
            )
        n, width = matrix.shape
        if lengths is None:
            lengths = np.full(n, width, dtype=np.int64)
        else:
            lengths = np.asarray(lengths, dtype=np.int64)
            if lengths.shape != (n,):
                raise KeyshapeError(f"lengths has shape {lengths.shape}; give one length per row ({n})")
        self.matrix = matrix
        self.lengths = lengths
        self._list: list[bytes] | None = None  # the source keys, when built from them

    @classmethod
    def from_keys(cls, keys: Sequence[bytes]) -> KeyArray:
        """The keys of a sequence of ``bytes`` (exact, trailing NUL bytes included)."""
        n = len(keys)
        if n >= 256 and isinstance(keys, list):
            out = cls._from_arrow(keys)
            if out is not None:
                out._list = keys
                return out
        plain = all(type(k) is bytes for k in keys)  # else bytearray, memoryview: copied to bytes
        lengths = np.fromiter(map(len, keys), dtype=np.int64, count=n)
        width = int(lengths.max(initial=0))
        if n == 0 or width == 0:
            out = cls(np.zeros((n, width), dtype=np.uint8), lengths)
        else:
            # numpy copies bytes into an 'S' array in C and pads with NULs; only READING 'S'
            # values strips trailing NULs, and the true lengths are kept beside the matrix.
            rows = keys if plain else [bytes(k) for k in keys]
            out = cls(np.array(rows, dtype=f"S{width}").view(np.uint8).reshape(n, width), lengths)
        out._list = keys if plain and isinstance(keys, list) else None
        return out

    @classmethod
    def _from_arrow(cls, keys: list[bytes]) -> KeyArray | None:
        """:meth:`from_keys` through one pyarrow pass (one buffer plus offsets, in C); keys of
        one length are then a reshape of that buffer. None when pyarrow declines the list."""
        try:
            arr = pa.array(keys, pa.large_binary())
        except (pa.ArrowException, TypeError, ValueError):
            return None
        if arr.null_count:
            return None
        return cls.from_offsets(arr)

    @classmethod
    def from_offsets(cls, arr: pa.Array) -> KeyArray:
        """The values of a pyarrow (large) binary or string array without nulls, exactly."""
        n = len(arr)
        _, off_buf, data_buf = arr.buffers()
        otype = np.int64 if pa.types.is_large_binary(arr.type) or pa.types.is_large_string(arr.type) else np.int32
        offsets = np.frombuffer(off_buf, dtype=otype)[arr.offset : arr.offset + n + 1].astype(np.int64)
        data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
        data = data[int(offsets[0]) : int(offsets[-1])]
        lengths = np.diff(offsets)
        first, last = (int(lengths.min()), int(lengths.max())) if n else (0, 0)
        if first == last:
            return cls(data.reshape(n, first) if first else np.zeros((n, 0), dtype=np.uint8), lengths)
        # One window of the bytes per key (several times faster than a boolean-mask scatter),
        # then each row's bytes past its key, which belong to the next keys, zeroed.
        padded = np.zeros(len(data) + last, dtype=np.uint8)
        padded[: len(data)] = data
        matrix = np.lib.stride_tricks.sliding_window_view(padded, last)[offsets[:-1] - offsets[0]]
        zero_past(matrix, lengths, first)
        return cls(matrix, lengths)

    @classmethod
    def constant(cls, key: bytes, n: int) -> KeyArray:
        """``n`` copies of one key (a read-only broadcast view: no memory per row)."""
        row = np.frombuffer(bytes(key), dtype=np.uint8)
        return cls(np.broadcast_to(row, (n, len(row))))

    @classmethod
    def concat(cls, parts: Sequence[KeyArray]) -> KeyArray:
        """Row ``i`` of the result is row ``i`` of every part joined, in order (``b"".join``)."""
        if not parts:
            raise KeyshapeError("concat needs at least one KeyArray")
        if len(parts) == 1:
            return parts[0]
        n = len(parts[0])
        if any(len(p) != n for p in parts):
            raise KeyshapeError(f"cannot join KeyArrays of different lengths {[len(p) for p in parts]}")
        if all(p.is_fixed for p in parts):
            return cls(np.hstack([p.matrix for p in parts]))
        out = np.zeros((n, sum(p.width for p in parts)), dtype=np.uint8)
        offset: int | np.ndarray = 0  # an int while every row's offset is the same
        rows = np.arange(n)[:, None]
        for p in parts:
            w = p.width
            if w:
                # Each part is written with its zero padding; the next part overwrites that
                # padding, so rows end up exactly joined and zero padded.
                if isinstance(offset, int):
                    out[:, offset : offset + w] = p.matrix
                else:
                    out[rows, offset[:, None] + np.arange(w)] = p.matrix
            offset = offset + w if isinstance(offset, int) and p.is_fixed else offset + p.lengths
        lengths = np.full(n, offset, dtype=np.int64) if isinstance(offset, int) else offset
        return cls(out, lengths)

    @classmethod
    def concat_rows(cls, parts: Sequence[KeyArray]) -> KeyArray:
        """The rows of every part, one part after the other (matrices widened with zeros)."""
        width = max(p.width for p in parts)
        matrix = np.zeros((sum(len(p) for p in parts), width), dtype=np.uint8)
        at = 0
        for p in parts:
            matrix[at : at + len(p), : p.width] = p.matrix
            at += len(p)
        return cls(matrix, np.concatenate([p.lengths for p in parts]))

    @property
    def width(self) -> int:
        """Columns of the matrix: the longest key's length or more."""
        return int(self.matrix.shape[1])

    @property
    def is_fixed(self) -> bool:
        """True when every key is exactly ``width`` bytes."""
        return bool(np.all(self.lengths == self.width))

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    def __getitem__(self, index: slice) -> KeyArray:
        """Rows ``index`` (a slice) as a KeyArray sharing this one's memory."""
        if not isinstance(index, slice):
            raise TypeError("index a KeyArray with a slice; use tolist() for single keys")
        return KeyArray(self.matrix[index], self.lengths[index])

    def __repr__(self) -> str:
        return f"KeyArray({len(self)} keys, width {self.width})"

    def tolist(self) -> list[bytes]:
        """The keys as a list of exact ``bytes``."""
        if self._list is not None:
            return self._list
        n, w = self.matrix.shape
        raw = np.ascontiguousarray(self.matrix).tobytes()
        if self.is_fixed:
            return [raw[i : i + w] for i in range(0, n * w, w)] if w else [b""] * n
        return [raw[s : s + k] for s, k in zip(range(0, n * w, w), self.lengths.tolist())]


def zero_past(rows: np.ndarray, lengths: np.ndarray, lo: int) -> None:
    """Zero each row of the matrix ``rows`` from its length in ``lengths`` on, in place (every row
    is at least ``lo`` long). Column by
    column when few columns can hold such bytes: a masked multiply over a narrow slice of wide
    rows pays numpy's per-row step for a handful of bytes."""
    width = rows.shape[1]
    if width - lo <= 24:
        for c in range(lo, width):
            rows[:, c] *= lengths > c
    else:
        rows[:, lo:] *= np.arange(lo, width)[None, :] < lengths[:, None]
