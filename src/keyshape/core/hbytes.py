"""HBase's byte conventions (``org.apache.hadoop.hbase.util.Bytes``), byte for byte.

Keys are ``bytes``. Numbers become big-endian two's complement like ``Bytes.toBytes``; keys
compare as unsigned bytes, a prefix first, like ``Bytes.BYTES_COMPARATOR`` (which is exactly how
Python compares ``bytes``); text for people is ``Bytes.toStringBinary``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from keyshape.errors import KeyshapeError

__all__ = [
    "MAX_LONG",
    "short",
    "int32",
    "int64",
    "compare",
    "shared_prefix_length",
    "to_string_binary",
    "to_bytes_binary",
    "split",
    "next_prefix",
]

MAX_LONG = 2**63 - 1
"""Java's ``Long.MAX_VALUE``."""

_MIN_LONG = -(2**63)


def _fixed(value: int, width: int, java_type: str) -> bytes:
    if isinstance(value, bool) or not isinstance(value, int):
        raise KeyshapeError(f"{java_type} value must be an int, got {type(value).__name__}")
    bits = width * 8
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not low <= value <= high:
        raise KeyshapeError(f"{value} does not fit a Java {java_type} ({low}..{high}); use a wider type")
    return value.to_bytes(width, "big", signed=True)


def short(value: int) -> bytes:
    r"""2 bytes, big-endian two's complement: ``Bytes.toBytes(short)``.

    value: an int in -32768..32767 (BadInput otherwise).

    >>> short(-2)
    b'\xff\xfe'
    """
    return _fixed(value, 2, "short")


def int32(value: int) -> bytes:
    r"""4 bytes, big-endian two's complement: ``Bytes.toBytes(int)``.

    value: an int in -2**31..2**31-1 (BadInput otherwise).

    >>> int32(258)
    b'\x00\x00\x01\x02'
    """
    return _fixed(value, 4, "int")


def int64(value: int) -> bytes:
    r"""8 bytes, big-endian two's complement: ``Bytes.toBytes(long)``.

    value: an int in -2**63..2**63-1 (BadInput otherwise).

    Negative values sort AFTER positive ones under :func:`compare` (the sign bit is the top bit),
    exactly as in HBase (OrderedBytes' ``encode_int64`` flips the sign bit so they sort first):

    >>> int64(1)
    b'\x00\x00\x00\x00\x00\x00\x00\x01'
    >>> int64(-1)
    b'\xff\xff\xff\xff\xff\xff\xff\xff'
    >>> compare(int64(-1), int64(1))
    1
    """
    return _fixed(value, 8, "long")


def compare(a: bytes, b: bytes) -> int:
    r"""-1, 0 or 1 as ``a`` sorts before, equal to or after ``b`` under ``Bytes.BYTES_COMPARATOR``.

    a: the first key.
    b: the second key.

    Unsigned lexicographic order; when one key is a prefix of the other, the shorter sorts first.
    HBase only guarantees the sign of ``Bytes.compareTo``, so only the sign is returned. A Java
    ``byte`` is signed (0x80 is -128), but the comparator reads every byte unsigned:

    >>> compare(b"\x7f", b"\x80")
    -1
    >>> compare(b"ab", b"a")
    1
    >>> compare(b"row1", b"row1")
    0
    """
    return (a > b) - (a < b)


# toStringBinary keeps printable ASCII (space .. '~') except the backslash, which would make
# the output ambiguous; everything else becomes \xNN with upper-case hex.
_PRINTABLE = frozenset(range(0x20, 0x7F)) - {0x5C}
_TO_TEXT = [chr(c) if c in _PRINTABLE else f"\\x{c:02X}" for c in range(256)]


def shared_prefix_length(keys: Iterable[bytes]) -> int:
    """Bytes that every non-empty key in ``keys`` starts with (0 for fewer than two keys).

    keys: the keys; empty ones are skipped.

    Reports label regions by the bytes after it, where keys actually differ.

    >>> shared_prefix_length([b"user1", b"user2", b"user9", b""])
    4
    """
    present = [k for k in keys if k]
    if len(present) < 2:
        return 0
    lo, hi = min(present), max(present)  # the sorted extremes share what all keys share
    n = 0
    while n < min(len(lo), len(hi)) and lo[n] == hi[n]:
        n += 1
    return n


def next_prefix(prefix: bytes) -> bytes:
    r"""The smallest key greater than every key that starts with ``prefix``: the exclusive stop row of
    a prefix scan, as HBase's ``Scan.setStartStopRowForPrefixScan`` computes it.

    prefix: the key prefix.

    The last byte below 0xFF is incremented and what follows it dropped; ``b""`` (unbounded) when
    there is none (``prefix`` empty or all 0xFF).

    >>> next_prefix(b"user1")
    b'user2'
    >>> next_prefix(b"a\xff\xff")
    b'b'
    >>> next_prefix(b"\xff")
    b''
    """
    p = prefix.rstrip(b"\xff")
    return p[:-1] + bytes([p[-1] + 1]) if p else b""


