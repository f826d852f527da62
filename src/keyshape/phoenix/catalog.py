"""A Phoenix table's schema read from Phoenix's own ``SYSTEM.CATALOG`` through HBase, so Python
users need neither JDBC nor the Query Server.

SYSTEM.CATALOG is itself a Phoenix table: its row key is (TENANT_ID, TABLE_SCHEM, TABLE_NAME,
COLUMN_NAME, COLUMN_FAMILY), all VARCHAR, and its cells in family ``0`` are Phoenix-encoded
(DATA_TYPE, SORT_ORDER, NULLABLE, COLUMN_SIZE, DECIMAL_DIGITS as INTEGER, KEY_SEQ as SMALLINT,
SALT_BUCKETS as INTEGER, MULTI_TENANT / ROW_KEY_ORDER_OPTIMIZABLE as BOOLEAN). The table's header
row has no COLUMN_NAME; PK columns have no COLUMN_FAMILY; a column-family row (COLUMN_NAME = the
family, no family) only counts qualifiers and is skipped.
"""

from __future__ import annotations

from typing import Any

from keyshape.errors import KeyshapeError
from keyshape.phoenix.ddl import PhoenixTable
from keyshape.phoenix.key import PhoenixColumn, PhoenixKey
from keyshape.phoenix.types import PhoenixType, phoenix_type
from keyshape.store.base import Store

__all__ = ["CATALOG_KEY", "catalog_table", "type_of_sql_id"]

CATALOG = "SYSTEM.CATALOG"
CATALOG_KEY = PhoenixKey(
    [PhoenixColumn.of(n, "VARCHAR", nullable=True) for n in ("TENANT_ID", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "COLUMN_FAMILY")]
)

# java.sql.Types numbers, and Phoenix's own numbers for its unsigned types (PUnsigned*.sqlType)
_SQL_TYPES = {
    -6: "TINYINT",
    5: "SMALLINT",
    4: "INTEGER",
    -5: "BIGINT",
    6: "FLOAT",
    8: "DOUBLE",
    3: "DECIMAL",
    16: "BOOLEAN",
    91: "DATE",
    92: "TIME",
    93: "TIMESTAMP",
    1: "CHAR",
    12: "VARCHAR",
    -2: "BINARY",
    -3: "VARBINARY",
    11: "UNSIGNED_TINYINT",
    13: "UNSIGNED_SMALLINT",
    9: "UNSIGNED_INT",
    10: "UNSIGNED_LONG",
    14: "UNSIGNED_FLOAT",
    15: "UNSIGNED_DOUBLE",
    18: "UNSIGNED_TIME",
    19: "UNSIGNED_DATE",
    20: "UNSIGNED_TIMESTAMP",
}
_DESC = 1  # SortOrder.DESC.getSystemValue(); ASC is 2
_INT = phoenix_type("INTEGER")
_SMALL = phoenix_type("SMALLINT")


def type_of_sql_id(type_id: int, size: int | None = None, scale: int | None = None) -> PhoenixType:
    """The PhoenixType for a SYSTEM.CATALOG DATA_TYPE (with COLUMN_SIZE / DECIMAL_DIGITS)."""
    name = _SQL_TYPES.get(type_id)
    if name is None:
        raise KeyshapeError(f"SYSTEM.CATALOG type id {type_id} is not a supported row-key type (arrays, JSON ...)")
    if name in ("CHAR", "BINARY"):
        return phoenix_type(name, size)
    if name == "DECIMAL":
        return phoenix_type(name, size, scale)
    if name in ("VARCHAR", "VARBINARY"):
        return phoenix_type(name, size)
    return phoenix_type(name)


def _int(cells: dict[bytes, bytes], name: str, kind: PhoenixType = _INT) -> int | None:
    raw = cells.get(b"0:" + name.encode())
    return None if not raw else int(kind.decode(raw))


def catalog_table(store: Store, name: str, tenant: str | None = None) -> PhoenixTable:
    """The table ``name`` (``SCHEMA.TABLE`` or ``TABLE``) as SYSTEM.CATALOG describes it.
    KeyshapeError when it is not there, or is a view."""
    schema, _, table = name.upper().rpartition(".") if '"' not in name else name.rpartition(".")
    # The header row ends at TABLE_NAME (trailing NULLs are not written), so the scan prefix stops
    # before TABLE_NAME's separator; rows of longer names are dropped after decoding.
    prefix = CATALOG_KEY.encode_unsalted({"TENANT_ID": tenant, "TABLE_SCHEM": schema or None, "TABLE_NAME": table}, partial=True)[:-1]
    header: dict[bytes, bytes] | None = None
    rows: list[tuple[dict[str, Any], dict[bytes, bytes]]] = []
    for row, cells in store.scan(CATALOG, prefix=prefix):
        key = CATALOG_KEY.decode(row)
        if key["TABLE_NAME"] != table or (key["TABLE_SCHEM"] or "") != schema or key["TENANT_ID"] != tenant:
            continue
        if key["COLUMN_NAME"] is None and key["COLUMN_FAMILY"] is None:
            header = cells
        elif key["COLUMN_NAME"] is not None:
            rows.append((key, cells))
    if header is None:
        raise KeyshapeError(f"Phoenix table {name!r} is not in SYSTEM.CATALOG; check the name (SCHEMA.TABLE, upper case unless it was quoted)")
    kind = header.get(b"0:TABLE_TYPE", b"u")
    if kind == b"v":
        raise KeyshapeError(f"{name} is a view; read its physical table instead")
    columns: list[tuple[int, str, PhoenixType, bool]] = []
    pk: list[tuple[int, PhoenixColumn]] = []
    for key, cells in rows:
        type_id = _int(cells, "DATA_TYPE")
        if type_id is None:
            continue  # a column-family row
        ctype = type_of_sql_id(type_id, _int(cells, "COLUMN_SIZE"), _int(cells, "DECIMAL_DIGITS"))
        nullable = _int(cells, "NULLABLE") == 1
        column = key["COLUMN_NAME"]
        if key["COLUMN_FAMILY"] and key["COLUMN_FAMILY"] != "0":
            column = f"{key['COLUMN_FAMILY']}.{column}"
        columns.append((_int(cells, "ORDINAL_POSITION") or 0, column, ctype, nullable))
        seq = _int(cells, "KEY_SEQ", _SMALL)
        if seq is not None:
            desc = _int(cells, "SORT_ORDER") == _DESC
            pk.append((seq, PhoenixColumn(column, ctype, desc, nullable)))
    columns.sort()
    pk.sort(key=lambda item: item[0])
    salt = _int(header, "SALT_BUCKETS")
    salted = salt is not None and salt > 0
    # SYSTEM.CATALOG lists the salt column as no PK column; indexes list data PK columns with ':'
    key_columns = [c for _, c in pk]
    options: dict[str, str] = {}
    if salted:
        options["SALT_BUCKETS"] = str(salt)
    multi = header.get(b"0:MULTI_TENANT", b"\x00") not in (b"", b"\x00")
    if multi:
        options["MULTI_TENANT"] = "true"
    optimizable = header.get(b"0:ROW_KEY_ORDER_OPTIMIZABLE", b"\x01") not in (b"", b"\x00")
    full = f"{schema}.{table}" if schema else table
    phoenix_key = PhoenixKey(key_columns, salt if salted else None, multi, optimizable)
    return PhoenixTable(full, [(n, t, nul) for _, n, t, nul in columns], phoenix_key, options)
