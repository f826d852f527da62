"""The Store contract: every store (embedded, HBase) must pass these tests unchanged.

Semantics pinned here are HBase's: regions and scans are [start, stop) over unsigned bytes; a
reversed Scan (Scan#setReversed with withStartRow/withStopRow) returns stop < row <= start
descending; Increment stores an 8-byte big-endian long; a family keeps VERSIONS versions.
To add a store, add a param to the ``store`` fixture.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from keyshape.errors import StoreError, TableNotFound
from keyshape.schema import FamilySpec, TableSpec
from keyshape.store import EmbeddedStore, ensure_table
from keyshape.store.base import BatchWriter, Store

SPLITS = [b"g", b"p"]


def _embedded(request: pytest.FixtureRequest) -> Store:
    return EmbeddedStore()


def _hbase(request: pytest.FixtureRequest) -> Store:
    from keyshape.store.hbase import HBaseStore

    return HBaseStore.from_url(request.getfixturevalue("hbase").url)


@pytest.fixture(
    params=[
        pytest.param(_embedded, id="embedded"),
        pytest.param(_hbase, id="hbase", marks=pytest.mark.hbase),
    ]
)
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    opened = request.param(request)
    try:
        yield opened
    finally:
        opened.close()


def _spec(name: str, namespace: str = "default") -> TableSpec:
    return TableSpec(
        name=name,
        namespace=namespace,
        families=[FamilySpec("cf", versions=3), FamilySpec("meta", versions=1)],
    )


@pytest.fixture
def table(store: Store) -> Iterator[str]:
    """A fresh table with families cf (3 versions) and meta (1), pre-split at SPLITS."""
    spec = _spec(f"ks_contract_{uuid.uuid4().hex[:12]}")
    store.create_table(spec, SPLITS)
    try:
        yield spec.full_name
    finally:
        if store.table_exists(spec.full_name):
            store.delete_table(spec.full_name)


def eventually(check: Callable[[], bool], timeout: float = 30.0) -> bool:
    """True as soon as ``check()`` holds; a live cluster reports region loads with a delay."""
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)


# --- tables and namespaces -----------------------------------------------------------------------


def test_store_satisfies_protocol(store: Store) -> None:
    assert isinstance(store, Store)


def test_create_exists_list_delete(store: Store) -> None:
    name = f"ks_contract_{uuid.uuid4().hex[:12]}"
    assert not store.table_exists(name)
    store.create_table(_spec(name))
    try:
        assert store.table_exists(name)
        assert name in store.list_tables()
        with pytest.raises(StoreError, match="exists"):
            store.create_table(_spec(name))
    finally:
        store.delete_table(name)
    assert not store.table_exists(name)
    assert name not in store.list_tables()
    with pytest.raises(TableNotFound):
        store.delete_table(name)


def test_unknown_table_raises_table_not_found(store: Store) -> None:
    missing = f"ks_missing_{uuid.uuid4().hex[:12]}"
    for call in (
        lambda: store.get(missing, b"r"),
        lambda: store.put(missing, b"r", {b"cf:a": b"1"}),
        lambda: list(store.scan(missing)),
        lambda: store.regions(missing),
    ):
        with pytest.raises(TableNotFound):
            call()


def test_missing_namespace_is_refused_then_ensure_table_creates_it(store: Store) -> None:
    namespace = f"ksns_{uuid.uuid4().hex[:10]}"
    spec = _spec("t", namespace=namespace)
    with pytest.raises(StoreError, match="namespace"):
        store.create_table(spec)
    ensure_table(store, spec, [b"m"])
    try:
        assert store.namespace_exists(namespace)
        assert f"{namespace}:t" in store.list_tables()
        assert [r.end for r in store.regions(f"{namespace}:t")] == [b"m", b""]
    finally:
        store.delete_table(f"{namespace}:t")


@pytest.mark.parametrize("splits", [[b"a", b"a"], [b"a", b""]])
def test_bad_split_keys_are_refused(store: Store, splits: list[bytes]) -> None:
    """HBase Admin.createTable refuses duplicate and empty split keys."""
    with pytest.raises(StoreError):
        store.create_table(_spec(f"ks_contract_{uuid.uuid4().hex[:12]}"), splits)


# --- put / get -----------------------------------------------------------------------------------


def test_get_returns_newest_version(store: Store, table: str) -> None:
    store.put(table, b"row", {b"cf:a": b"old"}, timestamp=1000)
    store.put(table, b"row", {b"cf:a": b"new", b"meta:m": b"x"}, timestamp=2000)
    store.put(table, b"row", {b"cf:a": b"older"}, timestamp=1500)  # not the newest
    assert store.get(table, b"row") == {b"cf:a": b"new", b"meta:m": b"x"}
    assert store.get(table, b"absent") == {}


def test_same_timestamp_replaces_the_cell(store: Store, table: str) -> None:
    store.put(table, b"row", {b"cf:a": b"1"}, timestamp=1000)
    store.put(table, b"row", {b"cf:a": b"2"}, timestamp=1000)
    assert store.cells(table, b"row", b"cf:a") == [(1000, b"2")]


def test_versions_kept_per_family(store: Store, table: str) -> None:
    for ts in range(1, 6):
        store.put(table, b"row", {b"cf:a": b"v%d" % ts, b"meta:a": b"m%d" % ts}, timestamp=ts * 1000)
    assert store.cells(table, b"row", b"cf:a") == [(5000, b"v5"), (4000, b"v4"), (3000, b"v3")]
    assert store.cells(table, b"row", b"cf:a", versions=2) == [(5000, b"v5"), (4000, b"v4")]
    assert store.cells(table, b"row", b"meta:a") == [(5000, b"m5")]


def test_get_selects_columns_and_families(store: Store, table: str) -> None:
    store.put(table, b"row", {b"cf:a": b"1", b"cf:b": b"2", b"meta:c": b"3"})
    assert store.get(table, b"row", columns=[b"cf"]) == {b"cf:a": b"1", b"cf:b": b"2"}
    assert store.get(table, b"row", columns=[b"cf:b", b"meta"]) == {b"cf:b": b"2", b"meta:c": b"3"}
    assert store.get(table, b"row", columns=[b"cf:zz"]) == {}


def test_put_to_unknown_family_names_the_families(store: Store, table: str) -> None:
    with pytest.raises(StoreError, match="cf"):
        store.put(table, b"row", {b"nope:a": b"1"})
    assert store.get(table, b"row") == {}


def test_get_many_keeps_request_order_and_drops_missing(store: Store, table: str) -> None:
    for row in (b"a", b"h", b"z"):
        store.put(table, row, {b"cf:v": row})
    got = store.get_many(table, [b"z", b"missing", b"a", b"h"])
    assert got == [(b"z", {b"cf:v": b"z"}), (b"a", {b"cf:v": b"a"}), (b"h", {b"cf:v": b"h"})]
    assert store.get_many(table, [b"a"], columns=[b"meta"]) == []


# --- scan ----------------------------------------------------------------------------------------

ROWS = [b"a", b"b", b"b\x00", b"b\x00\x00", b"ba", b"b\xff", b"b\xff\xff", b"c", b"g", b"p", b"z\xff"]


@pytest.fixture
def scan_table(store: Store, table: str) -> str:
    for row in ROWS:
        store.put(table, row, {b"cf:v": row, b"meta:n": b"%d" % len(row)})
    return table


RANGES = [(b"", b""), (b"b", b"c"), (b"b\x00", b"ba"), (b"a\xff", b"g"), (b"h", b""), (b"", b"b\x00")]


@pytest.mark.parametrize(("start", "stop"), RANGES)
@pytest.mark.parametrize("batch_size", [1, 3, 1000])
def test_scan_forward_is_start_inclusive_stop_exclusive(store: Store, scan_table: str, start: bytes, stop: bytes, batch_size: int) -> None:
    expected = [r for r in sorted(ROWS) if r >= start and (not stop or r < stop)]
    got = [row for row, _ in store.scan(scan_table, start, stop, batch_size=batch_size)]
    assert got == expected


@pytest.mark.parametrize(("start", "stop"), [(b"", b""), (b"c", b"b"), (b"b\xff", b"b\x00"), (b"", b"g"), (b"h", b""), (b"ba", b"")])
@pytest.mark.parametrize("batch_size", [1, 1000])
def test_reverse_scan_matches_hbase_reversed_scan(store: Store, scan_table: str, start: bytes, stop: bytes, batch_size: int) -> None:
    """Reversed Scan: rows stop < row <= start, descending; empty start = from the last row."""
    expected = [r for r in sorted(ROWS, reverse=True) if (not start or r <= start) and r > stop]
    got = [r for r, _ in store.scan(scan_table, start, stop, reverse=True, batch_size=batch_size)]
    assert got == expected


@pytest.mark.parametrize("prefix", [b"b", b"b\x00", b"b\xff", b"q", b""])
@pytest.mark.parametrize("reverse", [False, True])
def test_prefix_scan(store: Store, scan_table: str, prefix: bytes, reverse: bool) -> None:
    expected = sorted((r for r in ROWS if r.startswith(prefix)), reverse=reverse)
    got = [r for r, _ in store.scan(scan_table, prefix=prefix, reverse=reverse, batch_size=2)]
    assert got == expected


def test_scan_limit_and_columns(store: Store, scan_table: str) -> None:
    assert [r for r, _ in store.scan(scan_table, limit=3, batch_size=2)] == sorted(ROWS)[:3]
    assert [r for r, _ in store.scan(scan_table, reverse=True, limit=2)] == sorted(ROWS)[-1:-3:-1]
    assert list(store.scan(scan_table, limit=0)) == []
    rows = list(store.scan(scan_table, start=b"p", columns=[b"meta:n"]))
    assert rows == [(b"p", {b"meta:n": b"1"}), (b"z\xff", {b"meta:n": b"2"})]
    assert dict(store.scan(scan_table, prefix=b"c", columns=[b"cf"])) == {b"c": {b"cf:v": b"c"}}


@pytest.mark.parametrize(
    ("start", "stop", "reverse", "limit"),
    [(b"", b"", False, None), (b"b", b"p", False, 4), (b"", b"", True, None), (b"p", b"b", True, 5), (b"h", b"", False, 0)],
)
@pytest.mark.parametrize("batch_size", [1, 3, 1000])
def test_scan_batches_are_the_scan_rows_in_runs_of_at_most_batch_size(
    store: Store,
    scan_table: str,
    start: bytes,
    stop: bytes,
    reverse: bool,
    limit: int | None,
    batch_size: int,
) -> None:
    kw = {"reverse": reverse, "limit": limit, "batch_size": batch_size}
    batches = list(store.scan_batches(scan_table, start, stop, **kw))  # type: ignore[arg-type]
    assert all(0 < len(keys) == len(cells) <= batch_size for keys, cells in batches)
    assert [row for keys, cells in batches for row in zip(keys, cells)] == list(store.scan(scan_table, start, stop, **kw))  # type: ignore[arg-type]
    if limit == 0:
        assert batches == []


def test_scan_skips_rows_without_selected_cells(store: Store, table: str) -> None:
    store.put(table, b"a", {b"cf:v": b"1"})
    store.put(table, b"b", {b"meta:v": b"2"})
    assert [r for r, _ in store.scan(table, columns=[b"meta"], batch_size=1)] == [b"b"]


def test_scan_prefix_with_range_is_refused(store: Store, scan_table: str) -> None:
    with pytest.raises(ValueError):
        list(store.scan(scan_table, start=b"a", prefix=b"b"))


# --- delete / increment --------------------------------------------------------------------------


def test_delete_row_columns_and_family(store: Store, table: str) -> None:
    store.put(table, b"row", {b"cf:a": b"1", b"cf:b": b"2", b"meta:c": b"3"}, timestamp=1000)
    store.put(table, b"row", {b"cf:a": b"1b"}, timestamp=2000)
    store.delete(table, b"row", columns=[b"cf:a"])  # every version of the column
    assert store.get(table, b"row") == {b"cf:b": b"2", b"meta:c": b"3"}
    store.delete(table, b"row", columns=[b"meta"])
    assert store.get(table, b"row") == {b"cf:b": b"2"}
    store.put(table, b"other", {b"cf:a": b"x"})
    store.delete(table, b"row")
    assert store.get(table, b"row") == {}
    assert [r for r, _ in store.scan(table)] == [b"other"]
    store.delete(table, b"never-written")  # deleting nothing is fine


def test_increment_is_an_8_byte_big_endian_long(store: Store, table: str) -> None:
    assert store.increment(table, b"ctr", b"cf:n") == 1
    assert store.increment(table, b"ctr", b"cf:n", 41) == 42
    assert store.increment(table, b"ctr", b"cf:n", -50) == -8
    assert store.get(table, b"ctr") == {b"cf:n": (-8).to_bytes(8, "big", signed=True)}
    store.put(table, b"ctr", {b"cf:s": b"abc"})
    with pytest.raises(StoreError):
        store.increment(table, b"ctr", b"cf:s")


def test_increment_is_atomic_across_threads(store: Store, table: str) -> None:
    threads, each = 8, 100
    barrier = threading.Barrier(threads)

    def work() -> None:
        barrier.wait()
        for _ in range(each):
            store.increment(table, b"ctr", b"meta:n")

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    value = store.get(table, b"ctr")[b"meta:n"]
    assert int.from_bytes(value, "big", signed=True) == threads * each


# --- batch writer --------------------------------------------------------------------------------


def test_writer_buffers_until_flush(store: Store, table: str) -> None:
    writer = store.writer(table, batch_size=100)
    assert isinstance(writer, BatchWriter)
    rows = [b"r%03d" % i for i in range(10)]
    for row in rows:
        writer.put(row, {b"cf:v": row})
    assert store.get_many(table, rows) == []
    writer.flush()
    assert [r for r, _ in store.scan(table)] == rows


def test_writer_flushes_on_exit_and_at_batch_size(store: Store, table: str) -> None:
    with store.writer(table, batch_size=4) as writer:
        for i in range(6):
            writer.put(b"r%d" % i, {b"cf:v": b"%d" % i})
        assert len(store.get_many(table, [b"r%d" % i for i in range(6)])) >= 4
        writer.delete(b"r0")
    assert [r for r, _ in store.scan(table)] == [b"r%d" % i for i in range(1, 6)]


def test_writer_reports_unwritable_rows(store: Store, table: str) -> None:
    with pytest.raises(StoreError, match="cf"):
        with store.writer(table) as writer:
            writer.put(b"good", {b"cf:v": b"1"})
            writer.put(b"bad", {b"nope:v": b"1"})
    assert store.get(table, b"bad") == {}


# --- regions and load ----------------------------------------------------------------------------


def test_regions_follow_split_keys(store: Store, table: str) -> None:
    regions = store.regions(table)
    assert [r.start for r in regions] == [b"", *SPLITS]
    assert [r.end for r in regions] == [*SPLITS, b""]
    assert len({r.name for r in regions}) == len(regions)
    assert all(isinstance(r.server, str) and r.server for r in regions)


def test_request_counters_move(store: Store, table: str) -> None:
    """RegionLoad counters: writes land on the region of their row, reads too."""
    before = store.regions(table)
    for i in range(5):
        store.put(table, b"q%d" % i, {b"cf:v": b"x"})  # region 2 (>= b"p")
    store.put(table, b"a", {b"cf:v": b"x"})  # region 0
    for _ in range(3):
        store.get(table, b"q1")

    def moved() -> bool:
        now = store.regions(table)
        return (
            now[2].write_requests - before[2].write_requests >= 5
            and now[0].write_requests - before[0].write_requests >= 1
            and now[1].write_requests == before[1].write_requests
            and now[2].read_requests - before[2].read_requests >= 3
        )

    assert eventually(moved)


# --- HBase timestamp, delete-marker and TTL semantics ---------------------------------------------
# Each expectation below was first observed on a real HBase 2.6 through HBaseStore.


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@pytest.fixture
def ttl_table(store: Store) -> Iterator[str]:
    """A fresh table with family ``t`` (TTL 60 s, 3 versions) and ``cf`` (no TTL)."""
    spec = TableSpec(name=f"ks_contract_{uuid.uuid4().hex[:12]}", families=[FamilySpec("t", versions=3, ttl=60), FamilySpec("cf")])
    store.create_table(spec, SPLITS)
    try:
        yield spec.full_name
    finally:
        if store.table_exists(spec.full_name):
            store.delete_table(spec.full_name)


def test_family_ttl_hides_cells_older_than_ttl(store: Store, ttl_table: str) -> None:
    """HBase hides a cell once its timestamp < now - TTL (ScanQueryMatcher), on every read path;
    a version of a column expires on its own while newer versions stay visible."""
    old = _now_ms() - 10 * 60 * 1000  # 10 minutes ago, TTL is 60 s
    store.put(ttl_table, b"row", {b"t:old": b"o", b"t:both": b"stale"}, timestamp=old)
    store.put(ttl_table, b"row", {b"t:new": b"n", b"t:both": b"fresh"})
    store.put(ttl_table, b"row", {b"cf:keep": b"k"}, timestamp=old)  # cf has no TTL
    store.put(ttl_table, b"gone", {b"t:old": b"o"}, timestamp=old)  # a row with only expired cells
    visible = {b"t:new": b"n", b"t:both": b"fresh", b"cf:keep": b"k"}
    assert store.get(ttl_table, b"row") == visible
    assert store.get(ttl_table, b"row", columns=[b"t:old"]) == {}
    assert store.get(ttl_table, b"gone") == {}
    assert store.cells(ttl_table, b"row", b"t:old") == []
    assert [v for _, v in store.cells(ttl_table, b"row", b"t:both")] == [b"fresh"]
    assert list(store.scan(ttl_table)) == [(b"row", visible)]
    assert list(store.scan(ttl_table, reverse=True, columns=[b"t"])) == [(b"row", {b"t:new": b"n", b"t:both": b"fresh"})]
    assert store.get_many(ttl_table, [b"gone", b"row"]) == [(b"row", visible)]
    # expired cells never come back, and a put that is already expired is never visible
    store.put(ttl_table, b"gone", {b"t:late": b"x"}, timestamp=old)
    assert store.get(ttl_table, b"gone") == {}
    assert list(store.scan(ttl_table, prefix=b"gone")) == []


def test_increment_of_an_expired_counter_starts_from_zero(store: Store, ttl_table: str) -> None:
    old = _now_ms() - 10 * 60 * 1000
    store.put(ttl_table, b"ctr", {b"t:n": (41).to_bytes(8, "big")}, timestamp=old)
    assert store.increment(ttl_table, b"ctr", b"t:n") == 1


def test_older_timestamp_never_replaces_newer_value(store: Store, table: str) -> None:
    """Versions are ordered by timestamp, not arrival: a late put with an older timestamp is an
    older version (cf keeps 3) or, where the family keeps 1 version, invisible."""
    store.put(table, b"row", {b"cf:a": b"t3", b"meta:m": b"t3"}, timestamp=3000)
    store.put(table, b"row", {b"cf:a": b"t1", b"meta:m": b"t1"}, timestamp=1000)
    store.put(table, b"row", {b"cf:a": b"t2"}, timestamp=2000)
    assert store.get(table, b"row") == {b"cf:a": b"t3", b"meta:m": b"t3"}
    assert store.cells(table, b"row", b"cf:a") == [(3000, b"t3"), (2000, b"t2"), (1000, b"t1")]
    assert store.cells(table, b"row", b"meta:m") == [(3000, b"t3")]
    assert list(store.scan(table)) == [(b"row", {b"cf:a": b"t3", b"meta:m": b"t3"})]


def test_delete_marker_masks_later_puts_with_older_timestamps(store: Store, table: str) -> None:
    """HBase's Delete writes markers at the server's now; a marker masks every cell at or before
    it, also cells put after the delete with an older timestamp (until a major compaction, which
    drops those cells too). A newer timestamp is visible again."""
    now = _now_ms()
    before, after = now - 60_000, now + 3_600_000
    # whole row: DeleteFamily markers on every family, also for a row that never existed
    for row in (b"row", b"never"):
        store.put(table, row, {b"cf:a": b"1", b"meta:m": b"2"}, timestamp=before - 1000)
        store.delete(table, row)
        store.put(table, row, {b"cf:a": b"late", b"meta:m": b"late"}, timestamp=before)
        assert store.get(table, row) == {}
        assert store.cells(table, row, b"cf:a") == []
    assert list(store.scan(table)) == []
    store.put(table, b"row", {b"cf:a": b"future"}, timestamp=after)
    assert store.get(table, b"row") == {b"cf:a": b"future"}
    # one family, one column: only what the marker covers is masked
    store.put(table, b"fam", {b"cf:a": b"1", b"meta:m": b"2"}, timestamp=before - 1000)
    store.delete(table, b"fam", columns=[b"cf"])
    store.put(table, b"fam", {b"cf:a": b"late", b"meta:m": b"late"}, timestamp=before)
    assert store.get(table, b"fam") == {b"meta:m": b"late"}
    store.put(table, b"col", {b"cf:a": b"1", b"cf:b": b"2"}, timestamp=before - 1000)
    store.delete(table, b"col", columns=[b"cf:a"])
    store.put(table, b"col", {b"cf:a": b"late", b"cf:b": b"late"}, timestamp=before)
    assert store.get(table, b"col") == {b"cf:b": b"late"}
    assert store.cells(table, b"col", b"cf:b") == [(before, b"late"), (before - 1000, b"2")]


def test_delete_keeps_cells_newer_than_the_delete(store: Store, table: str) -> None:
    """A Delete without a timestamp covers cells up to now: a future-timestamped cell survives."""
    future = _now_ms() + 3_600_000
    store.put(table, b"row", {b"cf:a": b"future"}, timestamp=future)
    store.put(table, b"row", {b"cf:b": b"now"})
    store.delete(table, b"row")
    assert store.get(table, b"row") == {b"cf:a": b"future"}
    with pytest.raises(StoreError):
        store.delete(table, b"")


def test_increment_writes_after_a_future_timestamp(store: Store, table: str) -> None:
    """HRegion's Increment stamps the new cell max(now, old timestamp + 1)."""
    future = _now_ms() + 3_600_000
    store.put(table, b"ctr", {b"cf:n": (5).to_bytes(8, "big")}, timestamp=future)
    assert store.increment(table, b"ctr", b"cf:n") == 6
    assert store.cells(table, b"ctr", b"cf:n") == [(future + 1, (6).to_bytes(8, "big")), (future, (5).to_bytes(8, "big"))]


