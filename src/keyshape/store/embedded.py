"""An in-process store with HBase's data model, region layout and request counters.

Rows live in one ``SortedDict`` per table (O(log n) inserts, ordered iteration); each cell keeps
its newest versions, as many as its family's ``versions``, with HBase's timestamps, delete
markers and TTL (``keyshape.store.cells``). Regions are routed exactly like HBase
(``[start, end)`` from the split keys) and count reads and writes like ``RegionLoad``:
a get counts one read on its row's region, every scanned row one read, every put, delete or
increment one write. Thread-safe: one lock guards every table.
"""

from __future__ import annotations

import bisect
import itertools
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from keyshape.core.autosplit import RowLimit, middle_index
from keyshape.core.hbytes import to_string_binary
from keyshape.core.regions import RegionMap
from keyshape.core.splits import verify_split_keys
from keyshape.errors import BadInput, KeyshapeError, StoreError, TableNotFound, WriteFailed
from keyshape.store.base import (
    RegionInfo,
    ScanBatch,
    ServerInfo,
    as_bytes,
    join_table_name,
    scan_bounds,
    split_table_name,
)
from keyshape.store.cells import Cells, Families, Selection, now_ms, select

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.specs import TableSpec

__all__ = ["EmbeddedStore"]

_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9_]+$")


@dataclass
class _Region:
    start: bytes
    end: bytes
    region_id: int
    server: int
    reads: int = 0
    writes: int = 0


class _Table:
    def __init__(self, namespace: str, name: str, families: Families, splits: list[bytes]):
        self.namespace = namespace
        self.name = name
        self.cells = Cells(families)
        self.splits: list[bytes] = list(splits)
        self.regions: list[_Region] = []

    @property
    def full_name(self) -> str:
        return join_table_name(self.namespace, self.name)

    @property
    def families(self) -> Families:
        return self.cells.families

    def region_of(self, row: bytes) -> _Region:
        return self.regions[bisect.bisect_right(self.splits, row)]


