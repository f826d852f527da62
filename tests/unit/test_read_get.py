"""Point reads: one Get for deterministic prefixes, a multi-get over every bucket for random."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from read_oracle import USERS, load, make_schema, records, schemas

from keyshape.read import get, get_many
from keyshape.store import EmbeddedStore


class CallLog:
    def __init__(self, inner: Any) -> None:
        self.inner, self.calls = inner, []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name in ("get", "get_many"):

            def wrapped(*a: Any, **kw: Any) -> Any:
                self.calls.append((name, list(a[1]) if name == "get_many" else a[1]))
                return attr(*a, **kw)

            return wrapped
        return attr


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, recs=records)
def test_get_finds_exactly_the_stored_rows(schema: Any, recs: list) -> None:
    inner = EmbeddedStore()
    keys = load(inner, schema, recs)
    store = CallLog(inner)
    for u in USERS[:2]:
        for n in (0, 5, 12):
            store.calls.clear()
            rows = get(store, schema, {"u": u, "n": n})
            want = sorted(k for k in keys if schema.decode(k) == {"u": u, "n": n})
            assert [r.key for r in rows] == want
            assert all(r.cells == {b"d:v": b"%s:%d" % (u.encode(), n)} for r in rows)
            if schema.prefix.name == "random":
                assert store.calls == [
                    ("get_many", [schema.prefix.apply(b, schema.prefix.strip(schema.encode({"u": u, "n": n}))) for b in schema.buckets()])
                ]
            else:
                assert store.calls == [("get", schema.encode({"u": u, "n": n}))]


def test_random_salt_returns_every_copy() -> None:
    schema = make_schema("random", 5, "_", False, seed=11)
    store = EmbeddedStore()
    keys = load(store, schema, [("a", 1)] * 30)
    assert len(keys) > 1  # the same record landed in several buckets
    rows = get(store, schema, {"u": "a", "n": 1})
    assert [r.key for r in rows] == sorted(keys)
    assert {r.original for r in rows} == {schema.prefix.strip(next(iter(keys)))}


def test_get_many_keeps_record_order() -> None:
    schema = make_schema("mod", 4, "", False)
    store = EmbeddedStore()
    load(store, schema, [("a", 1), ("b", 2), ("c", 3)])
    recs = [{"u": "c", "n": 3}, {"u": "x", "n": 0}, {"u": "a", "n": 1}]
    rows = get_many(store, schema, recs, batch_size=1)
    assert [r.fields for r in rows] == [{"u": "c", "n": 3}, {"u": "a", "n": 1}]
