"""The replication sink's wire, without HBase (issue 32): WAL cells cut from a KeyValueCodec(WithTags)
cell block exactly as HBase's ``KeyValueUtil.oswrite`` lays them out; keyshape's own RPC client
talking to the sink gets a clear exception for any call but ReplicateWALEntry and for a batch its
callback rejects; a non-SIMPLE preamble is refused with a fatal connection exception."""

from __future__ import annotations

import socket
import struct

import pytest
from hbasedriver.protobuf_py import Admin_pb2, RPC_pb2, WAL_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.store.hbase.errors import ServerError
from keyshape.store.hbase.framing import RpcConnection, _read_varint
from keyshape.store.hbase.sink import ReplicationSink
from keyshape.store.hbase.walentry import CellType, WalCell, WalDecodeError, WalEntry, decode_entries

TAGS = "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags"
PLAIN = "org.apache.hadoop.hbase.codec.KeyValueCodec"


def keyvalue(cell: WalCell, tags: bytes = b"") -> bytes:
    """One cell as KeyValueCodec(WithTags) writes it: int32 length, then the KeyValue."""
    key = struct.pack(">h", len(cell.row)) + cell.row + bytes([len(cell.family)]) + cell.family + cell.qualifier
    key += struct.pack(">qB", cell.timestamp, int(cell.type))
    kv = struct.pack(">ii", len(key), len(cell.value)) + key + cell.value
    if tags:
        kv += struct.pack(">h", len(tags)) + tags
    return struct.pack(">i", len(kv)) + kv


cells = st.builds(
    WalCell,
    row=st.binary(min_size=1, max_size=40),
    family=st.binary(min_size=1, max_size=8).filter(lambda f: f != b"METAFAMILY"),
    qualifier=st.binary(max_size=20),
    timestamp=st.integers(0, 2**63 - 1),
    type=st.sampled_from(list(CellType)),
    value=st.binary(max_size=60),
)


def request_for(groups: list[list[WalCell]]) -> Admin_pb2.ReplicateWALEntryRequest:
    request = Admin_pb2.ReplicateWALEntryRequest()
    for i, group in enumerate(groups):
        entry = request.entry.add(associated_cell_count=len(group))
        entry.key.CopyFrom(WAL_pb2.WALKey(encoded_region_name=b"%032x" % i, table_name=b"ns:t", log_sequence_number=i + 1, write_time=7))
    return request


@settings(max_examples=200, deadline=None)
@given(groups=st.lists(st.lists(cells, max_size=5), max_size=5), tags=st.binary(max_size=9), codec=st.sampled_from([TAGS, PLAIN]))
def test_cells_come_back_per_entry_as_written(groups: list[list[WalCell]], tags: bytes, codec: str) -> None:
    tags = tags if codec == TAGS else b""
    block = b"".join(keyvalue(c, tags) for group in groups for c in group)
    entries = decode_entries(request_for(groups), block, codec)
    assert [list(e.cells) for e in entries] == groups
    assert [(e.table, e.sequence_id, e.write_time) for e in entries] == [("ns:t", i + 1, 7) for i in range(len(groups))]
    if block:  # a block cut short, or with bytes no entry owns, is refused
        with pytest.raises(WalDecodeError):
            decode_entries(request_for(groups), block[:-1], codec)
        with pytest.raises(WalDecodeError):
            decode_entries(request_for(groups), block + b"\0", codec)


def test_metafamily_markers_are_skipped_and_tags_need_the_tags_codec() -> None:
    user = WalCell(b"r", b"cf", b"q", 5, CellType.PUT, b"v")
    marker = WalCell(b"r", b"METAFAMILY", b"HBASE::BULK_LOAD", 5, CellType.PUT, b"descriptor")
    entries = decode_entries(request_for([[marker, user]]), keyvalue(marker) + keyvalue(user), PLAIN)
    assert entries[0].cells == (user,)
    with pytest.raises(WalDecodeError, match="carries tags"):
        decode_entries(request_for([[user]]), keyvalue(user, b"\x01tag"), PLAIN)
    with pytest.raises(WalDecodeError, match="codec"):
        decode_entries(request_for([[user]]), keyvalue(user), "org.apache.hadoop.hbase.codec.MessageCodec")


