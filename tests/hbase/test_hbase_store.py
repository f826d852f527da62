"""HBaseStore on a real HBase: what the Store contract suite does not cover.

Each test pins a behaviour of HBase itself (region layout from hbase:meta, family attributes from
the master's table descriptor, per-row Multi results) or one of hbase-driver's bugs that the store
works around (tools/hbase/CLIENTS.md numbers them).
"""

from __future__ import annotations

import dataclasses
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from keyshape.errors import StoreError, TableNotFound, WriteFailed
from keyshape.schema import FamilySpec, KeySchema, TableSpec
from keyshape.store import (
    create_table_from_schema,
    ensure_table,
    open_store,
    verify_regions,
)
from keyshape.store.hbase import HBaseStore

pytestmark = pytest.mark.hbase
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def store(hbase_store: HBaseStore) -> HBaseStore:
    return hbase_store


def _name(prefix: str = "ks_hb") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


@pytest.fixture
def make_table(store: HBaseStore) -> Iterator[Any]:
    created: list[str] = []

    def make(splits: list[bytes], families: list[FamilySpec] | None = None, namespace: str = "default") -> str:
        spec = TableSpec(_name(), namespace=namespace, families=families or [FamilySpec("cf")])
        ensure_table(store, spec, splits)
        created.append(spec.full_name)
        return spec.full_name

    yield make
    for name in created:
        if store.table_exists(name):
            store.delete_table(name)


def test_open_store_gives_hbase_store(hbase: Any) -> None:
    opened = open_store(f"hbase://{hbase.url}")
    try:
        assert isinstance(opened, HBaseStore)
    finally:
        opened.close()


def test_orders_example_pre_split_has_exactly_the_intended_regions(store: HBaseStore) -> None:
    """examples/orders.toml: 100 mod buckets "00".."99" in 20 regions -> boundaries every 5th
    bucket, read back from hbase:meta itself (not from the store's cache); SNAPPY family."""
    schema = KeySchema.load(EXAMPLES / "orders.toml")
    namespace = _name("ksns")
    schema_copy = _with_namespace(schema, namespace)
    expected = [b"%02d" % b for b in range(5, 100, 5)]
    regions = create_table_from_schema(store, schema_copy)
    full = f"{namespace}:orders"
    try:
        assert [r.start for r in regions] == [b"", *expected]
        assert [r.end for r in regions] == [*expected, b""]
        meta_rows = store.cluster.read_meta(namespace, "orders")
        assert sorted(info.start_key for _, info, _ in meta_rows) == [b"", *expected]
        assert all(state == b"OPEN" for _, _, state in meta_rows)
        assert store.describe_table(full)["d"]["COMPRESSION"] == "SNAPPY"
    finally:
        store.delete_table(full)
        store.delete_namespace(namespace)


def _with_namespace(schema: KeySchema, namespace: str) -> KeySchema:
    """``schema`` whose table lives in ``namespace`` (tests must not touch shop:orders): a real
    KeySchema (its indexes and counters included), so create_table_from_schema sees what a user's has."""
    copy = KeySchema.load(EXAMPLES / "orders.toml")
    copy.table = dataclasses.replace(schema.table, namespace=namespace)
    return copy


def test_verify_regions_names_the_difference(store: HBaseStore, make_table: Any) -> None:
    table = make_table([b"m"])
    assert [r.start for r in verify_regions(store, table, [b"m"])] == [b"", b"m"]
    with pytest.raises(StoreError, match=r"'k'.*'m'|'m'.*'k'"):
        verify_regions(store, table, [b"k"])


def test_snappy_and_zstd_families_take_writes_and_flush(store: HBaseStore, make_table: Any) -> None:
    """The standalone HBase loads aircompressor's codecs: a flush writes compressed HFiles."""
    table = make_table([b"m"], [FamilySpec("s", compression="SNAPPY"), FamilySpec("z", compression="ZSTD")])
    with store.writer(table) as writer:
        for i in range(500):
            writer.put(b"%05d" % i, {b"s:v": b"snappy-%d" % i * 20, b"z:v": b"zstd-%d" % i * 20})
    store.flush_table(table)
    assert store.get(table, b"00042") == {b"s:v": b"snappy-42" * 20, b"z:v": b"zstd-42" * 20}
    assert len(list(store.scan(table))) == 500


def test_rows_equal_to_split_keys_route_to_their_own_region(store: HBaseStore, make_table: Any) -> None:
    """CLIENTS.md bug 2: hbase-driver sends a row equal to a split key to the previous region."""
    splits = [b"%02d" % b for b in range(5, 100, 5)]
    table = make_table(splits)
    for key in splits[:10]:
        store.put(table, key, {b"cf:v": key})
    with store.writer(table) as writer:
        for key in splits[10:]:
            writer.put(key, {b"cf:v": key})
    assert store.get_many(table, splits) == [(k, {b"cf:v": k}) for k in splits]
    regions = store.regions(table)
    for region in regions[1:]:
        rows = [r for r, _ in store.scan(table, region.start, region.end)]
        assert rows == [region.start]


