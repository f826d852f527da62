"""The hand-built write-path protobuf bytes equal what the protobuf runtime serializes for the same
messages (hbase-driver's generated Client.proto classes), byte for byte."""

from __future__ import annotations

import pytest
from hbasedriver.protobuf_py import Client_pb2, HBase_pb2
from hypothesis import given
from hypothesis import strategies as st

from keyshape.errors import StoreError
from keyshape.store.hbase import wire

QV = Client_pb2.MutationProto.ColumnValue.QualifierValue
CV = Client_pb2.MutationProto.ColumnValue

names = st.binary(min_size=0, max_size=20).filter(lambda b: b":" not in b)
cells = st.dictionaries(st.tuples(names.filter(bool), names).map(lambda t: t[0] + b":" + t[1]), st.binary(max_size=300), min_size=1, max_size=6)


def reference(row: bytes, cells: dict[bytes, bytes], timestamp: int | None) -> Client_pb2.MutationProto:
    grouped: dict[bytes, list[QV]] = {}
    for column, value in cells.items():
        family, _, qualifier = column.partition(b":")
        grouped.setdefault(family, []).append(QV(qualifier=qualifier, value=value))
    proto = Client_pb2.MutationProto(
        row=row, mutate_type=Client_pb2.MutationProto.PUT, column_value=[CV(family=f, qualifier_value=q) for f, q in grouped.items()]
    )
    if timestamp is not None:
        proto.timestamp = timestamp
    return proto


@given(st.binary(min_size=1, max_size=200), cells, st.one_of(st.none(), st.integers(0, 2**63 - 1)))
def test_put_mutation_equals_protobuf(row, cells, timestamp):
    assert wire.put_mutation(row, cells, timestamp) == reference(row, cells, timestamp).SerializeToString()


@given(
    st.lists(
        st.tuples(st.binary(min_size=1, max_size=60), st.lists(st.tuples(st.binary(min_size=1, max_size=50), cells), min_size=1, max_size=4)),
        min_size=1,
        max_size=4,
    ),
    st.integers(0, 2**63 - 1),
    st.integers(0, 70_000),
)
def test_multi_request_equals_protobuf(regions, nonce_group, first_index):
    ours, ref = [], Client_pb2.MultiRequest(nonceGroup=nonce_group)
    index = first_index
    for name, puts in regions:
        spec = HBase_pb2.RegionSpecifier(type=HBase_pb2.RegionSpecifier.REGION_NAME, value=name)
        actions = []
        ref_actions = []
        for row, c in puts:
            actions.append(wire.action(index, wire.put_mutation(row, c)))
            ref_actions.append(Client_pb2.Action(index=index, mutation=reference(row, c, None)))
            index += 1
        ours.append(wire.region_action(spec.SerializeToString(), actions))
        ref.regionAction.add(region=spec, atomic=False, action=ref_actions)
    assert wire.multi_request(ours, nonce_group) == ref.SerializeToString()


@given(st.integers(0, 2**64 - 1))
def test_varint_round_trip(n):
    from google.protobuf.internal.decoder import _DecodeVarint

    encoded = wire.varint(n)
    assert _DecodeVarint(encoded, 0) == (n, len(encoded))


def test_bad_cells_are_one_line_errors():
    with pytest.raises(StoreError, match="has no ':'"):
        wire.put_mutation(b"r", {b"nocolon": b"v"})
    with pytest.raises(StoreError, match="no cells"):
        wire.put_mutation(b"r", {})
    with pytest.raises(StoreError, match="cell value must be bytes"):
        wire.put_mutation(b"r", {b"d:q": 5})  # type: ignore[dict-item]
