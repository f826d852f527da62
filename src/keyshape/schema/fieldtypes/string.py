"""``string``: text, UTF-8 in the key.

Encodings: ``text`` (the default; ``hbase`` is a synonym: ``Bytes.toBytes(String)`` is UTF-8) and
``ordered`` (OrderedBytes TEXT: 0x34 + UTF-8 + 0x00, self-delimiting). A ``width`` pads (``pad_char``,
default ``"0"``, on the left) or cuts (``truncate = "keep-last"``); ``desc`` inverts every byte.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from keyshape.core import ordered
from keyshape.schema.fieldtypes.families import TextType

__all__ = ["StringType"]


class StringType(TextType):
    name = "string"
    encodings = ("text", "hbase", "ordered")
    utf8_text = True
    ordered_bytes = staticmethod(ordered.encode_string)
    uuid_values = "text"
    uuid_by_default = True  # a field without a width (a fixed width is given its own ids)
    native_codes = {"text": 0, "hbase": 0}  # K_STR
    arrow_type = pa.string()
    column_dtype = "str"

    def coerce(self, spec: Any, value: Any) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, (bytes, bytearray)):
            return bytes(value).decode("utf-8")
        return str(value)
