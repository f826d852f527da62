"""Writing records so that each exists once, with index rows that never dangle.

:class:`IndexedWriter` is keyshape's one write path for records (the helpers :func:`put_record`
and :func:`delete_record` are one-record uses of it). It keeps three promises:

* **One copy.** Under a ``random`` prefix a record's stored key cannot be recomputed, so before a
  flush the writer looks the buffered records up (ONE ``get_many`` over every bucket of every
  buffered record, as :func:`keyshape.read.get` does). A put of a record already stored writes
  into the bucket it finds (an update); a delete removes exactly the copies it finds; extra copies
  (written by something else) are removed by either, so afterwards the record exists once or not
  at all. Deterministic prefixes compute the one key, and a put there is an in-place update.
* **No dangling index rows.** Every field of every index is checked when :meth:`~IndexedWriter.put`
  is called, before anything of the record is buffered: a bad record raises (naming the field and
  the index) and leaves nothing behind. A flush then runs in four steps, each for the records the
  previous steps stored: (1) delete index rows that go away (of deleted records and the old values
  of updated ones), (2) delete main rows, (3) put main rows, (4) put index rows. Whatever step
  fails, what is left is at most MAIN ROWS WITHOUT SOME INDEX ROWS, never an index row whose main
  row is missing or no longer matches; :func:`keyshape.read.index.repair_index` adds them back.
* **A re-put is never lost.** HBase masks a put whose timestamp is not later than a delete marker
  of the same cell, and both get the server's clock in milliseconds, so a delete and a put of the
  same row within one millisecond would lose the put. The writer therefore never deletes an index
  row it is about to re-put, updates main rows in place (no delete), and when a put goes to a row
  deleted in this process (by any writer) less than 2 ms before, it first waits out those 2 ms
  (the delete was acknowledged before the wait, so the put's server timestamp is strictly later).
  With an explicit ``timestamp`` the caller chooses: a put at or before a delete's time stays
  masked, as in HBase. A delete by another process in the same millisecond is not covered.

A put MERGES its cells into a stored row (HBase's put); delete the record first to drop cells.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from keyshape.errors import KeyshapeError, WriteFailed
from keyshape.read.index import _values_from_row, index_key, index_of
from keyshape.read.plan import original_key
from keyshape.schema.index import IndexSpec

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.keyschema import KeySchema
    from keyshape.store.base import Store

__all__ = ["IndexedWriter", "delete_record", "put_record"]

LOOKUP_CHUNK = 8192  # keys per get_many when looking records up (batch x buckets can be large)
MASK_GUARD_S = 0.002  # a delete and a put further apart than this get different server milliseconds


class _RecentDeletes:
    """Rows deleted in this process in the last ``MASK_GUARD_S``, per store, so a put of one of
    them (by any writer of the process) can wait until its server timestamp is strictly later."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at: dict[tuple[int, str, bytes], float] = {}

    def note(self, store: Store, table: str, rows: Iterable[bytes]) -> None:
        now = time.monotonic()
        with self._lock:
            self._at = {r: t for r, t in self._at.items() if now - t < MASK_GUARD_S}
            for row in rows:
                self._at[(id(store), table, row)] = now

    def wait(self, store: Store, table: str, rows: Iterable[bytes]) -> None:
        with self._lock:
            if not self._at:
                return
            latest = max((self._at.get((id(store), table, r), 0.0) for r in rows), default=0.0)
        pause = latest + MASK_GUARD_S - time.monotonic()
        if latest and pause > 0:
            time.sleep(pause)


_DELETES = _RecentDeletes()


@dataclass
class _Op:
    kind: str  # "put" | "delete"
    key: bytes  # the key the record would get now (under random: a freshly drawn bucket)
    record: Mapping[str, Any]
    cells: dict[bytes, bytes] | None = None
    timestamp: int | None = None
    index_keys: dict[bytes, IndexSpec] | None = None  # of a put, for ``key``


