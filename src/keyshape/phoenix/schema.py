"""A Phoenix table as a :class:`~keyshape.schema.KeySchema` flavour, so everything built on key
schemas (analyze, compare, the live analysis of existing tables, create, load, scans) works on
Phoenix tables: the key is composed and decoded by :class:`~keyshape.phoenix.key.PhoenixKey`, the
regions are the ones Phoenix creates, and the fields carry the nearest keyshape types so workloads
can be generated (integers -> int64/int32, FLOAT/DOUBLE/DECIMAL -> float64, DATE/TIME/TIMESTAMP ->
timestamp in milliseconds, CHAR/VARCHAR -> string, BINARY/VARBINARY -> bytes, BOOLEAN -> int32 0/1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np
import pyarrow as pa

from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.phoenix.ddl import PhoenixTable, read_ddl_script
from keyshape.phoenix.key import PhoenixColumn, PhoenixKey
from keyshape.phoenix.lint import lint_phoenix
from keyshape.phoenix.types import PhoenixTimestamp, parse_text
from keyshape.schema.fields import FieldSpec
from keyshape.schema.fieldtypes import FieldType, field_type
from keyshape.schema.fieldtypes.phoenix import PhoenixColumnType
from keyshape.schema.keyschema import Columns, KeySchema
from keyshape.schema.layout import KeyLayout
from keyshape.schema.keyschema import load_schema as schema_load
from keyshape.schema.loaders import register_loader
from keyshape.schema.prefixes import make_prefix
from keyshape.schema.specs import FamilySpec, TableSpec

__all__ = ["PhoenixKeySchema", "is_phoenix_schema_file", "load_phoenix_schema", "load_schema"]

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
        return self.column_type.encode_value(self, _phoenix_value(self.column_type.column, value))

    def decode_at(self, key: bytes, pos: int, end: int | None) -> tuple[Any, int]:
        assert self.column_type is not None
        return self.column_type.read(key, pos)


def _field(key: PhoenixKey, index: int) -> FieldSpec:
    column = key.columns[index]
    # an index column Phoenix stores as DECIMAL takes the data column's values (timestamps ...)
    kind = _FIELD_TYPE[(column.data_type or column.type).name]
    encoding = {"string": "text", "bytes": "hbase"}.get(kind, "hbase")
    width = column.type.width if kind in ("string", "bytes") else None
    ftype = PhoenixColumnType(field_type(kind), key, index)
    return PhoenixFieldSpec(column.name, kind, encoding, "desc" if column.desc else "asc", width, column_type=ftype)


def _phoenix_value(column: PhoenixColumn, value: Any) -> Any:
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


class PhoenixKeySchema(KeySchema):
    """A :class:`KeySchema` whose key is a Phoenix table's row key (see the module docstring).

    Its :attr:`layout` is the key: the PK columns are field types
    (:class:`~keyshape.schema.fieldtypes.phoenix.PhoenixColumnType`, no separator between fields,
    the ``phoenix`` salt prefix), so ``layout.encode_generic`` writes and ``layout.decode_generic``
    reads Phoenix's bytes (:meth:`layout_for`: a tenant connection's). The codec methods below
    still go through :class:`PhoenixKey` because the general routes do not yet do what it does:
    its compiled encoder and C reader (the general compiled encoder joins fields without the
    trailing-NULL rule of :meth:`FieldType.key_tail`, and the C reader has no Phoenix field codes),
    the ``tenant_connection`` argument, TIMESTAMPs read as milliseconds, and scan ranges that start
    before a last value's separator (a row whose later columns are NULL has none).
    """

    def __init__(self, table: PhoenixTable, workload: Any = None, source: str = "<phoenix>") -> None:
        self.phoenix = table
        key = table.key
        schema, _, name = table.name.rpartition(".")
        # Phoenix names the HBase table SCHEMA.NAME in the default namespace (namespace mapping off).
        spec = TableSpec(table.hbase_table, "default", [FamilySpec("0")])
        prefix = make_prefix("phoenix", b"", buckets=key.salt_buckets) if key.salt_buckets else make_prefix("none", b"")
        fields = [_field(key, i) for i in range(len(key.columns))]
        super().__init__(spec, fields, b"", prefix, [f.name for f in fields], None, workload, source)

    def _install_trampolines(self) -> None:
        # KeySchema shadows encode/decode with functions compiled from its field specs; a Phoenix
        # key is composed by PhoenixKey (compiled per table itself), so the methods below stay.
        self._compiled_encode = self._compiled_decode = None

    # --- keys --------------------------------------------------------------------------------

    def layout_for(self, tenant_connection: bool) -> KeyLayout:
        """The :class:`KeyLayout` of the keys a connection writes: :attr:`layout` (the global
        connection's) or, with ``tenant_connection``, a tenant-specific connection's (they differ
        for a DESC tenant column of a MULTI_TENANT table only: :meth:`PhoenixKey.through_tenant_connection`)."""
        key = self.phoenix.key.layout(tenant_connection)
        if key is self.phoenix.key:
            return self.layout
        return self.layout.cached("tenant_connection", lambda: self.layout.replace(fields=tuple(_field(key, i) for i in range(len(key.columns)))))

    def _record(self, record: Mapping[str, Any]) -> dict[str, Any]:
        return {c.name: _phoenix_value(c, record.get(c.name)) for c in self.phoenix.key.columns}

    def encode(self, record: Mapping[str, Any], tenant_connection: bool = False) -> bytes:
        """The row key; ``tenant_connection``: as a tenant-specific connection writes it (a DESC
        tenant column's ascending bytes, :meth:`PhoenixKey.through_tenant_connection`)."""
        return self.phoenix.key.encode(self._record(record), tenant_connection)

    @overload
    def encode_many(self, columns: Columns, as_array: Literal[False] = False) -> list[bytes]: ...

    @overload
    def encode_many(self, columns: Columns, as_array: Literal[True]) -> KeyArray: ...

    @overload
    def encode_many(self, columns: Columns, as_array: bool) -> list[bytes] | KeyArray: ...

    def encode_many(self, columns: Columns, as_array: bool = False) -> list[bytes] | KeyArray:
        names = [c.name for c in self.phoenix.key.columns]
        missing = [n for n in names if n not in columns]
        if missing:
            raise KeyshapeError(f"encode_many: missing column(s) {missing}")
        lists = [_as_list(columns[n]) for n in names]
        records = [self._record(dict(zip(names, values))) for values in zip(*lists)]
        keys = self.phoenix.key.encode_many(records)
        return KeyArray.from_keys(keys) if as_array else keys

    # decode gives a TIMESTAMP as milliseconds (its nanoseconds dropped), and Phoenix reads some
    # keys into values that encode otherwise (a DESC DECIMAL written ASC): a copy checks each key.
    exact_decode = False

    def decode(self, key: bytes, verify: bool = True, tenant_connection: bool = False) -> dict[str, Any]:
        values = self.phoenix.key.layout(tenant_connection).decode(key, verify)
        # timestamps as the keyshape field type reads them (milliseconds), so the time axis works
        return {k: (v.millis if isinstance(v, PhoenixTimestamp) else v) for k, v in values.items()}

    def decode_many(self, keys: Sequence[bytes] | KeyArray, *, as_arrow: bool = False, verify: bool = True) -> Any:
        rows = [self.decode(bytes(k), verify) for k in (keys.tolist() if isinstance(keys, KeyArray) else keys)]
        columns = {c.name: [r[c.name] for r in rows] for c in self.phoenix.key.columns}
        return pa.table(columns) if as_arrow else columns

    def scan_ranges(self, tenant_connection: bool = False, **leading: Any) -> list[tuple[bytes, bytes]]:
        return self.phoenix.key.scan_ranges(tenant_connection, **{k: _phoenix_value(self._column(k), v) for k, v in leading.items()})

    def _column(self, name: str) -> PhoenixColumn:
        return next(c for c in self.phoenix.key.columns if c.name == name)

    # --- regions -----------------------------------------------------------------------------

    def split_keys(self) -> list[bytes]:
        """The boundaries of the regions Phoenix creates for this table (SALT_BUCKETS or SPLIT ON)."""
        return self.phoenix.region_boundaries()

    def lint(self) -> list:
        return lint_phoenix(self.phoenix)

    def __repr__(self) -> str:
        return f"PhoenixKeySchema({self.phoenix.name}, {len(self.fields)} PK columns, salt={self.phoenix.key.salt_buckets})"


def load_phoenix_schema(path: str | Path, table: str | None = None) -> PhoenixKeySchema:
    """A Phoenix table as a key schema, from a DDL file (``.sql``: the table ``table``, default the
    first CREATE TABLE) or from a TOML schema with a ``[phoenix]`` section::

        [phoenix]
        ddl = "tables.sql"        # a path (relative to the TOML file), or the DDL text itself
        table = "EVENTS"          # optional
        [workload]                # optional, as in any key schema; fields are the PK columns
        rows = 100000
        fields.EVENT_TIME = { generator = "sequential-time", start = "2026-01-01T00:00:00Z", step_ms = 10 }
    """
    from keyshape.core.files import read_text

    p = Path(path)
    text = read_text(p, "a Phoenix DDL script (.sql) or a TOML schema")  # one reader for every input file (issue 40)
    if p.suffix.lower() == ".sql":
        return PhoenixKeySchema(read_ddl_script(text, str(p)).pick(table), source=str(p))
    import tomllib

    from keyshape.schema.parse import Section
    from keyshape.workload import parse_workload

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise KeyshapeError(f"{p}: not valid TOML ({exc})") from None
    top = Section(data, "", str(p))
    section = top.section("phoenix", required=True)
    assert section is not None
    ddl = section.get("ddl", str, required=True)
    ddl_path = p.parent / ddl
    if "CREATE" not in ddl.upper():
        try:
            ddl = read_text(ddl_path, "a Phoenix DDL script")
        except KeyshapeError as exc:
            raise KeyshapeError(f"{p}: [phoenix] ddl: {exc}") from None
    chosen = read_ddl_script(ddl, f"{p} [phoenix] ddl").pick(section.get("table", str, table))
    section.done()
    schema = PhoenixKeySchema(chosen, source=str(p))
    wl = top.section("workload")
    if wl is not None:
        schema.workload = parse_workload(wl, schema.fields)
    top.done()
    return schema


def is_phoenix_schema_file(path: str | Path) -> bool:
    """True for a DDL file or a TOML schema with a ``[phoenix]`` section."""
    p = Path(path)
    if p.suffix.lower() == ".sql":
        return True
    try:
        head = p.read_text(errors="replace")
    except OSError:
        return False
    return any(line.strip() == "[phoenix]" for line in head.splitlines())


def load_schema(path: str | Path) -> KeySchema:
    """Any key schema file: :func:`keyshape.schema.load_schema`, which reads Phoenix files with
    :func:`load_phoenix_schema` (registered below) and keyshape TOML itself."""
    return schema_load(path)


# Every schema file is read by keyshape.schema.load_schema (and KeySchema.load): Phoenix files by this loader.
register_loader("phoenix", is_phoenix_schema_file, load_phoenix_schema)


def _as_list(values: Sequence[Any] | np.ndarray) -> list[Any]:
    return values.tolist() if isinstance(values, np.ndarray) else list(values)
