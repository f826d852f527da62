"""Sequential ids without a round trip per id: blocks reserved with an atomic increment.

``IdAllocator`` reserves ``block`` ids at a time with ONE ``store.increment(table, row, column,
amount=block)`` (HBase ``incrementColumnValue``: atomic on the region server). The increment
returns the new counter value ``hi``; the block ``hi - block + 1 .. hi`` now belongs to this
allocator alone, so no two allocators — threads, processes or machines — ever hand out the same
id. Ids are increasing within one allocator; across allocators they interleave by block. Ids left
in a block when an allocator is dropped are never used (gaps, at most ``block - 1`` per allocator).
The counter starts at 0, so the first id is 1.
"""

from __future__ import annotations

import threading
from typing import Any

from keyshape.errors import KeyshapeError

__all__ = ["IdAllocator"]


class IdAllocator:
    """Hands out unique ids from blocks of the counter cell ``table``/``counter_row``/``column``.

    Thread-safe: one lock guards the current block; only the thread that finds it empty goes to
    the store.
    """

    def __init__(self, store: Any, table: str, counter_row: bytes, column: bytes, block: int = 1000) -> None:
        if block < 1:
            raise KeyshapeError(f"IdAllocator: block must be >= 1, got {block}")
        self.store, self.table, self.row, self.column, self.block = store, table, counter_row, column, block
        self._lock = threading.Lock()
        self._next = 0
        self._end = 0  # ids _next .. _end - 1 are free in the current block
        self.blocks_reserved = 0

    def _reserve(self) -> None:
        hi = self.store.increment(self.table, self.row, self.column, amount=self.block)
        self._next, self._end = hi - self.block + 1, hi + 1
        self.blocks_reserved += 1

    def next_id(self) -> int:
        """One new id."""
        with self._lock:
            if self._next >= self._end:
                self._reserve()
            value = self._next
            self._next += 1
            return value

    def take(self, n: int) -> list[int]:
        """``n`` new ids, increasing (reserving as many blocks as needed)."""
        if n < 0:
            raise KeyshapeError(f"IdAllocator.take: n must be >= 0, got {n}")
        out: list[int] = []
        with self._lock:
            while len(out) < n:
                if self._next >= self._end:
                    self._reserve()
                k = min(n - len(out), self._end - self._next)
                out.extend(range(self._next, self._next + k))
                self._next += k
        return out
