"""``migrate --spark``: the bulk copy of :mod:`keyshape.ops.migrate_bulk` run as a Spark job.

One Spark task per OLD region not yet copied: it reads its range through keyshape's HBase client,
re-keys it with the exact schemas and writes sorted HFiles per NEW region and family
(:func:`~keyshape.ops.migrate_bulk.copy_range`) into the staging directory. The driver hands the
files of the tasks that have ended to HBase (``BulkLoadHFile``) in load rounds, once they hold
``load_rows`` rows and at the end, and checkpoints their regions as done in the state file the
put path uses. A round joins the files of each NEW region whose rows follow one another (a salt
over a sequential key: every source range is one slice of each NEW region) into one file
(:func:`~keyshape.store.hbase.bulkload.join_files`), so a region gets one file per round, not one
per source region: a store of 3 files or more is compacted by HBase right after the load (every
cell read and written again by the region server), which cost the copy more region-server CPU
than the load itself (bench_migrate).

Each region is its own Spark job (submitted from ``parallelism`` driver threads), so a task that
dies is re-run by Spark for its range only (``local[N,F]`` / ``spark.task.maxFailures``), and a
region whose task fails for good leaves every other region loaded and checkpointed: ``resume``
copies only what is not done. ``max_rows_per_sec`` is the sum over the tasks running at once.

The staging directory must be readable by NEW's region servers: on this machine's standalone or
test cluster a local directory is (``check_staging`` refuses otherwise); a real cluster needs the
tasks to write to its HDFS, which is not supported yet.
"""

from __future__ import annotations

import re
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from keyshape.errors import BadInput, StoreError
from keyshape.ops.migrate import MigrationResult, _Throttle, _write_state, default_state_path
from keyshape.ops.migrate_bulk import (
    RUN_ROWS,
    RangeCopy,
    copy_range,
    family_formats,
    prepare_copy,
    record_rejects,
    seen_rejects,
    staging_dir,
)
from keyshape.schema import KeySchema
from keyshape.spark.session import as_schema, session
from keyshape.store.hbase.bulkload import bulk_load, check_staging

__all__ = ["migrate_spark"]

# Rows staged before a load round: what a driver that dies re-copies at most (its regions are not
# checkpointed yet), and the staging space the HFiles take (~ rows x cell size)
LOAD_ROWS = 10_000_000
DEFAULT_MASTER = "local[*,4]"  # local mode retries a failed task only when told how often: 4, Spark's default elsewhere


def _task(
    url: str,
    old: KeySchema,
    new: KeySchema,
    new_starts: list[bytes],
    stage: str,
    formats: dict[bytes, Any],
    rate: float | None,
    run_rows: int,
    on_task: Any,
) -> Callable[[Any], Any]:
    def run(items: Any) -> Any:
        from pyspark import TaskContext

        from keyshape.store import open_store

        context = TaskContext.get()
        attempt = context.attemptNumber() if context is not None else 0
        for index, start, end in items:
            if on_task is not None:
                on_task(index, attempt)
            directory = Path(stage) / f"region-{index}" / f"attempt-{attempt}"
            shutil.rmtree(directory, ignore_errors=True)
            store = open_store(url)
            try:
                copied = copy_range(
                    store,
                    old,
                    new,
                    start,
                    end,
                    new_starts,
                    directory,
                    formats,
                    run_rows=run_rows,
                    throttle=_Throttle(rate),
                    task=f"region{index}-attempt{attempt}",
                )
            finally:
                store.close()
            yield index, copied

    return run


def _reason(exc: BaseException) -> str:
    """The Python error a failed Spark task ended with (the last ``XxxError: ...`` line of the
    worker's traceback inside Py4J's text), else the exception's first line."""
    lines = [line.strip() for line in str(exc).splitlines()]
    errors = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception): ", line)]
    return (errors[-1] if errors else lines[0] if lines else type(exc).__name__)[:300]


