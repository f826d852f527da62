"""Table DDL for a key schema: the HBase shell statements that create it, and a check that a live
table has exactly the regions the schema asks for.

``shell_create_statement`` is what ``keyshape create --dry-run`` prints; users who create tables
by hand paste it into ``hbase shell``. ``check_regions`` compares the region boundaries a store
reports with the schema's split keys (what ``keyshape create`` verifies after creating).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from keyshape.errors import StoreError
from keyshape.hbytes import to_string_binary
from keyshape.schema import FamilySpec, KeySchema, TableSpec
from keyshape.splits import shell_quote

__all__ = ["check_regions", "family_attributes", "shell_create_statement", "shell_family"]


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


def check_regions(regions: Sequence[Any], split_keys: Sequence[bytes], table: str = "") -> None:
    """Raise ``StoreError`` unless ``regions`` (``RegionInfo``s in key order) are exactly the
    regions ``split_keys`` define: ``[b"", k1), [k1, k2), ..., [kn, b"")``.

    The message names the first boundary that differs, in toStringBinary form.
    """
    want = sorted(bytes(k) for k in split_keys)
    starts = [b""] + want
    ends = want + [b""]
    got = [(bytes(r.start), bytes(r.end)) for r in regions]
    expected = list(zip(starts, ends))
    if got == expected:
        return
    label = f"table {table!r}" if table else "the table"
    if len(got) != len(expected):
        raise StoreError(f"{label} has {len(got)} region(s), the schema asks for {len(expected)}; "
                         "it was created with other split keys (or has split since): drop it or "
                         "use another table name")
    for i, ((gs, ge), (ws, we)) in enumerate(zip(got, expected)):
        if (gs, ge) != (ws, we):
            raise StoreError(
                f"{label}: region {i} is [{to_string_binary(gs)!r}, {to_string_binary(ge)!r}), "
                f"the schema asks for [{to_string_binary(ws)!r}, {to_string_binary(we)!r}); "
                "drop the table or use another table name")
