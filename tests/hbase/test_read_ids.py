"""IdAllocator: blocks from an atomic increment; ids never collide across threads or processes."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

import pytest

from keyshape.errors import KeyshapeError, SchemaError
from keyshape.read.ids import MAX_ID, CounterWentBack, IdAllocator, IdsExhausted
from keyshape.schema import FamilySpec, KeySchema, TableSpec
from keyshape.store import EmbeddedStore, ensure_table, open_store


def make_store() -> EmbeddedStore:
    store = EmbeddedStore()
    ensure_table(store, TableSpec("ids", families=[FamilySpec("c")]))
    return store


def test_blocks_come_from_one_increment_each() -> None:
    store = make_store()
    a = IdAllocator(store, "ids", b"orders", b"c:next", block=10)
    assert a.take(25) == list(range(1, 26))
    assert a.blocks_reserved == 3
    assert store.get("ids", b"orders")[b"c:next"] == (30).to_bytes(8, "big")
    b = IdAllocator(store, "ids", b"orders", b"c:next", block=10)
    assert b.next_id() == 31  # a second allocator gets the next block


def test_threads_never_collide() -> None:
    store = make_store()
    allocators = [IdAllocator(store, "ids", b"k", b"c:n", block=7) for _ in range(3)]
    results: list[list[int]] = [[] for _ in range(12)]

    def work(i: int) -> None:
        alloc = allocators[i % 3]
        for _ in range(500):
            results[i].append(alloc.next_id())
        results[i] += alloc.take(13)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [x for r in results for x in r]
    assert len(ids) == len(set(ids)) == 12 * 513
    for r in results:
        assert r[:500] == sorted(r[:500])  # increasing per allocator and thread


def test_bad_block_is_refused() -> None:
    with pytest.raises(ValueError):
        IdAllocator(make_store(), "ids", b"k", b"c:n", block=0)
    for bad in (2.5, "10", None, True):
        with pytest.raises(KeyshapeError, match="block must be a whole number >= 1"):
            IdAllocator(make_store(), "ids", b"k", b"c:n", block=bad)  # type: ignore[arg-type]
    with pytest.raises(KeyshapeError, match="n must be an int"):
        IdAllocator(make_store(), "ids", b"k", b"c:n").take(1.5)  # type: ignore[arg-type]


def test_refuses_to_pass_long_max_value() -> None:
    store = make_store()
    store.put("ids", b"k", {b"c:n": (MAX_ID - 25).to_bytes(8, "big", signed=True)})
    a = IdAllocator(store, "ids", b"k", b"c:n", block=10)
    assert a.take(20) == list(range(MAX_ID - 24, MAX_ID - 4))
    with pytest.raises(IdsExhausted, match="would pass the largest HBase long"):
        a.take(10)
    assert a.current() == MAX_ID - 5  # refused before incrementing: nothing wrapped
    with pytest.raises(IdsExhausted):
        IdAllocator(store, "ids", b"k", b"c:n", block=10).next_id()
    ids = IdAllocator(store, "ids", b"k", b"c:n", block=5).take(5)
    assert ids == list(range(MAX_ID - 4, MAX_ID + 1)) and max(ids) == MAX_ID


def test_a_wrapped_counter_is_refused() -> None:
    store = make_store()
    store.put("ids", b"k", {b"c:n": (-9223372036854775800).to_bytes(8, "big", signed=True)})
    with pytest.raises(IdsExhausted, match="negative"):
        IdAllocator(store, "ids", b"k", b"c:n").next_id()


def _deleted_counter_never_repeats(store: Any, table: str) -> None:
    a = IdAllocator(store, table, b"k", b"c:n", block=10)
    used = a.take(35)
    # increments within one ms stamp old+1, ahead of the clock (as HBase does), so a delete at
    # "now" would not reach them yet
    time.sleep(0.01)
    store.delete(table, b"k")  # the counter row is lost: the store restarts it at 0
    assert store.get(table, b"k") == {}
    with pytest.raises(CounterWentBack, match="went back"):
        a.take(10)
    with pytest.raises(CounterWentBack):  # and it stays refused, never handing out 1..40 again
        a.next_id()
    fresh = IdAllocator(store, table, b"k", b"c:n", block=10, floor=max(used))
    with pytest.raises(CounterWentBack):
        fresh.next_id()


def test_deleted_counter_never_repeats_an_id() -> None:
    _deleted_counter_never_repeats(make_store(), "ids")


@pytest.mark.hbase
def test_deleted_counter_never_repeats_an_id_hbase(hbase: Any) -> None:
    table = f"ids_{uuid.uuid4().hex[:8]}"
    store = open_store(hbase.url)
    try:
        ensure_table(store, TableSpec(table, families=[FamilySpec("c")]))
        _deleted_counter_never_repeats(store, table)
        store.delete_table(table)
    finally:
        store.close()


def test_counter_sections_of_a_schema() -> None:
    base = {"table": {"name": "o", "families": [{"name": "d"}, {"name": "t", "ttl": 86400}]}, "key": {"fields": [{"name": "id", "type": "int64"}]}}
    schema = KeySchema.from_dict({**base, "counter": [{"name": "order_id", "block": 50}, {"name": "in_main", "table": "o", "family": "d"}]})
    c, m = schema.counters
    assert (c.table.full_name, c.row, c.column, c.block) == ("o_ids", b"order_id", b"c:next", 50)
    assert m.table is schema.table and m.column == b"d:next"
    alloc = IdAllocator.for_counter(make_store_for(c.table), c)
    assert alloc.take(3) == [1, 2, 3]
    with pytest.raises(SchemaError, match=r"counter\[0\].family: family 't' has ttl = 86400"):
        KeySchema.from_dict({**base, "counter": [{"name": "x", "table": "o", "family": "t"}]})
    with pytest.raises(SchemaError, match=r"counter\[0\].block"):
        KeySchema.from_dict({**base, "counter": [{"name": "x", "block": 2.5}]})


def make_store_for(spec: TableSpec) -> EmbeddedStore:
    store = EmbeddedStore()
    ensure_table(store, spec)
    return store


_CHILD = """
import json, sys
from keyshape.read.ids import IdAllocator
from keyshape.store import open_store
store = open_store(sys.argv[1])
alloc = IdAllocator(store, sys.argv[2], b"counter", b"c:n", block=int(sys.argv[3]))
print(json.dumps([alloc.next_id() for _ in range(1000)]))
store.close()
"""


@pytest.mark.hbase
def test_two_processes_never_collide(hbase: Any) -> None:
    table = f"ids_{uuid.uuid4().hex[:8]}"
    store = open_store(hbase.url)
    try:
        ensure_table(store, TableSpec(table, families=[FamilySpec("c")]))
        # four processes, small blocks of different sizes so their increments interleave
        procs = [
            subprocess.Popen([sys.executable, "-c", _CHILD, hbase.url, table, str(block)], stdout=subprocess.PIPE, text=True)
            for block in (7, 10, 13, 50)
        ]
        outs = [json.loads(p.communicate(timeout=600)[0]) for p in procs]
        assert all(p.returncode == 0 for p in procs)
        ids = [i for out in outs for i in out]
        assert len(ids) == len(set(ids)) == 4000
        assert all(out == sorted(out) for out in outs) and min(ids) >= 1
        store.delete_table(table)
    finally:
        store.close()
