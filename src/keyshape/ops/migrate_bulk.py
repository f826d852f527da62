"""``migrate --via bulkload``: the copy of ``migrate`` written through HBase's bulk-load path.

Each source region is read with all versions (as the put path reads it), every key re-keyed with
the exact schemas (``decode_exact``: the same rejects as the put path), and its cells written as
sorted HFiles, one per NEW region and family (:func:`copy_range`, which the Spark copy runs in
its tasks), then handed to HBase with ``BulkLoadHFile`` (:mod:`keyshape.store.hbase.bulkload`):
NEW's region servers never see the rows as writes (no WAL, no memstore, no flush).

Every visible cell is copied as a Put with its family, qualifier, timestamp and value; a deleted
or expired cell is not visible, so it is not copied (NEW never held older cells a marker would
have to mask) -- the put path's rule, and what the referee compares.

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
from operator import itemgetter
from pathlib import Path
from typing import Any

from keyshape.errors import BadInput, StoreError
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
from keyshape.store.hbase.compression import check_line
from keyshape.store.hbase.hfile import DEFAULT_BLOCK_SIZE, HFileSummary, HFileWriter, check_family_options

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
    runs = [0]

    def flush() -> None:
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
                fmt = formats.get(family)
                if fmt is None:
                    raise BadInput(f"the new table has no column family {family.decode(errors='replace')!r}: add it to the new schema")
                cells.sort()  # already in order but for a row's columns out of scan order: linear then
                path = directory / f"{task}-run{runs[0]}-r{region}-{family.hex()}"
                with HFileWriter(path, family, block_size=fmt.block_size, compression=fmt.compression, task=task) as writer:
                    writer.append_puts(cells)
                    out.files.append(writer.close())
                out.cells += len(cells)
        runs[0] += 1
        buffered.clear()

    names: dict[bytes, tuple[bytes, bytes]] = {}  # b"family:qualifier" -> (family, qualifier)
    batch: list[tuple[bytes, dict[bytes, list[tuple[int, bytes]]]]] = []

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
        if len(buffered) >= run_rows:
            flush()

    with _collector_paused():
        for item in store.scan_versions(source, start, stop, batch_size=batch_size):
            batch.append(item)
            if len(batch) >= batch_size:
                rekey()
        if batch:
            rekey()
        flush()
    return out


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
