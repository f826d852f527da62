"""Reading salted tables as if they were not salted.

* :func:`scan` — merged scan over every bucket, in original-key order (:mod:`.merged`)
* :func:`scan_page`, :func:`offset_page` — paging with resumable tokens (:mod:`.pages`)
* :func:`get` — point read; a multi-get over all buckets for ``random`` salt (:mod:`.get`)
* :class:`IndexedWriter`, :func:`put_record`, :func:`delete_record` — writes that keep one copy
  of a record under any prefix and never leave an index row dangling (:mod:`.writes`)
* :func:`read_by_index`, :func:`repair_index` — secondary index tables (:mod:`.index`)
* :class:`IdAllocator` — sequential ids in blocks from an atomic counter (:mod:`.ids`)
* :mod:`.inbox` — index column families inside one row (the inbox pattern)
"""

from keyshape.read.get import candidate_keys, get, get_many
from keyshape.read.ids import IdAllocator
from keyshape.read.index import RepairReport, read_by_index, repair_index
from keyshape.read.merged import MergedScan, Row, scan
from keyshape.read.pages import Page, offset_page, scan_page
from keyshape.read import index as _index
from keyshape.read.writes import IndexedWriter, delete_record, put_record

# IndexedWriter moved from read.index to read.writes, which imports read.index: the old name is set
# here, where both are loaded, so ``from keyshape.read.index import IndexedWriter`` keeps working
# without read.index importing read.writes back (a cycle).
setattr(_index, "IndexedWriter", IndexedWriter)  # noqa: B010

__all__ = [
    "IdAllocator",
    "IndexedWriter",
    "MergedScan",
    "Page",
    "RepairReport",
    "Row",
    "candidate_keys",
    "delete_record",
    "get",
    "get_many",
    "offset_page",
    "put_record",
    "read_by_index",
    "repair_index",
    "scan",
    "scan_page",
]
