"""``uuid``: a UUID, given and returned as its canonical text (``UUID.toString()``:
``8-4-4-4-12`` lower-case hex digits).

Encodings:

* ``hbase`` (the default): its 16 bytes, most significant first — what Java writes with
  ``ByteBuffer.allocate(16).putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits())``
  and Python's ``uuid.UUID(...).bytes``; byte order is the canonical text's order.
* ``text``: the 36 characters of ``UUID.toString()`` (lower case, what a Java writer gets from
  ``Bytes.toBytes(uuid.toString())``). A key is read back only in that form: upper case or
  another spelling is not a key this field writes.

``order = "desc"`` inverts every byte (newest-first ids sort first when they are time-ordered,
as UUIDv7 is). A value may be given as a ``uuid.UUID``, as any text ``uuid.UUID`` reads (upper
case, braces, ``urn:uuid:``, no dashes), or as 16 bytes.

The type brings its own codec (:attr:`FieldType.own_codec`): the compiled encoder and decoder
call it; the C reader and the vector batch decoder leave its keys to Python.
"""

from __future__ import annotations

import uuid as _uuid
from typing import Any

import pyarrow as pa

from keyshape.errors import KeyshapeError
from keyshape.schema.fieldtypes.base import FieldType

__all__ = ["UuidType"]

_INVERT = bytes(range(255, -1, -1))


class UuidType(FieldType):
    name = "uuid"
    encodings = ("hbase", "text")
    widths = {"hbase": 16, "text": 36}
    arrow_type = pa.string()
    column_dtype = "str"
    uuid_values = "text"
    uuid_by_default = True
    own_codec = True

    def coerce(self, spec: Any, value: Any) -> str:
        if isinstance(value, _uuid.UUID):
            return str(value)
        if isinstance(value, (bytes, bytearray)) and len(value) == 16:
            return str(_uuid.UUID(bytes=bytes(value)))
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode("ascii", "replace")
        if isinstance(value, str):
            try:
                return str(_uuid.UUID(value.strip()))
            except ValueError:
                pass
        raise KeyshapeError(f"field {spec.name!r} is uuid; cannot use {value!r}; give a UUID like 123e4567-e89b-12d3-a456-426614174000")

    def encode_value(self, spec: Any, value: Any) -> bytes:
        raw = _uuid.UUID(value).bytes if spec.encoding == "hbase" else value.encode("ascii")
        return raw.translate(_INVERT) if spec.descending else raw

    def decode_value(self, spec: Any, raw: bytes) -> str:
        if spec.descending:
            raw = raw.translate(_INVERT)
        if spec.encoding == "hbase":
            if len(raw) != 16:
                raise KeyshapeError(f"field {spec.name!r}: {len(raw)} bytes are not a 16-byte UUID")
            return str(_uuid.UUID(bytes=raw))
        text = raw.decode("ascii", "replace")
        try:
            canonical = str(_uuid.UUID(text)) if len(raw) == 36 else ""
        except ValueError:
            canonical = ""
        if canonical != text:
            raise KeyshapeError(f"field {spec.name!r}: {raw!r} is not a UUID in its canonical text (36 lower-case characters 8-4-4-4-12)")
        return text
