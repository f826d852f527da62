"""Run an iterator one or two items ahead in a background thread.

The analyzer's producer (generate a chunk of workload, encode it) and its consumer (assign the keys
to regions, update the statistics) are both mostly numpy calls, which release the GIL: running the
producer in its own thread lets both cores work. Items arrive in the producer's order, so results
are the same bit for bit; the queue is bounded, so memory stays flat.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import TypeVar

__all__ = ["prefetch"]

T = TypeVar("T")
_DONE = object()


def prefetch(items: Iterator[T], depth: int = 2) -> Iterator[T]:
    """Yield what ``items`` yields, computed up to ``depth`` items ahead in another thread.

    An exception in the producer is raised here, at the point in the sequence where it happened.
    Closing the returned generator early stops the producer at its next item.
    """
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        q.put((True, item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put((True, _DONE))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            q.put((False, exc))

    worker = threading.Thread(target=produce, name="keyshape-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            ok, item = q.get()
            if not ok:
                raise item
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
        worker.join(timeout=5)
