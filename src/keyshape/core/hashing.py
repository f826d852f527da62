"""Java hash codes and the salt functions of Phoenix, OpenTSDB, HBaseWD and GBIF, bit for bit.

Java ints are signed 32-bit and wrap on overflow; ``%`` truncates toward zero and
``Math.abs(Integer.MIN_VALUE)`` is still negative. These helpers reproduce all three quirks,
because each salt function below inherits them and a salt that is off by one bucket for one key
in four billion still lands a row in the wrong region.

The salt functions are pinned by tests against the released jars themselves (phoenix-core-client
5.2.1, opentsdb 2.4.1, hbasewd 0.1.0; tools/golden/UpstreamSalts.java -> tests/data/salt_golden.json);
GBIF's ``ModulusSalt`` by its source and its own test's vectors (tests/property/test_gbif_salt.py).
"""

from __future__ import annotations

import functools
import hashlib
import struct
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from keyshape.core import native
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError

__all__ = [
    "POLY",
    "SIGNED_POLY",
    "java_string_hash",
    "java_long_hash",
    "java_bytes_hash",
    "java_bytes_hash_many",
    "md5_hex",
    "crc32",
    "murmur3_32",
    "phoenix_salt",
    "phoenix_salt_many",
    "opentsdb_salt",
    "hbasewd_one_byte_hash",
    "hbasewd_one_byte_hash_many",
    "gbif_modulus_salt",
]

_INT_MIN = -(2**31)


def _to_int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def _java_rem(a: int, n: int) -> int:
    """Java's ``a % n`` for ints: the remainder takes the sign of the dividend."""
    r = abs(a) % n
    return -r if a < 0 else r


def _java_abs(a: int) -> int:
    """Java's ``Math.abs(int)``: ``Integer.MIN_VALUE`` stays negative."""
    return a if a == _INT_MIN else abs(a)


def java_string_hash(s: str) -> int:
    """``String.hashCode()``: ``h = 31*h + c`` over the UTF-16 code units of ``s``, signed 32-bit.

    s: the text.

    Characters outside the BMP count as two code units (a surrogate pair), as in Java.

    >>> java_string_hash("hello")
    99162322
    """
    units = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return _to_int32(h)


def java_long_hash(value: int) -> int:
    """``Long.hashCode(value)``: ``(int)(value ^ (value >>> 32))``, signed 32-bit (``value``: a
    signed 64-bit int, KeyshapeError otherwise)."""
    if not -(2**63) <= value < 2**63:
        raise KeyshapeError(f"{value} does not fit a Java long (-2**63..2**63-1)")
    u = value & 0xFFFFFFFFFFFFFFFF
    return _to_int32(u ^ (u >> 32))


def java_bytes_hash(b: bytes) -> int:
    r"""``Arrays.hashCode(byte[])`` (= ``Bytes.hashCode``): ``h = 31*h + byte`` from ``h = 1``.

    b: the bytes.

    Bytes are SIGNED in Java (0x80..0xFF count as -128..-1); the result is signed 32-bit.
    It is ``31**len + poly(b)`` over the signed bytes (:data:`SIGNED_POLY`).

    >>> java_bytes_hash(b"\x80")  # 31 * 1 + (-128): the byte counts as -128
    -97
    """
    b = bytes(b)
    if native.AVAILABLE:
        return native.bytes_hash(b)  # type: ignore[no-any-return]
    n = len(b)
    h = (SIGNED_POLY[n](b) + (_POW31[n] if n <= 256 else pow(31, n, 1 << 32))) & 0xFFFFFFFF
    return _to_int32(h)


# ``sum(b[i] * 31**(len-1-i))``, the core of both Java hashes: per byte in a Python loop is what
# costs, so each length gets its own unrolled Horner over big-endian byte pairs. The pair (a, b)
# contributes a*31 + b to a step of 31**2: bytes as unsigned values (POLY: the ASCII code units
# of String.hashCode) or as Java's signed bytes (SIGNED_POLY: Arrays.hashCode).
_S8 = [c - 256 if c > 127 else c for c in range(256)]


