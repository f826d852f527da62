"""keyshape.core.splits against RegionSplitter / Admin.createTable (vectors from real hbase-server 2.6.4)."""

from __future__ import annotations

import json
import re

import pytest
from hbase_golden import golden, unhex
from hypothesis import given
from hypothesis import strategies as st

from keyshape.core.hbytes import int64, short, to_bytes_binary
from keyshape.core.splits import (
    bucket_splits,
    decimal_string_split,
    format_splits,
    hex_string_split,
    range_split,
    sample_splits,
    uniform_split,
    verify_split_keys,
)
from keyshape.errors import KeyshapeError


def test_unit_test_hex_string_split():
    """TestRegionSplitter.unitTestHexStringSplit."""
    assert hex_string_split(2) == [b"80000000"]
    assert hex_string_split(3) == [b"55555555", b"aaaaaaaa"]


def test_unit_test_decimal_string_split():
    """TestRegionSplitter.unitTestDecimalStringSplit."""
    assert decimal_string_split(2) == [b"50000000"]
    assert decimal_string_split(3) == [b"33333333", b"66666666"]


def test_unit_test_uniform_split():
    """TestRegionSplitter.unitTestUniformSplit."""
    assert uniform_split(2) == [b"\x80" + b"\x00" * 7]
    assert uniform_split(3) == [b"\x55" * 8, b"\xaa" * 8]
    with pytest.raises(ValueError):
        uniform_split(1)


def test_create_presplit_table_hex_and_uniform_16():
    """TestRegionSplitter.testCreatePresplitTableHex / testCreatePresplitTableUniform (16 regions)."""
    assert hex_string_split(16) == [f"{i:x}0000000".encode() for i in range(1, 16)]
    assert uniform_split(16) == [bytes([i << 4]) + b"\x00" * 7 for i in range(1, 16)]


@pytest.mark.parametrize(
    "algo,first,last,regions,fails",
    [
        ("hex", "00", "AA", 100, False),
        ("hex", "AA", "00", 100, True),
        ("hex", "AA", "AA", 100, True),
        ("hex", "0", "2", 3, False),
        ("hex", "0", "A", 11, False),
        ("hex", "0", "A", 12, True),
        ("uniform", "\\x00", "\\xAA", 100, False),
        ("uniform", "\\xAA", "\\x00", 100, True),
        ("uniform", "\\xAA", "\\xAA", 100, True),
        ("uniform", "\\x00", "\\x02", 3, False),
        ("uniform", "\\x00", "\\x0A", 11, False),
        ("uniform", "\\x00", "\\x0A", 12, False),
    ],
)
def test_user_input_preconditions(algo, first, last, regions, fails):
    """TestRegionSplitter.testUserInput."""
    if algo == "hex":
        call = lambda: hex_string_split(regions, first, last)  # noqa: E731
    else:
        call = lambda: uniform_split(regions, to_bytes_binary(first), to_bytes_binary(last))  # noqa: E731
    if fails:
        with pytest.raises(ValueError):
            call()
    else:
        assert len(call()) == regions - 1


def test_region_splitter_matches_hbase():
    """HexStringSplit / DecimalStringSplit / UniformSplit.split(n) for 187 configurations.

    HBase's number splits return [] for n == 1; keyshape refuses fewer than 2 regions instead.
    """
    fns = {"hex": hex_string_split, "decimal": decimal_string_split}
    for row in golden()["region_splitter"]:
        n = row["regions"]
        if row["algo"] == "uniform":
            kwargs = {}
            if row["first"] is not None:
                kwargs = {"first": to_bytes_binary(row["first"]), "last": to_bytes_binary(row["last"])}
            call = lambda: uniform_split(n, **kwargs)  # noqa: E731
        else:
            kwargs = {} if row["first"] is None else {"first": row["first"], "last": row["last"]}
            call = lambda: fns[row["algo"]](n, **kwargs)  # noqa: E731
        if "error" in row or n < 2:
            with pytest.raises(ValueError):
                call()
        else:
            assert call() == [unhex(k) for k in row["out"]], row


def test_number_split_error_messages_say_what_is_wrong():
    with pytest.raises(ValueError, match="last row"):
        hex_string_split(4, "AA", "00")
    with pytest.raises(ValueError, match="granularity"):
        decimal_string_split(20, "0", "9")
    with pytest.raises(ValueError, match="base-16"):
        hex_string_split(4, "00", "GG")
    with pytest.raises(ValueError, match="regions"):
        hex_string_split(1)


