"""Order-preserving field encodings, byte-compatible with HBase ``OrderedBytes``.

Every encoding starts with one header byte that names the type; comparing two encodings of the same
type as unsigned bytes (``bytes`` ``<`` in Python, ``Bytes.BYTES_COMPARATOR`` in HBase) gives the
same answer as comparing the values. The header bytes are those of HBase's
``org.apache.hadoop.hbase.util.OrderedBytes`` (HBase 0.96 and later; an unreleased early draft used
other numbers, and the class's own summary table still shows them, but the constants in the code
are these)::

    NULL 0x05   FIXED_INT8 0x29   FIXED_INT16 0x2a   FIXED_INT32 0x2b   FIXED_INT64 0x2c
    FIXED_FLOAT32 0x30   FIXED_FLOAT64 0x31   TEXT 0x34   BLOB_VAR 0x37   BLOB_COPY 0x38

``descending=True`` is HBase's ``Order.DESCENDING``: the finished ascending encoding, header
included, with every byte XOR 0xFF, so the values sort in reverse. Because every ascending header is
below 0x80 and every descending header is above it, :func:`decode` reads the direction from the
header byte alone, as HBase does.

Not supported: OrderedBytes' variable-length Numeric encoding (headers 0x07..0x26), which HBase
builds from ``BigDecimal``; :func:`decode` rejects those headers with a clear message.
"""

from __future__ import annotations

import math
import operator
import struct
from typing import Any

import numpy as np

from keyshape.core.hbytes import MAX_LONG, int64
from keyshape.errors import KeyshapeError

__all__ = [
    "decode",
    "decode_blob_copy",
    "decode_blob_var",
    "decode_float32",
    "decode_float64",
    "decode_int8",
    "decode_int16",
    "decode_int32",
    "decode_int64",
    "decode_string",
    "encode_blob_copy",
    "encode_blob_var",
    "encode_float32",
    "encode_float64",
    "encode_float64_many",
    "encode_int8",
    "encode_int16",
    "encode_int32",
    "encode_int32_many",
    "encode_int64",
    "encode_int64_many",
    "encode_null",
    "encode_string",
    "reverse_timestamp",
    "reverse_timestamp_many",
    "reverse_timestamp_text",
    "rows_to_bytes",
]

NULL = 0x05
FIXED_INT8 = 0x29
FIXED_INT16 = 0x2A
FIXED_INT32 = 0x2B
FIXED_INT64 = 0x2C
FIXED_FLOAT32 = 0x30
FIXED_FLOAT64 = 0x31
TEXT = 0x34
BLOB_VAR = 0x37
BLOB_COPY = 0x38
TERM = 0x00

# Java's Double.doubleToLongBits / Float.floatToIntBits collapse every NaN to these bits; Python
# keeps the payload and sign of a NaN, so we must canonicalise to match HBase byte for byte.
_CANONICAL_NAN64 = 0x7FF8000000000000
_CANONICAL_NAN32 = 0x7FC00000

_INVERT = bytes(range(255, -1, -1))  # translate table: b ^ 0xFF


def _invert(b: bytes) -> bytes:
    return b.translate(_INVERT)


def _order(b: bytes, descending: bool) -> bytes:
    return b.translate(_INVERT) if descending else b


# ------------------------------------------------------------------------------------- fixed ints


