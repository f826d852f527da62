"""Embedded-store behaviour beyond the shared contract: auto-split, open_store, lifecycle."""

from __future__ import annotations

import importlib
import time

import pytest

from keyshape.errors import StoreError
from keyshape.schema import FamilySpec, TableSpec
from keyshape.store import EmbeddedStore, open_store


def _table(store: EmbeddedStore, splits: list[bytes] = ()) -> str:
    store.create_table(TableSpec("t", families=[FamilySpec("cf")]), list(splits))
    return "t"


def test_auto_split_sequential_rows_split_the_last_region() -> None:
    """Like HBase size-based splitting: monotonic rows keep landing in the newest last region."""
    store = EmbeddedStore(auto_split_rows=10)
    table = _table(store)
    for i in range(100):
        store.put(table, b"%04d" % i, {b"cf:v": b"x"})
    regions = store.regions(table)
    assert len(regions) > 5
    assert [r.end for r in regions[:-1]] == [r.start for r in regions[1:]]
    rows_per_region = [sum(1 for _ in store.scan(table, r.start, r.end)) for r in regions]
    assert sum(rows_per_region) == 100
    assert all(n <= 10 for n in rows_per_region)
    assert all(n >= 5 for n in rows_per_region[:-1])  # cold regions left about half full


def test_unsorted_split_keys_are_sorted_like_hbase_admin() -> None:
    store = EmbeddedStore()
    table = _table(store, [b"p", b"g"])
    assert [r.start for r in store.regions(table)] == [b"", b"g", b"p"]


def test_servers_round_robin() -> None:
    store = EmbeddedStore(servers=2)
    table = _table(store, [b"b", b"c", b"d"])
    assert [r.server for r in store.regions(table)] == ["embedded-0", "embedded-1"] * 2


def test_closed_store_refuses_calls() -> None:
    store = EmbeddedStore()
    table = _table(store)
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.get(table, b"r")


def test_open_store_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(open_store(None), EmbeddedStore)
    assert isinstance(open_store("embedded://"), EmbeddedStore)
    with pytest.raises(ValueError, match="unknown store"):
        open_store("ftp://x")

    real_import = importlib.import_module

    def no_hbase(name: str, *args: object) -> object:
        if name == "keyshape.store.hbase":
            raise ModuleNotFoundError("No module named 'keyshape.store.hbase'", name=name)
        return real_import(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_hbase)
    with pytest.raises(StoreError, match="HBase store could not be imported"):
        open_store("hbase://localhost:2181")
    with pytest.raises(StoreError, match="HBase store"):
        open_store("localhost:2181")


def test_expired_cells_are_dropped_when_a_read_meets_them() -> None:
    """TTL expiry is lazy: the stored bytes (RegionInfo.store_size_bytes) shrink once a scan or
    get meets expired cells, and masked puts after a delete are never stored."""
    store = EmbeddedStore()
    store.create_table(TableSpec("t", families=[FamilySpec("cf", ttl=60)]))
    old = time.time_ns() // 1_000_000 - 120_000
    store.put("t", b"r1", {b"cf:v": b"x"})
    store.put("t", b"r1", {b"cf:v": b"y"}, timestamp=old)  # older version, expires
    store.put("t", b"r2", {b"cf:v": b"x"})
    sizes = [r.store_size_bytes for r in store.regions("t")]
    with pytest.MonkeyPatch.context() as mp:  # the clock moves past the TTL of every cell
        real = time.time_ns()
        mp.setattr(time, "time_ns", lambda: real + 61 * 10**9)
        assert list(store.scan("t")) == []
    assert sizes[0] > 0 and [r.store_size_bytes for r in store.regions("t")] == [0]
    store.delete("t", b"r3")
    store.put("t", b"r3", {b"cf:v": b"x"}, timestamp=time.time_ns() // 1_000_000 - 1000)
    assert [r.store_size_bytes for r in store.regions("t")] == [0]


@pytest.mark.parametrize("ttl", [0, -1, 2**31])
def test_bad_ttl_is_refused_like_the_hbase_store(ttl: int) -> None:
    with pytest.raises(StoreError, match="ttl"):
        EmbeddedStore().create_table(TableSpec("t", families=[FamilySpec("cf", ttl=ttl)]))
