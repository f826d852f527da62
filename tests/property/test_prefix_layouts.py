"""Every prefix strategy's byte layout against the key-schema specification's text, word by word, under hypothesis.

The expected key is rebuilt here from the specification's formulas with hashlib, zlib, struct and the Java
hash functions written out below (never with keyshape.core.hashing), for ``encode`` and ``encode_many``
alike: J = the hashed fields joined by the separator in key order, K = all fields joined by it.
"""

from __future__ import annotations

import hashlib
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.errors import SchemaError
from keyshape.schema import KeySchema

ALNUM = st.text(alphabet="abcxyzAZ019_-:é€😀", min_size=0, max_size=8)
SEPARATORS = st.sampled_from(["_", "-", "::", "|"])


def string_hash_code(s: str) -> int:
    """java.lang.String.hashCode: h = 31*h + c over UTF-16 code units, signed int."""
    h = 0
    units = s.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def arrays_hash_code(b: bytes) -> int:
    """java.util.Arrays.hashCode(byte[]): h = 31*h + (signed byte) from 1, signed int."""
    h = 1
    for c in b:
        h = (31 * h + (c - 256 if c > 127 else c)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def java_rem(a: int, n: int) -> int:
    """Java's int %: the remainder takes the sign of the dividend."""
    r = abs(a) % n
    return -r if a < 0 else r


def make(prefix: dict, sep: str, hash_fields: list[str] | None = None) -> KeySchema:
    key: dict = {
        "separator": sep,
        "prefix": prefix,
        "fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "string"}, {"name": "c", "type": "string"}],
    }
    if hash_fields is not None:
        key["hash_fields"] = hash_fields
    return KeySchema.from_dict({"table": {"name": "t"}, "key": key})


HASH_SUBSETS = st.sampled_from([None, ["a"], ["b"], ["a", "c"], ["c", "a"], ["b", "c"]])


def j_and_k(rec: dict, sep: str, hash_fields: list[str] | None) -> tuple[str, str]:
    k = sep.join(rec[n] for n in "abc")
    hashed = hash_fields or ["a", "b", "c"]
    j = sep.join(rec[n] for n in "abc" if n in hashed)  # key order, whatever the listing order
    return j, k


def check(s: KeySchema, records: list[dict], expected: list[bytes]) -> None:
    assert [s.encode(r) for r in records] == expected
    assert s.encode_many({n: [r[n] for r in records] for n in "abc"}) == expected


RECORDS = st.lists(st.fixed_dictionaries({"a": ALNUM, "b": ALNUM, "c": ALNUM}), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(records=RECORDS, sep=SEPARATORS, hf=HASH_SUBSETS, length=st.sampled_from([4, 5, 8, 31, 32]))
def test_md5_is_hex_of_j_cut_to_length_then_sep_then_k(records, sep, hf, length):
    """md5: md5_hex(J)[:length] + sep + K (the classic Java rowKeyWithMD5Prefix)."""
    expected = []
    for r in records:
        j, k = j_and_k(r, sep, hf)
        expected.append((hashlib.md5(j.encode()).hexdigest()[:length] + sep + k).encode())
    check(make({"strategy": "md5", "length": length}, sep, hf), records, expected)


@settings(max_examples=40, deadline=None)
@given(records=RECORDS, sep=SEPARATORS, hf=HASH_SUBSETS)
def test_md5_full_is_hex_of_k_ignoring_hash_fields(records, sep, hf):
    """md5-full: md5_hex(K) (the classic Java rowKeyByMD5); hash_fields do not change it."""
    expected = [hashlib.md5(j_and_k(r, sep, hf)[1].encode()).hexdigest().encode() for r in records]
    check(make({"strategy": "md5-full"}, sep, hf), records, expected)


@settings(max_examples=60, deadline=None)
@given(records=RECORDS, sep=SEPARATORS, hf=HASH_SUBSETS)
def test_java_hash_short_is_two_big_endian_bytes_and_no_separator(records, sep, hf):
    """java-hash-short: Bytes.toBytes((short)(J.hashCode() & 0x7FFF)) + K, no separator after it."""
    expected = []
    for r in records:
        j, k = j_and_k(r, sep, hf)
        expected.append(struct.pack(">h", string_hash_code(j) & 0x7FFF) + k.encode())
    check(make({"strategy": "java-hash-short"}, sep, hf), records, expected)


@settings(max_examples=60, deadline=None)
@given(records=RECORDS, sep=SEPARATORS, hf=HASH_SUBSETS)
def test_crc32_is_four_lower_hex_digits_of_the_low_16_bits(records, sep, hf):
    """crc32: "%04x" % (crc32(J) & 0xFFFF) + sep + K."""
    expected = []
    for r in records:
        j, k = j_and_k(r, sep, hf)
        expected.append(("%04x" % (zlib.crc32(j.encode()) & 0xFFFF) + sep + k).encode())
    check(make({"strategy": "crc32"}, sep, hf), records, expected)


@pytest.mark.parametrize("buckets,n", [(2, 2), (10, 2), (11, 2), (100, 2), (101, 3), (1000, 3), (1001, 4), (123457, 6)])
@settings(max_examples=25, deadline=None)
@given(records=RECORDS, sep=SEPARATORS, hf=HASH_SUBSETS)
def test_mod_is_percent_0nd_with_n_digits_of_buckets_minus_1_at_least_2(buckets, n, records, sep, hf):
    """mod: "%0Nd" % ((J.hashCode() & 0x7FFFFFFF) % buckets) + sep + K, N = digits of buckets-1, >= 2."""
    assert n == max(2, len(str(buckets - 1)))
    expected = []
    for r in records:
        j, k = j_and_k(r, sep, hf)
        expected.append(("%0*d" % (n, (string_hash_code(j) & 0x7FFFFFFF) % buckets) + sep + k).encode())
    check(make({"strategy": "mod", "buckets": buckets}, sep, hf), records, expected)


@pytest.mark.parametrize("buckets,n", [(2, 2), (100, 2), (1000, 3)])
def test_random_is_a_bucket_in_the_mod_text_form(buckets, n):
    """random: a random bucket "%0Nd" (same N as mod) + sep + K; many writes reach every bucket."""
    s = make({"strategy": "random", "buckets": buckets, "seed": 5}, "::")
    seen = set()
    for i in range(4000):
        key = s.encode({"a": "x", "b": str(i), "c": ""})
        head, rest = key[:n], key[n:]
        assert head.isdigit() and int(head) < buckets and rest == b"::x::%d::" % i
        seen.add(int(head))
    assert len(seen) == buckets if buckets <= 100 else len(seen) > 900


@pytest.mark.parametrize("buckets", [2, 3, 16, 255, 256])
@settings(max_examples=25, deadline=None)
@given(records=RECORDS, sep=SEPARATORS, hf=HASH_SUBSETS)
def test_phoenix_is_one_salt_byte_over_k_whatever_hash_fields(buckets, records, sep, hf):
    """phoenix: SaltingUtil.getSaltingByte = (byte) Math.abs(Arrays.hashCode(K) % buckets) + K;
    the salt covers all of K (separators included), not J, and no separator follows it."""
    expected = []
    for r in records:
        k = j_and_k(r, sep, hf)[1].encode()
        expected.append(bytes([abs(java_rem(arrays_hash_code(k), buckets))]) + k)
    check(make({"strategy": "phoenix", "buckets": buckets}, sep, hf), records, expected)


def test_phoenix_257_buckets_is_a_schema_error():
    """Phoenix allows at most 256 salt buckets (SaltingUtil.MAX_BUCKET_NUM)."""
    with pytest.raises(SchemaError, match=r"key\.prefix\.buckets: 257 is out of range; use a value in 2\.\.256"):
        make({"strategy": "phoenix", "buckets": 257}, "_")


def salt_bytes(bucket: int, width: int) -> bytes:
    """OpenTSDB RowKey.getSaltBytes: byte[width - i] = (byte)(bucket >>> 8*(i-1)), Java int shifts
    (the shift count is taken mod 32)."""
    out = bytearray(width)
    for i in range(1, width + 1):
        out[width - i] = (bucket >> ((8 * (i - 1)) % 32)) & 0xFF
    return bytes(out)


OTSDB_UID = st.binary(min_size=3, max_size=3)


@pytest.mark.parametrize("width", [1, 2, 3, 4, 5, 8])
@settings(max_examples=30, deadline=None)
@given(
    rows=st.lists(st.tuples(OTSDB_UID, st.integers(0, 2**31 - 1), OTSDB_UID, OTSDB_UID, OTSDB_UID, OTSDB_UID), min_size=1, max_size=8),
    buckets=st.sampled_from([1, 7, 20, 300, 70000, 2**31 - 1]),
)
def test_opentsdb_salts_metric_and_tags_only(width, rows, buckets):
    """RowKey.prefixKeyWithSalt: Arrays.hashCode(metric + tag pairs) (the base time excluded),
    |h % buckets| over ``width`` bytes; an all-zero metric UID is left unsalted (zeros)."""
    s = KeySchema.from_dict(
        {
            "table": {"name": "tsdb"},
            "key": {
                "prefix": {"strategy": "opentsdb", "buckets": buckets, "width": width},
                "hash_fields": ["metric", "k1", "v1", "k2", "v2"],
                "fields": [
                    {"name": "metric", "type": "bytes", "width": 3},
                    {"name": "base", "type": "int32", "encoding": "hbase"},
                    *({"name": n, "type": "bytes", "width": 3} for n in ("k1", "v1", "k2", "v2")),
                ],
            },
        }
    )
    records, expected = [], []
    for metric, base, k1, v1, k2, v2 in rows + [(b"\0\0\0", 3600, b"\0\0\1", b"\0\0\2", b"\0\0\3", b"\0\0\4")]:
        records.append({"metric": metric, "base": base, "k1": k1, "v1": v1, "k2": k2, "v2": v2})
        tags = k1 + v1 + k2 + v2
        salt = bytes(width) if metric == b"\0\0\0" else salt_bytes(abs(java_rem(arrays_hash_code(metric + tags), buckets)), width)
        expected.append(salt + metric + struct.pack(">i", base) + tags)
    assert [s.encode(r) for r in records] == expected
    assert s.encode_many({n: [r[n] for r in records] for n in records[0]}) == expected
    assert [s.decode(k) for k in expected] == records


def test_opentsdb_metric_must_lead_the_hashed_fields():
    """The salt splits J at the metric's width, so the metric must come first in key order."""
    with pytest.raises(SchemaError, match=r"key\.hash_fields: the metric field 'metric'.*must come before"):
        KeySchema.from_dict(
            {
                "table": {"name": "tsdb"},
                "key": {
                    "prefix": {"strategy": "opentsdb"},
                    "hash_fields": ["metric", "tagk"],
                    "fields": [{"name": "tagk", "type": "bytes", "width": 3}, {"name": "metric", "type": "bytes", "width": 3}],
                },
            }
        )


@settings(max_examples=40, deadline=None)
@given(records=RECORDS, sep=SEPARATORS)
def test_none_is_k(records, sep):
    """none: K."""
    check(make("none", sep), records, [j_and_k(r, sep, None)[1].encode() for r in records])