def test_sink_answers_only_replicate_wal_entry_and_acks_after_the_callback() -> None:
    seen: list[list[WalEntry]] = []

    def callback(entries: list[WalEntry]) -> None:
        if entries[0].sequence_id == 13:
            raise RuntimeError("NEW refused the write")
        seen.append(entries)

    sink = ReplicationSink(callback).start()
    try:
        conn = RpcConnection(sink.host, sink.port, "AdminService", timeout=10, cell_blocks=True)
        try:
            with pytest.raises(ServerError, match="answers ReplicateWALEntry only, not GetServerInfo"):
                conn.call("GetServerInfo", Admin_pb2.GetServerInfoRequest(), Admin_pb2.GetServerInfoResponse)
            # keyshape's client sends no cell block, so only entries without cells go this way
            empty = request_for([[]])
            assert conn.call("ReplicateWALEntry", empty, Admin_pb2.ReplicateWALEntryResponse) == Admin_pb2.ReplicateWALEntryResponse()
            assert [e.sequence_id for batch in seen for e in batch] == [1]
            empty.entry[0].key.log_sequence_number = 13
            with pytest.raises(ServerError, match="did not apply the batch: RuntimeError: NEW refused the write") as refused:
                conn.call("ReplicateWALEntry", empty, Admin_pb2.ReplicateWALEntryResponse)
            assert refused.value.class_name == "java.io.IOException"  # retried by the source, not dropped
            assert (sink.batches, sink.rejected) == (1, 1)
        finally:
            conn.close()
        assert sink.connection_headers[0].cell_block_codec_class == PLAIN
    finally:
        sink.stop()


def test_sink_refuses_kerberos_with_one_fatal_answer() -> None:
    sink = ReplicationSink(lambda entries: None).start()
    try:
        with socket.create_connection((sink.host, sink.port), timeout=10) as sock:
            sock.sendall(b"HBas\x00\x51")  # version 0, auth 81 = KERBEROS
            size = struct.unpack(">I", sock.recv(4))[0]
            data = b""
            while len(data) < size:
                data += sock.recv(size - len(data))
            head_len, pos = _read_varint(data, 0)
            header = RPC_pb2.ResponseHeader.FromString(data[pos : pos + head_len])
            assert header.exception.exception_class_name == "org.apache.hadoop.hbase.ipc.FatalConnectionException"
            assert "SIMPLE authentication only" in header.exception.stack_trace
            assert sock.recv(1) == b""  # and closed
    finally:
        sink.stop()


def test_replicated_cells_become_mutations_per_run_of_row_and_kind() -> None:
    from hbasedriver.protobuf_py import Client_pb2

    from keyshape.store.hbase.walapply import mutations_of

    MP = Client_pb2.MutationProto
    put = WalCell(b"r", b"cf", b"a", 5, CellType.PUT, b"v")
    kinds = [CellType.DELETE, CellType.DELETE_COLUMN, CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION]
    deletes = [WalCell(b"r", b"cf", b"a" if k in (CellType.DELETE, CellType.DELETE_COLUMN) else b"", 6, k, b"") for k in kinds]
    mutations = mutations_of([(b"r", [put, *deletes, put]), (b"s", [put])])
    assert [(m.row, m.mutate_type) for m in mutations] == [(b"r", MP.PUT), (b"r", MP.DELETE), (b"r", MP.PUT), (b"s", MP.PUT)]
    qvs = mutations[1].column_value[0].qualifier_value
    assert [(q.qualifier, q.timestamp, q.delete_type) for q in qvs] == [
        (b"a", 6, MP.DELETE_ONE_VERSION),
        (b"a", 6, MP.DELETE_MULTIPLE_VERSIONS),
        (b"", 6, MP.DELETE_FAMILY),
        (b"", 6, MP.DELETE_FAMILY_VERSION),
    ]
    # puts go as wire.put_mutation bytes: the cell's timestamp is the mutation's
    assert [(q.qualifier, q.value) for q in mutations[0].column_value[0].qualifier_value] == [(b"a", b"v")] and mutations[0].timestamp == 5


def test_replicated_puts_group_by_row_and_timestamp_and_a_later_cell_of_a_column_wins() -> None:
    from keyshape.store.hbase.walapply import mutations_of

    def put(q: bytes, ts: int, v: bytes, family: bytes = b"cf") -> WalCell:
        return WalCell(b"r", family, q, ts, CellType.PUT, v)

    cells = [put(b"a", 5, b"1"), put(b"b", 5, b"2"), put(b"a", 5, b"3"), put(b"x:y", 5, b"4", b"m"), put(b"a", 6, b"5"), put(b"a", 5, b"6")]
    got = [
        (m.timestamp, [(cv.family, q.qualifier, q.value) for cv in m.column_value for q in cv.qualifier_value]) for m in mutations_of([(b"r", cells)])
    ]
    assert got == [
        (5, [(b"cf", b"a", b"3"), (b"cf", b"b", b"2"), (b"m", b"x:y", b"4")]),
        (6, [(b"cf", b"a", b"5")]),
        (5, [(b"cf", b"a", b"6")]),
    ]