def test_scans_cross_empty_regions_both_ways(store: HBaseStore, make_table: Any) -> None:
    """CLIENTS.md bug 3: rows only in regions 2, 5 and 9 of 12; the rest are empty."""
    splits = [bytes([c]) for c in b"bcdefghijkl"]
    table = make_table(splits)
    rows = [b"c1", b"c2", b"f", b"f\x00", b"j\xff"]
    for row in rows:
        store.put(table, row, {b"cf:v": row})
    for batch in (1, 2, 1000):
        assert [r for r, _ in store.scan(table, batch_size=batch)] == rows
        assert [r for r, _ in store.scan(table, reverse=True, batch_size=batch)] == rows[::-1]
        assert [r for r, _ in store.scan(table, b"i", b"c1", reverse=True, batch_size=batch)] == [b"f\x00", b"f", b"c2"]
        assert [r for r, _ in store.scan(table, b"f", reverse=True, batch_size=batch)] == [b"f", b"c2", b"c1"]
        assert [r for r, _ in store.scan(table, b"a", b"f\x00", batch_size=batch)] == [b"c1", b"c2", b"f"]
    assert [r for r, _ in store.scan(table, reverse=True, limit=4, batch_size=3)] == rows[::-1][:4]
    assert [r for r, _ in store.scan(table, b"k", b"d", reverse=True)] == [b"j\xff", b"f\x00", b"f"]
    assert list(store.scan(table, b"e\xff", b"d", reverse=True)) == []  # only empty regions
    assert list(store.scan(table, b"g", b"j")) == []


def test_batches_over_128_kib_are_stored(store: HBaseStore, make_table: Any) -> None:
    """CLIENTS.md bug 1: hbase-driver corrupts the length of requests >= 128 KiB."""
    table = make_table([b"m"])
    big = bytes(range(256)) * 800  # 200 KiB in one cell
    store.put(table, b"big", {b"cf:v": big})
    with store.writer(table, batch_size=10_000, max_bytes=8 * 1024 * 1024) as writer:
        for i in range(300):
            writer.put(b"r%04d" % i, {b"cf:v": bytes([i % 251]) * 2048})  # ~600 KiB in one Multi
    assert store.get(table, b"big") == {b"cf:v": big}
    got = dict(store.scan(table, b"r", b"s"))
    assert len(got) == 300 and got[b"r0299"] == {b"cf:v": bytes([299 % 251]) * 2048}


def test_family_options_are_stored_with_hbase_keys(store: HBaseStore, make_table: Any) -> None:
    """CLIENTS.md bug 6: options must use HBase's keys or HBase ignores them."""
    family = FamilySpec(
        "f", versions=4, compression="ZSTD", bloom_filter="ROWCOL", block_size=32768, ttl=86400, in_memory=True, data_block_encoding="FAST_DIFF"
    )
    table = make_table([], [family])
    options = store.describe_table(table)["f"]
    assert {k: options[k] for k in ("VERSIONS", "COMPRESSION", "BLOOMFILTER", "BLOCKSIZE", "TTL", "IN_MEMORY", "DATA_BLOCK_ENCODING")} == {
        "VERSIONS": "4",
        "COMPRESSION": "ZSTD",
        "BLOOMFILTER": "ROWCOL",
        "BLOCKSIZE": "32768",
        "TTL": "86400",
        "IN_MEMORY": "true",
        "DATA_BLOCK_ENCODING": "FAST_DIFF",
    }
    now_ms = time.time_ns() // 1_000_000  # inside the 1-day TTL
    for ts in range(1, 7):
        store.put(table, b"row", {b"f:q": b"%d" % ts}, timestamp=now_ms - 100 + ts)
    assert len(store.cells(table, b"row", b"f:q")) == 4


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [
        ("compression", "SNAPPY2", "compression"),
        ("bloom_filter", "ROWX", "bloom_filter"),
        ("data_block_encoding", "PREFIX_TREE", "data_block_encoding"),
        ("block_size", 100, "block_size"),
        ("versions", 0, "versions"),
    ],
)
def test_invalid_family_options_are_refused_before_sending(store: HBaseStore, option: str, value: Any, named: str) -> None:
    name = _name()
    spec = TableSpec(name, families=[dataclasses.replace(FamilySpec("f"), **{option: value})])
    with pytest.raises(StoreError, match=named) as info:
        store.create_table(spec)
    assert "\n" not in str(info.value)
    assert not store.table_exists(name)


