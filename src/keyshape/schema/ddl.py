"""Table DDL for a key schema: the HBase shell statements that create it.

``shell_create_statement`` is what ``keyshape create --dry-run`` prints; users who create tables
by hand paste it into ``hbase shell``. (The check that a live table has exactly the schema's
regions is ``keyshape.store.base.check_regions``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from keyshape.core.splits import shell_quote, verify_split_keys
from keyshape.errors import StoreError
from keyshape.schema.keyschema import KeySchema
from keyshape.schema.specs import FamilySpec, TableSpec

__all__ = [
    "BLOOM_TYPES",
    "COMPRESSIONS",
    "DATA_BLOCK_ENCODINGS",
    "family_attributes",
    "schema_tables",
    "shell_create_statement",
    "shell_create_statements",
    "shell_family",
]


# org.apache.hadoop.hbase.io.compress.Compression.Algorithm (HBase 2.6)
COMPRESSIONS = ("NONE", "GZ", "LZO", "SNAPPY", "LZ4", "BZIP2", "ZSTD", "BROTLI")
# org.apache.hadoop.hbase.regionserver.BloomType, without ROWPREFIX_FIXED_LENGTH (it needs a
# per-family prefix-length setting keyshape does not model)
BLOOM_TYPES = ("NONE", "ROW", "ROWCOL")
# org.apache.hadoop.hbase.io.encoding.DataBlockEncoding (PREFIX_TREE was removed in 2.0)
DATA_BLOCK_ENCODINGS = ("NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1")
# TableDescriptorChecker: "Block size for column family must be between 1K and 16MB"
MIN_BLOCK_SIZE, MAX_BLOCK_SIZE = 1024, 16 * 1024 * 1024
FOREVER = 2**31 - 1  # HConstants.FOREVER, the TTL of a family without one


def _choice(family: str, what: str, value: Any, allowed: tuple[str, ...]) -> str:
    text = str(value).upper()
    if text not in allowed:
        raise StoreError(f"family {family!r}: {what} {value!r} is not one HBase knows; use one of {', '.join(allowed)}")
    return text


def family_attributes(family: FamilySpec) -> dict[str, str]:
    """The family's options under HBase's ``ColumnFamilyDescriptor`` attribute names, as text,
    validated against HBase's enums and limits (``StoreError`` names a bad option).

    The same map the HBase store creates tables with (``keyshape.store.hbase.families``), so the
    dry run and a real create cannot disagree: ``VERSIONS``, ``COMPRESSION``, ``BLOOMFILTER``,
    ``BLOCKSIZE``, ``IN_MEMORY``, ``DATA_BLOCK_ENCODING``, and ``TTL`` (seconds) only when set.
    """
    name = str(family.name)
    if not name or ":" in name or name.startswith("."):
        raise StoreError(f"bad column family name {name!r}: non-empty, no ':', not starting with '.'")
    versions = int(family.versions)
    if versions < 1:
        raise StoreError(f"family {name!r}: versions must be >= 1, got {versions}")
    block_size = int(family.block_size)
    if not MIN_BLOCK_SIZE <= block_size <= MAX_BLOCK_SIZE:
        raise StoreError(f"family {name!r}: block_size {block_size} is outside HBase's {MIN_BLOCK_SIZE}..{MAX_BLOCK_SIZE} bytes")
    options = {
        "VERSIONS": str(versions),
        "COMPRESSION": _choice(name, "compression", family.compression, COMPRESSIONS),
        "BLOOMFILTER": _choice(name, "bloom_filter", family.bloom_filter, BLOOM_TYPES),
        "BLOCKSIZE": str(block_size),
        "IN_MEMORY": "true" if family.in_memory else "false",
        "DATA_BLOCK_ENCODING": _choice(name, "data_block_encoding", family.data_block_encoding, DATA_BLOCK_ENCODINGS),
    }
    if family.ttl is not None:
        ttl = int(family.ttl)
        if not 1 <= ttl <= FOREVER:
            raise StoreError(f"family {name!r}: ttl must be 1..{FOREVER} seconds, got {ttl}")
        options["TTL"] = str(ttl)
    return options


def _quote(text: str) -> str:
    """A Ruby single-quoted literal of plain text (names, option values)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def shell_family(family: FamilySpec) -> str:
    """One family as an HBase shell hash, e.g. ``{NAME => 'd', VERSIONS => 1, ...}``.

    ``VERSIONS`` and ``TTL`` are Ruby integers; the other values are quoted strings, which the
    shell's ``admin.rb`` parses (``JInteger.valueOf``, ``JBoolean.valueOf``, enum ``valueOf``).
    """
    parts = [f"NAME => {_quote(family.name)}"]
    for key, value in family_attributes(family).items():
        parts.append(f"{key} => {value}" if key in ("VERSIONS", "TTL") else f"{key} => {_quote(value)}")
    return "{" + ", ".join(parts) + "}"


