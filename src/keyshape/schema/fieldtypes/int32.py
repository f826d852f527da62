"""``int32``: a Java int.

Encodings: ``ordered`` (the default: OrderedBytes FixedInt32, 5 bytes, sorts negatives),
``hbase`` (``Bytes.toBytes(int)``, 4 bytes) and ``text`` (zero-padded decimal, ``width`` digits,
default 10). ``desc`` writes ``Integer.MAX_VALUE - v`` (hbase, text) or OrderedBytes DESCENDING.
"""

from __future__ import annotations

import pyarrow as pa

from keyshape.core import hbytes, ordered
from keyshape.schema.fieldtypes.families import IntegerType

__all__ = ["Int32Type"]


class Int32Type(IntegerType):
    name = "int32"
    encodings = ("ordered", "hbase", "text")
    hbase_bytes, hbase_dtype = staticmethod(hbytes.int32), ">i4"
    hbase_struct = ">i"
    ordered_bytes, ordered_many = staticmethod(ordered.encode_int32), staticmethod(ordered.encode_int32_many)
    range_fix = "an int32 cannot hold it: use type = 'int64'"
    min, max = -(2**31), 2**31 - 1
    text_digits = 10
    widths = {"ordered": 5, "hbase": 4}
    native_codes = {"text": 2, "hbase": 3}  # K_DIGITS, K_INT32
    arrow_type = pa.int64()
    column_dtype = "int64"
