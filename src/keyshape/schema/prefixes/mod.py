"""``mod``: ``"%0Nd" % ((J.hashCode() & 0x7FFFFFFF) % buckets) + sep + K``, N = max(2, digits)."""

from __future__ import annotations

from typing import Any

import numpy as np

from keyshape.core import hashing
from keyshape.core.keyarray import KeyArray
from keyshape.schema.prefixes.base import DecimalBucketPrefix, StringHashLines, _decimal_digits, _j_text, _string_hash_u32

__all__ = ["ModPrefix"]


class ModPrefix(DecimalBucketPrefix):
    name, material, sep_after, salted = "mod", "J", True, True
    route = "numpy String.hashCode (Horner over columns)"
    options = {"buckets": (2, 10**9)}
    defaults = {"buckets": 16}
    native_check: int | None = 1

    def __init__(self, buckets: int = 16) -> None:
        self._set_buckets(buckets)

    def prefix_for(self, material: bytes) -> bytes:
        h = hashing.java_string_hash(_j_text(material)) & 0x7FFFFFFF
        return self.bucket(h % self.n)

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        idx = (_string_hash_u32(materials) & np.uint32(0x7FFFFFFF)) % np.uint32(self.n)
        return _decimal_digits(idx, self.width)

    def compiled_lines(self, env: dict[str, Any], material: str, string_hash: StringHashLines, memo_limit: int) -> list[str]:
        lines = string_hash(env, material)
        if self.n <= memo_limit:
            env["_BUCKETS"] = [self.bucket(b) for b in range(self.n)]
            return lines + [f"pre = _BUCKETS[(h & 0x7FFFFFFF) % {self.n}]"]
        return lines + [f"pre = b'%0{self.width}d' % ((h & 0x7FFFFFFF) % {self.n})"]
