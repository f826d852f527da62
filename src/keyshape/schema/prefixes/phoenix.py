"""``phoenix``: ``(byte) phoenix_salt(K, buckets) + K`` (buckets <= 256), Phoenix's SaltingUtil."""

from __future__ import annotations

from typing import Any

import numpy as np

from keyshape.core import hashing
from keyshape.core.keyarray import KeyArray
from keyshape.schema.prefixes.base import Prefix, StringHashLines

__all__ = ["PhoenixPrefix"]


class PhoenixPrefix(Prefix):
    name, material, width, salted = "phoenix", "K", 1, True
    route = "numpy Arrays.hashCode (Horner over columns)"
    options = {"buckets": (2, 256)}  # Phoenix SaltingUtil.MAX_BUCKET_NUM = 256
    defaults = {"buckets": 16}
    native_check = 3

    def __init__(self, buckets: int = 16) -> None:
        self.n = buckets

    def prefix_for(self, material: bytes) -> bytes:
        return bytes([hashing.phoenix_salt(material, self.n)])

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        return hashing.phoenix_salt_many(materials, self.n).reshape(len(materials), 1)

    def prefix_form(self, heads: np.ndarray) -> np.ndarray:
        return heads[:, 0] < self.n  # the salt byte is a bucket number

    def bucket_count(self) -> int:
        return self.n

    def bucket(self, i: int) -> bytes:
        return bytes([i])

    def compiled_lines(self, env: dict[str, Any], material: str, string_hash: StringHashLines, memo_limit: int) -> list[str]:
        env["_jbh"] = hashing.java_bytes_hash
        env["_BYTE"] = [bytes([i]) for i in range(256)]
        # (byte) Math.abs(hash % buckets): Java's remainder takes the dividend's sign.
        return [f"h = _jbh({material})", f"pre = _BYTE[(-h) % {self.n} if h < 0 else h % {self.n}]"]
