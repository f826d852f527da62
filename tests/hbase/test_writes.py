"""Writes keep one copy of each record under every prefix strategy, never leave an index row
without its main row, and never lose a re-put to a delete in the same millisecond; checked
against a plain dict on the embedded store and on a real HBase."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import write_oracle as wo

from keyshape.errors import KeyshapeError, SchemaError
from keyshape.read import IndexedWriter, delete_record, get, put_record, repair_index
from keyshape.read.index import index_key
from keyshape.schema import KeySchema
from keyshape.store import EmbeddedStore, create_table_from_schema, open_store

DETERMINISTIC = [s for s in wo.STRATEGIES if s[0] != "random"]
OPS = {"random": 10_000, **{s: 10_000 // len(DETERMINISTIC) for s, _ in DETERMINISTIC}}


@pytest.mark.parametrize("strategy,options", wo.STRATEGIES, ids=[s for s, _ in wo.STRATEGIES])
def test_random_writes_match_the_oracle_embedded(strategy: str, options: dict[str, int]) -> None:
    # 10,000 operations under random salt, 10,000 spread over the deterministic strategies
    store = EmbeddedStore()
    schema = wo.schema_for(strategy, options)
    oracle = wo.run(store, schema, OPS[strategy], seed=len(strategy))
    wo.check(store, schema, oracle)


@pytest.mark.hbase
@pytest.mark.parametrize("strategy,options", wo.STRATEGIES, ids=[s for s, _ in wo.STRATEGIES])
def test_random_writes_match_the_oracle_hbase(hbase: Any, strategy: str, options: dict[str, int]) -> None:
    store = open_store(hbase.url)
    schema = wo.schema_for(strategy, options)
    try:
        oracle = wo.run(store, schema, OPS[strategy] // (1 if strategy == "random" else 2), seed=len(strategy))
        wo.check(store, schema, oracle)
    finally:
        wo.drop_tables(store, schema)
        store.close()


def _random_schema(buckets: int = 8) -> KeySchema:
    return KeySchema.from_dict(
        {
            "table": {"name": f"rs_{uuid.uuid4().hex[:8]}"},
            "key": {"separator": "_", "prefix": {"strategy": "random", "buckets": buckets}, "fields": [{"name": "id", "type": "string", "width": 6}]},
        }
    )


@pytest.mark.parametrize("backend", ["embedded", pytest.param("hbase", marks=pytest.mark.hbase)])
def test_random_salt_put_then_delete_leaves_nothing_and_update_keeps_one_copy(backend: str, request: Any) -> None:
    store = EmbeddedStore() if backend == "embedded" else open_store(request.getfixturevalue("hbase").url)
    schema = _random_schema()
    create_table_from_schema(store, schema, verify=False)
    try:
        for i in range(200 if backend == "embedded" else 60):
            rec = {"id": f"r{i}"}
            put_record(store, schema, rec, {b"d:v": b"1"})
            put_record(store, schema, rec, {b"d:v": b"2"})  # an update: the bucket it finds
            rows = get(store, schema, rec)
            assert [r.cells for r in rows] == [{b"d:v": b"2"}]
            delete_record(store, schema, rec)
            assert get(store, schema, rec) == []
        # a copy written behind the writer's back (another bucket) is removed by the next update
        rec = {"id": "dup"}
        put_record(store, schema, rec, {b"d:v": b"a"})
        first = get(store, schema, rec)[0].key
        other = next(schema.prefix.apply(b, first[len(schema.prefix.bucket(0)) + 1 :]) for b in schema.prefix.buckets() if not first.startswith(b))
        store.put(schema.table.full_name, other, {b"d:v": b"b"})
        assert len(get(store, schema, rec)) == 2
        put_record(store, schema, rec, {b"d:v": b"c"})
        rows = get(store, schema, rec)  # the first copy in key order is kept, the other removed
        assert [(r.key, r.cells) for r in rows] == [(min(first, other), {b"d:v": b"c"})]
    finally:
        store.delete_table(schema.table.full_name)
        store.close()


@pytest.mark.parametrize("backend", ["embedded", pytest.param("hbase", marks=pytest.mark.hbase)])
def test_delete_then_put_within_a_millisecond_keeps_the_new_row(backend: str, request: Any) -> None:
    store = EmbeddedStore() if backend == "embedded" else open_store(request.getfixturevalue("hbase").url)
    schema = wo.schema_for("mod", {"buckets": 2})
    create_table_from_schema(store, schema, verify=False)
    try:
        rec = {"user": 1, "order": 2, "product": "p1"}
        n = 30 if backend == "embedded" else 10
        for i in range(n):
            put_record(store, schema, rec, {b"d:v": b"old"})
            delete_record(store, schema, rec)  # separate writers, back to back
            put_record(store, schema, {**rec, "product": "p2" if i % 2 else "p1"}, {b"d:v": b"new%d" % i})
            assert get(store, schema, rec)[0].cells[b"d:v"] == b"new%d" % i
            with IndexedWriter(store, schema) as w:  # one writer, one flush
                w.delete(rec)
                w.put(rec, {b"d:v": b"again%d" % i})
            assert get(store, schema, rec)[0].cells == {b"d:v": b"again%d" % i, b"d:product": b"p1"}
        wo.check(store, schema, {(1, 2): {"product": "p1", "cells": {b"d:v": b"again%d" % (n - 1)}}})
    finally:
        wo.drop_tables(store, schema)
        store.close()


def test_a_failing_indexed_put_leaves_nothing_behind() -> None:
    store = EmbeddedStore()
    schema = KeySchema.from_dict(
        {
            "table": {"name": "o", "families": [{"name": "d"}]},
            "key": {"separator": "_", "fields": [{"name": "id", "type": "string", "width": 4}]},
            "index": [
                {"name": "a", "table": "o_a", "fields": ["id"]},
                {"name": "b", "table": "o_b", "fields": ["n"], "columns": [{"name": "n", "type": "int32"}]},
            ],
        }
    )
    create_table_from_schema(store, schema, verify=False)
    w = IndexedWriter(store, schema)
    with pytest.raises(KeyshapeError, match="lacks 'n', a field of index 'b'"):
        w.put({"id": "x1"})
    with pytest.raises(KeyshapeError, match="field 'n' of index 'b'"):
        w.put({"id": "x2", "n": "not a number"})
    with pytest.raises(KeyshapeError, match="lacks 'n'"):
        w.put({"id": "x3", "n": None})
    w.put({"id": "ok", "n": 7})
    w.flush()
    for table in ("o", "o_a", "o_b"):
        assert len(list(store.scan(table))) == 1, table  # only the good record, in every table


def test_index_column_outside_the_main_families_is_refused_at_load() -> None:
    with pytest.raises(SchemaError, match=r"index\[0\].columns\[0\].column: 'x:n' is not a column of a family"):
        KeySchema.from_dict(
            {
                "table": {"name": "o", "families": [{"name": "d"}]},
                "key": {"fields": [{"name": "id", "type": "string", "width": 4}]},
                "index": [{"name": "b", "table": "o_b", "fields": ["n"], "columns": [{"name": "n", "type": "int32", "column": "x:n"}]}],
            }
        )


def test_none_is_not_a_string_value() -> None:
    schema = _random_schema()
    with pytest.raises(KeyshapeError, match="field 'id' has no value"):
        schema.encode({"id": None})


def test_delete_needs_only_the_key_and_removes_the_stored_index_rows() -> None:
    store = EmbeddedStore()
    schema = wo.schema_for("random", {"buckets": 4})
    create_table_from_schema(store, schema, verify=False)
    put_record(store, schema, {"user": 3, "order": 4, "product": "p2"})
    key = get(store, schema, {"user": 3, "order": 4})[0].key
    spec = schema.indexes[0]
    assert store.get(spec.table.full_name, index_key(spec, {"product": "p2", "order": 4}, key))
    delete_record(store, schema, {"user": 3, "order": 4})
    for s in schema.indexes:
        assert list(store.scan(s.table.full_name)) == []
    assert list(store.scan(schema.table.full_name)) == []


class RefusingDeletes:
    """A store whose writer for one table refuses every delete, as a failing region might."""

    def __init__(self, inner: Any, table: str) -> None:
        self.inner, self.table = inner, table

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def writer(self, table: str, **kw: Any) -> Any:
        w = self.inner.writer(table, **kw)
        if table != self.table:
            return w
        refused: list[bytes] = []

        class W:
            def __enter__(self) -> Any:
                return self

            def put(self, row: bytes, cells: Any, ts: Any = None) -> None:
                w.put(row, cells, ts)

            def delete(self, row: bytes, columns: Any = None) -> None:
                refused.append(row)

            def __exit__(self, *exc: Any) -> None:
                w.flush()
                if refused:
                    from keyshape.errors import WriteFailed

                    raise WriteFailed("refused", list(refused))

        return W()


@pytest.mark.parametrize("failing", ["index", "main"])
def test_a_failing_delete_never_leaves_an_index_row_without_its_main_row(failing: str) -> None:
    inner = EmbeddedStore()
    schema = wo.schema_for("random", {"buckets": 4})
    create_table_from_schema(inner, schema, verify=False)
    recs = [{"user": i, "order": 1, "product": "p1"} for i in range(5)]
    with IndexedWriter(inner, schema) as w:
        for r in recs:
            w.put(r)
    table = schema.indexes[0].table.full_name if failing == "index" else schema.table.full_name
    store = RefusingDeletes(inner, table)
    from keyshape.errors import WriteFailed

    with pytest.raises(WriteFailed) as err:
        with IndexedWriter(store, schema) as w:
            w.delete(recs[0])
            w.put({**recs[1], "product": "p2"})  # an update: its old index row must go first
    # a refused index delete holds back both records; a refused main delete only the deleted one
    # (the update writes its main row in place)
    assert len(err.value.rows) == (2 if failing == "index" else 1)
    for spec in schema.indexes:  # every index row still points at a main row that matches it
        report = repair_index(inner, schema, spec, fix=False)
        assert report.counts["dangling"] == 0 and report.counts["stale"] == 0, report.counts
    if failing == "index":  # nothing of either record changed
        assert len(get(inner, schema, recs[0])) == 1
        assert get(inner, schema, recs[1])[0].cells[b"d:product"] == b"p1"
    else:  # the deleted record's main row is left without index rows: repair adds them back
        assert repair_index(inner, schema, "by_product", fix=False).counts["missing"] == 1
