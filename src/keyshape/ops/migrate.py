"""Move a live table to another key design (re-salt N -> M buckets, add a salt, ...) cell for cell.

``migrate(store, old, new)`` creates ``new``'s table pre-split from ``new`` when it is missing,
then copies every row of ``old``'s table: each key is decoded with ``old`` and encoded with
``new``, and every visible cell is written with its own family, qualifier, timestamp and value
(all versions; a deleted or expired cell is not visible, so it stays deleted). Rows are copied
source region by source region, in key order.

Checkpoints live in a local JSON state file, not in an HBase table: the copy must be resumable
exactly when HBase is the thing that failed, and a local file written with
write-temp/fsync/rename is readable then and never half-written. It holds the source regions as
they were when the copy started and, per region, the last source key whose batch the target
acknowledged (rewritten every half second, at each region's end and when the copy stops on an
error); ``resume=True`` continues just after it. A batch re-sent after a crash writes the
same cells at the same timestamps again, which changes nothing.

Rows whose old key does not decode are never dropped silently: each goes to the reject file
(``toStringBinary(key) <TAB> reason``) and the result counts them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from itertools import islice
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import BadInput, KeyshapeError, StoreError
from keyshape.ops.sample import MAX_UNDECODABLE
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema
from keyshape.store.base import Store

__all__ = ["MigrationResult", "check_designs", "default_state_path", "migrate"]

Progress = Callable[[int], None]
log = logging.getLogger("keyshape.migrate")

# How often the copy's state file is rewritten at most, and how many batches are written at
# once (see _copy_regions). Two writers copied 10 % faster, but when HBase died both retried
# at once and their ZooKeeper re-lookups queued behind one lock: 192 s instead of ~20 s to fail.
CHECKPOINT_SECONDS = 0.5
WRITERS = 1


@dataclass
class MigrationResult:
    """What ``migrate`` did in this run (``rows``/``cells`` copied now; ``total_rows`` counts the
    earlier runs a resume continued too).

    - ``source`` / ``target``: the two tables; ``regions``: the source regions copied one by one.
    - ``rejected``: rows whose old key did not decode, written to ``reject_path``.
    - ``seconds``: this run's time; ``created_target``: this run created the target table.
    - ``state_path``: the checkpoint file to resume from; ``resumed``: this run continued one.
    - ``notes``: lines for the caller to print after the result.
    """

    source: str
    target: str
    rows: int
    cells: int
    rejected: int
    seconds: float
    regions: int
    total_rows: int
    created_target: bool
    state_path: str
    reject_path: str
    resumed: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    @classmethod
    def from_state(
        cls,
        state: dict[str, Any],
        *,
        rows: int,
        cells: int,
        rejected: int,
        seconds: float,
        created_target: bool,
        state_path: str | Path,
        reject_path: str | Path,
        resumed: bool,
        notes: list[str] | None = None,
    ) -> MigrationResult:
        """The result of a copy run from its checkpoint ``state`` (the one constructor every copy
        uses: puts, bulk load, Spark): the tables, the source regions and ``total_rows`` (earlier
        runs included) come from the checkpoint, the rest from this run.

        - ``state``: the checkpoint as written (``source``, ``target``, ``regions`` with their ``rows``).
        - ``rows`` / ``cells`` / ``rejected`` / ``seconds``: this run's counts and time.
        - ``created_target``, ``state_path``, ``reject_path``, ``resumed``, ``notes``: as the fields.
        """
        return cls(
            source=state["source"],
            target=state["target"],
            rows=rows,
            cells=cells,
            rejected=rejected,
            seconds=seconds,
            regions=len(state["regions"]),
            total_rows=sum(int(e["rows"]) for e in state["regions"]),
            created_target=created_target,
            state_path=str(state_path),
            reject_path=str(reject_path),
            resumed=resumed,
            notes=list(notes or []),
        )


def default_state_path(old: KeySchema, new: KeySchema, directory: str | Path = ".") -> Path:
    """``.keyshape-migrate-<old>-to-<new>.json`` in ``directory`` (the table names of ``old`` and
    ``new``, ':' -> '.')."""

    def clean(name: str) -> str:
        return name.replace(":", ".")

    return Path(directory) / f".keyshape-migrate-{clean(old.table.full_name)}-to-{clean(new.table.full_name)}.json"


def check_designs(old: KeySchema, new: KeySchema) -> None:
    """KeyshapeError unless every cell of ``old``'s table fits ``new``'s: ``new`` needs every
    field ``old`` has (and no other), every family of ``old`` keeping at least as many versions,
    and another table."""
    if old.table.full_name == new.table.full_name:
        raise BadInput(
            f"both schemas name table {old.table.full_name!r}: give the new design another [table] name (migrate copies into a second table)"
        )
    if old.prefix.width and not old.prefix.recoverable:
        raise BadInput(f"the old design's {old.prefix.name} key cannot be decoded into fields; migrate needs a key whose fields can be read back")
    missing = [f for f in new.field_names if f not in old.field_names]
    extra = [f for f in old.field_names if f not in new.field_names]
    if missing or extra:
        raise BadInput(
            f"the designs have other key fields (new only: {missing or 'none'}, old only: {extra or 'none'}): a migration keeps the same fields"
        )
    versions = {f.name: int(f.versions) for f in new.table.families}
    for family in old.table.families:
        if family.name not in versions:
            raise BadInput(f"the new table has no column family {family.name!r}: add it to the new schema's [[table.families]]")
        if versions[family.name] < int(family.versions):
            raise BadInput(
                f"family {family.name!r} keeps {family.versions} versions in the old "
                f"table but {versions[family.name]} in the new one: older versions "
                "would be lost; raise versions in the new schema"
            )


def _check_keys_decode(store: Store, table: str, old: KeySchema, probe: int = 200) -> None:
    """KeyshapeError, before anything is created or written, when the first keys of ``table``
    mostly do not decode with ``old`` (the wrong schema for this table); a few odd rows are
    left to the reject file."""
    keys = list(store.scan_keys(table, limit=probe))
    bad = []
    for key in keys:
        try:
            old.decode(key)
        except KeyshapeError as exc:
            bad.append(f"{to_string_binary(key)} ({' '.join(str(exc).split())})")
    if keys and len(bad) > MAX_UNDECODABLE * len(keys):
        raise BadInput(
            f"the old schema {old.source} does not match table {table!r}: {len(bad)} "
            f"of its first {len(keys)} keys do not decode, e.g. {bad[0]}; pass the "
            "schema the table was written with"
        )


def _hex(key: bytes | None) -> str | None:
    return None if key is None else key.hex()


def _unhex(text: str | None) -> bytes | None:
    return None if text is None else bytes.fromhex(text)


def _fingerprint(schema: KeySchema) -> str:
    text = Path(schema.source).read_bytes() if Path(str(schema.source)).is_file() else repr(schema).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def _write_state(path: Path, state: dict[str, Any]) -> None:
    """Replace ``path`` atomically and durably: a crash leaves the old or the new file, whole."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _is_empty(store: Store, table: str) -> bool:
    return next(iter(store.scan_keys(table, limit=1)), None) is None


