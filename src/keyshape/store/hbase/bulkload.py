"""Hand HFiles to a table's region servers with HBase's own bulk-load RPCs, as
``BulkLoadHFilesTool`` (``completebulkload``) does.

1. ``PrepareBulkLoad`` (ClientService) on a server of the table: a bulk token, the staging
   directory the region servers move the files into (secure bulk load; HBase 2 uses it whether
   or not the cluster is secured).
2. The files are grouped by the region of the table holding their first row, as the region list
   is now; a file whose last row lies past its region's end is split at that end into two
   files (``splitStoreFile``: each half a new HFile, cells unchanged), both grouped again.
3. ``BulkLoadHFile`` per region with all its files (every family at once, atomic per region) and
   ``assign_seq_num``: the region gives the files a sequence id newer than every edit it holds.
   A region that split or moved meanwhile (``loaded=false``: a file no longer fits it, or
   ``NotServingRegionException``...) sends its files back to step 2 with the region list
   re-read, as the tool's retry loop does, up to ``retries`` rounds.
4. ``CleanupBulkLoad`` with the token, whatever happened.

Where the files are: the region server opens the path it is given with its own filesystem. On
the standalone and test-cluster HBase (``hbase.rootdir=file://...`` on this machine) a local
directory works and the server moves the files into the region. On a real cluster the files must
be on the cluster's HDFS (Spark tasks writing ``hdfs://...``), which this module does not write:
:func:`check_staging` refuses a local staging directory when the table's servers are not on this
machine.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hbasedriver.protobuf_py import Client_pb2, HBase_pb2

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import BadInput, StoreError
from keyshape.store.base import split_table_name
from keyshape.store.hbase.client import HBaseClient
from keyshape.store.hbase.errors import ConnectionLost, ServerError
from keyshape.store.hbase.hfile import HFileSummary, HFileWriter, read_cells
from keyshape.store.hbase.regions import Region

__all__ = ["BulkLoadResult", "bulk_load", "check_staging", "join_files", "split_file"]

log = logging.getLogger("keyshape.store.hbase.bulkload")
_LOCAL = {"localhost", "127.0.0.1", "::1"}


@dataclass
class BulkLoadResult:
    """What ``bulk_load`` did: files handed over (after splits), splits made, retry rounds."""

    files: int = 0
    splits: int = 0
    rounds: int = 0
    regions: set[bytes] = field(default_factory=set)


def _local_names() -> set[str]:
    names = set(_LOCAL)
    try:
        host = socket.gethostname()
        names |= {host, socket.getfqdn()}
        names |= {info[4][0] for info in socket.getaddrinfo(host, None)}  # type: ignore[misc]
    except OSError:
        pass
    return {str(n) for n in names}


def check_staging(client: HBaseClient, table: str, staging: Path) -> None:
    """BadInput, in one line, when region servers of ``table`` run on other machines and so cannot
    read HFiles in the local directory ``staging``."""
    namespace, name = split_table_name(table)
    here = _local_names()
    remote = sorted({f"{r.host}:{r.port}" for r in client.cluster.region_list(namespace, name).regions if r.host not in here})
    if remote:
        raise BadInput(
            f"the bulk copy writes HFiles to {staging} on this machine, but region servers {', '.join(remote[:3])} of {table!r} "
            f"cannot read them there: on a real cluster the files must be written to the cluster's HDFS (not supported yet); copy with --via puts"
        )


def split_file(summary: HFileSummary, at: bytes, directory: Path | None = None) -> tuple[HFileSummary, HFileSummary]:
    """Split a file into the cells with rows before ``at`` and from ``at`` on (both halves hold
    cells), like ``BulkLoadHFilesTool.splitStoreFile``; the original is deleted."""
    directory = directory or summary.path.parent
    stem = summary.path.name
    halves = [directory / f"{stem}.bottom", directory / f"{stem}.top"]
    writers = [HFileWriter(p, summary.family) for p in halves]
    try:
        for cell in read_cells(summary.path):
            writers[cell.row >= at].append(cell.row, cell.qualifier, cell.timestamp, cell.value, cell.type, cell.tags)
        bottom, top = writers[0].close(), writers[1].close()
    except BaseException:
        for w in writers:
            w.abort()
        raise
    summary.path.unlink()
    return bottom, top


def join_files(files: Sequence[HFileSummary]) -> list[HFileSummary]:
    """``files`` with each run of files of one family whose rows follow one another without
    overlap (sorted by first row, each file's last row before the next one's first) joined into
    one file (:meth:`HFileWriter.append_file`: data blocks copied, no cell rebuilt); the joined
    inputs are deleted. A store that gets one file per load instead of one per source range is
    not pushed into a compaction by the load (HBase compacts a store of 3 files or more), and a
    re-keyed copy (a salt over a sequential key) gives exactly such runs: each source range's
    rows land in every NEW region as one contiguous slice."""
    out: list[HFileSummary] = []
    by_family: dict[bytes, list[HFileSummary]] = {}
    for f in files:
        by_family.setdefault(f.family, []).append(f)
    for family, group in by_family.items():
        group.sort(key=lambda f: f.first_row)
        runs: list[list[HFileSummary]] = []
        for f in group:
            run = runs[-1] if runs else None
            if run is not None and run[-1].last_row < f.first_row and f.compression == run[0].compression:
                run.append(f)
            else:
                runs.append([f])
        for run in runs:
            if len(run) == 1 or any(not r.last_key for r in run):
                out += run
                continue
            first = Path(run[0].path)
            writer = HFileWriter(first.with_name(first.name + f".joined{len(run)}"), family, compression=run[0].compression)
            try:
                for r in run:
                    writer.append_file(r)
                out.append(writer.close())
            except BaseException:
                writer.abort()
                raise
            for r in run:
                Path(r.path).unlink(missing_ok=True)
    return out


def _rpc(client: HBaseClient, region: Region, method: str, request: object, response_cls: type) -> object:
    return client.cluster.connection(region.host, region.port).call(method, request, response_cls)  # type: ignore[arg-type]


def bulk_load(client: HBaseClient, table: str, files: Sequence[HFileSummary], *, retries: int = 10, join: bool = True) -> BulkLoadResult:
    """Load ``files`` (HFiles of ``table``'s families, each sorted, any rows) into ``table``;
    every cell is loaded once ``bulk_load`` returns (StoreError otherwise, naming what is left).
    ``join``: the files of one region and family that follow one another are joined into one
    first (:func:`join_files`)."""
    result = BulkLoadResult()
    if not files:
        return result
    namespace, name = split_table_name(table)
    table_name = HBase_pb2.TableName(namespace=namespace.encode(), qualifier=name.encode())
    attempt = 0
    while True:  # the server of the table's first region prepares (and later cleans up)
        regions = client.cluster.region_list(namespace, name, refresh=attempt > 0)
        if not regions.regions:
            raise client.not_found(table)
        first = regions.regions[0]
        request = Client_pb2.PrepareBulkLoadRequest(table_name=table_name, region=first.spec())
        try:
            prepared = _rpc(client, first, "PrepareBulkLoad", request, Client_pb2.PrepareBulkLoadResponse)
            break
        except (ServerError, ConnectionLost) as exc:
            if isinstance(exc, ServerError) and not exc.relocate:
                raise client.refused(exc, table, "prepare bulk load") from None
            attempt += 1
            if attempt > retries:
                raise StoreError(f"prepare bulk load on {table!r} failed after {retries} retries: {exc}") from exc
            client.note_retry(attempt, f"prepare bulk load on {table!r}", exc)
    token = prepared.bulk_token  # type: ignore[attr-defined]
    queue = list(files)
    try:
        while queue:
            if result.rounds > retries:
                left = ", ".join(str(f.path) for f in queue[:3])
                raise StoreError(
                    f"bulk load into {table!r}: {len(queue)} file(s) still not loaded after {retries} rounds (e.g. {left}); "
                    "the region server refused them without saying why: its log names the cause (a 'Failed to complete bulk load' line)"
                )
            regions = client.cluster.region_list(namespace, name, refresh=result.rounds > 0)
            result.rounds += 1
            groups: dict[bytes, tuple[Region, list[HFileSummary]]] = {}
            pending = queue
            queue = []
            while pending:
                summary = pending.pop()
                if not os.path.exists(summary.path):
                    raise StoreError(f"bulk load into {table!r}: HFile {summary.path} is gone before it was loaded; copy its range again")
                region = regions.at(summary.first_row)
                if region.end and summary.last_row >= region.end:
                    bottom, top = split_file(summary, region.end)
                    result.splits += 1
                    pending += [bottom, top]
                    continue
                groups.setdefault(region.name, (region, []))[1].append(summary)
            if join:
                groups = {name: (region, join_files(group)) for name, (region, group) in groups.items()}
            # every region's request on the wire before the first answer is read: each load costs
            # the server tens of ms (flush, WAL marker and sync, opening the file) whatever its size
            sent: list[tuple[Region, list[HFileSummary], Any, int | BaseException]] = []
            for region, group in groups.values():
                for f in group:
                    # A secure region server loads as the requesting user and first checks that
                    # user may read AND write each file (HStore.assertBulkLoadHFileOk: access
                    # READ_WRITE); on a local filesystem the files belong to the OS user who wrote
                    # them, never to the Kerberos principal, so without these bits it refuses
                    # (and answers only loaded=false). The files are keyshape's own staged copies.
                    os.chmod(f.path, 0o666)
                request = Client_pb2.BulkLoadHFileRequest(
                    region=region.spec(),
                    family_path=[Client_pb2.BulkLoadHFileRequest.FamilyPath(family=f.family, path=Path(f.path).resolve().as_uri()) for f in group],
                    assign_seq_num=True,
                    bulk_token=token,
                )
                try:
                    conn = client.cluster.connection(region.host, region.port)
                    sent.append((region, group, conn, conn.send("BulkLoadHFile", request)))
                except ConnectionLost as exc:
                    sent.append((region, group, None, exc))
            for region, group, conn, call in sent:
                try:
                    if isinstance(call, BaseException):
                        raise call
                    response = conn.receive(call, Client_pb2.BulkLoadHFileResponse)
                    loaded = bool(response.loaded)
                except ConnectionLost as exc:
                    log.warning("bulk load into %s: %s; retrying its %d file(s)", to_string_binary(region.name), exc, len(group))
                    client.cluster.relocate()
                    loaded = False
                except ServerError as exc:
                    if not exc.relocate:
                        raise client.refused(exc, table, "bulk load") from None
                    log.warning("bulk load into %s: %s; retrying its %d file(s)", to_string_binary(region.name), exc.short_name, len(group))
                    loaded = False
                if loaded:
                    # the server moved each file into the region, or copied it when it judged the
                    # filesystems different (a local rootdir: SecureBulkLoadListener copies)
                    for f in group:
                        Path(f.path).unlink(missing_ok=True)
                    result.files += len(group)
                    result.regions.add(region.name)
                else:
                    queue += group  # HBase moves a file back when its region's load fails
    finally:
        try:
            _rpc(
                client,
                first,
                "CleanupBulkLoad",
                Client_pb2.CleanupBulkLoadRequest(bulk_token=token, region=first.spec()),
                Client_pb2.CleanupBulkLoadResponse,
            )
        except (ServerError, ConnectionLost) as exc:
            log.warning("cleanup of bulk load %s failed: %s", token, exc)
    return result
