"""``java-hash-short``: ``Bytes.toBytes((short)(J.hashCode() & 0x7FFF)) + K`` (2 bytes, no separator)."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from keyshape.core import hashing, hbytes
from keyshape.core.keyarray import KeyArray
from keyshape.schema.prefixes.base import Prefix, StringHashLines, _j_text, _string_hash_u32

__all__ = ["JavaHashShortPrefix"]


class JavaHashShortPrefix(Prefix):
    name, material, width, salted = "java-hash-short", "J", 2, True
    route = "numpy String.hashCode (Horner over columns)"
    label_word = "hash"  # a hash's low bits, not a bucket number
    native_check = 2

    def prefix_for(self, material: bytes) -> bytes:
        return hbytes.short(hashing.java_string_hash(_j_text(material)) & 0x7FFF)

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        h = (_string_hash_u32(materials) & np.uint32(0x7FFF)).astype(">u2")
        return h.view(np.uint8).reshape(len(materials), 2)

    def prefix_form(self, heads: np.ndarray) -> np.ndarray:
        return heads[:, 0] < 0x80  # the short is & 0x7FFF: its high byte never has the top bit

    def bucket_count(self) -> int:
        return 0x8000

    def bucket(self, i: int) -> bytes:
        return hbytes.short(i)

    def compiled_lines(self, env: dict[str, Any], material: str, string_hash: StringHashLines, memo_limit: int) -> list[str]:
        env["_pack_h"] = struct.Struct(">H").pack
        return string_hash(env, material) + ["pre = _pack_h(h & 0x7FFF)"]