@functools.lru_cache(maxsize=2)
def _pairs(signed: bool) -> list[int]:
    """The 65,536 pair values, made on first use (10 ms: every process importing keyshape paid
    it at start-up, and with the C kernels built the per-key Python hashes seldom run)."""
    if signed:
        return [_S8[x >> 8] * 31 + _S8[x & 0xFF] for x in range(1 << 16)]
    return [(x >> 8) * 31 + (x & 0xFF) for x in range(1 << 16)]


_POW31 = [pow(31, k, 1 << 32) for k in range(257)]
_POLY_MAX = 128  # longer keys take a loop (and the generated expression stays shallow)


def _poly_source(n: int) -> str:
    """``def poly(j)`` for keys of exactly ``n`` bytes: one ``struct`` unpack into big-endian
    pairs and the Horner steps written out (no loop, no per-call lookup of the layout)."""
    pairs = n // 2
    expr = "B[j[0]]" if n & 1 else "0"
    for i in range(pairs):
        expr = f"({expr}) * 961 + P[x{i}]" if expr != "0" else f"P[x{i}]"
    if not pairs:
        return f"def poly(j):\n    return {expr}\n"
    names = ", ".join(f"x{i}" for i in range(pairs))
    return f"def poly(j):\n    {names}, = U(j)\n    return {expr}\n"


class _Polys(dict):  # type: ignore[type-arg]
    """``length -> poly`` (:func:`_poly_source`), each compiled on first use; the result is
    exact below :data:`_POLY_MAX` bytes and correct modulo 2**32 beyond."""

    def __init__(self, signed: bool) -> None:
        super().__init__()
        self.signed = signed
        self.byte = byte = _S8 if signed else list(range(256))

        def loop(j: bytes) -> int:
            h = 0
            for c in j:
                h = (h * 31 + byte[c]) & 0xFFFFFFFF
            return h

        self.loop = loop

    def __missing__(self, n: int) -> Callable[[bytes], int]:
        if not 0 <= n <= _POLY_MAX:
            return self.loop
        env: dict[str, Any] = {"P": _pairs(self.signed), "B": self.byte, "U": struct.Struct(f">{n & 1}x{n // 2}H").unpack}
        exec(compile(_poly_source(n), f"<keyshape poly {n}>", "exec"), env)  # noqa: S102
        fn: Callable[[bytes], int] = env["poly"]
        self[n] = fn
        return fn


POLY = _Polys(signed=False)
SIGNED_POLY = _Polys(signed=True)


def _signed_poly_u32(keys: KeyArray) -> np.ndarray:
    """``sum(b[i] * 31**(len-1-i)) mod 2**32`` of every key, bytes signed, as uint32.

    Horner's rule runs over the columns of the zero-padded matrix, all rows at once, in uint32
    arithmetic (numpy wraps it modulo 2**32, as Java wraps int). A key shorter than the matrix
    picks up ``31**(width-len)`` from its trailing zero columns; 31 is odd, hence invertible
    modulo 2**32, so multiplying by its inverse power removes that factor exactly.
    """
    matrix = keys.matrix.view(np.int8)
    n, width = matrix.shape
    h = np.zeros(n, dtype=np.uint32)
    for col in range(width):
        h *= np.uint32(31)
        h += matrix[:, col].astype(np.uint32)  # int8 -> uint32 wraps: -1 becomes 2**32-1
    if width and not keys.is_fixed:
        h *= _inverse_powers_of_31(width)[width - keys.lengths]
    return h


def _powers_of_31(n: int) -> np.ndarray:
    """``31**k mod 2**32`` for k = 0..n, as uint32."""
    out, p = [], 1
    for _ in range(n + 1):
        out.append(p)
        p = p * 31 & 0xFFFFFFFF
    return np.array(out, dtype=np.uint32)


def _inverse_powers_of_31(n: int) -> np.ndarray:
    """``31**-k mod 2**32`` for k = 0..n, as uint32."""
    inv = pow(31, -1, 1 << 32)
    out, p = [], 1
    for _ in range(n + 1):
        out.append(p)
        p = p * inv & 0xFFFFFFFF
    return np.array(out, dtype=np.uint32)


