"""The per-schema compiled encoder/decoder (keyshape.schema.compiled) against the generic path
that walks the field specs: same bytes, same values, same one-line errors, for random schemas,
random records (including wrong types and out-of-range values) and random or damaged keys."""

from __future__ import annotations

import functools
import hashlib
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from keyshape.core import native
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema
from keyshape.schema.compiled import MEMO_LIMIT, encoder_for, java_string_hash_u32
from keyshape.schema.compiled_decode import compile_decoder, decoder_for, native_reader
from keyshape.core.hashing import java_bytes_hash, java_string_hash

FIELD_DEFS = [
    {"type": "string"},
    {"type": "string", "width": 6},
    {"type": "string", "width": 6, "truncate": "keep-last"},
    {"type": "string", "width": 5, "pad": "right", "pad_char": "_", "order": "desc"},
    {"type": "string", "order": "desc"},
    {"type": "string", "encoding": "ordered"},
    {"type": "bytes", "width": 3},
    {"type": "bytes", "width": 4, "pad": "left"},
    {"type": "bytes"},
    {"type": "bytes", "encoding": "ordered", "order": "desc"},
    {"type": "int32", "encoding": "hbase"},
    {"type": "int32"},
    {"type": "int64", "encoding": "text", "width": 12},
    {"type": "int64", "encoding": "hbase", "order": "desc"},
    {"type": "int64", "order": "desc"},
    {"type": "float64"},
    {"type": "float64", "encoding": "hbase"},
    {"type": "timestamp"},
    {"type": "timestamp", "order": "desc"},
    {"type": "timestamp", "encoding": "text", "order": "desc"},
    {"type": "timestamp", "encoding": "ordered"},
    {"type": "string", "width": 4, "pad": "right", "pad_char": " "},
    {"type": "string", "encoding": "hbase", "width": 3, "order": "desc"},
    {"type": "int32", "encoding": "text", "order": "desc"},
    {"type": "int64", "encoding": "text", "width": 21},  # wider than the C reader's 19 digits
    {"type": "bytes", "width": 2, "pad": "right", "pad_char": "\xff"},
    {"type": "uuid"},  # a type with its own codec (issue 43)
    {"type": "uuid", "encoding": "text", "order": "desc"},
]
PREFIXES = [
    {"strategy": "none"},
    {"strategy": "md5", "length": 4},
    {"strategy": "md5", "length": 5},
    {"strategy": "md5-full"},
    {"strategy": "mod", "buckets": 100},
    {"strategy": "mod", "buckets": 7},
    {"strategy": "crc32"},
    {"strategy": "java-hash-short"},
    {"strategy": "phoenix", "buckets": 13},
    {"strategy": "murmur3", "buckets": 100, "seed": -7},  # checked by the C reader too (issue 43)
]


def _value(d: dict[str, Any]) -> st.SearchStrategy[Any]:
    t = d["type"]
    if t == "string":
        return st.one_of(st.text(max_size=9), st.text(alphabet="ab_|0", max_size=9), st.integers(-5, 10**8))
    if t == "bytes":
        return st.one_of(st.binary(max_size=6), st.text(alphabet="ab\\x0", max_size=6))
    if t == "float64":
        return st.one_of(st.floats(allow_nan=False), st.integers(-10, 10))
    if t == "uuid":
        return st.one_of(
            st.uuids(), st.uuids().map(str), st.uuids().map(lambda u: str(u).upper()), st.text(max_size=3), st.binary(min_size=16, max_size=16)
        )
    return st.one_of(st.integers(-(2**64), 2**64), st.integers(-3, 3), st.sampled_from(["17", "2026-01-01T00:00:00Z", "x"]), st.booleans())


@st.composite
def schema_and_records(draw: Any) -> tuple[KeySchema, list[dict[str, Any]]]:
    defs = draw(st.lists(st.sampled_from(FIELD_DEFS), min_size=1, max_size=4))
    fields = [{"name": f"f{i}", **d} for i, d in enumerate(defs)]
    sep = draw(st.sampled_from(["", "_", "|"]))
    prefix = draw(st.sampled_from(PREFIXES))
    hashed = draw(st.lists(st.sampled_from([f["name"] for f in fields]), min_size=1, unique=True))
    try:
        schema = KeySchema.from_dict({"table": {"name": "t"}, "key": {"separator": sep, "prefix": prefix, "hash_fields": hashed, "fields": fields}})
    except KeyshapeError:
        assume(False)
    records = draw(st.lists(st.fixed_dictionaries({f["name"]: _value(f) for f in fields}), min_size=1, max_size=8))
    return schema, records


