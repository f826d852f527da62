"""keyshape.core.hashing against Java: vectors printed by the real upstream jars (hbase_golden:
hbase-common 2.6.4, phoenix-core-client 5.2.1, opentsdb 2.4.1, hbasewd 0.1.0) plus textbook values."""

from __future__ import annotations

import numpy as np
import pytest
from hbase_golden import golden, salt_golden, unhex
from hypothesis import given
from hypothesis import strategies as st

from keyshape.core.hashing import (
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
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def test_java_string_hash_textbook_values():
    """String.hashCode: "hello" -> 99162322, "" -> 0, and the famous 0-hash string."""
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("polygenelubricants") == -2147483648


def test_java_string_hash_matches_jvm_including_surrogates():
    """String.hashCode over UTF-16 code units: an emoji counts as a surrogate pair."""
    for row in golden()["java_string_hash"]:
        assert java_string_hash(row["s"]) == row["hash"], row
    assert java_string_hash("\U0001f600") == 31 * 0xD83D + 0xDE00


def test_java_long_hash_matches_jvm():
    """Long.hashCode(v) = (int)(v ^ (v >>> 32))."""
    for row in golden()["long"]:
        assert java_long_hash(row["v"]) == row["hash"], row


def test_java_long_hash_rejects_out_of_range():
    with pytest.raises(ValueError):
        java_long_hash(2**63)


def test_java_bytes_hash_matches_arrays_hashcode():
    """Arrays.hashCode(byte[]) over signed bytes: all 256 single bytes and random keys."""
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


def _salt_cases(upstream: str) -> list[dict]:
    return salt_golden()[upstream]["cases"]


@pytest.mark.parametrize("upstream", ["phoenix", "hbasewd"])
def test_salt_vectors_cover_the_edge_hashes(upstream):
    """The jar-made keys hit Integer.MIN_VALUE, MAX_VALUE, -1, 0 and other negative hashes, and the
    hash recorded by the JVM is keyshape's java_bytes_hash of the key."""
    cases = _salt_cases(upstream)
    assert upstream in salt_golden()[upstream]["jar"]
    hashes = set()
    for row in cases:
        assert java_bytes_hash(unhex(row["key"])) == row["hash"], row
        hashes.add(row["hash"])
    assert {_INT_MIN, _INT_MIN + 1, _INT_MAX, -1, 0, -256, -257} <= hashes
    assert {"1", "2", "256"} <= set(cases[0]["salt"])


@pytest.mark.parametrize("buckets", [1, 2, 3, 7, 10, 16, 255, 256])
def test_phoenix_salt_matches_real_saltingutil(buckets):
    """phoenix-core-client 5.2.1 SaltingUtil.getSaltingByte(key, offset, length, buckets)."""
    cases = _salt_cases("phoenix")
    keys = [unhex(r["key"]) for r in cases]
    expected = [r["salt"][str(buckets)] for r in cases]
    assert [phoenix_salt(k, buckets) for k in keys] == expected
    assert phoenix_salt_many(keys, buckets).tolist() == expected


@pytest.mark.parametrize("buckets", [1, 2, 3, 7, 10, 16, 255, 256])
def test_hbasewd_one_byte_hash_matches_real_onebytesimplehash(buckets):
    """hbasewd 0.1.0 RowKeyDistributorByHashPrefix.OneByteSimpleHash(buckets).getHashPrefix(key)."""
    cases = _salt_cases("hbasewd")
    keys = [unhex(r["key"]) for r in cases]
    expected = [r["salt"][str(buckets)] for r in cases]
    assert [hbasewd_one_byte_hash(k, buckets) for k in keys] == expected
    assert hbasewd_one_byte_hash_many(keys, buckets).tolist() == expected


_MIN_INT_KEY = b"\xe1polygenelubricants"


def test_min_int_hash_quirks():
    """Math.abs(Integer.MIN_VALUE) stays negative: HBaseWD yields a byte outside 0..n-1,
    Phoenix (abs after %) does not. Expected values are the real jars' (salt_golden)."""
    key = _MIN_INT_KEY
    assert java_bytes_hash(key) == _INT_MIN
    phoenix = {unhex(r["key"]): r["salt"] for r in _salt_cases("phoenix")}[key]
    hbasewd = {unhex(r["key"]): r["salt"] for r in _salt_cases("hbasewd")}[key]
    assert hbasewd["10"] == 248  # (byte)(MIN_VALUE % 10L) == -8
    assert phoenix["10"] == 8
    for n in ("1", "2", "3", "7", "10", "16", "255", "256"):
        assert hbasewd_one_byte_hash(key, int(n)) == hbasewd[n]
        assert phoenix_salt(key, int(n)) == phoenix[n]
    assert hbasewd_one_byte_hash_many([key], 10).tolist() == [248]
    assert phoenix_salt_many([key], 10).tolist() == [8]


@pytest.mark.parametrize("fn", [phoenix_salt, hbasewd_one_byte_hash])
@pytest.mark.parametrize("buckets", [0, 257, -1])
def test_bucket_range_is_checked(fn, buckets):
    with pytest.raises(ValueError, match="buckets"):
        fn(b"x", buckets)


def test_opentsdb_salt_matches_real_prefixkeywithsalt():
    """opentsdb 2.4.1 RowKey.prefixKeyWithSalt on a whole data row: salt + metric + timestamp + tags.

    The jar salted rows of salt width 1..8, metric UID widths 1, 3 and 4 (TSDB.METRICS_WIDTH),
    buckets 1..Integer.MAX_VALUE, and metric+tags hashes including Integer.MIN_VALUE and -1.
    """
    cases = _salt_cases("opentsdb")
    assert "opentsdb" in salt_golden()["opentsdb"]["jar"]
    for row in cases:
        metric, ts, tags = unhex(row["metric"]), unhex(row["timestamp"]), unhex(row["tags"])
        assert java_bytes_hash(metric + tags) == row["hash"], row
        got = opentsdb_salt(metric, tags, row["buckets"], row["width"]) + metric + ts + tags
        assert got == unhex(row["row"]), row
    assert {r["width"] for r in cases} == set(range(1, 9))
    assert {len(unhex(r["metric"])) for r in cases} == {1, 3, 4}
    assert {1, 2, 256, 65536, _INT_MAX} <= {r["buckets"] for r in cases}
    assert {_INT_MIN, _INT_MAX, -1, 0} <= {r["hash"] for r in cases}
    assert any(unhex(r["metric"]) == b"\x00\x00\x00" for r in cases)  # annotation row: left unsalted


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