def migrate_spark(
    url: str,
    old: KeySchema | str | Path,
    new: KeySchema | str | Path,
    *,
    master: str | None = None,
    spark: Any = None,
    resume: bool = False,
    state_path: str | Path | None = None,
    reject_path: str | Path | None = None,
    staging: str | Path | None = None,
    max_rows_per_sec: float | None = None,
    run_rows: int = RUN_ROWS,
    load_rows: int = LOAD_ROWS,
    on_task: Callable[[int, int], None] | None = None,
    progress: Callable[[int], None] | None = None,
    on_started: Callable[[], None] | None = None,
) -> MigrationResult:
    """Copy OLD's table (HBase at ``url``) into NEW's design with a Spark job writing HFiles and
    the driver bulk-loading them (see the module docstring). ``spark``: a SparkSession to use
    (else one on ``master``, default ``local[*,4]``). ``on_task(region index, attempt)`` is called
    in the task before it copies (tests fail a task there). Returns the put path's
    ``MigrationResult``; StoreError names the regions whose tasks failed (the rest is loaded and
    checkpointed: run again with ``resume``). ``on_started()``: as :func:`~keyshape.ops.migrate_bulk.migrate_bulk`'s.
    ``load_rows``: the rows of ended tasks after which their files are loaded (else at the end)."""
    from keyshape.store import open_store

    old, new = as_schema(old), as_schema(new)
    if max_rows_per_sec is not None and max_rows_per_sec <= 0:
        raise BadInput(f"--max-rows-per-sec must be positive, got {max_rows_per_sec}")
    state_file = Path(state_path) if state_path else default_state_path(old, new)
    rejects_file = Path(reject_path) if reject_path else state_file.with_suffix(".rejects.tsv")
    target = new.table.full_name
    store: Any = open_store(url)
    if not hasattr(store, "cluster"):
        store.close()
        raise BadInput("--spark copies through HBase's bulk-load path and needs a real HBase (--hbase HOST:PORT)")
    try:
        state, created = prepare_copy(store, old, new, resume, state_file, rejects_file)
        stage = (Path(staging) if staging else staging_dir(state_file, new)).resolve()
        check_staging(store, target, stage)
        formats = family_formats(store, target)
        new_starts = [r.start for r in store.regions(target)]
        pending = [(i, bytes.fromhex(e["start"]), bytes.fromhex(e["end"])) for i, e in enumerate(state["regions"]) if not e["done"]]
        seen = seen_rejects(rejects_file)
        if on_started is not None:
            on_started()
        spark = spark or session(master or DEFAULT_MASTER, "keyshape-migrate")
        sc = spark.sparkContext
        parallel = max(1, min(sc.defaultParallelism, len(pending) or 1))
        rate = max_rows_per_sec / parallel if max_rows_per_sec else None
        run = _task(url, old, new, new_starts, str(stage), formats, rate, run_rows, on_task)
        lock, loading = threading.Lock(), threading.Lock()
        ready: list[tuple[int, RangeCopy]] = []  # tasks ended, files not loaded yet
        totals = [0, 0]
        failed: list[str] = []
        started = time.perf_counter()

        def one(item: tuple[int, bytes, bytes]) -> None:
            index = item[0]
            sc.setJobGroup(f"keyshape-migrate-{index}", f"copy source region {index + 1} of {len(state['regions'])}")
            try:
                results: list[tuple[int, RangeCopy]] = sc.parallelize([item], 1).mapPartitions(run).collect()
            except Exception as exc:  # Py4JJavaError: the task failed maxFailures times
                failed.append(f"region {index + 1} ({_reason(exc)})")
                return
            with lock:
                ready.extend((index, copied) for _, copied in results)
            load_ready()

        def load_ready(final: bool = False) -> None:
            """Load the files of every task that has ended and is not loaded yet, in one round,
            when they hold ``load_rows`` rows or ``final`` (one BulkLoadHFile per NEW region
            however many tasks' files it gets, joined: the server's cost per call -- flush, WAL
            marker and sync -- and per file is paid once per round, not per task). Whichever
            thread finds no load running does it; tasks ending meanwhile wait for the next round."""
            while ready and (final or sum(copied.rows for _, copied in ready) >= load_rows) and loading.acquire(blocking=False):
                try:
                    with lock:
                        batch = ready[:]
                        del ready[:]
                    if not batch:
                        continue
                    bulk_load(store, target, [f for _, copied in batch for f in copied.files])
                    for index, copied in batch:
                        record_rejects(rejects_file, copied.rejects, seen)
                        state["regions"][index].update(done=True, rows=copied.rows)
                        totals[0] += copied.rows
                        totals[1] += copied.cells
                        shutil.rmtree(stage / f"region-{index}", ignore_errors=True)
                    state["rejected"] = len(seen)
                    _write_state(state_file, state)
                    if progress is not None:
                        progress(totals[0])
                finally:
                    loading.release()

        with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="keyshape-spark-migrate") as pool:
            for future in [pool.submit(one, item) for item in pending]:
                future.result()
        load_ready(final=True)  # what the last rounds left (no thread is loading by then)
        if failed:
            raise StoreError(
                f"bulk copy of {old.table.full_name!r} into {target!r}: {len(failed)} source region(s) failed: {'; '.join(failed[:3])}; "
                f"the {len(pending) - len(failed)} other(s) are loaded and checkpointed in {state_file}: run the same command with --resume"
            )
        shutil.rmtree(stage, ignore_errors=True)
        return MigrationResult.from_state(
            state,
            rows=totals[0],
            cells=totals[1],
            rejected=len(seen),
            seconds=time.perf_counter() - started,
            created_target=created,
            state_path=state_file,
            reject_path=rejects_file,
            resumed=resume,
            notes=[f"copied by Spark ({sc.master}, {len(pending)} task(s)) through HBase's bulk-load path"],
        )
    finally:
        store.close()