class _Throttle:
    """Sleeps so that rows per second stay at or below ``rate`` (None: no limit)."""

    def __init__(self, rate: float | None) -> None:
        self.rate, self.started, self.rows = rate, time.monotonic(), 0

    def __call__(self, rows: int) -> None:
        self.rows += rows
        if self.rate:
            ahead = self.rows / self.rate - (time.monotonic() - self.started)
            if ahead > 0:
                time.sleep(ahead)


def migrate(
    store: Store,
    old: KeySchema,
    new: KeySchema,
    *,
    resume: bool = False,
    state_path: str | Path | None = None,
    reject_path: str | Path | None = None,
    max_rows_per_sec: float | None = None,
    batch_size: int = 1000,
    progress: Progress | None = None,
    on_started: Callable[[], None] | None = None,
) -> MigrationResult:
    """Copy ``old``'s table into ``new``'s design (see the module docstring).

    Refuses (KeyshapeError/StoreError, nothing written) designs that would lose cells
    (``check_designs``), a missing source table, and a target that already holds rows when
    ``resume`` is False; with ``resume`` the state file must exist and belong to these two
    schemas. ``progress(rows)`` is called after every acknowledged batch with the rows copied by
    this run. ``on_started()`` is called once the target is checked (empty, or a resume's) and
    the state file written, before the first row is copied (an online migration opens its stream
    there). Returns a ``MigrationResult``; a failed write raises StoreError naming the state
    file to resume from.

    - ``store``: holds both tables (the target is created when missing).
    - ``state_path``: the checkpoint file (default :func:`default_state_path`); ``reject_path``:
      where undecodable rows go (default: the state file's name with ``.rejects.tsv``).
    - ``max_rows_per_sec``: a throttle on the copy (None: as fast as the cluster takes it);
      ``batch_size``: rows per acknowledged batch (default 1000).
    """
    if batch_size < 1:
        raise BadInput(f"batch size must be at least 1, got {batch_size}")
    if max_rows_per_sec is not None and max_rows_per_sec <= 0:
        raise BadInput(f"--max-rows-per-sec must be positive, got {max_rows_per_sec}")
    check_designs(old, new)
    source, target = old.table.full_name, new.table.full_name
    state_file = Path(state_path) if state_path else default_state_path(old, new)
    rejects_file = Path(reject_path) if reject_path else state_file.with_suffix(".rejects.tsv")
    regions = store.regions(source)  # TableNotFound for a missing source, before anything else
    _check_keys_decode(store, source, old)
    fingerprints = {"old": _fingerprint(old), "new": _fingerprint(new)}
    created = False
    if resume:
        if not state_file.is_file():
            raise BadInput(
                f"--resume: no checkpoint at {state_file}; run without --resume to start the copy (or pass the --state file of the earlier run)"
            )
        state = json.loads(state_file.read_text(encoding="utf-8"))
        if (state.get("source"), state.get("target")) != (source, target):
            raise BadInput(f"--resume: {state_file} is the checkpoint of {state.get('source')} -> {state.get('target')}, not {source} -> {target}")
        if state.get("schemas") != fingerprints:
            raise BadInput(f"--resume: a schema changed since the checkpoint in {state_file} was written; resume with the same two schema files")
        if not store.table_exists(target):
            raise BadInput(f"--resume: target table {target!r} is gone; start again without --resume")
    else:
        if store.table_exists(target):
            if not _is_empty(store, target):
                raise BadInput(
                    f"target table {target!r} already holds rows; continue an earlier copy with --resume, or drop the table to start again"
                )
        else:
            create_table_from_schema(store, new)
            created = True
        state = {
            "source": source,
            "target": target,
            "schemas": fingerprints,
            "rejected": 0,
            "regions": [{"start": r.start.hex(), "end": r.end.hex(), "last": None, "done": False, "rows": 0} for r in regions],
        }
        _write_state(state_file, state)
        rejects_file.write_text("", encoding="utf-8")
    seen_rejects = set()
    if rejects_file.is_file():
        seen_rejects = {line.split("\t", 1)[0] for line in rejects_file.read_text(encoding="utf-8").splitlines()}
    if on_started is not None:
        on_started()
    throttle = _Throttle(max_rows_per_sec)
    counts = [0, 0]  # rows, cells copied by this run
    started = time.perf_counter()
    try:
        _copy_regions(store, old, new, state, state_file, rejects_file, seen_rejects, batch_size, throttle, counts, progress)
    except StoreError as exc:
        raise StoreError(
            f"copy of {source!r} into {target!r} stopped after {counts[0]:,} row(s) "
            f"this run: {exc}; every acknowledged batch is checkpointed in "
            f"{state_file}: run the same command with --resume to continue"
        ) from exc
    return MigrationResult.from_state(
        state,
        rows=counts[0],
        cells=counts[1],
        rejected=len(seen_rejects),
        seconds=time.perf_counter() - started,
        created_target=created,
        state_path=state_file,
        reject_path=rejects_file,
        resumed=resume,
    )


