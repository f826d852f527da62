"""keyshape.core.ordered against HBase OrderedBytes (hbase-common, util/OrderedBytes.java).

Exact byte vectors come from TestOrderedBytes where it has them (testBlobCopyNoZeroBytes), from the
OrderedBytes javadoc, or are worked out by hand from the OrderedBytes source (header constants
FIXED_INT32 = 0x2b, FIXED_INT64 = 0x2c, FIXED_FLOAT32 = 0x30, FIXED_FLOAT64 = 0x31, TEXT = 0x34,
BLOB_VAR = 0x37, BLOB_COPY = 0x38, NULL = 0x05; Order.DESCENDING = every byte XOR 0xff).
The value lists, lengths and sort checks mirror TestOrderedBytes' testInt8..testBlobCopy.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hbase_golden import golden
from keyshape.core import ordered as o

ORDERS = [False, True]
MAX_LONG = 2**63 - 1
MIN_LONG = -(2**63)


def h(s: str) -> bytes:
    return bytes.fromhex(s.replace(" ", ""))


def inv(b: bytes) -> bytes:
    return bytes(x ^ 0xFF for x in b)


# ----------------------------------------------------------------------- exact vectors, ascending


@pytest.mark.parametrize(
    "fn, value, expected",
    [
        # OrderedBytes.encodeInt64 javadoc: "Input 5 -> 0x..8000000000000005" and
        # "Long.MAX_VALUE -> 0x..ffffffffffffffff" (the javadoc still shows the pre-release header
        # 0x28; the code writes FIXED_INT64 = 0x2c).
        (o.encode_int64, 5, "2c 8000000000000005"),
        (o.encode_int64, MAX_LONG, "2c ffffffffffffffff"),
        # Worked out from encodeInt64: sign bit of the two's complement flipped, big-endian.
        (o.encode_int64, MIN_LONG, "2c 0000000000000000"),
        (o.encode_int64, -5, "2c 7ffffffffffffffb"),
        (o.encode_int64, 0, "2c 8000000000000000"),
        (o.encode_int32, 0, "2b 80000000"),
        (o.encode_int32, -1, "2b 7fffffff"),
        (o.encode_int32, 2**31 - 1, "2b ffffffff"),
        (o.encode_int32, -(2**31), "2b 00000000"),
        (o.encode_int32, 100, "2b 80000064"),
        (o.encode_int16, 100, "2a 8064"),
        (o.encode_int16, -32768, "2a 0000"),
        (o.encode_int8, 100, "29 e4"),
        (o.encode_int8, -128, "29 00"),
        # encodeFloat64: l ^= (l >> 63) | Long.MIN_VALUE on doubleToLongBits.
        (o.encode_float64, 1.0, "31 bff0000000000000"),
        (o.encode_float64, -1.0, "31 400fffffffffffff"),
        (o.encode_float64, 0.0, "31 8000000000000000"),
        (o.encode_float64, -0.0, "31 7fffffffffffffff"),
        (o.encode_float64, math.inf, "31 fff0000000000000"),
        (o.encode_float64, -math.inf, "31 000fffffffffffff"),
        (o.encode_float64, 100.0, "31 c059000000000000"),
        # doubleToLongBits collapses every NaN to 0x7ff8000000000000.
        (o.encode_float64, math.nan, "31 fff8000000000000"),
        (o.encode_float32, 1.0, "30 bf800000"),
        (o.encode_float32, 100.0, "30 c2c80000"),
        (o.encode_float32, math.nan, "30 ffc00000"),
        # encodeString: TEXT, UTF-8, TERM.
        (o.encode_string, "foo", "34 666f6f 00"),
        (o.encode_string, "", "34 00"),
        (o.encode_string, "é", "34 c3a9 00"),
        (o.encode_string, None, "05"),
        # encodeBlobVar: 7-bit groups, continuation bit 0x80 on all but the last.
        (o.encode_blob_var, b"foo", "37 b39bed70"),
        (o.encode_blob_var, b"", "37 00"),
        # javadoc: "[] ... is not ambiguous with the encoded value of [0x00], [0x80, 0x00]"
        (o.encode_blob_var, b"\x00", "37 8000"),
        (o.encode_blob_var, b"\xff", "37 ff40"),
        # 7 bytes 0xaa = 8 full groups, the HBASE-9893 case of testBlobVar.
        (o.encode_blob_var, b"\xaa" * 7, "37 d5aad5aad5aad52a"),
        (o.encode_blob_var, None, "05"),
        # TestOrderedBytes.testBlobCopyNoZeroBytes: ascExpected = {0x38, 0x01, 0x02, 0x00, 0x03}.
        (o.encode_blob_copy, b"\x01\x02\x00\x03", "38 01020003"),
        (o.encode_blob_copy, b"foo", "38 666f6f"),
        (o.encode_blob_copy, b"", "38"),
        (o.encode_blob_copy, None, "05"),
    ],
)
def test_exact_bytes_ascending_match_orderedbytes(fn, value, expected):
    assert fn(value) == h(expected)


@pytest.mark.parametrize(
    "fn, value, expected",
    [
        (o.encode_int32, 0, "d4 7fffffff"),
        (o.encode_int64, 5, "d3 7ffffffffffffffa"),
        (o.encode_float64, 1.0, "ce 400fffffffffffff"),
        (o.encode_string, "foo", "cb 999090 ff"),
        (o.encode_string, "", "cb ff"),
        (o.encode_blob_var, b"foo", "c8 4c64128f"),
        (o.encode_blob_var, b"", "c8 ff"),
        # encodeBlobCopy DESCENDING appends TERM before inverting.
        (o.encode_blob_copy, b"foo", "c7 999090 ff"),
        (o.encode_blob_copy, b"", "c7 ff"),
        # encodeBlobCopy(null, DESCENDING) writes NULL then TERM, both inverted.
        (o.encode_blob_copy, None, "fa ff"),
        (o.encode_string, None, "fa"),
    ],
)
def test_exact_bytes_descending_match_orderedbytes(fn, value, expected):
    assert fn(value, descending=True) == h(expected)


def test_null_is_0x05_and_sorts_first():
    """OrderedBytes.encodeNull: NULL = 0x05, below every other header."""
    assert o.encode_null() == b"\x05"
    assert o.encode_null(descending=True) == b"\xfa"
    for enc in (
        o.encode_int8(-128),
        o.encode_int64(MIN_LONG),
        o.encode_float64(-math.inf),
        o.encode_string(""),
        o.encode_blob_var(b""),
        o.encode_blob_copy(b""),
    ):
        assert o.encode_null() < enc
    assert o.decode(b"\x05rest") == (None, b"rest")


@pytest.mark.parametrize("descending", ORDERS)
@pytest.mark.parametrize(
    "fn, value",
    [
        (o.encode_int8, 7),
        (o.encode_int16, 7),
        (o.encode_int32, -7),
        (o.encode_int64, 7),
        (o.encode_float32, 1.5),
        (o.encode_float64, -2.5),
        (o.encode_string, "héllo ✓"),
        (o.encode_blob_var, b"\x00\x01\xfe"),
        (o.encode_blob_copy, b"\x01\xfe"),
    ],
)
def test_descending_is_every_byte_inverted(fn, value, descending):
    """Order.DESCENDING.apply: each byte XOR 0xff, header included (BlobCopy also gains TERM)."""
    asc, desc = fn(value), fn(value, descending=True)
    if fn is o.encode_blob_copy:
        asc += b"\x00"
    assert desc == inv(asc)
    assert desc[0] >= 0x80 > asc[0]


# --------------------------------------------------------- TestOrderedBytes value lists & lengths


INT_CASES = [
    (o.encode_int8, 2, [-128, -128 // 2, 0, 127 // 2, 127]),
    (o.encode_int16, 3, [-32768, -32768 // 2, 0, 32767 // 2, 32767]),
    (o.encode_int32, 5, [-(2**31), -(2**31) // 2, 0, (2**31 - 1) // 2, 2**31 - 1]),
    (o.encode_int64, 9, [MIN_LONG, MIN_LONG // 2, 0, MAX_LONG // 2, MAX_LONG]),
]


@pytest.mark.parametrize("descending", ORDERS)
@pytest.mark.parametrize("fn, length, vals", INT_CASES)
def test_fixed_ints_like_testorderedbytes(fn, length, vals, descending):
    """TestOrderedBytes.testInt8/16/32/64: length, round trip, natural order preserved."""
    encoded = [fn(v, descending) for v in vals]
    assert all(len(e) == length for e in encoded)
    assert [o.decode(e) for e in encoded] == [(v, b"") for v in vals]
    assert [o.decode(e)[0] for e in sorted(encoded)] == sorted(vals, reverse=descending)


FLOAT64_VALS = [5e-324, 5e-324 + 1.0, 0.0, 1.7976931348623157e308 / 2.0, 1.7976931348623157e308]
FLOAT32_MIN = struct.unpack(">f", b"\x00\x00\x00\x01")[0]
FLOAT32_MAX = struct.unpack(">f", b"\x7f\x7f\xff\xff")[0]
FLOAT32_VALS = [FLOAT32_MIN, 1.0, 0.0, FLOAT32_MAX / 2.0, FLOAT32_MAX]


@pytest.mark.parametrize("descending", ORDERS)
@pytest.mark.parametrize("fn, length, vals", [(o.encode_float32, 5, FLOAT32_VALS), (o.encode_float64, 9, FLOAT64_VALS)])
def test_fixed_floats_like_testorderedbytes(fn, length, vals, descending):
    """TestOrderedBytes.testFloat32/testFloat64: length, bit-exact round trip, order preserved."""
    encoded = [fn(v, descending) for v in vals]
    assert all(len(e) == length for e in encoded)
    assert [o.decode(e) for e in encoded] == [(v, b"") for v in vals]
    assert [o.decode(e)[0] for e in sorted(encoded)] == sorted(vals, reverse=descending)


@pytest.mark.parametrize("descending", ORDERS)
def test_string_like_testorderedbytes(descending):
    """TestOrderedBytes.testString: "foo", "baaaar", "bazz" encode to 5, 8, 6 bytes and sort."""
    vals = ["foo", "baaaar", "bazz"]
    encoded = [o.encode_string(v, descending) for v in vals]
    assert [len(e) for e in encoded] == [5, 8, 6]
    assert [o.decode(e) for e in encoded] == [(v, b"") for v in vals]
    assert [o.decode(e)[0] for e in sorted(encoded)] == sorted(vals, reverse=descending)


def test_string_rejects_nul_like_testorderedbytes():
    """TestOrderedBytes.testStringNoNullChars: "\\u0000" is refused."""
    with pytest.raises(ValueError, match="U\\+0000"):
        o.encode_string("\x00")
    with pytest.raises(ValueError, match="U\\+0000"):
        o.encode_string("a\x00b", descending=True)


def test_string_rejects_lone_surrogate():
    with pytest.raises(ValueError, match="not valid Unicode"):
        o.encode_string("\ud800")


BLOB_VALS = [
    b"",
    b"foo",
    b"foobarbazbub",
    b"\xaa" * 7,
    b"\xaa" * 12,
    b"\xaa" * 14,
    b"\x55" * 7,
    b"\x55" * 12,
    b"\x55" * 14,
    b"1",
    b"22",
    b"333",
    b"4444",
    b"55555",
    b"666666",
    b"7777777",
    b"88888888",
]


@pytest.mark.parametrize("descending", ORDERS)
def test_blob_var_like_testorderedbytes(descending):
    """TestOrderedBytes.testBlobVar (HBASE-9893 values) and testBlobVarLencodedLength."""
    encoded = [o.encode_blob_var(v, descending) for v in BLOB_VALS]
    for v, e in zip(BLOB_VALS, encoded):
        expected_len = 2 if not v else math.ceil(len(v) * 8 / 7) + 1  # blobVarEncodedLength
        assert len(e) == expected_len
        assert o.decode(e) == (v, b"")
    assert [o.decode(e)[0] for e in sorted(encoded)] == sorted(BLOB_VALS, reverse=descending)
    lengths = {1: 3, 2: 4, 3: 5, 4: 6, 5: 7, 6: 8, 7: 9, 8: 11}
    assert {n: len(o.encode_blob_var(b"x" * n)) for n in lengths} == lengths


@pytest.mark.parametrize("descending", ORDERS)
def test_blob_copy_like_testorderedbytes(descending):
    """TestOrderedBytes.testBlobCopy: length + 1 (asc) or + 2 (desc), round trip, order."""
    vals = [b"", b"foo", b"foobarbazbub", b"\xaa" * 12, b"\x55" * 12]
    encoded = [o.encode_blob_copy(v, descending) for v in vals]
    assert [len(e) for e in encoded] == [len(v) + (2 if descending else 1) for v in vals]
    assert [o.decode(e) for e in encoded] == [(v, b"") for v in vals]
    assert [o.decode(e)[0] for e in sorted(encoded)] == sorted(vals, reverse=descending)


def test_blob_copy_descending_rejects_zero_like_testorderedbytes():
    """TestOrderedBytes.testBlobCopyNoZeroBytes: 0x00 is fine ascending, refused descending."""
    assert o.encode_blob_copy(b"\x01\x02\x00\x03") == h("3801020003")
    with pytest.raises(ValueError, match="0x00"):
        o.encode_blob_copy(b"\x01\x02\x00\x03", descending=True)


def test_blob_copy_ascending_runs_to_end_of_buffer():
    """OrderedBytes.decodeBlobCopy/skip: ascending BlobCopy takes every remaining byte."""
    assert o.decode(o.encode_blob_copy(b"ab") + b"\x2b\x80") == (b"ab\x2b\x80", b"")


def test_blob_copy_descending_stops_at_terminator_like_skip():
    """OrderedBytes.skip: descending BlobCopy is read up to its (inverted) TERM; its NULL is read
    as the one byte fa, leaving the ff terminator, as HBase's skip and decodeBlobCopy do."""
    key = o.encode_blob_copy(b"ab", True) + o.encode_int32(1)
    assert o.decode(key) == (b"ab", o.encode_int32(1))
    key = o.encode_blob_copy(None, True) + o.encode_int32(1)
    assert o.decode(key) == (None, b"\xff" + o.encode_int32(1))


