"""``bytes``: raw bytes.

Encodings: ``hbase`` (the default: the bytes unchanged) and ``ordered`` (OrderedBytes BlobVar,
self-delimiting; like HBase's it sorts exactly only among values of equal length). A ``width``
takes values of exactly that many bytes by default (``pad = "none"``) or pads with ``pad_char``
(default 0x00).
"""

from __future__ import annotations

import pyarrow as pa

from keyshape.schema.fieldtypes.base import FieldType

__all__ = ["BytesType"]


class BytesType(FieldType):
    name = "bytes"
    encodings = ("hbase", "ordered")
    text_like = True
    uuid_values = "bytes"
    uuid_by_default = True  # a field without a width (a fixed width is given its own ids)
    native_codes = {"hbase": 1}  # K_BYTES
    arrow_type = pa.binary()
    default_pad = "none"
    default_pad_char = "\x00"
