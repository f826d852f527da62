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

import struct
from collections.abc import Callable, Sequence
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
    null_when_absent = True  # a column left out of a record is NULL, as Phoenix's UPSERT leaves it
    exact_decode = False  # a DESC DECIMAL written ASC reads as another number; see read_value
    native_phoenix = True
    # decoded columns are lists of Phoenix's values (None for NULL, Decimal ...), Arrow's type inferred
    column_dtype, arrow_type = None, None

    def __init__(self, nearest: FieldType, key: Any, index: int, read_value: Callable[[Any], Any] | None = None) -> None:
        """``nearest``: the keyshape type whose facts the column keeps; ``key``: the table's
        ``PhoenixKey``; ``index``: the column's place in it; ``read_value``: what a decoded value
        becomes (default: Phoenix's value as it is; the key schema reads a TIMESTAMP as milliseconds)."""
        for fact in _FACTS:
            setattr(self, fact, getattr(nearest, fact))
        self.nearest, self.key, self.index = nearest, key, index
        self.read_value = read_value
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
            raise self.key.key_error(f"column {self.column.name} may not be null (it is NOT NULL, or fixed width); give a value for it")
        if self.fixed:
            return data
        if data and self.desc_separator:
            return data + _DESC_SEPARATOR
        return data if self.last else data + _SEPARATOR

    def encode_lines(self, spec: Any, i: int, env: dict[str, Any]) -> list[str] | None:
        """The compiled lines of the plain values of VARCHAR, CHAR, BINARY, VARBINARY, BOOLEAN,
        the integer types, DATE and TIME (a str, bytes, bool or int in range): the column's bytes
        and its separator in one expression; anything else (a NULL, a numpy value, a DECIMAL, a
        value out of range or too long) goes to :meth:`encode_value`, which words the refusal."""
        c = self.column
        if c.pad_to is not None or c.tenant_ascending or c.data_type is not None:
            return None
        compiled = _plain_value(f"v{i}", c.type.name, c.type.length, c.type.width)
        if compiled is None:
            return None
        guard, expr = compiled
        for name, fmt in _PACKERS.items():
            env[name] = struct.Struct(fmt).pack
        env["_INVERT"] = _INVERT
        if c.desc:
            expr = f"{expr}.translate(_INVERT)"
        if not self.fixed and self.desc_separator:
            expr += " + b'\\xff'"
        elif not self.fixed and not self.last:
            expr += " + b'\\x00'"
        return [f"    if {guard}:", f"        p{i} = {expr}", "    else:", f"        p{i} = F{i}.encode(v{i})"]

    def decode_value(self, spec: Any, raw: bytes) -> Any:
        """The value of a fixed-width column's bytes ``raw`` (exactly its width)."""
        return self._read(raw)

    def _read(self, data: bytes) -> Any:
        value = self.key.column_value(self.column, data)
        return value if self.read_value is None or value is None else self.read_value(value)

    def native_spec(self, spec: Any, plan: Any, check: bool) -> tuple[Any, ...] | None:
        """The C reader's Phoenix-mode tuple of VARCHAR, CHAR and integer columns (kind, width,
        plan, pad, pad_left, desc, max, lo, hi, domain, term, signed); None for other types."""
        c, desc = self.column, self.column.desc
        t = c.type
        if c.pad_to is not None or c.tenant_ascending:
            return None
        if t.name == "VARCHAR":  # a DESC value ends at 0xFF, the last one with a 0xFF
            term, end = (-1, 1 if self.desc_separator else 0) if self.last else (255 if self.desc_separator else 0, -1)
            return (0, -1, end, b"", False, desc, 0, 0, 0, False, term, False)
        if t.name == "CHAR" and t.width:
            return (0, t.width, 0, b" ", False, desc, 0, 0, 0, False, -1, False)
        bits = _INTEGERS.get(t.name)
        if bits is not None and t.fixed:
            return (6, bits // 8, 0, b"", False, desc, 0, 0, 0, False, -1, t.name in _SIGNED_INTEGERS)  # K_PINT
        return None

    def _absent(self, part: bytes) -> bool:
        # a NULL: nothing (the last column) or its lone 0x00 (a non-null value is at least one byte more)
        return not self.fixed and part == (b"" if self.last else _SEPARATOR)

    def key_tail(self, fields: Sequence[Any], parts: list[bytes]) -> list[bytes]:
        """Trailing NULLs are not written, nor the ``0x00`` after the last value written (a DESC
        value's ``0xFF`` stays; an index of a MULTI_TENANT table keeps the tenant id's separator)."""
        if self.fixed or parts[-1]:
            return parts  # the last column holds a value (the common case: nothing to trim)
        count = len(parts)
        while count and _column(fields[count - 1])._absent(parts[count - 1]):
            count -= 1
        if count == 0:
            raise self.key.key_error(f"the primary key may not be null: give at least {fields[0].name}")
        if count == len(parts):
            return parts
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
            return self._read(key[pos : pos + width]), pos + width
        if self.last:
            stop = end - (1 if self.desc_separator else 0)
            return self._read(key[pos:stop]), end
        stop = pos
        if key[pos] != 0:  # a NULL is its 0x00 alone
            found = key.find(_DESC_SEPARATOR if self.desc_separator else _SEPARATOR, pos)
            stop = end if found < 0 else found
        return self._read(key[pos:stop]), min(stop + 1, end)


_INVERT = bytes(range(255, -1, -1))
_PACKERS = {"_pack_B": ">B", "_pack_H": ">H", "_pack_I": ">I", "_pack_Q": ">Q"}
# (struct code, bits) of the integer types stored big-endian with the sign bit flipped, and of the unsigned ones
_SIGNED = {"TINYINT": ("B", 8), "SMALLINT": ("H", 16), "INTEGER": ("I", 32), "BIGINT": ("Q", 64), "DATE": ("Q", 64), "TIME": ("Q", 64)}
_UNSIGNED = {
    "UNSIGNED_TINYINT": ("B", 8),
    "UNSIGNED_SMALLINT": ("H", 16),
    "UNSIGNED_INT": ("I", 32),
    "UNSIGNED_LONG": ("Q", 64),
    "UNSIGNED_DATE": ("Q", 64),
    "UNSIGNED_TIME": ("Q", 64),
}


# the integer types the C reader reads (their bits); dates and times keep their own codecs
_SIGNED_INTEGERS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}
_INTEGERS = {**_SIGNED_INTEGERS, "UNSIGNED_TINYINT": 8, "UNSIGNED_SMALLINT": 16, "UNSIGNED_INT": 32, "UNSIGNED_LONG": 64}