# ------------------------------------------------ golden: OrderedBytes itself (hbase-common 2.6.4)

_ENCODERS = {
    "null": lambda v, d: o.encode_null(d),
    "int8": o.encode_int8,
    "int16": o.encode_int16,
    "int32": o.encode_int32,
    "int64": o.encode_int64,
    "float32": o.encode_float32,
    "float64": o.encode_float64,
    "string": o.encode_string,
    "blob_var": o.encode_blob_var,
    "blob_copy": o.encode_blob_copy,
}


def _golden_value(row):
    v = row["value"]
    if v is None or row["type"] in ("string",) or row["type"].startswith("int"):
        return v
    if row["type"].startswith("blob"):
        return bytes.fromhex(v)
    return float(v)  # "nan", "inf", "-inf", "-0.0" or a number


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


@pytest.mark.parametrize("row", golden()["ordered"], ids=lambda r: f"{r['type']}-{r['value']}-{r['descending']}")
def test_encoding_equals_orderedbytes_and_decodes_back(row):
    value = _golden_value(row)
    encoded = _ENCODERS[row["type"]](value, row["descending"])
    assert encoded.hex() == row["bytes"]
    decoded, rest = o.decode(encoded)
    assert _same(decoded, value)
    # A descending NULL BlobCopy (fa ff): HBase's decoders leave the ff (see the skip vectors).
    assert rest == (b"\xff" if row["type"] == "blob_copy" and value is None and row["descending"] else b"")


