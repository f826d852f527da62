"""The one Store protocol every keyshape store implements (embedded, HBase).

The data model is happybase's: a table name is ``"ns:name"`` or ``"name"`` (namespace ``default``);
a row is ``bytes``; a row's cells are ``dict[bytes, bytes]`` keyed ``b"family:qualifier"``. Ranges
follow HBase: ``[start, stop)`` with ``b""`` meaning unbounded; keys compare as unsigned bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from keyshape.core.hbytes import next_prefix, to_string_binary
from keyshape.errors import BadInput, StoreError

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.specs import TableSpec

__all__ = [
    "BatchWriter",
    "RegionInfo",
    "RegionRecord",
    "ScanBatch",
    "ServerInfo",
    "AdminStore",
    "DataStore",
    "Store",
    "split_table_name",
    "join_table_name",
    "as_bytes",
    "scan_bounds",
    "check_regions",
]

DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class RegionInfo:
    """One region of a table, as a region server reports it (HBase ``RegionLoad``).

    - ``start`` is inclusive and ``end`` exclusive; ``b""`` means unbounded.
    - ``name``: the region's name, as hbase:meta gives it; ``server``: the ``host:port`` of
      the region server holding it.
    - ``read_requests`` / ``write_requests``: the region's request counters since it opened;
      ``store_size_bytes``: its size (memstore and store files).
    - ``parents``: the regions this one was split or merged from, while hbase:meta still records
      them (empty when unknown: then LiveHeat follows the key ranges); ``parents_closed_ms``: when
      each of them had closed (stopped taking writes), epoch ms; 0 when unknown.
    - ``reported_ms``: when the counters were taken (the region server's report, epoch ms); 0 when
      unknown.
    - ``memstore_bytes`` / ``store_files``: the memstore's part of ``store_size_bytes`` and the store
      files behind the rest (RegionLoad ``memstore_size_MB``, ``storefiles``); 0 when the store
      does not report them.
    """

    start: bytes
    end: bytes
    name: str
    server: str
    read_requests: int
    write_requests: int
    store_size_bytes: int
    parents: tuple[str, ...] = ()
    reported_ms: int = 0
    parents_closed_ms: tuple[int, ...] = ()
    memstore_bytes: int = 0
    store_files: int = 0


@dataclass(frozen=True)
class RegionRecord:
    """One region row of hbase:meta, online or not: ``created_ms`` is its region id (the time it
    was created: table creation, or the split/merge that made it), ``split`` marks a split
    parent (offline, kept until the catalog janitor removes it), ``opened_ms`` when its state
    became OPEN (None when it is not open): for a split's daughter, ``opened_ms - created_ms``
    is how long the split took."""

    name: str
    start: bytes
    end: bytes
    created_ms: int
    split: bool
    offline: bool
    opened_ms: int | None = None


@dataclass(frozen=True)
class ServerInfo:
    """One live region server, as the master reports it (HBase ``ServerLoad``).

    ``name`` is ``host:port`` (what ``RegionInfo.server`` holds); ``regions`` the regions it
    serves. The request counters (``read_requests``, ``write_requests``) are the sums over the
    regions it serves now, so they restart when a region moves in or out;
    ``requests_per_second`` is the master's current rate, ``used_heap_mb`` / ``max_heap_mb`` the
    JVM heap (0 when not reported).
    """

    name: str
    regions: int
    read_requests: int
    write_requests: int
    requests_per_second: int = 0
    used_heap_mb: int = 0
    max_heap_mb: int = 0


def check_regions(regions: Sequence[RegionInfo], split_keys: Sequence[bytes], table: str = "") -> None:
    """Raise ``StoreError`` unless ``regions`` (in key order) are exactly the regions
    ``split_keys`` define (in any order): ``[b"", k1), [k1, k2), ..., [kn, b"")``.

    The message names the first boundary that differs, in toStringBinary form.
    """
    want = sorted(bytes(k) for k in split_keys)
    expected = list(zip([b""] + want, want + [b""]))
    got = [(bytes(r.start), bytes(r.end)) for r in regions]
    if got == expected:
        return
    label = f"table {table!r}" if table else "the table"
    if len(got) != len(expected):
        raise StoreError(
            f"{label} has {len(got)} region(s), the schema asks for {len(expected)}; "
            "it was created with other split keys (or has split since): drop it or "
            "use another table name"
        )
    i, ((gs, ge), (ws, we)) = next((i, pair) for i, pair in enumerate(zip(got, expected)) if pair[0] != pair[1])
    raise StoreError(
        f"{label}: region {i} is [{to_string_binary(gs)!r}, {to_string_binary(ge)!r}), "
        f"the schema asks for [{to_string_binary(ws)!r}, {to_string_binary(we)!r}); "
        "drop the table or use another table name"
    )


def split_table_name(name: str) -> tuple[str, str]:
    """``"ns:t"`` -> ``("ns", "t")``; ``"t"`` -> ``("default", "t")``. Raises ValueError on junk."""
    if not isinstance(name, str) or not name:
        raise BadInput(f"a table name must be a non-empty str like 'ns:table', got {name!r}")
    namespace, sep, table = name.partition(":")
    if not sep:
        namespace, table = DEFAULT_NAMESPACE, name
    if not namespace or not table or ":" in table:
        raise BadInput(f"bad table name {name!r}: use 'table' or 'namespace:table'")
    return namespace, table


def join_table_name(namespace: str, table: str) -> str:
    """The canonical name HBase lists: ``"t"`` in the default namespace, else ``"ns:t"``."""
    return table if namespace == DEFAULT_NAMESPACE else f"{namespace}:{table}"


def as_bytes(value: Any, what: str) -> bytes:
    """``value`` as ``bytes`` (bytes, bytearray and memoryview are accepted); anything else
    raises StoreError naming ``what`` (e.g. "a row key"), since stores keep raw bytes only."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise StoreError(f"{what} must be bytes, got {type(value).__name__} {value!r}")


Bound = tuple[bytes | None, bool]
# One scanner batch as columns: the row keys and, row for row, their cells (Store.scan_batches).
ScanBatch = tuple[list[bytes], list[dict[bytes, bytes]]]
"""One end of a scan's key range: ``(key, inclusive)``; ``None`` means unbounded."""


def scan_bounds(start: Any, stop: Any, prefix: Any, reverse: bool, limit: int | None, batch_size: int) -> tuple[Bound, Bound]:
    """Check ``Store.scan``'s arguments and turn them into ``(low, high)`` key bounds.

    Forward: ``low = (start, inclusive)``, ``high = (stop, exclusive)``. Reverse (HBase's reversed
    Scan): ``low = (stop, exclusive)``, ``high = (start, inclusive)``. A prefix gives
    ``[prefix, next_prefix(prefix))`` in either direction. Raises ValueError for a prefix combined
    with start/stop, a negative ``limit`` or a ``batch_size`` below 1; StoreError for non-bytes.
    """
    start, stop = as_bytes(start, "start"), as_bytes(stop, "stop")
    if prefix is not None:
        if start or stop:
            raise BadInput("scan: give either prefix or start/stop, not both")
        prefix = as_bytes(prefix, "prefix")
    if limit is not None and limit < 0:
        raise BadInput(f"scan: limit must be >= 0, got {limit}")
    if batch_size < 1:
        raise BadInput(f"scan: batch_size must be >= 1, got {batch_size}")
    if prefix is not None:
        return (prefix or None, True), (next_prefix(prefix) or None, False)
    if reverse:
        return (stop or None, False), (start or None, True)
    return (start or None, True), (stop or None, False)


@runtime_checkable
class BatchWriter(Protocol):
    """A buffered writer (HBase ``BufferedMutator``; happybase ``Batch``).

    Mutations are buffered and sent when the buffer reaches the writer's row or byte limit, on
    ``flush()``, and when the ``with`` block exits. After ``flush()`` returns (or the block exits
    normally) every buffered mutation is stored; otherwise ``WriteFailed`` is raised and its
    ``rows`` names every row not written.

    ``written`` counts the mutations this writer has had stored so far (acknowledged by the
    store), so a caller can report exact progress while later batches are still in flight.
    """

    written: int

    def put(self, row: bytes, cells: Mapping[bytes, bytes], timestamp: int | None = None) -> None: ...

    def delete(self, row: bytes, columns: Iterable[bytes] | None = None) -> None: ...

    def flush(self) -> None: ...

    def __enter__(self) -> BatchWriter: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


@runtime_checkable
class DataStore(Protocol):
    """The data part of a store: rows written, read, scanned, deleted and counted, with HBase's
    data model. What a reader or a loader needs; typed on its own so a function that only moves
    rows says so.

    ``columns`` arguments select cells: ``b"family"`` selects a whole family and
    ``b"family:qualifier"`` one column; ``None`` selects everything. Unknown tables raise
    ``TableNotFound``; other refusals raise ``StoreError``.
    """

    def put(self, table: str, row: bytes, cells: Mapping[bytes, bytes], timestamp: int | None = None) -> None:
        """Write ``cells`` to ``row`` at ``timestamp`` (ms; default: now). A cell with the same
        row, column and timestamp is replaced; each family keeps its newest ``versions``."""
        ...

    def writer(self, table: str, batch_size: int = 1000, max_bytes: int = 2 * 1024 * 1024) -> BatchWriter:
        """A buffered writer for ``table`` (see ``BatchWriter``)."""
        ...

    def get(self, table: str, row: bytes, columns: Iterable[bytes] | None = None) -> dict[bytes, bytes]:
        """Newest value of each selected cell of ``row``; ``{}`` when the row has none."""
        ...

    def cells(self, table: str, row: bytes, column: bytes, versions: int | None = None) -> list[tuple[int, bytes]]:
        """Stored versions of one cell, newest first, as ``(timestamp_ms, value)``; at most
        ``versions`` of them (default all the family keeps)."""
        ...

    def get_many(self, table: str, rows: Iterable[bytes], columns: Iterable[bytes] | None = None) -> list[tuple[bytes, dict[bytes, bytes]]]:
        """Like ``get`` for many rows: ``(row, cells)`` for rows that have selected cells, in
        request order; absent rows are left out."""
        ...

    def scan(
        self,
        table: str,
        start: bytes = b"",
        stop: bytes = b"",
        prefix: bytes | None = None,
        reverse: bool = False,
        limit: int | None = None,
        columns: Iterable[bytes] | None = None,
        batch_size: int = 1000,
    ) -> Iterator[tuple[bytes, dict[bytes, bytes]]]:
        """Rows in key order, streamed ``batch_size`` rows per round trip.

        Forward: ``start <= row < stop``. ``reverse=True`` works like HBase's reversed Scan with
        ``withStartRow(start)``/``withStopRow(stop)``: descending rows with ``stop < row <=
        start`` (empty start: from the last row). ``prefix`` selects rows starting with it (in
        either direction) and cannot be combined with start/stop. ``limit`` caps rows returned;
        rows without selected cells are skipped.
        """
        ...

    def scan_batches(
        self,
        table: str,
        start: bytes = b"",
        stop: bytes = b"",
        prefix: bytes | None = None,
        reverse: bool = False,
        limit: int | None = None,
        columns: Iterable[bytes] | None = None,
        batch_size: int = 1000,
    ) -> Iterator[ScanBatch]:
        """``scan`` a round trip at a time: the same rows in the same order, as non-empty column
        pairs ``(keys, cells)`` (row ``i`` is ``keys[i], cells[i]``), for readers that work on runs
        of rows, like the merged salted scan. Columns, not a tuple per row: a reader holding
        ~100,000 rows in flight would otherwise allocate as many objects for the garbage collector
        to track (a quarter of a merged scan's time went to collections)."""
        ...

    def scan_versions(
        self, table: str, start: bytes = b"", stop: bytes = b"", batch_size: int = 1000
    ) -> Iterator[tuple[bytes, dict[bytes, list[tuple[int, bytes]]]]]:
        """Rows with ``start <= row < stop`` in key order, each with EVERY visible version of
        every cell: ``{b"family:qualifier": [(timestamp_ms, value), ...]}``, newest first, as a
        Scan with all versions returns them (deleted and expired cells are not visible)."""
        ...

    def scan_keys(
        self,
        table: str,
        start: bytes = b"",
        stop: bytes = b"",
        limit: int | None = None,
        batch_size: int = 1000,
    ) -> Iterator[bytes]:
        """Row keys with ``start <= row < stop`` in key order, at most ``limit``; the values stay
        on the server (a key-only scan)."""
        ...

    def scan_key_times(
        self,
        table: str,
        start: bytes = b"",
        stop: bytes = b"",
        limit: int | None = None,
        batch_size: int = 1000,
    ) -> Iterator[tuple[list[bytes], list[int]]]:
        """``scan_keys`` a batch at a time, with the timestamp (ms) of each row's first cell
        (for a row written once: when it was written): non-empty ``(keys, timestamps)`` columns
        in key order, at most ``limit`` rows in all."""
        ...

    def delete(self, table: str, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        """Delete the whole row, or all versions of the selected columns/families."""
        ...

    def increment(self, table: str, row: bytes, column: bytes, amount: int = 1) -> int:
        """Atomically add ``amount`` to an 8-byte big-endian signed long cell (absent: 0) and
        return the new value, as HBase's Increment does."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class AdminStore(Protocol):
    """The admin part of a store (HBase's ``Admin``): namespaces, tables, their regions with
    request counters and sizes, splits and moves, region servers and the balancer. Unknown
    tables raise ``TableNotFound``; other refusals raise ``StoreError``."""

    def create_namespace(self, namespace: str) -> None:
        """Create a namespace; StoreError if it exists."""
        ...

    def namespace_exists(self, namespace: str) -> bool: ...

    def create_table(self, spec: TableSpec, split_keys: Sequence[bytes] = ()) -> None:
        """Create the table ``spec`` (a ``keyshape.schema.TableSpec``) pre-split at ``split_keys``
        (sorted here, as HBase's Admin does; duplicates and b"" are refused). The namespace must
        exist (StoreError otherwise, as in HBase); the table must not."""
        ...

    def delete_table(self, name: str) -> None:
        """Disable and delete a table; TableNotFound if absent."""
        ...

    def table_exists(self, name: str) -> bool: ...

    def list_tables(self) -> list[str]:
        """Names of all user tables, sorted, in the form ``join_table_name`` gives."""
        ...

    def regions(self, table: str) -> list[RegionInfo]:
        """The table's regions in key order, with request counters and store sizes."""
        ...

    def split_region(self, table: str, split_key: bytes, timeout: float = 60.0) -> list[RegionInfo]:
        """Split the region holding ``split_key`` at exactly that key (HBase Admin
        ``split(table, splitPoint)``) and wait until both daughters are online; returns them.
        StoreError when the key already starts a region (nothing to split)."""
        ...

    def move_region(self, region_name: str, server: str | None = None, timeout: float = 60.0) -> str:
        """Move the region named ``region_name`` (``RegionInfo.name``) to ``server``
        (``host:port``; None: any other live server), wait until it is online there and return
        the server it is on now."""
        ...

    def region_servers(self) -> list[ServerInfo]:
        """The live region servers, sorted by name, with region counts and request loads."""
        ...

    def set_balancer(self, on: bool) -> bool:
        """Switch the balancer on or off; returns whether it was on before."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Store(DataStore, AdminStore, Protocol):
    """A key-value store with HBase's data model and region layout: its data part
    (:class:`DataStore`) and its admin part (:class:`AdminStore`). Every store keyshape opens
    (embedded, HBase) is both; functions take the part they use where that is one."""