# Outcomes are compared by repr: NaN equals itself there, and -0.0 differs from 0.0.
def _outcome(fn: Any, arg: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(arg)
    except KeyshapeError as exc:
        return "error", str(exc)


ROUTES = [
    "python",
    pytest.param("native", marks=pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")),
]


def _on_route(schema: KeySchema, route: str) -> KeySchema:
    """``schema`` whose decode is the pure-Python compiled decoder (``python``) or the C
    readers in front of it (``native``, the default where the kernels are built)."""
    if route == "python":
        schema.decode = compile_decoder(schema.layout, use_native=False)  # type: ignore[method-assign]
    return schema


def _readers_agree(schema: KeySchema, key: bytes) -> None:
    """The C readers on their own: whenever one gives fields (None: it leaves the key to Python),
    they are the generic decoder's, to the repr."""
    for verify in (False, True):
        reader = native_reader(schema.layout, verify)
        if reader is not None:
            got = reader.read(key)
            if got is not None:
                assert repr(("ok", got)) == repr(_outcome(lambda k: schema.layout.decode_generic(k, verify=verify), key))


@pytest.mark.parametrize("route", ROUTES)
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schema_and_records(), st.data())
def test_compiled_encode_and_decode_equal_the_generic_path(route, sr, data):
    schema, records = sr
    schema = _on_route(schema, route)
    for record in records:
        expected = _outcome(schema.layout.encode_generic, record)
        assert repr(_outcome(schema.encode, record)) == repr(expected)
        if expected[0] != "ok":
            continue
        key = expected[1]
        assert repr(_outcome(schema.decode, key)) == repr(_outcome(schema.layout.decode_generic, key))
        # Damaged keys: cut, extended, one byte changed: same value or the same error.
        cut = data.draw(st.integers(0, len(key)))
        flip = data.draw(st.integers(0, max(len(key) - 1, 0)))
        bad = [
            key[:cut],
            key + data.draw(st.binary(min_size=1, max_size=3)),
            key[:flip] + bytes([(key[flip] + 1) % 256]) + key[flip + 1 :] if key else b"x",
        ]
        # verify=False: also a key whose prefix belongs to other fields (another key's prefix).
        first = _outcome(schema.layout.encode_generic, records[0])
        if first[0] == "ok":
            bad.append(first[1][: schema.prefix.head_width] + key[schema.prefix.head_width :])
        plain = functools.partial(schema.decode, verify=False)
        plain_generic = functools.partial(schema.layout.decode_generic, verify=False)
        # The key itself: an ambiguous one (a separator inside a value: {'f0': '|', 'f1': ''}
        # reads back as {'f0': '', 'f1': '|'}, found by hypothesis) fails verification but
        # parses unverified, so plain decoding is held to the checks below, not to decode().
        for b in [key, *bad]:
            if route == "native":
                _readers_agree(schema, b)
            assert repr(_outcome(schema.decode, b)) == repr(_outcome(schema.layout.decode_generic, b))
            assert repr(_outcome(schema.decode, bytearray(b))) == repr(_outcome(schema.layout.decode_generic, b))
            assert repr(_outcome(plain, b)) == repr(_outcome(plain_generic, b))
            verified = _outcome(schema.layout.decode_generic, b)
            if verified[0] == "ok":  # verifying only ever refuses more keys
                assert repr(_outcome(plain, b)) == repr(verified)


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
@given(st.one_of(st.binary(max_size=200), st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_native_hashes_equal_the_python_ones(j):
    assert native.string_hash(j) == java_string_hash_u32(j)
    assert native.bytes_hash(j) == java_bytes_hash(j)
    assert native.md5(j) == hashlib.md5(j).digest()


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
def test_native_md5_at_the_block_edges():
    for n in range(0, 300):
        b = bytes((i * 7 + n) % 256 for i in range(n))
        assert native.md5(b) == hashlib.md5(b).digest(), n


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
def test_native_readers_take_the_usual_layouts_and_leave_the_rest():
    """Every example gets a C reader, verified too (every salt with fields to re-derive it from);
    ordered fields, float fields in verified keys and md5-full stay with Python; a reader gives
    the generic decoder's fields for good keys and None, not an error, for bad ones."""
    ex = Path(__file__).resolve().parents[2] / "examples"
    orders = KeySchema.load(ex / "orders.toml")
    assert isinstance(decoder_for(orders.layout), native.Decoder)
    assert native_reader(orders.layout, True) is not None and native_reader(orders.layout, False) is not None
    for strategy, opts in (("java-hash-short", {}), ("phoenix", {"buckets": 16}), ("md5", {}), ("crc32", {})):
        assert native_reader(orders.with_prefix(strategy, splits=None, **opts).layout, True) is not None
    for path in sorted(ex.glob("*.toml")):
        assert native_reader(KeySchema.load(path).layout, True) is not None, path
    iot = KeySchema.load(ex / "iot.toml")
    assert native_reader(iot.with_prefix("md5-full", splits=None).layout, False) is None
    floats = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {
                "prefix": {"strategy": "crc32"},
                "fields": [{"name": "a", "type": "string", "width": 2}, {"name": "x", "type": "float64", "encoding": "hbase"}],
            },
        }
    )
    assert native_reader(floats.layout, True) is None and native_reader(floats.layout, False) is not None
    ordered = KeySchema.from_dict({"table": {"name": "t"}, "key": {"fields": [{"name": "a", "type": "int64"}]}})
    assert native_reader(ordered.layout, False) is None and not isinstance(decoder_for(ordered.layout), native.Decoder)
    rec = {"user_id": "user0000042", "order_time": 1767225600000, "order_id": "1234567"}
    key = orders.encode(rec)
    reader = native_reader(orders.layout, True)
    assert reader.read(key) == orders.layout.decode_generic(key) == rec | {"order_id": 234567}
    forged = b"00" + key[2:] if key[:2] != b"00" else b"01" + key[2:]
    for bad in (forged, key[:-1], key + b"0", b"", b"__", bytearray(key), "text", None, 7, key.replace(b"user", "üser".encode())):
        assert reader.read(bad) is None, bad
    assert native_reader(orders.layout, False).read(forged) == orders.layout.decode_generic(forged, verify=False)
    # The Decoder hands what its reader leaves to Python, with the call as it came.
    with pytest.raises(KeyshapeError, match="prefix does not match"):
        orders.decode(forged)
    assert orders.decode(forged, verify=False) == orders.decode(forged, False) == orders.layout.decode_generic(forged, verify=False)
    assert orders.decode(key=key) == orders.decode(bytearray(key)) == rec | {"order_id": 234567}
    with pytest.raises(TypeError):
        orders.decode(key, True, 3)


def test_missing_field_is_the_generic_error():
    schema = KeySchema.load("examples/orders.toml")
    a, b = _outcome(schema.encode, {"user_id": "u"}), _outcome(schema.layout.encode_generic, {"user_id": "u"})
    assert a == b and a[0] == "error" and "order_time" in a[1]


@given(st.binary(max_size=80))
def test_java_string_hash_u32_equals_the_reference(j):
    try:
        text = j.decode("utf-8")
    except UnicodeDecodeError:
        text = j.decode("latin-1")
    assert java_string_hash_u32(j) == java_string_hash(text) & 0xFFFFFFFF


def test_prefix_memo_is_bounded_and_still_exact():
    schema = KeySchema.load("examples/orders.toml")
    rec = {"order_time": 1767225600000, "order_id": "1234567"}
    keys = [schema.encode({**rec, "user_id": f"user{i:07d}"}) for i in range(MEMO_LIMIT + 10)]
    assert len(encoder_for(schema.layout).__globals__["_MEMO"]) <= MEMO_LIMIT
    assert keys == [schema.layout.encode_generic({**rec, "user_id": f"user{i:07d}"}) for i in range(MEMO_LIMIT + 10)]


def _columns_of(schema: KeySchema, keys: list[bytes], verify: bool = True) -> tuple[str, Any]:
    try:
        rows = [schema.decode(k, verify) for k in keys]
    except KeyshapeError as exc:
        return "error", str(exc)
    return "ok", {f.name: [r[f.name] for r in rows] for f in schema.fields}


def _many(schema: KeySchema, keys: list[bytes], verify: bool = True) -> tuple[str, Any]:
    try:
        cols = schema.decode_many(keys, verify=verify)
    except KeyshapeError as exc:
        return "error", str(exc)
    return "ok", {n: (v.tolist() if hasattr(v, "tolist") else v) for n, v in cols.items()}


def _many_arrow(schema: KeySchema, keys: list[bytes]) -> tuple[str, Any]:
    """``decode_many(as_arrow=True)`` as plain columns (decimal128 back to int)."""
    import decimal

    try:
        table = schema.decode_many(keys, as_arrow=True)
    except KeyshapeError as exc:
        return "error", str(exc)
    assert table.column_names == [f.name for f in schema.fields]
    return "ok", {n: [int(v) if isinstance(v, decimal.Decimal) else v for v in table.column(n).to_pylist()] for n in table.column_names}


def _encodable(schema: KeySchema, records: list[dict[str, Any]]) -> list[bytes]:
    """The keys of the records the generic encoder takes (the others are its errors)."""
    keys = []
    for r in records:
        try:
            keys.append(schema.layout.encode_generic(r))
        except KeyshapeError:
            pass
    return keys


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schema_and_records(), st.data())
def test_decode_many_equals_decode_per_key(sr, data):
    schema, records = sr
    keys = _encodable(schema, records)
    assume(keys)
    assert repr(_many(schema, keys)) == repr(_columns_of(schema, keys))
    assert repr(_many_arrow(schema, keys)) == repr(_columns_of(schema, keys))
    # One damaged key among good ones: the same error as decoding key by key.
    i = data.draw(st.integers(0, len(keys) - 1))
    bad = list(keys)
    bad[i] = data.draw(st.one_of(st.just(keys[i][:-1]), st.binary(max_size=12), st.just(keys[i] + b"\x00")))
    assert repr(_many(schema, bad)) == repr(_columns_of(schema, bad))
    assert repr(_many_arrow(schema, bad)) == repr(_columns_of(schema, bad))
    # verify=False: one key's prefix swapped for another key's.
    j = data.draw(st.integers(0, len(keys) - 1))
    head = schema.prefix.head_width
    bad[i] = keys[j][:head] + keys[i][head:]
    assert repr(_many(schema, bad, verify=False)) == repr(_columns_of(schema, bad, verify=False))


