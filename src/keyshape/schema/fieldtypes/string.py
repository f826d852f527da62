"""``string``: text, UTF-8 in the key.

Encodings: ``text`` (the default; ``hbase`` is a synonym: ``Bytes.toBytes(String)`` is UTF-8) and
``ordered`` (OrderedBytes TEXT: 0x34 + UTF-8 + 0x00, self-delimiting). A ``width`` pads (``pad_char``,
default ``"0"``, on the left) or cuts (``truncate = "keep-last"``); ``desc`` inverts every byte.
"""

from __future__ import annotations

import pyarrow as pa

from keyshape.schema.fieldtypes.base import FieldType

__all__ = ["StringType"]


class StringType(FieldType):
    name = "string"
    encodings = ("text", "hbase", "ordered")
    text_like = True
    uuid_values = "text"
    uuid_by_default = True  # a field without a width (a fixed width is given its own ids)
    native_codes = {"text": 0, "hbase": 0}  # K_STR
    arrow_type = pa.string()
    column_dtype = "str"
