"""A Phoenix table as a :class:`~keyshape.schema.KeySchema` flavour, so everything built on key
schemas (analyze, compare, the live analysis of existing tables, create, load, scans) works on
Phoenix tables: the key is the plain layout of its PK columns (:func:`keyshape.phoenix.fields.key_layout`),
read and written by the routes of every key schema, the regions are the ones Phoenix creates, and
the fields carry the nearest keyshape types so workloads can be generated (:mod:`keyshape.phoenix.fields`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


from keyshape.errors import KeyshapeError
from keyshape.phoenix.ddl import PhoenixTable, read_ddl_script
from keyshape.phoenix.fields import key_fields, key_layout, millis, phoenix_value
from keyshape.phoenix.key import PhoenixColumn
from keyshape.phoenix.lint import lint_phoenix
from keyshape.phoenix.live import bucket_notes
from keyshape.ops.live_notes import register_live_notes
from keyshape.schema.keyschema import KeySchema
from keyshape.schema.layout import KeyLayout
from keyshape.schema.keyschema import load_schema as schema_load
from keyshape.schema.loaders import register_loader
from keyshape.schema.specs import FamilySpec, TableSpec

__all__ = ["PhoenixKeySchema", "is_phoenix_schema_file", "load_phoenix_schema", "load_schema"]


class PhoenixKeySchema(KeySchema):
    """A :class:`KeySchema` whose key is a Phoenix table's row key (see the module docstring).

    Its :attr:`layout` is the key, read and written by the plain routes of every key schema: the
    PK columns are field types (:class:`~keyshape.schema.fieldtypes.phoenix.PhoenixColumnType`:
    their bytes, separators, trailing NULLs and C reader tuples), no separator between fields, the
    ``phoenix`` salt prefix. A column left out of a record is NULL; a TIMESTAMP decodes to its
    milliseconds (:attr:`exact_decode` is False: :meth:`decode_exact` checks each key). What is
    Phoenix's own: the regions Phoenix creates (:meth:`split_keys`), the lints, the scan ranges
    Phoenix scans (:meth:`scan_ranges`), and the keys a tenant-specific connection writes
    (:meth:`for_connection`: a second plain KeySchema).
    """

    def __init__(self, table: PhoenixTable, workload: Any = None, source: str = "<phoenix>") -> None:
        self.phoenix = table
        key = table.key
        schema, _, name = table.name.rpartition(".")
        # Phoenix names the HBase table SCHEMA.NAME in the default namespace (namespace mapping off).
        spec = TableSpec(table.hbase_table, "default", [FamilySpec("0")])
        layout = key_layout(key, millis)
        super().__init__(spec, layout.fields, b"", layout.prefix, layout.hash_fields, None, workload, source)

    # --- keys --------------------------------------------------------------------------------

    def layout_for(self, tenant_connection: bool) -> KeyLayout:
        """The :class:`KeyLayout` of the keys a connection writes: :attr:`layout` (the global
        connection's) or, with ``tenant_connection``, a tenant-specific connection's (they differ
        for a DESC tenant column of a MULTI_TENANT table only: :meth:`PhoenixKey.through_tenant_connection`)."""
        key = self.phoenix.key.layout(tenant_connection)
        if key is self.phoenix.key:
            return self.layout
        return self.layout.cached("tenant_connection", lambda: self.layout.replace(fields=tuple(key_fields(key, millis))))

    def for_connection(self, tenant_connection: bool) -> KeySchema:
        """The key schema of the keys a connection writes: this one (the global connection's) or,
        with ``tenant_connection``, a plain :class:`KeySchema` over :meth:`layout_for` (a DESC
        tenant column's ascending bytes), whose encode, decode and decode_many read and write them."""
        layout = self.layout_for(tenant_connection)
        if layout is self.layout:
            return self

        def make() -> KeySchema:
            view = KeySchema(self.table, layout.fields, layout.separator, layout.prefix, layout.hash_fields, None, self.workload, self.source)
            view.exact_decode = False
            return view

        return self.layout.cached("tenant_schema", make)

    # decode gives a TIMESTAMP as milliseconds (its nanoseconds dropped), and Phoenix reads some
    # keys into values that encode otherwise (a DESC DECIMAL written ASC): a copy checks each key.
    exact_decode = False

    def scan_ranges(self, tenant_connection: bool = False, **leading: Any) -> list[tuple[bytes, bytes]]:
        """The ranges Phoenix scans for leading PK columns equal to ``leading`` (:meth:`PhoenixKey.scan_ranges`:
        the start stops before the separator a row with NULLs after them lacks); ``tenant_connection``:
        a tenant-specific connection's."""
        return self.phoenix.key.scan_ranges(tenant_connection, **{k: phoenix_value(self._column(k), v) for k, v in leading.items()})

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
# keyshape.ops.sample.analyze_table (analyze --table) on a salted Phoenix table: its salt buckets.
register_live_notes(PhoenixKeySchema, lambda schema, live: bucket_notes(schema.phoenix.key, live))
