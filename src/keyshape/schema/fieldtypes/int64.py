"""``int64``: a Java long.

Encodings: ``ordered`` (the default: OrderedBytes FixedInt64, 9 bytes), ``hbase`` (8 bytes) and
``text`` (zero-padded decimal, ``width`` digits, default 19; with ``truncate = "keep-last"`` the
last ``width`` digits, e.g. an order number's). ``desc`` writes ``Long.MAX_VALUE - v`` (hbase,
text) or OrderedBytes DESCENDING.
"""

from __future__ import annotations

import pyarrow as pa

from keyshape.core import hbytes
from keyshape.schema.fieldtypes.families import IntegerType

__all__ = ["Int64Type"]


class Int64Type(IntegerType):
    name = "int64"
    encodings = ("ordered", "hbase", "text")
    min, max = -(2**63), hbytes.MAX_LONG
    text_digits = 19
    widths = {"ordered": 9, "hbase": 8}
    native_codes = {"text": 2, "hbase": 4}  # K_DIGITS, K_INT64
    arrow_type = pa.int64()
    column_dtype = "int64"
