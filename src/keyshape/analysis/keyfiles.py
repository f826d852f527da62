"""The local engine for real key sets: Parquet / ORC / CSV files read at I/O speed.

Keys travel from the file to the analyzer as Arrow buffers and then a
:class:`~keyshape.core.keyarray.KeyArray` (zero-copy for fixed-width binary keys): no Python object
per key. Parquet and ORC files say in their footers how many rows each row group (stripe) holds,
so every unit of work knows where its keys sit in the write stream before it is read; the units
are then counted by ``workers`` threads (decoding and the numpy kernels release the GIL), each
into its own :class:`~keyshape.analysis.analyze.Analyzer`, and the partial analyzers merge into
exactly what one pass in file order gives. CSV files carry no such counts and are read in one
pass.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from keyshape.analysis.analyze import Analyzer
from keyshape.core.arrowkeys import from_arrow
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


class _Readers(threading.local):
    """One open file per thread and path (pyarrow file readers are not shared across threads)."""

    def __init__(self) -> None:
        self.open: dict[Path, pq.ParquetFile | porc.ORCFile] = {}


def _unit_batches(unit: Unit, column: str | None, readers: _Readers) -> Iterator[pa.RecordBatch]:
    f = readers.open.get(unit.path)
    if f is None:
        if unit.kind == "parquet":
            import pyarrow.parquet as pq

            f = pq.ParquetFile(unit.path)
        else:  # pyarrow.orc imports pyarrow.fs and ssl: only for ORC files
            import pyarrow.orc as porc

            f = porc.ORCFile(unit.path)
        readers.open[unit.path] = f
    names = f.schema_arrow.names if unit.kind == "parquet" else f.schema.names
    if column is not None and column not in names:
        raise KeyshapeError(f"{unit.path}: no column {column!r}; columns: {', '.join(names)}")
    cols = [column or names[0]]
    if unit.kind == "parquet":
        yield from f.iter_batches(batch_size=CHUNK_ROWS, row_groups=[unit.index], columns=cols)
    else:
        table = f.read(columns=cols)
        for batch in table.to_batches(max_chunksize=CHUNK_ROWS):
            yield batch


def _count_unit(
    acc: Analyzer, unit: Unit, column: str | None, key_format: str, readers: _Readers, check: KeyCheck | None
) -> tuple[Analyzer, KeyCheck | None]:
    part = acc.empty_like()
    checked = check.empty_like() if check is not None else None
    at = unit.start
    for batch in _unit_batches(unit, column, readers):
        try:
            keys = from_arrow(batch.column(0), key_format)
        except ValueError as exc:
            raise KeyshapeError(f"{unit.path}: {exc}") from None
        part.update(keys, positions=np.arange(at, at + len(keys), dtype=np.int64))
        if checked is not None:
            checked.check(keys, at)  # one thread: the units already run on every worker
        at += len(keys)
    if at != unit.start + unit.rows:
        raise KeyshapeError(
            f"{unit.path}: the footer says {unit.rows} rows in part {unit.index}, reading gave {at - unit.start}; the file is damaged"
        )
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
    readers = _Readers()
    workers = default_workers() if workers is None else max(1, workers)
    done = 0
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="keyshape-keys") as pool:
        futures = [pool.submit(_count_unit, acc, u, column, key_format, readers, check) for u in parts]
        try:
            for unit, future in zip(parts, futures):
                part, checked = future.result()
                acc.merge(part)
                if check is not None and checked is not None:
                    check.merge(checked)
                done += unit.rows
                if progress is not None:
                    progress(done)
        finally:
            for future in futures:
                future.cancel()
    return acc
