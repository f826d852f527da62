"""Puts sent as the Java client sends them (issue 42): ``wire.put_cells`` gives the MutationProto
the protobuf runtime serializes for a cell-block Put (row, type, timestamp, cell count, no
protobuf cells) and the KeyValues ``KeyValueCodec`` writes, which keyshape's own cell-block
reader reads back as the cells put (hypothesis). HBase itself takes them in tests/hbase/test_writes.py
and every HBase test that writes through ``store.writer``."""

from __future__ import annotations

from hbasedriver.protobuf_py import Client_pb2
from hypothesis import given
from hypothesis import strategies as st

from keyshape.store.hbase import wire
from keyshape.store.hbase.cellblock import versions_of

names = st.binary(min_size=0, max_size=20).filter(lambda b: b":" not in b)
cells = st.dictionaries(st.tuples(names.filter(bool), names).map(lambda t: t[0] + b":" + t[1]), st.binary(max_size=300), min_size=1, max_size=6)
LATEST = 2**63 - 1


@given(st.binary(min_size=1, max_size=200), cells, st.one_of(st.none(), st.integers(0, 2**63 - 2)))
def test_put_cells_is_a_cell_block_put(row: bytes, cells: dict[bytes, bytes], timestamp: int | None) -> None:
    mutation, block = wire.put_cells(row, cells, timestamp)
    proto = Client_pb2.MutationProto(row=row, mutate_type=Client_pb2.MutationProto.PUT, associated_cell_count=len(cells))
    if timestamp is not None:
        proto.timestamp = timestamp
    assert mutation == proto.SerializeToString()
    keys, rows = versions_of(block, [len(cells)])
    expected: dict[bytes, list[tuple[int, bytes]]] = {}
    for column, value in cells.items():
        expected.setdefault(column, []).append((LATEST if timestamp is None else timestamp, value))
    assert keys == [row] and rows == [expected]