def to_string_binary(b: bytes) -> str:
    r"""``Bytes.toStringBinary``: printable ASCII kept, every other byte (and ``\``) as ``\xNN``.

    b: the bytes to show.

    ``to_bytes_binary(to_string_binary(b)) == b`` for every ``b``.

    >>> print(to_string_binary(b"row\x00\xff\\"))
    row\x00\xFF\x5C
    """
    return "".join([_TO_TEXT[c] for c in bytes(b)])


_HEX_UPPER = "0123456789ABCDEF"
_ESCAPE = re.compile(r"\\x([0-9A-F]{2})")


def to_bytes_binary(s: str, strict: bool = False) -> bytes:
    r"""``Bytes.toBytesBinary``: decode ``\xNN`` escapes (two UPPER-case hex digits) to bytes.

    s: the text, as :func:`to_string_binary` writes it.
    strict: refuse (BadInput) any backslash that does not start a valid ``\xNN`` and any
        character above U+00FF, where HBase reads on silently (the CLI uses strict mode so typos
        are not silent); default False, as HBase.

    Like HBase, every other UTF-16 code unit becomes one byte, truncated to 8 bits (``(byte) ch``
    on a Java ``char``): a character beyond the BMP is a surrogate pair, so it gives two bytes
    (U+1F600 is ``d83d de00``, hence ``3d 00``). HBase silently treats a bogus escape (``\xZZ``,
    ``\xab``) as if the backslash were absent, giving ``xZZ``; that is what happens here too unless
    ``strict``. A ``\x`` with fewer than two characters after it raises BadInput in both modes
    (HBase throws ``StringIndexOutOfBoundsException``).

    >>> to_bytes_binary(r"row\x00\xFF")
    b'row\x00\xff'
    >>> to_bytes_binary(r"\xab")
    b'xab'
    """
    out = bytearray()
    if any(ord(c) > 0xFFFF for c in s):
        # Java walks UTF-16 code units; rewrite s as those units (surrogates as lone chars).
        units = s.encode("utf-16-be", "surrogatepass")
        s = "".join(chr((units[k] << 8) | units[k + 1]) for k in range(0, len(units), 2))
    i, n = 0, len(s)
    while i < n:
        ch = s[i]
        if ch == "\\" and i + 1 < n and s[i + 1] == "x":
            if i + 3 >= n:
                raise KeyshapeError(f"truncated escape at position {i} in '{s}': write \\xNN with two hex digits")
            hd1, hd2 = s[i + 2], s[i + 3]
            if hd1 in _HEX_UPPER and hd2 in _HEX_UPPER:
                out.append(int(hd1 + hd2, 16))
                i += 4
                continue
            if strict:
                raise KeyshapeError(f"bad escape '{s[i : i + 4]}' at position {i} in '{s}': write \\xNN with two UPPER-case hex digits, e.g. \\xAB")
            i += 1  # HBase drops the backslash and reads on from the 'x'
            continue
        if strict and (ch == "\\" or ord(ch) > 0xFF):
            raise KeyshapeError(f"unexpected '{ch}' at position {i} in '{s}': a literal backslash is \\x5C and other bytes are \\xNN")
        out.append(ord(ch) & 0xFF)
        i += 1
    return bytes(out)


def split(a: bytes, b: bytes, num: int, inclusive: bool = False) -> list[bytes]:
    """``Bytes.split(a, b, inclusive, num)``: ``num`` evenly spaced keys between ``a`` and ``b``.

    a: the start key (returned first).
    b: the end key (returned last); must sort after ``a`` once both are padded.
    num: how many dividing keys, >= 1.
    inclusive: count ``b`` itself in the range, as HBase's ``inclusive``; default False.

    Returns ``num + 2`` keys: ``a``, the ``num`` dividing keys, then ``b``. The shorter key is
    tail-padded with 0x00 to the longer's length and both are read as unsigned big-endian
    integers; dividing key ``i`` is ``a + i * ((b - a [+ 1 if inclusive]) // (num + 1))``, as
    many bytes long as the padded keys. When the range holds fewer than ``num + 1`` values,
    HBase appends one 0x00 to both padded keys and tries again (as often as needed); in that
    case the first and last keys returned are those padded forms, not ``a`` and ``b``.

    Raises BadInput (a ValueError) when ``a >= b`` after padding (HBase: "b <= a") or ``num <= 0``.

    >>> split(b"a", b"d", 2)
    [b'a', b'b', b'c', b'd']
    """
    a, b = bytes(a), bytes(b)
    width = max(len(a), len(b))
    a_pad, b_pad = a.ljust(width, b"\x00"), b.ljust(width, b"\x00")
    if a_pad >= b_pad:
        raise KeyshapeError(f"cannot split: end key '{to_string_binary(b)}' must sort after start key '{to_string_binary(a)}' (HBase: b <= a)")
    if num <= 0:
        raise KeyshapeError(f"cannot split into num={num} pieces: num must be >= 1")
    first, last = a, b
    while True:
        start, stop = int.from_bytes(a_pad, "big"), int.from_bytes(b_pad, "big")
        diff = stop - start + (1 if inclusive else 0)
        if diff >= num + 1:
            break
        a_pad += b"\x00"
        b_pad += b"\x00"
        first, last = a_pad, b_pad
    interval = diff // (num + 1)
    width = len(a_pad)
    middle = [(start + interval * i).to_bytes(width, "big") for i in range(1, num + 1)]
    return [first, *middle, last]
