"""``[[index]]`` sections of a key schema: secondary index tables.

An index table is keyed by other fields of the same records, followed by the main row key, so a
scan by the index fields finds the main rows::

    [[index]]
    name = "by_product"
    table = "orders_by_product"           # "ns:name", or name in the main table's namespace
    family = "i"                          # default "i"; its cell "row" holds the main row key
    fields = ["product_id", "order_time", "order_id"]
    hash_fields = ["product_id"]          # default: the first field (pins the bucket of a lookup)
    prefix = { strategy = "mod", buckets = 8 }   # optional, like key.prefix (not random); up to
                                          # 256 buckets, the table is created with one region each
    [[index.columns]]                     # index fields that are not key fields: type + where the
    name = "product_id"                   # main row keeps the value (text and bytes as given, not
    type = "string"                       # padded; numbers as in the index key; column default
                                          # "<first family>:<name>")
    width = 8
    column = "d:product_id"

The index row key is ``prefix + f1 + sep + f2 + ... + sep + main_key`` (the main key schema's
separator), i.e. the :class:`keyshape.schema.KeySchema` :attr:`IndexSpec.key` with a last bytes
field ``row``; reading it is a merged scan of that schema.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from keyshape.schema.fields import FieldSpec
from keyshape.schema.layout import KeyLayout
from keyshape.schema.parse import Section, parse_field, parse_prefix
from keyshape.schema.prefixes import STRATEGIES, make_prefix
from keyshape.schema.specs import FamilySpec, SplitSpec, TableSpec

# The index table's key schema: a KeySchema, built by the caller (keyshape.schema.keyschema sits
# above this module, which only reads the main key's layout).
K = TypeVar("K")

__all__ = ["IndexSpec", "parse_indexes", "ROW_FIELD"]

ROW_FIELD = "row"
MAX_PRESPLIT_BUCKETS = 256


@dataclass(frozen=True)
class IndexSpec(Generic[K]):
    """One secondary index table (see the module docstring).

    - ``name``: the index's name; ``table``: its table; ``family``: the family of its cells.
    - ``fields``: the index fields, in index-key order (before the main row key).
    - ``columns``: index field that is not a key field -> the main-row column holding its value.
    - ``key``: the index table's key schema (its fields, then a bytes field ``row``).
    """

    name: str
    table: TableSpec
    family: str
    fields: tuple[FieldSpec, ...]
    columns: dict[str, bytes]  # index field that is not a key field -> main-row column
    key: K  # of the index table: fields + ROW_FIELD

    @property
    def pointer_column(self) -> bytes:
        """The index-row cell holding the main row key."""
        return f"{self.family}:{ROW_FIELD}".encode()


def parse_indexes(top: Section, main_table: TableSpec, main_key: KeyLayout, key_schema: Callable[..., K]) -> list[IndexSpec[K]]:
    """Every ``[[index]]`` of the schema (``[]`` without any).

    - ``top``: the whole schema document; ``main_table``: the main table.
    - ``main_key``: the main table's key layout (its fields and separator).
    - ``key_schema``: builds the index table's key from ``(table, fields, separator, prefix,
      hash_fields, splits, source=...)``: ``KeySchema``, passed in so this module sits below it.
    """
    separator = main_key.separator
    by_name = {f.name: f for f in main_key.fields}
    out: list[IndexSpec[K]] = []
    for s in top.sections("index"):
        name = s.get("name", str, required=True)
        if name in {i.name for i in out}:
            s.fail("name", f"duplicate index name {name!r}", "give every index its own name")
        tname = s.get("table", str, required=True)
        ns, _, tn = tname.rpartition(":")
        family = s.get("family", str, "i")
        names = s.get("fields", list, required=True)
        extra: dict[str, FieldSpec] = {}
        columns: dict[str, bytes] = {}
        default_family = main_table.families[0].name
        for i, c in enumerate(s.sections("columns")):
            column = c.get("column", str, None)
            f = parse_field(c, i)
            if f.name in by_name:
                c.fail("name", f"{f.name!r} is a key field", "list it in fields only; its type comes from the key")
            extra[f.name] = f
            column = column or f"{default_family}:{f.name}"
            fam, colon, qualifier = column.partition(":")
            families = [fs.name for fs in main_table.families]
            if not colon or not qualifier or fam not in families:
                c.fail(
                    "column",
                    f"{column!r} is not a column of a family of table {main_table.full_name} (families: {', '.join(families)})",
                    f'use "<family>:<qualifier>" with one of them, e.g. "{default_family}:{f.name}"',
                )
            columns[f.name] = column.encode()
        if not names or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
            s.fail("fields", "must list distinct field names, at least one", 'e.g. fields = ["product_id", "order_id"]')
        fields = []
        for n in names:
            if n == ROW_FIELD:
                s.fail("fields", f"{ROW_FIELD!r} is reserved for the main row key", "rename the field")
            spec = by_name.get(n) or extra.get(n)
            if spec is None:
                s.fail(
                    "fields", f"{n!r} is neither a key field nor in [[index.columns]]", f"add [[index.columns]] name = {n!r} with its type and column"
                )
            fields.append(spec)
        for n in extra:
            if n not in names:
                s.fail("columns", f"{n!r} is not in fields", "remove it or add it to fields")
        if not separator and not all(f.self_delimiting for f in fields):
            s.fail(
                "fields",
                "a variable-width field without a separator cannot be followed by the main key",
                "give the field a width or encoding = 'ordered', or set key.separator",
            )
        strategy, options = parse_prefix(s)
        if not STRATEGIES[strategy].index_ok:
            usable = [n for n, cls in STRATEGIES.items() if cls.index_ok]
            s.fail(
                "prefix",
                f"strategy {strategy!r} is not supported for an index table",
                "use one of: " + ", ".join(usable) + " (random would make index rows unfindable)",
            )
        hash_fields = s.get("hash_fields", list, [names[0]])
        if not hash_fields or any(h not in names for h in hash_fields):
            s.fail("hash_fields", "must list index fields", f"e.g. hash_fields = [{names[0]!r}]")
        s.done()
        table = TableSpec(tn, ns or main_table.namespace, [FamilySpec(family)])
        row = FieldSpec(ROW_FIELD, "bytes", "hbase", pad="none", pad_char="\x00")
        prefix = make_prefix(strategy, **options)
        n = prefix.bucket_count()
        # a salted index table starts with one region per bucket when the buckets are few (mod,
        # phoenix); hash prefixes with 65536 values are left to split as they grow
        splits = SplitSpec("prefix") if n is not None and 1 < n <= MAX_PRESPLIT_BUCKETS else None
        key = key_schema(table, [*fields, row], separator, prefix, hash_fields, splits, source=f"{top.source} index {name}")
        out.append(IndexSpec(name, table, family, tuple(fields), columns, key))
    return out