def test_decode_many_on_the_examples_takes_the_vector_route():
    from keyshape.schema import batchdecode
    from keyshape.workload import generate

    for path in sorted(Path("examples").glob("*.toml")):
        schema = KeySchema.load(path)
        cols = next(generate(schema, 500, chunk_rows=500))
        keys = schema.encode_many(cols)
        assert batchdecode._vector_layout(schema.layout), path
        many = _many(schema, keys)
        assert many == _columns_of(schema, keys), path
        got = batchdecode._decode_vector(schema.layout, KeyArray.from_keys(keys), False, True)  # no silent fallback
        assert {n: (v.tolist() if hasattr(v, "tolist") else v) for n, v in got.items()} == many[1]
        arrow = batchdecode._decode_vector(schema.layout, KeyArray.from_keys(keys), True, True)
        assert {n: (v.to_pylist() if hasattr(v, "to_pylist") else v.tolist()) for n, v in arrow.items()} == many[1]
        assert _many_arrow(schema, keys) == many


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
def test_decode_many_of_a_list_takes_the_c_reader_with_the_vector_routes_columns():
    """A list of keys is read by the C reader in one pass (no silent fallback for the examples
    whose salt it checks, and for every example unverified): the same values, dtypes and
    errors as the vector route and as decoding key by key. A batch it cannot read whole (a
    non-ASCII or NUL value, a forged salt) goes to the other routes, with their results."""
    from keyshape.schema import batchdecode
    from keyshape.schema.compiled_decode import native_readers
    from keyshape.workload import generate

    for path in sorted(Path("examples").glob("*.toml")):
        schema = KeySchema.load(path)
        cols = next(generate(schema, 500, chunk_rows=500))
        keys = schema.encode_many(cols)
        for verify in (True, False):
            reader = native_readers(schema.layout)[verify]
            assert reader is not None and reader.columns(keys) is not None, (path, verify)
            got = schema.decode_many(keys, verify=verify)
            vector = batchdecode._decode_vector(schema.layout, KeyArray.from_keys(keys), False, verify)
            assert list(got) == list(vector) == schema.field_names
            for name in got:
                assert type(got[name]) is type(vector[name]), (path, name)
                if isinstance(got[name], np.ndarray):
                    assert got[name].dtype == vector[name].dtype and got[name].flags.writeable, (path, name)
            assert _many(schema, keys, verify) == _columns_of(schema, keys, verify), (path, verify)
            # as_arrow: Arrow buffers straight from the C reader, the vector route's table
            assert reader.columns(keys, True) is not None
            table = schema.decode_many(keys, as_arrow=True, verify=verify)
            vtable = batchdecode._table(schema.layout, batchdecode._decode_vector(schema.layout, KeyArray.from_keys(keys), True, verify))
            assert table.schema == vtable.schema and table.to_pylist() == vtable.to_pylist(), (path, verify)
            table.validate(full=True)
    orders = KeySchema.load("examples/orders.toml")
    rec = {"user_id": "user0000042", "order_time": 1767225600000, "order_id": "1234567"}
    good = [orders.encode({**rec, "user_id": f"user{i:07d}"}) for i in range(50)]
    reader = native_readers(orders.layout)[True]
    for odd in ({**rec, "user_id": "üser"}, {**rec, "user_id": "nul\x00"}, {**rec, "user_id": "\x00"}):
        batch = [*good, orders.encode(odd)]
        assert reader.columns(batch) is None and reader.columns(batch, True) is None
        assert _many(orders, batch) == _columns_of(orders, batch)
        assert _many_arrow(orders, batch) == _columns_of(orders, batch)
    forged = b"00" + good[3][2:] if good[3][:2] != b"00" else b"01" + good[3][2:]
    batch = [*good, forged]
    assert reader.columns(batch) is None and native_readers(orders.layout)[False].columns(batch) is not None
    assert _many(orders, batch)[0] == "error" and _many(orders, batch) == _columns_of(orders, batch)
    assert _many(orders, batch, False) == _columns_of(orders, batch, False)
    assert reader.columns([*good, bytearray(good[0])]) is None and reader.columns([]) is None
    assert reader.columns(tuple(good)) is None  # a list only (a KeyArray has its own route)


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
def test_a_collection_that_changes_the_list_cannot_reach_the_c_batch_reader():
    """A finalizer run by a collection inside the reader may empty or rewrite the caller's list:
    the reader makes every object the collector tracks before it reads a key and checks the
    list's size after, so its columns are the keys' or None (the Python routes decide). A review
    found it returning freed memory, and crashing, before."""
    import gc

    from keyshape.schema.compiled_decode import native_readers

    schema = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"separator": "|", "fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "string"}, {"name": "c", "type": "bytes"}]},
        }
    )
    exercised = 0
    for change in ("rewrite", "clear"):
        for threshold in range(1, 10):  # the collection falls at a different allocation each time
            keys = [b"x" * 50 + b"|" + b"y" * 50 + b"%d|zz" % i for i in range(2000)]
            expected = [schema.layout.decode_generic(k) for k in keys]
            reader = native_readers(schema.layout)[True]
            mutated = []

            class Mutator:
                def __del__(self) -> None:  # the list it was given, whenever it runs
                    mutated.append(True)
                    if change == "clear":
                        self.keys.clear()
                    else:
                        self.keys[:] = [b"%d" % i for i in range(len(self.keys))]

            saved = gc.get_threshold()
            gc.collect()
            gc.disable()
            try:
                m = Mutator()
                m.keys, m.me = keys, m  # a cycle: only a collection frees it
                del m
                gc.set_threshold(threshold)
                gc.enable()
                got = reader.columns(keys)
                inside = bool(mutated)  # the collection ran inside the call
            finally:
                gc.set_threshold(*saved)
                gc.enable()
                gc.collect()  # this round's Mutator, if the reader's allocations did not collect it
            exercised += inside
            if got is None:
                continue  # the list changed before the reader read it
            assert [np.frombuffer(t, dtype=f"U{w}").tolist() for w, t in got[:2]] == [[r["a"] for r in expected], [r["b"] for r in expected]], (
                change,
                threshold,
            )
            assert got[2] == [r["c"] for r in expected], (change, threshold)
    if sys.version_info < (3, 12):  # (3.12 collects between bytecodes, never inside a C call)
        assert exercised  # some collection did change the list inside the reader


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
def test_a_reader_refuses_a_layout_it_would_read_outside_the_key_with():
    field = (1, 12, 0, b"", 0, 0, 0, 0, 0, 0)
    for head, pwidth, sep, sepcheck, fields in (
        (-8, 0, b"", False, (field,)),
        (0, 2, b"", False, (field,)),
        (2, 2, b"_", True, (field,)),
        (0, 65, b"", False, (field,)),
        (0, 0, b"", False, ((9, 1, -2, b"", 0, 0, 0, 0, 0, 0),)),
        (0, 0, b"", False, ((0, -1, -1, b"", 0, 0, 0, 0, 0, 0),)),  # ends at a separator, none given
        (0, 0, b"", False, ((4, 3, -2, b"", 0, 0, 0, 0, 0, 0),)),
    ):  # an int64 is 8 bytes
        with pytest.raises(ValueError):
            native.Reader(("a",), head, pwidth, sep, sepcheck, fields, None)


