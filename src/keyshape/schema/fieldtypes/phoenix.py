"""Phoenix primary-key columns as field types, so a plain :class:`~keyshape.schema.layout.KeyLayout`
(fields joined by no separator, Phoenix's salt as its ``phoenix`` prefix) is a Phoenix table's key.

Phoenix 5.2 (``PTableImpl.newKey`` writes, ``RowKeySchema.next`` reads) lays each PK column out as:

* fixed width: exactly its width, no separator;
* variable width: its bytes, then a separator unless it is the last column written: ``0x00``, or
  ``0xFF`` after a non-null DESC value (tables that are row-key-order optimizable, i.e. created by
  Phoenix 4.5 or later); a non-null DESC value that is the last one written keeps its ``0xFF``.

Trailing NULLs are not written (nor the ``0x00`` they would leave), a NULL in the middle is an empty
value plus its ``0x00``. :class:`PhoenixColumnType` holds those rules for one column: its field's
bytes are the value's bytes plus the separator after them (a field finds its own end), and as the
last field's type it trims the trailing NULLs (:meth:`FieldType.key_tail`).

The value codec of each Phoenix type (its bytes, DESC inversion, CHAR padding, index columns)
stays with the table's key (``keyshape.phoenix.key.PhoenixKey.column_bytes`` and
``column_value``, given as ``key``), which this layer does not import; a column type also carries
the facts of the nearest keyshape type (``nearest``: int64 for BIGINT, string for VARCHAR ...), so
workloads and columns of decoded values work as for any field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import KeyshapeError
from keyshape.schema.fieldtypes.base import FieldType

__all__ = ["PhoenixColumnType"]

# The facts of the nearest keyshape type a Phoenix column keeps (workload generators, decoded columns).
_FACTS = (
    "encodings",
    "integer",
    "numeric",
    "text_like",
    "min",
    "max",
    "text_digits",
    "arrow_type",
    "column_dtype",
    "default_pad",
    "default_pad_char",
    "uuid_values",
    "uuid_by_default",
)
_SEPARATOR, _DESC_SEPARATOR = b"\x00", b"\xff"


class PhoenixColumnType(FieldType):
    """The field type of PK column ``index`` of a Phoenix key ``key`` (one per column, not registered:
    a Phoenix table's loader makes them; see the module docstring)."""

    own_codec = True
    shapes_key_tail = True

    def __init__(self, nearest: FieldType, key: Any, index: int) -> None:
        for fact in _FACTS:
            setattr(self, fact, getattr(nearest, fact))
        self.nearest, self.key, self.index = nearest, key, index
        self.column = key.columns[index]
        self.fixed = bool(self.column.type.fixed)
        self.last = index == len(key.columns) - 1
        # SchemaUtil.getSeparatorByte: 0xFF after a non-null DESC value of an optimizable table
        self.desc_separator = bool(key.row_key_order_optimizable and self.column.desc)

    def __repr__(self) -> str:
        return f"<field type phoenix {self.column.type.sql}{' DESC' if self.column.desc else ''}>"

    def fixed_width(self, encoding: str, width: int | None) -> int | None:
        return int(self.column.type.width) if self.fixed else None

    def coerce(self, spec: Any, value: Any) -> Any:
        return value  # Phoenix's own values (Decimal, PhoenixTimestamp, None for NULL) pass as given

    def encode_value(self, spec: Any, value: Any) -> bytes:
        """The column's bytes in the key (b"" for NULL) and the separator written after them."""
        data: bytes = self.key.column_bytes(self.column, value)
        if not data and not self.column.nullable:
            raise KeyshapeError(f"column {self.column.name} may not be null (it is NOT NULL, or fixed width); give a value for it")
        if self.fixed:
            return data
        if data and self.desc_separator:
            return data + _DESC_SEPARATOR
        return data if self.last else data + _SEPARATOR

    def _absent(self, part: bytes) -> bool:
        # a NULL: nothing (the last column) or its lone 0x00 (a non-null value is at least one byte more)
        return not self.fixed and part == (b"" if self.last else _SEPARATOR)

    def key_tail(self, fields: Sequence[Any], parts: list[bytes]) -> list[bytes]:
        """Trailing NULLs are not written, nor the ``0x00`` after the last value written (a DESC
        value's ``0xFF`` stays; an index of a MULTI_TENANT table keeps the tenant id's separator)."""
        count = len(parts)
        while count and _column(fields[count - 1])._absent(parts[count - 1]):
            count -= 1
        if count == len(parts) or count == 0:
            return parts[:count]
        out = parts[:count]
        kept = bool(self.key.tenant_index) and count == 1 and len(parts) > 1
        if not _column(fields[count - 1]).fixed and out[-1].endswith(_SEPARATOR) and not kept:
            out[-1] = out[-1][:-1]
        return out

    def read(self, key: bytes, pos: int) -> tuple[Any, int]:
        """The column's value at ``pos`` of ``key`` (None past the end: a trailing NULL) and where
        the next column starts, as ``RowKeySchema.next`` walks it."""
        end, c = len(key), self.column
        if pos >= end:
            return None, pos
        if self.fixed:
            width = int(c.type.width)
            if end - pos < width:
                raise KeyshapeError(f"key '{to_string_binary(key)}' ends inside column {c.name} ({c.type.sql} takes {width} bytes)")
            return self.key.column_value(c, key[pos : pos + width]), pos + width
        if self.last:
            stop = end - (1 if self.desc_separator else 0)
            return self.key.column_value(c, key[pos:stop]), end
        stop = pos
        if key[pos] != 0:  # a NULL is its 0x00 alone
            found = key.find(_DESC_SEPARATOR if self.desc_separator else _SEPARATOR, pos)
            stop = end if found < 0 else found
        return self.key.column_value(c, key[pos:stop]), min(stop + 1, end)


def _column(spec: Any) -> PhoenixColumnType:
    ftype = spec.ftype
    assert isinstance(ftype, PhoenixColumnType), f"{spec.name}: a Phoenix key's fields are all Phoenix columns"
    return ftype
