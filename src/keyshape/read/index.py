"""Secondary index tables: write through both tables, read by index, repair.

Consistency model, honestly: HBase has no transaction across rows, let alone across tables, so a
main row and its index row are two independent writes. :class:`IndexedWriter` orders them — main
rows are flushed first, and index rows are handed to the store only after the main rows they point
to are stored — so a crash or a failed flush leaves at most MAIN ROWS WITHOUT INDEX ROWS (the rows
are there, an index read misses them). Deleting goes the other way (index rows first), for the same
guarantee. Changing an indexed value of an existing row leaves the OLD index row pointing at a main
row that no longer matches it (stale). :func:`read_by_index` skips index rows whose main row is
missing and, with ``verify=True``, those that are stale, so readers never see a wrong row; they can
miss a row until :func:`repair_index` adds its index row. Run repair after a crash, or
periodically; it is idempotent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from keyshape.errors import KeyshapeError, WriteFailed
from keyshape.read.merged import Row, scan
from keyshape.read.plan import original_key
from keyshape.schema.index import ROW_FIELD, IndexSpec

__all__ = ["IndexedWriter", "RepairReport", "index_key", "index_of", "read_by_index", "repair_index"]


def index_of(schema: Any, index: str | IndexSpec) -> IndexSpec:
    """The schema's index named ``index`` (or ``index`` itself)."""
    if isinstance(index, IndexSpec):
        return index
    for spec in getattr(schema, "indexes", []):
        if spec.name == index:
            return spec
    names = ", ".join(i.name for i in getattr(schema, "indexes", [])) or "(none: add [[index]] to the schema)"
    raise KeyshapeError(f"no index {index!r} in schema {schema.source}; indexes: {names}")


def index_key(index: IndexSpec, record: Mapping[str, Any], main_key: bytes) -> bytes:
    """The index row key of ``record`` stored at ``main_key``."""
    return index.key.encode({**{f.name: record[f.name] for f in index.fields}, ROW_FIELD: main_key})


def _values_from_row(schema: Any, index: IndexSpec, main_key: bytes,
                     cells: Mapping[bytes, bytes]) -> dict[str, Any] | None:
    """The index fields of a stored main row (key fields decoded from the key, the others from
    their columns); None when a column is missing or the key does not decode."""
    try:
        values = schema.decode(main_key)
        for f in index.fields:
            if f.name in index.columns:
                raw = cells.get(index.columns[f.name])
                if raw is None:
                    return None
                values[f.name], _ = f.decode_at(raw, 0, len(raw))
    except KeyshapeError:
        return None
    return values


class IndexedWriter:
    """Writes records to the main table and every index table (main rows first, see the module
    docstring). Use as a context manager; ``flush()`` or leaving the block writes what is buffered
    and raises WriteFailed (``rows``: main keys not written) when the store refuses rows."""

    def __init__(self, store: Any, schema: Any, indexes: Iterable[str | IndexSpec] | None = None,
                 batch_size: int = 1000) -> None:
        self.store, self.schema, self.batch_size = store, schema, batch_size
        self.indexes = [index_of(schema, i) for i in (schema.indexes if indexes is None else indexes)]
        self._main: list[tuple[str, bytes, dict[bytes, bytes] | None, int | None]] = []
        self._index: list[tuple[bytes, IndexSpec, str, bytes, int | None]] = []  # main key, ...

    def put(self, record: Mapping[str, Any], cells: Mapping[bytes, bytes] | None = None,
            timestamp: int | None = None) -> bytes:
        """Buffer ``record``'s main row (``cells`` plus the value columns of non-key index fields)
        and its index rows; returns the main row key."""
        key = self.schema.encode(record)
        main_cells = dict(cells or {})
        for spec in self.indexes:
            for name, column in spec.columns.items():
                main_cells[column] = spec.key.field(name).encode(record[name])
            self._index.append((key, spec, "put", index_key(spec, record, key), timestamp))
        self._main.append(("put", key, main_cells, timestamp))
        if len(self._main) >= self.batch_size:
            self.flush()
        return key

    def delete(self, record: Mapping[str, Any]) -> None:
        """Delete ``record``'s index rows, then its main row (``record`` needs every index field)."""
        key = self.schema.encode(record)
        self.flush()
        for spec in self.indexes:
            self.store.delete(spec.table.full_name, index_key(spec, record, key))
        self.store.delete(self.schema.table.full_name, key)

    def flush(self) -> None:
        main, index = self._main, self._index
        self._main, self._index = [], []
        failed: set[bytes] = set()
        if main:
            try:
                with self.store.writer(self.schema.table.full_name, batch_size=self.batch_size) as w:
                    for _, key, cells, ts in main:
                        w.put(key, cells, ts)
            except WriteFailed as exc:
                failed = set(exc.rows)
        by_table: dict[str, list[tuple[bytes, IndexSpec, bytes, int | None]]] = {}
        for key, spec, _, ikey, ts in index:
            if key not in failed:  # never index a row that is not stored
                by_table.setdefault(spec.table.full_name, []).append((key, spec, ikey, ts))
        for table, items in by_table.items():
            try:
                with self.store.writer(table, batch_size=self.batch_size) as w:
                    for key, spec, ikey, ts in items:
                        w.put(ikey, {spec.pointer_column: key}, ts)
            except WriteFailed as exc:
                lost = set(exc.rows)
                failed |= {key for key, _, ikey, _ in items if ikey in lost}
        if failed:
            raise WriteFailed(f"{len(failed)} records not fully written (main rows are written before "
                              "index rows; run repair_index to add missing index rows)", sorted(failed))

    def __enter__(self) -> IndexedWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.flush()