class EmbeddedStore:
    """The in-process store (see the module docstring).

    ``auto_split_rows``: when set, a region holding more rows than this after a write splits at
    its middle row key (the lower daughter keeps the rows below it): the one auto-split rule,
    ``keyshape.core.autosplit.RowLimit``, that ``simulate_auto_split`` and the split simulator's
    "rows" policy apply too. ``servers``: how many
    simulated region servers the regions are dealt to, round-robin.
    """

    def __init__(self, auto_split_rows: int | None = None, servers: int = 1) -> None:
        if auto_split_rows is not None and auto_split_rows < 1:
            raise BadInput(f"auto_split_rows must be >= 1 or None, got {auto_split_rows}")
        if servers < 1:
            raise BadInput(f"servers must be >= 1, got {servers}")
        self.auto_split_rows = auto_split_rows
        self._split_rule = None if auto_split_rows is None else RowLimit(max_rows=auto_split_rows)
        self.servers = servers
        self._lock = threading.RLock()
        self._namespaces: set[str] = {"default", "hbase"}
        self._tables: dict[tuple[str, str], _Table] = {}
        self._region_ids = itertools.count(1)
        self._balancer = True  # kept for the Store protocol; nothing here moves regions on its own
        self._closed = False

    # --- namespaces and tables -------------------------------------------------------------

    def create_namespace(self, namespace: str) -> None:
        """Create ``namespace``; StoreError if it exists or the name is not [A-Za-z0-9_]+."""
        if not isinstance(namespace, str) or not _NAMESPACE_RE.match(namespace):
            raise StoreError(f"bad namespace name {namespace!r}: use letters, digits and '_'")
        with self._lock:
            self._check_open()
            if namespace in self._namespaces:
                raise StoreError(f"namespace {namespace!r} already exists")
            self._namespaces.add(namespace)

    def namespace_exists(self, namespace: str) -> bool:
        with self._lock:
            return namespace in self._namespaces

    def list_namespaces(self) -> list[str]:
        with self._lock:
            return sorted(self._namespaces)

    def delete_namespace(self, namespace: str) -> None:
        """Remove an empty namespace; StoreError if it holds tables or is a built-in one."""
        with self._lock:
            if namespace in ("default", "hbase") or namespace not in self._namespaces:
                raise StoreError(f"cannot delete namespace {namespace!r}: built-in or missing")
            if any(ns == namespace for ns, _ in self._tables):
                raise StoreError(f"namespace {namespace!r} is not empty; delete its tables first")
            self._namespaces.discard(namespace)

    def create_table(self, spec: TableSpec, split_keys: Sequence[bytes] = ()) -> None:
        """Create ``spec`` (a TableSpec: ``name``, ``namespace``, ``families`` with ``name`` and
        ``versions``) pre-split at ``split_keys``, sorted first like HBase's Admin does."""
        namespace, name = split_table_name(spec.name if ":" in spec.name else join_table_name(spec.namespace or "default", spec.name))
        families = Families.from_specs(join_table_name(namespace, name), spec.families)
        if not families.versions:
            raise StoreError(f"table {name!r} needs at least one column family")
        try:
            region_map = RegionMap(verify_split_keys(as_bytes(k, "a split key") for k in split_keys))
        except KeyshapeError as exc:
            raise StoreError(f"cannot create table {name!r}: {exc}") from exc
        with self._lock:
            self._check_open()
            if namespace not in self._namespaces:
                raise StoreError(f"namespace {namespace!r} does not exist; create it first (create_namespace, or keyshape.store.ensure_table)")
            if (namespace, name) in self._tables:
                raise StoreError(f"table {join_table_name(namespace, name)!r} already exists")
            table = _Table(namespace, name, families, list(region_map.split_keys))
            servers = region_map.server_of(self.servers)
            table.regions = [
                _Region(start, end, next(self._region_ids), int(servers[i])) for i, (start, end) in enumerate(zip(region_map.starts, region_map.ends))
            ]
            self._tables[(namespace, name)] = table

    def delete_table(self, name: str) -> None:
        with self._lock:
            table = self._table(name)
            del self._tables[(table.namespace, table.name)]

    def table_exists(self, name: str) -> bool:
        with self._lock:
            self._check_open()
            return split_table_name(name) in self._tables

    def list_tables(self) -> list[str]:
        with self._lock:
            self._check_open()
            return sorted(t.full_name for t in self._tables.values())

    # --- writes ----------------------------------------------------------------------------

    def put(self, table: str, row: bytes, cells: Mapping[bytes, bytes], timestamp: int | None = None) -> None:
        """Write ``cells`` ({b"family:qualifier": value}) to ``row`` at ``timestamp`` (ms, default
        now); a cell already stored at that timestamp is replaced, and each column keeps its
        family's newest ``versions`` values. Cells a delete marker masks or the family's TTL
        has already expired are not stored (see ``keyshape.store.cells``)."""
        with self._lock:
            self._put(self._table(table), row, cells, timestamp)

    def _put(self, t: _Table, row: Any, cells: Mapping[bytes, bytes], timestamp: int | None) -> None:
        row = as_bytes(row, "a row key")
        t.cells.put(row, cells, timestamp, now_ms())
        self._count_write(t, row)

    def _count_write(self, t: _Table, row: bytes) -> None:
        region = t.region_of(row)
        region.writes += 1
        self._maybe_split(t, region)

    def writer(self, table: str, batch_size: int = 1000, max_bytes: int = 2 * 1024 * 1024) -> _EmbeddedWriter:
        """A buffered writer: mutations are applied when ``batch_size`` rows or ``max_bytes``
        bytes are buffered, on ``flush()`` and when the ``with`` block exits."""
        with self._lock:
            self._table(table)
        return _EmbeddedWriter(self, table, batch_size, max_bytes)

    def delete(self, table: str, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        """Delete the row, or every version of the selected families/columns, up to now: like
        HBase's Delete it leaves a marker at the current time (ms) that also masks later puts
        with a timestamp at or before it; cells with a later (future) timestamp survive."""
        with self._lock:
            self._delete(self._table(table), row, columns)

    def _delete(self, t: _Table, row: Any, columns: Iterable[bytes] | None) -> None:
        row = as_bytes(row, "a row key")
        t.cells.delete(row, columns, now_ms())
        # a delete never grows a region, so unlike a put it cannot trigger a split
        t.region_of(row).writes += 1

    def increment(self, table: str, row: bytes, column: bytes, amount: int = 1) -> int:
        """Add ``amount`` to the 8-byte big-endian signed long in ``column`` (absent, deleted or
        expired: 0), wrapping like a Java long, store it and return the new value. Like HBase the
        new cell's timestamp is ``max(now, old timestamp + 1)``, so it is the newest version
        even when the old one has a future timestamp."""
        with self._lock:
            t = self._table(table)
            row = as_bytes(row, "a row key")
            new = t.cells.increment(row, column, amount, now_ms())
            self._count_write(t, row)
            return new

    # --- reads -----------------------------------------------------------------------------

    def get(self, table: str, row: bytes, columns: Iterable[bytes] | None = None) -> dict[bytes, bytes]:
        """Newest visible value of every selected cell of ``row``; {} when there is none."""
        with self._lock:
            t = self._table(table)
            row = as_bytes(row, "a row key")
            sel = t.families.selector(columns)
            t.region_of(row).reads += 1
            return t.cells.get(row, sel, now_ms())

    def cells(self, table: str, row: bytes, column: bytes, versions: int | None = None) -> list[tuple[int, bytes]]:
        """Visible ``(timestamp_ms, value)`` versions of one cell, newest first."""
        with self._lock:
            t = self._table(table)
            row = as_bytes(row, "a row key")
            stored = t.cells.versions(row, column, now_ms())
            t.region_of(row).reads += 1
            return stored if versions is None else stored[: max(int(versions), 0)]

    def get_many(self, table: str, rows: Iterable[bytes], columns: Iterable[bytes] | None = None) -> list[tuple[bytes, dict[bytes, bytes]]]:
        """``(row, cells)`` for each requested row that has selected cells, in request order."""
        found: list[tuple[bytes, dict[bytes, bytes]]] = []
        with self._lock:
            t = self._table(table)
            sel = t.families.selector(columns)
            now = now_ms()
            for row in rows:
                row = as_bytes(row, "a row key")
                t.region_of(row).reads += 1
                cells = t.cells.get(row, sel, now)
                if cells:
                    found.append((row, cells))
        return found

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
        """Stream rows like HBase's Scan (see ``Store.scan``). Rows are read ``batch_size`` at a
        time under the lock, so writes between batches are seen as HBase scanners see them."""
        batches = self.scan_batches(table, start, stop, prefix, reverse, limit, columns, batch_size)
        return (row for keys, cells in batches for row in zip(keys, cells))

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
        """``scan`` a batch at a time (see ``Store.scan_batches``)."""
        low, high = scan_bounds(start, stop, prefix, reverse, limit, batch_size)
        with self._lock:
            sel = self._table(table).families.selector(columns)
        return self._scan(table, low, high, reverse, limit, sel, batch_size)

    def _scan(
        self,
        table: str,
        low: tuple[bytes | None, bool],
        high: tuple[bytes | None, bool],
        reverse: bool,
        limit: int | None,
        sel: Selection | None,
        batch_size: int,
    ) -> Iterator[ScanBatch]:
        returned = 0
        while limit is None or returned < limit:
            batch: list[bytes] = []
            values: list[dict[bytes, bytes]] = []
            last: bytes | None = None
            with self._lock:
                t = self._table(table)
                rows = t.cells.rows
                now = now_ms()
                expired: list[bytes] = []  # forgotten after the loop: irange must not see deletes
                keys = rows.irange(low[0], high[0], (low[1], high[1]), reverse=reverse)
                for row in keys:
                    last = row
                    t.region_of(row).reads += 1
                    stored = rows[row]
                    t.cells.expire(stored, now)
                    if not stored:
                        expired.append(row)
                        continue
                    cells = select(stored, sel)
                    if cells:
                        batch.append(row)
                        values.append(cells)
                        if len(batch) >= batch_size or (limit is not None and returned + len(batch) >= limit):
                            break
                for row in expired:
                    del rows[row]
            if batch:
                yield batch, values
            returned += len(batch)
            if last is None or (len(batch) < batch_size and (limit is None or returned < limit)):
                return
            if reverse:
                high = (last, False)
            else:
                low = (last, False)

    def scan_versions(
        self, table: str, start: bytes = b"", stop: bytes = b"", batch_size: int = 1000
    ) -> Iterator[tuple[bytes, dict[bytes, list[tuple[int, bytes]]]]]:
        """Rows in ``[start, stop)`` with every visible version of every cell, newest first (see
        ``Store.scan_versions``); read ``batch_size`` rows at a time under the lock."""
        low, high = scan_bounds(start, stop, None, False, None, batch_size)
        with self._lock:
            self._table(table)
        while True:
            batch: list[tuple[bytes, dict[bytes, list[tuple[int, bytes]]]]] = []
            with self._lock:
                t = self._table(table)
                now = now_ms()
                for row in t.cells.rows.irange(low[0], high[0], (low[1], high[1])):
                    low = (row, False)
                    stored = t.cells.rows[row]
                    t.cells.expire(stored, now)
                    if stored:
                        t.region_of(row).reads += 1
                        batch.append((row, {c: list(v) for c, v in sorted(stored.items())}))
                    if len(batch) >= batch_size:
                        break
            yield from batch
            if len(batch) < batch_size:
                return

    def scan_keys(self, table: str, start: bytes = b"", stop: bytes = b"", limit: int | None = None, batch_size: int = 1000) -> Iterator[bytes]:
        """Row keys in ``[start, stop)``, at most ``limit``."""
        return (row for row, _ in self.scan(table, start, stop, limit=limit, batch_size=batch_size))

    def scan_key_times(
        self, table: str, start: bytes = b"", stop: bytes = b"", limit: int | None = None, batch_size: int = 1000
    ) -> Iterator[tuple[list[bytes], list[int]]]:
        """Row keys in ``[start, stop)`` with the newest timestamp of each row's first column
        (what HBase's key-only scan returns), ``batch_size`` rows at a time, at most ``limit``."""
        keys: list[bytes] = []
        stamps: list[int] = []
        for row, cells in self.scan_versions(table, start, stop, batch_size=batch_size):
            if limit is not None and len(keys) >= limit:
                break
            first = cells[min(cells)]
            keys.append(row)
            stamps.append(first[0][0])
            if len(keys) % batch_size == 0:
                yield keys, stamps
                keys, stamps = [], []
                limit = None if limit is None else limit - batch_size
        if keys:
            yield keys, stamps

    # --- regions ---------------------------------------------------------------------------

    def regions(self, table: str) -> list[RegionInfo]:
        """Regions in key order with their read/write counters and the bytes they hold (row key,
        column and value of every stored version)."""
        with self._lock:
            t = self._table(table)
            infos = []
            for r in t.regions:
                rows = t.cells.rows.irange(r.start or None, r.end or None, (True, False))
                infos.append(self._info(t, r, sum(t.cells.stored_bytes(row) for row in rows)))
            return infos

    def _maybe_split(self, t: _Table, region: _Region) -> None:
        if self._split_rule is None:
            return
        rows = t.cells.rows
        lo = rows.bisect_left(region.start) if region.start else 0
        hi = rows.bisect_left(region.end) if region.end else len(rows)
        if not self._split_rule.splits(hi - lo):
            return
        self._split(t, region, rows.keys()[lo + middle_index(hi - lo)])

    def _split(self, t: _Table, region: _Region, key: bytes) -> tuple[_Region, _Region]:
        """Replace ``region`` by daughters ``[start, key)`` and ``[key, end)`` on its server, with
        new region ids (as HBase's split does); the daughters keep no request counts."""
        index = t.regions.index(region)
        lower = _Region(region.start, key, next(self._region_ids), region.server)
        upper = _Region(key, region.end, next(self._region_ids), region.server)
        t.regions[index : index + 1] = [lower, upper]
        t.splits.insert(index, key)
        return lower, upper

    def _info(self, t: _Table, r: _Region, size: int = 0) -> RegionInfo:
        return RegionInfo(
            start=r.start,
            end=r.end,
            name=f"{t.full_name},{to_string_binary(r.start)},{r.region_id}",
            server=f"embedded-{r.server}",
            read_requests=r.reads,
            write_requests=r.writes,
            store_size_bytes=size,
        )

    def split_region(self, table: str, split_key: bytes, timeout: float = 60.0) -> list[RegionInfo]:
        """Split the region holding ``split_key`` at that key (see ``Store.split_region``);
        immediate here, so ``timeout`` is unused. StoreError if a region already starts there."""
        key = as_bytes(split_key, "a split key")
        with self._lock:
            t = self._table(table)
            if not key:
                raise StoreError(f"cannot split {table!r} at the empty key: give the first row key of the new upper region")
            region = t.region_of(key)
            if region.start == key:
                raise StoreError(
                    f"cannot split {table!r} at {to_string_binary(key)!r}: a region "
                    f"already starts there ({self._info(t, region).name}); pick a key "
                    "inside a region"
                )
            return [self._info(t, r) for r in self._split(t, region, key)]

    def move_region(self, region_name: str, server: str | None = None, timeout: float = 60.0) -> str:
        """Deal the region named ``region_name`` to ``server`` (``embedded-N``; None: the other
        simulated server with the fewest regions); returns the server it is on now."""
        with self._lock:
            self._check_open()
            found = next(((t, r) for t in self._tables.values() for r in t.regions if self._info(t, r).name == region_name), None)
            if found is None:
                raise StoreError(f"no region is named {region_name!r}; list the current regions with regions(table)")
            _, region = found
            counts = self._region_counts()
            if server is None:
                others = sorted((n, i) for i, n in enumerate(counts) if i != region.server)
                if not others:
                    raise StoreError(
                        f"cannot move region {region_name!r}: embedded-{region.server} is the only server (open the store with servers=N)"
                    )
                region.server = others[0][1]
            else:
                names = [f"embedded-{i}" for i in range(self.servers)]
                if server not in names:
                    raise StoreError(f"cannot move region {region_name!r} to {server!r}: not a server of this store; its servers: {', '.join(names)}")
                region.server = names.index(server)
            return f"embedded-{region.server}"

    def _region_counts(self) -> list[int]:
        counts = [0] * self.servers
        for t in self._tables.values():
            for r in t.regions:
                counts[r.server] += 1
        return counts

    def region_servers(self) -> list[ServerInfo]:
        """The simulated servers ``embedded-0`` .. ``embedded-{servers-1}`` with their region
        counts and the request counters of the regions they hold now."""
        with self._lock:
            self._check_open()
            reads, writes = [0] * self.servers, [0] * self.servers
            for t in self._tables.values():
                for r in t.regions:
                    reads[r.server] += r.reads
                    writes[r.server] += r.writes
            return sorted(
                (
                    ServerInfo(name=f"embedded-{i}", regions=n, read_requests=reads[i], write_requests=writes[i])
                    for i, n in enumerate(self._region_counts())
                ),
                key=lambda s: s.name,
            )

    def set_balancer(self, on: bool) -> bool:
        """Record the balancer switch and return the previous one (this store never moves
        regions by itself, so the switch changes nothing else)."""
        with self._lock:
            previous, self._balancer = self._balancer, bool(on)
            return previous

    # --- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Forget all tables; later calls raise StoreError."""
        with self._lock:
            self._closed = True
            self._tables.clear()

    def __enter__(self) -> EmbeddedStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")

    def _table(self, name: str) -> _Table:
        self._check_open()
        namespace, table = split_table_name(name)
        try:
            return self._tables[(namespace, table)]
        except KeyError:
            raise TableNotFound(f"table {name!r} does not exist") from None


class _EmbeddedWriter:
    """Buffered writer of ``EmbeddedStore`` (see ``keyshape.store.base.BatchWriter``)."""

    def __init__(self, store: EmbeddedStore, table: str, batch_size: int, max_bytes: int) -> None:
        if batch_size < 1 or max_bytes < 1:
            raise BadInput("writer: batch_size and max_bytes must be >= 1")
        self._store = store
        self._table = table
        self._batch_size = batch_size
        self._max_bytes = max_bytes
        self._buffer: list[tuple[bytes, Mapping[bytes, bytes] | None, Any]] = []
        self._bytes = 0
        self.written = 0

    def put(self, row: bytes, cells: Mapping[bytes, bytes], timestamp: int | None = None) -> None:
        row = as_bytes(row, "a row key")
        self._buffer.append((row, dict(cells), timestamp))
        self._bytes += len(row) + sum(len(c) + len(v) for c, v in cells.items())
        self._maybe_flush()

    def delete(self, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        row = as_bytes(row, "a row key")
        self._buffer.append((row, None, None if columns is None else list(columns)))
        self._bytes += len(row)
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if len(self._buffer) >= self._batch_size or self._bytes >= self._max_bytes:
            self.flush()

    def flush(self) -> None:
        """Apply every buffered mutation; WriteFailed lists the rows that could not be applied."""
        buffer, self._buffer, self._bytes = self._buffer, [], 0
        failed: list[bytes] = []
        errors: list[str] = []
        with self._store._lock:
            try:
                table = self._store._table(self._table)
            except StoreError as exc:
                if buffer:
                    raise WriteFailed(str(exc), [row for row, _, _ in buffer]) from exc
                return
            for row, cells, extra in buffer:
                try:
                    if cells is None:
                        self._store._delete(table, row, extra)
                    else:
                        self._store._put(table, row, cells, extra)
                except StoreError as exc:
                    failed.append(row)
                    errors.append(str(exc))
            self.written += len(buffer) - len(failed)
        if failed:
            raise WriteFailed(f"{len(failed)} row(s) not written; first error: {errors[0]}", failed)

    def __enter__(self) -> _EmbeddedWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Like BufferedMutator.close(): what was buffered is sent even if the block raised.
        self.flush()
