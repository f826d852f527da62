"""The table-level parts of a key schema: table, column families and the ``[splits]`` section.

These are plain frozen records; :mod:`keyshape.schema.parse` builds them from a schema file and
:class:`keyshape.schema.KeySchema` (which re-exports them) carries them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["FamilySpec", "TableSpec", "SplitSpec"]


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


@dataclass(frozen=True)
class TableSpec:
    """A table: name, namespace and column families."""

    name: str
    namespace: str = "default"
    families: list[FamilySpec] = field(default_factory=lambda: [FamilySpec("d")])

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
