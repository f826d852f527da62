"""keyshape's replication sink on a real HBase (issue 32): registered as a peer cluster in the
cluster's own ZooKeeper and added as a peer limited to one table, it receives exactly the cells
written to that table's scoped family (Put, Delete, DeleteColumn, DeleteFamily,
DeleteFamilyVersion, with their timestamps), in order per region; a batch its callback rejects is
shipped again by HBase (at least once); its znodes are gone after stop."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hbasedriver.protobuf_py import Client_pb2, ClusterId_pb2
from kazoo.client import KazooClient

from keyshape.schema import FamilySpec, TableSpec
from keyshape.store.hbase import HBaseStore
from keyshape.store.hbase.sink import RunningSink
from keyshape.store.hbase.walapply import apply_cells
from keyshape.store.hbase.walentry import CellType, WalCell, WalEntry

pytestmark = pytest.mark.hbase

MP = Client_pb2.MutationProto
Cell = tuple[bytes, bytes, bytes, int, str, bytes]  # row, family, qualifier, timestamp, type, value


class Recorder:
    """The sink's callback: keeps every batch it acknowledged, and rejects (once) the first batch
    that holds a cell of row ``reject``."""

    def __init__(self, reject: bytes) -> None:
        self.accepted: list[list[WalEntry]] = []
        self.refused: list[list[WalEntry]] = []
        self.reject = reject
        self.lock = threading.Lock()

    def __call__(self, entries: list[WalEntry]) -> None:
        with self.lock:
            if not self.refused and any(c.row == self.reject for e in entries for c in e.cells):
                self.refused.append(entries)
                raise RuntimeError("rejected once on purpose")
            self.accepted.append(entries)

    def entries(self) -> list[WalEntry]:
        with self.lock:
            return [e for batch in self.accepted for e in batch]


def _cells(entries: list[WalEntry]) -> list[Cell]:
    return [(c.row, c.family, c.qualifier, c.timestamp, c.type.name, c.value) for e in entries for c in e.cells]


def _source_cluster_id(quorum: str) -> uuid.UUID:
    zk = KazooClient(hosts=quorum)
    zk.start(timeout=10)
    try:
        data, _ = zk.get("/hbase/hbaseid")
    finally:
        zk.stop()
        zk.close()
    return uuid.UUID(ClusterId_pb2.ClusterId.FromString(data[data.index(b"PBUF") + 4 :]).cluster_id)


def _delete(store: HBaseStore, table: str, row: bytes, kind: Any, qualifier: bytes, timestamp: int | None) -> None:
    """A delete of a kind keyshape's writer does not send (one version; a family version)."""
    qv = MP.ColumnValue.QualifierValue(qualifier=qualifier, delete_type=kind)
    if timestamp is not None:
        qv.timestamp = timestamp
    store._mutate(table, MP(row=row, mutate_type=MP.DELETE, column_value=[MP.ColumnValue(family=b"cf", qualifier_value=[qv])]), "delete")


@pytest.fixture
def table(hbase_store: HBaseStore) -> Iterator[str]:
    name = f"ksr_sink_{uuid.uuid4().hex[:10]}"
    hbase_store.create_table(TableSpec(name, families=[FamilySpec("cf"), FamilySpec("nr")]))
    try:
        yield name
    finally:
        hbase_store.delete_table(name)