def shell_create_statement(schema: KeySchema | TableSpec, split_keys: Sequence[bytes] | None = None) -> str:
    """The HBase shell statements that create the schema's table, one per line, ending in "\\n".

    ``create_namespace 'ns'`` comes first unless the table is in ``default``; then
    ``create 'ns:table', {NAME => 'd', VERSIONS => 1, ...}, ..., {SPLITS => ['k1', ...]}`` with
    every column family and the split keys (default: ``schema.split_keys()``; required when a
    bare ``TableSpec`` is given) in ``toStringBinary`` form inside single quotes, exactly as
    ``keyshape splits --format shell`` writes them (the shell decodes each with
    ``Bytes.toBytesBinary``). No ``SPLITS`` clause when there are no split keys.
    """
    if isinstance(schema, KeySchema):
        table = schema.table
        keys = schema.split_keys() if split_keys is None else list(split_keys)
    else:
        table = schema
        keys = list(split_keys or [])
    keys = verify_split_keys(keys)
    lines = []
    if table.namespace and table.namespace != "default":
        lines.append(f"create_namespace {_quote(table.namespace)}")
    args = [_quote(table.full_name)] + [shell_family(f) for f in table.families]
    # Table-level settings share the shell's last dictionary with SPLITS (admin.rb reads both there).
    table_args = [f"{k} => {_quote(v)}" for k, v in getattr(table, "attributes", {}).items()]
    if keys:
        table_args.insert(0, "SPLITS => [" + ", ".join(shell_quote(k) for k in keys) + "]")
    if table_args:
        args.append("{" + ", ".join(table_args) + "}")
    lines.append("create " + ", ".join(args))
    return "\n".join(lines) + "\n"


def schema_tables(schema: KeySchema) -> list[tuple[str, TableSpec, list[bytes]]]:
    """Every table the schema describes, as ``(role, table, split keys)``: the main table, then
    each ``[[index]]`` table (pre-split by its own prefix), then each ``[[counter]]`` table that is
    not the main table (one region: a counter row takes few requests)."""
    out: list[tuple[str, TableSpec, list[bytes]]] = [("main", schema.table, schema.split_keys())]
    seen = {schema.table.full_name}
    for spec in schema.indexes:
        if spec.table.full_name not in seen:
            seen.add(spec.table.full_name)
            out.append((f"index {spec.name}", spec.table, spec.key.split_keys()))
    for counter in schema.counters:
        if counter.table.full_name not in seen:
            seen.add(counter.table.full_name)
            out.append((f"counter {counter.name}", counter.table, []))
    return out


def shell_create_statements(schema: KeySchema) -> str:
    """:func:`shell_create_statement` for every table of :func:`schema_tables`, each namespace
    created once; what ``keyshape create --dry-run`` prints."""
    lines: list[str] = []
    for _, table, keys in schema_tables(schema):
        for line in shell_create_statement(table, keys).splitlines():
            if line not in lines or not line.startswith("create_namespace "):
                lines.append(line)
    return "\n".join(lines) + "\n"
