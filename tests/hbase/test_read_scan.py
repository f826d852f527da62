"""Merged scans over salted tables vs a brute-force oracle (sort every row by original key, ties
by stored key), on the embedded store; a smaller run against a real HBase is marked ``hbase``."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from read_oracle import USERS, load, make_schema, oracle, records, schemas

from keyshape.errors import KeyshapeError
from keyshape.read import scan
from keyshape.schema import KeySchema
from keyshape.store import EmbeddedStore, ensure_table, open_store

queries = st.fixed_dictionaries(
    {
        "u": st.none() | st.sampled_from(USERS),
        "n": st.none() | st.tuples(st.none() | st.integers(-4, 13), st.none() | st.integers(-4, 13)),
        "bounds": st.none()
        | st.tuples(st.sampled_from(USERS), st.sampled_from(USERS))
        | st.tuples(st.tuples(st.sampled_from(USERS), st.integers(-3, 12)), st.tuples(st.sampled_from(USERS), st.integers(-3, 12))),
        "limit": st.none() | st.integers(0, 25),
        "reverse": st.booleans(),
        "parallel": st.sampled_from([0, 0, 1, 3]),
        "batch_size": st.integers(1, 6),
    }
)


def run_query(store: Any, schema: Any, keys: set[bytes], q: dict[str, Any]) -> None:
    leading: dict[str, Any] = {}
    u, n = q["u"], q["n"]
    if u is None and schema.prefix.name == "md5":
        u = "a"  # pin the bucket (see read_oracle.make_schema)
    if u is not None:
        leading["u"] = u
        if n is not None:
            leading["n"] = n
    else:
        n = None
    start = stop = None
    if q["bounds"] is not None:
        # original-key bounds: the text of the user field (plus separator) as a byte prefix
        lo, hi = sorted(q["bounds"])
        if isinstance(lo, str):  # a user prefix: every key of users lo..hi
            start, stop = schema.field("u").encode(lo), schema.field("u").encode(hi) + b"\x00"
        else:  # exact original keys, so range edges land on stored rows
            start, stop = (schema.prefix.strip(schema.encode({"u": v[0], "n": v[1]})) for v in (lo, hi))
    got = [
        r.key
        for r in scan(
            store,
            schema,
            start=start,
            stop=stop,
            limit=q["limit"],
            reverse=q["reverse"],
            parallel=q["parallel"],
            batch_size=q["batch_size"],
            **leading,
        )
    ]
    want = oracle(schema, keys, u=u, n=n, start=start, stop=stop, reverse=q["reverse"], limit=q["limit"])
    assert got == want


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, recs=records, qs=st.lists(queries, min_size=1, max_size=4))
def test_merged_scan_matches_oracle(schema: Any, recs: list, qs: list) -> None:
    store = EmbeddedStore()
    keys = load(store, schema, recs)
    for q in qs:
        run_query(store, schema, keys, q)


def test_random_salt_ties_come_out_by_stored_key() -> None:
    """The same original key written into several buckets: ascending by bucket prefix forward,
    descending in reverse, i.e. ordered by the full stored key."""
    schema = make_schema("random", 4, "_", False, seed=3)
    store = EmbeddedStore()
    load(store, schema, [])
    k = schema.prefix.strip(schema.encode({"u": "a", "n": 1}))
    heads = [schema.prefix.apply(b, b"") for b in schema.buckets()]
    for h in (heads[3], heads[0], heads[2]):  # written out of order on purpose
        store.put(schema.table.full_name, h + k, {b"d:v": b"x"})
    store.put(
        schema.table.full_name, schema.prefix.apply(schema.buckets()[1], schema.prefix.strip(schema.encode({"u": "a", "n": 0}))), {b"d:v": b"y"}
    )
    fwd = [r.key for r in scan(store, schema, u="a")]
    assert [r[:3] for r in fwd[1:]] == sorted(h for h in (heads[3], heads[0], heads[2]))
    assert fwd[1:] == sorted(fwd[1:])
    assert schema.decode(fwd[0])["n"] == 0
    rev = [r.key for r in scan(store, schema, u="a", reverse=True)]
    assert rev == fwd[::-1]


def test_rows_carry_stored_key_original_and_fields() -> None:
    schema = make_schema("mod", 5, "_", True)
    store = EmbeddedStore()
    load(store, schema, [("b", 7)])
    (row,) = list(scan(store, schema, u="b"))
    assert row.key == schema.encode({"u": "b", "n": 7})
    assert row.bucket + row.original == row.key and row.bucket.endswith(b"_")
    assert row.fields == {"u": "b", "n": 7}
    assert row.cells == {b"d:v": b"b:7"}


class CountingStore:
    """Wraps a store and records what each scanner was asked for and how many rows it gave."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls, self.closed = inner, [], 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def scan(self, table: str, **kw: Any) -> Any:
        return (row for keys, cells in self.scan_batches(table, **kw) for row in zip(keys, cells))

    def scan_batches(self, table: str, **kw: Any) -> Any:
        call = {"kw": kw, "rows": 0}
        self.calls.append(call)
        it = self.inner.scan_batches(table, **kw)

        def gen() -> Any:
            try:
                for batch in it:
                    call["rows"] += len(batch[0])
                    yield batch
            finally:
                self.closed += 1

        return gen()


@pytest.mark.parametrize("parallel", [0, 2])
def test_limit_bounds_every_scanner_and_closes_them(parallel: int) -> None:
    schema = make_schema("mod", 6, "_", False)
    inner = EmbeddedStore()
    load(inner, schema, [(u, n) for u in USERS for n in range(30)])
    store = CountingStore(inner)
    got = list(scan(store, schema, limit=5, batch_size=100, parallel=parallel))
    assert len(got) == 5
    assert len(store.calls) == 6
    assert all(c["kw"]["limit"] == 5 and c["kw"]["batch_size"] == 5 for c in store.calls)
    assert all(c["rows"] <= 5 for c in store.calls)
    assert store.closed == 6