def _key_array(keys: Sequence[bytes] | KeyArray) -> KeyArray:
    return keys if isinstance(keys, KeyArray) else KeyArray.from_keys(keys)


def java_bytes_hash_many(keys: Sequence[bytes] | KeyArray) -> np.ndarray:
    """:func:`java_bytes_hash` of every key of ``keys``, as an ``int32`` array in input order.

    ``Arrays.hashCode(a) = 31**n + sum(a[i] * 31**(n-1-i))`` modulo 2**32 (signed bytes),
    computed for all keys at once on a :class:`~keyshape.core.keyarray.KeyArray` (built from a list of
    bytes when given one).
    """
    ka = _key_array(keys)
    if len(ka) == 0:
        return np.zeros(0, dtype=np.int32)
    h = _signed_poly_u32(ka)
    h += _powers_of_31(ka.width)[ka.lengths]
    return h.view(np.int32)


def md5_hex(b: bytes) -> str:
    """MD5 of ``b`` as 32 lower-case hex digits, like HBase's ``MD5Hash.getMD5AsHex``.

    b: the bytes.

    >>> md5_hex(b"user1")
    '24c9e15e52afc47c225b757e7bee1f9d'
    """
    return hashlib.md5(bytes(b)).hexdigest()


def crc32(b: bytes) -> int:
    """CRC-32 of ``b`` as an unsigned value 0..2**32-1, like ``java.util.zip.CRC32.getValue()``.

    b: the bytes.

    >>> crc32(b"user1")
    2354152789
    """
    return zlib.crc32(bytes(b)) & 0xFFFFFFFF


