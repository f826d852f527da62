"""The autopilot's observation of a table, from serve's own parts: the history database a
running ``keyshape serve`` keeps (``--db``), or a bounded poll by serve's ``Poller`` into a
scratch history made for the run. Either way the verdict and the pattern are the poller's.

This lives in ``serve`` because ``ops`` (where the autopilot's stages are) cannot import it."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from keyshape.errors import BadInput
from keyshape.ops.autopilot.observed import Observed
from keyshape.schema import KeySchema
from keyshape.serve.history import History
from keyshape.serve.poller import Poller
from keyshape.store.base import Store

__all__ = ["from_history", "observe"]


def from_history(history: History, table: str, since: float, source: str, servers: int = 1, until: float | None = None) -> Observed:
    """``table``'s writes and reads from ``since`` to ``until`` (epoch s; default now) in
    ``history``, at the finest layer that holds ``since``."""
    until = time.time() if until is None else until
    # the same ``until`` as ``since`` was taken from: an hour back from a later clock would be
    # past the polls layer's hour and fall to the minute roll-up
    q = history.heat(table, since, until, max_keys=0)
    if len(q.times) == 0:
        raise BadInput(f"{source} holds no poll of table {table!r} since {since:.0f}; is serve watching it (its --tables)?")
    verdict = history.verdicts().get(table, (0.0, {}))[1]
    ends = [*q.starts[1:], b""]
    return Observed(
        table, np.asarray(q.times, dtype=np.float64), list(q.starts), ends, q.writes, q.reads, verdict, source, servers, history.events(table, since)
    )


def observe(
    open_store: Callable[[], Store],
    table: str,
    schema: KeySchema | None,
    *,
    db: str | Path | None = None,
    since_s: float = 3600.0,
    poll_seconds: float = 30.0,
    interval: float = 3.0,
    sleep: Callable[[float], None] = time.sleep,
) -> Observed:
    """From ``db`` (the last ``since_s`` seconds) when given, else a poll of ``table`` every
    ``interval`` seconds for ``poll_seconds`` into a scratch history (deleted after)."""
    store = open_store()
    try:
        servers = len(store.region_servers())
    finally:
        store.close()
    if db is not None:
        if not Path(db).is_file():
            raise BadInput(f"--db {db}: no such file; give the --db of a running or past 'keyshape serve'")
        history = History(db)
        try:
            now = time.time()
            return from_history(history, table, now - since_s, f"serve's history {db}", servers, until=now)
        finally:
            history.close()
    if poll_seconds < 2 * interval:
        raise BadInput(f"--poll-seconds {poll_seconds:g} is too short: give at least two intervals ({2 * interval:g} s)")
    with tempfile.TemporaryDirectory(prefix="keyshape-autopilot-") as folder:
        history = History(Path(folder) / "poll.sqlite")
        poller = Poller(open_store, history, [table], {table: schema} if schema is not None else {}, interval)
        began = time.time()
        try:
            polls = int(poll_seconds // interval) + 1
            for i in range(polls):
                t0 = time.monotonic()
                if not poller.poll_once():
                    raise BadInput(f"cannot poll the cluster: {poller.last_error}")
                if i < polls - 1:
                    sleep(max(0.0, interval - (time.monotonic() - t0)))
            if table not in history.tables():
                raise BadInput(f"table {table!r} is not on the cluster (or took no poll)")
            return from_history(history, table, began - 1, f"a {poll_seconds:g} s poll every {interval:g} s", servers)
        finally:
            if poller.store is not None:
                poller.store.close()
            history.close()