@pytest.mark.parametrize("row", golden()["ordered_skip"], ids=lambda r: r["bytes"])
def test_decode_consumes_what_orderedbytes_skip_consumes(row):
    """Where the next field of a composite key starts: a descending NULL (fa) followed by ff is one
    byte, as OrderedBytes.skip and decodeBlobCopy read it, not two."""
    raw = bytes.fromhex(row["bytes"])
    _, rest = o.decode(raw)
    assert len(raw) - len(rest) == row["skip"]
    if "decode_blob_copy_consumed" in row:
        assert len(raw) - len(o.decode_blob_copy(raw)[1]) == row["decode_blob_copy_consumed"]


def test_compound_key_decodes_field_by_field():
    key = (
        o.encode_string("user42")
        + o.encode_int64(1_700_000_000_000, descending=True)
        + o.encode_float64(-0.0)
        + o.encode_null(descending=True)
        + o.encode_blob_var(b"\x00\xff")
        + o.encode_blob_copy(b"tail\x00")
    )
    fields = []
    while key:
        value, key = o.decode(key)
        fields.append(value)
    assert fields == ["user42", 1_700_000_000_000, -0.0, None, b"\x00\xff", b"tail\x00"]
    assert math.copysign(1.0, fields[2]) == -1.0


# --------------------------------------------------------------------------- floats: NaN and -0.0


