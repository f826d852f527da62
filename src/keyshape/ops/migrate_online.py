"""``migrate --online``: move a live table to another key design while every writer keeps writing
to the OLD table, with no change to any application (issue 32).

keyshape poses as an HBase replication peer of OLD's table: its sink (``store/hbase/sink.py``)
receives every WAL edit HBase ships and :class:`~keyshape.ops.online.ReKeyer` writes it to NEW
re-keyed, each cell at its own timestamp and type. The steps:

1. OLD's families must have ``REPLICATION_SCOPE`` 1, or HBase ships nothing; keyshape changes it
   only when asked (``set_replication_scope``), because then every WAL edit of those families goes
   to every replication peer of the cluster, not only to keyshape.
2. NEW is created (if missing) and its families keep every delete marker through major
   compactions until the cut-over (see "Deletes" below).
3. The sink starts and registers in ZooKeeper under ``/keyshape-sink-<peer id>``; the peer is
   added, limited to OLD's table, with a peer id derived from OLD's and NEW's table names, so a
   second run finds and reuses it (never a duplicate).
4. The copy (``ops.migrate.migrate``, checkpointed and resumable) runs while the stream applies.
   Until the copy has checked NEW (empty, or a resume's) the sink refuses batches; HBase ships
   them again a second or so later.
5. Afterwards the stream keeps applying; :class:`OnlineStatus` tells edits received and applied,
   rejects, the age of the newest applied edit (its WAL write time) and what OLD's region servers
   report about their replication source for the peer (HBase's replicationLag, WALs queued).
   When a region server dies, its queue waits in ZooKeeper until a survivor claims it (30-60 s
   on HBase's defaults); until then no live server reports what it had not shipped, so the
   status names the dead server and gives no lag (``_Claims``).
6. Cut-over (run once the writers are switched or paused): wait until every source reports a
   lag below the bound (and no dead server's queue is unclaimed), verify OLD against NEW
   (``ops.verify``), repair the source ranges that differ (``ops.online_repair``: a value
   rewritten at its own timestamp while the copy ran can be left older in NEW) and verify
   again, remove the peer, give NEW's families their own delete-marker setting back, and say
   what to switch.

Only OLD's own edits are applied (``ops.online.SourceRegions``): a dropped table of the same name
has other regions, and HBase ships a new peer the current WAL from its start.

Stop and restart: the online state file (next to the copy's checkpoint) records the peer id, the
sink's znode parent, cluster id and address and NEW's original delete-marker setting. A run that
ends before its cut-over (Ctrl-C, an error) leaves the peer, disabled: HBase keeps OLD's WALs and
the position for it but holds no edits in memory for a sink that is gone. The next run enables
it again and receives what was queued once the sink is registered again (stale znodes of a run
killed with kill -9, which leaves the peer enabled, are replaced); the copy resumes from its
checkpoint. Cells delivered twice are written twice at the same timestamp,
which changes nothing.

Deletes stay deleted in every order. A delete marker masks the cells at or before its timestamp
whether it reaches NEW before or after them, as long as NEW still holds it: a major compaction of
NEW drops markers, and a copied cell older than a dropped marker would come back. NEW therefore
keeps every marker for the whole migration, cut-over included (the copy and the stream can
deliver an old cell only while the peer exists): its families get the per-family setting
``CONFIGURATION => {'hbase.hstore.time.to.purge.deletes' => 2**62}`` (ms: a major compaction
purges a marker only once it is that old). ``KEEP_DELETED_CELLS => TRUE`` does NOT do it: a
major compaction on HBase 2.6.4 still dropped a marker that masked no cell yet (tested). Two
values of one cell written at the SAME timestamp converge only if they reach NEW in OLD's order;
when the copy's write came last, the cut-over's repair writes OLD's value again.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keyshape.errors import BadInput, StoreError
from keyshape.ops.migrate import MigrationResult, _check_keys_decode, _is_empty, _write_state, check_designs, default_state_path, migrate
from keyshape.ops.online import ReKeyer, SourceRegions
from keyshape.ops.online_repair import Repair, differing_ranges, repair_ranges
from keyshape.ops.verify import Verification, verify_migration
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema

if TYPE_CHECKING:  # annotations only
    from keyshape.store.hbase.sink import ReplicationSink, RunningSink
    from keyshape.store.hbase.store import HBaseStore

__all__ = ["OnlineResult", "OnlineStatus", "migrate_online", "online_state_path", "peer_id_for"]

log = logging.getLogger("keyshape.migrate_online")
# A copy through the bulk-load path (issue 42): ops.migrate_bulk.migrate_bulk's signature
# (store, old, new, *, resume, state_path, reject_path, max_rows_per_sec, progress, on_started).
BulkCopy = Callable[..., MigrationResult]
_LOCAL = {"127.0.0.1", "localhost", "::1"}
# A store purges a delete marker in a major compaction only once it is this old (ms); per family
# (CONFIGURATION) it overrides hbase-site for NEW's stores only. 2**62 ms: never, in practice.
PURGE_DELETES = "hbase.hstore.time.to.purge.deletes"
KEEP_MARKERS = str(2**62)
# A source whose last report is this much (s) older than the newest one is silent: region servers
# report every hbase.regionserver.msginterval (3 s), so three missed reports and a margin.
SILENT_S = 10.0


def peer_id_for(old: KeySchema, new: KeySchema) -> str:
    """The replication peer id of the migration OLD -> NEW: the same on every run (a restart
    finds its peer), different for other tables; letters, digits and '_' (HBase refuses '-')."""
    digest = hashlib.blake2b(f"{old.table.full_name}\0{new.table.full_name}".encode(), digest_size=6).hexdigest()
    return f"keyshape_{digest}"


def online_state_path(copy_state: str | Path) -> Path:
    """The online state file beside the copy's checkpoint (``X.json`` -> ``X.online.json``)."""
    path = Path(copy_state)
    return path.with_name(path.name.removesuffix(".json") + ".online.json")


