"""Prefix strategies: how a row key is salted or hashed so writes spread over regions.

Each strategy has the shape of Phoenix's ``SaltingUtil`` / HBaseWD's ``AbstractRowKeyDistributor``:
compute the prefix of a key (:meth:`Prefix.prefix_for`, vectorized as :meth:`Prefix.prefix_many`),
list every prefix it can produce (:meth:`Prefix.bucket` / :meth:`Prefix.buckets`), and strip the
prefix again (:meth:`Prefix.strip`).

Byte layouts (``J`` = the hashed fields joined by the separator, ``K`` = the key without prefix,
``sep`` = the separator or nothing):

================  ==============================================================================
none              ``K``
md5               ``md5_hex(J)[:length] + sep + K`` (length 4..32)
md5-full          ``md5_hex(K)`` (fields not recoverable)
java-hash-short   ``Bytes.toBytes((short)(J.hashCode() & 0x7FFF)) + K`` (2 bytes, no separator)
crc32             ``"%04x" % (crc32(J) & 0xFFFF) + sep + K``
mod               ``"%0Nd" % ((J.hashCode() & 0x7FFFFFFF) % buckets) + sep + K``, N = max(2, digits)
random            a random bucket in the ``mod`` text form + sep + K
phoenix           ``(byte) phoenix_salt(K, buckets) + K`` (buckets <= 256)
opentsdb          ``opentsdb_salt(metric, tags, buckets, width) + K``; J = metric + tag fields
================  ==============================================================================

``J.hashCode()`` is Java's ``String.hashCode`` of J read as UTF-8 text (ISO-8859-1 when J is not
valid UTF-8, i.e. ``new String(bytes, ISO_8859_1)``), which is what a Java writer gets when it
builds J as a String. md5 and crc32 hash the bytes of J.
"""

from __future__ import annotations

import functools

import hashlib
from collections.abc import Sequence
from typing import overload

import numpy as np

from keyshape.core import batchhash, hashing, hbytes
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError

__all__ = ["STRATEGIES", "Prefix", "make_prefix", "java_string_hash_many"]

# More buckets than this cannot be listed or fanned out to (md5 with length >= 5, md5-full).
MAX_LISTED_BUCKETS = 65536


def _j_text(j: bytes) -> str:
    try:
        return j.decode("utf-8")
    except UnicodeDecodeError:
        return j.decode("latin-1")


def java_string_hash_many(js: Sequence[bytes] | KeyArray) -> np.ndarray:
    """``String.hashCode`` of every ``J`` (decoded as :func:`_j_text` does), as uint64 values
    in 0..2**32-1.

    ASCII input is vectorized: for ASCII, ``String.hashCode == Arrays.hashCode(bytes) - 31**len``
    (Arrays.hashCode starts from 1, String.hashCode from 0), so it reuses the polynomial of
    :func:`keyshape.core.hashing.java_bytes_hash_many`.
    """
    return _string_hash_u32(js).astype(np.uint64)


def _string_hash_u32(js: Sequence[bytes] | KeyArray) -> np.ndarray:
    """:func:`java_string_hash_many` as uint32 (the prefixes take their bits from it)."""
    ka = js if isinstance(js, KeyArray) else KeyArray.from_keys(js)
    if len(ka) == 0:
        return np.zeros(0, dtype=np.uint32)
    if not ka.matrix.size or int(ka.matrix.max()) < 0x80:  # the zero padding is ASCII too
        return hashing._signed_poly_u32(ka)
    return np.array([hashing.java_string_hash(_j_text(j)) & 0xFFFFFFFF for j in ka.tolist()], dtype=np.uint32)


