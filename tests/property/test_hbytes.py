"""keyshape.core.hbytes against HBase's Bytes (vectors from the real hbase-common 2.6.4, see hbase_golden)."""

from __future__ import annotations

import pytest
from hbase_golden import golden, unhex
from hypothesis import given
from hypothesis import strategies as st

from keyshape.core.hbytes import (
    MAX_LONG,
    compare,
    int32,
    int64,
    short,
    split,
    to_bytes_binary,
    to_string_binary,
)


@pytest.mark.parametrize("kind,fn", [("short", short), ("int", int32), ("long", int64)])
def test_to_bytes_numbers_match_hbase_bytes_toBytes(kind, fn):
    """Bytes.toBytes(short|int|long): big-endian two's complement."""
    for row in golden()[kind]:
        assert fn(row["v"]) == unhex(row["bytes"]), row


def test_number_widths_and_known_values():
    assert short(1) == b"\x00\x01"
    assert int32(-1) == b"\xff\xff\xff\xff"
    assert int64(MAX_LONG) == b"\x7f" + b"\xff" * 7
    assert MAX_LONG == 9223372036854775807


@pytest.mark.parametrize("fn,bad", [(short, 2**15), (short, -(2**15) - 1), (int32, 2**31), (int64, 2**63), (int64, -(2**63) - 1)])
def test_out_of_range_numbers_raise(fn, bad):
    with pytest.raises(ValueError, match="does not fit"):
        fn(bad)


def test_non_int_raises():
    with pytest.raises(ValueError):
        int64(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        int32(True)


def test_compare_is_unsigned_with_prefix_first():
    """Bytes.BYTES_COMPARATOR: unsigned bytes, shorter prefix first."""
    assert compare(b"\x7f", b"\x80") < 0  # signed compare would say the opposite
    assert compare(b"ab", b"abc") < 0
    assert compare(b"abc", b"ab") > 0
    assert compare(b"", b"") == 0
    assert compare(b"\xff", b"\x00\x00") > 0


@given(st.integers(0, MAX_LONG), st.integers(0, MAX_LONG))
def test_int64_order_matches_compare_for_non_negatives(x, y):
    assert (compare(int64(x), int64(y)) > 0) == (x > y)
    assert (compare(int64(x), int64(y)) == 0) == (x == y)


def test_negative_longs_sort_after_positive_like_hbase():
    assert compare(int64(-1), int64(1)) > 0


def test_to_string_binary_matches_hbase():
    """Bytes.toStringBinary over all 256 single bytes and 40 random keys."""
    for row in golden()["bytes"]:
        assert to_string_binary(unhex(row["bytes"])) == row["text"], row


def test_to_string_binary_examples_from_testbytes():
    """TestBytes.testToStringBinary-style: printable kept, backslash and others escaped."""
    assert to_string_binary(b"\x00\x01a\\Z~\x7f\xff ") == "\\x00\\x01a\\x5CZ~\\x7F\\xFF "


def test_to_bytes_binary_matches_hbase_including_bogus_escapes():
    """Bytes.toBytesBinary: only \\x + two UPPER-case hex digits decode; bogus escapes drop '\\'."""
    for row in golden()["to_bytes_binary"]:
        if "error" in row:
            with pytest.raises(ValueError):
                to_bytes_binary(row["text"])
        else:
            assert to_bytes_binary(row["text"]) == unhex(row["bytes"]), row


def test_to_bytes_binary_round_trips_hbase_text():
    for row in golden()["bytes"]:
        assert to_bytes_binary(row["text"]) == unhex(row["bytes"])


@pytest.mark.parametrize("text", ["\\xab", "\\xZZ", "\\y", "a\\", "\u20ac", "\\X41"])
def test_strict_mode_rejects_what_hbase_silently_mangles(text):
    with pytest.raises(ValueError):
        to_bytes_binary(text, strict=True)


def test_strict_mode_accepts_valid_text():
    assert to_bytes_binary("row\\x00\\xFF'\"", strict=True) == b"row\x00\xff'\""


@given(st.binary(max_size=64))
def test_string_binary_round_trip(b):
    text = to_string_binary(b)
    assert to_bytes_binary(text) == b
    assert to_bytes_binary(text, strict=True) == b
    assert all(0x20 <= ord(c) <= 0x7E for c in text)


def test_split_matches_hbase_bytes_split():
    """Bytes.split(a, b, inclusive, num): 248 cases incl. padding, the extra-byte retry, errors."""
    for row in golden()["split"]:
        a, b = unhex(row["a"]), unhex(row["b"])
        if "error" in row:
            with pytest.raises(ValueError):
                split(a, b, row["num"], inclusive=row["inclusive"])
        else:
            got = split(a, b, row["num"], inclusive=row["inclusive"])
            assert got == [unhex(k) for k in row["out"]], row


def test_split_testbytes_examples():
    """TestBytes.testSplit: split("bbb"->"ccc" style) ends kept, middle key in between."""
    low, high = b"aaa", b"zzz"
    parts = split(low, high, 1)
    assert parts[0] == low and parts[-1] == high and len(parts) == 3
    assert low < parts[1] < high
    # TestRegionSplitter.unitTestUniformSplit: a midpoint needing an extra byte
    assert split(b"aaa", b"aab", 1)[1] == b"aaa\x80"


@given(st.binary(max_size=6), st.binary(max_size=6), st.integers(1, 40), st.booleans())
def test_split_outputs_strictly_increasing(a, b, num, inclusive):
    width = max(len(a), len(b))
    if a.ljust(width, b"\0") >= b.ljust(width, b"\0"):
        with pytest.raises(ValueError):
            split(a, b, num, inclusive)
        return
    keys = split(a, b, num, inclusive)
    assert len(keys) == num + 2
    # inclusive widens the interval by one, so HBase's last interior key can equal b
    # (test_split_inclusive_may_repeat_the_end_like_hbase); everything else strictly increases.
    body = keys[:-1] if inclusive else keys
    assert all(x < y for x, y in zip(body, body[1:]))
    assert keys[-2] <= keys[-1]


def test_split_inclusive_may_repeat_the_end_like_hbase():
    """Bytes.split(new byte[0], {8}, true, 8) on the HBase 2.6.1 jar prints
    '' \x01 ... \x07 \x08 \x08: the inclusive interval (diff + 1) / (num + 1) = 1 reaches b."""
    assert split(b"", b"\x08", 8, inclusive=True) == [b""] + [bytes([i]) for i in range(1, 9)] + [b"\x08"]