@pytest.mark.parametrize("value", [b"", b"abc", b"\x00" * 4, b"\x00" * 9])
def test_increment_refuses_a_value_that_is_not_8_bytes(store: Store, table: str, value: bytes) -> None:
    """HBase: DoNotRetryIOException "Field is not a long, it's N bytes wide"; nothing changes."""
    store.put(table, b"ctr", {b"cf:n": value})
    with pytest.raises(StoreError):
        store.increment(table, b"ctr", b"cf:n")
    assert store.get(table, b"ctr") == {b"cf:n": value}


def test_cells_come_in_family_then_qualifier_order(store: Store, table: str) -> None:
    """HBase's Result is sorted by family, then qualifier (so b"cf:b" before b"cf\\x00..." etc.)."""
    store.put(table, b"row", {b"meta:z": b"1", b"cf:b": b"2", b"cf:": b"3", b"cf:a\x00": b"4"})
    expected = [b"cf:", b"cf:a\x00", b"cf:b", b"meta:z"]
    assert list(store.get(table, b"row")) == expected
    assert [list(cells) for _, cells in store.scan(table)] == [expected]
    assert [list(cells) for _, cells in store.get_many(table, [b"row"])] == [expected]


def test_empty_qualifier_is_its_own_column(store: Store, table: str) -> None:
    """b"cf:" names the column with an empty qualifier, not the family."""
    store.put(table, b"row", {b"cf:": b"empty", b"cf:q": b"q"})
    assert store.get(table, b"row") == {b"cf:": b"empty", b"cf:q": b"q"}
    assert store.get(table, b"row", columns=[b"cf:"]) == {b"cf:": b"empty"}
    assert list(store.scan(table, columns=[b"cf:"])) == [(b"row", {b"cf:": b"empty"})]
    assert [v for _, v in store.cells(table, b"row", b"cf:")] == [b"empty"]
    assert store.increment(table, b"ctr", b"cf:") == 1
    store.delete(table, b"row", columns=[b"cf:"])
    assert store.get(table, b"row") == {b"cf:q": b"q"}