def read_by_index(store: Any, schema: Any, index: str | IndexSpec, *, limit: int | None = None,
                  reverse: bool = False, columns: Iterable[bytes] | None = None, batch_size: int = 100,
                  verify: bool = True, where: Mapping[str, Any] | None = None,
                  **leading_fields: Any) -> Iterator[Row]:
    """Main rows found through ``index``, in index order.

    ``leading_fields`` (or ``where``) are leading INDEX fields, as for :func:`keyshape.read.scan`
    over the index table. Index rows are read in batches of ``batch_size`` and their main rows
    fetched with one ``get_many`` per batch. Index rows whose main row is missing are skipped;
    with ``verify`` also those whose main row no longer has the indexed values (the value
    columns are then fetched too, and returned in ``cells``). ``limit`` caps the main rows.
    """
    spec = index_of(schema, index)
    cols = None if columns is None else list(columns)
    if verify and cols is not None:
        cols += [c for c in spec.columns.values() if c not in cols]
    main_table = schema.table.full_name
    idx = scan(store, spec.key, reverse=reverse, columns=[spec.pointer_column], batch_size=batch_size,
               where=where, **leading_fields)
    returned = 0
    try:
        while limit is None or returned < limit:
            batch = list(islice(idx, batch_size))
            if not batch:
                return
            found = dict(store.get_many(main_table, [r.cells[spec.pointer_column] for r in batch], columns=cols))
            for r in batch:
                key = r.cells[spec.pointer_column]
                cells = found.get(key)
                if cells is None:
                    continue
                if verify:
                    values = _values_from_row(schema, spec, key, cells)
                    if values is None or index_key(spec, values, key) != r.key:
                        continue
                yield Row(key, original_key(schema, key), cells, schema)
                returned += 1
                if limit is not None and returned >= limit:
                    return
    finally:
        idx.close()


@dataclass
class RepairReport:
    """What :func:`repair_index` found (and fixed when ``fixed``). Key lists hold at most
    ``max_listed`` keys each; the counts are exact."""

    index: str
    fixed: bool
    index_rows_checked: int = 0
    main_rows_checked: int = 0
    dangling: list[bytes] = field(default_factory=list)  # index rows whose main row is missing
    stale: list[bytes] = field(default_factory=list)  # index rows not matching their main row
    missing: list[bytes] = field(default_factory=list)  # main rows without their index row
    unindexable: list[bytes] = field(default_factory=list)  # main rows lacking an index column
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def consistent(self) -> bool:
        return not any(self.counts.get(k) for k in ("dangling", "stale", "missing"))


def repair_index(store: Any, schema: Any, index: str | IndexSpec, *, fix: bool = True,
                 batch_size: int = 1000, max_listed: int = 1000) -> RepairReport:
    """Check ``index`` against the main table both ways and, with ``fix``, repair it.

    Pass 1 reads every index row and fetches its main row (``get_many`` per batch): index rows
    whose main row is missing (dangling) or whose main row's indexed values differ (stale) are
    deleted. Pass 2 reads every main row and looks up its expected index row: missing ones are
    written. Main rows lacking a value column are reported as unindexable and left alone.
    """
    spec = index_of(schema, index)
    report = RepairReport(spec.name, fix, counts={"dangling": 0, "stale": 0, "missing": 0, "unindexable": 0})
    main_table, index_table = schema.table.full_name, spec.table.full_name

    def note(kind: str, key: bytes) -> None:
        report.counts[kind] += 1
        lst = getattr(report, kind)
        if len(lst) < max_listed:
            lst.append(key)

    it = store.scan(index_table, columns=[spec.pointer_column], batch_size=batch_size)
    to_delete: list[bytes] = []
    while batch := list(islice(it, batch_size)):
        report.index_rows_checked += len(batch)
        pointers = [cells[spec.pointer_column] for _, cells in batch]
        found = dict(store.get_many(main_table, pointers, columns=None))
        for (ikey, _), key in zip(batch, pointers):
            cells = found.get(key)
            if cells is None:
                note("dangling", ikey)
                to_delete.append(ikey)
                continue
            values = _values_from_row(schema, spec, key, cells)
            if values is not None and index_key(spec, values, key) != ikey:
                note("stale", ikey)
                to_delete.append(ikey)
    if fix and to_delete:
        with store.writer(index_table, batch_size=batch_size) as w:
            for ikey in to_delete:
                w.delete(ikey)

    to_add: list[tuple[bytes, bytes]] = []
    it = store.scan(main_table, batch_size=batch_size)
    while batch := list(islice(it, batch_size)):
        report.main_rows_checked += len(batch)
        expected = []
        for key, cells in batch:
            values = _values_from_row(schema, spec, key, cells)
            if values is None:
                note("unindexable", key)
            else:
                expected.append((index_key(spec, values, key), key))
        present = {k for k, _ in store.get_many(index_table, [e for e, _ in expected], columns=[spec.pointer_column])}
        for ikey, key in expected:
            if ikey not in present:
                note("missing", key)
                to_add.append((ikey, key))
    if fix and to_add:
        with store.writer(index_table, batch_size=batch_size) as w:
            for ikey, key in to_add:
                w.put(ikey, {spec.pointer_column: key})
    return report
