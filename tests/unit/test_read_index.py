"""Secondary index tables: writes through both tables, reads by index, repair of planted faults."""

from __future__ import annotations

from typing import Any

import pytest

from keyshape.errors import SchemaError, WriteFailed
from keyshape.read.index import index_key, read_by_index, repair_index
from keyshape.read.writes import IndexedWriter
from keyshape.schema import KeySchema
from keyshape.store import EmbeddedStore, ensure_table


def orders_schema(index_prefix: Any = None, **index_extra: Any) -> KeySchema:
    index: dict[str, Any] = {
        "name": "by_product",
        "table": "orders_by_product",
        "fields": ["product_id", "order_time", "order_id"],
        "columns": [{"name": "product_id", "type": "string", "width": 4, "column": "d:product"}],
        **index_extra,
    }
    if index_prefix is not None:
        index["prefix"] = index_prefix
    return KeySchema.from_dict(
        {
            "table": {"name": "orders", "namespace": "shop"},
            "key": {
                "separator": "_",
                "prefix": {"strategy": "mod", "buckets": 8},
                "hash_fields": ["user_id"],
                "fields": [
                    {"name": "user_id", "type": "string", "width": 4},
                    {"name": "order_time", "type": "timestamp", "order": "desc"},
                    {"name": "order_id", "type": "string", "width": 6},
                ],
            },
            "index": [index],
        }
    )


ORDERS = [{"user_id": f"u{i % 5}", "order_time": 1000 + i, "order_id": f"o{i:05d}", "product_id": f"p{i % 3}"} for i in range(40)]


def setup(schema: KeySchema) -> EmbeddedStore:
    store = EmbeddedStore()
    ensure_table(store, schema.table, schema.split_keys())
    spec = schema.indexes[0]
    ensure_table(store, spec.table, spec.key.split_keys())
    with IndexedWriter(store, schema, batch_size=7) as w:
        for o in ORDERS:
            w.put(o, {b"d:total": b"%d" % len(o["order_id"])})
    return store


@pytest.mark.parametrize("prefix", [None, {"strategy": "mod", "buckets": 4}])
def test_read_by_index_returns_main_rows_in_index_order(prefix: Any) -> None:
    schema = orders_schema(prefix)
    store = setup(schema)
    rows = list(read_by_index(store, schema, "by_product", product_id="p1", batch_size=3))
    want = sorted((o for o in ORDERS if o["product_id"] == "p1"), key=lambda o: (-o["order_time"],))
    # order_time is descending in the index key (it reuses the key field's encoding)
    assert [r.key for r in rows] == [schema.encode(o) for o in want]
    assert all(r.cells[b"d:product"] == b"p1" for r in rows)  # the value, not its padded key bytes
    assert [r.fields["order_id"] for r in read_by_index(store, schema, "by_product", product_id="p1", limit=2)] == [o["order_id"] for o in want[:2]]


def test_index_rows_point_at_main_rows() -> None:
    schema = orders_schema()
    store = setup(schema)
    spec = schema.indexes[0]
    o = ORDERS[5]
    ikey = index_key(spec, o, schema.encode(o))
    assert store.get(spec.table.full_name, ikey) == {b"i:row": schema.encode(o)}
    assert spec.table.full_name == "shop:orders_by_product"
    assert spec.key.decode(ikey)["row"] == schema.encode(o)


def test_repair_finds_and_fixes_planted_inconsistencies() -> None:
    schema = orders_schema()
    store = setup(schema)
    spec = schema.indexes[0]
    main, idx = schema.table.full_name, spec.table.full_name
    # 1. dangling: main row deleted behind the index's back
    gone = ORDERS[3]
    store.delete(main, schema.encode(gone))
    # 2. missing: an index row lost (as after a crash between the two writes)
    lost = ORDERS[7]
    store.delete(idx, index_key(spec, lost, schema.encode(lost)))
    # 3. stale: the product of an order changed in the main row only
    moved = dict(ORDERS[10])
    store.put(main, schema.encode(moved), {b"d:product": b"00p2"})

    # readers never see the dangling or stale rows
    seen = {r.key for r in read_by_index(store, schema, "by_product", product_id=moved["product_id"])}
    assert schema.encode(moved) not in seen

    report = repair_index(store, schema, "by_product", fix=False, batch_size=5)
    assert report.dangling == [index_key(spec, gone, schema.encode(gone))]
    assert report.stale == [index_key(spec, ORDERS[10], schema.encode(moved))]
    moved["product_id"] = "p2"
    assert sorted(report.missing) == sorted([schema.encode(lost), schema.encode(moved)])
    assert not report.consistent and report.index_rows_checked == 39
    assert report.main_rows_checked == 39

    fixed = repair_index(store, schema, "by_product", batch_size=5)
    assert fixed.counts == report.counts
    again = repair_index(store, schema, "by_product", fix=False)
    assert again.consistent and again.index_rows_checked == 39
    p2 = {r.key for r in read_by_index(store, schema, "by_product", product_id="p2")}
    assert schema.encode(moved) in p2 and schema.encode(lost) in {
        r.key for r in read_by_index(store, schema, "by_product", product_id=lost["product_id"])
    }


class FailingMain:
    """A store whose main-table writer refuses one row, as a region server might."""

    def __init__(self, inner: Any, table: str, bad: bytes) -> None:
        self.inner, self.table, self.bad = inner, table, bad

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def writer(self, table: str, **kw: Any) -> Any:
        w = self.inner.writer(table, **kw)
        if table != self.table:
            return w
        outer = self

        class W:
            def __enter__(self) -> Any:
                return self

            def put(self, row: bytes, cells: Any, ts: Any = None) -> None:
                if row != outer.bad:
                    w.put(row, cells, ts)

            def __exit__(self, *exc: Any) -> None:
                w.flush()
                raise WriteFailed("refused", [outer.bad])

        return W()


def test_failed_main_write_never_leaves_an_index_row() -> None:
    schema = orders_schema()
    inner = EmbeddedStore()
    ensure_table(inner, schema.table)
    spec = schema.indexes[0]
    ensure_table(inner, spec.table)
    bad = schema.encode(ORDERS[2])
    store = FailingMain(inner, schema.table.full_name, bad)
    with pytest.raises(WriteFailed) as err:
        with IndexedWriter(store, schema) as w:
            for o in ORDERS[:5]:
                w.put(o)
    assert err.value.rows == [bad]
    assert inner.get(spec.table.full_name, index_key(spec, ORDERS[2], bad)) == {}
    assert repair_index(inner, schema, "by_product", fix=False).consistent


def test_index_schema_errors_name_the_fix() -> None:
    with pytest.raises(SchemaError, match="neither a key field"):
        KeySchema.from_dict(
            {"table": {"name": "t"}, "key": {"fields": [{"name": "a", "type": "string"}]}, "index": [{"name": "x", "table": "t_x", "fields": ["b"]}]}
        )
    with pytest.raises(SchemaError, match="random"):
        orders_schema({"strategy": "random", "buckets": 4})
