"""The region list of a table as hbase:meta holds it, and the names HBase gives regions and meta rows.

hbase-driver routes a row equal to a split key to the previous region and caches regions by id
only (tools/hbase/CLIENTS.md, bugs 2 and 8): ``RegionList`` bisects the whole table's list.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass

from hbasedriver.protobuf_py import HBase_pb2

__all__ = ["Region", "RegionList", "region_name", "meta_row_prefix"]


@dataclass(frozen=True)
class Region:
    """One online region: ``name`` is the full region name (the hbase:meta row key), which
    ``RegionSpecifier(type=REGION_NAME)`` and RegionLoad use."""

    name: bytes
    start: bytes
    end: bytes
    host: str
    port: int

    def spec(self) -> HBase_pb2.RegionSpecifier:
        return HBase_pb2.RegionSpecifier(type=HBase_pb2.RegionSpecifier.REGION_NAME, value=self.name)

    def contains(self, row: bytes) -> bool:
        return self.start <= row and (not self.end or row < self.end)


class RegionList:
    """A table's regions sorted by start key, for bisecting rows to regions."""

    def __init__(self, regions: list[Region]) -> None:
        self.regions = regions
        self.starts = [r.start for r in regions]

    def at(self, row: bytes) -> Region:
        """The region holding ``row`` (start inclusive, end exclusive)."""
        return self.regions[max(bisect.bisect_right(self.starts, row) - 1, 0)]

    def below(self, row: bytes) -> Region:
        """The region holding the largest key < ``row`` (for reverse scans)."""
        return self.regions[max(bisect.bisect_left(self.starts, row) - 1, 0)]


def region_name(table_name: bytes, start: bytes, region_id: int) -> bytes:
    """A region's full name as HBase writes it (``RegionInfo.createRegionName``, new format):
    ``table,start,id.`` followed by the MD5 hex of ``table,start,id`` and a dot."""
    head = table_name + b"," + start + b"," + str(region_id).encode()
    return head + b"." + hashlib.md5(head).hexdigest().encode() + b"."


def meta_row_prefix(namespace: str, table: str) -> bytes:
    name = table if namespace == "default" else f"{namespace}:{table}"
    return name.encode() + b","
