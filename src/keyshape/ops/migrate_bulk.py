"""``migrate --via bulkload``: the copy of ``migrate`` written through HBase's bulk-load path.

Each source region is read with all versions (as the put path reads it), every key re-keyed with
the exact schemas (``decode_exact``: the same rejects as the put path), and its cells written as
sorted HFiles, one per NEW region and family (:func:`copy_range`, which the Spark copy runs in
its tasks), then handed to HBase with ``BulkLoadHFile`` (:mod:`keyshape.store.hbase.bulkload`):
NEW's region servers never see the rows as writes (no WAL, no memstore, no flush).

Every visible cell is copied as a Put with its family, qualifier, timestamp and value; a deleted
or expired cell is not visible, so it is not copied (NEW never held older cells a marker would
have to mask) -- the put path's rule, and what the referee compares.

A scan response of one-cell rows all of one layout (fixed-width keys, one fixed-size cell: a
salted table's usual shape) goes from the cell block to the HFile as numpy columns: keys
re-keyed with ``decode_many``/``encode_many`` where that equals ``decode_exact`` key by key,
sorted with ``lexsort``, written with ``HFileWriter.append_put_columns``; no tuple or dict per
cell (the same file bytes as the row path, 2-3x less client CPU per row). Any other response
(several cells or versions in a row, a key that does not re-key) takes the row path.

A range bigger than ``run_rows`` rows is written as several sorted runs (several files per
region): memory stays bounded and HBase merges the files at its next compaction.

Resumable per source region: the state file (the put path's format) marks a region done once
its files are loaded. A region not done is copied again whole on ``resume``: cells loaded twice
have the same coordinates, timestamp and value, and HBase returns one of them.
"""

from __future__ import annotations

import bisect
import gc
import json
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from keyshape.errors import BadInput, KeyshapeError, StoreError
from keyshape.ops.migrate import (
    MigrationResult,
    _check_keys_decode,
    _fingerprint,
    _is_empty,
    _new_keys,
    _Throttle,
    _write_state,
    check_designs,
    default_state_path,
)
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema
from keyshape.store.hbase.bulkload import bulk_load, check_staging
from keyshape.store.hbase.cellblock import UniformCells
from keyshape.store.hbase.compression import check_line
from keyshape.store.hbase.hfile import DEFAULT_BLOCK_SIZE, HFileSummary, HFileWriter, check_family_options
from keyshape.store.hbase.scan import scan_version_columns

__all__ = ["FamilyFormat", "RangeCopy", "copy_range", "family_formats", "migrate_bulk", "prepare_copy"]

RUN_ROWS = 200_000


@dataclass(frozen=True)
class FamilyFormat:
    """How a family of NEW is written: its compression and block size (from ``describe``)."""

    compression: str = "NONE"
    block_size: int = DEFAULT_BLOCK_SIZE


@dataclass
class RangeCopy:
    """The result of copying one source range into HFiles: rows and cells written, the files,
    and the rejected keys ``(toStringBinary, reason)``."""

    rows: int = 0
    cells: int = 0
    files: list[HFileSummary] = field(default_factory=list)
    rejects: list[tuple[str, str]] = field(default_factory=list)


def family_formats(store: Any, table: str) -> dict[bytes, FamilyFormat]:
    """NEW's families as the bulk copy writes them; BadInput (one line) for a compression or
    block encoding it cannot write."""
    out = {}
    for family, options in store.describe_table(table).items():
        compression = check_family_options(family, options)
        if compression == "ZSTD":  # what the cluster's line reads ZSTD with
            check_line(family, compression, store.hbase_version())
        out[family.encode()] = FamilyFormat(compression, int(options.get("BLOCKSIZE", DEFAULT_BLOCK_SIZE)))
    return out


Row = tuple[bytes, dict[bytes, list[tuple[int, bytes]]]]
Cells = dict[bytes, list[tuple[bytes, bytes, int, bytes]]]


def _split(names: dict[bytes, tuple[bytes, bytes]], column: bytes) -> tuple[bytes, bytes]:
    split = names.get(column)
    if split is None:
        family, _, qualifier = column.partition(b":")
        split = names[column] = (family, qualifier)
    return split