def test_decode_many_text_dtypes_do_not_depend_on_the_route():
    """A fixed-width text column is numpy str of the field's width where the vector route reads
    the layout, else of the longest value (as numpy makes it from the values), whichever route
    (C reader, vector, key by key) decodes the list."""
    from keyshape.schema import batchdecode

    two_variable = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {
                "separator": "_",
                "fields": [{"name": "f0", "type": "string"}, {"name": "f1", "type": "string"}, {"name": "f2", "type": "string", "width": 6}],
            },
        }
    )
    keys = [two_variable.encode({"f0": "a", "f1": "b", "f2": "c"}), two_variable.encode({"f0": "", "f1": "", "f2": ""})]
    assert not batchdecode._vector_layout(two_variable.layout)
    rows = batchdecode._decode_rows(two_variable.layout, keys, True)
    got = two_variable.decode_many(keys)
    assert {n: (v.dtype, v.tolist()) for n, v in got.items()} == {n: (v.dtype, v.tolist()) for n, v in rows.items()}
    orders = KeySchema.load("examples/orders.toml")
    keys = [orders.encode({"user_id": "u1", "order_time": 5, "order_id": "7"})]
    vector = batchdecode._decode_vector(orders.layout, KeyArray.from_keys(keys), False, True)
    assert {n: v.dtype for n, v in orders.decode_many(keys).items()} == {n: v.dtype for n, v in vector.items()}


