"""Prefix strategies: byte layouts recomputed independently (hashlib, zlib, the Java formulas
written out here), round trips and the vectorized path, for every strategy."""

from __future__ import annotations

import hashlib
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.core import hashing
from keyshape.core.splits import bucket_splits
from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema
from keyshape.schema.prefixes import STRATEGIES, java_string_hash_many


def java_string_hash(s: str) -> int:
    """String.hashCode over UTF-16 code units, as an unsigned 32-bit value."""
    h = 0
    units = s.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return h


def arrays_hash(b: bytes) -> int:
    """Arrays.hashCode(byte[]) with signed bytes, as a signed 32-bit int."""
    h = 1
    for c in b:
        h = (31 * h + (c - 256 if c > 127 else c)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def java_abs_rem(h: int, n: int) -> int:
    r = abs(h) % n  # Java: h % n truncates toward zero, then Math.abs
    return r


def schema(strategy: dict, fields=(("user", "string"), ("id", "string")), separator="_", hash_fields=None):
    key = {"prefix": strategy, "fields": [{"name": n, "type": t} for n, t in fields]}
    if separator is not None:
        key["separator"] = separator
    if hash_fields is not None:
        key["hash_fields"] = hash_fields
    return KeySchema.from_dict({"table": {"name": "t"}, "key": key})


def test_md5_layout_classic_rowKeyWithMD5Prefix():
    """The classic Java rowKeyWithMD5Prefix: md5_hex("user1_42")[:8] + "_user1_42"."""
    s = schema({"strategy": "md5", "length": 8})
    expected = hashlib.md5(b"user1_42").hexdigest()[:8].encode() + b"_user1_42"
    assert s.encode({"user": "user1", "id": "42"}) == expected


def test_md5_hash_fields_subset_hashes_only_those_fields():
    s = schema({"strategy": "md5", "length": 4}, hash_fields=["user"])
    assert s.encode({"user": "u9", "id": "7"}) == hashlib.md5(b"u9").hexdigest()[:4].encode() + b"_u9_7"


def test_md5_full_is_md5_of_k_and_not_decodable():
    """The classic Java rowKeyByMD5: the whole key is md5_hex(K)."""
    s = schema({"strategy": "md5-full"})
    key = s.encode({"user": "a", "id": "b"})
    assert key == hashlib.md5(b"a_b").hexdigest().encode()
    with pytest.raises(KeyshapeError, match="cannot be recovered"):
        s.decode(key)


def test_java_hash_short_layout_classic_rowKeyWithHashPrefix():
    """Bytes.toBytes((short)(J.hashCode() & 0x7FFF)) + K, no separator after the prefix."""
    s = schema({"strategy": "java-hash-short"})
    expected = struct.pack(">h", java_string_hash("user1_42") & 0x7FFF) + b"user1_42"
    assert s.encode({"user": "user1", "id": "42"}) == expected


def test_crc32_layout():
    s = schema({"strategy": "crc32"})
    assert s.encode({"user": "x", "id": "y"}) == b"%04x" % (zlib.crc32(b"x_y") & 0xFFFF) + b"_x_y"


@pytest.mark.parametrize("buckets,digits", [(16, 2), (100, 2), (101, 3), (1000, 3)])
def test_mod_layout_zero_padded_like_java_percent_02d(buckets, digits):
    s = schema({"strategy": "mod", "buckets": buckets})
    bucket = (java_string_hash("user7_1") & 0x7FFFFFFF) % buckets
    assert s.encode({"user": "user7", "id": "1"}) == str(bucket).zfill(digits).encode() + b"_user7_1"


def test_phoenix_layout_salt_byte_over_k():
    """Phoenix SaltingUtil.getSaltingByte: abs(Arrays.hashCode(K) % n) as one byte before K."""
    s = schema({"strategy": "phoenix", "buckets": 10}, separator=None, fields=(("a", "int64"), ("b", "string")))
    key = s.encode({"a": 5, "b": "hello"})
    k = key[1:]
    assert key[0] == java_abs_rem(arrays_hash(k), 10)


def test_opentsdb_layout_salt_over_metric_and_tags():
    """RowKey.prefixKeyWithSalt: Arrays.hashCode(metric + tags) % buckets, timestamp excluded."""
    s = KeySchema.from_dict(
        {
            "table": {"name": "tsdb"},
            "key": {
                "prefix": {"strategy": "opentsdb", "buckets": 20, "width": 1},
                "hash_fields": ["metric", "tagk", "tagv"],
                "fields": [
                    {"name": "metric", "type": "bytes", "width": 3},
                    {"name": "base", "type": "int32", "encoding": "hbase"},
                    {"name": "tagk", "type": "bytes", "width": 3},
                    {"name": "tagv", "type": "bytes", "width": 3},
                ],
            },
        }
    )
    rec = {"metric": b"\x00\x00\x07", "base": 1767225600, "tagk": b"\x00\x00\x01", "tagv": b"\x00\x01\x02"}
    key = s.encode(rec)
    expected_salt = java_abs_rem(arrays_hash(b"\x00\x00\x07\x00\x00\x01\x00\x01\x02"), 20)
    assert key == bytes([expected_salt]) + b"\x00\x00\x07" + struct.pack(">i", 1767225600) + b"\x00\x00\x01\x00\x01\x02"
    assert s.decode(key) == rec


def test_none_layout_is_k():
    assert schema("none").encode({"user": "a", "id": "b"}) == b"a_b"
    assert schema("none", separator=None, fields=(("a", "int32"),)).encode({"a": 1}) == b"\x2b\x80\x00\x00\x01"


def test_random_prefix_is_a_bucket_and_strips():
    s = schema({"strategy": "random", "buckets": 8, "seed": 1})
    seen = set()
    for i in range(200):
        key = s.encode({"user": "u", "id": str(i)})
        assert key[:2] in s.buckets() and key[2:3] == b"_"
        assert s.decode(key) == {"user": "u", "id": str(i)}
        seen.add(key[:2])
    assert len(seen) == 8


def test_separator_empty_when_absent():
    s = schema({"strategy": "md5", "length": 4}, separator=None, fields=(("a", "string"),))
    assert s.encode({"a": "zz"}) == hashlib.md5(b"zz").hexdigest()[:4].encode() + b"zz"


def test_md5_length_out_of_range_is_a_schema_error():
    for length in (3, 33):
        with pytest.raises(KeyshapeError, match=r"key\.prefix\.length"):
            schema({"strategy": "md5", "length": length})


@pytest.mark.parametrize(
    "strategy,count,first,last",
    [
        ({"strategy": "mod", "buckets": 100}, 100, b"00", b"99"),
        ({"strategy": "phoenix", "buckets": 16}, 16, b"\x00", b"\x0f"),
        ({"strategy": "crc32"}, 65536, b"0000", b"ffff"),
        ({"strategy": "md5", "length": 4}, 65536, b"0000", b"ffff"),
        ({"strategy": "java-hash-short"}, 32768, b"\x00\x00", b"\x7f\xff"),
    ],
)
def test_buckets_sorted_complete(strategy, count, first, last):
    b = schema(strategy).buckets()
    assert len(b) == count and b == sorted(b) and len(set(b)) == count
    assert (b[0], b[-1]) == (first, last)


def test_buckets_none_when_unsalted_and_error_when_too_many():
    assert schema("none").buckets() is None
    assert schema({"strategy": "md5-full"}).buckets() is None
    with pytest.raises(KeyshapeError, match="too many"):
        schema({"strategy": "md5", "length": 5}).buckets()


def test_prefix_splits_one_region_per_bucket_match_bucket_splits():
    """regions == buckets: the boundaries are splits.bucket_splits (decimal for mod, byte for Phoenix)."""
    s = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"separator": "_", "prefix": {"strategy": "mod", "buckets": 16}, "fields": [{"name": "a", "type": "string"}]},
            "splits": {"algorithm": "prefix", "regions": 16},
        }
    )
    assert s.split_keys() == bucket_splits(16, "decimal", 2)
    p = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"prefix": {"strategy": "phoenix", "buckets": 8}, "fields": [{"name": "a", "type": "string"}]},
            "splits": {"algorithm": "prefix"},
        }
    )
    assert p.split_keys() == bucket_splits(8, "byte")


