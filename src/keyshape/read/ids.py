"""Sequential ids without a round trip per id: blocks reserved with an atomic increment.

``IdAllocator`` reserves ``block`` ids at a time with ONE ``store.increment(table, row, column,
amount=block)`` (HBase ``incrementColumnValue``: atomic on the region server). The increment
returns the new counter value ``hi``; the block ``hi - block + 1 .. hi`` now belongs to this
allocator alone, so no two allocators — threads, processes or machines — ever hand out the same
id. Ids are increasing within one allocator; across allocators they interleave by block. Ids left
in a block when an allocator is dropped are never used (gaps, at most ``block - 1`` per allocator).
The counter starts at 0, so the first id is 1.

What would repeat or break ids is refused, never handed out:

* **Overflow.** Ids are HBase longs. Before the first reservation the allocator reads the counter,
  and it never increments past ``2**63 - 1`` (HBase would wrap to negative ids): it raises
  :class:`IdsExhausted` instead. A block that still comes back out of range (another allocator
  raced past the check) raises too.
* **A counter that went backwards.** If the counter cell is deleted (or expires: the schema
  refuses a TTL on a counter family), the store restarts it at 0. Every allocator remembers the
  highest value it saw; a reservation that returns a block at or below it raises
  :class:`CounterWentBack`. ``floor`` gives a brand-new allocator the same protection: the highest
  id known to be used (e.g. the largest id in the data); blocks at or below it are refused.
"""

from __future__ import annotations

import operator
import threading
from typing import TYPE_CHECKING, Any

from keyshape.errors import KeyshapeError

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.counters import CounterSpec
    from keyshape.store.base import Store

__all__ = ["CounterWentBack", "IdAllocator", "IdsExhausted", "MAX_ID"]

MAX_ID = 2**63 - 1  # Long.MAX_VALUE: HBase counters are signed 64-bit


class IdsExhausted(KeyshapeError):
    """The counter would pass ``Long.MAX_VALUE``."""


class CounterWentBack(KeyshapeError):
    """The counter returned a value at or below one already handed out (deleted or expired)."""


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise KeyshapeError(f"IdAllocator: {what} must be a whole number >= 1, got {value!r}")
    if not isinstance(value, int):
        try:
            value = operator.index(value)
        except TypeError:
            raise KeyshapeError(f"IdAllocator: {what} must be a whole number >= 1, got {value!r}") from None
    if value < 1:
        raise KeyshapeError(f"IdAllocator: {what} must be >= 1, got {value}")
    return int(value)


class IdAllocator:
    """Hands out unique ids from blocks of the counter cell ``table``/``counter_row``/``column``.

    - ``store``: the store holding the counter cell.
    - ``block``: ids reserved per increment of the counter (default 1000, at most ``MAX_ID``).
    - ``floor``: the highest id known to be used (e.g. the largest id in the data): a block at or
      below it raises :class:`CounterWentBack` (default 0).

    Thread-safe: one lock guards the current block; only the thread that finds it empty goes to
    the store. Build one from a schema's ``[[counter]]`` with :meth:`for_counter`.
    """

    def __init__(self, store: Store, table: str, counter_row: bytes, column: bytes, block: int = 1000, floor: int = 0) -> None:
        block = _positive_int(block, "block")
        if block > MAX_ID:
            raise KeyshapeError(f"IdAllocator: block must be <= {MAX_ID}, got {block}")
        if isinstance(floor, bool) or not isinstance(floor, int) or floor < 0:
            raise KeyshapeError(f"IdAllocator: floor must be an int >= 0, got {floor!r}")
        self.store, self.table, self.row, self.column, self.block = store, table, counter_row, column, block
        self._lock = threading.Lock()
        self._next = 0
        self._end = 0  # ids _next .. _end - 1 are free in the current block
        self._seen: int | None = None  # highest counter value this allocator has seen
        self.floor = floor
        self.blocks_reserved = 0

    @classmethod
    def for_counter(cls, store: Store, counter: CounterSpec, floor: int = 0) -> IdAllocator:
        """An allocator for a schema's ``[[counter]]`` (:class:`keyshape.schema.counters.CounterSpec`)."""
        return cls(store, counter.table.full_name, counter.row, counter.column, counter.block, floor)

    def current(self) -> int:
        """The counter's value now (the last id reserved by anyone; 0 before the first)."""
        raw = self.store.get(self.table, self.row, columns=[self.column]).get(self.column)
        if raw is None:
            return 0
        if len(raw) != 8:
            raise KeyshapeError(
                f"counter {self.table}/{self.row!r}/{self.column!r} holds {len(raw)} bytes, not an 8-byte long; it is not an id counter"
            )
        return int.from_bytes(raw, "big", signed=True)

    def _refuse_overflow(self, before: int) -> None:
        if before > MAX_ID - self.block:
            left = max(MAX_ID - before, 0)
            raise IdsExhausted(
                f"id counter {self.table}/{self.row.decode(errors='replace')} is at {before}: "
                f"a block of {self.block} would pass the largest HBase long {MAX_ID} "
                f"({left} ids left); use a smaller block or a new counter"
            )

    def _reserve(self) -> None:
        if self._seen is None:
            self._seen = self.current()
            if self._seen < 0:
                raise IdsExhausted(f"id counter {self.table}/{self.row!r} is negative ({self._seen}): it has wrapped or is not an id counter")
        self._refuse_overflow(self._seen)
        hi = self.store.increment(self.table, self.row, self.column, amount=self.block)
        lo = hi - self.block + 1
        if hi < self.block or hi < 0:
            self._seen = max(self._seen, hi)
            raise IdsExhausted(
                f"id counter {self.table}/{self.row!r} returned {hi}, outside 1..{MAX_ID}: it wrapped past the largest HBase long; use a new counter"
            )
        if lo <= max(self._seen, self.floor):
            known = max(self._seen, self.floor)
            raise CounterWentBack(
                f"id counter {self.table}/{self.row!r} went back to {hi} after {known}: "
                "its cell was deleted or expired, and ids from here would repeat; restore it "
                f"(put the 8-byte long {known}) or use a new counter"
            )
        self._seen = hi
        self._next, self._end = lo, hi + 1
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
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise KeyshapeError(f"IdAllocator.take: n must be an int >= 0, got {n!r}")
        out: list[int] = []
        with self._lock:
            while len(out) < n:
                if self._next >= self._end:
                    self._reserve()
                k = min(n - len(out), self._end - self._next)
                out.extend(range(self._next, self._next + k))
                self._next += k
        return out