def murmur3_32(b: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86_32 of ``b``, signed 32-bit, like HBase's ``MurmurHash3.hash(b, 0, len, seed)``.

    b: the bytes.
    seed: the hash's seed; default 0.

    >>> murmur3_32(b"user1")
    -989117379
    """
    data = bytes(b)
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed & mask
    n_blocks = len(data) // 4
    for i in range(0, n_blocks * 4, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
        h = ((h << 13) | (h >> 19)) & mask
        h = (h * 5 + 0xE6546B64) & mask
    tail = data[n_blocks * 4 :]
    if tail:
        k = int.from_bytes(tail, "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return _to_int32(h)


def _check_buckets(buckets: int, high: int, who: str) -> None:
    if isinstance(buckets, bool) or not isinstance(buckets, int) or not 1 <= buckets <= high:
        raise KeyshapeError(f"{who}: buckets must be an int in 1..{high}, got {buckets!r}")


def phoenix_salt(key: bytes, buckets: int) -> int:
    """Phoenix ``SaltingUtil.getSaltingByte(key, 0, len, buckets)`` as an unsigned value.

    key: the row key WITHOUT its salt byte.
    buckets: Phoenix's SALT_BUCKETS, 1..256 (BadInput otherwise).

    ``(byte) Math.abs(Arrays.hashCode(key) % buckets)``: always in ``0..buckets-1``.

    >>> phoenix_salt(b"row1", 16)
    8
    """
    _check_buckets(buckets, 256, "phoenix_salt")
    return abs(_java_rem(java_bytes_hash(key), buckets))


def phoenix_salt_many(keys: Sequence[bytes] | KeyArray, buckets: int) -> np.ndarray:
    """:func:`phoenix_salt` of every key of ``keys`` over ``buckets`` buckets, as a ``uint8`` array
    in input order."""
    _check_buckets(buckets, 256, "phoenix_salt")
    h = java_bytes_hash_many(keys).astype(np.int64)
    return np.abs(np.fmod(h, buckets)).astype(np.uint8)


def opentsdb_salt(metric: bytes, tags: bytes, buckets: int = 20, width: int = 1) -> bytes:
    """OpenTSDB ``RowKey.prefixKeyWithSalt``: the ``width`` salt bytes for a data row.

    The hash is ``Arrays.hashCode(metric + tags)``: the metric UID (``metric``) and the tag UID
    pairs (``tags``), i.e.
    the row key without its salt and without the 4-byte base timestamp. The bucket is
    ``|hash % buckets|`` (Java remainder, then negated if negative), written big-endian over
    ``width`` bytes with Java's int shifts (a shift of 32 or more wraps modulo 32, as in
    ``RowKey.getSaltBytes``). A metric UID of all zero bytes (the global annotation row) is not
    salted: the salt stays all zeros. ``width`` is ``tsd.storage.salt.width`` (1..8; 0 disables
    salting and returns ``b""``), ``buckets`` is ``tsd.storage.salt.buckets`` (default 20).
    """
    if not 0 <= width <= 8:
        raise KeyshapeError(f"opentsdb_salt: width must be 0..8 (Salt width must be between 0 and 8), got {width}")
    if width == 0:
        return b""
    if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
        raise KeyshapeError(f"opentsdb_salt: buckets must be a positive int, got {buckets!r}")
    metric, tags = bytes(metric), bytes(tags)
    if not metric or metric == bytes(len(metric)):
        return bytes(width)
    bucket = abs(_java_rem(java_bytes_hash(metric + tags), buckets))
    out = bytearray(width)
    shift = 0
    for i in range(1, width + 1):
        out[width - i] = (bucket >> (shift % 32)) & 0xFF
        shift += 8
    return bytes(out)


def hbasewd_one_byte_hash(key: bytes, buckets: int) -> int:
    """HBaseWD ``RowKeyDistributorByHashPrefix.OneByteSimpleHash(buckets).getHashPrefix(key)[0]``.

    As an unsigned byte value. The hash is ``Arrays.hashCode``-style (``31*h + byte`` from 1);
    the prefix is ``(byte)(Math.abs(hash) % buckets)`` (``key``: the row key without its
    prefix). Because ``Math.abs(Integer.MIN_VALUE)``
    is negative, that one hash value gives a byte OUTSIDE ``0..buckets-1`` (e.g. 248 for 10
    buckets), exactly as HBaseWD does. ``buckets`` is 1..256.
    """
    _check_buckets(buckets, 256, "hbasewd_one_byte_hash")
    return _java_rem(_java_abs(java_bytes_hash(key)), buckets) & 0xFF


def hbasewd_one_byte_hash_many(keys: Sequence[bytes] | KeyArray, buckets: int) -> np.ndarray:
    """:func:`hbasewd_one_byte_hash` of every key of ``keys`` over ``buckets`` buckets, as a
    ``uint8`` array in input order."""
    _check_buckets(buckets, 256, "hbasewd_one_byte_hash")
    with np.errstate(over="ignore"):
        h = np.abs(java_bytes_hash_many(keys)).astype(np.int64)  # int32 abs wraps like Java
    return (np.fmod(h, buckets) & 0xFF).astype(np.uint8)


def gbif_modulus_salt(key: str, modulus: int) -> bytes:
    """GBIF maps' ``org.gbif.maps.common.hbase.ModulusSalt(modulus).salt(key)``: the salted row key.

    ``"%0Nd" % ((key.hashCode() & 0x0FFFFFFF) % modulus) + ":" + key`` as UTF-8, where N is the
    number of decimal digits of ``modulus - 1`` (e.g. ``"03:bingo"`` for modulus 28; ``key``:
    the unsalted key, as text). The mask
    keeps 28 bits, not 31, exactly as GBIF's code does. The region boundaries of a table
    pre-split for it (``ModulusSalt.getTableRegions``) are ``bucket_splits(modulus, "decimal")``.
    ``modulus`` is 2..2**31-1 (GBIF's modulus 1 pads to a negative width and fails).
    """
    if isinstance(modulus, bool) or not isinstance(modulus, int) or not 2 <= modulus <= 2**31 - 1:
        raise KeyshapeError(f"gbif_modulus_salt: modulus must be an int in 2..2**31-1, got {modulus!r}")
    salt = (java_string_hash(key) & 0x0FFFFFFF) % modulus
    # Java's String.getBytes(UTF_8) writes '?' for an unpaired surrogate; "replace" does too.
    return f"{salt:0{len(str(modulus - 1))}d}:{key}".encode("utf-8", "replace")