def _fixed_int(value: Any, bits: int, header: int, descending: bool, name: str) -> bytes:
    try:
        v = operator.index(value)
    except TypeError:
        raise KeyshapeError(f"{name} needs an integer, got {type(value).__name__} {value!r}; convert it with int() first") from None
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not lo <= v <= hi:
        raise KeyshapeError(f"{name}: {v} is outside the signed {bits}-bit range [{lo}, {hi}]; use a wider type")
    # Flipping the sign bit of two's complement makes signed order equal unsigned byte order.
    u = ((v + (1 << bits)) & ((1 << bits) - 1)) ^ (1 << (bits - 1))
    return _order(bytes([header]) + u.to_bytes(bits // 8, "big"), descending)


def encode_int8(value: int, descending: bool = False) -> bytes:
    """OrderedBytes.encodeInt8: 0x29 then the byte with its sign bit flipped (2 bytes).

    Raises ValueError outside [-128, 127].

    value: the int to encode.
    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.
    """
    return _fixed_int(value, 8, FIXED_INT8, descending, "encode_int8")


def encode_int16(value: int, descending: bool = False) -> bytes:
    """OrderedBytes.encodeInt16: 0x2a then 2 big-endian bytes, sign bit flipped (3 bytes).

    Raises ValueError outside [-32768, 32767].

    value: the int to encode.
    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.
    """
    return _fixed_int(value, 16, FIXED_INT16, descending, "encode_int16")


def encode_int32(value: int, descending: bool = False) -> bytes:
    """OrderedBytes.encodeInt32: 0x2b then 4 big-endian bytes, sign bit flipped (5 bytes).

    Raises ValueError outside [-2**31, 2**31 - 1].

    value: the int to encode.
    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.
    """
    return _fixed_int(value, 32, FIXED_INT32, descending, "encode_int32")


def encode_int64(value: int, descending: bool = False) -> bytes:
    r"""OrderedBytes.encodeInt64: 0x2c then 8 big-endian bytes, sign bit flipped (9 bytes).

    value: an int in [-2**63, 2**63 - 1] (BadInput otherwise).
    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.

    The flipped sign bit makes negative numbers sort before positive ones in the unsigned byte
    order (``Bytes.toBytes(long)`` sorts them after):

    >>> encode_int64(1)
    b',\x80\x00\x00\x00\x00\x00\x00\x01'
    >>> encode_int64(-1) < encode_int64(1)
    True
    >>> encode_int64(1, descending=True)
    b'\xd3\x7f\xff\xff\xff\xff\xff\xff\xfe'
    >>> encode_int64(2, descending=True) < encode_int64(1, descending=True)
    True
    >>> decode(encode_int64(-5, descending=True))
    (-5, b'')
    """
    return _fixed_int(value, 64, FIXED_INT64, descending, "encode_int64")


# ----------------------------------------------------------------------------------- fixed floats


def _float_bits(value: Any, name: str, fmt: str, ufmt: str, nan_bits: int) -> int:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise KeyshapeError(f"{name} needs a number, got {type(value).__name__} {value!r}") from None
    if math.isnan(f):
        return nan_bits
    try:
        return struct.unpack(ufmt, struct.pack(fmt, f))[0]
    except OverflowError:
        raise KeyshapeError(f"{name}: {f!r} does not fit in a 32-bit float; use encode_float64") from None


def encode_float32(value: float, descending: bool = False) -> bytes:
    """OrderedBytes.encodeFloat32: 0x30 then the 4 IEEE-754 bytes, transformed (5 bytes).

    The value is rounded to the nearest float32 (ValueError if it overflows float32). See
    :func:`encode_float64` for the bit transform, NaN and -0.0.

    value: the number to encode.
    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.
    """
    bits = _float_bits(value, "encode_float32", ">f", ">I", _CANONICAL_NAN32)
    bits ^= 0xFFFFFFFF if bits >> 31 else 0x80000000
    return _order(bytes([FIXED_FLOAT32]) + bits.to_bytes(4, "big"), descending)


def encode_float64(value: float, descending: bool = False) -> bytes:
    """OrderedBytes.encodeFloat64: 0x31 then the 8 IEEE-754 bytes, transformed (9 bytes).

    Positive numbers get their sign bit set; negative numbers have all 64 bits inverted. The
    resulting total order is -inf < ... < -0.0 < +0.0 < ... < +inf < NaN: -0.0 and +0.0 encode
    differently (and decode back to themselves), and every NaN encodes as Java's canonical NaN
    (bits 0x7ff8000000000000), so ``encode_float64(nan)`` is ``31 ff f8 00 00 00 00 00 00``.

    value: the number to encode.
    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.
    """
    bits = _float_bits(value, "encode_float64", ">d", ">Q", _CANONICAL_NAN64)
    bits ^= 0xFFFFFFFFFFFFFFFF if bits >> 63 else 0x8000000000000000
    return _order(bytes([FIXED_FLOAT64]) + bits.to_bytes(8, "big"), descending)


# --------------------------------------------------------------------------------- text and blobs


def encode_null(descending: bool = False) -> bytes:
    """OrderedBytes.encodeNull: the single byte 0x05 (0xfa descending); sorts before every value.

    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.
    """
    return _order(bytes([NULL]), descending)


def encode_string(value: str | None, descending: bool = False) -> bytes:
    r"""OrderedBytes.encodeString: 0x34, the UTF-8 bytes, then a 0x00 terminator.

    value: the text; None is the NULL byte (as HBase).
    descending: invert every byte (``Order.DESCENDING``: the header, the text and the
        terminator), so later strings sort first; default False.

    ``""`` is ``34 00``. UTF-8 byte order equals code-point order, so encodings sort like Python
    ``str``. Raises BadInput for a string holding U+0000 (the terminator; HBase refuses it too) or
    a lone surrogate (not encodable as UTF-8).

    >>> encode_string("ab")
    b'4ab\x00'
    >>> encode_string("ab", descending=True)
    b'\xcb\x9e\x9d\xff'
    >>> encode_string("b", descending=True) < encode_string("a", descending=True)
    True
    """
    if value is None:
        return encode_null(descending)
    if not isinstance(value, str):
        raise KeyshapeError(f"encode_string needs a str, got {type(value).__name__} {value!r}")
    if "\x00" in value:
        raise KeyshapeError("encode_string: OrderedBytes TEXT cannot hold U+0000 (it is the terminator); strip NUL characters or use encode_blob_var")
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise KeyshapeError(
            f"encode_string: {value!r} is not valid Unicode ({exc.reason}); fix the text or use encode_blob_var on its bytes"
        ) from None
    return _order(bytes([TEXT]) + raw + bytes([TERM]), descending)


def _as_bytes(value: Any, name: str) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise KeyshapeError(f"{name} needs bytes, got {type(value).__name__} {value!r}")


def encode_blob_var(value: bytes | None, descending: bool = False) -> bytes:
    """OrderedBytes.encodeBlobVar: 0x37 then the bits of ``value`` in 7-bit groups.

    Each group becomes one byte whose top bit is 1 ("more follows"), except the last, whose top bit
    is 0; the last group is padded with zero bits. ``b""`` is ``37 00``; ``None`` is the NULL byte.
    Any bytes (0x00 included) are allowed; the length is ``1 + ceil(8 * len(value) / 7)``.
    Like HBase's, this sorts exactly only among values of equal length: ``b"o"`` (37 b7 40) sorts
    before ``b"n\\x00"`` (37 b7 80 00), because a last group's clear top bit sorts below a
    continuation byte.

    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.
    """
    if value is None:
        return encode_null(descending)
    raw = _as_bytes(value, "encode_blob_var")
    if not raw:
        return _order(bytes([BLOB_VAR, TERM]), descending)
    out = bytearray([BLOB_VAR])
    # 7 input bytes are exactly 8 groups, so work chunk by chunk with plain integers.
    for i in range(0, len(raw), 7):
        chunk = raw[i : i + 7]
        nbits = 8 * len(chunk)
        groups = -(-nbits // 7)
        x = int.from_bytes(chunk, "big") << (7 * groups - nbits)
        out.extend(0x80 | ((x >> (7 * (groups - 1 - j))) & 0x7F) for j in range(groups))
    out[-1] &= 0x7F
    return _order(bytes(out), descending)


def encode_blob_copy(value: bytes | None, descending: bool = False) -> bytes:
    """OrderedBytes.encodeBlobCopy: 0x38 then ``value`` unchanged; descending adds a terminator.

    Ascending: ``38`` + value, with no terminator, so it must be the LAST field of a key (decoding
    takes every remaining byte) and may contain 0x00. Descending: the inversion of
    ``38`` + value + ``00``; 0x00 in ``value`` raises ValueError (as in HBase). ``None`` is the NULL
    byte, plus the inverted terminator when descending (``fa ff``), as HBase writes it; HBase's
    ``skip`` and ``decodeBlobCopy`` (and :func:`decode` here) read that NULL as the one byte
    ``fa`` and leave the ``ff``, so a descending NULL BlobCopy cannot be followed by another field.

    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.
    """
    if value is None:
        return encode_null(descending) + (b"\xff" if descending else b"")
    raw = _as_bytes(value, "encode_blob_copy")
    if not descending:
        return bytes([BLOB_COPY]) + raw
    if TERM in raw:
        raise KeyshapeError(
            "encode_blob_copy: descending BlobCopy cannot hold 0x00 bytes (0x00 is its "
            "terminator); "
            "use encode_blob_var, or ascending order as the last field"
        )
    return _invert(bytes([BLOB_COPY]) + raw + bytes([TERM]))


# --------------------------------------------------------------------------------------- decoding


def _header(b: bytes, expected: int | None = None) -> tuple[int, bool]:
    if not isinstance(b, (bytes, bytearray, memoryview)):
        raise KeyshapeError(f"decode needs bytes, got {type(b).__name__}")
    if len(b) == 0:
        raise KeyshapeError("decode: empty input, expected an OrderedBytes header byte")
    h = b[0]
    descending = h >= 0x80
    if descending:
        h ^= 0xFF
    if expected is not None and h not in (expected, NULL):
        raise KeyshapeError(
            f"decode: header byte 0x{b[0]:02x} is not {_NAMES.get(expected, hex(expected))} "
            f"(expected 0x{expected:02x} ascending or 0x{expected ^ 0xFF:02x} descending)"
        )
    return h, descending


def _fixed_body(b: bytes, n: int, descending: bool, name: str) -> tuple[int, bytes]:
    if len(b) < 1 + n:
        raise KeyshapeError(f"decode: {name} needs {1 + n} bytes, got only {len(b)}: {bytes(b)!r}")
    body = bytes(b[1 : 1 + n])
    return int.from_bytes(_order(body, descending), "big"), bytes(b[1 + n :])


def _decode_int(b: bytes, descending: bool, bits: int, name: str) -> tuple[int, bytes]:
    u, rest = _fixed_body(b, bits // 8, descending, name)
    u ^= 1 << (bits - 1)
    return (u - (1 << bits) if u >> (bits - 1) else u), rest


def _decode_float(b: bytes, descending: bool, bits: int) -> tuple[float, bytes]:
    u, rest = _fixed_body(b, bits // 8, descending, f"FIXED_FLOAT{bits}")
    full = (1 << bits) - 1
    # A set top bit means the value was positive (only its sign bit was flipped).
    u ^= (1 << (bits - 1)) if u >> (bits - 1) else full
    if bits == 64:
        return struct.unpack(">d", u.to_bytes(8, "big"))[0], rest
    return struct.unpack(">f", u.to_bytes(4, "big"))[0], rest


def _decode_text(b: bytes, descending: bool) -> tuple[str, bytes]:
    term = TERM ^ 0xFF if descending else TERM
    end = bytes(b).find(bytes([term]), 1)
    if end < 0:
        raise KeyshapeError(f"decode: TEXT value has no 0x{term:02x} terminator: {bytes(b)!r}")
    raw = _order(bytes(b[1:end]), descending)
    try:
        return raw.decode("utf-8"), bytes(b[end + 1 :])
    except UnicodeDecodeError as exc:
        raise KeyshapeError(f"decode: TEXT value is not valid UTF-8 ({exc.reason}): {raw!r}") from None


def _decode_blob_var(b: bytes, descending: bool) -> tuple[bytes, bytes]:
    data = bytes(b)
    if len(data) < 2:
        raise KeyshapeError("decode: BLOB_VAR value is truncated (no byte after the header)")
    if (data[1] ^ 0xFF if descending else data[1]) == TERM:
        return b"", data[2:]
    # The value ends at the first byte whose (order-corrected) top bit is 0.
    end = 1
    while True:
        if end >= len(data):
            raise KeyshapeError(f"decode: BLOB_VAR value has no final byte (top bit 0): {data!r}")
        if not ((data[end] ^ 0xFF if descending else data[end]) & 0x80):
            break
        end += 1
    groups = _order(data[1 : end + 1], descending)
    g = len(groups)
    n = 7 * g // 8
    if n == 0 or -(-8 * n // 7) != g:
        raise KeyshapeError(f"decode: BLOB_VAR has {g} groups, which no byte string encodes to")
    x = 0
    for byte in groups:
        x = (x << 7) | (byte & 0x7F)
    pad = 7 * g - 8 * n
    if x & ((1 << pad) - 1):
        raise KeyshapeError("decode: BLOB_VAR padding bits are not zero; the value is corrupt")
    return (x >> pad).to_bytes(n, "big"), data[end + 1 :]


def _decode_blob_copy(b: bytes, descending: bool) -> tuple[bytes, bytes]:
    data = bytes(b)
    if not descending:
        # HBase: ascending BlobCopy has no terminator and runs to the end of the buffer.
        return data[1:], b""
    end = data.find(b"\xff", 1)
    if end < 0:
        raise KeyshapeError(f"decode: descending BLOB_COPY has no 0xff terminator: {data!r}")
    return _invert(data[1:end]), data[end + 1 :]


def _decode_null(b: bytes, descending: bool) -> tuple[None, bytes]:
    # One byte, as OrderedBytes.skip and decodeBlobCopy take, even for the fa ff that a descending
    # NULL BlobCopy is written as: the next field of a composite key may itself start with 0xff
    # (a raw or fixed-width field), and reading two bytes would eat it.
    return None, bytes(b[1:])


_NAMES = {
    NULL: "NULL",
    FIXED_INT8: "FIXED_INT8",
    FIXED_INT16: "FIXED_INT16",
    FIXED_INT32: "FIXED_INT32",
    FIXED_INT64: "FIXED_INT64",
    FIXED_FLOAT32: "FIXED_FLOAT32",
    FIXED_FLOAT64: "FIXED_FLOAT64",
    TEXT: "TEXT",
    BLOB_VAR: "BLOB_VAR",
    BLOB_COPY: "BLOB_COPY",
}

_DECODERS = {
    NULL: _decode_null,
    FIXED_INT8: lambda b, d: _decode_int(b, d, 8, "FIXED_INT8"),
    FIXED_INT16: lambda b, d: _decode_int(b, d, 16, "FIXED_INT16"),
    FIXED_INT32: lambda b, d: _decode_int(b, d, 32, "FIXED_INT32"),
    FIXED_INT64: lambda b, d: _decode_int(b, d, 64, "FIXED_INT64"),
    FIXED_FLOAT32: lambda b, d: _decode_float(b, d, 32),
    FIXED_FLOAT64: lambda b, d: _decode_float(b, d, 64),
    TEXT: _decode_text,
    BLOB_VAR: _decode_blob_var,
    BLOB_COPY: _decode_blob_copy,
}


def decode(b: bytes) -> tuple[Any, bytes]:
    r"""Decode the one OrderedBytes value at the start of ``b``; return ``(value, rest)``.

    b: the encoded bytes; a value, then anything (returned as ``rest``).

    The type and direction come from the header byte. Values come back as ``int`` (fixed ints),
    ``float``, ``str`` (TEXT), ``bytes`` (blobs) or ``None`` (NULL). An ascending BlobCopy takes all
    remaining bytes (``rest`` is ``b""``); a descending one stops at its 0xff terminator, like
    ``OrderedBytes.skip``. Raises BadInput for an unknown or Numeric header, truncated input, a
    missing terminator or invalid UTF-8.

    >>> decode(encode_string("user1") + encode_int64(7))
    ('user1', b',\x80\x00\x00\x00\x00\x00\x00\x07')
    """
    h, descending = _header(b)
    fn = _DECODERS.get(h)
    if fn is None:
        if 0x07 <= h <= 0x26:
            raise KeyshapeError(
                f"decode: header 0x{b[0]:02x} is OrderedBytes' variable-length Numeric encoding, "
                "which keyshape does not support; encode numbers with the fixed-width types"
            )
        raise KeyshapeError(f"decode: 0x{b[0]:02x} is not an OrderedBytes header byte")
    return fn(b, descending)


def _typed(expected: int, name: str) -> Any:
    def decoder(b: bytes) -> tuple[Any, bytes]:
        h, descending = _header(b, expected)
        return _DECODERS[h](b, descending)

    decoder.__name__ = decoder.__qualname__ = name
    decoder.__doc__ = f"Like :func:`decode`, but ValueError unless ``b`` starts with a {_NAMES[expected]} (or NULL) header."
    return decoder


decode_int8 = _typed(FIXED_INT8, "decode_int8")
decode_int16 = _typed(FIXED_INT16, "decode_int16")
decode_int32 = _typed(FIXED_INT32, "decode_int32")
decode_int64 = _typed(FIXED_INT64, "decode_int64")
decode_float32 = _typed(FIXED_FLOAT32, "decode_float32")
decode_float64 = _typed(FIXED_FLOAT64, "decode_float64")
decode_string = _typed(TEXT, "decode_string")
decode_blob_var = _typed(BLOB_VAR, "decode_blob_var")
decode_blob_copy = _typed(BLOB_COPY, "decode_blob_copy")


# ----------------------------------------------------------------------------- reverse timestamps


def _check_ms(ms: Any) -> int:
    try:
        v = operator.index(ms)
    except TypeError:
        raise KeyshapeError(f"reverse_timestamp needs integer milliseconds, got {ms!r}") from None
    if not 0 <= v <= MAX_LONG:
        raise KeyshapeError(f"reverse_timestamp: {v} ms is outside [0, 2**63 - 1]; timestamps are non-negative longs")
    return v


def reverse_timestamp(ms: int) -> bytes:
    r"""``Bytes.toBytes(Long.MAX_VALUE - ms)``: 8 big-endian bytes; newer times sort first.

    ms: milliseconds since the epoch, in [0, 2**63 - 1] (BadInput otherwise), so the result
        never wraps.

    >>> reverse_timestamp(0)
    b'\x7f\xff\xff\xff\xff\xff\xff\xff'
    >>> reverse_timestamp(1767225600000) < reverse_timestamp(1767225599999)
    True
    """
    return int64(MAX_LONG - _check_ms(ms))


def reverse_timestamp_text(ms: int) -> bytes:
    """``Long.MAX_VALUE - ms`` as 19 zero-padded ASCII decimal digits; newer times sort first.

    ms: milliseconds since the epoch, in [0, 2**63 - 1] (BadInput otherwise).

    19 digits is the width of Long.MAX_VALUE, so every result has the same length and text order
    equals numeric order.

    >>> reverse_timestamp_text(1)
    b'9223372036854775806'
    """
    return b"%019d" % (MAX_LONG - _check_ms(ms))


# ----------------------------------------------------------------------------- vectorized batches


def _int_array(values: Any, name: str, dtype: type) -> np.ndarray:
    a = np.asarray(values)
    if a.size == 0:
        return np.zeros(0, dtype=dtype)
    if a.dtype.kind not in "iu":
        raise KeyshapeError(f"{name} needs an integer array, got dtype {a.dtype}; convert it explicitly first")
    info = np.iinfo(dtype)
    if a.min() < info.min or a.max() > info.max:
        raise KeyshapeError(f"{name}: values outside [{info.min}, {info.max}]")
    return a.astype(dtype).ravel()


def _pack_rows(header: int, be_words: np.ndarray, width: int, descending: bool) -> np.ndarray:
    n = be_words.shape[0]
    buf = np.empty((n, 1 + width), dtype=np.uint8)
    buf[:, 0] = header
    buf[:, 1:] = be_words.view(np.uint8).reshape(n, width)
    if descending:
        buf ^= 0xFF
    return buf.view(f"S{1 + width}").ravel()


def encode_int32_many(values: Any, descending: bool = False) -> np.ndarray:
    """Vectorized :func:`encode_int32`: an ``S5`` array, one encoding per value.

    Caution: numpy drops trailing 0x00 bytes when you index an ``S`` array; use
    :func:`rows_to_bytes` (or ``.tobytes()``) to get exact keys.

    values: the ints to encode (a sequence or an array).
    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.
    """
    a = _int_array(values, "encode_int32_many", np.int32)
    words = (a.view(np.uint32) ^ np.uint32(0x80000000)).astype(">u4")
    return _pack_rows(FIXED_INT32, words, 4, descending)


def encode_int64_many(values: Any, descending: bool = False) -> np.ndarray:
    """Vectorized :func:`encode_int64`: an ``S9`` array (see the caution in encode_int32_many).

    values: the ints to encode (a sequence or an array).
    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.
    """
    a = _int_array(values, "encode_int64_many", np.int64)
    words = (a.view(np.uint64) ^ np.uint64(0x8000000000000000)).astype(">u8")
    return _pack_rows(FIXED_INT64, words, 8, descending)


def encode_float64_many(values: Any, descending: bool = False) -> np.ndarray:
    """Vectorized :func:`encode_float64` (same NaN and -0.0 rules): an ``S9`` array.

    values: the numbers to encode (a sequence or an array).
    descending: invert every byte (HBase's ``Order.DESCENDING``), so larger values sort first;
        default False.
    """
    a = np.asarray(values)
    if a.size and a.dtype.kind not in "iuf":
        raise KeyshapeError(f"encode_float64_many needs numbers, got dtype {a.dtype}")
    a = a.astype(np.float64).ravel()
    bits = a.view(np.uint64)
    bits = np.where(np.isnan(a), np.uint64(_CANONICAL_NAN64), bits)
    negative = (bits >> np.uint64(63)).astype(bool)
    mask = np.where(negative, np.uint64(0xFFFFFFFFFFFFFFFF), np.uint64(0x8000000000000000))
    return _pack_rows(FIXED_FLOAT64, (bits ^ mask).astype(">u8"), 8, descending)


def reverse_timestamp_many(ms: Any) -> np.ndarray:
    """Vectorized :func:`reverse_timestamp`: an ``S8`` array (see the caution on ``S`` arrays).

    ms: the timestamps, epoch milliseconds (non-negative).
    """
    a = _int_array(ms, "reverse_timestamp_many", np.int64)
    if a.size and a.min() < 0:
        raise KeyshapeError("reverse_timestamp_many: timestamps must be non-negative")
    words = (np.int64(MAX_LONG) - a).astype(">i8")
    return words.view("S8").ravel()


def rows_to_bytes(rows: np.ndarray) -> list[bytes]:
    """Split a fixed-width ``S<n>`` array into exact ``bytes`` keys, keeping trailing 0x00 bytes.

    rows: the fixed-width ``S<n>`` array.
    """
    width = rows.dtype.itemsize
    raw = np.ascontiguousarray(rows).tobytes()
    return [raw[i : i + width] for i in range(0, len(raw), width)]
