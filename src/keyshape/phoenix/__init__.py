"""Phoenix tables: the PK type codecs (``types``), the row key (``key``: compose, decode, salted
region boundaries, split points, scan ranges) and the DDL (``ddl``: CREATE TABLE / CREATE INDEX
in, CREATE TABLE out), byte for byte as Apache Phoenix 5.2 writes them."""

from keyshape.phoenix.ddl import PhoenixDDLError, PhoenixTable, create_table_sql, parse_ddl
from keyshape.phoenix.key import PhoenixColumn, PhoenixKey, PhoenixKeyError, process_split
from keyshape.phoenix.types import PhoenixTimestamp, PhoenixType, PhoenixTypeError, phoenix_type

__all__ = [
    "PhoenixColumn",
    "PhoenixDDLError",
    "PhoenixKey",
    "PhoenixKeyError",
    "PhoenixTable",
    "PhoenixTimestamp",
    "PhoenixType",
    "PhoenixTypeError",
    "create_table_sql",
    "parse_ddl",
    "phoenix_type",
    "process_split",
]