def _twins_in_run(schema: KeySchema, records: list[dict[str, Any]]) -> bool:
    """True when two distinct values of one field, each stored whole, encode to one key."""
    for f in schema.fields:
        seen: dict[bytes, Any] = {}
        for r in records:
            v = f.coerce(r[f.name])
            raw = v.encode() if isinstance(v, str) else v
            if f.width is not None and isinstance(raw, bytes) and len(raw) > f.width:
                continue
            if seen.setdefault(f.encode(v), v) != v:
                return True
    return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schema_and_records())
def test_encode_many_equals_encode_per_record(sr):
    schema, records = sr
    assume(schema.prefix.name != "random")
    outcomes = [_outcome(schema.layout.encode_generic, r) for r in records]
    columns = {f.name: [r[f.name] for r in records] for f in schema.fields}
    if all(kind == "ok" for kind, _ in outcomes) and _twins_in_run(schema, records):
        # two values of one padded field share a key: refused as a run, each taken alone (issue 39 item 16)
        with pytest.raises(KeyshapeError, match="of one run share one key"):
            schema.encode_many(columns)
    elif all(kind == "ok" for kind, _ in outcomes):
        expected = [key for _, key in outcomes]
        assert schema.encode_many(columns) == expected
        assert schema.encode_many(columns, as_array=True).tolist() == expected
        text = {
            n: (np.array(v) if v and all(type(x) is str and "\x00" not in x for x in v) else v) for n, v in columns.items()
        }  # numpy drops trailing NULs: not the same values
        assert schema.encode_many(text) == expected  # numpy str columns
    else:
        with pytest.raises(KeyshapeError):
            schema.encode_many(columns)


def test_pickle_and_copy_keep_working_encoders():
    import copy
    import pickle

    schema = KeySchema.load("examples/orders.toml")
    rec = {"user_id": "user0000042", "order_time": 1767225600000, "order_id": "1234567"}
    key = schema.encode(rec)
    for other in (pickle.loads(pickle.dumps(schema)), copy.copy(schema)):
        assert other.encode(rec) == key and other.decode(key) == schema.decode(key)
    # a pickled schema compiles its own functions; a copy shares the immutable layout and its
    # compiled functions, and changing the copy's key builds the copy a new layout only
    assert pickle.loads(pickle.dumps(schema)).encode is not schema.encode
    other = copy.copy(schema)
    assert other.layout is schema.layout and other.encode(rec) == key
    other.hash_fields = other.field_names
    assert other.layout is not schema.layout and other.layout.hashes_whole_key
    assert other.encode(rec) == other.layout.encode_generic(rec) and other.decode(other.encode(rec)) == schema.decode(key)
    assert schema.encode(rec) == key and schema.decode(key)["user_id"] == "user0000042"


@given(st.binary(max_size=300))
def test_java_bytes_hash_fast_path_equals_the_reference(b):
    from keyshape.core.hashing import java_bytes_hash

    h = 1  # Arrays.hashCode(byte[]) as Java computes it, byte by signed byte
    for c in b:
        h = (31 * h + (c - 256 if c > 127 else c)) & 0xFFFFFFFF
    assert java_bytes_hash(b) == (h - (1 << 32) if h & 0x80000000 else h)


