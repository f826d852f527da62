"""``md5-full``: the key is ``md5_hex(K)`` alone; point reads only, the fields kept in a column."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from keyshape.core import batchhash
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.schema.prefixes.base import Prefix, StringHashLines
from keyshape.schema.prefixes.md5 import md5_hex_lines

__all__ = ["Md5FullPrefix"]


class Md5FullPrefix(Prefix):
    """The key is ``md5_hex(K)`` alone: point reads only, fields kept in a column."""

    name, material, width, recoverable = "md5-full", "K", 32, False
    route = "numpy MD5 kernel (keyshape.core.batchhash), threaded"
    whole_key = True
    hex_text = True
    index_ok = False  # an index row must end with the main key, which a hash hides
    label_word = None  # a label would only repeat the raw bytes

    def prefix_for(self, material: bytes) -> bytes:
        return hashlib.md5(material).hexdigest().encode("ascii")

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        return batchhash.md5_hex_many(materials, 32)

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

    def lint_notes(self) -> list[tuple[str, str, str, str]]:
        return [
            (
                "info",
                "md5-full",
                "md5-full keys hide the fields: no range scans, decode impossible",
                "store the fields in a column if you need them back",
            )
        ]

    def compiled_lines(self, env: dict[str, Any], material: str, string_hash: StringHashLines, memo_limit: int) -> list[str]:
        return md5_hex_lines(env, material, 32)
