"""``[[counter]]`` sections of a key schema: id counters for :class:`keyshape.read.IdAllocator`.

::

    [[counter]]
    name = "order_id"        # the counter's row key (and its name on the command line)
    table = "ids"            # "ns:name", or a name in the main table's namespace (default: "<main>_ids");
                             # may be the main table itself
    family = "c"             # default "c"; the counter is the 8-byte cell "<family>:next" of row <name>
    block = 1000             # ids reserved per increment (default 1000)

A counter must never lose its value: if it did, ids would start again at 1 and repeat. So its
family may not have a ``ttl`` (an expired counter cell reads as 0): a counter in a family of the
main table that has one is refused when the schema is loaded. A counter in its own table gets a
family without TTL when ``keyshape create`` makes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from keyshape.schema.parse import Section
from keyshape.schema.specs import FamilySpec, TableSpec

__all__ = ["CounterSpec", "parse_counters"]

MAX_BLOCK = 10**9


@dataclass(frozen=True)
class CounterSpec:
    """One id counter (see the module docstring)."""

    name: str
    table: TableSpec
    family: str
    block: int

    @property
    def row(self) -> bytes:
        return self.name.encode()

    @property
    def column(self) -> bytes:
        return f"{self.family}:next".encode()


def parse_counters(top: Section, main_table: TableSpec) -> list[CounterSpec]:
    """Every ``[[counter]]`` of the schema (``[]`` without any)."""
    out: list[CounterSpec] = []
    own_tables: dict[str, dict[str, None]] = {}  # counter table -> its families, in order
    raw: list[tuple[str, str, str, str, int, bool]] = []  # name, namespace, table, family, block, in main
    for s in top.sections("counter"):
        name = s.get("name", str, required=True)
        if not name:
            s.fail("name", "is empty", 'e.g. name = "order_id"')
        if name in {c[0] for c in raw}:
            s.fail("name", f"duplicate counter name {name!r}", "give every counter its own name")
        tname = s.get("table", str, f"{main_table.name}_ids")
        ns, _, tn = tname.rpartition(":")
        if not tn:
            s.fail("table", f"{tname!r} is not a table name", 'e.g. table = "ids" or "ns:ids"')
        ns = ns or main_table.namespace
        in_main = (ns, tn) == (main_table.namespace, main_table.name)
        family = s.get("family", str, main_table.families[0].name if in_main else "c")
        block = s.get("block", int, 1000, minimum=1, maximum=MAX_BLOCK)
        s.done()
        if in_main:
            fam = next((f for f in main_table.families if f.name == family), None)
            if fam is None:
                s.fail(
                    "family",
                    f"{family!r} is not a family of table {main_table.full_name}",
                    "use one of: " + ", ".join(f.name for f in main_table.families),
                )
            if fam.ttl is not None:
                s.fail(
                    "family",
                    f"family {family!r} has ttl = {fam.ttl}: an expired counter reads as 0 and ids would repeat",
                    "keep the counter in a family without ttl, or in its own table",
                )
        else:
            own_tables.setdefault(f"{ns}:{tn}", {})[family] = None
        raw.append((name, ns, tn, family, block, in_main))
    for name, ns, tn, family, block, in_main in raw:
        table = main_table if in_main else TableSpec(tn, ns, [FamilySpec(f) for f in own_tables[f"{ns}:{tn}"]])
        out.append(CounterSpec(name, table, family, block))
    return out
