"""Merged scans of salted tables: one scanner per bucket, heap-merged into original-key order.

``scan(store, schema, user_id="u1")`` reads a salted table as if it were not salted: it plans one
range per bucket (``KeySchema.scan_ranges``), opens one store scanner per range and merges their
rows by ``(original key, stored key)``, a batch at a time (:mod:`keyshape.read.runs`) — see
:mod:`keyshape.read.plan` for why that order, and its tie rule: rows with EQUAL original keys in
several buckets (``random`` salt) come out ordered by stored key, i.e. by bucket prefix (reverse:
the exact reverse). Rows stream: at most one batch per bucket is held (``parallel``: ``depth``
batches), never the whole result.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from itertools import chain, starmap
from typing import TYPE_CHECKING, Any

from keyshape.errors import KeyshapeError
from keyshape.read.plan import (
    BucketRange,
    after_cursor,
    fingerprint,
    plan_ranges,
)
from keyshape.read.prefetch import PrefetchSource
from keyshape.read.runs import columns, merge_runs
from keyshape.read.token import Cursor, decode_token, encode_token

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.keyschema import KeySchema
    from keyshape.store.base import ScanBatch, Store

__all__ = ["Row", "MergedScan", "scan", "scan_bucket"]

_AUTO_ROWS = 100_000  # rows all buckets' batches may hold together when batch_size is not given


class Row:
    """One row of a salted table.

    ``key`` is the stored row key, ``original`` the key without prefix, ``cells`` the selected
    cells, ``bucket`` the prefix + separator bytes (``key == bucket + original``), ``fields`` the
    decoded key fields (decoded on first access; None when the key does not decode with the
    schema: the ``schema`` given, None when there is none).
    """

    __slots__ = ("key", "original", "cells", "_schema", "_fields")

    def __init__(self, key: bytes, original: bytes, cells: dict[bytes, bytes], schema: KeySchema | None = None) -> None:
        # _fields stays unset (an empty slot) until first asked for: one store less per row
        self.key, self.original, self.cells, self._schema = key, original, cells, schema

    @property
    def bucket(self) -> bytes:
        return self.key[: len(self.key) - len(self.original)]

    @property
    def fields(self) -> dict[str, Any] | None:
        try:
            return self._fields  # type: ignore[no-any-return]
        except AttributeError:
            pass
        try:
            self._fields: Any = None if self._schema is None else self._schema.decode(self.key)
        except KeyshapeError:
            self._fields = None
        return self._fields

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Row) and (self.key, self.cells) == (other.key, other.cells)

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        from keyshape.core.hbytes import to_string_binary

        return f"Row({to_string_binary(self.key)!r}, cells={len(self.cells)})"


def _row_maker(schema: KeySchema | None) -> type[Row]:
    """A ``Row`` class built from ``(original, key, cells)`` with ``schema`` fixed, so a merged
    chunk's tuples become Rows by ``starmap`` without a Python wrapper call per row."""

    class MergedRow(Row):
        __slots__ = ()
        _schema = schema  # type: ignore[assignment]  # one schema per scan: a class attribute

        def __init__(self, original: bytes, key: bytes, cells: dict[bytes, bytes]) -> None:  # noqa: D107
            self.key, self.original, self.cells = key, original, cells

    MergedRow.__name__ = MergedRow.__qualname__ = "Row"
    return MergedRow


def _below(key: bytes) -> bytes:
    """A reverse-scan stop (exclusive) just below ``key``: nothing but keys that sort before
    ``key`` lies between them, so the caller's filter drops at most a few rows."""
    if not key:
        return b""
    if key[-1] == 0:
        return key[:-1]
    return key[:-1] + bytes([key[-1] - 1]) + b"\xff" * 8


def scan_bucket(
    store: Store,
    table: str,
    r: BucketRange,
    *,
    reverse: bool,
    limit: int | None,
    columns: Iterable[bytes] | None,
    batch_size: int,
) -> Iterator[ScanBatch]:
    """Rows ``r.start <= key < r.stop`` of one bucket, ascending or descending, a scanner batch
    at a time (non-empty ``(keys, cells)`` columns). The scan is opened now (on HBase its first
    request is sent), so opening every bucket before reading any has all of them read at once;
    close the iterator to release it.

    A reverse HBase scan takes an inclusive upper start and an exclusive lower stop, the opposite
    of what a ``[start, stop)`` range needs, so it starts AT ``r.stop`` (skipping that one row)
    and stops just below ``r.start`` (:func:`_below`), dropping rows outside the range here.
    """
    if not reverse:
        return store.scan_batches(table, start=r.start, stop=r.stop, limit=limit, columns=columns, batch_size=batch_size)
    extra = 1 if r.stop else 0  # the row AT r.stop, returned by HBase and skipped here
    return _InRange(
        store.scan_batches(
            table,
            start=r.stop,
            stop=_below(r.start),
            reverse=True,
            limit=None if limit is None else limit + extra,
            columns=columns,
            batch_size=batch_size + extra,
        ),
        r,
    )


