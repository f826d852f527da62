"""``md5``: ``md5_hex(J)[:length] + sep + K`` (length 4..32), the hex digits of J's MD5."""

from __future__ import annotations

import hashlib
from binascii import hexlify
from typing import Any

import numpy as np

from keyshape.core import batchhash
from keyshape.core.keyarray import KeyArray
from keyshape.schema.prefixes.base import Prefix, StringHashLines

__all__ = ["Md5Prefix"]


class Md5Prefix(Prefix):
    name, material, sep_after, salted = "md5", "J", True, True
    route = "numpy MD5 kernel (keyshape.core.batchhash), threaded"
    options = {"length": (4, 32)}
    defaults = {"length": 4}
    hex_text = True
    label_word = "md5"  # a hash's leading digits, not a bucket number
    native_check = 4
    count_option = "length"

    def __init__(self, length: int = 4) -> None:
        self.width = length

    def prefix_for(self, material: bytes) -> bytes:
        return hashlib.md5(material).hexdigest()[: self.width].encode("ascii")

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        return batchhash.md5_hex_many(materials, self.width)

    def bucket_count(self) -> int:
        return 16**self.width

    def bucket(self, i: int) -> bytes:
        return b"%0*x" % (self.width, i)

    def count(self) -> int:
        return self.width

    def bucket_text(self, head: bytes) -> str | None:
        text = head.decode("ascii", "replace")
        return text if all(c in "0123456789abcdef" for c in text) else None

    def compiled_lines(self, env: dict[str, Any], material: str, string_hash: StringHashLines, memo_limit: int) -> list[str]:
        return md5_hex_lines(env, material, self.width)


def md5_hex_lines(env: dict[str, Any], material: str, width: int) -> list[str]:
    """Lines setting ``pre`` to the first ``width`` hex digits of the MD5 of ``material``."""
    env["_md5"] = hashlib.md5
    env["_hexlify"] = hexlify
    if width % 2 == 0:
        return [f"pre = _hexlify(_md5({material}).digest()[:{width // 2}])"]
    return [f"pre = _hexlify(_md5({material}).digest()[:{(width + 1) // 2}])[:{width}]"]