def _copy_regions(
    store: Store,
    old: KeySchema,
    new: KeySchema,
    state: dict[str, Any],
    state_file: Path,
    rejects_file: Path,
    seen_rejects: set[str],
    batch_size: int,
    throttle: _Throttle,
    counts: list[int],
    progress: Progress | None,
) -> None:
    """Copy every source region not done yet, batch by batch.

    Batches are written on :data:`WRITERS` worker threads while the next one is read and re-keyed
    here, so the server stores batches while the client prepares more. A batch counts as copied
    only once the target acknowledged it and every batch before it (they are collected in
    order); after a failure no further batch starts. The state file is rewritten (write, fsync,
    rename: ~3 ms here) at most every :data:`CHECKPOINT_SECONDS`, at the end of each region, and
    when the copy stops on an error, so a failed copy resumes right after its last acknowledged
    batch; only a client killed outright re-copies up to that many seconds of rows (the same
    cells at the same timestamps again, which changes nothing)."""
    source, target = state["source"], state["target"]
    writes = ThreadPoolExecutor(max_workers=WRITERS, thread_name_prefix="keyshape-migrate")
    failed = threading.Event()

    def write(new_keys: list[bytes | None], batch: list[Any]) -> tuple[int, int]:
        if failed.is_set():  # an earlier batch failed: write nothing after the checkpoint
            raise StoreError("not written: an earlier batch failed")
        try:
            return _write_batch(store, target, new_keys, batch)
        except BaseException:
            failed.set()
            raise

    saved = [time.monotonic()]

    def checkpoint() -> None:
        _write_state(state_file, state)
        saved[0] = time.monotonic()

    with open(rejects_file, "a", encoding="utf-8") as rejects:

        def finish(entry: dict[str, Any], batch: list[Any], bad: list[tuple[str, str]], written: Future[tuple[int, int]]) -> None:
            copied, copied_cells = written.result()  # WriteFailed/StoreError: not checkpointed
            for key_text, reason in bad:
                if key_text not in seen_rejects:
                    seen_rejects.add(key_text)
                    rejects.write(f"{key_text}\t{reason}\n")
            if bad:
                rejects.flush()
                os.fsync(rejects.fileno())
            counts[0] += copied
            counts[1] += copied_cells
            entry["last"] = batch[-1][0].hex()
            entry["rows"] += copied
            state["rejected"] = len(seen_rejects)
            if time.monotonic() - saved[0] >= CHECKPOINT_SECONDS:
                checkpoint()
            if progress is not None:
                progress(counts[0])
            throttle(len(batch))

        in_flight: deque[tuple[dict[str, Any], list[Any], list[tuple[str, str]], Future[tuple[int, int]]]] = deque()
        try:
            for entry in state["regions"]:
                if entry["done"]:
                    continue
                last = _unhex(entry["last"])
                start = _unhex(entry["start"]) or b""
                if last is not None:
                    start = last + b"\x00"  # the smallest key after the last one copied
                stop = _unhex(entry["end"]) or b""
                scanner = store.scan_versions(source, start, stop, batch_size=batch_size)
                ahead = _Batches(scanner, batch_size)
                try:
                    while (batch := ahead.next_batch()) is not None:
                        new_keys, bad = _new_keys(old, new, [key for key, _ in batch])
                        in_flight.append((entry, batch, bad, writes.submit(write, new_keys, batch)))
                        if len(in_flight) > WRITERS:
                            finish(*in_flight.popleft())
                finally:
                    ahead.close()
                while in_flight:
                    finish(*in_flight.popleft())
                entry["done"] = True
                checkpoint()
        except BaseException:
            failed.set()  # batches queued behind the failure are not started
            writes.shutdown(wait=True, cancel_futures=True)  # one being written ends first
            try:
                _write_state(state_file, state)  # every acknowledged batch: the resume point
            except OSError as exc:
                log.warning("could not checkpoint %s after the copy failed: %s", state_file, exc)
            raise
        writes.shutdown(wait=True)  # every region ended with its checkpoint


