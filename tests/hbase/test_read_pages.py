"""Paging a salted table: tokens (no gap, no duplicate, even with writes between pages),
offset/limit and start-key paging, each checked against the brute-force oracle."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from read_oracle import USERS, load, make_schema, oracle, records, schemas

from keyshape.errors import KeyshapeError
from keyshape.read import offset_page, scan_page
from keyshape.store import EmbeddedStore, open_store

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def leading_for(schema: Any, u: str | None) -> dict[str, Any]:
    if u is None and schema.prefix.name == "md5":
        u = "a"
    return {} if u is None else {"u": u}


@SETTINGS
@given(
    schema=schemas,
    recs=records,
    page_size=st.integers(1, 7),
    reverse=st.booleans(),
    u=st.none() | st.sampled_from(USERS),
    parallel=st.sampled_from([0, 2]),
)
def test_token_pages_concatenate_to_the_oracle(schema: Any, recs: list, page_size: int, reverse: bool, u: str | None, parallel: int) -> None:
    store = EmbeddedStore()
    keys = load(store, schema, recs)
    lead = leading_for(schema, u)
    got: list[bytes] = []
    token = None
    for _ in range(len(keys) + 2):
        page = scan_page(store, schema, page_size, token, reverse=reverse, parallel=parallel, **lead)
        assert len(page) <= page_size
        got += [r.key for r in page]
        token = page.next_token
        if token is None:
            break
        assert len(page) == page_size  # only the last page is short
    assert token is None
    assert got == oracle(schema, keys, u=lead.get("u"), reverse=reverse)


@SETTINGS
@given(
    schema=schemas,
    recs=records,
    page_size=st.integers(1, 5),
    reverse=st.booleans(),
    inserts=st.lists(st.lists(st.tuples(st.sampled_from(USERS), st.integers(-3, 12)), max_size=4), max_size=8),
)
def test_token_pages_under_concurrent_inserts(schema: Any, recs: list, page_size: int, reverse: bool, inserts: list) -> None:
    """Rows written between pages: each page is exactly the oracle's next rows after the cursor at
    that moment, so nothing repeats, nothing that existed before is skipped, and a row written
    ahead of the cursor is returned while one written behind it is not."""
    store = EmbeddedStore()
    keys = load(store, schema, recs)
    lead = leading_for(schema, None)
    if lead:  # md5: the query pins user "a"; only its rows take part
        keys = set(oracle(schema, keys, u="a"))
    initial = set(keys)
    got: list[bytes] = []
    token, cursor = None, None
    ahead: set[bytes] = set()
    for step in range(200):
        page = scan_page(store, schema, page_size, token, reverse=reverse, **lead)
        want = oracle(schema, keys, u=lead.get("u"), reverse=reverse, after=cursor, limit=page_size)
        assert [r.key for r in page] == want
        got += want
        token = page.next_token
        if token is None:
            break
        cursor = page.rows[-1].key
        batch = inserts[step] if step < len(inserts) else []
        new = load(store, schema, batch, create=False)
        if lead:
            new = set(oracle(schema, new, u="a"))
        for k in new - keys:
            if oracle(schema, {k, cursor}, reverse=reverse, after=cursor):
                ahead.add(k)
        keys |= new
    assert len(got) == len(set(got))
    assert initial <= set(got)
    assert ahead <= set(got)
    assert set(got) <= keys


@SETTINGS
@given(schema=schemas, recs=records, page_size=st.integers(1, 6), reverse=st.booleans())
def test_offset_pages_are_oracle_slices(schema: Any, recs: list, page_size: int, reverse: bool) -> None:
    store = EmbeddedStore()
    keys = load(store, schema, recs)
    lead = leading_for(schema, None)
    want = oracle(schema, keys, u=lead.get("u"), reverse=reverse)
    offset, got = 0, []
    while offset is not None:
        page = offset_page(store, schema, offset, page_size, reverse=reverse, **lead)
        assert [r.key for r in page] == want[offset : offset + page_size]
        got += [r.key for r in page]
        offset = page.next_offset
    assert got == want


@SETTINGS
@given(schema=schemas, recs=records, page_size=st.integers(1, 6), reverse=st.booleans())
def test_start_key_pages_cover_distinct_original_keys(schema: Any, recs: list, page_size: int, reverse: bool) -> None:
    """Start-key paging moves by original key: it returns every row except later duplicates of an
    original key that ended a page (only possible with random salt)."""
    store = EmbeddedStore()
    keys = load(store, schema, recs)
    lead = leading_for(schema, None)
    want = oracle(schema, keys, u=lead.get("u"), reverse=reverse)
    got: list[bytes] = []
    bound: dict[str, Any] = {}
    while True:
        page = scan_page(store, schema, page_size, reverse=reverse, **bound, **lead)
        got += [r.key for r in page]
        if page.next_key is None:
            break
        bound = {"stop": page.next_key} if reverse else {"start": page.next_key}
    assert len(got) == len(set(got))
    strip = schema.prefix.strip
    assert {strip(k) for k in got} == {strip(k) for k in want}
    if schema.prefix.name != "random":
        assert got == want


def test_token_of_another_query_is_refused() -> None:
    schema = make_schema("mod", 4, "_", False)
    store = EmbeddedStore()
    load(store, schema, [(u, n) for u in USERS for n in range(4)])
    page = scan_page(store, schema, 2, u="a")
    assert page.next_token is not None
    with pytest.raises(KeyshapeError, match="another query"):
        scan_page(store, schema, 2, page.next_token, u="b")
    with pytest.raises(KeyshapeError, match="another query"):
        scan_page(store, schema, 2, page.next_token, u="a", reverse=True)
    with pytest.raises(KeyshapeError, match="not a keyshape page token"):
        scan_page(store, schema, 2, "not-a-token", u="a")


def test_token_is_compact_for_many_buckets() -> None:
    """One stored key resumes every bucket, so 100 buckets do not grow the token."""
    schema = make_schema("mod", 100, "_", False)
    store = EmbeddedStore()
    load(store, schema, [(u, n) for u in USERS for n in range(10)])
    page = scan_page(store, schema, 5)
    assert page.next_token is not None and len(page.next_token) < 40


@pytest.mark.hbase
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(schema=schemas, recs=records, page_size=st.integers(1, 5), reverse=st.booleans())
def test_token_pages_on_hbase(hbase: Any, schema: Any, recs: list, page_size: int, reverse: bool) -> None:
    schema = make_schema(
        schema.prefix.name,
        getattr(schema.prefix, "n", 4),
        schema.separator.decode(),
        schema.hash_fields == ["u"],
        name=f"read_pages_{uuid.uuid4().hex[:12]}",
    )
    store = open_store(hbase.url)
    try:
        keys = load(store, schema, recs)
        try:
            lead = leading_for(schema, None)
            got, token = [], None
            while True:
                page = scan_page(store, schema, page_size, token, reverse=reverse, **lead)
                got += [r.key for r in page]
                token = page.next_token
                if token is None:
                    break
            assert got == oracle(schema, keys, u=lead.get("u"), reverse=reverse)
        finally:
            store.delete_table(schema.table.full_name)
    finally:
        store.close()
