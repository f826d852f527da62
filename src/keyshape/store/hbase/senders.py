"""The sender threads an HBase store's writers share (``HBaseWriter`` sends its batches on them
while the caller builds the next), owned by the store: started on first use, shut down when the
store closes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["SenderPool"]

T = TypeVar("T")


class SenderPool:
    """A thread pool made on the first :meth:`submit` (a store that never writes starts no
    thread); ``workers`` threads at most (default 4), named ``keyshape-writer``."""

    def __init__(self, workers: int = 4) -> None:
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``fn(*args)`` on a sender thread."""
        pool = self._pool
        if pool is None:
            with self._lock:
                pool = self._pool
                if pool is None:
                    pool = self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="keyshape-writer")
        return pool.submit(fn, *args)

    def shutdown(self) -> None:
        """Wait for the batches being sent, then stop the threads; a later submit starts new ones."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
