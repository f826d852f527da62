"""Stage 7, act (only with explicit flags): start the online migration to the plan's NEW design
(``--apply``: NEW created pre-split, the copy, then the run returns with the stream's peer left
in place, disabled, for the cut-over), or finish it (``--cutover``: catch up, verify OLD against
NEW, remove the peer). Both are ``ops.migrate_online.migrate_online``, the one online migration;
its state file makes either resumable."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from keyshape.ops.migrate_online import OnlineResult, OnlineStatus, migrate_online
from keyshape.schema import KeySchema

if TYPE_CHECKING:  # annotations only
    from keyshape.store.hbase.store import HBaseStore

__all__ = ["apply_plan", "cut_over"]


def apply_plan(
    store: HBaseStore,
    old: KeySchema,
    new_path: Path,
    state_path: Path,
    *,
    set_replication_scope: bool = False,
    sink_bind: str | None = None,
    progress: Callable[[OnlineStatus], None] | None = None,
) -> OnlineResult:
    """Create NEW (if missing), copy OLD into it while the stream applies, and return once the
    copy is done: the peer stays, so nothing written meanwhile is lost (HBase keeps the WALs)."""
    new = KeySchema.load(new_path)
    return migrate_online(
        store,
        old,
        new,
        state_path=state_path,
        set_replication_scope=set_replication_scope,
        sink_bind=sink_bind,
        stream_until=lambda _status: True,
        progress=progress,
    )


def cut_over(
    store: HBaseStore,
    old: KeySchema,
    new_path: Path,
    state_path: Path,
    *,
    max_lag: float = 2.0,
    sink_bind: str | None = None,
    progress: Callable[[OnlineStatus], None] | None = None,
) -> OnlineResult:
    """Resume the online migration and cut over: caught up, OLD verified against NEW, peer removed."""
    new = KeySchema.load(new_path)
    return migrate_online(store, old, new, state_path=state_path, cutover=True, max_lag=max_lag, sink_bind=sink_bind, progress=progress)
