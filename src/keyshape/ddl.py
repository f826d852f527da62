"""Table DDL for a key schema: the HBase shell statements that create it.

``shell_create_statement`` is what ``keyshape create --dry-run`` prints; users who create tables
by hand paste it into ``hbase shell``. (The check that a live table has exactly the schema's
regions is ``keyshape.store.base.check_regions``.)
"""

from __future__ import annotations

from collections.abc import Sequence

from keyshape.schema import FamilySpec, KeySchema, TableSpec
from keyshape.splits import shell_quote

__all__ = ["family_attributes", "shell_create_statement", "shell_family"]


def family_attributes(family: FamilySpec) -> dict[str, str]:
    """The family's options under HBase's ``ColumnFamilyDescriptor`` attribute names, as text,
    validated against HBase's enums and limits (``StoreError`` names a bad option).

    The same map the HBase store creates tables with (``keyshape.store.hbase_schema``), so the
    dry run and a real create cannot disagree: ``VERSIONS``, ``COMPRESSION``, ``BLOOMFILTER``,
    ``BLOCKSIZE``, ``IN_MEMORY``, ``DATA_BLOCK_ENCODING``, and ``TTL`` (seconds) only when set.
    """
    from keyshape.store.hbase_schema import family_options

    return family_options(family)


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


def shell_create_statement(schema: KeySchema | TableSpec, split_keys: Sequence[bytes] | None = None
                           ) -> str:
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
    keys = sorted(bytes(k) for k in keys)
    if any(not k for k in keys):
        raise ValueError("an empty split key is not allowed by HBase; remove it")
    if len(set(keys)) != len(keys):
        raise ValueError("split keys must be distinct; HBase refuses duplicate split points")
    lines = []
    if table.namespace and table.namespace != "default":
        lines.append(f"create_namespace {_quote(table.namespace)}")
    args = [_quote(table.full_name)] + [shell_family(f) for f in table.families]
    if keys:
        args.append("{SPLITS => [" + ", ".join(shell_quote(k) for k in keys) + "]}")
    lines.append("create " + ", ".join(args))
    return "\n".join(lines) + "\n"