@dataclass
class OnlineStatus:
    """One look at a running online migration."""

    phase: str  # "copy", "stream", "cutover", "done"
    copied_rows: int = 0
    received: int = 0  # cells delivered by HBase (re-shipped ones counted again)
    applied: int = 0  # cells written to NEW
    refused: int = 0  # batches answered with an error (HBase ships them again)
    rejected: int = 0  # rows whose key did not decode / encode
    foreign: int = 0  # cells of OLD's table name from regions that are not OLD's (a dropped namesake's), not written
    newest_edit_age: float | None = None  # seconds since the WAL write of the newest applied edit
    sources: list[dict[str, int | str]] = field(default_factory=list)  # what OLD's live servers report
    # dead region servers (host,port,startcode) whose replication queue for the peer no survivor
    # has claimed yet: what they logged but had not shipped is in no live server's report
    unclaimed: list[str] = field(default_factory=list)
    unclaimed_for: float = 0.0  # seconds since this run first saw the longest-pending one dead
    claims_unknown: str | None = None  # servers died, but their queues could not be read: why

    @property
    def silent(self) -> list[tuple[str, float]]:
        """``(server, seconds)`` for sources whose last report is more than ``SILENT_S`` older than
        the newest one (servers report every 3 s): killed or hung, and not yet listed as dead
        (the master does so when its ZooKeeper session expires: 90 s by default). Compared with
        each other, not with this machine's clock, so clock skew cannot fake it."""
        if len(self.sources) < 2:
            return []
        newest = max(int(s["report_ms"]) for s in self.sources)
        return sorted(
            {(str(s["server"]), (newest - int(s["report_ms"])) / 1000) for s in self.sources if newest - int(s["report_ms"]) > SILENT_S * 1000}
        )

    @property
    def live_lag(self) -> float | None:
        """The largest replicationLag (s) OLD's live region servers report for the peer (None: no report)."""
        return max(int(s["lag_ms"]) for s in self.sources) / 1000 if self.sources else None

    @property
    def source_lag(self) -> float | None:
        """The stream's lag (s): the live servers' (``live_lag``), or None when it is not known:
        no report, a dead server's queue still unclaimed, or a server silent (their unshipped
        edits are in no report)."""
        return None if self.unclaimed or self.silent else self.live_lag

    @property
    def log_queue(self) -> int | None:
        return sum(int(s["log_queue"]) for s in self.sources) if self.sources else None

    def caught_up(self, max_lag: float, reported_after_ms: int) -> bool | None:
        """Whether the stream is within ``max_lag`` seconds of OLD by reports made after
        ``reported_after_ms`` (epoch ms): False while a dead server's queue is unclaimed or a
        server is silent, None
        when no live server reported since (the caller then judges by the cells arriving)."""
        if self.unclaimed or self.silent:
            return False
        fresh = [s for s in self.sources if int(s["report_ms"]) > reported_after_ms]
        return max(int(s["lag_ms"]) for s in fresh) <= max_lag * 1000 if fresh else None

    def source_text(self) -> str:
        """What the sources say, in words: the lag and WALs queued, and any dead server's queue
        that is not claimed yet (then the live servers' lag is not the stream's)."""
        live = "not reported" if self.live_lag is None else f"lag {self.live_lag:.1f} s, {self.log_queue} WAL(s) queued"
        if self.unclaimed:
            who = "; ".join(s.rpartition(",")[0] or s for s in self.unclaimed)
            died = "a region server died" if len(self.unclaimed) == 1 else f"{len(self.unclaimed)} region servers died"
            return (
                f"lag not known: {died} ({who}; seen dead {self.unclaimed_for:.0f} s): its unshipped edits reach NEW once a survivor "
                "claims its queue, ~30-60 s after the death (HBase's replication.sleep.before.failover, 30 s, plus up to as much again); "
                f"the live servers' {live} leaves them out"
            )
        if self.silent:
            who = "; ".join(f"{server} for {age:.0f} s" for server, age in self.silent)
            return (
                f"lag not known: no report from {who} (dead or hung? the master lists a dead server once its ZooKeeper session "
                f"expires); what it has not shipped is in no report: the {live} leaves it out"
            )
        return f"{live} ({self.claims_unknown})" if self.claims_unknown else live

    def line(self) -> str:
        """One line for a log or a status bar."""
        age = "-" if self.newest_edit_age is None else f"{self.newest_edit_age:.1f} s"
        return (
            f"{self.phase}: {self.copied_rows:,} rows copied; stream {self.received:,} cells received, {self.applied:,} applied, "
            f"{self.refused:,} batches refused, {self.rejected:,} rows rejected"
            + (f", {self.foreign:,} cells of a dropped table of the same name ignored" if self.foreign else "")
            + f"; newest applied edit {age} old; source {self.source_text()}"
        )