@pytest.mark.parametrize("descending", ORDERS)
def test_float_total_order_matches_orderedbytes_javadoc(descending):
    """encodeFloat64 javadoc order: -inf < -MAX < -MIN < -0.0 < +0.0 < MIN < MAX < +inf < NaN."""
    vals = [-math.inf, -1.7976931348623157e308, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1.0, 1.7976931348623157e308, math.inf, math.nan]
    encoded = [o.encode_float64(v, descending) for v in vals]
    assert encoded == sorted(encoded, reverse=descending)
    assert len(set(encoded)) == len(vals)


def test_every_nan_encodes_like_java_canonical_nan():
    """Double.doubleToLongBits collapses NaNs: payload and sign bits do not reach the key."""
    odd_nans = [struct.unpack(">d", h(x))[0] for x in ("fff8000000000000", "7ff0000000000001", "7fffffffffffffff")]
    for n in odd_nans:
        assert math.isnan(n)
        assert o.encode_float64(n) == o.encode_float64(math.nan)
    odd32 = struct.unpack(">f", h("ffc00001"))[0]
    assert o.encode_float32(odd32) == h("30 ffc00000")
    value, rest = o.decode(o.encode_float64(math.nan, descending=True))
    assert math.isnan(value) and rest == b""


def test_negative_zero_survives_round_trip():
    value, _ = o.decode(o.encode_float64(-0.0))
    assert value == 0.0 and math.copysign(1.0, value) == -1.0
    value, _ = o.decode(o.encode_float32(-0.0, descending=True))
    assert value == 0.0 and math.copysign(1.0, value) == -1.0


