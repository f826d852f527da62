"""Phoenix's primary-key data types, byte for byte as Phoenix 5.2 writes them into row keys.

Each :class:`PhoenixType` turns one Python value into its ASC bytes and back. DESC is every byte
inverted (``SortOrder.invert``), which the key composer (:mod:`keyshape.phoenix.key`) applies; the
two places where Phoenix's DESC bytes are NOT the inverted ASC bytes are handled there too
(DECIMAL with more fraction digits than its scale, and the padding of CHAR/BINARY).

Python values: integers for the integer types, ``float`` for FLOAT/DOUBLE, ``decimal.Decimal`` for
DECIMAL, ``bool``, ``str`` for CHAR/VARCHAR, ``bytes`` for BINARY/VARBINARY, epoch milliseconds
(``int``) for DATE/TIME, and :class:`PhoenixTimestamp` (milliseconds + the nanoseconds below the
millisecond) for TIMESTAMP. Where each rule comes from: ``PDataType`` subclasses in
phoenix-core-client (``PLong.LongCodec`` sign flip, ``PFloat``/``PDouble`` codecs with their +1,
``PDataType.toBytes(BigDecimal)`` base-100 form, ``PTimestamp.toBytes`` 8 + 4 bytes); every rule
is pinned by tests against Phoenix 5.2.1 itself (tools/golden/phoenix).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import ROUND_DOWN, ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any, NamedTuple

from keyshape.errors import KeyshapeError

__all__ = ["PhoenixTimestamp", "PhoenixType", "PhoenixTypeError", "format_text", "parse_text", "phoenix_type", "TYPE_NAMES", "utf16_length"]


class PhoenixTypeError(KeyshapeError):
    """A value Phoenix would refuse for a column's type (out of range, too long, negative unsigned)."""


class PhoenixTimestamp(NamedTuple):
    """A Phoenix TIMESTAMP: epoch milliseconds and the nanoseconds below the millisecond (0..999999),
    the two parts ``PTimestamp`` writes (``java.sql.Timestamp.getTime()`` and ``getNanos() % 1e6``)."""

    millis: int
    nanos: int = 0

    @property
    def java_nanos(self) -> int:
        """``java.sql.Timestamp.getNanos()``: all nanoseconds within the second."""
        return (self.millis % 1000) * 1_000_000 + self.nanos