class _Batches:
    """Lists of up to ``size`` items of ``it``; ``close`` closes the iterator (its scanner)."""

    def __init__(self, it: Iterator[Any], size: int) -> None:
        self._it, self._size = it, size

    def next_batch(self) -> list[Any] | None:
        batch = list(islice(self._it, self._size))
        return batch or None

    def close(self) -> None:
        close = getattr(self._it, "close", None)
        if close is not None:
            close()


def _new_keys(old: KeySchema, new: KeySchema, keys: list[bytes]) -> tuple[list[bytes | None], list[tuple[str, str]]]:
    """Each old key re-encoded in ``new`` (None where it cannot be) and the rejects with reasons.
    Keys are decoded one by one but encoded as columns (``encode_many``), the fast path; a batch
    holding a value the new design refuses is encoded row by row to find it."""
    bad: list[tuple[str, str]] = []
    records: list[dict[str, Any] | None] = []
    for key in keys:
        try:
            records.append(old.decode_exact(key))
        except (KeyshapeError, ValueError, TypeError) as exc:
            records.append(None)
            bad.append((to_string_binary(key), " ".join(str(exc).split())))
    good = [r for r in records if r is not None]
    try:
        encoded = iter(new.encode_many({f: [r[f] for r in good] for f in new.field_names}))
        return [None if r is None else next(encoded) for r in records], bad
    except (KeyshapeError, ValueError, TypeError, OverflowError):
        pass
    out: list[bytes | None] = []
    for key, record in zip(keys, records):
        if record is None:
            out.append(None)
            continue
        try:
            out.append(new.encode(record))
        except (KeyshapeError, ValueError, TypeError, OverflowError) as exc:
            out.append(None)
            bad.append((to_string_binary(key), "the new design cannot encode it: " + " ".join(str(exc).split())))
    return out, bad


def _write_batch(
    store: Store, target: str, new_keys: list[bytes | None], batch: list[tuple[bytes, dict[bytes, list[tuple[int, bytes]]]]]
) -> tuple[int, int]:
    """Write one batch of source rows under their new keys (None: rejected, skipped) into
    ``target``; returns ``(rows, cells)`` once the target acknowledged every cell (WriteFailed
    otherwise)."""
    rows = cells = 0
    with store.writer(target, batch_size=4 * len(batch) + 16) as writer:
        for new_key, (_, columns) in zip(new_keys, batch):
            if new_key is None:
                continue
            # one Put per timestamp: a Put carries one timestamp for all its cells
            by_ts: dict[int, dict[bytes, bytes]] = {}
            for column, versions in columns.items():
                for ts, value in versions:
                    by_ts.setdefault(ts, {})[column] = value
                    cells += 1
            for ts, group in by_ts.items():
                writer.put(new_key, group, ts)
            rows += 1
    return rows, cells