@settings(max_examples=200, deadline=None)
@given(
    st.binary(min_size=3, max_size=3) | st.just(b"\x00\x00\x00"),
    st.integers(-(2**31), 2**31 - 1),
    st.binary(min_size=3, max_size=3),
    st.binary(min_size=3, max_size=3),
    st.sampled_from([1, 2, 5]),
    st.sampled_from([1, 7, 20, 256]),
)
def test_opentsdb_salt_compiled_equals_generic(metric, hour, tagk, tagv, width, buckets):
    base = KeySchema.load("examples/opentsdb.toml")
    schema = base.with_prefix("opentsdb", splits=None, buckets=buckets, width=width)
    rec = {"metric": metric, "base_hour": hour, "tagk_host": tagk, "tagv_host": tagv}
    key = schema.encode(rec)
    assert key == schema.layout.encode_generic(rec)
    assert repr(_outcome(schema.decode, key)) == repr(_outcome(schema.layout.decode_generic, key))
    bad = key[:0] + bytes([key[0] ^ 1]) + key[1:]
    assert repr(_outcome(schema.decode, bad)) == repr(_outcome(schema.layout.decode_generic, bad))
    for batch in ([key, key], [key, bad]):  # decode_many's C route checks the salt per key too
        for verify in (True, False):
            assert repr(_many(schema, batch, verify)) == repr(_columns_of(schema, batch, verify))


def test_decode_many_on_thousands_of_keys_equals_decode_per_key():
    """The paths only large batches take: keys of different lengths laid out by window gather,
    repeated bytes values shared through a dictionary (trailing NULs kept), distinct salt
    material hashed once, left-padded text stripped by gathering."""
    schema = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {
                "separator": "",
                "prefix": {"strategy": "md5", "length": 4},
                "hash_fields": ["tag", "dev"],
                "fields": [
                    {"name": "tag", "type": "bytes", "width": 3},
                    {"name": "dev", "type": "string", "width": 8},
                    {"name": "ts", "type": "timestamp", "order": "desc"},
                    {"name": "metric", "type": "string"},
                ],
            },
        }
    )
    records = [
        {"tag": bytes([i % 5, 0, 0]) if i % 2 else b"a\x00\x00", "dev": f"d{i % 700}", "ts": 1767225600000 + i, "metric": "m" * (i % 4)}
        for i in range(12_000)
    ]
    keys = [schema.encode(r) for r in records]
    assert repr(_many(schema, keys)) == repr(_columns_of(schema, keys))
    assert repr(_many(schema, KeyArray.from_keys(keys))) == repr(_columns_of(schema, keys))
    assert repr(_many_arrow(schema, keys)) == repr(_columns_of(schema, keys))


def test_decode_many_as_arrow_keeps_nul_characters_of_the_row_by_row_route():
    # two variable-width fields: decoded key by key, then handed to Arrow, which reads a numpy
    # str value only up to its first NUL (found by hypothesis)
    schema = KeySchema.from_dict(
        {"table": {"name": "t"}, "key": {"separator": "_", "fields": [{"name": "f0", "type": "string"}, {"name": "f1", "type": "string"}]}}
    )
    records = [{"f0": "", "f1": "\x000"}, {"f0": "a\x00", "f1": "\x00"}]
    keys = [schema.layout.encode_generic(r) for r in records]
    assert schema.decode_many(keys, as_arrow=True).to_pylist() == [schema.decode(k) for k in keys] == records


@pytest.mark.parametrize(
    "path,prefix",
    [
        ("examples/inbox.toml", None),
        ("examples/iot.toml", None),
        ("examples/iot.toml", "crc32"),
        ("examples/opentsdb.toml", None),
        ("examples/orders.toml", "java-hash-short"),
        ("series", "mod"),
    ],
)
def test_decode_many_checks_every_salt_of_a_large_batch(path, prefix):
    """Large batches check each distinct salt material once (the head of the key, or J gathered
    from the key's columns): one key with another key's salt among 12,000 is still the error
    decode() gives for it, and verify=False still reads it."""
    from keyshape.workload import generate

    if path == "series":  # J = two bytes fields after another field, joined by the separator
        schema = KeySchema.from_dict(
            {
                "table": {"name": "t"},
                "key": {
                    "separator": "|",
                    "prefix": {"strategy": prefix, "buckets": 16},
                    "hash_fields": ["a", "b"],
                    "fields": [
                        {"name": "ts", "type": "int32", "encoding": "hbase"},
                        {"name": "a", "type": "bytes", "width": 3},
                        {"name": "b", "type": "bytes", "width": 5},
                    ],
                },
            }
        )
        rng = np.random.default_rng(7)
        keys = [
            schema.encode({"ts": int(t), "a": bytes([x, 0, x]), "b": b"b\x00|%02d" % y})
            for t, x, y in zip(rng.integers(0, 2**31, 12_000), rng.integers(0, 40, 12_000), rng.integers(0, 90, 12_000))
        ]
    else:
        schema = KeySchema.load(path)
        if prefix:
            schema = schema.with_prefix(prefix, splits=None)
        keys = schema.encode_many(next(generate(schema, 12_000, chunk_rows=12_000)))
    assert repr(_many(schema, keys)) == repr(_columns_of(schema, keys))
    w = schema.prefix.width
    other = next(k for k in keys if k[:w] != keys[7_000][:w])
    bad = list(keys)
    bad[7_000] = other[:w] + keys[7_000][w:]
    outcome = _many(schema, bad)
    assert outcome[0] == "error" and repr(outcome) == repr(_columns_of(schema, bad))
    assert repr(_many(schema, bad, verify=False)) == repr(_columns_of(schema, bad, verify=False))


