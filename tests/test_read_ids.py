"""IdAllocator: blocks from an atomic increment; ids never collide across threads or processes."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from typing import Any

import pytest

from keyshape.read.ids import IdAllocator
from keyshape.schema import FamilySpec, TableSpec
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


_CHILD = """
import json, sys
from keyshape.read.ids import IdAllocator
from keyshape.store import open_store
store = open_store(sys.argv[1])
alloc = IdAllocator(store, sys.argv[2], b"counter", b"c:n", block=50)
print(json.dumps([alloc.next_id() for _ in range(1000)]))
store.close()
"""


@pytest.mark.hbase
def test_two_processes_never_collide(hbase: Any) -> None:
    table = f"ids_{uuid.uuid4().hex[:8]}"
    store = open_store(hbase.url)
    try:
        ensure_table(store, TableSpec(table, families=[FamilySpec("c")]))
        procs = [subprocess.Popen([sys.executable, "-c", _CHILD, hbase.url, table], stdout=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        outs = [json.loads(p.communicate(timeout=600)[0]) for p in procs]
        assert all(p.returncode == 0 for p in procs)
        ids = outs[0] + outs[1]
        assert len(ids) == len(set(ids)) == 2000
        store.delete_table(table)
    finally:
        store.close()
