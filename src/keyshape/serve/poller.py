"""The poller of ``keyshape serve``: every interval, each matching table's region loads, followed
through splits, merges and moves (``ops.liveheat.LiveHeat``, as ``keyshape watch`` does), into
the history store, and each table's current verdict and pattern.

Read-only on the cluster: it lists tables and reads region loads, nothing else (``watch``'s
key-only counting scans of split daughters are not made: a service must not add reads to a busy
table; a split parent's writes stay on its own key range, which the history keeps).

When the cluster cannot be reached, the poll is a gap: the gap is recorded (start, end, reason),
the store is reopened with back-off (1 s doubling to 60 s), and the tables start from a fresh
baseline when it answers again (counters that ran or restarted meanwhile are not one interval's
writes). A service started on an existing history records the time since its last poll as a gap.
"""

from __future__ import annotations

import fnmatch
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.analysis.designs import schema_hints, with_key_labels
from keyshape.core.hbytes import to_string_binary
from keyshape.errors import KeyshapeError, StoreError
from keyshape.ops.live import live_analysis
from keyshape.ops.liveheat import LiveHeat, Sample
from keyshape.schema import KeySchema
from keyshape.schema.labels import key_label
from keyshape.serve.fixes import FixPlan, plan_fix
from keyshape.serve.history import Cell, History
from keyshape.serve.patterns import Pattern, Traffic, name_pattern, time_pattern
from keyshape.store.base import RegionInfo, Store

__all__ = ["GONE", "Poller", "TableState", "matches"]

MAX_SAMPLES = 60  # a table's verdict looks at the last MAX_SAMPLES/2 to MAX_SAMPLES intervals
GONE = "gone"  # the saved verdict of a table the cluster no longer lists
REPLAN_POLLS = 10  # a hot table's fix is replayed again after this many polls (or when its pattern changes)
BACKOFF_MAX = 60.0


def matches(table: str, patterns: Sequence[str]) -> bool:
    """Whether ``table`` (``ns:name``, or ``name`` in the default namespace) matches one of the
    shell-style ``patterns`` (``*`` when none are given); a pattern without ``:`` also matches
    the default namespace's ``default:name`` spelling."""
    if not patterns:
        return True
    names = {table, table if ":" in table else f"default:{table}"}
    return any(fnmatch.fnmatchcase(n, p) for n in names for p in patterns)


@dataclass
class TableState:
    """What the service knows of one table now."""

    name: str
    heat: LiveHeat = field(default_factory=LiveHeat)
    regions: list[RegionInfo] = field(default_factory=list)
    write_rates: list[float] = field(default_factory=list)
    read_rates: list[float] = field(default_factory=list)
    verdict: dict[str, Any] = field(default_factory=dict)
    last_at: float = 0.0  # monotonic time of the last poll