def test_unverified_decode_of_text_keys_reads_separators_inside_values_as_the_generic_decoder():
    """verify=False on a separator layout of text fields takes one split when the key cuts into
    fields of their widths; a separator inside a value, a short field or a non-digit number
    falls back, and every outcome is the generic decoder's."""
    schema = KeySchema.load("examples/orders.toml")
    rec = {"user_id": "user0000042", "order_time": 1767225600000, "order_id": "1234567"}
    key = schema.encode(rec)
    variants = [
        key,
        schema.encode({**rec, "user_id": "a_b_c"}),
        schema.encode({**rec, "order_id": "12_45"}),
        key.replace(b"_user", b"__user"),
        key[:-1],
        key[:3] + b"x" + key[4:],
        key[:-9] + b"x" + key[-8:],
        b"99" + key[2:],
        bytearray(key),
        memoryview(key),
        b"",
        b"___",
    ]
    for k in variants:
        for verify in (False, True):
            assert repr(_outcome(lambda k: schema.decode(k, verify), k)) == repr(
                _outcome(lambda k: schema.layout.decode_generic(bytes(k), verify=verify), k)
            ), (k, verify)
    assert schema.decode(key, False) == rec | {"order_id": 234567}


def test_bytes_like_keys_decode_as_bytes_with_the_salt_checked():
    """A memoryview or bytearray key decodes as its bytes would, also where the prefix check
    reads the key itself (a one-field J) and in a batch of keys of different lengths."""
    schema = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"prefix": {"strategy": "mod", "buckets": 16}, "hash_fields": ["u"], "fields": [{"name": "u", "type": "string", "width": 4}]},
        }
    )
    key = schema.encode({"u": "abcd"})
    for k in (memoryview(key), bytearray(key)):
        assert schema.decode(k) == schema.decode(k, verify=False) == {"u": "abcd"}
    orders = KeySchema.load("examples/orders.toml")
    keys = [orders.encode({"user_id": f"u{i}" * (i % 3 + 1), "order_time": i, "order_id": "1"}) for i in range(9)]
    mixed = [memoryview(k) if i % 3 == 0 else bytearray(k) if i % 3 == 1 else k for i, k in enumerate(keys)]
    assert _many(orders, mixed) == _many(orders, keys) == _columns_of(orders, keys)
    assert KeyArray.from_keys(mixed).tolist() == keys


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
def test_c_batch_reader_widens_and_narrows_a_variable_text_column_in_one_pass():
    """The C reader writes each text value while its key is read: a variable-width field's column
    starts at the first value's width, widens when a longer value comes (rows already written
    move) and closes up at the end when the widest value is narrower than the room it made."""
    schema = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {
                "separator": "|",
                "prefix": {"strategy": "mod", "buckets": 10},
                "hash_fields": ["name"],
                "fields": [
                    {"name": "name", "type": "string"},
                    {"name": "n", "type": "int64", "encoding": "text", "width": 19},
                    {"name": "tail", "type": "string"},
                ],
            },
        }
    )
    lengths = [1, 2, 3, 5, 4, 9, 1, 17, 30, 2, 31, 0, 7]
    for order in (lengths, lengths[::-1], [3] * 5 + [40] + [3] * 5):
        recs = [{"name": "x" * (w or 1) + str(i), "n": 10**i % (10**19 - 1), "tail": "t" * w} for i, w in enumerate(order)]
        keys = [schema.encode(r) for r in recs]
        for verify in (True, False):
            reader = native_reader(schema.layout, verify)
            assert reader is not None and reader.columns(keys) is not None
            assert _many(schema, keys, verify) == _columns_of(schema, keys, verify)
        assert _many_arrow(schema, keys) == _columns_of(schema, keys)
        many = schema.decode_many(keys)
        assert many["tail"].dtype == np.dtype(f"<U{max(order)}")  # the widest value's width, as numpy gives


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
@pytest.mark.parametrize("width", range(1, 20))
def test_c_digit_reader_takes_every_width_and_refuses_a_bad_byte_anywhere(width):
    """Decimal fields are read eight digits a step with their last digits in one overlapping
    word: every width up to 19, the largest and smallest values, and a non-digit at each
    position (including ':' and '/', next to the digits, and bytes that carry when added to)
    leave the key to the Python decoder, whose error decode_many gives."""
    schema = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"fields": [{"name": "a", "type": "int64", "encoding": "text", "width": width}, {"name": "b", "type": "string", "width": 2}]},
        }
    )
    top = min(10**width - 1, 2**63 - 1)
    values = [0, 1, top, top // 7, int("1234567890123456789"[:width])]
    keys = [schema.encode({"a": v, "b": "ok"}) for v in values]
    assert schema.decode_many(keys)["a"].tolist() == values
    assert _many_arrow(schema, keys) == _columns_of(schema, keys)
    for pos in range(width):
        for bad in (b":", b"/", b"\xfa", b"\xff", b" ", b"\x00"):
            key = keys[2][:pos] + bad + keys[2][pos + 1 :]
            batch = [keys[0], key, keys[1]]
            assert native_reader(schema.layout, True).columns(batch) is None
            assert _many(schema, batch) == _columns_of(schema, batch)
            assert _many(schema, batch)[0] == "error"


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schema_and_records(), st.integers(2, 5), st.data())
def test_c_batch_reader_on_threads_gives_the_one_thread_columns(sr, threads, data):
    """Chunks read on several threads (one row a chunk here, to reach every seam) are put back
    together into the same columns, bit for bit: Arrow offsets and data moved behind the chunks
    before them, text rows closed up to the widest value, bytes lists from the values' codes; a
    key left to Python in any chunk leaves the whole batch to Python."""
    schema, records = sr
    keys = _encodable(schema, records)
    assume(keys)
    if data.draw(st.booleans()):  # a damaged key somewhere
        i = data.draw(st.integers(0, len(keys) - 1))
        keys[i] = data.draw(st.one_of(st.just(keys[i][:-1]), st.just(keys[i] + b"\x00"), st.binary(max_size=8)))
    for verify in (True, False):
        reader = native_reader(schema.layout, verify)
        if reader is None:
            continue
        for arrow in (False, True):
            for field_width in (True, False):
                one = reader.columns(keys, arrow, field_width)
                assert reader.columns(keys, arrow, field_width, threads, 1) == one


