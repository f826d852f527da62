"""``murmur3``: ``"%0Nd" % ((murmur3(J, seed) & 0x7FFFFFFF) % buckets) + sep + K``, N = max(2, digits).

``murmur3(J, seed)`` is HBase's ``org.apache.hadoop.hbase.util.MurmurHash3`` (MurmurHash3 x86_32)
of the bytes of J, as ``MurmurHash3.getInstance().hash(new ByteArrayHashKey(J, 0, J.length), seed)``
returns it (a signed int); seed 0 is what HBase's own first hash uses (BloomFilterUtil). The bucket
text is ``mod``'s, so the bucket list, splits and labels read the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from keyshape.core import hashing
from keyshape.core.keyarray import KeyArray
from keyshape.schema.prefixes.base import DecimalBucketPrefix, StringHashLines, _decimal_digits

__all__ = ["Murmur3Prefix", "murmur3_many"]

_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def murmur3_many(keys: KeyArray, seed: int = 0) -> np.ndarray:
    """:func:`keyshape.core.hashing.murmur3_32` of every key as uint32 (the signed value modulo
    2**32): the 4-byte blocks of all keys at once, column block by column block."""
    n, width = keys.matrix.shape
    lengths = keys.lengths
    cols = -(-width // 4) * 4
    m = np.zeros((n, cols), dtype=np.uint8)
    m[:, :width] = keys.matrix
    m[np.arange(cols)[None, :] >= lengths[:, None]] = 0  # bytes past a key's end are not its own
    words = m.view("<u4").reshape(n, cols // 4).astype(np.uint32)
    h = np.full(n, seed & 0xFFFFFFFF, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for b in range(cols // 4):
            k = _rotl(words[:, b] * _C1, 15) * _C2
            whole = lengths >= 4 * (b + 1)  # a whole block: mixed into h and h stirred
            tail = (lengths > 4 * b) & ~whole  # the last 1..3 bytes: mixed in only
            stirred = _rotl(h ^ k, 13) * np.uint32(5) + np.uint32(0xE6546B64)
            h = np.where(whole, stirred, np.where(tail, h ^ k, h))
        h ^= lengths.astype(np.uint32)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return h


class Murmur3Prefix(DecimalBucketPrefix):
    name, material, sep_after, salted = "murmur3", "J", True, True
    route = "numpy MurmurHash3 x86_32 (4-byte blocks over columns)"
    options = {"buckets": (2, 10**9), "seed": (-(2**31), 2**31 - 1)}
    native_check = 7  # core/_native.c's C_MURMUR3: the mod form over MurmurHash3 x86_32 with the seed
    defaults = {"buckets": 16, "seed": 0}

    def __init__(self, buckets: int = 16, seed: int = 0) -> None:
        self._set_buckets(buckets)
        self.seed = seed

    def prefix_for(self, material: bytes) -> bytes:
        return self.bucket((hashing.murmur3_32(material, self.seed) & 0x7FFFFFFF) % self.n)

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        idx = (murmur3_many(materials, self.seed) & np.uint32(0x7FFFFFFF)) % np.uint32(self.n)
        return _decimal_digits(idx, self.width)

    def compiled_lines(self, env: dict[str, Any], material: str, string_hash: StringHashLines, memo_limit: int) -> list[str]:
        env["_murmur3"] = hashing.murmur3_32
        return [f"pre = b'%0{self.width}d' % ((_murmur3({material}, {self.seed}) & 0x7FFFFFFF) % {self.n})"]
