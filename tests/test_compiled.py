"""The per-schema compiled encoder/decoder (keyshape.schema.compiled) against the generic path
that walks the field specs: same bytes, same values, same one-line errors, for random schemas,
random records (including wrong types and out-of-range values) and random or damaged keys."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema
from keyshape.schema.compiled import MEMO_LIMIT, java_string_hash_u32
from keyshape.core.hashing import java_string_hash

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
]
PREFIXES = [
    {"strategy": "none"}, {"strategy": "md5", "length": 4}, {"strategy": "md5", "length": 5},
    {"strategy": "md5-full"}, {"strategy": "mod", "buckets": 100}, {"strategy": "mod", "buckets": 7},
    {"strategy": "crc32"}, {"strategy": "java-hash-short"}, {"strategy": "phoenix", "buckets": 13},
]


def _value(d: dict[str, Any]) -> st.SearchStrategy[Any]:
    t = d["type"]
    if t == "string":
        return st.one_of(st.text(max_size=9), st.text(alphabet="ab_|0", max_size=9), st.integers(-5, 10**8))
    if t == "bytes":
        return st.one_of(st.binary(max_size=6), st.text(alphabet="ab\\x0", max_size=6))
    if t == "float64":
        return st.one_of(st.floats(allow_nan=False), st.integers(-10, 10))
    return st.one_of(st.integers(-(2**64), 2**64), st.integers(-3, 3), st.sampled_from(["17", "2026-01-01T00:00:00Z", "x"]),
                     st.booleans())


@st.composite
def schema_and_records(draw: Any) -> tuple[KeySchema, list[dict[str, Any]]]:
    defs = draw(st.lists(st.sampled_from(FIELD_DEFS), min_size=1, max_size=4))
    fields = [{"name": f"f{i}", **d} for i, d in enumerate(defs)]
    sep = draw(st.sampled_from(["", "_", "|"]))
    prefix = draw(st.sampled_from(PREFIXES))
    hashed = draw(st.lists(st.sampled_from([f["name"] for f in fields]), min_size=1, unique=True))
    try:
        schema = KeySchema.from_dict({"table": {"name": "t"}, "key": {
            "separator": sep, "prefix": prefix, "hash_fields": hashed, "fields": fields}})
    except KeyshapeError:
        assume(False)
    records = draw(st.lists(st.fixed_dictionaries({f["name"]: _value(f) for f in fields}), min_size=1, max_size=8))
    return schema, records


def _outcome(fn: Any, arg: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(arg)
    except KeyshapeError as exc:
        return "error", str(exc)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schema_and_records(), st.data())
def test_compiled_encode_and_decode_equal_the_generic_path(sr, data):
    schema, records = sr
    for record in records:
        expected = _outcome(schema._encode_generic, record)
        assert _outcome(schema.encode, record) == expected
        if expected[0] != "ok":
            continue
        key = expected[1]
        assert _outcome(schema.decode, key) == _outcome(schema._decode_generic, key)
        # Damaged keys: cut, extended, one byte changed: same value or the same error.
        cut = data.draw(st.integers(0, len(key)))
        flip = data.draw(st.integers(0, max(len(key) - 1, 0)))
        bad = [key[:cut], key + data.draw(st.binary(min_size=1, max_size=3)),
               key[:flip] + bytes([(key[flip] + 1) % 256]) + key[flip + 1 :] if key else b"x"]
        for b in bad:
            assert _outcome(schema.decode, b) == _outcome(schema._decode_generic, b)
            assert _outcome(schema.decode, bytearray(b)) == _outcome(schema._decode_generic, b)


def test_missing_field_is_the_generic_error():
    schema = KeySchema.load("examples/orders.toml")
    a, b = _outcome(schema.encode, {"user_id": "u"}), _outcome(schema._encode_generic, {"user_id": "u"})
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
    assert len(schema._compiled_encode.__globals__["_MEMO"]) <= MEMO_LIMIT
    assert keys == [schema._encode_generic({**rec, "user_id": f"user{i:07d}"}) for i in range(MEMO_LIMIT + 10)]
