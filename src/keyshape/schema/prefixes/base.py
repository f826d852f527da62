"""The prefix strategy interface (:class:`Prefix`, which is also the ``none`` strategy) and the
helpers the strategies share (``String.hashCode`` of J, digit matrices).

A strategy is one class in one module of this package: its options with their bounds and
defaults, its byte layout, the word a region label uses for it, what lint and index tables need
to know about it, whether it is deterministic and recoverable, and the lines the compiled
per-record codec runs. Nothing outside the package asks for a strategy by name.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, overload

import numpy as np

from keyshape.core import batchhash, hashing, hbytes
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError

__all__ = ["Prefix", "MAX_LISTED_BUCKETS", "REGISTRY", "java_string_hash_many", "StringHashLines"]

# More buckets than this cannot be listed or fanned out to (md5 with length >= 5, md5-full).
MAX_LISTED_BUCKETS = 65536

# name -> strategy class; every subclass that sets its own ``name`` registers itself here.
REGISTRY: dict[str, type[Prefix]] = {}

# The compiler's ``String.hashCode`` lines: (env, material) -> lines setting ``h`` (its low 31
# bits at least) from the J bytes in ``material``; the strategies that hash J as Java text use it.
StringHashLines = Callable[[dict[str, Any], str], list[str]]


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


def _digits_below(heads: np.ndarray, n: int) -> np.ndarray:
    """Rows of ``heads`` that are decimal digits whose number is below ``n`` (a bucket written "%0Nd")."""
    value = np.zeros(len(heads), dtype=np.int64)
    for c in range(heads.shape[1]):
        value = value * 10 + (heads[:, c].astype(np.int64) - 48)
    return ((heads >= 48) & (heads <= 57)).all(axis=1) & (value < n)


class Prefix:
    """Base strategy: no prefix. Subclasses override the class attributes and methods."""

    name = "none"
    material = ""  # what the prefix is computed from: "J", "K" or "" (nothing)
    sep_after = False  # whether the key separator follows the prefix
    width = 0  # prefix length in bytes
    recoverable = True  # whether K can be recovered from the key
    salted = False  # whether the key space is cut into buckets that a scan must fan out to
    route = "none"  # how prefix_many computes a batch (benchmarks print it)

    # What the rest of keyshape asks instead of the name:
    options: ClassVar[Mapping[str, tuple[int, int]]] = {}  # key.prefix options and their bounds (inclusive)
    defaults: ClassVar[Mapping[str, int]] = {}  # option values when not given
    deterministic = True  # the prefix is a function of the record (a read can recompute the key)
    whole_key = False  # the prefix is the whole key (md5-full): no K after it
    hex_text = False  # written as lower-case hex digits, like HexStringSplit's split keys (lint)
    index_ok = True  # usable as the prefix of an index table
    label_word: str | None = "bucket"  # the head of a region label (None: no prefix column)
    native_check: int | None = None  # the salt the C reader re-derives (core/_native.c's code), if any
    requires_hash_fields = False  # key.hash_fields must be given (not all fields by default)
    count_option = "buckets"  # the option a bare number sets in a "name:n" strategy entry (advise, compare)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            REGISTRY[cls.name] = cls

    #: The key's separator, which a ``sep_after`` strategy writes after its prefix: never a
    #: strategy's option, but the separator of the layout that holds the prefix, which binds it
    #: (:meth:`bound`, called by :class:`~keyshape.schema.layout.KeyLayout`: the one place it is set).
    separator: bytes = b""

    def bound(self, separator: bytes) -> Prefix:
        """This prefix in a key whose separator is ``separator``: itself when it already is, else a
        copy bound to it (what :class:`~keyshape.schema.layout.KeyLayout` does with the prefix it is given).

        - ``separator``: the layout's separator.
        """
        if self.separator == separator:
            return self
        out = copy.copy(self)
        out.separator = bytes(separator)
        return out

    @classmethod
    def key_options(cls, key: Any, fields: Sequence[Any], separator: bytes, hash_fields: Sequence[str]) -> dict[str, int]:
        """Options the strategy derives from the key's layout, checked (``key`` is the parser's
        ``Section``: its ``fail`` raises the one-line SchemaError). None by default."""
        return {}

    def count(self) -> int | None:
        """The value of :attr:`count_option` this prefix has (None: the strategy has no count)."""
        value = getattr(self, "n", None)
        return value if isinstance(value, int) else None

    def lint_notes(self) -> list[tuple[str, str, str, str]]:
        """What lint says of this strategy whatever the rest: ``(level, code, message, advice)``."""
        return []

    def prefix_form(self, heads: np.ndarray) -> np.ndarray:
        """Whether each row of ``heads`` (an n x width uint8 matrix of keys' first bytes) has the
        form this strategy writes, without the fields (the key check's encode-only and random
        routes): any bytes by default (OpenTSDB's salt), lower-case hex where :attr:`hex_text`."""
        if self.hex_text:
            hexdigit = ((heads >= 48) & (heads <= 57)) | ((heads >= 97) & (heads <= 102))
            return np.asarray(hexdigit.all(axis=1), dtype=bool)
        return np.ones(len(heads), dtype=bool)

    def bucket_text(self, head: bytes) -> str | None:
        """The prefix as people write it (``3`` for a salt byte), or None when ``head`` is not a
        prefix this strategy produces."""
        n = self.bucket_count()
        value = int.from_bytes(head, "big")
        return str(value) if n is not None and value < n else None

    def compiled_lines(self, env: dict[str, Any], material: str, string_hash: StringHashLines, memo_limit: int) -> list[str]:
        """Source lines of the compiled encoder setting ``pre`` (the prefix bytes) from the
        expression ``material``; what they use goes into ``env`` (``_P`` is this strategy).
        ``memo_limit``: at most this many buckets are listed in ``env`` as a table."""
        return [f"pre = _P.prefix_for({material})"]

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


REGISTRY[Prefix.name] = Prefix


class DecimalBucketPrefix(Prefix):
    """A prefix that is the bucket number in decimal, zero-padded to the widest bucket ("%0Nd",
    at least two digits): what mod, random and murmur3 write; they differ only in the hash."""

    n: int

    def _set_buckets(self, buckets: int) -> None:
        self.n = buckets
        self.width = max(2, len(str(buckets - 1)))

    def bucket_count(self) -> int:
        return self.n

    def bucket(self, i: int) -> bytes:
        return b"%0*d" % (self.width, i)

    def prefix_form(self, heads: np.ndarray) -> np.ndarray:
        return _digits_below(heads, self.n)

    def bucket_text(self, head: bytes) -> str | None:
        text = head.decode("ascii", "replace")
        return text if text.isdigit() and int(text) < self.n else None