def test_float32_rounds_and_rejects_overflow():
    assert o.decode(o.encode_float32(0.1))[0] == struct.unpack(">f", struct.pack(">f", 0.1))[0]
    assert o.encode_float32(math.inf) == h("30 ff800000")
    with pytest.raises(ValueError, match="32-bit float"):
        o.encode_float32(1e39)


# ------------------------------------------------------------------------- hypothesis: properties

INT_RANGES = {
    o.encode_int8: (-(2**7), 2**7 - 1),
    o.encode_int16: (-(2**15), 2**15 - 1),
    o.encode_int32: (-(2**31), 2**31 - 1),
    o.encode_int64: (MIN_LONG, MAX_LONG),
}
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
NONZERO_BYTES = st.binary().filter(lambda b: b"\x00" not in b)


def cmp(a, b) -> int:
    return (a > b) - (a < b)


def float_key(x: float) -> tuple:
    """The OrderedBytes total order: -0.0 below +0.0, NaN above everything.

    Every NaN (any sign or payload) is one value: Java's doubleToLongBits canonicalises NaN, so
    OrderedBytes writes the same bytes for all of them.
    """
    if math.isnan(x):
        return (True, 0.0, 0.0)
    return (False, x, math.copysign(1.0, x))


def same_float(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or struct.pack(">d", a) == struct.pack(">d", b)


@pytest.mark.parametrize("fn", list(INT_RANGES))
@given(data=st.data(), descending=st.booleans(), suffix=st.binary(max_size=5))
def test_ints_round_trip_and_keep_order(fn, data, descending, suffix):
    lo, hi = INT_RANGES[fn]
    x = data.draw(st.integers(lo, hi))
    y = data.draw(st.integers(lo, hi))
    ex, ey = fn(x, descending), fn(y, descending)
    assert o.decode(ex) == (x, b"")
    assert o.decode(ex + suffix) == (x, suffix)
    sign = -1 if descending else 1
    assert cmp(ex, ey) == sign * cmp(x, y)


@pytest.mark.parametrize("fn", list(INT_RANGES))
@given(data=st.data())
def test_ints_out_of_range_raise(fn, data):
    lo, hi = INT_RANGES[fn]
    bad = data.draw(st.one_of(st.integers(max_value=lo - 1), st.integers(min_value=hi + 1)))
    with pytest.raises(ValueError, match="outside"):
        fn(bad)


@given(x=st.floats(), y=st.floats(), descending=st.booleans(), suffix=st.binary(max_size=5))
def test_float64_round_trip_and_total_order(x, y, descending, suffix):
    ex, ey = o.encode_float64(x, descending), o.encode_float64(y, descending)
    value, rest = o.decode(ex + suffix)
    assert same_float(value, x) and rest == suffix
    sign = -1 if descending else 1
    assert cmp(ex, ey) == sign * cmp(float_key(x), float_key(y))


@given(x=st.floats(width=32), y=st.floats(width=32), descending=st.booleans(), suffix=st.binary(max_size=5))
def test_float32_round_trip_and_total_order(x, y, descending, suffix):
    ex, ey = o.encode_float32(x, descending), o.encode_float32(y, descending)
    value, rest = o.decode(ex + suffix)
    assert same_float(value, x) and rest == suffix
    sign = -1 if descending else 1
    assert cmp(ex, ey) == sign * cmp(float_key(x), float_key(y))


@given(x=TEXT, y=TEXT, descending=st.booleans(), suffix=st.binary(max_size=5))
def test_string_round_trip_and_order(x, y, descending, suffix):
    ex, ey = o.encode_string(x, descending), o.encode_string(y, descending)
    assert o.decode(ex) == (x, b"")
    assert o.decode(ex + suffix) == (x, suffix)
    sign = -1 if descending else 1
    assert cmp(ex, ey) == sign * cmp(x, y)


@given(x=st.binary(), y=st.binary(), descending=st.booleans(), suffix=st.binary(max_size=5))
def test_blob_var_round_trip_and_order_among_equal_lengths(x, y, descending, suffix):
    ex, ey = o.encode_blob_var(x, descending), o.encode_blob_var(y, descending)
    assert o.decode(ex) == (x, b"")
    assert o.decode(ex + suffix) == (x, suffix)
    if len(x) == len(y):  # see test_blob_var_is_not_ordered_across_lengths_like_hbase
        sign = -1 if descending else 1
        assert cmp(ex, ey) == sign * cmp(x, y)


@given(data=st.data(), n=st.integers(0, 30), descending=st.booleans())
def test_blob_var_keeps_order_for_equal_length_values(data, n, descending):
    x = data.draw(st.binary(min_size=n, max_size=n))
    y = data.draw(st.binary(min_size=n, max_size=n))
    sign = -1 if descending else 1
    assert cmp(o.encode_blob_var(x, descending), o.encode_blob_var(y, descending)) == sign * cmp(x, y)


def test_blob_var_is_not_ordered_across_lengths_like_hbase():
    """HBase 2.6.1 OrderedBytes.encodeBlobVar (run on the real jar) writes b"o" as 37 b7 40 and
    b"n\x00" as 37 b7 80 00: the last group's clear top bit sorts before a continuation byte, so
    b"o" sorts first although b"n\x00" < b"o". keyshape matches HBase byte for byte rather than
    "fixing" the order, and documents that BlobVar sorts exactly only among equal-length values."""
    assert o.encode_blob_var(b"o") == h("37b740")
    assert o.encode_blob_var(b"n\x00") == h("37b78000")
    assert (o.encode_blob_var(b"o") < o.encode_blob_var(b"n\x00")) and b"n\x00" < b"o"


@given(x=st.binary(), y=st.binary())
def test_blob_copy_ascending_round_trip_and_order(x, y):
    ex, ey = o.encode_blob_copy(x), o.encode_blob_copy(y)
    assert o.decode(ex) == (x, b"")
    assert cmp(ex, ey) == cmp(x, y)


@given(x=NONZERO_BYTES, y=NONZERO_BYTES, suffix=st.binary(max_size=5))
def test_blob_copy_descending_round_trip_and_order(x, y, suffix):
    ex, ey = o.encode_blob_copy(x, True), o.encode_blob_copy(y, True)
    assert o.decode(ex) == (x, b"")
    assert o.decode(ex + suffix) == (x, suffix)
    assert cmp(ex, ey) == -cmp(x, y)


@given(a=TEXT, b=st.integers(MIN_LONG, MAX_LONG), c=TEXT, d=st.integers(MIN_LONG, MAX_LONG))
def test_compound_keys_sort_like_tuples(a, b, c, d):
    """Concatenated fields sort like (field1, field2) tuples: the point of OrderedBytes."""
    k1 = o.encode_string(a) + o.encode_int64(b, descending=True)
    k2 = o.encode_string(c) + o.encode_int64(d, descending=True)
    assert cmp(k1, k2) == cmp((a, -b), (c, -d))


# --------------------------------------------------------------------------------- typed decoders


@pytest.mark.parametrize("descending", ORDERS)
@pytest.mark.parametrize(
    "decoder, fn, value",
    [
        (o.decode_int8, o.encode_int8, 1),
        (o.decode_int16, o.encode_int16, 1),
        (o.decode_int32, o.encode_int32, 1),
        (o.decode_int64, o.encode_int64, 1),
        (o.decode_float32, o.encode_float32, 1.0),
        (o.decode_float64, o.encode_float64, 1.0),
        (o.decode_string, o.encode_string, "1"),
        (o.decode_blob_var, o.encode_blob_var, b"1"),
        (o.decode_blob_copy, o.encode_blob_copy, b"1"),
    ],
)
def test_typed_decoders_accept_own_type_and_null_only(decoder, fn, value, descending):
    assert decoder(fn(value, descending)) == (value, b"")
    assert decoder(o.encode_null(descending)) == (None, b"")
    other = o.encode_int32(1) if decoder is not o.decode_int32 else o.encode_int64(1)
    with pytest.raises(ValueError, match="header byte"):
        decoder(other)


# -------------------------------------------------------------------------------- malformed input


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"", "empty"),
        (b"\x00", "not an OrderedBytes header"),
        (b"\xff", "not an OrderedBytes header"),
        (b"\x15", "Numeric"),  # OrderedBytes ZERO
        (b"\xea", "Numeric"),  # descending ZERO
        (h("2b 8000"), "needs 5 bytes"),
        (h("d3 00"), "needs 9 bytes"),
        (h("34 666f6f"), "terminator"),
        (h("cb 9990"), "terminator"),
        (h("34 ff00"), "UTF-8"),
        (h("37"), "truncated"),
        (h("37 b39b"), "final byte"),
        (h("37 41"), "groups"),  # one group cannot hold a whole byte
        (h("37 ff41"), "padding"),  # b"\xff" is 37 ff 40; a set pad bit is corrupt
        (h("c7 9990"), "terminator"),
    ],
)
def test_malformed_input_raises_clear_valueerror(raw, message):
    with pytest.raises(ValueError, match=message):
        o.decode(raw)