# HBase reads <parent>/hbaseid with RecoverableZooKeeper's header stripped and ClusterId.parseFrom:
# the form a master writes (header + PBUF + ClusterId) and a plain UUID string both work.
@pytest.mark.parametrize("hbaseid_form", ["master", "plain"])
def test_sink_receives_every_kind_of_cell_in_order_and_a_rejected_batch_again(
    hbase: Any, hbase_store: HBaseStore, table: str, hbaseid_form: Any
) -> None:
    store = hbase_store
    store.set_replication_scope(table, ["cf"])  # nr keeps scope 0: its cells must never arrive
    assert store.describe_table(table)["cf"]["REPLICATION_SCOPE"] == "1"
    assert store.describe_table(table)["nr"]["REPLICATION_SCOPE"] == "0"
    recorder = Recorder(reject=b"r7")
    peer = "ksr" + uuid.uuid4().hex[:12]
    parent = f"/keyshape-sink-{peer}"
    now_ms = lambda: int(time.time() * 1000)  # noqa: E731
    with RunningSink(recorder, hbase.url, parent, hbaseid_form=hbaseid_form) as running:
        try:
            store.add_replication_peer(peer, running.cluster_key, {table: []})
            assert store.replication_peers()[peer] == running.cluster_key
            expected: list[Cell] = []
            server_stamped: list[int] = []  # indexes in expected whose timestamp the server chose
            windows: list[tuple[int, int]] = []
            with store.writer(table, in_flight=1) as writer:

                def step(write: Any, cells: list[Cell], stamped: bool = False) -> None:
                    before = now_ms()
                    write()
                    writer.flush()
                    if stamped:
                        server_stamped.extend(range(len(expected), len(expected) + len(cells)))
                        windows.extend([(before, now_ms())] * len(cells))
                    expected.extend(cells)

                step(lambda: writer.put(b"r1", {b"cf:a": b"v1", b"cf:b": b"w1", b"nr:x": b"unscoped"}, 1000), [
                    (b"r1", b"cf", b"a", 1000, "PUT", b"v1"), (b"r1", b"cf", b"b", 1000, "PUT", b"w1")])  # fmt: skip
                step(lambda: writer.put(b"r1", {b"cf:a": b"v2"}, 2000), [(b"r1", b"cf", b"a", 2000, "PUT", b"v2")])
                # Delete of one version at an exact timestamp
                step(lambda: _delete(store, table, b"r1", MP.DELETE_ONE_VERSION, b"a", 1000), [(b"r1", b"cf", b"a", 1000, "DELETE", b"")])
                # Delete of the latest version without a timestamp: the WAL carries the hidden cell's
                # timestamp (HRegion.updateDeleteLatestVersionTimestamp)
                step(lambda: _delete(store, table, b"r1", MP.DELETE_ONE_VERSION, b"b", None), [(b"r1", b"cf", b"b", 1000, "DELETE", b"")])
                step(lambda: writer.put(b"r2", {b"cf:a": b"x"}, 1500), [(b"r2", b"cf", b"a", 1500, "PUT", b"x")])
                step(lambda: writer.delete(b"r2", [b"cf:a"]), [(b"r2", b"cf", b"a", 0, "DELETE_COLUMN", b"")], stamped=True)
                step(lambda: writer.delete(b"r3", [b"cf"]), [(b"r3", b"cf", b"", 0, "DELETE_FAMILY", b"")], stamped=True)
                # a whole-row delete reaches the WAL as one DeleteFamily per family (nr's is unscoped)
                step(lambda: writer.delete(b"r4"), [(b"r4", b"cf", b"", 0, "DELETE_FAMILY", b"")], stamped=True)
                step(
                    lambda: _delete(store, table, b"r5", MP.DELETE_FAMILY_VERSION, b"", 3000),
                    [(b"r5", b"cf", b"", 3000, "DELETE_FAMILY_VERSION", b"")],
                )
                # an Increment reaches the WAL as the resulting Put
                step(lambda: store.increment(table, b"r6", b"cf:n", 5), [(b"r6", b"cf", b"n", 0, "PUT", (5).to_bytes(8, "big"))], stamped=True)
                step(lambda: writer.put(b"r7", {b"cf:a": b"refused once"}, 4000), [(b"r7", b"cf", b"a", 4000, "PUT", b"refused once")])
                step(lambda: writer.put(b"r8", {b"cf:a": b"last"}, 5000), [(b"r8", b"cf", b"a", 5000, "PUT", b"last")])

            deadline = time.monotonic() + 40
            while (b"r8", b"cf", b"a", 5000, "PUT", b"last") not in _cells(recorder.entries()):
                assert time.monotonic() < deadline, f"the sink got {_cells(recorder.entries())} but not the last put within 40 s"
                time.sleep(0.1)
        finally:
            store.remove_replication_peer(peer)
        assert peer not in store.replication_peers()

    entries = recorder.entries()
    region = store.regions(table)[0].name
    encoded = region.rstrip(".").rsplit(".", 1)[-1].encode() if isinstance(region, str) else region.rstrip(b".").rsplit(b".", 1)[-1]
    assert {e.table for e in entries} == {table}
    assert {e.encoded_region for e in entries} == {encoded}
    source = _source_cluster_id(hbase.url)
    assert all(source in e.cluster_ids for e in entries), "the source marks every entry with its cluster id"

    # At least once: keep the first copy of each cell; what is left is exactly what was written.
    seen: set[Cell] = set()
    got: list[Cell] = []
    sequence: list[int] = []
    for entry in entries:
        for cell in _cells([entry]):
            if cell not in seen:
                seen.add(cell)
                got.append(cell)
                sequence.append(entry.sequence_id)
    for i, (low, high) in zip(server_stamped, windows):
        row, family, qualifier, ts, kind, value = got[i]
        assert low - 1000 <= ts <= high + 1000, f"{got[i]}: server timestamp outside the write's window {low}..{high}"
        got[i] = (row, family, qualifier, 0, kind, value)
    assert got == expected
    assert sequence == sorted(sequence), "entries of one region arrive in sequence id order"
    assert {c.type for e in entries for c in e.cells} == set(CellType)

    # The refused batch came back: every cell of it was acknowledged later.
    assert len(recorder.refused) == 1 and running.sink.rejected >= 1
    assert set(_cells(recorder.refused[0])) <= set(_cells(entries))
    zk = KazooClient(hosts=hbase.url)
    zk.start(timeout=10)
    try:
        assert zk.exists(parent) is None, "stop removes the sink's znodes"
    finally:
        zk.stop()
        zk.close()