def test_write_failed_lists_exactly_the_rows_not_written(store: HBaseStore, make_table: Any) -> None:
    """Per-row Multi results: rows with an unknown family fail alone, the others are stored."""
    table = make_table([b"r20", b"r40"])
    bad = {b"r07", b"r23", b"r41"}
    rows = [b"r%02d" % i for i in range(50)]
    with pytest.raises(WriteFailed) as info:
        with store.writer(table, batch_size=1000) as writer:
            for row in rows:
                writer.put(row, {(b"nope:v" if row in bad else b"cf:v"): row})
    assert info.value.rows == sorted(bad)
    assert "cf" in str(info.value) and "\n" not in str(info.value)
    assert [r for r, _ in store.scan(table)] == [r for r in rows if r not in bad]


def test_stale_region_map_is_re_read_and_counted(hbase: Any, store: HBaseStore) -> None:
    """NotServingRegion after the table was re-created elsewhere: re-read hbase:meta and retry."""
    spec = TableSpec(_name(), families=[FamilySpec("cf")])
    store.create_table(spec, [b"m"])
    try:
        store.put(spec.full_name, b"a", {b"cf:v": b"1"})  # caches the old region map
        other = HBaseStore.from_url(hbase.url)
        try:
            other.delete_table(spec.full_name)
            other.create_table(spec, [b"g", b"t"])
        finally:
            other.close()
        before = store.retry_count
        store.put(spec.full_name, b"h", {b"cf:v": b"2"})
        with store.writer(spec.full_name) as writer:
            writer.put(b"z", {b"cf:v": b"3"})
        assert store.get(spec.full_name, b"h") == {b"cf:v": b"2"}
        assert [r for r, _ in store.scan(spec.full_name)] == [b"h", b"z"]
        assert store.retry_count > before
    finally:
        store.delete_table(spec.full_name)


def test_unknown_table_and_namespace_are_one_clear_line(store: HBaseStore) -> None:
    namespace = _name("ksnope")
    with pytest.raises(TableNotFound, match=f"namespace '{namespace}' does not exist"):
        store.get(f"{namespace}:t", b"r")
    with pytest.raises(TableNotFound, match="does not exist"):
        list(store.scan(_name()))
    with pytest.raises(StoreError, match="namespace") as info:
        store.create_table(TableSpec("t", namespace=namespace))
    assert "\n" not in str(info.value)


def test_connection_refused_is_a_clear_store_error() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(StoreError, match="cannot reach ZooKeeper") as info:
        open_store(f"hbase://127.0.0.1:{port}")
    assert "\n" not in str(info.value)


def test_nonces_do_not_follow_the_random_module(hbase: Any, make_table: Any) -> None:
    """HBase applies a request with an already-seen (nonce group, nonce) once: nonces drawn from a
    reseeded `random` (as Hypothesis does per example) would silently drop increments."""
    import random

    table = make_table([])
    for _ in range(2):
        random.seed(7)
        other = HBaseStore.from_url(hbase.url)
        try:
            other.increment(table, b"ctr", b"cf:n")
        finally:
            other.close()
    random.seed(7)
    probe = HBaseStore.from_url(hbase.url)
    try:
        assert probe.get(table, b"ctr") == {b"cf:n": (2).to_bytes(8, "big")}
    finally:
        probe.close()


def test_calls_in_flight_on_one_connection_get_their_own_answers(store: HBaseStore, make_table: Any) -> None:
    """Several Gets sent before any answer is read, then read in the opposite order: HBase
    answers by call id (in the order it finishes), and each caller gets its own row."""
    from hbasedriver.protobuf_py import Client_pb2

    table = make_table([b"m"])
    rows = [b"a%d" % i for i in range(6)] + [b"z%d" % i for i in range(6)]
    for row in rows:
        store.put(table, row, {b"cf:v": row * 3})
    namespace, name = table.split(":", 1) if ":" in table else ("default", table)
    regions = store.cluster.region_list(namespace, name)
    sent = []
    for row in rows:
        region = regions.at(row)
        conn = store.cluster.connection(region.host, region.port)
        get = Client_pb2.GetRequest(region=region.spec(), get=Client_pb2.Get(row=row))
        sent.append((row, conn, conn.send("Get", get)))
    for row, conn, call in reversed(sent):
        result = conn.receive(call, Client_pb2.GetResponse).result
        assert [(c.row, c.value) for c in result.cell] == [(row, row * 3)]


def test_scans_stopped_early_leave_no_answer_behind(store: HBaseStore, make_table: Any) -> None:
    """A region scan asks for its next batch before handing out the current one; stopping after
    the first batch takes that answer and closes the scanner, so the connection serves the next
    call normally (no stray answer read as someone else's)."""
    table = make_table([])
    for i in range(50):
        store.put(table, b"r%03d" % i, {b"cf:v": b"x"})
    for _ in range(3):
        batches = store.scan_batches(table, batch_size=10)
        first = next(iter(batches))
        assert first[0] == [b"r%03d" % i for i in range(10)]
        batches.close()  # type: ignore[attr-defined]
        assert [k for k, _ in store.scan(table, batch_size=7)] == [b"r%03d" % i for i in range(50)]
        assert store.get(table, b"r049") == {b"cf:v": b"x"}