@pytest.mark.parametrize(
    "call",
    [
        lambda: o.encode_int32(1.5),
        lambda: o.encode_int64("1"),
        lambda: o.encode_float64("x"),
        lambda: o.encode_string(b"bytes"),
        lambda: o.encode_blob_var("text"),
        lambda: o.encode_blob_copy(123),
        lambda: o.encode_int64(None),
        lambda: o.decode("not bytes"),
    ],
)
def test_wrong_types_raise_valueerror(call):
    with pytest.raises(ValueError):
        call()


# ----------------------------------------------------------------------------- reverse timestamps


def test_reverse_timestamp_is_long_max_minus_ms():
    """Bytes.toBytes(Long.MAX_VALUE - ms): 8 big-endian bytes."""
    assert o.reverse_timestamp(0) == h("7fffffffffffffff")
    assert o.reverse_timestamp(MAX_LONG) == h("0000000000000000")
    ts = 1_700_000_000_000
    assert o.reverse_timestamp(ts) == (MAX_LONG - ts).to_bytes(8, "big")
    assert o.reverse_timestamp_text(0) == b"9223372036854775807"
    assert o.reverse_timestamp_text(MAX_LONG) == b"0" * 19
    assert o.reverse_timestamp_text(5) == b"9223372036854775802"
    for bad in (-1, MAX_LONG + 1):
        with pytest.raises(ValueError, match="outside"):
            o.reverse_timestamp(bad)
        with pytest.raises(ValueError, match="outside"):
            o.reverse_timestamp_text(bad)