def _plain_value(v: str, type_name: str, length: int | None, width: int | None) -> tuple[str, str] | None:
    """(guard, bytes expression) of the value ``v`` of a column of type ``type_name`` (ASC, no
    separator), or None for a type without compiled lines."""
    if type_name in _SIGNED:
        fmt, bits = _SIGNED[type_name]
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        return (f"type({v}) is int and {low} <= {v} <= {high}", f"_pack_{fmt}(({v} ^ {-(2 ** (bits - 1))}) & {2**bits - 1})")
    if type_name in _UNSIGNED:
        fmt, bits = _UNSIGNED[type_name]
        return f"type({v}) is int and 0 <= {v} <= {2 ** (bits - 1) - 1}", f"_pack_{fmt}({v})"
    if type_name == "BOOLEAN":
        return f"type({v}) is bool", f"(b'\\x01' if {v} else b'\\x00')"
    if type_name == "VARCHAR":
        # VARCHAR(n) counts UTF-16 units: text that may hold a surrogate pair too many goes to
        # encode_value, which counts them
        limit = f" and len({v}) <= {length} and ({v}.isascii() or len({v}) <= {length // 2})" if length is not None else ""
        return f"type({v}) is str and {v}{limit}", f"{v}.encode()"
    if type_name == "CHAR":
        return f"type({v}) is str and {v} and {v}.isascii() and len({v}) <= {width}", f"{v}.encode().ljust({width}, b' ')"
    if type_name == "BINARY":
        return f"type({v}) is bytes and {v} and len({v}) <= {width}", f"{v}.ljust({width}, b'\\x00')"
    if type_name == "VARBINARY":
        return f"type({v}) is bytes and {v}", v
    return None


def _column(spec: Any) -> PhoenixColumnType:
    ftype = spec.ftype
    assert isinstance(ftype, PhoenixColumnType), f"{spec.name}: a Phoenix key's fields are all Phoenix columns"
    return ftype
