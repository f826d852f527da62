"""Which regions of a table the master has in transition, read from a ClusterStatus message of
HBase's own protobuf schema (the real-HBase callers are the split-watch and calibration tests)."""

from __future__ import annotations

from hbasedriver.protobuf_py import ClusterStatus_pb2, HBase_pb2

from keyshape.store.hbase.admin import in_transition


def _moving(namespace: bytes, table: bytes, start: bytes, state: int) -> ClusterStatus_pb2.RegionInTransition:
    name = (table if namespace == b"default" else namespace + b":" + table) + b"," + start + b",1795943174866.0123456789abcdef0123456789abcdef."
    info = HBase_pb2.RegionInfo(region_id=1795943174866, table_name=HBase_pb2.TableName(namespace=namespace, qualifier=table), start_key=start)
    return ClusterStatus_pb2.RegionInTransition(
        spec=HBase_pb2.RegionSpecifier(type=HBase_pb2.RegionSpecifier.REGION_NAME, value=name),
        region_state=ClusterStatus_pb2.RegionState(region_info=info, state=state),
    )


def test_a_tables_regions_in_transition_by_its_own_name_not_a_prefix() -> None:
    State = ClusterStatus_pb2.RegionState.State
    status = ClusterStatus_pb2.ClusterStatus(
        regions_in_transition=[
            _moving(b"default", b"t", b"m", State.SPLITTING),
            _moving(b"default", b"t2", b"", State.OPENING),  # its name starts with "t" too
            _moving(b"ns", b"t", b"\x00\x01", State.CLOSING),  # same qualifier, another namespace
        ]
    )
    assert in_transition(status, "t") == ["t,m,1795943174866.0123456789abcdef0123456789abcdef.: SPLITTING"]
    assert in_transition(status, "default:t") == in_transition(status, "t")
    assert in_transition(status, "ns:t") == ["ns:t,\\x00\\x01,1795943174866.0123456789abcdef0123456789abcdef.: CLOSING"]
    assert in_transition(status, "absent") == []
    assert len(in_transition(status)) == 3
