"""The local engine for real key sets: Parquet / ORC / CSV files read at I/O speed.

Keys travel from the file to the analyzer as Arrow buffers and then a
:class:`~keyshape.core.keyarray.KeyArray` (zero-copy for fixed-width binary keys): no Python object
per key. Parquet and ORC files say in their footers how many rows each row group (stripe) holds,
so every unit of work knows where its keys sit in the write stream before it is read; the units'
batches are then counted by ``workers`` threads (decoding and the numpy kernels release the GIL),
each into its own :class:`~keyshape.analysis.analyze.Analyzer`, and the partial analyzers merge
into exactly what one pass in file order gives (every key is counted at its stream position). CSV files carry no such counts and are read in one
pass.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from keyshape.analysis.analyze import Analyzer
from keyshape.core.arrowkeys import from_arrow
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.schema.keycheck import KeyCheck

if TYPE_CHECKING:  # pyarrow is imported lazily at run time: it is slow to import
    import pyarrow as pa
    import pyarrow.orc as porc
    import pyarrow.parquet as pq

CHUNK_ROWS = 131_072


@dataclass(frozen=True)
class Unit:
    """One independently readable piece of a key file: a Parquet row group or an ORC stripe,
    holding the rows ``[start, start + rows)`` of the whole write stream."""

    path: Path
    kind: str  # "parquet" | "orc"
    index: int
    start: int
    rows: int


def units(path: str | Path) -> list[Unit] | None:
    """The row groups / ORC files behind ``path`` in write order, or None when a file is CSV."""
    from keyshape.workload import key_file_parts

    parts = key_file_parts(path)
    if parts is None:
        return None
    out: list[Unit] = []
    start = 0
    for f, kind, index, rows in parts:
        out.append(Unit(f, kind.lower(), index, start, rows))
        start += rows
    return out


def _unit_batches(unit: Unit, column: str | None) -> Iterator[pa.RecordBatch]:
    # A file of its own per unit: pyarrow's file readers are not to be read by two threads at once.
    f: pq.ParquetFile | porc.ORCFile
    if unit.kind == "parquet":
        import pyarrow.parquet as pq

        f = pq.ParquetFile(unit.path)
    else:  # pyarrow.orc imports pyarrow.fs and ssl: only for ORC files
        import pyarrow.orc as porc

        f = porc.ORCFile(unit.path)
    names = f.schema_arrow.names if unit.kind == "parquet" else f.schema.names
    if column is not None and column not in names:
        raise KeyshapeError(f"{unit.path}: no column {column!r}; columns: {', '.join(names)}")
    cols = [column or names[0]]
    if unit.kind == "parquet":
        # The workers are the threads: pyarrow's own pool would only add hand-offs to one column
        # of one row group (and compete with the workers for the cores).
        yield from f.iter_batches(batch_size=CHUNK_ROWS, row_groups=[unit.index], columns=cols, use_threads=False)
    else:
        table = f.read(columns=cols)
        for batch in table.to_batches(max_chunksize=CHUNK_ROWS):
            yield batch


class _Open:
    """A unit being read: its batch iterator, read by one thread at a time, and the stream
    position of the next batch it gives."""

    def __init__(self, unit: Unit, column: str | None, key_format: str) -> None:
        self.unit = unit
        self.column = column
        self.key_format = key_format
        self.lock = threading.Lock()
        self.batches: Iterator[pa.RecordBatch] | None = None
        self.at = unit.start
        self.done = False

    def next(self) -> tuple[KeyArray, int] | None:
        """The unit's next batch as keys with its first key's stream position, or None when the
        unit is read (its footer's row count then checked)."""
        with self.lock:
            if self.done:
                return None
            if self.batches is None:
                self.batches = _unit_batches(self.unit, self.column)
            batch = next(self.batches, None)
            if batch is None:
                self.done = True
                u = self.unit
                if self.at != u.start + u.rows:
                    raise KeyshapeError(
                        f"{u.path}: the footer says {u.rows} rows in part {u.index}, reading gave {self.at - u.start}; the file is damaged"
                    )
                return None
            at = self.at
            self.at += batch.num_rows
        # (the keys are made outside the lock: another thread may decode the next batch meanwhile)
        try:
            return from_arrow(batch.column(0), self.key_format), at
        except ValueError as exc:
            raise KeyshapeError(f"{self.unit.path}: {exc}") from None


class _Batches:
    """The batches of every unit, handed to the worker threads as they ask. A worker takes a
    unit nobody reads yet while there is one (units decode independently); once every unit is
    taken it joins the one with the most rows left, taking its batches in turn (one thread
    decodes the next batch while the other counts the last). So no thread waits idle while
    another reads the last unit: 3 row groups on 2 threads take 1.5 units' time, not 2."""

    def __init__(self, parts: list[Unit], column: str | None, key_format: str) -> None:
        self.waiting = [_Open(u, column, key_format) for u in parts]
        self.waiting.reverse()  # taken from the end: in write order
        self.reading: list[_Open] = []
        self.lock = threading.Lock()
        self.stop = False  # a worker failed: the others stop at their next batch
        self.done_rows = 0

    def take(self, mine: _Open | None) -> tuple[_Open, KeyArray, int] | None:
        """The next batch for a worker that last read ``mine``: ``(unit, keys, position)``."""
        while not self.stop:
            if mine is None or mine.done:
                with self.lock:
                    if mine is not None and mine in self.reading:
                        self.reading.remove(mine)
                    if self.waiting:
                        mine = self.waiting.pop()
                        self.reading.append(mine)
                    elif self.reading:
                        mine = max(self.reading, key=lambda o: o.unit.start + o.unit.rows - o.at)
                    else:
                        return None
            got = mine.next()
            if got is not None:
                return mine, got[0], got[1]
        return None

    def count(self, rows: int) -> None:
        with self.lock:
            self.done_rows += rows


def _worker(acc: Analyzer, work: _Batches, check: KeyCheck | None) -> tuple[Analyzer, KeyCheck | None]:
    """Count batches into a part of the worker's own until every unit is read. Each key comes
    with its stream position, so the parts merge into what one pass in order gives whichever
    batches each worker took."""
    part = acc.empty_like()
    checked = check.empty_like() if check is not None else None
    mine: _Open | None = None
    try:
        while (got := work.take(mine)) is not None:
            mine, keys, at = got
            part.update(keys, positions=np.arange(at, at + len(keys), dtype=np.int64))
            if checked is not None:
                checked.check(keys, at)  # one thread: the batches already run on every worker
            work.count(len(keys))
    except BaseException:
        work.stop = True
        raise
    return part, checked


def default_workers() -> int:
    """Threads for the local engine: the cores this process may run on, at most 8."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


def feed_key_files(
    acc: Analyzer,
    path: str | Path,
    column: str | None = None,
    key_format: str = "binary",
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    check: KeyCheck | None = None,
) -> Analyzer:
    """Count every key in the files behind ``path`` into ``acc`` and return it.

    With Parquet / ORC files and ``acc.total_rows`` equal to their row count (see
    :func:`keyshape.workload.count_key_rows`), the row groups are counted by ``workers`` threads
    (default: :func:`default_workers`) and merged; otherwise (CSV, or an auto-split analysis,
    which must replay the stream in order) the keys are read in one pass. ``progress`` gets the
    number of keys done so far. ``check`` (:class:`~keyshape.schema.keycheck.KeyCheck`), when
    given, checks every key against its schema on the way, with the keys' stream positions.
    """
    from keyshape.workload import read_key_arrays

    parts = units(path) if acc.total_rows is not None and acc.auto_split_rows is None else None
    if parts is None or sum(u.rows for u in parts) != acc.total_rows:
        done = 0
        for keys in read_key_arrays(path, column, chunk_rows=CHUNK_ROWS, key_format=key_format):
            acc.update(keys)
            if check is not None:
                check.check(keys, done, threads=workers or default_workers())
            done += len(keys)
            if progress is not None:
                progress(done)
        return acc
    workers = default_workers() if workers is None else max(1, workers)
    work = _Batches(parts, column, key_format)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="keyshape-keys") as pool:
        futures = [pool.submit(_worker, acc, work, check) for _ in range(workers)]
        try:
            shown = 0
            pending = set(futures)
            while pending:
                _, pending = wait(pending, timeout=0.1, return_when=FIRST_EXCEPTION)
                if progress is not None and work.done_rows != shown:
                    shown = work.done_rows
                    progress(shown)
            for future in futures:  # (the first failure raises here)
                part, checked = future.result()
                acc.merge(part)
                if check is not None and checked is not None:
                    check.merge(checked)
        finally:
            work.stop = True
    return acc
