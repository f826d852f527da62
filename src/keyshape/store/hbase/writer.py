"""Batched requests: ``run_multi`` (HBase's ``Multi`` RPC with per-row results and bounded
retries) and ``HBaseWriter``, the buffered writer built on it.

hbase-driver's ``batch_put``/``BufferedMutator`` send one RPC per row and stop at the first error
without saying which rows were written (CLIENTS.md bug 7). ``Multi`` carries one non-atomic
``RegionAction`` per region and answers per action, so a bad row (unknown family) is reported
alone while the rest are stored, and only the rows that hit a transient error are re-sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

from hbasedriver.protobuf_py import Client_pb2

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import KeyshapeError, StoreError, WriteFailed
from keyshape.store.base import split_table_name
from keyshape.store.hbase.client import HBaseClient
from keyshape.store.hbase.rpc import ConnectionLost, Region, ServerError

__all__ = ["HBaseWriter", "run_multi"]

_CELL_OVERHEAD = 24  # bytes per cell beyond row/column/value in a MutationProto (ts, tags, varints)


def run_multi(store: HBaseClient, table: str, rows: list[bytes],
              action: Callable[[int], Client_pb2.Action], what: str
              ) -> tuple[dict[int, Client_pb2.Result], dict[int, str]]:
    """Send ``action(i)`` for every ``rows[i]``, one Multi per region server, grouped by region.

    Returns ``(results, failed)``: the Result of each index that succeeded and, for each index
    that did not, the error text. Transient errors (region moved, server not serving, connection
    lost ...) are retried up to ``store.retries`` times with backoff, re-sending only the failed
    indexes after re-reading the region map; a row still failing then is reported in ``failed``.
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
            by_server: dict[tuple[str, int], dict[Region, list[int]]] = {}
            for i in pending:
                region = regions.at(rows[i])
                by_server.setdefault((region.host, region.port), {}).setdefault(region, []).append(i)
            for (host, port), by_region in by_server.items():
                order = list(by_region.items())
                request = Client_pb2.MultiRequest(nonceGroup=store._nonce_group)
                for region, indexes in order:
                    request.regionAction.add(region=region.spec(), atomic=False,
                                             action=[action(i) for i in indexes])
                try:
                    response = store.cluster.connection(host, port).call("Multi", request,
                                                                         Client_pb2.MultiResponse)
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
                for _, indexes in order[len(response.regionActionResult):]:
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


class HBaseWriter:
    """Buffered writer of ``HBaseStore`` (see ``keyshape.store.base.BatchWriter``).

    Mutations are sent when ``batch_size`` are buffered or their estimated size reaches
    ``max_bytes``, on ``flush()`` and when the ``with`` block exits (even if it raised, like
    ``BufferedMutator.close()``). Several mutations of one row in a buffer are sent in buffer
    order, in successive Multi rounds. ``flush()`` returns only when every mutation is stored;
    otherwise it raises ``WriteFailed`` whose ``rows`` are exactly the rows not written (each once,
    in buffer order).
    """

    def __init__(self, store: HBaseClient, table: str, batch_size: int, max_bytes: int) -> None:
        if batch_size < 1 or max_bytes < 1:
            raise KeyshapeError("writer: batch_size and max_bytes must be >= 1")
        self._store, self._table = store, table
        self._batch_size, self._max_bytes = batch_size, max_bytes
        self._buffer: list[Client_pb2.MutationProto] = []
        self._bytes = 0

    def put(self, row: bytes, cells: Mapping[bytes, bytes], timestamp: int | None = None) -> None:
        mutation = self._store.mutation(self._table, row, cells, timestamp, check=False)
        self._add(mutation, sum(len(c) + len(v) + _CELL_OVERHEAD for c, v in cells.items()))

    def delete(self, row: bytes, columns: Iterable[bytes] | None = None) -> None:
        self._add(self._store.mutation(self._table, row, None, columns=columns, check=False), _CELL_OVERHEAD)

    def _add(self, mutation: Client_pb2.MutationProto, size: int) -> None:
        self._buffer.append(mutation)
        self._bytes += len(mutation.row) + size
        if len(self._buffer) >= self._batch_size or self._bytes >= self._max_bytes:
            self.flush()

    def flush(self) -> None:
        """Send everything buffered; WriteFailed names every row not written."""
        buffer, self._buffer, self._bytes = self._buffer, [], 0
        if not buffer:
            return
        # Round k holds each row's k-th mutation, so a row's mutations apply in buffer order.
        rounds: list[list[int]] = []
        seen: dict[bytes, int] = {}
        for i, mutation in enumerate(buffer):
            k = seen.get(mutation.row, 0)
            seen[mutation.row] = k + 1
            if k == len(rounds):
                rounds.append([])
            rounds[k].append(i)
        failed: dict[int, str] = {}
        for indexes in rounds:
            rows = [buffer[i].row for i in indexes]

            def action(j: int, indexes: list[int] = indexes) -> Client_pb2.Action:
                return Client_pb2.Action(index=j, mutation=buffer[indexes[j]])

            try:
                _, round_failed = run_multi(self._store, self._table, rows, action, "write")
            except StoreError as exc:  # e.g. the table was deleted meanwhile
                round_failed = {j: str(exc) for j in range(len(rows))}
            failed.update((indexes[j], message) for j, message in round_failed.items())
        if failed:
            first = min(failed)
            rows_failed = list(dict.fromkeys(buffer[i].row for i in sorted(failed)))
            raise WriteFailed(
                f"{len(rows_failed)} row(s) not written to {self._table!r}; first "
                f"{to_string_binary(buffer[first].row)!r}: {failed[first]}", rows_failed)

    def __enter__(self) -> HBaseWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Any:
        self.flush()