def test_scan_selects_a_family_or_one_column(store: Store, table: str) -> None:
    """columns=[b"cf"] is every qualifier of cf; [b"cf:a"] only that column; a family given whole
    swallows its single columns; rows without a selected cell are skipped."""
    store.put(table, b"r1", {b"cf:a": b"1", b"cf:b": b"2", b"meta:m": b"3"})
    store.put(table, b"r2", {b"cf:b": b"4"})
    assert list(store.scan(table, columns=[b"cf"])) == [(b"r1", {b"cf:a": b"1", b"cf:b": b"2"}), (b"r2", {b"cf:b": b"4"})]
    assert list(store.scan(table, columns=[b"cf:a"])) == [(b"r1", {b"cf:a": b"1"})]
    assert list(store.scan(table, columns=[b"cf:a", b"cf"], reverse=True)) == [(b"r2", {b"cf:b": b"4"}), (b"r1", {b"cf:a": b"1", b"cf:b": b"2"})]
    assert list(store.scan(table, columns=[b"cf:a", b"meta:m"])) == [(b"r1", {b"cf:a": b"1", b"meta:m": b"3"})]


HIGH_ROWS = [b"\xfe\xff", b"\xff", b"\xff\x00", b"\xff\xff", b"\xff\xff\x01"]


