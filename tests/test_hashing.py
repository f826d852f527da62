"""keyshape.hashing against Java: vectors printed by a JVM (hbase_golden) plus textbook values."""

from __future__ import annotations

import numpy as np
import pytest
from hbase_golden import golden, unhex
from hypothesis import given
from hypothesis import strategies as st

from keyshape.hashing import (
    crc32,
    hbasewd_one_byte_hash,
    hbasewd_one_byte_hash_many,
    java_bytes_hash,
    java_bytes_hash_many,
    java_long_hash,
    java_string_hash,
    md5_hex,
    murmur3_32,
    opentsdb_salt,
    phoenix_salt,
    phoenix_salt_many,
)

_ROWS = golden()["bytes"]


def test_java_string_hash_textbook_values():
    """String.hashCode: "hello" -> 99162322, "" -> 0, and the famous 0-hash string."""
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("polygenelubricants") == -2147483648


def test_java_string_hash_matches_jvm_including_surrogates():
    """String.hashCode over UTF-16 code units: an emoji counts as a surrogate pair."""
    for row in golden()["java_string_hash"]:
        assert java_string_hash(row["s"]) == row["hash"], row
    assert java_string_hash("\U0001F600") == 31 * 0xD83D + 0xDE00


def test_java_long_hash_matches_jvm():
    """Long.hashCode(v) = (int)(v ^ (v >>> 32))."""
    for row in golden()["long"]:
        assert java_long_hash(row["v"]) == row["hash"], row


def test_java_long_hash_rejects_out_of_range():
    with pytest.raises(ValueError):
        java_long_hash(2**63)


def test_java_bytes_hash_matches_arrays_hashcode():
    """Arrays.hashCode(byte[]) over signed bytes, 461 keys."""
    for row in _ROWS:
        assert java_bytes_hash(unhex(row["bytes"])) == row["java_bytes_hash"], row


def test_java_bytes_hash_many_matches_scalar_and_jvm():
    keys = [unhex(r["bytes"]) for r in _ROWS]
    got = java_bytes_hash_many(keys)
    assert got.dtype == np.int32
    assert got.tolist() == [r["java_bytes_hash"] for r in _ROWS]


def test_md5_crc32_murmur3_match_hbase():
    """MD5Hash.getMD5AsHex, java.util.zip.CRC32, and HBase MurmurHash3 (seed 0 and 42)."""
    for row in _ROWS:
        b = unhex(row["bytes"])
        assert md5_hex(b) == row["md5"]
        assert crc32(b) == row["crc32"]
        assert murmur3_32(b) == row["murmur3"], row
        assert murmur3_32(b, seed=42) == row["murmur3_seed_42"], row


def test_md5_hex_is_lowercase_textbook():
    assert md5_hex(b"") == "d41d8cd98f00b204e9800998ecf8427e"


@pytest.mark.parametrize("buckets", [1, 7, 16, 256])
def test_phoenix_salt_matches_saltingutil(buckets):
    """SaltingUtil.getSaltingByte: (byte) Math.abs(hash % buckets)."""
    keys = [unhex(r["bytes"]) for r in _ROWS]
    expected = [r["phoenix"][str(buckets)] for r in _ROWS]
    assert [phoenix_salt(k, buckets) for k in keys] == expected
    assert phoenix_salt_many(keys, buckets).tolist() == expected


@pytest.mark.parametrize("buckets", [1, 10, 16, 256])
def test_hbasewd_one_byte_hash_matches_onebytesimplehash(buckets):
    """HBaseWD OneByteSimpleHash.getHashPrefix: (byte)(Math.abs(hash) % mod)."""
    keys = [unhex(r["bytes"]) for r in _ROWS]
    expected = [r["hbasewd"][str(buckets)] for r in _ROWS]
    assert [hbasewd_one_byte_hash(k, buckets) for k in keys] == expected
    assert hbasewd_one_byte_hash_many(keys, buckets).tolist() == expected


# Checked on a JVM: Arrays.hashCode(this key) == Integer.MIN_VALUE,
# (byte)(Math.abs(h) % 10L) == -8 and (byte) Math.abs(h % 10) == 8.
_MIN_INT_KEY = b"\xe1polygenelubricants"


def test_min_int_hash_quirks():
    """Math.abs(Integer.MIN_VALUE) stays negative: HBaseWD yields a byte outside 0..n-1,
    Phoenix (abs after %) does not."""
    key = _MIN_INT_KEY
    assert java_bytes_hash(key) == -(2**31)
    assert hbasewd_one_byte_hash(key, 10) == (-8) & 0xFF  # (byte)(MIN_VALUE % 10) = -8
    assert phoenix_salt(key, 10) == 8
    assert hbasewd_one_byte_hash_many([key], 10).tolist() == [248]
    assert phoenix_salt_many([key], 10).tolist() == [8]


@pytest.mark.parametrize("fn", [phoenix_salt, hbasewd_one_byte_hash])
@pytest.mark.parametrize("buckets", [0, 257, -1])
def test_bucket_range_is_checked(fn, buckets):
    with pytest.raises(ValueError, match="buckets"):
        fn(b"x", buckets)


def test_opentsdb_salt_matches_prefixkeywithsalt():
    """RowKey.prefixKeyWithSalt: hash of metric + tag UIDs, |hash % buckets|, width bytes."""
    for row in golden()["opentsdb"]:
        got = opentsdb_salt(unhex(row["metric"]), unhex(row["tags"]), row["buckets"], row["width"])
        assert got == unhex(row["salt"]), row


def test_opentsdb_annotation_row_is_not_salted():
    assert opentsdb_salt(b"\x00\x00\x00", b"\x00\x00\x01\x00\x00\x01", 20, 1) == b"\x00"


def test_opentsdb_width_checks():
    assert opentsdb_salt(b"\x00\x00\x01", b"", 20, 0) == b""
    with pytest.raises(ValueError, match="width"):
        opentsdb_salt(b"\x00\x00\x01", b"", 20, 9)
    with pytest.raises(ValueError, match="buckets"):
        opentsdb_salt(b"\x00\x00\x01", b"", 0, 1)


@given(st.binary(max_size=40), st.integers(1, 256))
def test_salts_are_in_range_and_batch_equals_scalar(key, buckets):
    p = phoenix_salt(key, buckets)
    assert 0 <= p < buckets
    assert phoenix_salt_many([key, key], buckets).tolist() == [p, p]
    assert hbasewd_one_byte_hash_many([key], buckets).tolist() == [hbasewd_one_byte_hash(key, buckets)]
