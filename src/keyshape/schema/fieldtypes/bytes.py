"""``bytes``: raw bytes.

Encodings: ``hbase`` (the default: the bytes unchanged) and ``ordered`` (OrderedBytes BlobVar,
self-delimiting; like HBase's it sorts exactly only among values of equal length). A ``width``
takes values of exactly that many bytes by default (``pad = "none"``) or pads with ``pad_char``
(default 0x00).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from keyshape.core import hbytes
from keyshape.schema.fieldtypes.families import TextType

__all__ = ["BytesType"]


class BytesType(TextType):
    name = "bytes"
    encodings = ("hbase", "ordered")
    pad_encoding = "latin-1"  # a pad_char is one byte
    uuid_values = "bytes"
    uuid_by_default = True  # a field without a width (a fixed width is given its own ids)
    native_codes = {"hbase": 1}  # K_BYTES
    arrow_type = pa.binary()
    default_pad = "none"
    default_pad_char = "\x00"

    def coerce(self, spec: Any, value: Any) -> bytes:
        if isinstance(value, str):
            return hbytes.to_bytes_binary(value)  # toStringBinary text
        return bytes(value)