@pytest.mark.parametrize("prefix", [b"\xff", b"\xff\xff", b"\xfe"])
@pytest.mark.parametrize("limit", [None, 1, 2])
def test_reverse_prefix_scan_at_the_top_of_the_key_space(store: Store, table: str, prefix: bytes, limit: int | None) -> None:
    """A prefix of 0xff bytes has no upper bound (next_prefix is b""); reversed, the scan starts
    at the table's last row inside the prefix."""
    for row in HIGH_ROWS + [b"a"]:
        store.put(table, row, {b"cf:v": row})
    expected = sorted((r for r in HIGH_ROWS if r.startswith(prefix)), reverse=True)[:limit]
    got = [r for r, _ in store.scan(table, prefix=prefix, reverse=True, limit=limit, batch_size=1)]
    assert got == expected


@pytest.mark.parametrize("row", [b"e", b"g", b"zz"])  # inside a region, a split key, past the end
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_with_start_equal_to_stop_is_empty(store: Store, table: str, row: bytes, reverse: bool) -> None:
    """HBase 2.6 with withStartRow(r)/withStopRow(r) (stop exclusive) returns no row, even when
    r exists; it is not a Get (that needs includeStopRow)."""
    for r in (b"a", b"e", b"g", b"h", b"zz"):
        store.put(table, r, {b"cf:v": r})
    assert list(store.scan(table, row, row, reverse=reverse)) == []
    # start past stop in scan direction: empty too, not an error
    low, high = b"e", b"h"
    args = (high, low) if not reverse else (low, high)
    assert list(store.scan(table, *args, reverse=reverse)) == []


