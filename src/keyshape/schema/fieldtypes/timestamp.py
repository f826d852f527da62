"""``timestamp``: milliseconds since the epoch (0 up to ``Long.MAX_VALUE``).

Encodings: ``hbase`` (the default: ``Bytes.toBytes(long)``, 8 bytes, what Java writers put in keys,
order-preserving for these non-negative values), ``ordered`` (9 bytes) and ``text`` (19 digits).
``desc`` writes ``Long.MAX_VALUE - ts``, the classic reverse timestamp. Values may be given as
ints, ``datetime`` or ISO-8601 text.
"""

from __future__ import annotations

import pyarrow as pa

from keyshape.core import hbytes
from keyshape.schema.fieldtypes.base import FieldType

__all__ = ["TimestampType"]


class TimestampType(FieldType):
    name = "timestamp"
    encodings = ("hbase", "ordered", "text")
    integer = numeric = True
    min, max = 0, hbytes.MAX_LONG
    text_digits = 19
    widths = {"ordered": 9, "hbase": 8}
    native_codes = {"text": 2, "hbase": 4}  # K_DIGITS, K_INT64
    arrow_type = pa.int64()
    column_dtype = "int64"
