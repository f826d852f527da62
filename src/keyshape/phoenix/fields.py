"""Phoenix primary-key columns as key fields: :func:`key_layout` is the plain
:class:`~keyshape.schema.layout.KeyLayout` of a Phoenix table's row key, which every route of a
key schema reads and writes (the compiled encoder and decoder, the C reader, the batch routes):
:class:`~keyshape.phoenix.key.PhoenixKey` compiles its codec from it and
:class:`~keyshape.phoenix.schema.PhoenixKeySchema` is a key schema over it.

Each PK column is a field whose bytes are Phoenix's (:class:`PhoenixColumnType`, its ``ftype``)
and whose ``type`` is the nearest keyshape type, so workloads can be generated (integers ->
int64/int32, FLOAT/DOUBLE/DECIMAL -> float64, DATE/TIME/TIMESTAMP -> timestamp in milliseconds,
CHAR/VARCHAR -> string, BINARY/VARBINARY -> bytes, BOOLEAN -> int32 0/1). The table's key is
given duck-typed (its ``columns``, ``salt_buckets`` and the column codec
``column_bytes``/``column_value``): this module is what ``key.py`` imports, not the reverse.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np

from keyshape.phoenix.types import PhoenixTimestamp, parse_text
from keyshape.schema.fields import FieldSpec
from keyshape.schema.fieldtypes import FieldType, field_type
from keyshape.schema.fieldtypes.phoenix import PhoenixColumnType
from keyshape.schema.layout import KeyLayout
from keyshape.schema.prefixes import make_prefix

__all__ = ["PhoenixFieldSpec", "key_fields", "key_layout", "millis", "phoenix_value"]

_FIELD_TYPE = {
    "TINYINT": "int32",
    "SMALLINT": "int32",
    "INTEGER": "int32",
    "UNSIGNED_TINYINT": "int32",
    "UNSIGNED_SMALLINT": "int32",
    "UNSIGNED_INT": "int32",
    "BIGINT": "int64",
    "UNSIGNED_LONG": "int64",
    "FLOAT": "float64",
    "DOUBLE": "float64",
    "UNSIGNED_FLOAT": "float64",
    "UNSIGNED_DOUBLE": "float64",
    "DECIMAL": "float64",
    "BOOLEAN": "int32",
    "DATE": "timestamp",
    "TIME": "timestamp",
    "TIMESTAMP": "timestamp",
    "UNSIGNED_DATE": "timestamp",
    "UNSIGNED_TIME": "timestamp",
    "UNSIGNED_TIMESTAMP": "timestamp",
    "CHAR": "string",
    "VARCHAR": "string",
    "BINARY": "bytes",
    "VARBINARY": "bytes",
}


@dataclass(frozen=True)
class PhoenixFieldSpec(FieldSpec):
    """A Phoenix PK column as a key field: its ``type`` is the nearest keyshape type (workloads,
    decoded columns), its bytes are Phoenix's (:class:`PhoenixColumnType`, its :attr:`ftype`): the
    column's value, then its separator; a NULL is a value (None)."""

    column_type: PhoenixColumnType | None = field(default=None, compare=False, repr=False)
    #: read a workload's value (numpy scalar, ms timestamp, text) as Phoenix's type takes it
    #: (:func:`phoenix_value`); False: values are Phoenix's own (``PhoenixKey``'s records)
    converts: bool = field(default=True, compare=False, repr=False)

    @property
    def ftype(self) -> FieldType:
        assert self.column_type is not None
        return self.column_type

    @property
    def self_delimiting(self) -> bool:
        return True  # fixed width, or up to its separator, or the end of the key

    def coerce(self, value: Any) -> Any:
        # the nearest keyshape type's reading of a value (a command line's text ...)
        return FieldSpec(self.name, self.type, self.encoding, self.order, self.width).coerce(value)

    def encode(self, value: Any) -> bytes:
        assert self.column_type is not None
        value = phoenix_value(self.column_type.column, value) if self.converts else value
        return self.column_type.encode_value(self, value)

    def decode_at(self, key: bytes, pos: int, end: int | None) -> tuple[Any, int]:
        assert self.column_type is not None
        return self.column_type.read(key, pos)


def _field(key: Any, index: int, read_value: Callable[[Any], Any] | None, converts: bool) -> FieldSpec:
    column = key.columns[index]
    # an index column Phoenix stores as DECIMAL takes the data column's values (timestamps ...)
    kind = _FIELD_TYPE[(column.data_type or column.type).name]
    encoding = {"string": "text", "bytes": "hbase"}.get(kind, "hbase")
    width = column.type.width if kind in ("string", "bytes") else None
    ftype = PhoenixColumnType(field_type(kind), key, index, read_value)
    return PhoenixFieldSpec(column.name, kind, encoding, "desc" if column.desc else "asc", width, column_type=ftype, converts=converts)


def millis(value: Any) -> Any:
    """A decoded value as the key schema gives it: a TIMESTAMP as its milliseconds (the keyshape
    ``timestamp`` type's reading, so the time axis works), anything else as Phoenix reads it."""
    return value.millis if isinstance(value, PhoenixTimestamp) else value


def phoenix_value(column: Any, value: Any) -> Any:
    """A workload value (numpy scalar, ms timestamp ...) as the Python value Phoenix's type takes."""
    if value is None:
        return None
    name = (column.data_type or column.type).name
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str) and name not in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
        # text from a CSV, a command line or keyshape's own output ("2026-11-27 10:00:00.123456789")
        return parse_text(column.data_type or column.type, value)
    if name == "DECIMAL":
        return value if isinstance(value, Decimal) else Decimal(repr(float(value))) if isinstance(value, float) else Decimal(value)
    if name in ("FLOAT", "DOUBLE", "UNSIGNED_FLOAT", "UNSIGNED_DOUBLE"):
        return float(value)
    if name == "BOOLEAN":
        return bool(value)
    if name in ("TIMESTAMP", "UNSIGNED_TIMESTAMP") and isinstance(value, int):
        return PhoenixTimestamp(value)
    if name in ("BINARY", "VARBINARY") and isinstance(value, str):
        return value.encode()
    return value


def key_fields(key: Any, read_value: Callable[[Any], Any] | None = None, converts: bool = True) -> list[FieldSpec]:
    """The fields of Phoenix key ``key``'s PK columns.

    - ``read_value``: what a decoded value becomes (default Phoenix's value as it is; :func:`millis`
      reads a TIMESTAMP as milliseconds).
    - ``converts``: read the values given to encode as a workload's (:func:`phoenix_value`; default
      True); False: they are Phoenix's own, as ``PhoenixKey`` takes them."""
    return [_field(key, i, read_value, converts) for i in range(len(key.columns))]


def key_layout(key: Any, read_value: Callable[[Any], Any] | None = None, name: str = "phoenix", converts: bool = True) -> KeyLayout:
    """The plain layout of Phoenix key ``key``'s row keys: its PK columns as fields
    (:func:`key_fields`), no separator between them, the ``phoenix`` salt prefix when salted, every
    field hashed (the salt is computed from the whole key after it). ``read_value`` and ``converts``
    as in :func:`key_fields`; ``name``: what compiled functions call the layout."""
    fields = key_fields(key, read_value, converts)
    prefix = make_prefix("phoenix", buckets=key.salt_buckets) if key.salt_buckets else make_prefix("none")
    return KeyLayout(tuple(fields), b"", prefix, tuple(f.name for f in fields), name)