def test_reverse_timestamp_matches_hbytes_int64_when_present():
    hbytes = pytest.importorskip("keyshape.core.hbytes")
    for ms in (0, 1, 1_700_000_000_000, MAX_LONG):
        assert o.reverse_timestamp(ms) == hbytes.int64(MAX_LONG - ms)


@given(a=st.integers(0, MAX_LONG), b=st.integers(0, MAX_LONG))
def test_reverse_timestamps_sort_newest_first(a, b):
    assert cmp(o.reverse_timestamp(a), o.reverse_timestamp(b)) == -cmp(a, b)
    assert cmp(o.reverse_timestamp_text(a), o.reverse_timestamp_text(b)) == -cmp(a, b)
    assert len(o.reverse_timestamp_text(a)) == 19


# ------------------------------------------------------------------------------- vectorized forms


@given(values=st.lists(st.integers(MIN_LONG, MAX_LONG), max_size=30), descending=st.booleans())
def test_encode_int64_many_matches_scalar(values, descending):
    rows = o.encode_int64_many(np.array(values, dtype=np.int64), descending)
    assert rows.dtype == np.dtype("S9")
    assert o.rows_to_bytes(rows) == [o.encode_int64(v, descending) for v in values]


@given(values=st.lists(st.integers(-(2**31), 2**31 - 1), max_size=30), descending=st.booleans())
def test_encode_int32_many_matches_scalar(values, descending):
    rows = o.encode_int32_many(np.array(values, dtype=np.int64), descending)
    assert rows.dtype == np.dtype("S5")
    assert o.rows_to_bytes(rows) == [o.encode_int32(v, descending) for v in values]