def test_prefix_splits_group_buckets_evenly():
    s = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"prefix": {"strategy": "mod", "buckets": 100}, "fields": [{"name": "a", "type": "string"}]},
            "splits": {"algorithm": "prefix", "regions": 20},
        }
    )
    keys = s.split_keys()
    assert keys == [b"%02d" % (5 * i) for i in range(1, 20)]
    h = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"prefix": {"strategy": "md5", "length": 8}, "fields": [{"name": "a", "type": "string"}]},
            "splits": {"algorithm": "prefix", "regions": 4},
        }
    )
    assert h.split_keys() == [b"40000000", b"80000000", b"c0000000"]


@given(st.lists(st.text(max_size=12), max_size=30))
def test_java_string_hash_many_equals_scalar(texts):
    js = [t.encode("utf-8", "surrogatepass") for t in texts if not any(0xD800 <= ord(c) <= 0xDFFF for c in t)]
    got = java_string_hash_many(js)
    assert [int(x) for x in got] == [hashing.java_string_hash(j.decode("utf-8")) & 0xFFFFFFFF for j in js]


_VALUES = st.text(alphabet=st.characters(blacklist_characters="_\x00", blacklist_categories=("Cs",)), min_size=1, max_size=10)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(set(STRATEGIES) - {"opentsdb"})), st.lists(st.tuples(_VALUES, _VALUES), min_size=1, max_size=20))
def test_every_strategy_round_trips_and_batch_equals_loop(strategy, rows):
    opts = {"strategy": strategy}
    if strategy in ("mod", "phoenix"):
        opts["buckets"] = 13
    s = schema(opts)
    records = [{"user": u, "id": i} for u, i in rows]
    keys = [s.encode(r) for r in records]
    if strategy != "random":
        assert s.encode_many({"user": [u for u, _ in rows], "id": [i for _, i in rows]}) == keys
    for r, k in zip(records, keys):
        if strategy == "md5-full":
            continue
        assert s.decode(k) == r


def test_decode_rejects_a_key_whose_prefix_does_not_match():
    s = schema({"strategy": "mod", "buckets": 10})
    key = s.encode({"user": "a", "id": "b"})
    wrong = (b"%02d" % ((int(key[:2]) + 1) % 10)) + key[2:]
    with pytest.raises(KeyshapeError, match="does not match"):
        s.decode(wrong)


def test_phoenix_vectorized_salt_matches_formula():
    s = schema({"strategy": "phoenix", "buckets": 37}, separator=None, fields=(("a", "int64"),))
    vals = np.arange(-500, 500, dtype=np.int64)
    keys = s.encode_many({"a": vals})
    assert all(k[0] == java_abs_rem(arrays_hash(k[1:]), 37) for k in keys)
