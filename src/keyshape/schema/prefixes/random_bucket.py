"""``random``: a random bucket per write in the ``mod`` text form + sep + K. Even writes, but every
read must visit every bucket, and a record's key cannot be recomputed."""

from __future__ import annotations

from typing import Any

import numpy as np

from keyshape.core.keyarray import KeyArray
from keyshape.schema.prefixes.base import StringHashLines, _decimal_digits
from keyshape.schema.prefixes.mod import ModPrefix

__all__ = ["RandomPrefix"]


class RandomPrefix(ModPrefix):
    """A random bucket per write: even writes, but every read must visit every bucket."""

    name, material = "random", ""
    route = "numpy random generator"
    options = {"buckets": (2, 10**9), "seed": (0, 2**63)}
    defaults = {"buckets": 16}
    deterministic = False
    index_ok = False  # index rows would be unfindable
    native_check = None  # nothing to re-derive

    def __init__(self, buckets: int = 16, seed: int | None = None) -> None:
        super().__init__(buckets)
        self._rng = np.random.default_rng(seed)

    def prefix_for(self, material: bytes) -> bytes:
        return self.bucket(int(self._rng.integers(self.n)))

    def _prefix_matrix(self, materials: KeyArray) -> np.ndarray:
        return _decimal_digits(self._rng.integers(self.n, size=len(materials)), self.width)

    def lint_notes(self) -> list[tuple[str, str, str, str]]:
        return [
            (
                "warning",
                "random-prefix",
                f"random prefix: every point read and scan must visit all {self.n} buckets, and one entity's rows scatter",
                "use a hash of a field you query by (strategy 'mod' or 'md5' with hash_fields)",
            )
        ]

    def compiled_lines(self, env: dict[str, Any], material: str, string_hash: StringHashLines, memo_limit: int) -> list[str]:
        return [f"pre = _P.prefix_for({material})"]