@given(values=st.lists(st.floats(), max_size=30), descending=st.booleans())
def test_encode_float64_many_matches_scalar(values, descending):
    rows = o.encode_float64_many(np.array(values, dtype=np.float64), descending)
    assert o.rows_to_bytes(rows) == [o.encode_float64(v, descending) for v in values]


@given(values=st.lists(st.integers(0, MAX_LONG), max_size=30))
def test_reverse_timestamp_many_matches_scalar(values):
    rows = o.reverse_timestamp_many(np.array(values, dtype=np.int64))
    assert o.rows_to_bytes(rows) == [o.reverse_timestamp(v) for v in values]


def test_rows_to_bytes_keeps_trailing_zero_bytes():
    """numpy 'S' indexing strips trailing NULs; rows_to_bytes must not."""
    rows = o.encode_int64_many(np.array([0], dtype=np.int64))
    assert rows[0] == b",\x80"  # the numpy pitfall the helper exists for
    assert o.rows_to_bytes(rows) == [h("2c 8000000000000000")]


def test_many_forms_reject_bad_input():
    with pytest.raises(ValueError, match="integer array"):
        o.encode_int64_many(np.array([1.5]))
    with pytest.raises(ValueError, match="outside"):
        o.encode_int32_many(np.array([2**31], dtype=np.int64))
    with pytest.raises(ValueError, match="outside"):
        o.encode_int64_many(np.array([2**63], dtype=np.uint64))
    with pytest.raises(ValueError, match="non-negative"):
        o.reverse_timestamp_many(np.array([-1], dtype=np.int64))
    with pytest.raises(ValueError, match="numbers"):
        o.encode_float64_many(np.array(["a"]))
    assert o.rows_to_bytes(o.encode_int64_many(np.array([], dtype=np.int64))) == []