def test_early_close_releases_scanners() -> None:
    schema = make_schema("phoenix", 4, "", False)
    inner = EmbeddedStore()
    load(inner, schema, [(u, n) for u in USERS for n in range(20)])
    store = CountingStore(inner)
    with scan(store, schema, batch_size=3, parallel=2) as it:
        first = [next(it) for _ in range(4)]
    assert len(first) == 4 and store.closed == 4


def test_stream_does_not_read_everything_first() -> None:
    schema = make_schema("mod", 3, "_", False)
    inner = EmbeddedStore()
    load(inner, schema, [(u, n) for u in USERS for n in range(50)])
    store = CountingStore(inner)
    it = scan(store, schema, batch_size=4)
    next(it)
    assert sum(c["rows"] for c in store.calls) <= 3 * 4  # one batch per bucket at most
    it.close()


def test_reverse_uses_hbase_reverse_semantics_at_range_edges() -> None:
    """A bucket range [start, stop) read in reverse: the row AT stop is excluded and the row AT
    start included, although HBase's reversed Scan takes stop as inclusive start."""
    schema = make_schema("none", 2, "_", False)
    store = EmbeddedStore()
    keys = load(store, schema, [(u, n) for u in USERS for n in range(3)])
    start, stop = schema.encode({"u": "b", "n": 0}), schema.encode({"u": "c", "n": 1})
    got = [r.key for r in scan(store, schema, start=start, stop=stop, reverse=True)]
    assert got == oracle(schema, keys, start=start, stop=stop, reverse=True)
    assert got[-1] == start and stop not in got


def test_md5_full_is_point_only() -> None:
    d = {"table": {"name": "h"}, "key": {"prefix": "md5-full", "fields": [{"name": "u", "type": "string"}]}}
    from keyshape.schema import KeySchema

    schema = KeySchema.from_dict(d)
    with pytest.raises(KeyshapeError, match="md5-full"):
        scan(EmbeddedStore(), schema)


def test_bad_arguments_are_refused() -> None:
    schema = make_schema("mod", 3, "_", False)
    with pytest.raises(KeyshapeError):
        scan(EmbeddedStore(), schema, limit=-1)
    with pytest.raises(KeyshapeError):
        scan(EmbeddedStore(), schema, n=1)  # n without the leading u


@pytest.mark.hbase
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(schema=schemas, recs=records, qs=st.lists(queries, min_size=1, max_size=3))
def test_merged_scan_matches_oracle_on_hbase(hbase: Any, schema: Any, recs: list, qs: list) -> None:
    schema = make_schema(
        schema.prefix.name,
        getattr(schema.prefix, "n", 4),
        schema.separator.decode(),
        schema.hash_fields == ["u"],
        name=f"read_scan_{uuid.uuid4().hex[:12]}",
    )
    store = open_store(hbase.url)
    try:
        keys = load(store, schema, recs)
        try:
            for q in qs:
                run_query(store, schema, keys, q)
        finally:
            store.delete_table(schema.table.full_name)
    finally:
        store.close()


@pytest.mark.parametrize("strategy", ["none", "mod", "random"])
@pytest.mark.parametrize("limit", [None, 1, 3])
def test_variable_width_field_holding_the_separator_matches_exactly(strategy: str, limit: Any) -> None:
    """u="a" is planned as the range under b"a_", which also holds u="a_b" and u="a__": the merged
    scan decodes and drops those, and the limit counts only the rows it keeps."""
    schema = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {
                "separator": "_",
                "prefix": {"strategy": strategy, "buckets": 3} if strategy != "none" else {"strategy": "none"},
                "fields": [{"name": "u", "type": "string"}, {"name": "n", "type": "int32"}],
            },
        }
    )
    store = EmbeddedStore()
    ensure_table(store, schema.table, schema.split_keys())
    users = ["a", "a_b", "a__", "ab", "a_"]
    with store.writer(schema.table.full_name) as w:
        for u in users:
            for n in range(4):
                w.put(schema.encode({"u": u, "n": n}), {b"d:v": b"x"})
    for u in users:
        got = [r.fields for r in scan(store, schema, u=u, limit=limit)]
        want = [{"u": u, "n": n} for n in range(4)][:limit]
        assert got == want, u


@pytest.mark.hbase
@pytest.mark.parametrize("ahead", [1, 3, 128])
def test_merged_scan_with_more_buckets_than_calls_in_flight(hbase: Any, monkeypatch: Any, ahead: int) -> None:
    """Every bucket's scan is opened before any is read, but one connection keeps at most AHEAD
    calls in flight; the rest are sent when their bucket is read. Order, limits and reverse
    stay exact, and no call is left unanswered on the connection afterwards."""
    from keyshape.store.hbase import scan as hbase_scan

    monkeypatch.setattr(hbase_scan, "AHEAD", ahead)
    schema = make_schema("mod", 40, "_", True, name=f"read_ahead_{uuid.uuid4().hex[:12]}")
    store = open_store(hbase.url)
    try:
        keys = load(store, schema, [(u, n) for u in USERS for n in range(12)])
        try:
            for q in (
                {"limit": None, "reverse": False},
                {"limit": None, "reverse": True},
                {"limit": 17, "reverse": False},
                {"limit": 5, "reverse": True},
            ):
                got = [r.key for r in scan(store, schema, batch_size=2, **q)]
                assert got == oracle(schema, keys, **q)
                assert all(c.in_flight == 0 for c in store.cluster._pool.values())
        finally:
            store.delete_table(schema.table.full_name)
    finally:
        store.close()
