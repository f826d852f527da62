"""Batched requests: ``run_multi`` (HBase's ``Multi`` RPC with per-row results and bounded
retries) and ``HBaseWriter``, the buffered writer built on it.

hbase-driver's ``batch_put``/``BufferedMutator`` send one RPC per row and stop at the first error
without saying which rows were written (CLIENTS.md bug 7). ``Multi`` carries one non-atomic
``RegionAction`` per region and answers per action, so a bad row (unknown family) is reported
alone while the rest are stored, and only the rows that hit a transient error are re-sent.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from types import TracebackType
from typing import Any

from hbasedriver.protobuf_py import Client_pb2

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import BadInput, StoreError, WriteFailed
from keyshape.store.base import as_bytes, split_table_name
from keyshape.store.hbase import wire
from keyshape.store.hbase.client import HBaseClient
from keyshape.store.hbase.errors import ConnectionLost, ServerError
from keyshape.store.hbase.regions import Region

__all__ = ["HBaseWriter", "run_multi"]

_CELL_OVERHEAD = 24  # bytes per mutation beyond its serialized MutationProto (Action framing, server-side cell)


def run_multi(
    store: HBaseClient,
    table: str,
    rows: list[bytes],
    action: Callable[[int], Client_pb2.Action | bytes],
    what: str,
    lane: int = 0,
    cells: Callable[[int], bytes] | None = None,
) -> tuple[dict[int, Client_pb2.Result], dict[int, str]]:
    """Send ``action(i)`` for every ``rows[i]``, one Multi per region server, grouped by region.
    ``action(i)`` is an ``Action`` message or its serialized bytes (``wire.action``).
    ``cells(i)``: the KeyValues of action ``i``'s mutation when it names only their count
    (``wire.put_cells``; ``b""`` for one that carries its cells itself): they go in the
    request's cell block, in the order of the actions, on a cell-block connection.

    Returns ``(results, failed)``: the Result of each index that succeeded and, for each index
    that did not, the error text. Transient errors (region moved, server not serving, connection
    lost ...) are retried up to ``store.retries`` times with backoff, re-sending only the failed
    indexes after re-reading the region map; a row still failing then is reported in ``failed``.
    ``lane``: which of the pooled sockets per server to use (see ``Cluster.connection``).
    TableNotFound if the table has no regions.
    """
    namespace, name = split_table_name(table)
    results: dict[int, Client_pb2.Result] = {}
    failed: dict[int, str] = {}
    pending = list(range(len(rows)))
    attempt = 0
    while pending:
        retry: list[int] = []
        last: BaseException | None = None
        try:
            regions = store.cluster.region_list(namespace, name, refresh=attempt > 0)
        except (ConnectionLost, ServerError) as exc:
            regions, retry, last = None, list(pending), exc
        if regions is not None:
            if not regions.regions:
                raise store.not_found(table)
            # grouped by region position first: hashing a Region per row costs more than bisecting
            by_position: dict[int, list[int]] = {}
            starts = regions.starts
            for i in pending:
                by_position.setdefault(max(bisect_right(starts, rows[i]) - 1, 0), []).append(i)
            by_server: dict[tuple[str, int], dict[Region, list[int]]] = {}
            for position, indexes in by_position.items():
                region = regions.regions[position]
                by_server.setdefault((region.host, region.port), {})[region] = indexes
            for (host, port), by_region in by_server.items():
                order = list(by_region.items())
                request = wire.multi_request(
                    (wire.region_action(region.spec().SerializeToString(), map(_encoded, map(action, indexes))) for region, indexes in order),
                    store._nonce_group,
                )
                block = b"".join([cells(i) for _, indexes in order for i in indexes]) if cells is not None else b""
                try:
                    conn = store.cluster.connection(host, port, lane=lane, cell_blocks=bool(block))
                    response = conn.call("Multi", request, Client_pb2.MultiResponse, block)
                except (ConnectionLost, ServerError) as exc:
                    sent = [i for _, indexes in order for i in indexes]
                    if isinstance(exc, ServerError) and not exc.relocate:
                        failed.update((i, str(store.refused(exc, table, what))) for i in sent)
                    else:
                        retry.extend(sent)
                        last = exc
                    continue
                for (_region, indexes), outcome in zip(order, response.regionActionResult):
                    if outcome.HasField("exception"):
                        err = ServerError(outcome.exception.name, outcome.exception.value.decode("utf-8", "replace"))
                        if err.relocate:
                            retry.extend(indexes)
                            last = err
                        else:
                            failed.update((i, str(store.refused(err, table, what))) for i in indexes)
                        continue
                    answered = set()
                    for item in outcome.resultOrException:
                        answered.add(item.index)
                        if item.HasField("exception"):
                            err = ServerError(item.exception.name, item.exception.value.decode("utf-8", "replace"))
                            if err.relocate:
                                retry.append(item.index)
                                last = err
                            else:
                                failed[item.index] = str(store.refused(err, table, what))
                        else:
                            results[item.index] = item.result
                    retry.extend(i for i in indexes if i not in answered)
                # a response with fewer region results than regions sent: re-send the rest
                for _, indexes in order[len(response.regionActionResult) :]:
                    retry.extend(indexes)
        if not retry:
            break
        attempt += 1
        if attempt > store.retries:
            failed.update((i, f"still failing after {store.retries} retries: {last}") for i in retry)
            break
        store.note_retry(attempt, f"{what} on {table!r} ({len(retry)} row(s))", last or StoreError("?"))
        pending = sorted(set(retry))
    return results, failed


def _encoded(action: Client_pb2.Action | bytes) -> bytes:
    return action if type(action) is bytes else action.SerializeToString()  # type: ignore[union-attr]


class HBaseWriter:
    """Buffered writer of ``HBaseStore`` (see ``keyshape.store.base.BatchWriter``).

    Mutations are sent when ``batch_size`` are buffered or their estimated size reaches
    ``max_bytes``, on ``flush()`` and when the ``with`` block exits (even if it raised, like
    ``BufferedMutator.close()``). Several mutations of one row in a buffer are sent in buffer
    order, in successive Multi rounds. ``flush()`` returns only when every mutation is stored;
    otherwise it raises ``WriteFailed`` whose ``rows`` are exactly the rows not written (each once,
    in buffer order).

    A full buffer is sent in the background while the caller fills the next one: up to
    ``in_flight`` batches at once, each on its own socket per region server, so building,
    sending and the server's work overlap as in the Java client's ``AsyncProcess``. A batch that
    shares a row with one still in flight waits for it, so a row's mutations still apply in
    order. A background batch's failure surfaces as ``WriteFailed`` from a later ``put`` or from
    ``flush``, after every batch in flight has finished, naming exactly the rows not written;
    the rows buffered at that moment stay buffered for the next flush. Reads through the same
    store wait for the batches in flight, so the store reads its own writes as before.
    ``in_flight=1`` sends every batch in the caller's thread.
    """

    def __init__(self, store: HBaseClient, table: str, batch_size: int, max_bytes: int, in_flight: int = 2) -> None:
        if batch_size < 1 or max_bytes < 1 or in_flight < 1:
            raise BadInput("writer: batch_size, max_bytes and in_flight must be >= 1")
        self._store, self._table = store, table
        self._batch_size, self._max_bytes, self._in_flight = batch_size, max_bytes, in_flight
        # (row, serialized MutationProto, its cells for the cell block or b""): serialized at
        # put() so a flush only frames bytes
        self._buffer: list[tuple[bytes, bytes, bytes]] = []
        self._bytes = 0
        # batches in the background: (future of their failures, their rows, their lane)
        self._sent: list[tuple[Future[_Failures], set[bytes], int]] = []
        self._failures: list[_Failures] = []
        self._raised: WriteFailed | None = None  # the last WriteFailed this writer raised
        self.written = 0  # mutations stored so far (see BatchWriter.written)
        self._written_lock = threading.Lock()

    def put(self, row: bytes, cells: Mapping[bytes, bytes], timestamp: int | None = None) -> None:
        if type(row) is not bytes:
            row = as_bytes(row, "a row key")
        if not row:
            raise StoreError("a row key must not be empty")
        self._add(row, *wire.put_cells(row, cells, timestamp))

    def mutate(self, mutation: Client_pb2.MutationProto) -> None:
        """Send a mutation the caller built whole: a replicated cell keeps its own type (any
        delete kind) and timestamp, which :meth:`put` and :meth:`delete` do not give. Buffered,
        batched and acknowledged as a put is."""
        if not mutation.row:
            raise StoreError("a row key must not be empty")
        self._add(mutation.row, mutation.SerializeToString())

    def delete(self, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        mutation = self._store.mutation(self._table, row, None, columns=columns, check=False)
        self._add(mutation.row, mutation.SerializeToString())

    def _add(self, row: bytes, mutation: bytes, cells: bytes = b"") -> None:
        self._buffer.append((row, mutation, cells))
        self._bytes += len(mutation) + len(cells) + _CELL_OVERHEAD
        if len(self._buffer) >= self._batch_size or self._bytes >= self._max_bytes:
            if self._in_flight == 1:
                self.flush()
            else:
                self._send_in_background()

    def _send_in_background(self) -> None:
        buffer = self._buffer
        rows = {entry[0] for entry in buffer}
        # settle what has finished, what shares a row with this batch, and (oldest first) what
        # exceeds the in-flight limit
        self._settle(lambda k, sent_rows: k < len(self._sent) - self._in_flight + 1 or not rows.isdisjoint(sent_rows))
        if self._failures:
            self._settle(lambda k, sent_rows: True)
            self._raise_failures()  # the current buffer stays buffered, unsent
        self._buffer, self._bytes = [], 0
        busy = {lane for _, _, lane in self._sent}
        lane = next(n for n in range(1, self._in_flight + 1) if n not in busy)
        future = self._store.senders.submit(self._send, buffer, lane)
        in_flight = self._store._writes_in_flight
        in_flight.add(future)
        future.add_done_callback(in_flight.discard)
        self._sent.append((future, rows, lane))

    def _settle(self, wait: Callable[[int, set[bytes]], bool]) -> None:
        """Collect the failures of every finished background batch and of those ``wait`` picks
        (by position, oldest first, and rows), waiting for the latter."""
        kept = []
        for k, (future, rows, lane) in enumerate(self._sent):
            if future.done() or wait(k, rows):
                failures = future.result()
                if failures[1]:
                    self._failures.append(failures)
            else:
                kept.append((future, rows, lane))
        self._sent = kept

    def flush(self) -> None:
        """Send everything buffered and wait for every batch in flight; WriteFailed names every
        row not written."""
        self._settle(lambda k, rows: True)
        buffer, self._buffer, self._bytes = self._buffer, [], 0
        if buffer:
            failures = self._send(buffer, 0)
            if failures[1]:
                self._failures.append(failures)
        self._raise_failures()

    def _send(self, buffer: list[tuple[bytes, bytes, bytes]], lane: int) -> _Failures:
        """Write ``buffer``; (buffer, {index in buffer: error}) for the mutations not written."""
        # Round k holds each row's k-th mutation, so a row's mutations apply in buffer order.
        rounds: list[list[int]] = []
        seen: dict[bytes, int] = {}
        for i, (row, _, _) in enumerate(buffer):
            k = seen.get(row, 0)
            seen[row] = k + 1
            if k == len(rounds):
                rounds.append([])
            rounds[k].append(i)
        failed: dict[int, str] = {}
        for indexes in rounds:
            rows = [buffer[i][0] for i in indexes]

            def action(j: int, indexes: list[int] = indexes) -> bytes:
                return wire.action(j, buffer[indexes[j]][1])

            def cells(j: int, indexes: list[int] = indexes) -> bytes:
                return buffer[indexes[j]][2]

            try:
                _, round_failed = run_multi(self._store, self._table, rows, action, "write", lane, cells)
            except StoreError as exc:  # e.g. the table was deleted meanwhile
                round_failed = {j: str(exc) for j in range(len(rows))}
            failed.update((indexes[j], message) for j, message in round_failed.items())
        with self._written_lock:
            self.written += len(buffer) - len(failed)
        return buffer, failed

    def _raise_failures(self) -> None:
        failures, self._failures = self._failures, []
        if not failures:
            return
        rows_failed = list(dict.fromkeys(buffer[i][0] for buffer, failed in failures for i in sorted(failed)))
        buffer, failed = failures[0]
        first = min(failed)
        self._raised = WriteFailed(
            f"{len(rows_failed)} row(s) not written to {self._table!r}; first {to_string_binary(buffer[first][0])!r}: {failed[first]}", rows_failed
        )
        raise self._raised

    def __enter__(self) -> HBaseWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> Any:
        try:
            self.flush()
        except WriteFailed as later:
            raised = self._raised
            if raised is None or exc is not raised:
                raise
            # the block ended on this writer's WriteFailed from a put(), and the final flush
            # failed too: one error naming the rows of both, so none goes unreported
            rows = list(dict.fromkeys([*raised.rows, *later.rows]))
            raise WriteFailed(f"{len(rows)} row(s) not written to {self._table!r}; {raised}; then {later}", rows) from None


_Failures = tuple[list[tuple[bytes, bytes, bytes]], dict[int, str]]
