"""Secondary index tables: read by index, repair; the index key helpers the writer uses.

Consistency model, honestly: HBase has no transaction across rows, let alone across tables, so a
main row and its index row are two independent writes. The writer
(:class:`keyshape.read.writes.IndexedWriter`) orders them — index rows that go away are deleted
first, main rows written next, new index rows last — so a crash or a failed flush leaves at most
MAIN ROWS WITHOUT INDEX ROWS (the rows are there, an index read misses them). Index rows written
by something else can still dangle or be stale: :func:`read_by_index` skips index rows whose main
row is missing and, with ``verify=True``, those that no longer match it, so readers never see a
wrong row; :func:`repair_index` finds and fixes all three cases. Run repair after a crash, or
periodically; it is idempotent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from keyshape.errors import KeyshapeError
from keyshape.read.merged import Row, scan
from keyshape.read.plan import original_key
from keyshape.schema.index import ROW_FIELD, IndexSpec

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.keyschema import KeySchema
    from keyshape.store.base import Store

__all__ = ["RepairReport", "index_key", "index_of", "read_by_index", "repair_index"]


def index_of(schema: KeySchema, index: str | IndexSpec) -> IndexSpec:
    """The schema's index named ``index`` (or ``index`` itself)."""
    if isinstance(index, IndexSpec):
        return index
    for spec in schema.indexes:
        if spec.name == index:
            return spec
    names = ", ".join(i.name for i in schema.indexes) or "(none: add [[index]] to the schema)"
    raise KeyshapeError(f"no index {index!r} in schema {schema.source}; indexes: {names}")


def index_key(index: IndexSpec, record: Mapping[str, Any], main_key: bytes) -> bytes:
    """The index row key of ``record`` stored at ``main_key``."""
    return index.key.encode({**{f.name: record[f.name] for f in index.fields}, ROW_FIELD: main_key})


def _values_from_row(
    schema: KeySchema, index: IndexSpec, main_key: bytes, cells: Mapping[bytes, bytes], index_row: bytes | None = None
) -> dict[str, Any] | None:
    """The index fields of a stored main row (key fields decoded from the key, the others from
    their columns); None when a column is missing or the key does not decode. A key that cannot
    be decoded (md5-full) takes its key fields from ``index_row``, the index row pointing at it."""
    try:
        if schema.prefix.recoverable or index_row is None:
            values = schema.decode(main_key)
        else:
            values = index.key.decode(index_row)
        for f in index.fields:
            if f.name in index.columns:
                raw = cells.get(index.columns[f.name])
                if raw is None:
                    return None
                values[f.name] = f.cell_value(raw)
    except KeyshapeError:
        return None
    return values


def read_by_index(
    store: Store,
    schema: KeySchema,
    index: str | IndexSpec,
    *,
    limit: int | None = None,
    reverse: bool = False,
    columns: Iterable[bytes] | None = None,
    batch_size: int = 100,
    verify: bool = True,
    where: Mapping[str, Any] | None = None,
    **leading_fields: Any,
) -> Iterator[Row]:
    """Main rows found through ``index``, in index order.

    - ``store``, ``schema``: the store and the MAIN table's key schema.
    - ``index``: the ``[[index]]`` by name, or its :class:`~keyshape.schema.index.IndexSpec`.
    - ``limit``: the most main rows returned (default None: all).
    - ``reverse``: descending index order (default False).
    - ``columns``: the main-row columns to return (default None: all).
    - ``batch_size``: index rows per batch, whose main rows are fetched with one ``get_many`` (default 100).
    - ``verify``: also skip index rows whose main row no longer has the indexed values (the
      value columns are then fetched too, and returned in ``cells``); default True. Index rows
      whose main row is missing are always skipped.
    - ``where``, ``leading_fields``: leading INDEX fields, as for :func:`keyshape.read.scan` over
      the index table.
    """
    spec = index_of(schema, index)
    cols = None if columns is None else list(columns)
    if verify and cols is not None:
        cols += [c for c in spec.columns.values() if c not in cols]
    main_table = schema.table.full_name
    idx = scan(store, spec.key, reverse=reverse, columns=[spec.pointer_column], batch_size=batch_size, where=where, **leading_fields)
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
                    values = _values_from_row(schema, spec, key, cells, r.key)
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
    """What :func:`repair_index` found in the index ``index`` (and fixed when ``fixed``).

    - ``index_rows_checked`` / ``main_rows_checked``: rows read in each pass.
    - ``dangling``: index rows whose main row is missing; ``stale``: index rows not matching their
      main row; ``missing``: main rows without their index row; ``unindexable``: main rows lacking
      an index column.
    - ``counts``: how many of each of those four kinds (exact); the key lists hold at most
      ``max_listed`` keys each.
    """

    index: str
    fixed: bool
    index_rows_checked: int = 0
    main_rows_checked: int = 0
    dangling: list[bytes] = field(default_factory=list)
    stale: list[bytes] = field(default_factory=list)
    missing: list[bytes] = field(default_factory=list)
    unindexable: list[bytes] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def consistent(self) -> bool:
        return not any(self.counts.get(k) for k in ("dangling", "stale", "missing"))


def repair_index(
    store: Store, schema: KeySchema, index: str | IndexSpec, *, fix: bool = True, batch_size: int = 1000, max_listed: int = 1000
) -> RepairReport:
    """Check ``index`` against the main table both ways and, with ``fix``, repair it.

    - ``store``, ``schema``: the store and the MAIN table's key schema.
    - ``index``: the ``[[index]]`` by name, or its IndexSpec.
    - ``fix``: delete dangling and stale index rows and write missing ones (default True; False: report only).
    - ``batch_size``: rows per ``get_many`` batch (default 1000).
    - ``max_listed``: the most keys the report lists per kind (default 1000; the counts are exact).

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
            values = _values_from_row(schema, spec, key, cells, ikey)
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