class _InRange:
    """A reverse bucket scan's batches (keys descending) cut to ``[r.start, r.stop)``; closing it
    closes the scan even before the first batch is read (a generator not yet started would not)."""

    def __init__(self, it: Iterator[ScanBatch], r: BucketRange) -> None:
        self._it, self._r, self._done = it, r, False

    def __iter__(self) -> _InRange:
        return self

    def __next__(self) -> ScanBatch:
        r = self._r
        while not self._done:
            keys, cells = next(self._it)
            lo, hi = 0, len(keys)
            if r.stop:
                while lo < hi and keys[lo] >= r.stop:
                    lo += 1
            if keys[-1] < r.start:
                self.close()
                while hi > lo and keys[hi - 1] < r.start:
                    hi -= 1
            if lo < hi:
                return (keys, cells) if (lo, hi) == (0, len(keys)) else (keys[lo:hi], cells[lo:hi])
        raise StopIteration

    def close(self) -> None:
        self._done = True
        close = getattr(self._it, "close", None)
        if close is not None:
            close()


class MergedScan:
    """An iterator over the merged rows of one query (what :func:`scan` returns).

    Besides iterating, it gives :attr:`ranges` (the bucket ranges it reads) and
    :meth:`token_after` (a page token that resumes right after a row). Close it (or use ``with``)
    to release scanners early; exhausting it closes them too.

    Built by :func:`scan`, whose parameters it takes: ``store``, ``schema``, ``reverse``,
    ``limit``, ``columns``, ``batch_size``, ``parallel`` and ``depth`` as given there; ``ranges``:
    the bucket ranges still to read (after a page token's cursor), ``base`` the query's own (what
    a page token is checked against); ``keep``: a filter on original keys (exact leading-field
    matches), None to keep all.
    """

    def __init__(
        self,
        store: Store,
        schema: KeySchema,
        ranges: list[BucketRange],
        base: list[BucketRange],
        *,
        reverse: bool,
        limit: int | None,
        columns: Iterable[bytes] | None,
        batch_size: int | None,
        parallel: int,
        depth: int,
        keep: Callable[[bytes], bool] | None = None,
    ) -> None:
        self.store, self.schema, self.ranges, self.reverse = store, schema, ranges, reverse
        self._keep = keep
        self.table = schema.table.full_name
        self.check = fingerprint(self.table, base, reverse)
        self._limit, self._columns = limit, None if columns is None else list(columns)
        self._batch, self._parallel, self._depth = batch_size, parallel, depth
        # _run yields a lazy iterator of Rows per merged chunk; chain (C) hands them out with no
        # generator step per row, and exhausting the chunks runs their cleanup.
        self._gen = self._run()
        self._flat = chain.from_iterable(self._gen)

    def token_after(self, row: Row | bytes) -> str:
        """A page token whose scan continues right after ``row`` (a Row or its stored key)."""
        key = row.key if isinstance(row, Row) else bytes(row)
        return encode_token(Cursor(key, self.check, self.reverse))

    def __iter__(self) -> MergedScan:
        return self

    def __next__(self) -> Row:
        return next(self._flat)

    def close(self) -> None:
        self._gen.close()

    def __enter__(self) -> MergedScan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> Generator[Iterator[Row], None, None]:
        limit = self._limit
        if limit == 0 or not self.ranges:
            return
        batch = self._batch
        if batch is None:
            # Fewer round trips per bucket where memory allows: about _AUTO_ROWS rows held in
            # all the buckets' batches together, 1,000 to 10,000 per bucket.
            batch = max(1000, min(10_000, _AUTO_ROWS // len(self.ranges)))
        # No bucket can contribute more than the global limit, so no scanner is asked for more
        # (unless rows are filtered after reading: then a bucket may have to read past it).
        batch = batch if limit is None else max(1, min(batch, limit))
        per_bucket = limit if self._keep is None else None
        raw: list[Any] = []  # opened inside the try, so a failure opening one closes the others
        pool = None
        sources: list[Any] = raw
        chunks = None
        try:
            for r in self.ranges:
                raw.append(scan_bucket(self.store, self.table, r, reverse=self.reverse, limit=per_bucket, columns=self._columns, batch_size=batch))
            if self._parallel > 0 and len(raw) > 1:
                pool = ThreadPoolExecutor(max_workers=self._parallel, thread_name_prefix="keyshape-scan")
                sources = [PrefetchSource(it, pool, self._depth) for it in raw]
                for s in sources:
                    s.start()
            tuples = columns(self.schema.prefix, self._keep)

            def fetcher(source: Any) -> Callable[[], Any]:
                if pool is not None:

                    def fetch() -> Any:
                        got = source.next_batch()
                        return None if got is None else tuples(got)
                else:

                    def fetch() -> Any:
                        got = next(source, None)  # one scanner batch, as the server sent it
                        return None if got is None else tuples(got)

                return fetch

            # Only a random salt can store one original key in two buckets.
            chunks = merge_runs([fetcher(s) for s in sources], self.reverse, unique=self.schema.prefix.deterministic)
            make = _row_maker(self.schema)
            left = limit
            for originals, keys, values in chunks:
                if left is not None:
                    if len(keys) >= left:
                        originals, keys, values = originals[:left], keys[:left], values[:left]
                    left -= len(keys)
                # Rows are made one at a time as they are handed out (starmap over zip, in C),
                # so a row the caller drops dies at once: a chunk of live Rows would be promoted
                # through the garbage collector's generations and set off full collections.
                yield starmap(make, zip(originals, keys, values))
                if left is not None and left <= 0:
                    return
        finally:
            if chunks is not None:
                chunks.close()
            for s in sources:  # the bucket scanners, or the prefetchers that close them
                s.close()
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)


def exact_match(schema: KeySchema, leading: Mapping[str, Any]) -> Callable[[bytes], bool] | None:
    """A filter for the rows ``scan_ranges`` over-covers, or None when its ranges are exact.

    A given variable-width field that is neither fixed-width nor self-delimiting is matched by
    its bytes plus the separator, so ``u="a"`` also covers ``u="a_b"`` when values may hold the
    separator; those rows are dropped by decoding the key and comparing that field's encoding.
    Keys that do not decode with the schema are dropped too (they are not rows of this query).
    """
    if not schema.separator:
        return None
    fields = [schema.field(n) for n, v in leading.items() if not isinstance(v, (tuple, list)) and not schema.field(n).self_delimiting]
    if not fields:
        return None
    wanted = {f.name: f.encode(leading[f.name]) for f in fields}

    def keep(key: bytes) -> bool:
        try:
            got = schema.decode(key)
        except KeyshapeError:
            return False
        return all(schema.field(n).encode(got[n]) == w for n, w in wanted.items())

    return keep


def scan(
    store: Store,
    schema: KeySchema,
    *,
    start: bytes | None = None,
    stop: bytes | None = None,
    limit: int | None = None,
    reverse: bool = False,
    columns: Iterable[bytes] | None = None,
    batch_size: int | None = None,
    parallel: int = 0,
    page_token: str | None = None,
    after: bytes | None = None,
    where: Mapping[str, Any] | None = None,
    depth: int = 2,
    **leading_fields: Any,
) -> MergedScan:
    """Rows of ``schema``'s table in original-key order, merged over every bucket.

    - ``store``: the store holding the table.
    - ``schema``: the table's key schema (its prefix says which buckets to merge).
    - ``start``, ``stop``: bounds on the ORIGINAL key (prefix stripped), ``start`` inclusive,
      ``stop`` exclusive (``start <= original < stop``) in either direction; default None: open.
    - ``limit``: the most rows yielded (exact, over all buckets); default None: all. Every
      bucket scanner is asked for at most ``limit`` rows and closed as soon as it is reached.
    - ``reverse``: the exact reverse order (descending original key, ties by descending stored
      key); default False.
    - ``columns``: the ``b"family:qualifier"`` columns (or ``b"family"``) to return; default None: all.
    - ``batch_size``: rows per round trip and bucket (``min(batch_size, limit)``); default None:
      1,000 to 10,000 rows per bucket, about 100,000 over all buckets.
    - ``parallel``: fetch the buckets on this many threads (0, the default: on the calling
      thread); the order is the same.
    - ``page_token``: resume strictly after the row a :class:`~keyshape.read.pages.Page` token
      names (same query); default None.
    - ``after``: resume strictly after this stored key (prefix included); default None.
    - ``where``: leading key fields, as ``leading_fields``, for names that clash with these options.
    - ``depth``: batches kept per bucket when ``parallel`` (default 2, at least 1).
    - ``leading_fields``: the leading key fields as in ``KeySchema.scan_ranges`` (the last may
      be a ``(lo, hi)`` range, ``lo`` inclusive, ``hi`` exclusive); rows those ranges
      over-cover (a separator inside a variable-width value) are dropped (:func:`exact_match`).

    Validation and planning happen here (KeyshapeError for bad arguments); rows are read while
    iterating the returned :class:`MergedScan`.
    """
    if limit is not None and limit < 0:
        raise KeyshapeError(f"scan: limit must be >= 0, got {limit}")
    if (batch_size is not None and batch_size < 1) or parallel < 0 or depth < 1:
        raise KeyshapeError("scan: batch_size and depth must be >= 1 and parallel >= 0")
    leading = {**(where or {}), **leading_fields}
    base = plan_ranges(schema, leading, start, stop)
    ranges = base
    if page_token is not None:
        if after is not None:
            raise KeyshapeError("scan: give page_token or after, not both")
        cur = decode_token(page_token)
        if cur.reverse != reverse or cur.check != fingerprint(schema.table.full_name, base, reverse):
            raise KeyshapeError(
                "scan: the page token belongs to another query (table, fields, start/stop or direction "
                "differ); repeat the first page's arguments with the token"
            )
        after = cur.after
    if after is not None:
        ranges = after_cursor(schema, base, after, reverse)
    return MergedScan(
        store,
        schema,
        ranges,
        base,
        reverse=reverse,
        limit=limit,
        columns=columns,
        batch_size=batch_size,
        parallel=parallel,
        depth=depth,
        keep=exact_match(schema, leading),
    )