def test_scan_versions_returns_every_version_across_regions(store: Store, table: str) -> None:
    # rows on both sides of the split keys, several versions and families, one deleted cell
    for ts in (10, 20, 30, 40):
        store.put(table, b"a1", {b"cf:x": b"x%d" % ts}, timestamp=ts)  # cf keeps 3 versions
    store.put(table, b"a1", {b"meta:m": b"m"}, timestamp=5)
    store.put(table, b"h2", {b"cf:y": b"y1", b"cf:z": b"z1"}, timestamp=7)
    store.put(table, b"q3", {b"cf:x": b"gone"}, timestamp=8)
    store.delete(table, b"q3")
    store.put(table, b"z4", {b"meta:": b"empty-qualifier"}, timestamp=9)
    got = list(store.scan_versions(table, batch_size=1))
    assert got == [
        (b"a1", {b"cf:x": [(40, b"x40"), (30, b"x30"), (20, b"x20")], b"meta:m": [(5, b"m")]}),
        (b"h2", {b"cf:y": [(7, b"y1")], b"cf:z": [(7, b"z1")]}),
        (b"z4", {b"meta:": [(9, b"empty-qualifier")]}),
    ]
    assert [r for r, _ in store.scan_versions(table, start=b"b", stop=b"z")] == [b"h2"]


def test_scan_keys_is_bounded_and_ordered(store: Store, table: str) -> None:
    keys = [b"a", b"f", b"g", b"o", b"p", b"x"]
    for k in keys:
        store.put(table, k, {b"cf:v": b"value" * 100})
    assert list(store.scan_keys(table)) == keys
    assert list(store.scan_keys(table, start=b"g", limit=3, batch_size=2)) == [b"g", b"o", b"p"]
    assert list(store.scan_keys(table, start=b"b", stop=b"p")) == [b"f", b"g", b"o"]
    with pytest.raises(TableNotFound):
        list(store.scan_keys("ks_contract_missing_table"))