@dataclass
class _Plan:
    """The mutations of one flush, per step (see the module docstring)."""

    index_deletes: dict[str, dict[bytes, bytes]] = field(default_factory=dict)  # table -> ikey -> orig
    main_deletes: dict[bytes, bytes] = field(default_factory=dict)  # key -> orig
    main_puts: list[tuple[bytes, dict[bytes, bytes], int | None, bytes]] = field(default_factory=list)
    index_puts: dict[str, list[tuple[bytes, bytes, bytes, int | None, bytes]]] = field(default_factory=dict)


class IndexedWriter:
    """Writes records to the main table and every index table, keeping one copy of each record
    (see the module docstring). Use as a context manager; ``flush()`` or leaving the block writes
    what is buffered and raises WriteFailed (``rows``: main keys not fully written) when the store
    refuses rows. ``store`` holds the tables of ``schema``; ``indexes`` names the index tables to
    keep (None: all of the schema's; ``indexes=[]`` writes the main table only); ``batch_size``
    operations are buffered before a write (default 1000)."""

    def __init__(self, store: Store, schema: KeySchema, indexes: Iterable[str | IndexSpec] | None = None, batch_size: int = 1000) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise KeyshapeError(f"IndexedWriter: batch_size must be an int >= 1, got {batch_size!r}")
        self.store, self.schema, self.batch_size = store, schema, batch_size
        self.indexes = [index_of(schema, i) for i in (schema.indexes if indexes is None else indexes)]
        self._ops: list[_Op] = []
        self._random = not schema.prefix.deterministic

    # ------------------------------------------------------------------------------ buffering

    def _check_index_fields(self, record: Mapping[str, Any], key: bytes) -> tuple[dict[bytes, bytes], dict[bytes, IndexSpec]]:
        """The main-row value columns of ``record``'s index fields and its index keys at ``key``;
        raises KeyshapeError naming the field and the index when one cannot be built."""
        columns: dict[bytes, bytes] = {}
        ikeys: dict[bytes, IndexSpec] = {}
        for spec in self.indexes:
            for f in spec.fields:
                if f.name not in record or record[f.name] is None:
                    raise KeyshapeError(
                        f"record lacks {f.name!r}, a field of index {spec.name!r} (table {spec.table.full_name}); give it a {f.type} value"
                    )
                try:
                    # the main row keeps the value as given (not its padded key bytes)
                    cell = f.cell_bytes(record[f.name])
                except (KeyshapeError, TypeError, ValueError, OverflowError) as exc:
                    raise KeyshapeError(f"field {f.name!r} of index {spec.name!r}: {exc}") from None
                if f.name in spec.columns:
                    columns[spec.columns[f.name]] = cell
            ikeys[index_key(spec, record, key)] = spec  # prefix and separators too, before buffering
        return columns, ikeys

    def put(self, record: Mapping[str, Any], cells: Mapping[bytes, bytes] | None = None, timestamp: int | None = None) -> bytes:
        """Buffer ``record`` (every key field and every index field) with ``cells`` plus the value
        columns of its non-key index fields. Returns the key it gets when not stored yet; a
        stored record keeps its key (under ``random``: its bucket, found at the flush)."""
        key = self.schema.encode(record)
        main_cells = dict(cells or {})
        columns, ikeys = self._check_index_fields(record, key)
        main_cells.update(columns)
        self._ops.append(_Op("put", key, dict(record), main_cells, timestamp, ikeys))
        if len(self._ops) >= self.batch_size:
            self.flush()
        return key

    def delete(self, record: Mapping[str, Any]) -> None:
        """Buffer the removal of ``record`` (its key fields are enough): every stored copy and the
        index rows of each, as found at the flush."""
        key = self.schema.encode(record)
        self._ops.append(_Op("delete", key, dict(record)))
        if len(self._ops) >= self.batch_size:
            self.flush()

    # -------------------------------------------------------------------------------- flushing

    def _lookup_columns(self) -> list[bytes] | None | Literal[False]:
        """What a flush must read of the stored rows: None (whole rows: under random, to find
        every copy), the index value columns, or False (nothing: keys say it all)."""
        if self._random:
            return None
        cols = sorted({c for spec in self.indexes for c in spec.columns.values()})
        return cols or False

    def _stored(self, ops: list[_Op]) -> dict[bytes, list[tuple[bytes, dict[bytes, bytes]]]]:
        """original key -> stored copies ``(key, cells)`` in stored-key order."""
        cols = self._lookup_columns()
        out: dict[bytes, list[tuple[bytes, dict[bytes, bytes]]]] = {}
        if cols is False:
            return out
        keys: dict[bytes, None] = {}
        if self._random:  # every bucket of each original key (as read.get_many probes them)
            p = self.schema.prefix
            buckets = p.buckets()
            assert buckets is not None  # random is a salted strategy
            for orig in {original_key(self.schema, op.key): None for op in ops}:
                for b in buckets:
                    keys[p.apply(b, orig)] = None
        else:
            keys = {op.key: None for op in ops}
        wanted = list(keys)
        for i in range(0, len(wanted), LOOKUP_CHUNK):
            for k, c in self.store.get_many(self.schema.table.full_name, wanted[i : i + LOOKUP_CHUNK], columns=cols):
                out.setdefault(original_key(self.schema, k), []).append((k, c))
        return out

    def _index_keys(self, key: bytes, cells: Mapping[bytes, bytes] | None, record: Mapping[str, Any] | None = None) -> dict[bytes, IndexSpec]:
        """Index row key -> spec of the row at ``key``: from ``record`` alone when ``cells`` is
        None (a put), else from the stored ``cells`` (what the index rows were written from) and
        the key fields, which a deterministic key shares with ``record`` (md5-full keys cannot
        be decoded) and a random one decodes."""
        out: dict[bytes, IndexSpec] = {}
        for spec in self.indexes:
            if cells is None:
                values: Mapping[str, Any] | None = record
            elif record is None:
                values = _values_from_row(self.schema, spec, key, cells)
            else:
                values = self._stored_values(spec, cells, record)
            if values is not None:
                out[index_key(spec, values, key)] = spec
        return out

    def _stored_values(self, spec: IndexSpec, cells: Mapping[bytes, bytes], record: Mapping[str, Any]) -> dict[str, Any] | None:
        values = {f.name: record[f.name] for f in self.schema.fields}
        for f in spec.fields:
            if f.name in spec.columns:
                raw = cells.get(spec.columns[f.name])
                if raw is None:
                    return None  # never indexed: no index row to remove
                try:
                    values[f.name] = f.cell_value(raw)
                except KeyshapeError:
                    return None
        return values

    def _plan(self, ops: list[_Op]) -> _Plan:
        lookup = self._lookup_columns()
        stored = self._stored(ops)
        by_record: dict[bytes, list[_Op]] = {}
        for op in ops:
            by_record.setdefault(original_key(self.schema, op.key), []).append(op)
        plan = _Plan()
        for orig, rec_ops in by_record.items():
            # copies: stored key -> its index rows as they were written (from the stored values)
            if self._random:
                copies = {k: self._index_keys(k, c) for k, c in stored.get(orig, [])}
            else:  # the one key; it may be stored even when the lookup returned no cells for it
                key, first = rec_ops[0].key, rec_ops[0].record
                found = dict(stored.get(orig, []))
                copies = {
                    key: self._index_keys(key, None, first) if lookup is False else self._index_keys(key, found[key], first) if key in found else {}
                }
            final: dict[bytes, IndexSpec] = {}
            puts: list[tuple[bytes, dict[bytes, bytes], int | None]] = []
            target: bytes | None = next(iter(copies), None)
            dropped = False
            for op in rec_ops:
                if op.kind == "delete":
                    dropped, puts, final, target = True, [], {}, None
                    continue
                if target is None:
                    target = op.key
                puts.append((target, op.cells or {}, op.timestamp))
                final = op.index_keys if target == op.key and op.index_keys is not None else self._index_keys(target, None, op.record)
            for k in copies:  # every copy of a deleted record; the extra copies of any other
                if dropped or k != target:
                    plan.main_deletes[k] = orig
            for iks in copies.values():
                for ik, spec in iks.items():
                    if ik not in final:  # never delete an index row that is put again
                        plan.index_deletes.setdefault(spec.table.full_name, {})[ik] = orig
            for k, c, ts in puts:
                plan.main_puts.append((k, c, ts, orig))
            if puts and target is not None:
                ts = puts[-1][2]
                for ik, spec in final.items():
                    plan.index_puts.setdefault(spec.table.full_name, []).append((ik, spec.pointer_column, target, ts, orig))
        return plan

    def _write(self, table: str, items: list[tuple[bytes, Any]], delete: bool) -> set[bytes]:
        """Apply deletes (``items``: (row, _)) or puts ((row, (cells, timestamp))) to ``table``;
        returns the rows not written."""
        if not items:
            return set()
        lost: set[bytes] = set()
        try:
            with self.store.writer(table, batch_size=self.batch_size) as w:
                for row, payload in items:
                    if delete:
                        w.delete(row)
                    else:
                        w.put(row, payload[0], payload[1])
        except WriteFailed as exc:
            lost = set(exc.rows)
        if delete:
            _DELETES.note(self.store, table, [row for row, _ in items])
        return lost

    def flush(self) -> None:
        """Write what is buffered (see the module docstring for the steps and what a failure
        leaves); raises WriteFailed naming the main keys of records not fully written."""
        ops, self._ops = self._ops, []
        if not ops:
            return
        try:
            plan = self._plan(ops)
        except BaseException:
            self._ops = ops + self._ops  # nothing was written: keep the records for a retry
            raise
        main = self.schema.table.full_name
        failed: set[bytes] = set()  # original keys of records not fully written
        keys_of: dict[bytes, bytes] = {}
        for k, _, _, orig in plan.main_puts:
            keys_of.setdefault(orig, k)
        for k, orig in plan.main_deletes.items():
            keys_of.setdefault(orig, k)
        # 1. index rows that go away
        for table, rows in plan.index_deletes.items():
            lost = self._write(table, [(ik, orig) for ik, orig in rows.items()], delete=True)
            failed |= {orig for ik, orig in rows.items() if ik in lost}
        # 2. main rows that go away (not of records whose index rows are still there)
        dels = [(k, orig) for k, orig in plan.main_deletes.items() if orig not in failed]
        lost = self._write(main, dels, delete=True)
        failed |= {orig for k, orig in dels if k in lost}
        # 3. main rows
        puts = [(k, (c, ts), orig) for k, c, ts, orig in plan.main_puts if orig not in failed]
        _DELETES.wait(self.store, main, [k for k, (_, ts), _ in puts if ts is None])
        lost = self._write(main, [(k, p) for k, p, _ in puts], delete=False)
        failed |= {orig for k, _, orig in puts if k in lost}
        # 4. index rows, only for main rows that are stored
        for table, items in plan.index_puts.items():
            todo = [(ik, ({col: key}, ts), orig) for ik, col, key, ts, orig in items if orig not in failed]
            _DELETES.wait(self.store, table, [ik for ik, (_, ts), _ in todo if ts is None])
            lost = self._write(table, [(ik, p) for ik, p, _ in todo], delete=False)
            failed |= {orig for ik, _, orig in todo if ik in lost}
        if failed:
            not_written = sorted(keys_of.get(o, o) for o in failed)
            raise WriteFailed(
                f"{len(failed)} record(s) not fully written; what is left are main rows "
                "without some index rows: write the records again, or run repair_index",
                not_written,
            )

    def __enter__(self) -> IndexedWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.flush()


def put_record(
    store: Store, schema: KeySchema, record: Mapping[str, Any], cells: Mapping[bytes, bytes] | None = None, timestamp: int | None = None
) -> None:
    """Write one record now (an update when it is stored), with its index rows; see
    :class:`IndexedWriter`.

    - ``store``, ``schema``: the store and the table's key schema.
    - ``record``: a mapping with every key field (and the values of index columns).
    - ``cells``: ``b"family:qualifier"`` -> value to write beside the index columns (default none).
    - ``timestamp``: the cells' timestamp in ms (default None: the store's clock).
    """
    with IndexedWriter(store, schema) as w:
        w.put(record, cells, timestamp)


def delete_record(store: Store, schema: KeySchema, record: Mapping[str, Any]) -> None:
    """Remove one record now: every stored copy and its index rows; see :class:`IndexedWriter`.

    - ``store``, ``schema``: the store and the table's key schema.
    - ``record``: a mapping with every key field.
    """
    with IndexedWriter(store, schema) as w:
        w.delete(record)
