"""A Phoenix table's row key: compose and decode it byte for byte as Phoenix 5.2 does, list its
salted region boundaries and split points, and plan scans for leading primary-key columns.

The layout (``PTableImpl.newKey`` writes it, ``RowKeySchema.next`` reads it)::

    [salt byte, if SALT_BUCKETS] then each PK column in order:
        fixed width:    exactly its width (CHAR padded with spaces, BINARY with 0x00)
        variable width: its bytes, then a separator unless it is the last column written
                        (0x00; 0xFF after a non-null DESC value; a non-null DESC value that is
                        the last one written still gets its 0xFF)

Trailing NULLs are not written at all; a NULL in the middle is an empty value plus its separator.
DESC columns hold the inverted ASC bytes. The salt byte is ``SaltingUtil.getSaltingByte`` over
everything after it (``keyshape.core.hashing.phoenix_salt``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from keyshape.core.hashing import java_bytes_hash, phoenix_salt, phoenix_salt_many
from keyshape.core.hbytes import next_prefix, to_string_binary
from keyshape.errors import KeyshapeError
from keyshape.schema.compiled import encoder_for
from keyshape.schema.compiled_decode import compile_decoder
from keyshape.schema.prefixes import make_prefix
from keyshape.phoenix.types import (
    PhoenixType,
    PhoenixTypeError,
    decimal_digits,
    fraction_digits,
    index_decimal,
    phoenix_type,
)


_BYTE = [bytes((i,)) for i in range(256)]

__all__ = ["PhoenixColumn", "PhoenixKey", "PhoenixKeyError", "process_split"]

SEPARATOR = 0x00
DESC_SEPARATOR = 0xFF


class PhoenixKeyError(KeyshapeError):
    """A record that Phoenix would refuse for this key, or bytes that are not such a key."""


@dataclass(frozen=True)
class PhoenixColumn:
    """One primary-key column: name, Phoenix type, sort order and nullability.

    Phoenix makes a one-column PK NOT NULL, and refuses a nullable fixed-width column in a
    composite PK ("PK columns may not be both fixed width and nullable"); so does :class:`PhoenixKey`.
    """

    name: str
    type: PhoenixType
    desc: bool = False
    nullable: bool = False
    # An index column that Phoenix turned from CHAR(n)/BINARY(n) into VARCHAR/VARBINARY still holds
    # the data table's padded bytes (IndexUtil.getIndexColumnDataType changes the type, not the value).
    pad_to: int | None = None
    # An index column that Phoenix turned from a nullable fixed-width number, date, time or
    # BOOLEAN into DECIMAL: the data column's type. The column takes the data row's values (a
    # float, a PhoenixTimestamp, a bool ...) and stores the DECIMAL Phoenix coerces them to.
    data_type: PhoenixType | None = None
    # An index column from a data DECIMAL(p,s) column in the other sort order: Phoenix takes the
    # data row's bytes (written in the data column's order, data_desc) and inverts them.
    data_desc: bool | None = None
    # The tenant column of a MULTI_TENANT table as a tenant connection (TenantId=) writes and scans
    # it: ScanUtil.getTenantIdBytes takes the value's ASCENDING bytes even when the column is DESC,
    # padded with the DESC pad byte (CHAR 0xDF, BINARY 0xFF), before the DESC separator (0xFF).
    tenant_ascending: bool = False

    @classmethod
    def of(
        cls, name: str, sql_type: str, desc: bool = False, nullable: bool = False, length: int | None = None, scale: int | None = None
    ) -> PhoenixColumn:
        return cls(name, phoenix_type(sql_type, length, scale), desc, nullable)


def _invert(data: bytes) -> bytes:
    return bytes(b ^ 0xFF for b in data)


@dataclass
class PhoenixKey:
    """The row-key format of one Phoenix table (or global index table).

    ``columns`` are the PK columns in PK order (for ``multi_tenant`` tables the first is the tenant
    id); ``salt_buckets`` is SALT_BUCKETS (None: unsalted); ``row_key_order_optimizable`` is False
    only for tables created before Phoenix 4.5 that were never upgraded (DESC variable-width values
    then end in 0x00 instead of 0xFF).
    """

    columns: Sequence[PhoenixColumn]
    salt_buckets: int | None = None
    multi_tenant: bool = False
    row_key_order_optimizable: bool = True
    # A global index of a MULTI_TENANT table: IndexMaintainer.buildRowKey trims trailing NULLs only
    # back to the tenant id it copied from the data row, so a variable-width tenant id keeps its
    # separator when every column after it is NULL ('a' -> 61 00; the data row is 61).
    tenant_index: bool = False
    _names: tuple[str, ...] = field(init=False, repr=False)
    _known: frozenset[str] = field(init=False, repr=False, compare=False)
    _encode_rest: Any = field(init=False, repr=False, compare=False)
    _decode: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.columns = tuple(self.columns)
        if not self.columns:
            raise PhoenixKeyError("a Phoenix primary key needs at least one column")
        names = [c.name for c in self.columns]  # (kept as _names by _compile)
        if len(set(names)) != len(names):
            raise PhoenixKeyError(f"duplicate primary-key column in {names}")
        if self.salt_buckets is not None and not 1 <= self.salt_buckets <= 256:
            raise PhoenixKeyError(f"SALT_BUCKETS must be 1..256, got {self.salt_buckets}")
        for i, c in enumerate(self.columns):
            if c.type.fixed and c.nullable and len(self.columns) > 1:
                raise PhoenixKeyError(f"PK column {c.name} is fixed width ({c.type.sql}) and nullable; Phoenix refuses that: declare it NOT NULL")
            if c.type.name == "VARBINARY" and i != len(self.columns) - 1:
                raise PhoenixKeyError(f"VARBINARY column {c.name} must be the last PK column (Phoenix error 1005); use BINARY(n) or move it last")
            if c.type.name == "VARBINARY" and c.desc:
                raise PhoenixKeyError(f"VARBINARY column {c.name} cannot be DESC (Phoenix error 1056)")
        if self.multi_tenant and (len(self.columns) < 2 or self.columns[0].nullable):
            raise PhoenixKeyError(
                "Phoenix refuses this MULTI_TENANT table (error 1040: it must have two or more PK columns "
                "with the first, the tenant id, NOT NULL): add a PK column or declare the first NOT NULL"
            )
        self._compile()

    def _compile(self) -> None:
        # The codec is the plain layout's (keyshape.phoenix.fields.key_layout: the PK columns as
        # field types), compiled by the routes of every key schema; the walks below word its errors.
        from keyshape.phoenix.fields import key_layout

        self._names = tuple(c.name for c in self.columns)
        self._known = frozenset(self._names)
        n = self.salt_buckets
        if n is not None and (type(n) is not int or not 1 <= n <= 256):
            # a bad SALT_BUCKETS set after __init__: each call's one-line error, from the walks
            self._encode_rest = self._rest_general
            self._decode = self._decode_general
        else:
            layout = key_layout(self, name="/".join(self._names), converts=False)
            bare = encoder_for(layout.replace(prefix=make_prefix("none")))
            self._encode_rest = _rest_encoder(bare, self._known, self._rest_general)
            self._decode = compile_decoder(layout, slow=self._decode_general)
        # decode is called once per row: the compiled function itself shadows the method (one call)
        self.decode = self._decode  # type: ignore[method-assign]

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        # The compiled functions hold what these were when they were made: a change after
        # __init__ makes them anew (a bad value is then each call's one-line error, as before).
        if name in ("columns", "salt_buckets", "row_key_order_optimizable", "tenant_index") and "_decode" in self.__dict__:
            self.__dict__.pop("_tenant_key", None)
            self._compile()

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    # --- the connection a row is written through ------------------------------------------------

    @property
    def connection_dependent(self) -> bool:
        """True when a row's key depends on the connection that writes it: a MULTI_TENANT table
        (or its index) whose tenant column is DESC (see :meth:`through_tenant_connection`)."""
        return self.multi_tenant and self.columns[0].desc

    def through_tenant_connection(self) -> PhoenixKey:
        """This key as a tenant-specific connection (``TenantId=``) writes and scans it.

        Phoenix 5.2.1 turns TenantId into the tenant column's type and takes its ASCENDING bytes
        (``ScanUtil.getTenantIdBytes``: ``toBytes(toObject(tenantId))``, then ``pad`` in the
        column's order), whatever the column's order; the global connection writes a DESC tenant
        column inverted, like any DESC column. So a DESC tenant column gives one row two keys, and
        each connection's scans find only the rows written through its own kind of connection.
        For an ASC tenant column (or a table that is not MULTI_TENANT) both are the same key:
        ``self`` is returned."""
        if not self.connection_dependent:
            return self
        cached: PhoenixKey | None = self.__dict__.get("_tenant_key")
        if cached is None:
            tenant = replace(self.columns[0], tenant_ascending=True)
            cached = PhoenixKey((tenant, *self.columns[1:]), self.salt_buckets, self.multi_tenant, self.row_key_order_optimizable, self.tenant_index)
            self.__dict__["_tenant_key"] = cached
        return cached

    def layout(self, tenant_connection: bool) -> PhoenixKey:
        """:meth:`through_tenant_connection` when ``tenant_connection``, else ``self``."""
        return self.through_tenant_connection() if tenant_connection else self

    def decode_any(self, key: bytes, verify: bool = True) -> list[tuple[str, dict[str, Any]]]:
        """Every layout that reads ``key``, as ``(connection, values)``: ``"global"`` and, for a
        DESC tenant column, ``"tenant"`` (see :meth:`through_tenant_connection`), in that order.
        Raises the global layout's error when neither reads it."""
        out: list[tuple[str, dict[str, Any]]] = []
        error: PhoenixKeyError | None = None
        for name, layout in (("global", self), ("tenant", self.through_tenant_connection())):
            if name == "tenant" and layout is self:
                break
            try:
                out.append((name, layout.decode(key, verify)))
            except PhoenixKeyError as exc:
                error = error or exc
        if not out:
            assert error is not None
            raise error
        return out

    # --- one column ----------------------------------------------------------------------------

    def column_bytes(self, c: PhoenixColumn, value: Any) -> bytes:
        """Column ``c``'s bytes for ``value`` as they stand in the key (padded, DESC applied),
        b"" for NULL; PhoenixKeyError when Phoenix refuses the value. The codec of
        :class:`~keyshape.schema.fieldtypes.phoenix.PhoenixColumnType`."""
        return self._column_bytes(c, value)

    @staticmethod
    def key_error(message: str) -> PhoenixKeyError:
        """The error a record Phoenix refuses raises (its column types in
        :mod:`keyshape.schema.fieldtypes.phoenix` raise what this gives)."""
        return PhoenixKeyError(message)

    def column_value(self, c: PhoenixColumn, data: bytes) -> Any:
        """Column ``c``'s value for its bytes ``data`` in the key (None for b""); PhoenixKeyError
        when they are not a value of its type."""
        return self._value(c, data)

    def _column_bytes(self, c: PhoenixColumn, value: Any) -> bytes:
        """The column's bytes as they stand in the key (padded, DESC applied); b"" for NULL."""
        if value is None or (value == "" and c.type.name in ("VARCHAR", "CHAR")) or (value == b"" and c.type.name in ("VARBINARY", "BINARY")):
            return b""
        try:
            if c.data_desc is not None and c.data_type is not None:
                # the data row's bytes, inverted into the index's order (IndexMaintainer coerces
                # same-type bytes by inverting them; a DESC value cut to its scale, which the data
                # row holds ASC, is inverted as it stands)
                data = self._column_bytes(PhoenixColumn(c.name, c.data_type, c.data_desc), value)
                return data if c.data_desc == c.desc else _invert(data)
            if c.data_type is not None and not isinstance(value, Decimal):
                # (a Decimal is the index's own value, as decode gives it back)
                value = index_decimal(c.data_type, value)
            data = c.type.encode(value)
        except PhoenixTypeError as exc:
            raise PhoenixKeyError(f"column {c.name}: {exc}") from None
        width = c.type.width if c.type.fixed else c.pad_to
        if width is not None and len(data) < width:
            data += (b" " if c.type.name in ("CHAR", "VARCHAR") else b"\x00") * (width - len(data))
        if c.tenant_ascending and c.desc:
            return self._tenant_bytes(c, value, data)
        if not c.desc:
            return data
        if c.type.name == "DECIMAL" and c.type.scale is not None and fraction_digits(value) > c.type.scale:
            # PDecimal.coerceBytes rescales a DESC value by re-encoding it ASC and never inverts it
            # again: Phoenix writes these bytes (and reads back another number; see lint). It then
            # checks the size of the number those bytes read as in DESC order, and fails outright
            # when the cut value is 0 (a one-byte key it reads two bytes of): both refused here too.
            digits = decimal_digits(_invert(data))
            if digits is None:
                raise PhoenixKeyError(
                    f"column {c.name}: Phoenix 5.2.1 fails on {value} in {c.type.sql} DESC "
                    f"(cut to scale {c.type.scale} it is 0, which its DESC size check cannot "
                    "read: ArrayIndexOutOfBoundsException); round it before writing"
                )
            if c.type.length is not None and digits[0] - digits[1] > c.type.length - c.type.scale:
                raise PhoenixKeyError(
                    f'column {c.name}: Phoenix refuses {value} in {c.type.sql} DESC ("The data '
                    'exceeds the max capacity": it checks the size of the bytes it writes, '
                    "read in DESC order); round it to the column's scale before writing"
                )
            return data
        return _invert(data)

    @staticmethod
    def _tenant_bytes(c: PhoenixColumn, value: Any, data: bytes) -> bytes:
        """A DESC tenant column's bytes through a tenant connection (``data``: its ASC bytes,
        padded): PDataType.pad pads in the column's order, so the padding alone is inverted."""
        name = c.type.name
        if name == "VARCHAR" and c.type.length is not None:
            # PVarchar.isSizeCompatible reads the ASC bytes as DESC ones: "Undecodable byte"
            raise PhoenixKeyError(
                f"column {c.name}: Phoenix 5.2.1 fails to write through a tenant connection to a DESC "
                f"{c.type.sql} tenant column (UndecodableByteException: it reads the ascending tenant id "
                "as DESC bytes); declare it VARCHAR without a length, or write through the global connection"
            )
        if name == "DECIMAL" and value == 0:
            # the one-byte 0 (0x80), checked as a DESC number: the ArrayIndexOutOfBounds of encode
            raise PhoenixKeyError(
                f"column {c.name}: Phoenix 5.2.1 fails to write tenant id 0 through a tenant connection to a DESC "
                f"{c.type.sql} tenant column (ArrayIndexOutOfBoundsException); write it through the global connection"
            )
        if name == "DECIMAL" and c.type.scale is not None and fraction_digits(value) > c.type.scale:
            raise PhoenixKeyError(
                f"column {c.name}: a tenant id with more fraction digits than {c.type.sql} holds is not supported "
                "yet by keyshape through a tenant connection (Phoenix does not cut it to the scale there); round it"
            )
        if c.type.fixed and name in ("CHAR", "BINARY"):
            value_bytes = c.type.encode(value)
            pad = 0xDF if name == "CHAR" else 0xFF  # the inverted space / zero byte
            return value_bytes + bytes([pad]) * (len(data) - len(value_bytes))
        return data

    def _separator(self, c: PhoenixColumn, was_null: bool) -> int:
        # SchemaUtil.getSeparatorByte(rowKeyOrderOptimizable, isNullValue, sortOrder)
        return DESC_SEPARATOR if self.row_key_order_optimizable and not was_null and c.desc else SEPARATOR

    # --- compose ---------------------------------------------------------------------------------

    def encode_unsalted(self, record: Mapping[str, Any], partial: bool = False) -> bytes:
        """The key without its salt byte. With ``partial`` the record may stop after any leading
        columns, and the last given variable-width column keeps its separator (a scan prefix)."""
        values = [record.get(n) for n in self._names]
        parts = [self._column_bytes(c, v) for c, v in zip(self.columns, values)]
        count = len(parts)
        while count and not parts[count - 1]:
            count -= 1
        if count == 0 and not partial:
            raise PhoenixKeyError(f"the primary key may not be null: give at least {self._names[0]}")
        for c, data in zip(self.columns[:count], parts[:count]):
            if not data and not c.nullable:
                raise PhoenixKeyError(f"column {c.name} may not be null (it is NOT NULL, or fixed width)")
        if not partial:
            for c in self.columns[count:]:
                if c.type.fixed or not c.nullable:
                    raise PhoenixKeyError(f"column {c.name} may not be null; give a value for it")
        out = bytearray()
        previous: tuple[PhoenixColumn, bool] | None = None
        for c, data in zip(self.columns[:count], parts[:count]):
            if previous is not None and not previous[0].type.fixed:
                out.append(self._separator(*previous))
            out += data
            previous = (c, not data)
        if previous is not None and not previous[0].type.fixed:
            sep = self._separator(*previous)
            kept = self.tenant_index and count == 1 and len(self.columns) > 1
            if sep == DESC_SEPARATOR or (partial and count < len(self.columns)) or kept:
                out.append(sep)
        return bytes(out)

    def salt_of(self, unsalted: bytes) -> int:
        """The salt byte Phoenix puts before ``unsalted`` (SALT_BUCKETS tables only)."""
        if self.salt_buckets is None:
            raise PhoenixKeyError("this table is not salted (no SALT_BUCKETS)")
        return phoenix_salt(unsalted, self.salt_buckets)

    def encode(self, record: Mapping[str, Any], tenant_connection: bool = False) -> bytes:
        """The row key Phoenix writes for ``record`` (a mapping of PK column name to value); with
        ``tenant_connection``, as a tenant-specific connection writes it (see
        :meth:`through_tenant_connection`: it differs for a DESC tenant column only)."""
        if tenant_connection and self.connection_dependent:
            return self.through_tenant_connection().encode(record)
        rest: bytes = self._encode_rest(record)
        if self.salt_buckets is None:
            return rest
        n = self.salt_buckets
        if type(n) is not int or not 1 <= n <= 256:
            return bytes((phoenix_salt(rest, n),)) + rest  # it words the error
        return _BYTE[abs(java_bytes_hash(rest)) % n] + rest  # Java's Math.abs(hash % buckets)

    def _rest_general(self, record: Mapping[str, Any]) -> bytes:
        unknown = set(record) - self._known
        if unknown:
            raise PhoenixKeyError(f"not primary-key columns: {sorted(unknown)}; the key has {list(self._names)}")
        return self.encode_unsalted(record)

    def encode_many(self, records: Iterable[Mapping[str, Any]]) -> list[bytes]:
        """:meth:`encode` of every record; the salt bytes are computed for all keys at once."""
        rests = [self._encode_rest(r) for r in records]
        if self.salt_buckets is None or not rests:
            return rests
        salts = phoenix_salt_many(rests, self.salt_buckets).tolist()
        return [bytes((s,)) + r for s, r in zip(salts, rests)]

    # --- decode ----------------------------------------------------------------------------------

    def decode(self, key: bytes, verify: bool = True) -> dict[str, Any]:
        """The PK values of a row key (None for NULL columns), walked as ``RowKeySchema.next``
        does. A DESC BOOLEAN decodes to the value written (Phoenix itself reads both as false) and
        a DESC DECIMAL written ASC decodes as Phoenix reads it; ``lint`` explains both.
        ``verify=False`` skips the salt byte's re-check (Phoenix itself only strips it).

        Runs the decoder compiled once for the table's plain layout (the C reader first), whose
        doubts this walk decides and words (:meth:`_decode_general`)."""
        return self._decode(key, verify)  # type: ignore[no-any-return]

    def _decode_general(self, key: bytes, verify: bool = True) -> dict[str, Any]:
        """:meth:`decode` walking the columns: the reference the compiled decoder equals."""
        key = bytes(key)
        offset = 0
        out: dict[str, Any] = {}
        if self.salt_buckets is not None:
            if not key:
                raise PhoenixKeyError("an empty key has no salt byte")
            if verify and key[0] != self.salt_of(key[1:]):
                raise PhoenixKeyError(
                    f"salt byte {key[0]:#04x} of '{to_string_binary(key)}' is not the "
                    f"one SALT_BUCKETS={self.salt_buckets} gives ({self.salt_of(key[1:]):#04x}): "
                    "was the key written with this table's schema?"
                )
            offset = 1
        end = len(key)
        last = len(self.columns) - 1
        for i, c in enumerate(self.columns):
            if i > 0 and not self.columns[i - 1].type.fixed:
                offset += 1  # the previous variable-width column's separator
            if offset >= end:
                out[c.name] = None
                continue
            if c.type.fixed:
                width = c.type.width or 0
                if end - offset < width:
                    raise PhoenixKeyError(f"key '{to_string_binary(key)}' ends inside column {c.name} ({c.type.sql} takes {width} bytes)")
                data, offset = key[offset : offset + width], offset + width
            elif i == last:
                stop = end - (1 if self.row_key_order_optimizable and c.desc else 0)
                data, offset = key[offset:stop], end
            else:
                stop = offset
                if key[offset] != SEPARATOR:
                    sep = self._separator(c, False)
                    while stop < end and key[stop] != sep:
                        stop += 1
                data, offset = key[offset:stop], stop
            out[c.name] = self._value(c, data)
        if offset < end:
            raise PhoenixKeyError(
                f"key '{to_string_binary(key)}' has {end - offset} byte(s) after the last "
                "primary-key column: was it written with this table's schema?"
            )
        return out

    def _value(self, c: PhoenixColumn, data: bytes) -> Any:
        if not data:
            return None
        if c.tenant_ascending and c.desc:
            if c.type.name in ("CHAR", "BINARY"):
                pad = 0xDF if c.type.name == "CHAR" else 0xFF
                data = data.rstrip(bytes([pad]))
        elif c.desc:
            data = _invert(data)
        try:
            return c.type.decode(data)
        except (PhoenixTypeError, UnicodeDecodeError, ValueError) as exc:
            raise PhoenixKeyError(f"column {c.name}: bytes '{to_string_binary(data)}' are not a {c.type.sql} ({exc})") from None

    # --- regions and scans -----------------------------------------------------------------------

    def salt_boundaries(self) -> list[bytes]:
        """The region boundaries Phoenix creates for SALT_BUCKETS without SPLIT ON: ``[i]`` for
        i = 1..N-1, padded by ``SchemaUtil.processSplit`` to the PK layout (byte-equal to the real
        regions)."""
        if self.salt_buckets is None:
            return []
        return [process_split(bytes([i]), self._layout(salted=True)) for i in range(1, self.salt_buckets)]

    def _layout(self, salted: bool) -> list[int | None]:
        widths: list[int | None] = [1] if salted and self.salt_buckets is not None else []
        return widths + [c.type.width for c in self.columns]

    def region_boundaries(self, split_points: Sequence[bytes] = ()) -> list[bytes]:
        """The boundaries of the regions Phoenix creates: the SALT_BUCKETS ones, or the SPLIT ON
        points (bytes, used raw on a salted table, as Phoenix does) padded like ``processSplit``."""
        if not split_points:
            return self.salt_boundaries()
        layout = self._layout(salted=True)
        padded = [process_split(bytes(p), layout) for p in split_points]
        seen: dict[bytes, int] = {}
        for i, point in enumerate(padded):
            if point in seen:
                # Phoenix passes both to HBase's createTable, which refuses the table ("All split
                # keys must be unique"); keeping one would describe a table that cannot exist.
                raise PhoenixKeyError(
                    f"split points {seen[point] + 1} and {i + 1} ('{to_string_binary(bytes(split_points[seen[point]]))}' "
                    f"and '{to_string_binary(bytes(split_points[i]))}') are the same region boundary "
                    f"'{to_string_binary(point)}' once padded to the primary key; HBase refuses the table "
                    '("All split keys must be unique"): drop one'
                )
            seen[point] = i
        return sorted(padded)

    def split_points(self, rows: Iterable[Mapping[str, Any]], buckets: Iterable[int] | None = None) -> list[bytes]:
        """Split keys for leading PK values (``rows`` of partial records), as bytes for a binary
        ``SPLIT ON (X'..')``: encoded with each column's own type and order. On a salted table each
        point is repeated in every bucket (``buckets``, default all), each after its salt byte, and
        the bucket boundaries themselves are included, so no region ever spans two buckets."""
        prefixes = sorted({self.encode_unsalted(r, partial=True) for r in rows})
        if self.salt_buckets is None:
            return [p for p in prefixes if p]
        chosen = range(self.salt_buckets) if buckets is None else buckets
        out = set(self.salt_boundaries())
        for b in chosen:
            out.update(bytes([b]) + p for p in prefixes)
        return sorted(out)

    def scan_ranges(self, tenant_connection: bool = False, **leading: Any) -> list[tuple[bytes, bytes]]:
        """``[start, stop)`` ranges that hold every row whose leading PK columns equal ``leading``,
        as Phoenix's own scan for ``WHERE`` those columns equal those values: one per salt bucket
        on a salted table (``stop == b""`` means to the end).

        The start stops before the separator that ends the last given variable-width value:
        a row whose remaining columns are all NULL has no separator there (trailing NULLs are not
        written), so ``A = 'a'`` starts at ``61``, not ``6100`` (Phoenix scans ``[61, 6101)``).
        Every PK column given is one row: ``[key, key + 00)``, in its own salt bucket only.
        With ``tenant_connection``, the ranges a tenant-specific connection scans (and the rows it
        wrote): they differ for a DESC tenant column only (:meth:`through_tenant_connection`)."""
        if tenant_connection and self.connection_dependent:
            return self.through_tenant_connection().scan_ranges(**leading)
        given = list(leading)
        if given != list(self._names[: len(given)]):
            raise PhoenixKeyError(f"scan ranges need leading PK columns in order; got {given}, the key starts {list(self._names[: len(given) + 1])}")
        if leading and len(given) == len(self.columns):
            row = self.encode_unsalted(leading)
            if self.salt_buckets is not None:
                row = bytes([self.salt_of(row)]) + row
            return [(row, row + b"\x00")]
        prefix = self.encode_unsalted(leading, partial=True) if leading else b""
        start = prefix
        given_values = [c for c, v in zip(self.columns, leading.values()) if self._column_bytes(c, v)]
        if given_values and not given_values[-1].type.fixed and prefix.endswith(b"\x00") and self._separator(given_values[-1], False) == SEPARATOR:
            start = prefix[:-1]
        if self.salt_buckets is None:
            return [(start, next_key(prefix))]
        return [(bytes([b]) + start, next_key(bytes([b]) + prefix)) for b in range(self.salt_buckets)]


def _rest_encoder(
    compiled: Callable[[Mapping[str, Any]], bytes], known: frozenset[str], general: Callable[[Mapping[str, Any]], bytes]
) -> Callable[[Mapping[str, Any]], bytes]:
    """The key after its salt byte: ``compiled`` (the plain layout's encoder) for a record of PK
    columns, ``general`` (the column walk, which words Phoenix's refusals) for a record it refuses
    or one with other columns."""

    def rest(record: Mapping[str, Any]) -> bytes:
        if known.issuperset(record):
            try:
                return compiled(record)
            except KeyshapeError:
                pass
        return general(record)

    return rest


def next_key(prefix: bytes) -> bytes:
    """The stop row of a scan for ``prefix`` as Phoenix writes it (``ByteUtil.nextKey``): the same
    length, incremented with carry (``9eff`` -> ``9f00``); b"" (to the end) for b"" or all 0xFF."""
    stripped = next_prefix(prefix) if prefix else b""
    return stripped + b"\x00" * (len(prefix) - len(stripped)) if stripped else b""


def process_split(split: bytes, widths: Sequence[int | None]) -> bytes:
    """A split point as ``SchemaUtil.processSplit`` pads it for a PK of these column widths (None =
    variable width; a salted table's salt byte is a first column of width 1): a point that ends
    inside a fixed-width column, or inside a variable-width column that is not the last, is filled
    with zero bytes to the end of that column plus the minimum of every column after it (width
    bytes, or one separator byte)."""
    offset, end = 0, len(split)
    for pos, width in enumerate(widths):
        if width is not None:
            if end - offset < width:
                fill = width - (end - offset) + _minimum(widths[pos + 1 :])
                return split + b"\x00" * fill
            offset += width
            continue
        if pos == len(widths) - 1:
            break
        while offset < end and split[offset] != SEPARATOR:
            offset += 1
        if offset == end:
            return split + b"\x00" * (1 + _minimum(widths[pos + 1 :]))
        offset += 1
    return split


def _minimum(widths: Sequence[int | None]) -> int:
    return sum(1 if w is None else w for w in widths)
