"""Write replicated WAL cells to an HBase table as they are: each cell keeps its family,
qualifier, timestamp and type (Put, Delete, DeleteColumn, DeleteFamily, DeleteFamilyVersion).

As HBase's own ``ReplicationSink.replicateEntries``, a new mutation starts whenever the row or the
put/delete kind changes, so one row's cells apply in the order they were logged. With every cell
at its own timestamp the result does not depend on that order anyway: a delete marker masks the
cells at or before its timestamp whether it arrives before or after them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from hbasedriver.protobuf_py import Client_pb2

from keyshape.store.hbase import wire
from keyshape.store.hbase.walentry import CellType, WalCell

if TYPE_CHECKING:  # annotations only
    from keyshape.store.hbase.store import HBaseStore

__all__ = ["PutGroup", "apply_cells", "mutations_of", "plan"]

MP = Client_pb2.MutationProto
_DELETE_TYPES = {
    CellType.DELETE: MP.DELETE_ONE_VERSION,
    CellType.DELETE_COLUMN: MP.DELETE_MULTIPLE_VERSIONS,
    CellType.DELETE_FAMILY: MP.DELETE_FAMILY,
    CellType.DELETE_FAMILY_VERSION: MP.DELETE_FAMILY_VERSION,
}


def _mutation(row: bytes, cells: Sequence[WalCell]) -> Client_pb2.MutationProto:
    put = cells[0].type is CellType.PUT
    proto = MP(row=row, mutate_type=MP.PUT if put else MP.DELETE)
    families: dict[bytes, MP.ColumnValue] = {}
    for cell in cells:
        column = families.get(cell.family)
        if column is None:
            column = families[cell.family] = proto.column_value.add(family=cell.family)
        if put:
            column.qualifier_value.add(qualifier=cell.qualifier, value=cell.value, timestamp=cell.timestamp)
        else:
            column.qualifier_value.add(qualifier=cell.qualifier, timestamp=cell.timestamp, delete_type=_DELETE_TYPES[cell.type])
    return proto


class PutGroup(NamedTuple):
    """Put cells of one row at one timestamp: one ``writer.put`` (built as bytes by
    ``wire.put_mutation``, several times faster than a MutationProto per cell)."""

    row: bytes
    columns: dict[bytes, bytes]  # b"family:qualifier" -> value
    timestamp: int


def plan(rows: Iterable[tuple[bytes, Sequence[WalCell]]]) -> list[PutGroup | Client_pb2.MutationProto]:
    """What to send for ``(row, cells)`` pairs, in order: a PutGroup per run of put cells of one
    row and one timestamp (a later cell of the same column in the run wins, as the later WAL
    entry does in HBase), a delete MutationProto per run of delete cells of one row."""
    out: list[PutGroup | Client_pb2.MutationProto] = []
    put = CellType.PUT
    for row, cells in rows:
        i, n = 0, len(cells)
        while i < n:
            cell = cells[i]
            if cell.type is put:
                ts = cell.timestamp
                columns: dict[bytes, bytes] = {}
                while i < n and cells[i].type is put and cells[i].timestamp == ts:
                    c = cells[i]
                    columns[c.family + b":" + c.qualifier] = c.value
                    i += 1
                out.append(PutGroup(row, columns, ts))
            else:
                j = i
                while j < n and cells[j].type is not put:
                    j += 1
                out.append(_mutation(row, cells[i:j]))
                i = j
    return out


def mutations_of(rows: Iterable[tuple[bytes, Sequence[WalCell]]]) -> list[Client_pb2.MutationProto]:
    """The mutations :func:`apply_cells` sends for ``(row, cells)`` pairs, as protos (to inspect)."""
    return [MP.FromString(wire.put_mutation(p.row, p.columns, p.timestamp)) if isinstance(p, PutGroup) else p for p in plan(rows)]


def apply_cells(store: HBaseStore, table: str, rows: Iterable[tuple[bytes, Sequence[WalCell]]], batch_size: int = 2000) -> int:
    """Write ``(row, cells)`` pairs to ``table`` through the store's batch writer and return the
    number of mutations, once HBase acknowledged all of them (WriteFailed otherwise). Two
    batches in flight (one row's mutations still apply in order: the writer never sends a batch
    beside an unfinished one sharing a row), so encoding one overlaps HBase writing the other."""
    planned = plan(rows)
    with store.writer(table, batch_size=batch_size, in_flight=2) as writer:
        for p in planned:
            if type(p) is PutGroup:
                writer.put(p.row, p.columns, p.timestamp)
            else:
                # a replicated delete needs its own type and timestamp: the mutation goes in as built
                writer.mutate(p)  # type: ignore[arg-type]
    return len(planned)
