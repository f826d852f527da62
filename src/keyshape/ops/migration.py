"""``keyshape migrate`` as one library call: preflight, copy, verify and the exit rules.

:func:`migrate_and_verify` runs the whole workflow the command runs and returns a
:class:`MigrationRun` that carries the decision the command exits with, so a script or a service
gets the same answer as the operator at the terminal:

1. Preflight (a fresh copy only; issue 31): how NEW spreads OLD's real keys, printed before the
   copy starts; it never stops a migration (:func:`keyshape.ops.preflight.preflight_lines`).
2. The copy: puts (:func:`keyshape.ops.migrate.migrate`), HFiles through HBase's bulk-load path
   (:func:`keyshape.ops.migrate_bulk.migrate_bulk`), or any copy of that signature passed in (the
   Spark job of :mod:`keyshape.spark.migrate`, a layer above this one); online
   (:func:`keyshape.ops.migrate_online.migrate_online`) with any of them as its copy step.
3. The verification (:func:`keyshape.ops.verify.verify_migration`): rows, cells and a checksum per
   source region on both sides.
4. The exit rules (:data:`FailedRule`), in this order: an interrupt during the copy or the stream
   (130, as a shell reports SIGINT: every acknowledged batch is checkpointed and the same run
   resumes), rows whose OLD key does not decode (2: the copy is complete for what decodes, not for
   the table; "nothing acknowledged is ever lost" means the operator must hear of every row left
   behind), a difference found by the verification (2), or an online cut-over that went on without
   the undecodable rows (2). Otherwise 0.

Bad input (contradictory modes, designs that would lose cells, a missing table, a checkpoint of
another migration) raises :class:`~keyshape.errors.BadInput` before anything is written, as every
ops function does; only what happened after the work began is a rule of the result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from keyshape.errors import BadInput
from keyshape.ops.migrate import MigrationResult, default_state_path, migrate
from keyshape.ops.verify import Verification, verify_migration
from keyshape.schema import KeySchema
from keyshape.store.base import Store

if TYPE_CHECKING:  # annotations only: an offline migration does not load the online machinery (0.4 s)
    from keyshape.ops.migrate_online import BulkCopy, OnlineResult, OnlineStatus

__all__ = ["EXIT_BAD", "EXIT_CODES", "EXIT_INTERRUPTED", "VERIFIED", "FailedRule", "MigrationRun", "OnlineOptions", "migrate_and_verify"]

#: The exit code of a failed rule: keyshape's code for bad input and refusals (cli.main).
EXIT_BAD = 2
#: The exit code after Ctrl-C: 128 + SIGINT, what a shell reports for a process SIGINT ended.
EXIT_INTERRUPTED = 130

#: The one line a migration that passed every rule ends with.
VERIFIED = "verify: OK, source and target hold the same rows and cells"

Phase = Callable[[str], AbstractContextManager[Callable[[int], None]]]
#: A verification step with :func:`keyshape.ops.verify.verify_migration`'s shape
#: (``verify(store, old, new, progress=update)``), e.g. the Spark job's.
Verify = Callable[..., Verification]


#: Which exit rule a migration failed (:attr:`MigrationRun.failed`):
#:
#: - ``"interrupted"``: Ctrl-C during the copy (checkpointed: the same command with ``resume``
#:   continues) or during the online stream (the peer stays: the same command resumes); exit 130.
#: - ``"rejected"``: rows of OLD whose key does not decode with OLD's schema were not copied (they
#:   are in the reject file); exit 2.
#: - ``"differences"``: the verification found OLD and NEW differ (listed in the run's lines); exit 2.
#: - ``"not-copied"``: an online migration cut over, but OLD's undecodable rows are not in NEW; exit 2.
FailedRule = Literal["interrupted", "rejected", "differences", "not-copied"]
EXIT_CODES: dict[FailedRule, int] = {"interrupted": EXIT_INTERRUPTED, "rejected": EXIT_BAD, "differences": EXIT_BAD, "not-copied": EXIT_BAD}


@dataclass(frozen=True)
class OnlineOptions:
    """How an online migration runs (``migrate --online``; see :func:`keyshape.ops.migrate_online.migrate_online`).

    - ``set_replication_scope``: set ``REPLICATION_SCOPE`` 1 on OLD's families that lack it.
    - ``cutover``: finish with the cut-over (wait for the lag, verify, repair, remove the peer);
      without it the stream runs until interrupted and the next run resumes.
    - ``max_lag``: the cut-over's bound on every source's replication lag, in seconds.
    - ``sink_bind``: ``HOST[:PORT]`` the replication sink listens on (None: chosen).
    """

    set_replication_scope: bool = False
    cutover: bool = False
    max_lag: float = 2.0
    sink_bind: str | None = None


@dataclass
class MigrationRun:
    """What :func:`migrate_and_verify` did and how it ends.

    - ``source`` / ``target``: the two tables; ``online``: an online migration.
    - ``preflight``: the preflight lines (empty on a resume, a verify-only or an online run).
    - ``copy``: this run's copy (None: verify only, or an online copy done by an earlier run).
    - ``verification``: the comparison of both tables (None when the run ended before it, or an
      online run without the cut-over).
    - ``online_result``: what :func:`~keyshape.ops.migrate_online.migrate_online` returned (online
      runs that were not interrupted).
    - ``lines``: the report, in order (what ``keyshape migrate`` prints on stdout; each line was
      also passed to ``say`` as it became known).
    - ``failed``: the first exit rule that failed (None: every rule passed).
    - ``message``: why it failed, one sentence (None when it did not): for an interrupt what is
      kept and how to resume, else what is wrong and where to look.
    - ``notices``: what the operator was told on the way (an online run's ``notice`` texts),
      repeated after an interrupt.
    """

    source: str
    target: str
    online: bool = False
    preflight: list[str] = field(default_factory=list)
    copy: MigrationResult | None = None
    verification: Verification | None = None
    online_result: OnlineResult | None = None
    lines: list[str] = field(default_factory=list)
    failed: FailedRule | None = None
    message: str | None = None
    notices: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every rule passed."""
        return self.failed is None

    @property
    def exit_code(self) -> int:
        """What ``keyshape migrate`` exits with: 0, or the failed rule's code."""
        return 0 if self.failed is None else EXIT_CODES[self.failed]


@contextlib.contextmanager
def _no_bar(description: str) -> Iterator[Callable[[int], None]]:
    yield lambda done: None


def _copy_function(via: str, copy: BulkCopy | None) -> BulkCopy | None:
    """The copy step: ``copy`` when given, else the bulk-load copy for ``via="bulkload"``; None
    for puts (:func:`keyshape.ops.migrate.migrate`, which also takes a batch size)."""
    if via not in ("puts", "bulkload"):
        raise BadInput(f"via {via!r}: copy with 'puts' or 'bulkload'")
    if copy is not None:
        return copy
    if via == "bulkload":
        from keyshape.ops.migrate_bulk import migrate_bulk

        return migrate_bulk
    return None


def migrate_and_verify(
    store: Store,
    old: KeySchema,
    new: KeySchema,
    *,
    resume: bool = False,
    verify_only: bool = False,
    via: str = "puts",
    copy: BulkCopy | None = None,
    verify: Verify | None = None,
    online: OnlineOptions | None = None,
    state_path: str | Path | None = None,
    reject_path: str | Path | None = None,
    max_rows_per_sec: float | None = None,
    batch_size: int = 1000,
    say: Callable[[str], None] | None = None,
    phase: Phase | None = None,
    notice: Callable[[str], None] | None = None,
    status: Callable[[OnlineStatus], None] | None = None,
) -> MigrationRun:
    """Migrate ``old``'s table into ``new``'s design and verify it: ``keyshape migrate`` (module docstring).

    Returns a :class:`MigrationRun` whose ``failed`` / ``exit_code`` is the decision; raises
    BadInput/StoreError for what is refused before the work starts and for a store that fails
    (the copy's StoreError names the checkpoint to resume from).

    - ``store``: holds both tables (left open: the caller closes it); an HBase store for
      ``online`` and for the bulk-load copy.
    - ``old`` / ``new``: the design the table is in and the one to copy it into (another table).
    - ``resume``: continue an interrupted copy from its checkpoint (no preflight).
    - ``verify_only``: copy nothing, only compare the two tables.
    - ``via``: ``"puts"`` (through NEW's WAL and memstores) or ``"bulkload"`` (HFiles per NEW region).
    - ``copy``: the copy step to use instead, with :func:`keyshape.ops.migrate_bulk.migrate_bulk`'s
      signature (e.g. the Spark job: :func:`keyshape.spark.migrate.migrate_spark` bound to its URL).
    - ``verify``: the verification to use instead of :func:`keyshape.ops.verify.verify_migration`,
      with its signature (e.g. the Spark job that computes both sides' per-region checksums:
      :func:`keyshape.spark.verify.verify_spark` bound to its URL); the same rules judge it.
    - ``online``: run online (:class:`OnlineOptions`): keyshape joins as a replication peer of OLD
      and keeps NEW in step; None: offline.
    - ``state_path``: the copy's checkpoint (default :func:`keyshape.ops.migrate.default_state_path`);
      ``reject_path``: where undecodable rows go (default: next to the checkpoint).
    - ``max_rows_per_sec``: throttle the copy (None: as fast as the cluster takes it);
      ``batch_size``: rows per read and write batch of the put copy.
    - ``say(line)``: called with each report line as soon as it is known (the preflight before
      the copy, the copy's line before the verification); the lines are also in the result.
    - ``phase(description)``: a context manager around each long step (the copy, the
      verification) yielding ``update(rows done)``, e.g.
      :func:`keyshape.report.terminal.progress_bar` bound to a console (default: none).
    - ``notice(text)``: an online run's news for the operator as soon as it is known (e.g. the
      REPLICATION_SCOPE keyshape set); ``status(OnlineStatus)``: an online run's status, about
      every second.
    """
    if verify_only and resume:
        raise BadInput("verify_only copies nothing; a resume needs a copy")
    if online is not None and (verify_only or resume):
        raise BadInput("an online migration resumes by itself and verifies at its cut-over; drop resume/verify_only")
    copy_fn = _copy_function(via, copy)
    run = MigrationRun(old.table.full_name, new.table.full_name, online=online is not None)

    def tell(line: str) -> None:
        run.lines.append(line)
        if say is not None:
            say(line)

    if online is not None:
        return _online(store, old, new, run, online, copy_fn, state_path, reject_path, max_rows_per_sec, batch_size, tell, notice, status)
    bar = phase or _no_bar
    if not verify_only and not resume:  # issue 31: how NEW spreads OLD's real keys, before the copy
        from keyshape.ops.preflight import preflight_lines

        run.preflight = preflight_lines(store, old, new)
        for line in run.preflight:
            tell(line)
    if not verify_only:
        copied = [0]
        with bar(f"copying {run.source} -> {run.target}") as update:

            def progress(rows: int) -> None:
                copied[0] = rows
                update(rows)

            options: dict[str, Any] = {
                "resume": resume,
                "state_path": state_path,
                "reject_path": reject_path,
                "max_rows_per_sec": max_rows_per_sec,
                "progress": progress,
            }
            try:
                if copy_fn is None:
                    run.copy = migrate(store, old, new, batch_size=batch_size, **options)
                else:
                    run.copy = copy_fn(store, old, new, **options)
            except KeyboardInterrupt:
                # every copy checkpoints each acknowledged batch before the interrupt ends it
                where = state_path or default_state_path(old, new)
                run.failed = "interrupted"
                run.message = (
                    f"interrupted: {copied[0]:,} rows copied and acknowledged by HBase in this run; "
                    f"the checkpoint {where} holds every acknowledged batch: run the same "
                    "command with --resume to continue"
                )
                return run
        result = run.copy
        tell(
            f"copied {result.rows:,} rows ({result.cells:,} cells) in "
            f"{result.seconds:.1f} s, {result.rows_per_second:,.0f} rows/s; "
            f"{result.total_rows:,} rows copied in all; checkpoint {result.state_path}"
        )
    with bar("verifying") as update:
        check = (verify or verify_migration)(store, old, new, progress=update)
    run.verification = check
    for line in check.lines():
        tell(line)
    if run.copy is not None and run.copy.rejected:
        run.failed = "rejected"
        run.message = (
            f"{run.copy.rejected} row(s) of {run.source} could not be decoded with {old.source} and were not copied; see {run.copy.reject_path}"
        )
    elif not check.ok:
        run.failed = "differences"
        run.message = f"verify failed: {len(check.differences)} difference(s) between {run.source} and {run.target} (listed above)"
    else:
        tell(VERIFIED)
    return run


def _online(
    store: Store,
    old: KeySchema,
    new: KeySchema,
    run: MigrationRun,
    options: OnlineOptions,
    copy_fn: BulkCopy | None,
    state_path: str | Path | None,
    reject_path: str | Path | None,
    max_rows_per_sec: float | None,
    batch_size: int,
    tell: Callable[[str], None],
    notice: Callable[[str], None] | None,
    status: Callable[[OnlineStatus], None] | None,
) -> MigrationRun:
    """The online run of :func:`migrate_and_verify`: ``migrate_online`` and its rules."""
    from keyshape.ops.migrate_online import migrate_online, peer_id_for
    from keyshape.store.hbase import HBaseStore

    if not isinstance(store, HBaseStore):
        raise BadInput("--online needs a real HBase (--hbase HOST:PORT): keyshape joins it as a replication peer")

    def told(text: str) -> None:
        run.notices.append(text)
        if notice is not None:
            notice(text)

    try:
        result = migrate_online(
            store,
            old,
            new,
            state_path=state_path,
            reject_path=reject_path,
            set_replication_scope=options.set_replication_scope,
            cutover=options.cutover,
            max_lag=options.max_lag,
            sink_bind=options.sink_bind,
            progress=status,
            notice=told,
            batch_size=batch_size,
            max_rows_per_sec=max_rows_per_sec,
            bulk_copy=copy_fn,
        )
    except KeyboardInterrupt:
        run.failed = "interrupted"
        run.message = (
            f"interrupted: replication peer {peer_id_for(old, new)} stays (disabled), so HBase keeps {run.source}'s edits for it; "
            "the sink's znodes are removed and the copy is checkpointed: run the same command again to resume "
            "(add --cutover to finish)"
        )
        return run
    run.online_result, run.copy, run.verification = result, result.copy, result.verification
    tell(result.status.line())
    if result.copy is not None:
        tell(f"copied {result.copy.rows:,} rows ({result.copy.cells:,} cells) in {result.copy.seconds:.1f} s")
    if result.verification is not None:
        for line in result.verification.lines():
            tell(line)
        tell(VERIFIED + (" but the rejected ones" if result.skipped_rows else ""))
    for note in result.notes:
        tell(note)
    if result.skipped_rows:
        # as the offline migrate: a complete copy of what decodes, but not of the whole table
        run.failed = "not-copied"
        run.message = f"cut over, but {result.skipped_rows:,} row(s) of {run.source} were not copied (undecodable keys; see above)"
    return run
