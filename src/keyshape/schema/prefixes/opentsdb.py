"""``opentsdb``: ``opentsdb_salt(metric, tags, buckets, width) + K``; J = metric + tag fields
(OpenTSDB's ``RowKey.prefixKeyWithSalt``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from keyshape.core import hashing
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.schema.prefixes.base import MAX_LISTED_BUCKETS, Prefix, StringHashLines

__all__ = ["OpenTsdbPrefix", "metric_width"]


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
    options = {"buckets": (1, 2**31 - 1), "width": (1, 8)}
    defaults = {"buckets": 20, "width": 1}
    requires_hash_fields = True  # the metric field, then the tag fields
    index_ok = False
    native_check = 6

    def __init__(self, buckets: int = 20, width: int = 1, metric_width: int = 3) -> None:
        self.n, self.width, self.metric_width = buckets, width, metric_width
        self._sorted: list[bytes] | None = None

    @classmethod
    def key_options(cls, key: Any, fields: Sequence[Any], separator: bytes, hash_fields: Sequence[str]) -> dict[str, int]:
        """Check that the salt fits the key and give the metric field's width: no separator, the
        metric (first of ``hash_fields``) leads the hashed fields and is fixed-width."""
        return {"metric_width": metric_width(key, fields, separator, hash_fields)}

    def compiled_lines(self, env: dict[str, Any], material: str, string_hash: StringHashLines, memo_limit: int) -> list[str]:
        if self.n > memo_limit:
            return [f"pre = _P.prefix_for({material})"]
        env["_jbh"] = hashing.java_bytes_hash
        n, mw = self.n, self.metric_width
        salts = self._salt_matrix(np.arange(n, dtype=np.int64))
        env["_SALTS"] = [salts[b].tobytes() for b in range(n)]
        env["_ZERO_SALT"] = bytes(self.width)
        # A zero (or empty) metric UID is not salted; else |hash % buckets| (Java remainder).
        return [
            f"m = {material}[:{mw}]",
            "if m.count(0) == len(m):",
            "    pre = _ZERO_SALT",
            "else:",
            f"    h = _jbh({material})",
            f"    pre = _SALTS[(-h) % {n} if h < 0 else h % {n}]",
        ]

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


def metric_width(key: Any, fields: Sequence[Any], separator: bytes, hash_fields: Sequence[str]) -> int:
    """Check that an ``opentsdb`` prefix fits the key and return the metric field's width:
    no separator, the metric (first of ``hash_fields``) leads the hashed fields and is fixed-width.
    ``key`` is the parser's ``Section`` (its ``fail`` raises the SchemaError)."""
    if separator:
        key.fail("separator", "OpenTSDB keys have no separator", "remove key.separator")
    metric = next(f for f in fields if f.name == hash_fields[0])
    first_hashed = next(f for f in fields if f.name in hash_fields)
    if metric is not first_hashed:
        # The salt hashes metric + tags in key order and splits them at the metric's width.
        key.fail(
            "hash_fields",
            f"the metric field {metric.name!r} (listed first) must come before the other hashed fields in the key, but {first_hashed.name!r} does",
            "put the metric field first in [[key.fields]], or list the leading hashed field first",
        )
    if metric.fixed_width is None:
        key.fail(
            "hash_fields",
            f"the metric field {metric.name!r} must have a fixed width",
            "give it width (OpenTSDB metric UIDs are 3 bytes: type = 'bytes', width = 3)",
        )
    return int(metric.fixed_width)