_MAX_DECIMAL_DIGITS = 38  # PDataType.MAX_PRECISION
_DECIMAL_CONTEXT = Context(prec=_MAX_DECIMAL_DIGITS, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class PhoenixType:
    """One Phoenix SQL type as it appears in a primary key.

    ``width`` is the fixed byte width (None for variable width); for CHAR(n)/BINARY(n) it comes
    from the column's length. ``length``/``scale`` are the declared ``(n)`` / ``(p, s)``.
    """

    name: str
    width: int | None = None
    length: int | None = None
    scale: int | None = None

    @property
    def fixed(self) -> bool:
        return self.width is not None

    @property
    def sql(self) -> str:
        """The type as DDL spells it, e.g. ``DECIMAL(10,2)``, ``CHAR(5)``."""
        if self.name == "DECIMAL" and self.length is not None:
            return f"DECIMAL({self.length},{self.scale or 0})"
        if self.name in ("CHAR", "BINARY", "VARCHAR", "VARBINARY") and self.length is not None:
            return f"{self.name}({self.length})"
        return self.name

    # --- values -> ASC bytes -------------------------------------------------------------------

    def encode(self, value: Any) -> bytes:
        """The ASC bytes of ``value`` (unpadded for CHAR/BINARY; ``b""`` means NULL)."""
        kind = _KINDS[self.name]
        return kind[0](self, value)

    def decode(self, data: bytes) -> Any:
        """The value of ASC bytes ``data`` (already un-inverted for DESC columns)."""
        kind = _KINDS[self.name]
        return kind[1](self, data)


# --- integers ---------------------------------------------------------------------------------

_INT_WIDTH = {
    "TINYINT": 1,
    "SMALLINT": 2,
    "INTEGER": 4,
    "BIGINT": 8,
    "UNSIGNED_TINYINT": 1,
    "UNSIGNED_SMALLINT": 2,
    "UNSIGNED_INT": 4,
    "UNSIGNED_LONG": 8,
}


def _int_value(t: PhoenixType, value: Any) -> int:
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            raise PhoenixTypeError(f"{t.name} needs an integer, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise PhoenixTypeError(f"{t.name} needs an integer, got {value!r}")
    bits = 8 * _INT_WIDTH[t.name]
    low, high = (0, 2 ** (bits - 1) - 1) if t.name.startswith("UNSIGNED") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if not low <= value <= high:
        raise PhoenixTypeError(f"{t.name} holds {low}..{high}, got {value}")
    return value


def _enc_signed(t: PhoenixType, value: Any) -> bytes:
    # PLong.LongCodec.encodeLong and its narrower twins: two's complement with the sign bit flipped,
    # so negative numbers sort before positive ones as unsigned bytes.
    width = _INT_WIDTH[t.name]
    v = _int_value(t, value) % (1 << (8 * width))
    return (v ^ (1 << (8 * width - 1))).to_bytes(width, "big")


def _dec_signed(t: PhoenixType, data: bytes) -> int:
    width = _INT_WIDTH[t.name]
    _need(t, data, width)
    return int.from_bytes(bytes([data[0] ^ 0x80]) + data[1:width], "big", signed=True)


def _enc_unsigned(t: PhoenixType, value: Any) -> bytes:
    return _int_value(t, value).to_bytes(_INT_WIDTH[t.name], "big")


def _dec_unsigned(t: PhoenixType, data: bytes) -> int:
    _need(t, data, _INT_WIDTH[t.name])
    return int.from_bytes(data, "big")


def _need(t: PhoenixType, data: bytes, width: int) -> None:
    if len(data) != width:
        raise PhoenixTypeError(f"{t.name} takes {width} bytes, got {len(data)}")


# --- floating point ---------------------------------------------------------------------------

_FLOAT_FORMAT = {"FLOAT": (">f", ">i", 32), "DOUBLE": (">d", ">q", 64), "UNSIGNED_FLOAT": (">f", ">i", 32), "UNSIGNED_DOUBLE": (">d", ">q", 64)}


def _float_bits(t: PhoenixType, value: Any) -> int:
    fmt, ifmt, bits = _FLOAT_FORMAT[t.name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PhoenixTypeError(f"{t.name} needs a number, got {value!r}")
    if value != value or value in (float("inf"), float("-inf")):
        # Phoenix's UPSERT path turns the number into a BigDecimal first, which has no NaN or
        # infinity: it refuses them (NumberFormatException), so keyshape does too.
        raise PhoenixTypeError(f"{t.name}: Phoenix cannot store {value!r} (no NaN or infinity)")
    try:
        raw = struct.pack(fmt, float(value))
    except OverflowError:
        raise PhoenixTypeError(f"{t.name} cannot hold {value!r}") from None
    return int(struct.unpack(ifmt, raw)[0])


def _enc_float(t: PhoenixType, value: Any) -> bytes:
    # PFloat/PDouble codecs: flip all bits of negatives and only the sign bit of positives (as
    # OrderedBytes does), then add one, wrapping in the Java int/long.
    _, ifmt, bits = _FLOAT_FORMAT[t.name]
    i = _float_bits(t, value)
    i = _signed((i ^ ((i >> (bits - 1)) | -(1 << (bits - 1)))) + 1, bits)
    return struct.pack(ifmt, i)


def _signed(i: int, bits: int) -> int:
    """``i`` wrapped into a Java int/long of ``bits`` bits."""
    return (i + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))


def _dec_float(t: PhoenixType, data: bytes) -> float:
    fmt, ifmt, bits = _FLOAT_FORMAT[t.name]
    _need(t, data, bits // 8)
    i = _signed(struct.unpack(ifmt, data)[0] - 1, bits)
    i = _signed(i ^ ((~i >> (bits - 1)) | -(1 << (bits - 1))), bits)
    return struct.unpack(fmt, struct.pack(ifmt, i))[0]


def _enc_unsigned_float(t: PhoenixType, value: Any) -> bytes:
    fmt, ifmt, _ = _FLOAT_FORMAT[t.name]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        raise PhoenixTypeError(f"{t.name} holds no negative number, got {value!r}")
    return struct.pack(ifmt, _float_bits(t, value))


def _dec_unsigned_float(t: PhoenixType, data: bytes) -> float:
    fmt, _, bits = _FLOAT_FORMAT[t.name]
    _need(t, data, bits // 8)
    return struct.unpack(fmt, data)[0]


# --- DECIMAL: Phoenix's base-100 form ---------------------------------------------------------


def decimal_value(t: PhoenixType, value: Any) -> Decimal:
    """``value`` as Phoenix stores it for ``t``: checked against the column's precision, cut to its
    scale (ROUND_DOWN), rounded to 38 digits (HALF_UP) and stripped of trailing zeros."""
    try:
        d = value if isinstance(value, Decimal) else Decimal(str(value)) if not isinstance(value, bool) else None
    except InvalidOperation:
        d = None
    if d is None or not d.is_finite():
        raise PhoenixTypeError(f"DECIMAL needs a finite number, got {value!r}")
    if t.length is not None:
        # PDecimal.isSizeCompatible on the value as given, trailing zeros stripped (the bound
        # literal's precision - scale): its integer digits, 1 for zero (so 0 does not fit
        # DECIMAL(2,2) while 0.001 does, as in Phoenix), at most precision - scale.
        integer_digits = 1 if d == 0 else d.adjusted() + 1
        if integer_digits > t.length - (t.scale or 0):
            raise PhoenixTypeError(f"{t.sql} cannot hold {value}")
    if t.scale is not None:
        d = d.quantize(Decimal(1).scaleb(-t.scale), rounding=ROUND_DOWN)
    d = _DECIMAL_CONTEXT.plus(d)
    return d.normalize(_DECIMAL_CONTEXT) if d != 0 else Decimal(0)


def decimal_digits(data: bytes) -> tuple[int, int] | None:
    """(precision, scale) of DECIMAL bytes as ``PDataType.getDecimalPrecisionAndScale`` counts them
    (Java byte arithmetic: a leading single digit and a trailing zero are not counted, a negative
    scale moves into the precision); None where Phoenix 5.2.1 itself fails (a one-byte value that
    is not zero: it reads the second byte). Phoenix checks a DESC value's size with this count
    of its inverted key bytes (see PhoenixKey's DESC DECIMAL rescale)."""
    if data == b"\x80":
        return 0, 0
    if len(data) < 2:
        return None
    signed = [_sbyte(b) for b in data]
    if data[0] & 0x80:
        signum, end, offset = 1, len(data), 1
        scale = _sbyte(((data[0] & 0x7F) - 65) * -2)
    else:
        signum, end, offset = -1, len(data) - (1 if data[-1] == 102 else 0), -101
        scale = _sbyte((~signed[0] - 65 - 128) * -2)
    if end < 2:
        return None
    precision = 2 * (end - 1)
    if (signum * signed[end - 1] - offset) % 10 == 0:
        scale -= 1
        precision -= 1
    if signum * signed[1] - offset < 10:
        precision -= 1
    scale += (end - 2) * 2
    if scale < 0:
        precision, scale = precision - scale, 0
    return precision, scale


def index_decimal(t: PhoenixType, value: Any) -> Decimal | None:
    """The DECIMAL a global index stores for a data value of type ``t`` (a nullable fixed-width
    column: ``IndexUtil.getIndexColumnDataType``), as ``PDecimal.toObject`` coerces the data row's
    bytes: integers, dates and times (epoch ms) as they are, FLOAT/DOUBLE by their shortest decimal
    form (``BigDecimal.valueOf(double)``; a FLOAT widened from its 32 bits first), TIMESTAMP as ms
    plus the nanoseconds below the ms / 10^6, BOOLEAN as 1 or 0. The value is checked against
    ``t`` first (what the data row refuses, the index refuses too). None for NULL."""
    if value is None:
        return None
    data = t.encode(value)  # the data row's own check of the value
    back = t.decode(data)
    if t.name == "BOOLEAN":
        return Decimal(1 if back else 0)
    if t.name in _FLOAT_FORMAT:
        if back == int(back) and 2**53 <= abs(back) < 2**63:
            # Java before 19 prints such a double with more digits than the shortest form
            # (FloatingDecimal's long path: 3.782009411004626e16 is 3.7820094110046256E16), and
            # BigDecimal.valueOf takes those digits: the index value depends on Phoenix's JVM.
            raise PhoenixTypeError(
                f"{back!r} in an index on a {t.sql} column: the DECIMAL Phoenix stores "
                "depends on its JVM's Double.toString (Java 8-18 print this number with "
                "extra digits); keyshape does not guess it"
            )
        return Decimal(repr(float(back)))
    if isinstance(back, PhoenixTimestamp):
        # (nanos % 1e6) / 1e6 in Java double arithmetic, then BigDecimal.valueOf: a 6-digit
        # fraction is exact in its shortest form
        return Decimal(back.millis) + Decimal(repr(back.nanos / 1e6))
    if isinstance(back, int):
        return Decimal(back)
    raise PhoenixTypeError(f"an index does not store {t.sql} values as DECIMAL")


def fraction_digits(value: Any) -> int:
    """How many digits ``value`` has after the point once trailing zeros are dropped."""
    exponent = Decimal(str(value)).normalize().as_tuple().exponent
    return max(-exponent, 0) if isinstance(exponent, int) else 0


def _enc_decimal(t: PhoenixType, value: Any) -> bytes:
    d = decimal_value(t, value)
    if d == 0:
        return b"\x80"
    sign, digits, exp = d.as_tuple()
    exp = int(exp)
    ds = list(digits)
    if exp % 2:  # align the digits on powers of 100
        ds.append(0)
        exp -= 1
    if len(ds) % 2:
        ds.insert(0, 0)
    pairs = [ds[i] * 10 + ds[i + 1] for i in range(0, len(ds), 2)]
    e = exp // 2 + len(pairs) - 1  # base-100 exponent of the first pair
    while pairs[-1] == 0:
        pairs.pop()
    head = 0x80 | (65 + e)
    if not sign:
        return bytes([head & 0xFF] + [p + 1 for p in pairs])
    return bytes([~head & 0xFF] + [101 - p for p in pairs] + [102])


def _sbyte(x: int) -> int:
    """``x`` cast to a Java byte."""
    return (x + 128) % 256 - 128


def _dec_decimal(t: PhoenixType, data: bytes) -> Decimal:
    # PDataType.toBigDecimal's arithmetic on signed bytes, kept exactly so that malformed keys (a
    # DESC value Phoenix wrote ascending) read back as the number Phoenix itself reads.
    if not data:
        raise PhoenixTypeError("DECIMAL bytes are empty")
    if data == b"\x80":
        return Decimal(0)
    signed = [_sbyte(b) for b in data]
    if data[0] & 0x80:
        signum, end, offset = 1, len(data), 1
        scale = _sbyte(((data[0] & 0x7F) - 65) * -2)
    else:
        signum, end, offset = -1, len(data) - (1 if data[-1] == 102 else 0), -101
        scale = _sbyte((~signed[0] - 65 - 128) * -2)
    digits = [signum * signed[i] - offset for i in range(1, end)]
    if not digits:
        raise PhoenixTypeError(f"DECIMAL bytes {data.hex()} have no digits")
    last = digits[-1]
    multiplier = 100
    if last % 10 == 0 if last >= 0 else (-last) % 10 == 0:
        scale -= 1
        last = last // 10 if last >= 0 else -((-last) // 10)
        multiplier = 10
    value = last
    for d in reversed(digits[:-1]):
        value += d * multiplier
        multiplier *= 100
    scale += (end - 2) * 2
    return Decimal(signum * value).scaleb(-scale)


# --- BOOLEAN, dates and times -------------------------------------------------------------------


def _enc_bool(t: PhoenixType, value: Any) -> bytes:
    if not isinstance(value, bool):
        raise PhoenixTypeError(f"BOOLEAN needs True or False, got {value!r}")
    return b"\x01" if value else b"\x00"


def _dec_bool(t: PhoenixType, data: bytes) -> bool:
    _need(t, data, 1)
    return data != b"\x00"


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _millis(t: PhoenixType, value: Any) -> int:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)  # Phoenix stores UTC
        # whole milliseconds since the epoch, floored, in exact integer arithmetic (a float
        # timestamp() loses microseconds far from 1970)
        return (value - _EPOCH) // timedelta(milliseconds=1)
    if isinstance(value, PhoenixTimestamp):
        return value.millis
    if isinstance(value, bool) or not isinstance(value, int):
        raise PhoenixTypeError(f"{t.name} needs epoch milliseconds or a datetime, got {value!r}")
    return value


def _enc_date(t: PhoenixType, value: Any) -> bytes:
    ms = _millis(t, value)
    if t.name.startswith("UNSIGNED"):
        if ms < 0:
            raise PhoenixTypeError(f"{t.name} holds no time before 1970, got {ms} ms")
        return ms.to_bytes(8, "big")
    return _enc_signed(PhoenixType("BIGINT", 8), ms)


def _dec_date(t: PhoenixType, data: bytes) -> int:
    _need(t, data, 8)
    if t.name.startswith("UNSIGNED"):
        return int.from_bytes(data, "big", signed=True)
    return _dec_signed(PhoenixType("BIGINT", 8), data)


def _enc_timestamp(t: PhoenixType, value: Any) -> bytes:
    if isinstance(value, PhoenixTimestamp):
        ms, nanos = value.millis, value.nanos
    elif isinstance(value, datetime):
        ms, nanos = _millis(t, value), (value.microsecond % 1000) * 1000
    else:
        ms, nanos = _millis(t, value), 0
    if not 0 <= nanos < 1_000_000:
        raise PhoenixTypeError(f"{t.name}: nanoseconds below the millisecond must be 0..999999, got {nanos}")
    head = _enc_date(PhoenixType("UNSIGNED_DATE" if t.name.startswith("UNSIGNED") else "DATE", 8), ms)
    return head + nanos.to_bytes(4, "big")


def _dec_timestamp(t: PhoenixType, data: bytes) -> PhoenixTimestamp:
    _need(t, data, 12)
    ms = _dec_date(PhoenixType("UNSIGNED_DATE" if t.name.startswith("UNSIGNED") else "DATE", 8), data[:8])
    return PhoenixTimestamp(ms, int.from_bytes(data[8:], "big", signed=True))


# --- text and bytes ---------------------------------------------------------------------------------


def _enc_text(t: PhoenixType, value: Any) -> bytes:
    if not isinstance(value, str):
        raise PhoenixTypeError(f"{t.name} needs a string, got {value!r}")
    data = value.encode("utf-8")
    if t.name == "CHAR":
        if len(data) != len(value):
            raise PhoenixTypeError(f"CHAR holds single-byte characters only, got {value!r}")
        if t.length is not None and len(data) > t.length:
            raise PhoenixTypeError(f"CHAR({t.length}) cannot hold {len(data)} characters ({value!r})")
    elif t.length is not None and len(value) > t.length // 2 and utf16_length(value) > t.length:
        raise PhoenixTypeError(
            f"VARCHAR({t.length}) cannot hold {utf16_length(value)} characters ({value!r}; "
            "Phoenix counts Java chars: a character beyond U+FFFF counts twice)"
        )
    return data


def utf16_length(text: str) -> int:
    """``text.length()`` in Java: UTF-16 code units (a character beyond U+FFFF is a surrogate pair),
    the length Phoenix checks VARCHAR(n) against (``PVarchar.isSizeCompatible``)."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _dec_text(t: PhoenixType, data: bytes) -> str:
    text = data.decode("utf-8")
    return text.rstrip(" ") if t.name == "CHAR" else text


def _enc_binary(t: PhoenixType, value: Any) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise PhoenixTypeError(f"{t.name} needs bytes, got {value!r}")
    data = bytes(value)
    if t.length is not None and len(data) > t.length:
        raise PhoenixTypeError(f"{t.sql} cannot hold {len(data)} bytes")
    return data


def _dec_binary(t: PhoenixType, data: bytes) -> bytes:
    return bytes(data)


_KINDS = {
    **{n: (_enc_signed, _dec_signed) for n in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")},
    **{n: (_enc_unsigned, _dec_unsigned) for n in ("UNSIGNED_TINYINT", "UNSIGNED_SMALLINT", "UNSIGNED_INT", "UNSIGNED_LONG")},
    "FLOAT": (_enc_float, _dec_float),
    "DOUBLE": (_enc_float, _dec_float),
    "UNSIGNED_FLOAT": (_enc_unsigned_float, _dec_unsigned_float),
    "UNSIGNED_DOUBLE": (_enc_unsigned_float, _dec_unsigned_float),
    "DECIMAL": (_enc_decimal, _dec_decimal),
    "BOOLEAN": (_enc_bool, _dec_bool),
    **{n: (_enc_date, _dec_date) for n in ("DATE", "TIME", "UNSIGNED_DATE", "UNSIGNED_TIME")},
    "TIMESTAMP": (_enc_timestamp, _dec_timestamp),
    "UNSIGNED_TIMESTAMP": (_enc_timestamp, _dec_timestamp),
    "CHAR": (_enc_text, _dec_text),
    "VARCHAR": (_enc_text, _dec_text),
    "BINARY": (_enc_binary, _dec_binary),
    "VARBINARY": (_enc_binary, _dec_binary),
}
TYPE_NAMES = tuple(_KINDS)
_FIXED = {
    **_INT_WIDTH,
    "FLOAT": 4,
    "DOUBLE": 8,
    "UNSIGNED_FLOAT": 4,
    "UNSIGNED_DOUBLE": 8,
    "BOOLEAN": 1,
    "DATE": 8,
    "TIME": 8,
    "UNSIGNED_DATE": 8,
    "UNSIGNED_TIME": 8,
    "TIMESTAMP": 12,
    "UNSIGNED_TIMESTAMP": 12,
}
_ALIASES = {"INT": "INTEGER", "LONG": "BIGINT", "UNSIGNED_INTEGER": "UNSIGNED_INT", "NUMERIC": "DECIMAL"}


def phoenix_type(name: str, length: int | None = None, scale: int | None = None) -> PhoenixType:
    """The :class:`PhoenixType` for a SQL type name (``"BIGINT"``, ``"CHAR"`` with ``length=5``,
    ``"DECIMAL"`` with ``length=10, scale=2`` ...); PhoenixTypeError names the supported ones."""
    key = _ALIASES.get(name.strip().upper(), name.strip().upper())
    if key not in _KINDS:
        raise PhoenixTypeError(f"Phoenix type {name!r} is not supported in a row key; use one of " + ", ".join(TYPE_NAMES))
    if key in ("CHAR", "BINARY"):
        if length is None or length < 1:
            raise PhoenixTypeError(f"{key} needs a length, e.g. {key}(8)")
        return PhoenixType(key, length, length)
    if key == "DECIMAL":
        if length is not None and not 1 <= length <= _MAX_DECIMAL_DIGITS:
            raise PhoenixTypeError(f"DECIMAL precision must be 1..38, got {length}")
        if scale is not None and (length is None or not 0 <= scale <= length):
            raise PhoenixTypeError(f"DECIMAL scale must be 0..precision, got {scale}")
        # DECIMAL(p) is DECIMAL(p,0), as Phoenix's ColumnDef makes it (and SYSTEM.CATALOG stores);
        # a bare DECIMAL keeps every digit up to 38.
        return PhoenixType(key, None, length, (scale or 0) if length is not None else None)
    return PhoenixType(key, _FIXED.get(key), length)


_TIME_TYPES = ("DATE", "TIME", "UNSIGNED_DATE", "UNSIGNED_TIME", "TIMESTAMP", "UNSIGNED_TIMESTAMP")
# Date, time, a fraction of up to 9 digits, an optional zone: the fraction is read here (datetime
# keeps 6 digits of it) so a TIMESTAMP keeps its nanoseconds.
_MOMENT = re.compile(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d(?::\d\d)?)(?:\.(\d{1,9}))?(Z|[+-]\d\d(?::?\d\d)?)?")
# The form printed for a moment outside datetime's years 1..9999 (and the one printed before ISO).
_RAW_MOMENT = re.compile(r"(-?\d+)\s*ms\s*\+\s*(\d+)\s*ns")


def _moment_nanos(text: str) -> int:
    """Nanoseconds since the epoch of an ISO-8601 date-time (UTC unless it gives a zone)."""
    m = _MOMENT.fullmatch(text)
    if m is None:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        fraction = moment.microsecond * 1000
        moment = moment.replace(microsecond=0)
    else:
        date, clock, digits, zone = m.groups()
        moment = datetime.fromisoformat(f"{date}T{clock}{(zone or '').replace('Z', '+00:00')}")
        fraction = int((digits or "0").ljust(9, "0"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)  # Phoenix's default time zone (DateUtil: GMT)
    return (moment - _EPOCH) // timedelta(seconds=1) * 1_000_000_000 + fraction


def parse_text(t: PhoenixType, text: str) -> Any:
    """A value of type ``t`` from command-line text: numbers as written, BOOLEAN true/false,
    DATE/TIME/TIMESTAMP as epoch milliseconds or ISO-8601 (UTC unless it says otherwise; a
    TIMESTAMP keeps up to 9 fraction digits, so :func:`format_text`'s form reads back to the same
    value), BINARY/VARBINARY in HBase's toStringBinary form."""
    name = t.name
    try:
        if name in _INT_WIDTH:
            return int(text)
        if name in _FLOAT_FORMAT:
            return float(text)
        if name == "DECIMAL":
            return Decimal(text)
        if name == "BOOLEAN":
            if text.lower() not in ("true", "false"):
                raise ValueError
            return text.lower() == "true"
        if name in _TIME_TYPES:
            stamp = "TIMESTAMP" in name
            raw = _RAW_MOMENT.fullmatch(text.strip())
            if text.lstrip("-").isdigit() or (raw and stamp):
                ms, nanos = (int(raw.group(1)), int(raw.group(2))) if raw else (int(text), 0)
                if not 0 <= nanos < 1_000_000:
                    raise ValueError
                return PhoenixTimestamp(ms, nanos) if stamp else ms
            ms, nanos = divmod(_moment_nanos(text.strip()), 1_000_000)
            return PhoenixTimestamp(ms, nanos) if stamp else ms
        if name in ("BINARY", "VARBINARY"):
            from keyshape.core.hbytes import to_bytes_binary

            return to_bytes_binary(text, strict=True)
    except (ValueError, ArithmeticError, OverflowError):
        raise PhoenixTypeError(f"{text!r} is not a {t.sql} value") from None
    return text


def format_text(t: PhoenixType, value: Any) -> str:
    """``value`` of type ``t`` as text that :func:`parse_text` reads back to the same value.

    DATE and TIME print as Phoenix's default date format (``DateUtil``: ``yyyy-MM-dd HH:mm:ss.SSS``,
    GMT); a TIMESTAMP the same with all 9 fraction digits (``2026-11-27 10:00:00.123456789``), which
    is also the text Phoenix's ``TIMESTAMP '...'`` literal reads back to the same key. A moment
    outside the years 1..9999 prints as epoch milliseconds (``<ms>ms+<ns>ns`` for a TIMESTAMP)."""
    if value is None:
        return "NULL"
    if t.name in _TIME_TYPES:
        if isinstance(value, PhoenixTimestamp):
            total, digits, raw = value.millis * 1_000_000 + value.nanos, 9, f"{value.millis}ms+{value.nanos}ns"
        else:
            total, digits, raw = int(value) * 1_000_000, 3, str(value)
        seconds, fraction = divmod(total, 1_000_000_000)
        try:
            m = _EPOCH + timedelta(seconds=seconds)
        except OverflowError:
            return raw
        if not 1 <= m.year <= 9999:
            return raw
        text = f"{m.year:04d}-{m.month:02d}-{m.day:02d} {m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        return f"{text}.{str(fraction).rjust(9, '0')[:digits]}"
    return str(value)
