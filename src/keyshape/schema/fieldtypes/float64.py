"""``float64``: a Java double.

Encodings: ``ordered`` (the default: OrderedBytes FixedFloat64, 9 bytes, sorts every value) and
``hbase`` (``Bytes.toBytes(double)``, 8 bytes; ``desc`` is not defined for it).
"""

from __future__ import annotations

import pyarrow as pa

from keyshape.schema.fieldtypes.base import FieldType

__all__ = ["Float64Type"]


class Float64Type(FieldType):
    name = "float64"
    encodings = ("ordered", "hbase")
    numeric = True
    widths = {"ordered": 9, "hbase": 8}
    native_codes = {"hbase": 5}  # K_FLOAT64
    arrow_type = pa.float64()
    column_dtype = "float64"
