"""Write replicated WAL cells to an HBase table as they are: each cell keeps its family,
qualifier, timestamp and type (Put, Delete, DeleteColumn, DeleteFamily, DeleteFamilyVersion).

As HBase's own ``ReplicationSink.replicateEntries``, a new mutation starts whenever the row or the
put/delete kind changes, so one row's cells apply in the order they were logged. With every cell
at its own timestamp the result does not depend on that order anyway: a delete marker masks the
cells at or before its timestamp whether it arrives before or after them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from hbasedriver.protobuf_py import Client_pb2

from keyshape.store.hbase.walentry import CellType, WalCell

if TYPE_CHECKING:  # annotations only
    from keyshape.store.hbase.store import HBaseStore

__all__ = ["apply_cells", "mutations_of"]

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


def mutations_of(rows: Iterable[tuple[bytes, Sequence[WalCell]]]) -> list[Client_pb2.MutationProto]:
    """Mutations for ``(row, cells)`` pairs: one per run of cells of one row and one kind."""
    out: list[Client_pb2.MutationProto] = []
    for row, cells in rows:
        run: list[WalCell] = []
        for cell in cells:
            if run and (cell.type is CellType.PUT) != (run[0].type is CellType.PUT):
                out.append(_mutation(row, run))
                run = []
            run.append(cell)
        if run:
            out.append(_mutation(row, run))
    return out


def apply_cells(store: HBaseStore, table: str, rows: Iterable[tuple[bytes, Sequence[WalCell]]], batch_size: int = 1000) -> int:
    """Write ``(row, cells)`` pairs to ``table`` through the store's batch writer and return the
    number of mutations, once HBase acknowledged all of them (WriteFailed otherwise)."""
    mutations = mutations_of(rows)
    with store.writer(table, batch_size=batch_size, in_flight=1) as writer:
        for mutation in mutations:
            # a replicated cell needs its own type and timestamp, so the mutation goes in as built
            writer.mutate(mutation)
    return len(mutations)