@dataclass
class OnlineResult:
    """What ``migrate_online`` did: the copy (None when it was done by an earlier run), the last
    status, the verification (cut-over only) and what to tell the applications."""

    peer_id: str
    state_path: str
    copy: MigrationResult | None
    status: OnlineStatus
    verification: Verification | None = None
    cut_over: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def skipped_rows(self) -> int:
        """OLD's rows left out of NEW because their key does not decode (the cut-over went on)."""
        return self.verification.source.undecodable if self.verification is not None else 0


def _sink_address(quorum: str, bind: str | None, state: dict[str, Any]) -> tuple[str, int]:
    """``(host, port)`` for the sink: ``bind`` (HOST:PORT), else the address of the earlier run,
    else loopback for a local HBase and this machine's name for a remote one (port 0: any)."""
    if bind:
        host, _, port = bind.rpartition(":")
        if not host or not port.isdigit() or int(port) > 65535:
            raise BadInput(f"--sink-bind {bind!r}: want HOST:PORT, the address OLD's region servers can connect to (port 0: any free port)")
        return host.strip("[]"), int(port)
    if state.get("sink_host"):
        return str(state["sink_host"]), int(state.get("sink_port", 0))
    hosts = {h.strip().rpartition(":")[0] or h.strip() for h in quorum.split(",")}
    return ("127.0.0.1" if hosts <= _LOCAL else socket.getfqdn()), 0