def test_range_split_matches_admin_create_table():
    """Admin.createTable(desc, start, end, n): the split keys of the real
    RawAsyncHBaseAdmin.getSplitKeys (an empty start is read as zero bytes), and where the real
    verifySplitKeys then refuses them, verify_split_keys refuses them too, quoting HBase."""
    for row in golden()["range_split"]:
        start, end = unhex(row["start"]), unhex(row["end"])
        if "error" in row:
            with pytest.raises(ValueError):
                range_split(start, end, row["regions"])
            continue
        keys = range_split(start, end, row["regions"])
        assert keys == [unhex(k) for k in row["out"]], row
        if "create_error" in row:
            with pytest.raises(KeyshapeError, match=re.escape(row["create_error"])):
                verify_split_keys(keys)
        else:
            assert verify_split_keys(keys) == sorted(keys)


def test_range_split_short_prefix_table():
    """A table pre-split over the 2-byte prefixes 0x0000..0x7FFF of ``hashCode & 0x7FFF``."""
    keys = range_split(short(0), short(0x7FFF), 5)
    assert keys == [b"\x00\x00", b"\x2a\xaa", b"\x55\x54", b"\x7f\xff"]


def test_range_split_with_empty_start_is_computed_then_refused_at_create():
    keys = range_split(b"", b"\x10", 4)
    assert keys == [b"", b"\x08", b"\x10"]
    with pytest.raises(KeyshapeError, match="Empty split key must not be passed"):
        verify_split_keys(keys)
    with pytest.raises(KeyshapeError, match="Empty split key"):
        format_splits(keys, "file")


def test_bucket_splits_byte_is_phoenix_split_points():
    """SaltingUtil.getSalteByteSplitPoints: {1}..{n-1}."""
    assert bucket_splits(4) == [b"\x01", b"\x02", b"\x03"]
    assert len(bucket_splits(256)) == 255
    assert bucket_splits(3, width=2) == [b"\x00\x01", b"\x00\x02"]
    with pytest.raises(ValueError):
        bucket_splits(257)


def test_bucket_splits_decimal_and_long():
    assert bucket_splits(16, "decimal") == [f"{i:02d}".encode() for i in range(1, 16)]
    assert bucket_splits(3, "decimal", width=4) == [b"0001", b"0002"]
    assert bucket_splits(3, "long") == [b"\x00" * 7 + b"\x01", b"\x00" * 7 + b"\x02"]
    assert bucket_splits(3, "long") == [int64(1), int64(2)]
    with pytest.raises(ValueError):
        bucket_splits(200, "decimal", width=2)
    with pytest.raises(ValueError):
        bucket_splits(3, "nope")
    with pytest.raises(ValueError):
        bucket_splits(1)


def test_sample_splits_equal_count_quantiles():
    keys = [b"%03d" % i for i in range(100)]
    assert sample_splits(reversed(keys), 4) == [b"025", b"050", b"075"]


def test_sample_splits_dedups_and_drops_empty():
    assert sample_splits([b"a"] * 10 + [b"b"], 4) == [b"a"]
    assert sample_splits([b""] * 5 + [b"x"] * 5, 2) == [b"x"]
    with pytest.raises(ValueError):
        sample_splits([], 3)


@given(st.lists(st.binary(max_size=5), min_size=1, max_size=200), st.integers(2, 50))
def test_sample_splits_strictly_increasing_non_empty(keys, regions):
    out = sample_splits(keys, regions)
    assert all(out) and len(out) <= regions - 1
    assert all(x < y for x, y in zip(out, out[1:]))


@given(st.integers(2, 300))
def test_calculators_strictly_increasing(regions):
    for keys in (hex_string_split(regions), decimal_string_split(regions), uniform_split(regions)):
        assert len(keys) == regions - 1
        assert all(x < y for x, y in zip(keys, keys[1:]))


def test_format_shell_uses_strings_the_shell_decodes_with_to_bytes_binary():
    out = format_splits([b"\x01", b"a'b", b"\xff#{x}"], "shell", table="ns:t", family="cf")
    assert out == "create 'ns:t', 'cf', SPLITS => ['\\x01', 'a\\x27b', '\\xFF#{x}']\n"


def test_format_file_one_key_per_line_round_trips():
    keys = [b"\x00\x01", b" lead", b"trail ", b"a\\b"]
    text = format_splits(keys, "file")
    lines = text.splitlines()
    assert lines == ["\\x00\\x01", "\\x20lead", "trail\\x20", "a\\x5Cb"]
    assert [to_bytes_binary(line.strip()) for line in lines] == keys


def test_format_json():
    doc = json.loads(format_splits([b"\x01", b"ab"], "json", table="t1", family="f1"))
    assert doc == {"table": "t1", "family": "f1", "splits": ["\\x01", "ab"], "splits_hex": ["01", "6162"]}


def test_format_errors():
    with pytest.raises(ValueError, match="format"):
        format_splits([b"a"], "xml")
    with pytest.raises(ValueError, match="empty"):
        format_splits([b""], "file")