class Poller:
    """Polls a cluster into a ``History``. ``open_store`` opens a fresh store (called again after a
    lost connection); ``schemas`` maps table names to their key schemas (decoded labels, the
    pattern's field and fix)."""

    def __init__(
        self,
        open_store: Callable[[], Store],
        history: History,
        patterns: Sequence[str] = (),
        schemas: Mapping[str, KeySchema] | None = None,
        interval: float = 60.0,
        *,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if interval <= 0:
            raise KeyshapeError(f"interval must be positive seconds, got {interval}")
        self._open = open_store
        self.history = history
        self.patterns = tuple(patterns)
        # The NEW tables an earlier run on this history added (``watch``), while the table they
        # were added for is still watched: a restart does not lose a re-key's after side.
        self.patterns += tuple(t for t, because in history.watched().items() if matches(because, self.patterns) and not matches(t, self.patterns))
        self.schemas = dict(schemas or {})
        self.interval = float(interval)
        self.clock = clock
        self.monotonic = monotonic
        self.store: Store | None = None
        self.states: dict[str, TableState] = {}
        self._gap: int | None = None
        self._gap_reason = ""
        self.backoff = 1.0
        self.lock = threading.Lock()
        self.polls = 0
        self.last_error = ""
        self._plans: dict[str, tuple[tuple[str, int, str | None], int, FixPlan]] = {}  # table -> (pattern, poll, its checked fix)
        last = history.last_poll()
        now = clock()
        if last is not None and now - last > 2 * self.interval:
            gap = history.open_gap(last, "keyshape serve was not running")
            history.close_gap(gap, now)

    def watch(self, table: str, because: str) -> bool:
        """Watch ``table`` too (the patterns widened by its exact name), remembered in the
        history for a restart while ``because`` (the watched table whose plan or before/after page
        named it) is watched; True when it was not watched before."""
        if matches(table, self.patterns):
            return False
        self.patterns = (*self.patterns, table)
        self.history.add_watched(table, because)
        return True

    # ----------------------------------------------------------------------------- polling

    def schema_for(self, table: str) -> KeySchema | None:
        return self.schemas.get(table) or self.schemas.get(table.removeprefix("default:"))

    def tables(self) -> list[str]:
        assert self.store is not None
        return [t for t in self.store.list_tables() if matches(t, self.patterns)]

    def poll_once(self) -> bool:
        """One poll of every matching table; False when the cluster could not be reached (the
        gap is then open and the next call tries again)."""
        try:
            if self.store is None:
                self.store = self._open()
            tables = self.tables()
            polled = {t: (self.store.regions(t), self.monotonic()) for t in tables}
        except (StoreError, OSError, ConnectionError) as exc:
            self._lost(str(exc))
            return False
        except KeyshapeError as exc:  # a refusal, not a lost cluster: still a gap in the history
            self._lost(str(exc))
            return False
        now = self.clock()
        if self._gap is not None:
            self.history.close_gap(self._gap, now)
            self._gap = None
            with self.lock:
                self.states = {}  # counters that ran or restarted in the gap are no interval's writes
        self.backoff = 1.0
        self.last_error = ""
        for table, (regions, at) in polled.items():
            self._poll_table(table, regions, at, now)
        with self.lock:
            for gone in set(self.states) - set(polled):
                del self.states[gone]
        self._mark_gone(set(polled), now)
        self.polls += 1
        if self.polls % 60 == 1:
            self.history.prune(now)
        return True

    def _plan(self, table: str, kind: str, schema: KeySchema, traffic: Traffic, buckets: int, lead: str | None) -> FixPlan:
        """``serve.fixes.plan_fix`` for ``table``, replayed again when the pattern (its kind, buckets
        or field) changed or ``REPLAN_POLLS`` polls passed: the replay of a hot table costs a
        fraction of a second of CPU, too much for every poll of a busy service polling often."""
        key = (kind, buckets, lead)
        last = self._plans.get(table)
        if last is not None and last[0] == key and self.polls - last[1] < REPLAN_POLLS:
            return last[2]
        plan = plan_fix(kind, schema, traffic, buckets, lead)
        self._plans[table] = (key, self.polls, plan)
        return plan

    def _mark_gone(self, listed: set[str], now: float) -> None:
        """A watched table with a saved verdict that the cluster no longer lists (dropped while
        polled, or while the service was down) is GONE in the history: it leaves the table list
        and /metrics, so an alert on its last verdict clears."""
        for table, (_, body) in self.history.verdicts().items():
            if table in listed or not matches(table, self.patterns) or body.get("verdict") == GONE:
                continue
            reason = "the cluster no longer lists the table (dropped or renamed)"
            self.history.save_verdict(table, now, {"table": table, "verdict": GONE, "at": now, "regions": 0, "reasons": [reason], "advice": []})
            self.history.event(table, now, GONE, reason)

    def _lost(self, reason: str) -> None:
        self.last_error = reason
        if self._gap is None:
            self._gap = self.history.open_gap(self.clock(), reason)
        if self.store is not None:
            try:
                self.store.close()
            except Exception:  # noqa: BLE001 - the connection is gone already; closing is best effort
                pass
            self.store = None

    def _poll_table(self, table: str, regions: list[RegionInfo], at: float, now: float) -> None:
        with self.lock:
            state = self.states.get(table)
            if state is None:
                state = self.states[table] = TableState(table)
        before = {r.name: r.server for r in state.heat.latest}
        if len(state.heat.samples) >= MAX_SAMPLES:
            # The window slides: the oldest half goes, so the verdict follows the table's present
            # and is never judged on a handful of polls (a window restarted from nothing read a
            # table whose load had just ended as idle on its first empty polls).
            state.heat.drop_oldest(len(state.heat.samples) - MAX_SAMPLES // 2)
        sample = state.heat.add(regions, at)
        latest = state.heat.latest
        dt = at - state.last_at if state.last_at else 0.0
        state.last_at = at
        if sample is None:
            with self.lock:
                state.regions = latest
                state.write_rates = [0.0] * len(latest)
                state.read_rates = [0.0] * len(latest)
            return
        self.history.record(table, now, self._cells(sample, latest))
        self._events(table, now, sample, latest, before)
        with self.lock:
            state.regions = latest
            state.write_rates = (sample.writes / dt).tolist() if dt > 0 else [0.0] * len(latest)
            state.read_rates = (sample.reads / dt).tolist() if dt > 0 else [0.0] * len(latest)
        verdict = self._judge(table, state.heat, now)
        with self.lock:
            state.verdict = verdict
        self.history.save_verdict(table, now, verdict)

    @staticmethod
    def _cells(sample: Sample, latest: Sequence[RegionInfo]) -> list[Cell]:
        cells = [
            Cell(r.name, r.start, r.end, r.server, float(w), float(q), r.store_size_bytes, r.memstore_bytes, r.store_files)
            for r, w, q in zip(latest, sample.writes.tolist(), sample.reads.tolist())
        ]
        # a region gone since the last poll: its estimated last requests on its own key range
        cells.extend(Cell(v.name, v.start, v.end, v.server, float(v.writes), float(v.reads)) for v in sample.vanished)
        return cells

    def _events(self, table: str, now: float, sample: Sample, latest: Sequence[RegionInfo], before: dict[str, str]) -> None:
        by_name = {r.name: r for r in latest}
        merged: dict[str, list[str]] = {}
        for v in sample.vanished:
            kids = [by_name[k] for k in v.children if k in by_name]
            if len(kids) > 1:
                at = sorted(kids, key=lambda r: r.start)[1].start
                self.history.event(table, now, "split", f"{v.name} split at {to_string_binary(at)}")
            elif len(kids) == 1:
                merged.setdefault(kids[0].name, []).append(v.name)
        for child, parents in merged.items():
            self.history.event(table, now, "merge", f"{', '.join(parents)} merged into {child}")
        for r in latest:
            old = before.get(r.name)
            if old is not None and old != r.server:
                self.history.event(table, now, "move", f"{r.name} moved from {old} to {r.server}")

    def _judge(self, table: str, heat: LiveHeat, now: float) -> dict[str, Any]:
        schema = self.schema_for(table)
        hints = schema_hints(schema) if schema is not None else None
        regions = len(heat.latest)
        body: dict[str, Any] = {"table": table, "at": now, "regions": regions, "samples": len(heat.samples)}
        try:
            analysis = live_analysis(heat, name=table, metric="write", hints=hints, source="keyshape serve")
        except KeyshapeError:
            body.update(
                verdict="idle", reasons=["no write requests in the recent polls"], advice=[], busiest_region_share=0.0, busiest_server_share=0.0
            )
            reads = time_pattern(Traffic.from_heat(heat), hints)  # a table only read can still be swept by a scan
            body["pattern"] = reads.to_dict() if reads is not None else Pattern("idle", "no writes to judge", "").to_dict()
            return body
        if schema is not None:
            analysis = with_key_labels(analysis, schema)
        pattern = name_pattern(analysis, hints, schema, Traffic.from_heat(heat), lambda *a: self._plan(table, *a))
        body.update(
            verdict=analysis.verdict,
            reasons=list(analysis.reasons),
            advice=list(analysis.advice),
            busiest_region_share=float(analysis.hot_window_share),
            busiest_server_share=float(analysis.hot_window_server_share),
            writes=int(analysis.rows),
            pattern=pattern.to_dict(),
            hottest=analysis.regions[int(np.argmax([r.share for r in analysis.regions]))].label if analysis.regions else "",
        )
        return body

    # ------------------------------------------------------------------------------- loop

    def run(self, stop: threading.Event) -> None:
        """Poll until ``stop`` is set: every ``interval`` seconds while the cluster answers, with
        back-off (1 s doubling to 60 s) while it does not."""
        while not stop.is_set():
            began = self.monotonic()
            ok = self.poll_once()
            if ok:
                wait = max(0.0, self.interval - (self.monotonic() - began))
            else:
                wait = self.backoff
                self.backoff = min(self.backoff * 2, BACKOFF_MAX)
            stop.wait(wait)
        if self.store is not None:
            self.store.close()
            self.store = None

    # ------------------------------------------------------------------------------ views

    def label(self, table: str, key: bytes) -> str:
        """``key`` decoded by the table's schema (``schema.labels.key_label``), else toStringBinary."""
        schema = self.schema_for(table)
        if schema is not None:
            try:
                text = key_label(schema, key)
                if text:
                    return text
            except Exception:  # noqa: BLE001 - a key outside the schema is shown as bytes
                pass
        return to_string_binary(key) if key else "(start)"

    def snapshot(self) -> dict[str, TableState]:
        with self.lock:
            return dict(self.states)

    @property
    def connected(self) -> bool:
        return self._gap is None and self.store is not None