def _bind_sink(rekeyer: ReKeyer, host: str, port: int, explicit: bool) -> ReplicationSink:
    """The sink's listening socket, bound before anything changes in the cluster (a bind that
    fails leaves OLD, NEW and the peer as they were). An address asked for (``--sink-bind``) is
    bound exactly or refused: the region servers must reach that very address (a firewall may
    open only that port). The port an earlier run used is only a preference: when it is taken,
    any free one (the sink registers its new address in ZooKeeper)."""
    from keyshape.store.hbase.sink import ReplicationSink

    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise BadInput(
            f"--sink-bind {host}:{port}: host {host!r} does not resolve on this machine ({exc.strerror or exc}); give a name or address "
            "of this machine that OLD's region servers can reach; nothing was changed"
        ) from None
    try:
        return ReplicationSink(rekeyer, host=host, port=port)
    except OSError as exc:
        if not explicit and port != 0:
            return _bind_sink(rekeyer, host, 0, explicit)
        reason = exc.strerror or str(exc)
        if exc.errno == errno.EADDRINUSE:
            raise BadInput(
                f"--sink-bind {host}:{port}: port {port} is in use on {host}; stop what holds it or choose another port (keyshape binds "
                "exactly the address asked for, the one OLD's region servers must reach); nothing was changed"
            ) from None
        raise BadInput(f"--sink-bind {host}:{port}: cannot listen there ({reason}); nothing was changed") from None


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One run per migration at a time (two sinks under one parent would fight)."""
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BadInput(f"another 'keyshape migrate --online' of this migration is running (it holds {lock}); stop it first") from None
        yield
    finally:
        try:
            # no litter once nothing is left to resume (never started, or cut over); a run
            # opening the file just now may then lock an unlinked inode: harmless, nothing to do
            if not path.is_file() or json.loads(path.read_text(encoding="utf-8")).get("phase") == "done":
                lock.unlink(missing_ok=True)
        except (OSError, ValueError):
            pass
        os.close(fd)


def unscoped_families(store: HBaseStore, table: str, set_scope: bool) -> list[str]:
    """The families of ``table`` with REPLICATION_SCOPE 0, which HBase ships nothing of; BadInput
    when there are some and ``set_scope`` is False (a check: it changes nothing)."""
    scopes = store.family_attributes(table, "REPLICATION_SCOPE")
    unscoped = sorted(f for f, v in scopes.items() if (v or "0") == "0")
    if unscoped and not set_scope:
        raise BadInput(
            f"family {', '.join(unscoped)} of {table!r} has REPLICATION_SCOPE 0, so HBase ships none of its edits; "
            "pass --set-replication-scope to set it to 1 (every edit of those families then goes to every replication peer of the cluster)"
        )
    return unscoped


def scope_note(store: HBaseStore, table: str, families: list[str], cut_over: bool) -> str | None:
    """What keyshape's change of REPLICATION_SCOPE (``families`` of ``table``, set to 1 by this
    migration) means now and the HBase shell command that sets it back; None once it is 0 again."""
    try:
        still = sorted(f for f, v in store.family_attributes(table, "REPLICATION_SCOPE").items() if f in families and (v or "0") != "0")
    except StoreError:
        still = list(families)  # cannot tell: say it
    if not still:
        return None
    command = "alter '{}', {}".format(table, ", ".join(f"{{NAME => '{f}', REPLICATION_SCOPE => 0}}" for f in still))
    when = "now, if nothing else needs it" if cut_over else "after the cut-over (the migration needs it until then)"
    return (
        f"REPLICATION_SCOPE => 1 on {table} family {', '.join(still)} was set by keyshape for this migration: every WAL edit of "
        "these families is shipped to every replication peer of this cluster (keyshape's and any other), and HBase keeps WALs until "
        f"each peer has them; set it back {when}: HBase shell: {command}"
    )


def migrate_online(
    store: HBaseStore,
    old: KeySchema,
    new: KeySchema,
    *,
    state_path: str | Path | None = None,
    reject_path: str | Path | None = None,
    set_replication_scope: bool = False,
    cutover: bool = False,
    max_lag: float = 2.0,
    cutover_timeout: float = 300.0,
    sink_bind: str | None = None,
    stream_until: Callable[[OnlineStatus], bool] | None = None,
    progress: Callable[[OnlineStatus], None] | None = None,
    notice: Callable[[str], None] | None = None,
    interval: float = 1.0,
    batch_size: int = 1000,
    max_rows_per_sec: float | None = None,
    bulk_copy: BulkCopy | None = None,
) -> OnlineResult:
    """Migrate OLD's table into NEW's design while writers keep writing OLD (module docstring).

    ``bulk_copy``: the copy step through HBase's bulk-load path (:func:`copy_step`); None: puts.

    Without ``cutover`` the stream runs after the copy until ``stream_until(status)`` is true
    (default: forever, i.e. until KeyboardInterrupt); the peer stays for the next run. With
    ``cutover`` the run ends with the cut-over. ``progress(status)`` is called about every
    ``interval`` seconds; ``notice(text)`` with what an operator must know as soon as it is known
    (the REPLICATION_SCOPE keyshape set, on every run that finds it). A second run with the same
    state file resumes.

    Every check that can fail runs before the first change to the cluster (OLD's scope, NEW, the
    peer, the state file): a refused run leaves all as it was."""
    check_designs(old, new)
    if batch_size < 1:
        raise BadInput(f"batch size must be at least 1, got {batch_size}")
    if max_rows_per_sec is not None and max_rows_per_sec <= 0:
        raise BadInput(f"--max-rows-per-sec must be positive, got {max_rows_per_sec}")
    source, target = old.table.full_name, new.table.full_name
    copy_state = Path(state_path) if state_path else default_state_path(old, new)
    online_file = online_state_path(copy_state)
    stream_rejects = copy_state.with_name(copy_state.name.removesuffix(".json") + ".stream-rejects.tsv")
    quorum = store.cluster.quorum
    peer_id = peer_id_for(old, new)
    store.regions(source)  # TableNotFound before anything else
    with _locked(online_file):
        state: dict[str, Any] = json.loads(online_file.read_text(encoding="utf-8")) if online_file.is_file() else {}
        if state and (state.get("source"), state.get("target")) != (source, target):
            raise BadInput(f"{online_file} is the online state of {state.get('source')} -> {state.get('target')}, not {source} -> {target}")
        if state.get("phase") == "done":
            scope = scope_note(store, source, state.get("scope_set", []), cut_over=True) if state.get("scope_set") else None
            raise BadInput(
                f"the online migration {source} -> {target} was cut over already ({online_file}); delete that file to migrate again"
                + (f" ({scope})" if scope else "")
            )
        resuming = bool(state) and copy_state.is_file()
        if not resuming and store.table_exists(target) and not _is_empty(store, target):
            raise BadInput(f"target table {target!r} already holds rows and no earlier online run of this migration is recorded in {online_file}")
        parent = state.get("parent", f"/keyshape-sink-{peer_id}")
        peers = store.replication_peers()
        if peer_id in peers and not peers[peer_id].endswith(f":{parent}"):
            raise BadInput(
                f"replication peer {peer_id} exists with cluster key {peers[peer_id]}, not keyshape's sink at {parent}; "
                f"if it is a leftover, remove it (HBase shell: remove_peer '{peer_id}') and run again"
            )
        unscoped = unscoped_families(store, source, set_replication_scope)
        if state.get("phase", "copy") == "copy":
            _check_keys_decode(store, source, old)  # the copy's own check, before anything changes
        records = store.region_history(source)
        regions = SourceRegions.of(records, lambda: store.region_history(source), state.get("source_born_ms"))
        ready = threading.Event()
        rekeyer = ReKeyer(store, old, new, reject_path=stream_rejects, ready=ready, regions=regions)
        host, port = _sink_address(quorum, sink_bind, state)
        sink: ReplicationSink | None = _bind_sink(rekeyer, host, port, explicit=bool(sink_bind))
        # --- every check passed: from here on the cluster changes ---
        running: RunningSink | None = None
        try:
            if not state:
                state = {
                    "source": source,
                    "target": target,
                    "peer_id": peer_id,
                    "parent": parent,
                    "cluster_id": str(uuid.uuid4()),
                    "phase": "copy",
                    "source_born_ms": regions.born_ms,
                }
                _write_state(online_file, state)
            if unscoped:
                store.set_replication_scope(source, unscoped)
                state["scope_set"] = sorted(set(state.get("scope_set", [])) | set(unscoped))
                _write_state(online_file, state)
            notes: list[str] = []
            if state.get("scope_set"):
                said = scope_note(store, source, state["scope_set"], cut_over=False)
                if said is not None:
                    notes.append(said)
                    if notice is not None:
                        notice(said)
            if not store.table_exists(target):
                create_table_from_schema(store, new)
            if "purge_deletes" not in state:
                state["purge_deletes"] = store.family_attributes(target, PURGE_DELETES, configuration=True)
                _write_state(online_file, state)
            original = state["purge_deletes"]
            current = store.family_attributes(target, PURGE_DELETES, configuration=True)
            keep = sorted(f for f, v in current.items() if v != KEEP_MARKERS)
            if keep:
                store.set_family_attribute(target, keep, PURGE_DELETES, KEEP_MARKERS, configuration=True)
            assert sink is not None
            running = _register_sink(sink, rekeyer, quorum, state["parent"], uuid.UUID(state["cluster_id"]))
            sink = None  # the running sink owns it now
            return _run(
                store,
                old,
                new,
                state,
                online_file,
                copy_state,
                resuming,
                peers,
                running,
                rekeyer,
                ready,
                notes,
                original,
                stream_rejects,
                reject_path=reject_path,
                cutover=cutover,
                max_lag=max_lag,
                cutover_timeout=cutover_timeout,
                stream_until=stream_until,
                progress=progress,
                interval=interval,
                batch_size=batch_size,
                max_rows_per_sec=max_rows_per_sec,
                bulk_copy=bulk_copy,
            )
        finally:
            if state and state.get("phase") != "done" and running is not None:
                _pause_peer(store, peer_id)
            if running is not None:
                running.stop()
            if sink is not None:
                sink.stop()


def _register_sink(sink: ReplicationSink, rekeyer: ReKeyer, quorum: str, parent: str, cluster_id: uuid.UUID) -> RunningSink:
    """The bound sink started and registered under ``parent``; a registration an earlier run
    left there (killed before it could remove it) is replaced, one with another cluster id
    refused."""
    from keyshape.store.hbase.sink import RunningSink

    return RunningSink(rekeyer, quorum, parent, cluster_id, resume=True, sink=sink)


def _run(
    store: HBaseStore,
    old: KeySchema,
    new: KeySchema,
    state: dict[str, Any],
    online_file: Path,
    copy_state: Path,
    resuming: bool,
    peers: dict[str, str],
    running: RunningSink,
    rekeyer: ReKeyer,
    ready: threading.Event,
    notes: list[str],
    original: dict[str, str | None],
    stream_rejects: Path,
    *,
    reject_path: str | Path | None,
    cutover: bool,
    max_lag: float,
    cutover_timeout: float,
    stream_until: Callable[[OnlineStatus], bool] | None,
    progress: Callable[[OnlineStatus], None] | None,
    interval: float,
    batch_size: int,
    max_rows_per_sec: float | None,
    bulk_copy: BulkCopy | None = None,
) -> OnlineResult:
    """The migration with its sink running: the peer, the copy, the stream, the cut-over."""
    source, target = old.table.full_name, new.table.full_name
    peer_id = state["peer_id"]
    # rows copied in all (earlier runs' too), as the copy's checkpoint counts them
    before = sum(r["rows"] for r in json.loads(copy_state.read_text(encoding="utf-8"))["regions"]) if resuming else 0
    copied_rows = [before]
    claims = _Claims(store, peer_id)

    def status(phase: str) -> OnlineStatus:
        newest = rekeyer.newest_write_time
        try:
            sources = store.replication_sources(peer_id)
        except StoreError:
            sources = []
        unclaimed, unclaimed_for = claims.look()
        return OnlineStatus(
            phase=phase,
            copied_rows=copied_rows[0],
            received=rekeyer.received,
            applied=rekeyer.cells,
            refused=rekeyer.refused,
            rejected=rekeyer.rejected,
            foreign=rekeyer.foreign,
            newest_edit_age=(time.time() * 1000 - newest) / 1000 if newest else None,
            sources=sources,
            unclaimed=unclaimed,
            unclaimed_for=unclaimed_for,
            claims_unknown=claims.unknown,
        )

    state["sink_host"], state["sink_port"] = running.sink.host, running.sink.port
    _write_state(online_file, state)
    if peer_id not in peers:
        store.add_replication_peer(peer_id, running.cluster_key, {source: []})
    elif not store.replication_peer_states().get(peer_id, True):
        store.set_replication_peer_enabled(peer_id, True)  # an earlier run paused it on the way out
    copy = None
    if state["phase"] == "copy":
        shown = [0.0]

        def copy_progress(rows: int) -> None:
            copied_rows[0] = before + rows
            if progress is not None and time.monotonic() - shown[0] >= interval:
                shown[0] = time.monotonic()
                progress(status("copy"))

        copy = copy_step(
            store,
            old,
            new,
            state_path=copy_state,
            reject_path=reject_path,
            resume=resuming,
            batch_size=batch_size,
            max_rows_per_sec=max_rows_per_sec,
            on_started=ready.set,
            progress=copy_progress,
            bulk_copy=bulk_copy,
        )
        copied_rows[0] = copy.total_rows
        state["phase"] = "stream"
        _write_state(online_file, state)
    ready.set()
    if not cutover:
        while True:
            now = status("stream")
            if progress is not None:
                progress(now)
            if stream_until is not None and stream_until(now):
                return OnlineResult(peer_id, str(online_file), copy, now, notes=notes)
            time.sleep(interval)
    verification, repairs = _cut_over(store, old, new, rekeyer, status, progress, max_lag, cutover_timeout, interval)
    store.remove_replication_peer(peer_id)
    for family, value in sorted(original.items()):
        store.set_family_attribute(target, [family], PURGE_DELETES, value, configuration=True)
    state["phase"] = "done"
    _write_state(online_file, state)
    final = status("done")
    notes.extend(r.text for r in repairs if r.rows_written or r.extra)
    skipped = verification.source.undecodable
    if skipped:
        notes.append(
            f"{skipped:,} row(s) of {source} do not decode with {old.source} and are not in {target}; "
            f"their keys are in {reject_path or copy_state.with_suffix('.rejects.tsv')} and {stream_rejects}"
        )
    notes.append(
        f"cut over: {target} holds what {source} holds; replication peer {peer_id} removed. Point every writer and reader "
        f"of {source} at {target} (key design {new.source}) now; writes still going to {source} are no longer copied"
    )
    if state.get("scope_set"):
        said = scope_note(store, source, state["scope_set"], cut_over=True)
        notes[:] = [n for n in notes if not n.startswith("REPLICATION_SCOPE")] + ([said] if said else [])
    return OnlineResult(peer_id, str(online_file), copy, final, verification, True, notes)


def copy_step(
    store: HBaseStore,
    old: KeySchema,
    new: KeySchema,
    *,
    state_path: Path,
    reject_path: str | Path | None,
    resume: bool,
    batch_size: int,
    max_rows_per_sec: float | None,
    on_started: Callable[[], None],
    progress: Callable[[int], None],
    bulk_copy: BulkCopy | None = None,
) -> MigrationResult:
    """The copy step of an online migration: OLD's rows as they are into NEW, checkpointed in
    ``state_path`` and resumable (``resume``), while the stream applies. It calls
    ``on_started()`` once NEW is checked (empty, or a resume's) and before it writes a row (the
    sink refuses the stream's batches until then) and ``progress(rows copied by this run)``
    after each acknowledged batch. Its writes may race the stream's (a value rewritten at its
    own timestamp while the copy runs): the cut-over finds and repairs that (ops.online_repair),
    so a copy only has to write every cell of OLD at its own timestamp. Without ``bulk_copy``
    it is ``ops.migrate.migrate``'s scan-and-put; with it, HFiles loaded through HBase's
    bulk-load path (issue 42: ``ops.migrate_bulk.migrate_bulk``, or the CLI's Spark copy). A
    bulk-loaded cell beats a stream write of the same cell and timestamp made before the load
    (tests/hbase/test_bulkload.py): one more case of the same hole, repaired the same way."""
    if bulk_copy is not None:
        return bulk_copy(
            store,
            old,
            new,
            resume=resume,
            state_path=state_path,
            reject_path=reject_path,
            max_rows_per_sec=max_rows_per_sec,
            progress=progress,
            on_started=on_started,
        )
    return migrate(
        store,
        old,
        new,
        resume=resume,
        state_path=state_path,
        reject_path=reject_path,
        max_rows_per_sec=max_rows_per_sec,
        batch_size=batch_size,
        progress=progress,
        on_started=on_started,
    )


class _Claims:
    """Which dead region servers still own a replication queue of the peer that no survivor has
    claimed. Until a survivor claims it (HBase: the crash procedure, then a wait of
    replication.sleep.before.failover, 30 s, plus a random part of it), what the dead server had
    logged but not shipped is in no live server's report, so their lag alone would read 0 while
    NEW lacks those edits. ZooKeeper is read only while the master lists a dead server not yet
    settled (claimed, or owning no queue of the peer): a dead server never gets a queue again."""

    def __init__(self, store: HBaseStore, peer_id: str) -> None:
        self.store, self.peer_id = store, peer_id
        self.settled: set[str] = set()
        self.first_seen: dict[str, float] = {}  # monotonic time this run first saw it pending
        self.pending: list[str] = []
        self.unknown: str | None = None
        self.outside_zookeeper = False  # this HBase keeps its queues where keyshape cannot read them

    def look(self) -> tuple[list[str], float]:
        """The dead servers with an unclaimed queue and how long the oldest has been seen so
        (the last answer again when the master or ZooKeeper does not answer)."""
        try:
            dead = [d for d in self.store.dead_servers() if d not in self.settled]
        except StoreError:
            return self.pending, self._age()  # the master did not answer: keep what was known
        names = ", ".join(d.rpartition(",")[0] for d in dead)
        try:
            pending = self.store.unclaimed_replication_queues(self.peer_id, dead) if dead else []
        except StoreError as exc:  # e.g. a secured ZooKeeper that lets keyshape not read them: ask again
            self.unknown = f"region server(s) {names} died; whether a survivor has claimed their replication queues is not known: {exc}"
            return self.pending, self._age()
        if pending is None:
            # HBase 3: the queues are in a table keyshape does not read; say so, ask no more
            self.settled.update(dead)
            self.outside_zookeeper = True
            self.unknown = (
                f"region server(s) {names} died; whether a survivor has claimed their replication queues is not known "
                "(this HBase keeps them outside ZooKeeper), so their unshipped edits may be missing from this lag"
            )
            return self.pending, self._age()
        if not self.outside_zookeeper:
            self.unknown = None  # ZooKeeper answered (again)
        return self.record(dead, pending, time.monotonic())

    def record(self, dead: list[str], pending: list[str], now: float) -> tuple[list[str], float]:
        """Note one answer (``dead``: the servers asked about; ``pending``: those of them still
        owning a queue of the peer) made at ``now`` (monotonic s); what ``look`` returns."""
        self.pending = pending
        self.settled.update(set(dead) - set(pending))
        for server in pending:
            self.first_seen.setdefault(server, now)
        return pending, self._age(now)

    def _age(self, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        return now - min(self.first_seen[s] for s in self.pending) if self.pending else 0.0


def _only_rejects(check: Verification) -> bool:
    """Whether OLD and NEW agree on every row but OLD's undecodable ones (the reject files hold
    them): waiting cannot change those, so the cut-over goes on and says so."""
    undecodable = int(check.source.undecodable > 0) + int(check.target.undecodable > 0)
    return check.target.undecodable == 0 and len(check.differences) == undecodable and check.source.checksum == check.target.checksum


def _pause_peer(store: HBaseStore, peer_id: str) -> None:
    """Disable the peer when a run ends before its cut-over: HBase keeps OLD's WALs and the
    position for it (nothing is lost; the next run enables it again) but stops reading edits
    into region server memory for a sink that is gone. Best effort: a run killed outright, or a
    lost HBase, leaves it enabled, which is safe too."""
    try:
        if peer_id in store.replication_peers():
            store.set_replication_peer_enabled(peer_id, False)
    except (StoreError, OSError) as exc:
        log.warning("could not disable replication peer %s on the way out: %s", peer_id, exc)


@contextmanager
def _watching(status: Callable[[str], OnlineStatus], progress: Callable[[OnlineStatus], None] | None, interval: float) -> Iterator[None]:
    """Keep calling ``progress(status("cutover"))`` every ``interval`` s from a thread while the
    body runs: a verify takes minutes on a large table, and a scan of a dead server's region
    retries until the region reopens elsewhere, just when the status has news to tell."""
    if progress is None:
        yield
        return
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(interval):
            try:
                progress(status("cutover"))
            except Exception as exc:  # a status is worth nothing to die for; the verify decides
                log.debug("status during the verify: %s", exc)

    thread = threading.Thread(target=watch, name="keyshape-online-status", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _cut_over(
    store: HBaseStore,
    old: KeySchema,
    new: KeySchema,
    rekeyer: ReKeyer,
    status: Callable[[str], OnlineStatus],
    progress: Callable[[OnlineStatus], None] | None,
    max_lag: float,
    timeout: float,
    interval: float,
) -> tuple[Verification, list[Repair]]:
    """Wait until the stream is caught up (every source reporting replicationLag <= ``max_lag``
    in a report made after the wait began; without reports: no cell received for ``max_lag``
    seconds; never while a dead region server's queue is unclaimed), then verify. Where the
    verify finds a source range differing, repair it (``ops.online_repair``: OLD's rows that
    differ written into NEW again; the copy's writes can have replaced a newer value the stream
    wrote at the same timestamp) and verify again; while OLD keeps changing, verify again until
    ``timeout``. The verify alone would hold a cut-over back while a dead server's unshipped
    edits are missing from NEW too (OLD has them once its regions reopen; until then the verify
    cannot read them), but the wait says why. Returns the passing verification and the repairs."""
    deadline = time.monotonic() + timeout
    began = int(time.time() * 1000)
    last_received, quiet_since = -1, time.monotonic()
    check: Verification | None = None
    repairs: list[Repair] = []
    arrived = 0  # cells the stream received during the last verify and repair
    while True:
        now = status("cutover")
        if progress is not None:
            progress(now)
        if now.received != last_received:
            last_received, quiet_since = now.received, time.monotonic()
        caught_up = now.caught_up(max_lag, began)
        if caught_up is None:
            caught_up = time.monotonic() - quiet_since >= max(max_lag, 3 * interval)
        if caught_up:
            with _watching(status, progress, interval):
                check = verify_migration(store, old, new)
                after = status("cutover")
                # a server that died during the verify: wait for its claim, then verify again
                settled = not (after.unclaimed or after.silent)
                if (check.ok or _only_rejects(check)) and settled:
                    return check, repairs
                if settled:
                    repairs.append(repair_ranges(store, old, new, differing_ranges(check)))
                    log.info("%s", repairs[-1].text)
            arrived = status("cutover").received - now.received
            began = int(time.time() * 1000)  # OLD may have changed meanwhile: wait for reports made after this
            if repairs and repairs[-1].rows_written and time.monotonic() <= deadline:
                continue  # verify the repair at once (the stream was caught up)
        if time.monotonic() > deadline:
            if now.unclaimed:
                raise StoreError(
                    f"cut-over not done after {timeout:.0f} s: {now.source_text()}; no survivor has claimed it yet (is the "
                    "master's crash procedure for it stuck? see the master's log); run the same command again later: it resumes"
                )
            raise StoreError(f"cut-over not done after {timeout:.0f} s: {_why(check, repairs, now, arrived)}; run the same command again: it resumes")
        time.sleep(interval)


def _why(check: Verification | None, repairs: list[Repair], now: OnlineStatus, arrived: int) -> str:
    """Why OLD and NEW still differ, from what this run saw (never a guess about writers)."""
    if check is None:
        return f"the stream never caught up ({now.source_text()}), so no verify ran"
    detail = "; ".join(check.differences[:3])
    if arrived:
        return (
            f"OLD and NEW still differ ({detail}) and OLD is still changing: the stream received {arrived:,} cell(s) of OLD during the "
            "last verify; the cut-over passes once OLD is quiet (switch its writers to NEW or pause them)"
        )
    last = repairs[-1] if repairs else None
    if last is not None and not (last.same_timestamp or last.missing) and check.target.total_rows > check.source.total_rows:
        return (
            f"OLD and NEW still differ ({detail}): NEW holds {check.target.total_rows - check.source.total_rows:,} row(s) more than OLD, "
            "OLD's own rows agree cell for cell, and no edit of OLD arrived during the last verify: neither the copy nor the stream "
            "wrote them (another writer of NEW?); remove them from NEW or start the migration again"
        )
    if last is not None and last.extra:
        return (
            f"OLD and NEW still differ ({detail}): NEW holds {last.extra:,} cell(s) OLD does not (e.g. {last.extra_example}), and no "
            "edit of OLD arrived during the last verify: neither the copy nor the stream wrote them (another writer of NEW?); "
            "remove them from NEW or start the migration again"
        )
    if last is not None:
        return f"OLD and NEW still differ ({detail}) with no edit of OLD arriving; the last {last.text}"
    return f"OLD and NEW still differ ({detail}) while a region server was dead or silent ({now.source_text()})"
