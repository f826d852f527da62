"""Concurrent bucket fetching for merged scans: a bounded pool and bounded per-bucket queues.

Each bucket's scanner is pulled one batch at a time by a pool task; at most ``depth`` batches wait
per bucket, and at most one task per bucket runs, so memory stays below ``buckets * depth`` scanner
batches. Tasks never block on a full queue (they are only scheduled when there is room),
so a pool smaller than the bucket count cannot deadlock: the consumer waits only for tasks that
will run.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Executor
from typing import Any

__all__ = ["PrefetchSource"]


class PrefetchSource:
    """The batches (anything but None: a scanner's responses as they come) of one iterator,
    fetched ahead on ``pool``, one per task; consume with :meth:`next_batch`."""

    def __init__(self, batches: Iterator[Any], pool: Executor, depth: int = 2) -> None:
        self._it, self._pool, self._depth = batches, pool, max(1, depth)
        self._cond = threading.Condition()
        self._queue: deque[Any] = deque()
        self._pending = self._done = self._closed = self._it_closed = False
        self._error: BaseException | None = None

    def start(self) -> None:
        with self._cond:
            self._schedule()

    def _schedule(self) -> None:  # caller holds the lock
        if self._pending or self._done or self._closed or len(self._queue) >= self._depth:
            return
        self._pending = True
        try:
            self._pool.submit(self._fetch)
        except RuntimeError as exc:  # pool shut down under us: only when the scan is closing
            self._pending, self._error = False, exc

    def _fetch(self) -> None:
        batch: Any = None
        error: BaseException | None = None
        with self._cond:
            closed = self._closed
        if not closed:
            try:
                batch = next(self._it, None)
            except BaseException as exc:  # handed to the consumer thread
                error = exc
        with self._cond:
            self._pending = False
            if error is not None:
                self._error, self._done = error, True
            elif not closed:
                if batch is None:
                    self._done = True
                else:
                    self._queue.append(batch)
            if self._closed:
                self._close_iterator()
            else:
                self._schedule()
            self._cond.notify_all()

    def next_batch(self) -> Any:
        """The next batch, waiting for it if needed; None when the iterator is exhausted."""
        with self._cond:
            self._schedule()
            while not self._queue and not self._done and self._error is None:
                self._cond.wait()
            if self._error is not None:
                raise self._error
            if not self._queue:
                return None
            batch = self._queue.popleft()
            self._schedule()
            return batch

    def close(self) -> None:
        """Stop fetching and close the underlying iterator before returning.

        A fetch already submitted is waited for (it reads at most one batch, and the pool is still
        running), so a caller that leaves a ``with scan(...)`` block knows every scanner is released.
        """
        with self._cond:
            self._closed = True
            self._queue.clear()
            while self._pending:
                self._cond.wait()
            self._close_iterator()

    def _close_iterator(self) -> None:  # caller holds the lock
        if self._it_closed:
            return
        self._it_closed = True
        close = getattr(self._it, "close", None)
        if close is not None:
            close()
