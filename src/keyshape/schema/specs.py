"""The table-level parts of a key schema: table, column families and the ``[splits]`` section.

These are plain frozen records; :mod:`keyshape.schema.parse` builds them from a schema file and
:class:`keyshape.schema.KeySchema` (which re-exports them) carries them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["FamilySpec", "SPLIT_POLICIES", "SplitSpec", "TABLE_ATTRIBUTES", "TableSpec"]


@dataclass(frozen=True)
class FamilySpec:
    """A column family and the HBase attributes keyshape creates it with."""

    name: str
    versions: int = 1
    compression: str = "NONE"
    bloom_filter: str = "ROW"
    block_size: int = 65536
    ttl: int | None = None
    in_memory: bool = False
    data_block_encoding: str = "NONE"


# The [table] settings keyshape applies on create, by their HBase table-descriptor names.
TABLE_ATTRIBUTES = {
    "max_filesize": "MAX_FILESIZE",
    "memstore_flushsize": "MEMSTORE_FLUSHSIZE",
    "durability": "DURABILITY",
    "region_replication": "REGION_REPLICATION",
    "split_policy": "SPLIT_POLICY",
}
# split_policy short names -> HBase's classes (a full class name is taken as it is).
SPLIT_POLICIES = {
    "stepping": "org.apache.hadoop.hbase.regionserver.SteppingSplitPolicy",
    "increasing": "org.apache.hadoop.hbase.regionserver.IncreasingToUpperBoundRegionSplitPolicy",
    "constant": "org.apache.hadoop.hbase.regionserver.ConstantSizeRegionSplitPolicy",
    "disabled": "org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy",
    "busy": "org.apache.hadoop.hbase.regionserver.BusyRegionSplitPolicy",
}


@dataclass(frozen=True)
class TableSpec:
    """A table: name, namespace, column families and table-descriptor attributes (HBase names:
    ``MAX_FILESIZE``, ``MEMSTORE_FLUSHSIZE``, ``DURABILITY``, ``REGION_REPLICATION``,
    ``SPLIT_POLICY``; values as HBase stores them, text)."""

    name: str
    namespace: str = "default"
    families: list[FamilySpec] = field(default_factory=lambda: [FamilySpec("d")])
    attributes: dict[str, str] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        """``"ns:name"``, or just ``"name"`` in the default namespace (HBase's convention)."""
        return self.name if self.namespace == "default" else f"{self.namespace}:{self.name}"


@dataclass(frozen=True)
class SplitSpec:
    """The ``[splits]`` section: the algorithm and its options, as written."""

    algorithm: str
    regions: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