def _orders_keys(n: int, prefix: str | None = None) -> tuple[KeySchema, list[bytes]]:
    from keyshape.workload import generate

    schema = KeySchema.load(Path("examples/orders.toml"))
    if prefix is not None:
        schema = schema.with_prefix(prefix, splits=None)
    return schema, schema.encode_many(next(generate(schema, n, seed=3, chunk_rows=n)))


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
def test_decode_many_of_a_large_batch_on_two_threads_equals_decode_per_key():
    """A batch large enough to be split over threads, with the default chunk size: the columns
    are decode()'s values, and one bad key in the last chunk is decode()'s error."""
    for prefix in (None, "md5"):
        schema, keys = _orders_keys(40_000, prefix)
        reader = native_reader(schema.layout, True)
        assert reader is not None
        assert reader.columns(keys, False, True, 2) == reader.columns(keys)
        assert reader.columns(keys, True, True, 2) == reader.columns(keys, True)
        assert _many(schema, keys) == _columns_of(schema, keys)
        bad = list(keys)
        bad[-7] = keys[-7][:-1]
        assert reader.columns(bad, False, True, 2) is None
        assert _many(schema, bad) == _columns_of(schema, bad) and _many(schema, bad)[0] == "error"


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
def test_c_batch_reader_keeps_the_gil_while_its_threads_read_the_list():
    """The batch's threads read the caller's list in place, so the caller keeps the GIL until they
    are done: another Python thread that replaces the list's items (each by an equal copy, bytes of
    0xFF made to take the freed blocks) and decodes keys of the same md5 schema one by one (whose
    memo the batch's first thread uses) runs only between calls, and every column and every value
    stays exact."""
    import threading

    schema, keys = _orders_keys(60_000, "md5")
    reader = native_reader(schema.layout, True)
    assert reader is not None
    expected = reader.columns(list(keys))
    per_key = [schema.decode(k) for k in keys[:2000]]
    stop = threading.Event()
    seen: list[Any] = []

    def meddle() -> None:
        while not stop.is_set():
            junk = []
            for i in range(0, len(batch), 97):
                batch[i] = bytes(bytearray(batch[i]))
                junk.append(b"\xff" * len(batch[i]))  # takes the block the old key would free
            seen.append([schema.decode(k) for k in keys[:2000]] == per_key)

    for _ in range(5):
        batch = list(keys)
        worker = threading.Thread(target=meddle)
        worker.start()
        try:
            got = [reader.columns(batch, False, True, 2, 1024) for _ in range(3)]
        finally:
            stop.set()
            worker.join()
        stop.clear()
        assert all(g == expected for g in got)
    assert seen and all(seen)


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
def test_one_long_key_does_not_widen_every_row_of_the_c_batch_reader():
    """Text buffers are sized from the longest key; when that room on every row would come to far
    more than the keys (one 200 KB key among short ones, its length in another field), each
    field's widest value is measured first: the columns are decode()'s, on one thread or two,
    numpy's width is the widest value's, and the memory is the keys' order, not rows x 200 KB."""
    import tracemalloc

    schema = KeySchema.from_dict(
        {"table": {"name": "t"}, "key": {"separator": "|", "fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "bytes"}]}}
    )
    keys = [b"user%07d|%d" % (i, i) for i in range(40_000)]
    keys[5] = b"x|" + b"y" * 200_000
    keys[33_333] = b"longer-user-name|z"
    reader = native_reader(schema.layout, True)
    assert reader is not None
    tracemalloc.start()
    try:
        one = reader.columns(keys)
        two = reader.columns(keys, False, True, 2)
        arrow = reader.columns(keys, True, True, 2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert one is not None and one == two and arrow == reader.columns(keys, True)
    assert peak < 64 * 2**20, peak  # rows x the longest key's room would be 32 GB
    many = schema.decode_many(keys)
    assert many["a"].dtype == np.dtype("<U16") and many["b"][5] == b"y" * 200_000
    assert _many(schema, keys) == _columns_of(schema, keys)
    assert _many_arrow(schema, keys) == _columns_of(schema, keys)