def _cells_by_family(rows: list[Row], low: int, high: int, names: dict[bytes, tuple[bytes, bytes]]) -> Cells:
    """The cells of ``rows[low:high]``, every column and version, by family."""
    by_family: Cells = {}
    for row, columns in rows[low:high]:
        for column, versions in columns.items():
            family, qualifier = _split(names, column)
            cells = by_family.get(family)
            if cells is None:
                cells = by_family[family] = []
            for ts, value in versions:
                cells.append((row, qualifier, -ts, value))
    return by_family


_gc_lock = threading.Lock()
_gc_users = [0, False]  # copies running in this process, whether the collector was on before


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while copies run (back on after the last one, if
    it was on). A copy holds up to ``run_rows`` rows of small tuples, dicts and bytes, none in a
    cycle, and every collection of the oldest generation walks all of them: 35-40 % of a copy's
    client CPU at 300,000 rows (bench_migrate's shape, 6-7 us/row without it against 10-11).
    Reference counting still frees everything; only cycles made meanwhile wait."""
    with _gc_lock:
        if _gc_users[0] == 0:
            _gc_users[1] = gc.isenabled()
            gc.disable()
        _gc_users[0] += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_users[0] -= 1
            if _gc_users[0] == 0 and _gc_users[1]:
                gc.enable()


def copy_range(
    store: Any,
    old: KeySchema,
    new: KeySchema,
    start: bytes,
    stop: bytes,
    new_starts: list[bytes],
    directory: Path,
    formats: dict[bytes, FamilyFormat],
    *,
    run_rows: int = RUN_ROWS,
    throttle: Callable[[int], None] | None = None,
    task: str = "keyshape",
    batch_size: int = 1000,
) -> RangeCopy:
    """Copy OLD's rows in ``[start, stop)`` into sorted HFiles in ``directory``, one per NEW
    region (``new_starts``: NEW's region start keys, sorted, the first ``b""``) and family per
    run of ``run_rows`` rows."""
    directory.mkdir(parents=True, exist_ok=True)
    out = RangeCopy()
    source = old.table.full_name
    buffered: list[tuple[bytes, dict[bytes, list[tuple[int, bytes]]]]] = []
    chunks: list[_Chunk] = []  # one-layout responses kept as columns (the usual salted/fixed-width copy)
    runs = [0]

    def write(region: int, family: bytes, fill: Callable[[HFileWriter], None]) -> None:
        fmt = formats.get(family)
        if fmt is None:
            raise BadInput(f"the new table has no column family {family.decode(errors='replace')!r}: add it to the new schema")
        path = directory / f"{task}-run{runs[0]}-r{region}-{family.hex()}"
        with HFileWriter(path, family, block_size=fmt.block_size, compression=fmt.compression, task=task) as writer:
            fill(writer)
            out.files.append(writer.close())

    def flush_columns() -> None:
        """The buffered chunks, all of one layout, written from arrays (no object per cell)."""
        family, qualifier = chunks[0].family, chunks[0].qualifier
        keys = np.concatenate([c.keys for c in chunks])
        neg = np.concatenate([c.neg for c in chunks])
        values = np.concatenate([c.values for c in chunks])
        chunks.clear()
        # HBase's order: row, then newest first (a stable sort: the last key given is the first)
        order = np.lexsort([neg, *(keys[:, j] for j in range(keys.shape[1] - 1, -1, -1))])
        keys, neg, values = keys[order], neg[order], values[order]
        rows = _RowView(keys)
        ends = [bisect.bisect_left(rows, start) for start in new_starts[1:]] + [len(rows)]
        low = 0
        for region, high in enumerate(ends):
            if high <= low:
                continue
            k, t, v = keys[low:high], neg[low:high], values[low:high]
            low = high

            def fill(writer: HFileWriter, k: np.ndarray = k, t: np.ndarray = t, v: np.ndarray = v) -> None:
                if not writer.append_put_columns(k, qualifier, t, v):  # out of order or repeated: the loop names the cell
                    writer.append_puts(sorted(zip(map(bytes, k), repeat(qualifier), map(int, t), map(bytes, v))))

            write(region, family, fill)
            out.cells += len(t)

    def flush() -> None:
        if chunks and not buffered and len({c.layout for c in chunks}) == 1:
            flush_columns()
            runs[0] += 1
            return
        for chunk in chunks:  # mixed layouts: every chunk as rows, the general path below
            buffered.extend(chunk.rows())
        chunks.clear()
        if not buffered:
            return
        # sorted by new key once, then each NEW region is a slice (its bounds bisected, not
        # each row's region); rows only: two rows never share a new key unless the new design
        # maps two old keys to one, and then the stable sort keeps their scan order
        buffered.sort(key=itemgetter(0))
        keys = list(map(itemgetter(0), buffered))
        ends = [bisect.bisect_left(keys, start) for start in new_starts[1:]] + [len(keys)]
        low = 0
        for region, high in enumerate(ends):
            if high <= low:
                continue
            by_family = _cells_by_family(buffered, low, high, names)
            low = high
            for family, cells in sorted(by_family.items()):
                cells.sort()  # already in order but for a row's columns out of scan order: linear then
                write(region, family, partial(_append_puts, cells=cells))
                out.cells += len(cells)
        runs[0] += 1
        buffered.clear()

    names: dict[bytes, tuple[bytes, bytes]] = {}  # b"family:qualifier" -> (family, qualifier)
    batch: list[tuple[bytes, dict[bytes, list[tuple[int, bytes]]]]] = []

    def held() -> int:
        return len(buffered) + sum(len(c.neg) for c in chunks)

    def rekey() -> None:
        new_keys, bad = _new_keys(old, new, [key for key, _ in batch])
        out.rejects += bad
        for new_key, (_, columns) in zip(new_keys, batch):
            if new_key is not None:
                buffered.append((new_key, columns))
                out.rows += 1
        if throttle is not None:
            throttle(len(batch))
        batch.clear()
        if held() >= run_rows:
            flush()

    def rekey_columns(keys: list[bytes], cells: UniformCells) -> None:
        matrix = _new_key_matrix(old, new, keys)
        if matrix is not None:  # every key re-keyed, as one fixed-width matrix
            out.rows += len(keys)
            chunks.append(_Chunk(cells.family, cells.qualifier, matrix, -cells.timestamps, cells.values))
            if throttle is not None:
                throttle(len(keys))
            if held() >= run_rows:
                flush()
            return
        new_keys, bad = _new_keys(old, new, keys)
        out.rejects += bad
        good = [k for k in new_keys if k is not None]
        cells_kept = cells
        if bad:
            keep = np.array([k is not None for k in new_keys])
            cells_kept = UniformCells(cells.family, cells.qualifier, cells.rows[keep], cells.timestamps[keep], cells.values[keep])
        out.rows += len(good)
        if good:
            width = len(good[0])
            if all(len(k) == width for k in good):
                matrix = np.frombuffer(b"".join(good), dtype=np.uint8).reshape(len(good), width)
                chunks.append(_Chunk(cells_kept.family, cells_kept.qualifier, matrix, -cells_kept.timestamps, cells_kept.values))
            else:  # new keys of several widths: rows
                buffered.extend(zip(good, cells_kept.versions()))
        if throttle is not None:
            throttle(len(keys))
        if held() >= run_rows:
            flush()

    with _collector_paused():
        if hasattr(store, "cluster"):  # HBase: responses of one-cell rows of one layout come as columns
            responses = scan_version_columns(store, source, start, stop, batch_size=batch_size)
            try:
                for keys, rows in responses:
                    if isinstance(rows, UniformCells):
                        if batch:
                            rekey()
                        rekey_columns(keys, rows)
                        continue
                    batch.extend(zip(keys, rows))
                    if len(batch) >= batch_size:
                        rekey()
            finally:
                responses.close()
        else:
            for item in store.scan_versions(source, start, stop, batch_size=batch_size):
                batch.append(item)
                if len(batch) >= batch_size:
                    rekey()
        if batch:
            rekey()
        flush()
    return out


def _new_key_matrix(old: KeySchema, new: KeySchema, keys: list[bytes]) -> np.ndarray | None:
    """The new keys of ``keys`` as one ``(n, width)`` uint8 matrix, decoded and encoded as
    columns (``decode_many``, ``encode_many``: no record per key), when that is exactly what
    ``_new_keys`` gives: OLD's decode is exact (``decode_exact`` is ``decode``), every key
    decodes and encodes, and the new keys are of one width. None otherwise: the caller re-keys
    key by key, which finds and words the rejects."""
    if not old.exact_decode or not keys:
        return None
    try:
        columns = old.decode_many(keys)
        encoded = new.encode_many({f: columns[f] for f in new.field_names}, as_array=True)
    except (KeyshapeError, ValueError, TypeError, OverflowError, KeyError):
        return None
    if not encoded.is_fixed:
        return None
    return encoded.matrix


def _append_puts(writer: HFileWriter, cells: list[tuple[bytes, bytes, int, bytes]]) -> None:
    writer.append_puts(cells)


@dataclass
class _Chunk:
    """A response's cells as columns, re-keyed: NEW row keys ``(n, width)`` uint8, negated
    timestamps, values ``(n, length)`` uint8, one family and qualifier."""

    family: bytes
    qualifier: bytes
    keys: np.ndarray
    neg: np.ndarray
    values: np.ndarray

    @property
    def layout(self) -> tuple[bytes, bytes, int, int]:
        return self.family, self.qualifier, self.keys.shape[1], self.values.shape[1]

    def rows(self) -> list[tuple[bytes, dict[bytes, list[tuple[int, bytes]]]]]:
        column = self.family + b":" + self.qualifier
        return [(k.tobytes(), {column: [(-int(t), v.tobytes())]}) for k, t, v in zip(self.keys, self.neg, self.values)]


class _RowView:
    """Rows of a key matrix as bytes, one at a time (what ``bisect`` reads: log n of them)."""

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = keys

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i: int) -> bytes:
        return bytes(self.keys[i].tobytes())


def prepare_copy(store: Any, old: KeySchema, new: KeySchema, resume: bool, state_file: Path, rejects_file: Path) -> tuple[dict[str, Any], bool]:
    """Check the designs, the target (created from ``new`` when missing, empty unless
    ``resume``) and the state file (the put path's rules); returns the state and whether the
    target was created."""
    check_designs(old, new)
    source, target = old.table.full_name, new.table.full_name
    regions = store.regions(source)
    _check_keys_decode(store, source, old)
    fingerprints = {"old": _fingerprint(old), "new": _fingerprint(new)}
    if resume:
        if not state_file.is_file():
            raise BadInput(
                f"--resume: no checkpoint at {state_file}; run without --resume to start the copy (or pass the --state file of the earlier run)"
            )
        state: dict[str, Any] = json.loads(state_file.read_text(encoding="utf-8"))
        if (state.get("source"), state.get("target")) != (source, target) or state.get("schemas") != fingerprints:
            raise BadInput(f"--resume: {state_file} is not the checkpoint of {source} -> {target} with these two schema files")
        if not store.table_exists(target):
            raise BadInput(f"--resume: target table {target!r} is gone; start again without --resume")
        return state, False
    created = False
    if store.table_exists(target):
        if not _is_empty(store, target):
            raise BadInput(f"target table {target!r} already holds rows; continue an earlier copy with --resume, or drop the table to start again")
    else:
        create_table_from_schema(store, new)
        created = True
    state = {
        "source": source,
        "target": target,
        "schemas": fingerprints,
        "via": "bulkload",
        "rejected": 0,
        "regions": [{"start": r.start.hex(), "end": r.end.hex(), "last": None, "done": False, "rows": 0} for r in regions],
    }
    _write_state(state_file, state)
    rejects_file.write_text("", encoding="utf-8")
    return state, created


def record_rejects(rejects_file: Path, rejects: Iterable[tuple[str, str]], seen: set[str]) -> None:
    """Append the rejects not yet in the file (a region copied again rejects the same keys)."""
    with open(rejects_file, "a", encoding="utf-8") as f:
        for key_text, reason in rejects:
            if key_text not in seen:
                seen.add(key_text)
                f.write(f"{key_text}\t{reason}\n")


def seen_rejects(rejects_file: Path) -> set[str]:
    if not rejects_file.is_file():
        return set()
    return {line.split("\t", 1)[0] for line in rejects_file.read_text(encoding="utf-8").splitlines()}


def staging_dir(state_file: Path, new: KeySchema) -> Path:
    return state_file.parent / f".keyshape-bulk-{new.table.full_name.replace(':', '.')}"


def migrate_bulk(
    store: Any,
    old: KeySchema,
    new: KeySchema,
    *,
    resume: bool = False,
    state_path: str | Path | None = None,
    reject_path: str | Path | None = None,
    staging: str | Path | None = None,
    max_rows_per_sec: float | None = None,
    run_rows: int = RUN_ROWS,
    progress: Callable[[int], None] | None = None,
    on_started: Callable[[], None] | None = None,
) -> MigrationResult:
    """Copy ``old``'s table into ``new``'s design through the bulk-load path, one source region
    after another, in this process (see the module docstring; the Spark copy is
    :func:`keyshape.spark.migrate.migrate_spark`). ``store`` must be an HBase store.
    ``on_started()`` is called once the target is checked (empty, or a resume's) and before the
    first file is loaded (``migrate --online`` lets its stream apply from then on)."""
    if max_rows_per_sec is not None and max_rows_per_sec <= 0:
        raise BadInput(f"--max-rows-per-sec must be positive, got {max_rows_per_sec}")
    if not hasattr(store, "cluster"):
        raise BadInput("--via bulkload needs a real HBase (--hbase HOST:PORT); the embedded store copies with --via puts")
    state_file = Path(state_path) if state_path else default_state_path(old, new)
    rejects_file = Path(reject_path) if reject_path else state_file.with_suffix(".rejects.tsv")
    state, created = prepare_copy(store, old, new, resume, state_file, rejects_file)
    target = new.table.full_name
    stage = Path(staging) if staging else staging_dir(state_file, new)
    check_staging(store, target, stage)
    formats = family_formats(store, target)
    new_starts = [r.start for r in store.regions(target)]
    seen = seen_rejects(rejects_file)
    if on_started is not None:
        on_started()
    throttle = _Throttle(max_rows_per_sec)
    rows = cells = 0
    started = time.perf_counter()
    for index, entry in enumerate(state["regions"]):
        if entry["done"]:
            continue
        directory = stage / f"region-{index}"
        shutil.rmtree(directory, ignore_errors=True)  # files of an attempt that died before loading
        try:
            copied = copy_range(
                store,
                old,
                new,
                bytes.fromhex(entry["start"]),
                bytes.fromhex(entry["end"]),
                new_starts,
                directory,
                formats,
                run_rows=run_rows,
                throttle=throttle,
            )
            bulk_load(store, target, copied.files)
        except StoreError as exc:
            raise StoreError(
                f"bulk copy of {old.table.full_name!r} into {target!r} stopped in source region {index + 1} of {len(state['regions'])}: {exc}; "
                f"the regions loaded are checkpointed in {state_file}: run the same command with --resume to continue"
            ) from exc
        record_rejects(rejects_file, copied.rejects, seen)
        entry.update(done=True, rows=copied.rows)
        state["rejected"] = len(seen)
        _write_state(state_file, state)
        shutil.rmtree(directory, ignore_errors=True)
        rows += copied.rows
        cells += copied.cells
        if progress is not None:
            progress(rows)
    shutil.rmtree(stage, ignore_errors=True)
    return MigrationResult.from_state(
        state,
        rows=rows,
        cells=cells,
        rejected=len(seen),
        seconds=time.perf_counter() - started,
        created_target=created,
        state_path=state_file,
        reject_path=rejects_file,
        resumed=resume,
        notes=["copied through HBase's bulk-load path (HFiles per NEW region, BulkLoadHFile)"],
    )