@functools.lru_cache(maxsize=16)
def _digit_table(width: int, base: int) -> np.ndarray:
    """Row ``v`` is ``"%0*d"`` (base 10) or ``"%0*x"`` (base 16) of ``v``, as uint8: the digits of
    a batch are then one row gather instead of a division per digit column."""
    v = np.arange(base**width, dtype=np.uint64)
    powers = np.array([base**k for k in range(width - 1, -1, -1)], dtype=np.uint64)
    d = ((v[:, None] // powers) % np.uint64(base)).astype(np.uint8)
    return np.where(d < 10, d + 48, d + 87).astype(np.uint8)  # 0-9, then a-f


def _hex_digits(values: np.ndarray, width: int) -> np.ndarray:
    """``"%0*x" % (width, v)`` of every value in 0..16**width-1 (width <= 16), as an ``(n, width)``
    uint8 matrix."""
    if width <= 4:
        return batchhash.gather_rows(_digit_table(width, 16), values)
    be = values.astype(">u8").view(np.uint8).reshape(len(values), 8)
    return batchhash.hex_matrix(be)[:, 16 - width :]


def _decimal_digits(values: np.ndarray, width: int) -> np.ndarray:
    """``"%0*d" % (width, v)`` of every value in 0..10**width-1, as an ``(n, width)`` uint8 matrix."""
    if width <= 4:
        return batchhash.gather_rows(_digit_table(width, 10), values)
    powers = np.array([10**k for k in range(width - 1, -1, -1)], dtype=np.uint64)
    return (48 + (values.astype(np.uint64)[:, None] // powers) % np.uint64(10)).astype(np.uint8)


def _md5_hex_matrix(materials: KeyArray, width: int) -> np.ndarray:
    """The first ``width`` hex digits of the MD5 of every key, as an ``(n, width)`` uint8 matrix
    (numpy MD5 kernel, :func:`keyshape.core.batchhash.md5_hex_many`)."""
    return batchhash.md5_hex_many(materials, width)


class Prefix:
    """Base strategy: no prefix. Subclasses override the class attributes and methods."""

    name = "none"
    material = ""  # what the prefix is computed from: "J", "K" or "" (nothing)
    sep_after = False  # whether the key separator follows the prefix
    width = 0  # prefix length in bytes
    recoverable = True  # whether K can be recovered from the key
    salted = False  # whether the key space is cut into buckets that a scan must fan out to
    route = "none"  # how prefix_many computes a batch (benchmarks print it)

    def __init__(self, separator: bytes = b"") -> None:
        self.separator = separator

    @property
    def head_width(self) -> int:
        """Bytes before K: the prefix plus the separator that follows it."""
        return self.width + (len(self.separator) if self.sep_after and self.width else 0)

    def prefix_for(self, material: bytes) -> bytes:
        """The prefix for one key, from its J or K (see :attr:`material`)."""
        return b""

    @overload
    def prefix_many(self, materials: KeyArray) -> KeyArray: ...
    @overload
    def prefix_many(self, materials: Sequence[bytes]) -> list[bytes]: ...

    def prefix_many(self, materials: Sequence[bytes] | KeyArray) -> list[bytes] | KeyArray:
        """:meth:`prefix_for` of every material, in order: a list of bytes for a sequence, a
        :class:`~keyshape.core.keyarray.KeyArray` (fixed width :attr:`width`) for a KeyArray."""
        ka = materials if isinstance(materials, KeyArray) else KeyArray.from_keys(materials)
        out = KeyArray(self._prefix_matrix(ka))
        return out if isinstance(materials, KeyArray) else out.tolist()

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        """The prefixes of all materials as an ``(n, width)`` uint8 matrix; subclasses
        vectorize this, the default calls :meth:`prefix_for` per key."""
        raw = b"".join([self.prefix_for(m) for m in materials.tolist()])
        return np.frombuffer(raw, dtype=np.uint8).reshape(len(materials), self.width)

    def apply(self, prefix: bytes, k: bytes) -> bytes:
        """The full key from a prefix and K."""
        if not self.width:
            return k
        return prefix + self.separator + k if self.sep_after else prefix + k

    def bucket_count(self) -> int | None:
        """How many distinct prefixes exist (None: no prefix)."""
        return None

    def bucket(self, i: int) -> bytes:
        """The i-th prefix in sorted byte order (0 <= i < bucket_count())."""
        raise KeyshapeError(f"prefix strategy {self.name!r} has no buckets")

    def buckets(self) -> list[bytes] | None:
        """Every prefix, sorted; None for unsalted strategies.

        Raises KeyshapeError when there are more than 65536 (md5 with length >= 5).
        """
        if not self.salted:
            return None
        n = self.bucket_count()
        if n is None:  # a salted strategy always counts its buckets; an unsalted one has none
            return None
        if n > MAX_LISTED_BUCKETS:
            raise KeyshapeError(
                f"prefix {self.name!r} has {n} possible prefixes, too many to list or fan out to; "
                f"use a shorter prefix (at most {MAX_LISTED_BUCKETS} buckets) or query by the hashed fields"
            )
        return [self.bucket(i) for i in range(n)]

    def strip(self, key: bytes) -> bytes:
        """K: the key without its prefix (and the separator after it)."""
        head = self.head_width
        if len(key) < head:
            raise KeyshapeError(
                f"key {hbytes.to_string_binary(key)} is shorter than the {head}-byte {self.name} prefix; was it written with this schema?"
            )
        if self.sep_after and self.separator and key[self.width : head] != self.separator:
            raise KeyshapeError(
                f"key {hbytes.to_string_binary(key)} lacks the separator after its {self.name} prefix; was it written with this schema?"
            )
        return key[head:]


class Md5Prefix(Prefix):
    name, material, sep_after, salted = "md5", "J", True, True
    route = "numpy MD5 kernel (keyshape.core.batchhash), threaded"

    def __init__(self, separator: bytes = b"", length: int = 4) -> None:
        super().__init__(separator)
        self.width = length

    def prefix_for(self, material: bytes) -> bytes:
        return hashlib.md5(material).hexdigest()[: self.width].encode("ascii")

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        return _md5_hex_matrix(materials, self.width)

    def bucket_count(self) -> int:
        return 16**self.width

    def bucket(self, i: int) -> bytes:
        return b"%0*x" % (self.width, i)


class Md5FullPrefix(Prefix):
    """The key is ``md5_hex(K)`` alone: point reads only, fields kept in a column."""

    name, material, width, recoverable = "md5-full", "K", 32, False
    route = "numpy MD5 kernel (keyshape.core.batchhash), threaded"

    def prefix_for(self, material: bytes) -> bytes:
        return hashlib.md5(material).hexdigest().encode("ascii")

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        return _md5_hex_matrix(materials, 32)

    def apply(self, prefix: bytes, k: bytes) -> bytes:
        return prefix

    def bucket_count(self) -> int:
        return 16**32

    def bucket(self, i: int) -> bytes:
        return b"%032x" % i

    def strip(self, key: bytes) -> bytes:
        raise KeyshapeError(
            "md5-full keys are md5_hex(K): the fields cannot be recovered from the key; "
            "store them in a column, or use strategy 'md5' (prefix + fields)"
        )


class JavaHashShortPrefix(Prefix):
    name, material, width, salted = "java-hash-short", "J", 2, True
    route = "numpy String.hashCode (Horner over columns)"

    def prefix_for(self, material: bytes) -> bytes:
        return hbytes.short(hashing.java_string_hash(_j_text(material)) & 0x7FFF)

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        h = (_string_hash_u32(materials) & np.uint32(0x7FFF)).astype(">u2")
        return h.view(np.uint8).reshape(len(materials), 2)

    def bucket_count(self) -> int:
        return 0x8000

    def bucket(self, i: int) -> bytes:
        return hbytes.short(i)


class Crc32Prefix(Prefix):
    name, material, width, sep_after, salted = "crc32", "J", 4, True, True
    route = "numpy CRC-32 table kernel (keyshape.core.batchhash), threaded"

    def prefix_for(self, material: bytes) -> bytes:
        return b"%04x" % (hashing.crc32(material) & 0xFFFF)

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        return _hex_digits(batchhash.crc32_many(materials) & np.uint32(0xFFFF), 4)

    def bucket_count(self) -> int:
        return 0x10000

    def bucket(self, i: int) -> bytes:
        return b"%04x" % i


class ModPrefix(Prefix):
    name, material, sep_after, salted = "mod", "J", True, True
    route = "numpy String.hashCode (Horner over columns)"

    def __init__(self, separator: bytes = b"", buckets: int = 16) -> None:
        super().__init__(separator)
        self.n = buckets
        self.width = max(2, len(str(buckets - 1)))

    def prefix_for(self, material: bytes) -> bytes:
        h = hashing.java_string_hash(_j_text(material)) & 0x7FFFFFFF
        return self.bucket(h % self.n)

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        idx = (_string_hash_u32(materials) & np.uint32(0x7FFFFFFF)) % np.uint32(self.n)
        return _decimal_digits(idx, self.width)

    def bucket_count(self) -> int:
        return self.n

    def bucket(self, i: int) -> bytes:
        return b"%0*d" % (self.width, i)


class RandomPrefix(ModPrefix):
    """A random bucket per write: even writes, but every read must visit every bucket."""

    name, material = "random", ""
    route = "numpy random generator"

    def __init__(self, separator: bytes = b"", buckets: int = 16, seed: int | None = None) -> None:
        super().__init__(separator, buckets)
        self._rng = np.random.default_rng(seed)

    def prefix_for(self, material: bytes) -> bytes:
        return self.bucket(int(self._rng.integers(self.n)))

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        return _decimal_digits(self._rng.integers(self.n, size=len(materials)), self.width)


class PhoenixPrefix(Prefix):
    name, material, width, salted = "phoenix", "K", 1, True
    route = "numpy Arrays.hashCode (Horner over columns)"

    def __init__(self, separator: bytes = b"", buckets: int = 16) -> None:
        super().__init__(separator)
        self.n = buckets

    def prefix_for(self, material: bytes) -> bytes:
        return bytes([hashing.phoenix_salt(material, self.n)])

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        return hashing.phoenix_salt_many(materials, self.n).reshape(len(materials), 1)

    def bucket_count(self) -> int:
        return self.n

    def bucket(self, i: int) -> bytes:
        return bytes([i])


class OpenTsdbPrefix(Prefix):
    """OpenTSDB's salt over the metric UID (the first hashed field) and the tag fields.

    The salt of bucket ``b`` is ``width`` bytes where byte ``width-i`` is ``b >> (8*(i-1) % 32)``:
    Java masks int shift counts to 5 bits, so from width 5 on the low bytes of ``b`` come round
    again (bucket 14 at width 5 is ``0e 00 00 00 0e``) and the salts no longer sort like the
    bucket numbers. Below width 5, buckets beyond ``256**width`` wrap onto the same salts.
    :meth:`buckets` lists the distinct salts in byte order, which is what scans fan out to and
    ``prefix`` splits cut at.
    """

    name, material, salted = "opentsdb", "J", True
    route = "numpy Arrays.hashCode (Horner over columns)"

    def __init__(self, separator: bytes = b"", buckets: int = 20, width: int = 1, metric_width: int = 3) -> None:
        super().__init__(separator)
        self.n, self.width, self.metric_width = buckets, width, metric_width
        self._sorted: list[bytes] | None = None

    def prefix_for(self, material: bytes) -> bytes:
        mw = self.metric_width
        return hashing.opentsdb_salt(material[:mw], material[mw:], self.n, self.width)

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        # Vector form of hashing.opentsdb_salt (pinned against it by the tests).
        bucket = np.abs(np.fmod(hashing.java_bytes_hash_many(materials).astype(np.int64), self.n))
        unsalted = ~materials.matrix[:, : self.metric_width].any(axis=1)  # zero or empty metric
        bucket[unsalted] = 0
        return self._salt_matrix(bucket)

    def _salt_matrix(self, bucket: np.ndarray) -> np.ndarray:
        # Byte width-i is bucket >> (8*(i-1) % 32): Java masks int shift counts to 5 bits.
        shifts = np.array([(8 * (self.width - 1 - col)) % 32 for col in range(self.width)], dtype=np.int64)
        return ((bucket.astype(np.int64)[:, None] >> shifts) & 0xFF).astype(np.uint8)

    def bucket_count(self) -> int:
        """How many DISTINCT salts the buckets produce (fewer than ``buckets`` when
        ``256**width`` is smaller)."""
        return self.n if self.width > 4 else min(self.n, 256**self.width)

    def bucket(self, i: int) -> bytes:
        if not 0 <= i < self.bucket_count():
            raise KeyshapeError(f"opentsdb bucket index {i} is out of range 0..{self.bucket_count() - 1}")
        if self.width <= 4:
            return i.to_bytes(self.width, "big")  # salts sort like the bucket numbers here
        if self.n <= MAX_LISTED_BUCKETS:
            return self._sorted_salts()[i]
        return self._salt_matrix(np.array([self._kth_by_salt(i)]))[0].tobytes()

    def buckets(self) -> list[bytes] | None:
        n = self.bucket_count()
        if n > MAX_LISTED_BUCKETS:
            return super().buckets()  # raises with the advice
        if self.width <= 4:
            return [i.to_bytes(self.width, "big") for i in range(n)]
        return list(self._sorted_salts())

    def _sorted_salts(self) -> list[bytes]:
        if self._sorted is None:
            m = self._salt_matrix(np.arange(self.n, dtype=np.int64))
            self._sorted = sorted(m[r].tobytes() for r in range(self.n))
        return self._sorted

    def _kth_by_salt(self, k: int) -> int:
        """The bucket whose salt is the k-th smallest, without listing them all.

        From width 5 on, the first four salt bytes are the bytes of the bucket number taken in
        the order ``(width-1-j) % 4`` (j = 0..3) and they decide the order, so this picks those
        bytes one at a time, counting how many buckets below ``n`` fit each choice.
        """
        order = [(self.width - 1 - j) % 4 for j in range(4)]  # byte positions, 0 = least significant
        fixed: dict[int, int] = {}
        for pos in order:
            for v in range(256):
                c = _count_below(self.n, {**fixed, pos: v})
                if k < c:
                    fixed[pos] = v
                    break
                k -= c
        return sum(v << (8 * p) for p, v in fixed.items())


def _count_below(n: int, fixed: dict[int, int]) -> int:
    """How many b in 0..n-1 (32-bit) have byte ``fixed[p]`` at position p (0 = least significant)."""
    total = 0
    for pos in range(3, -1, -1):
        nd = (n >> (8 * pos)) & 0xFF
        free_below = 256 ** sum(1 for q in range(pos) if q not in fixed)
        if pos in fixed:
            if fixed[pos] < nd:
                total += free_below
            if fixed[pos] != nd:
                return total
        else:
            total += nd * free_below
    return total


STRATEGIES: dict[str, type[Prefix]] = {
    cls.name: cls
    for cls in (
        Prefix,
        Md5Prefix,
        Md5FullPrefix,
        JavaHashShortPrefix,
        Crc32Prefix,
        ModPrefix,
        RandomPrefix,
        PhoenixPrefix,
        OpenTsdbPrefix,
    )
}


def make_prefix(strategy: str, separator: bytes = b"", **options: int) -> Prefix:
    """Build a strategy by name with its (already validated) options."""
    return STRATEGIES[strategy](separator, **options)
