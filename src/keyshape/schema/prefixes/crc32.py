"""``crc32``: ``"%04x" % (crc32(J) & 0xFFFF) + sep + K``."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from keyshape.core import batchhash, hashing
from keyshape.core.keyarray import KeyArray
from keyshape.schema.prefixes.base import Prefix, StringHashLines, _hex_digits

__all__ = ["Crc32Prefix"]


class Crc32Prefix(Prefix):
    name, material, width, sep_after, salted = "crc32", "J", 4, True, True
    route = "numpy CRC-32 table kernel (keyshape.core.batchhash), threaded"
    hex_text = True
    label_word = "crc32"  # a hash's digits, not a bucket number
    native_check = 5

    def prefix_for(self, material: bytes) -> bytes:
        return b"%04x" % (hashing.crc32(material) & 0xFFFF)

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        return _hex_digits(batchhash.crc32_many(materials) & np.uint32(0xFFFF), 4)

    def bucket_count(self) -> int:
        return 0x10000

    def bucket(self, i: int) -> bytes:
        return b"%04x" % i

    def bucket_text(self, head: bytes) -> str | None:
        text = head.decode("ascii", "replace")
        return text if all(c in "0123456789abcdef" for c in text) else None

    def compiled_lines(self, env: dict[str, Any], material: str, string_hash: StringHashLines, memo_limit: int) -> list[str]:
        env["_crc32"] = zlib.crc32
        return [f"pre = b'%04x' % (_crc32({material}) & 0xFFFF)"]
