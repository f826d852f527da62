"""Paging through a salted table: page tokens, offset/limit, and start-key paging.

Three ways, all over the merged order of :mod:`keyshape.read.merged`:

* **Page tokens** (:func:`scan_page`, recommended). The token holds the stored key of the last
  row returned (see :mod:`keyshape.read.token`); the next call resumes every bucket exactly after
  it. No row is returned twice and none is skipped, even when rows are written between calls:
  rows written behind the cursor are not returned, rows written ahead of it are. Cost per page:
  ``page_size + 1`` rows plus one scanner per bucket.
* **Offset/limit** (:func:`offset_page`, the usual first attempt): re-reads and drops ``offset``
  rows on every page, so page ``k`` costs ``O(k * page_size)`` rows read, and rows inserted or
  deleted before the offset shift the window (a row can be seen twice or never). Fine for the
  first few small pages of a UI; use tokens for anything else.
* **Start-key paging**: pass ``page.next_key`` as ``start=`` (forward) or ``stop=`` (reverse) of
  the next :func:`scan_page` call. It is stateless and readable, but it moves by ORIGINAL key:
  with ``random`` salt, rows whose original key equals the last one returned but that sort after
  it (a later bucket) are skipped. Tokens do not have that gap.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from keyshape.errors import KeyshapeError
from keyshape.read.merged import Row, scan

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.keyschema import KeySchema
    from keyshape.store.base import Store

__all__ = ["Page", "scan_page", "offset_page"]


@dataclass(frozen=True)
class Page:
    """One page of rows: ``rows``, in scan order.

    ``next_token``: resume with ``scan_page(..., page_token=next_token)`` (None: no more rows).
    ``next_offset``: the offset of the next page for :func:`offset_page` (None: no more rows or
    not an offset page). ``next_key``: for start-key paging (None: no more rows).
    """

    rows: list[Row]
    next_token: str | None
    next_offset: int | None = None
    next_key: bytes | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)


def _next_key(row: Row, reverse: bool) -> bytes:
    # Forward: the smallest original key after row's; reverse: row's key as exclusive stop.
    return row.original if reverse else row.original + b"\x00"


def scan_page(
    store: Store,
    schema: KeySchema,
    page_size: int,
    page_token: str | None = None,
    *,
    start: bytes | None = None,
    stop: bytes | None = None,
    reverse: bool = False,
    columns: Iterable[bytes] | None = None,
    batch_size: int = 1000,
    parallel: int = 0,
    where: Mapping[str, Any] | None = None,
    **leading_fields: Any,
) -> Page:
    """Up to ``page_size`` rows of the query, after ``page_token`` when given.

    - ``store``, ``schema``: the store and the table's key schema.
    - ``page_size``: the most rows on the page (at least 1).
    - ``page_token``: the ``next_token`` of the previous page of the same query; default None:
      the first page. A token from another query raises KeyshapeError.
    - ``start``, ``stop``: original-key bounds, ``start`` inclusive, ``stop`` exclusive; default open.
    - ``reverse``: descending original-key order (default False).
    - ``columns``: the columns to return (default None: all).
    - ``batch_size``: rows per round trip and bucket (default 1000).
    - ``parallel``: threads fetching the buckets (default 0: the calling thread).
    - ``where``, ``leading_fields``: the leading key fields, as in :func:`keyshape.read.scan`.

    Pass the same query arguments with every token of a sequence. ``page_size + 1`` rows are
    read so the last page says so (``next_token is None``) instead of an empty page after it.
    """
    if page_size < 1:
        raise KeyshapeError(f"page_size must be >= 1, got {page_size}")
    with scan(
        store,
        schema,
        start=start,
        stop=stop,
        limit=page_size + 1,
        reverse=reverse,
        columns=columns,
        batch_size=batch_size,
        parallel=parallel,
        page_token=page_token,
        where=where,
        **leading_fields,
    ) as it:
        rows = list(islice(it, page_size + 1))
        more = len(rows) > page_size
        rows = rows[:page_size]
        token = it.token_after(rows[-1]) if more else None
    return Page(rows, token, None, _next_key(rows[-1], reverse) if more else None)


def offset_page(
    store: Store,
    schema: KeySchema,
    offset: int,
    page_size: int,
    *,
    start: bytes | None = None,
    stop: bytes | None = None,
    reverse: bool = False,
    columns: Iterable[bytes] | None = None,
    batch_size: int = 1000,
    where: Mapping[str, Any] | None = None,
    **leading_fields: Any,
) -> Page:
    """Rows ``offset .. offset + page_size - 1`` of the query (skip N, take M).

    - ``store``, ``schema``: the store and the table's key schema.
    - ``offset``: rows to skip (at least 0); ``page_size``: the most rows returned (at least 1).
    - ``start``, ``stop``: original-key bounds, ``start`` inclusive, ``stop`` exclusive; default open.
    - ``reverse``: descending original-key order (default False).
    - ``columns``: the columns to return (default None: all).
    - ``batch_size``: rows per round trip and bucket (default 1000).
    - ``where``, ``leading_fields``: the leading key fields, as in :func:`keyshape.read.scan`.

    Reads ``offset + page_size + 1`` rows through the merge every time (see the module
    docstring for the cost and the consistency caveat).
    """
    if offset < 0 or page_size < 1:
        raise KeyshapeError(f"offset must be >= 0 and page_size >= 1, got {offset}, {page_size}")
    with scan(
        store,
        schema,
        start=start,
        stop=stop,
        limit=offset + page_size + 1,
        reverse=reverse,
        columns=columns,
        batch_size=batch_size,
        where=where,
        **leading_fields,
    ) as it:
        rows = list(islice(it, offset, offset + page_size + 1))
        more = len(rows) > page_size
        rows = rows[:page_size]
        token = it.token_after(rows[-1]) if more else None
    return Page(rows, token, offset + page_size if more else None, _next_key(rows[-1], reverse) if more else None)