def test_hbase_refuses_table_cfs_unless_replicate_all_is_false_and_dashes_in_peer_ids(hbase: Any, hbase_store: HBaseStore, table: str) -> None:
    """Pins two master-side checks (ReplicationPeerManager): an absent ``replicate_all`` means
    true, which refuses table_cfs; a peer id may not contain '-'. Neither adds a peer."""
    from hbasedriver.protobuf_py import HBase_pb2, Replication_pb2

    from keyshape.store.hbase.errors import ServerError

    def add(peer_id: str, replicate_all: bool | None) -> None:
        # the session HBase's own ZooKeeper (free ports under the test fixture, not 2181), a parent no sink uses
        peer = Replication_pb2.ReplicationPeer(clusterkey=f"{hbase.url}:/keyshape-sink-never")
        if replicate_all is not None:
            peer.replicate_all = replicate_all
        peer.table_cfs.add(table_name=HBase_pb2.TableName(namespace=b"default", qualifier=table.encode()))
        state = Replication_pb2.ReplicationState(state=Replication_pb2.ReplicationState.DISABLED)
        request = Replication_pb2.AddReplicationPeerRequest(peer_id=peer_id, peer_config=peer, peer_state=state)
        hbase_store.cluster.master_call("AddReplicationPeer", request, Replication_pb2.AddReplicationPeerResponse)

    ids = ["ksr" + uuid.uuid4().hex[:12], "ksr-" + uuid.uuid4().hex[:12]]
    with pytest.raises(ServerError, match="Need clean namespaces or table-cfs config firstly"):
        add(ids[0], None)
    with pytest.raises(ServerError, match="Found invalid peer name: ksr-"):
        add(ids[1], False)
    assert not set(ids) & set(hbase_store.replication_peers())


def test_a_batch_applied_through_a_region_map_a_split_made_stale_lands_whole(hbase: Any, hbase_store: HBaseStore) -> None:
    """The sink's apply path (walapply.apply_cells, as ReKeyer calls it) with a split between its
    region lookup and its Multi: the applying store's cached map still names the parent, so every
    round of the batch first meets NotServingRegionException and goes again to the daughters.
    When apply_cells returns (the sink acknowledges only then) every cell of the batch is in the
    table: each row's put, the delete that masks it and the put after, across both daughters."""
    name = f"ksr_stale_{uuid.uuid4().hex[:10]}"
    hbase_store.create_table(TableSpec(name, families=[FamilySpec("d", versions=3), FamilySpec("m")]))
    applier = HBaseStore.from_url(hbase.url)
    try:
        put, delete = CellType.PUT, CellType.DELETE_COLUMN
        apply_cells(applier, name, [(b"r000", [WalCell(b"r000", b"d", b"v", 1000, put, b"first")])])  # caches the one region
        hbase_store.split_region(name, b"r020")
        rows = [
            (
                row,
                [
                    WalCell(row, b"d", b"v", 2000, put, b"old"),
                    WalCell(row, b"m", b"tag", 2000, put, b"t0"),
                    WalCell(row, b"d", b"v", 2001, delete, b""),
                    WalCell(row, b"d", b"v", 2002, put, b"new"),
                    WalCell(row, b"d", b"q", 2002, put, b"x"),
                    WalCell(row, b"m", b"tag", 2002, put, b"t2"),
                ],
            )
            for row in (b"r%03d" % i for i in range(40))
        ]
        retried = applier.retry_count
        assert apply_cells(applier, name, rows) == 3 * 40  # three mutations a row: three rounds
        assert applier.retry_count > retried, "the stale map never met the split"
        expected = {b"d:v": [(2002, b"new")], b"d:q": [(2002, b"x")], b"m:tag": [(2002, b"t2")]}
        got = dict(hbase_store.scan_versions(name))
        assert len(got) == 40 and all(columns == expected for columns in got.values()), got
        assert len({r.name for r in hbase_store.regions(name)}) == 2
    finally:
        applier.close()
        hbase_store.delete_table(name)
