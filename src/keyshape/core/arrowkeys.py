"""Arrow arrays of row keys <-> :class:`~keyshape.core.keyarray.KeyArray`, without a Python object
per key.

An Arrow binary array is a data buffer (every key back to back) plus ``n + 1`` offsets; a KeyArray
is a zero-padded ``(n, width)`` matrix plus lengths. Both directions are a few numpy passes over
the buffers: when every key has the same length (the usual case for designed row keys) the data
buffer already *is* the matrix, and reading it is zero-copy.

Text columns (CSV, or string columns in Parquet) hold keys in HBase's ``toStringBinary`` form by
default. Text without a backslash is its own byte form, so only columns that contain ``\\`` escapes
are decoded key by key.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from keyshape.core import hbytes
from keyshape.core.keyarray import KeyArray
from keyshape.errors import BadInput

__all__ = ["KEY_FORMATS", "from_arrow", "to_arrow"]

KEY_FORMATS = ("binary", "raw", "hex")


def from_arrow(array: Any, key_format: str = "binary") -> KeyArray:
    """The row keys of the pyarrow ``array`` (or a one-chunk ChunkedArray) as a KeyArray.

    Binary, large binary and fixed-size binary arrays are taken byte for byte. String arrays are
    read per ``key_format``: ``"binary"`` (``toStringBinary`` text, ``\\xNN`` escapes), ``"raw"``
    (the UTF-8 bytes) or ``"hex"``. Nulls are refused: a row without a key cannot be placed.
    """
    import pyarrow as pa

    if key_format not in KEY_FORMATS:
        raise BadInput(f"unknown key_format {key_format!r}; use one of {', '.join(KEY_FORMATS)}")
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    if array.null_count:
        raise BadInput(f"the key column has {array.null_count} null value(s); every row needs a key")
    t = array.type
    if pa.types.is_fixed_size_binary(t):
        width = t.byte_width
        data = np.frombuffer(array.buffers()[1], dtype=np.uint8)
        matrix = data[array.offset * width : (array.offset + len(array)) * width]
        return KeyArray(matrix.reshape(len(array), width))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return KeyArray.from_offsets(array)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        import pyarrow.compute as pc  # here only: 20-40 ms to import, binary keys never need it

        if key_format == "raw" or (key_format == "binary" and not pc.any(pc.match_substring(array, "\\")).as_py()):
            return KeyArray.from_offsets(array)
        values = array.to_pylist()
        if key_format == "binary":
            return KeyArray.from_keys([hbytes.to_bytes_binary(v) for v in values])
        try:
            return KeyArray.from_keys([bytes.fromhex(v) for v in values])
        except ValueError as exc:
            raise BadInput(f"the key column is not hex text ({exc}); use key_format binary or raw") from None
    raise BadInput(f"a key column must be binary or text, got Arrow type {t}")


def to_arrow(keys: KeyArray) -> Any:
    """The ``keys`` of a KeyArray as a pyarrow ``binary`` array (two buffers, no Python per key)."""
    import pyarrow as pa

    n = len(keys)
    lengths = keys.lengths
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if keys.is_fixed:
        data = np.ascontiguousarray(keys.matrix).reshape(-1)
    else:
        data = keys.matrix[np.arange(keys.width)[None, :] < lengths[:, None]]  # row-major
    total = int(offsets[-1])
    if total >= 2**31 - 1:
        return pa.LargeBinaryArray.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return pa.BinaryArray.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])
