"""The standalone HBase from tools/hbase really works, through the hbase-driver native client.

The `hbase`-marked test needs Java + Maven (or KEYSHAPE_HBASE_URL); the others run anywhere.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import standalone as sa
from hbase_fixture import HBaseHandle


def _family(name: bytes, **attrs: bytes):
    """A ColumnFamilySchema with HBase's own attribute keys (VERSIONS, BLOOMFILTER, ...).

    hbase-driver's ColumnFamilyDescriptorBuilder writes lower-case keys that HBase ignores,
    so the protobuf is built directly (see tools/hbase/CLIENTS.md).
    """
    from hbasedriver.protobuf_py.HBase_pb2 import BytesBytesPair, ColumnFamilySchema

    return ColumnFamilySchema(name=name, attributes=[BytesBytesPair(first=k.encode(), second=v) for k, v in attrs.items()])


def _regions_from_meta(client, full_name: bytes) -> list[tuple[bytes, bytes]]:
    """(start, end) of every region of a table, read from hbase:meta in key order."""
    from hbasedriver.protobuf_py.Client_pb2 import Column, ScanRequest
    from hbasedriver.region import Region

    rq = ScanRequest()
    # Same bounds as HBase's MetaTableAccessor.getTableStartRowForMeta/getTableStopRowForMeta.
    rq.scan.start_row = full_name + b",,"
    rq.scan.stop_row = full_name + b" ,,"
    rq.scan.column.append(Column(family=b"info"))
    rq.number_of_rows = 10_000
    rq.close_scanner = True
    rq.region.type = 1
    rq.region.value = b"hbase:meta,,1"
    resp = client.meta_conn.send_request(rq, "Scan")
    regions = [Region.from_cells(r.cell).region_info for r in resp.results]
    return [(r.start_key, r.end_key) for r in regions]


@pytest.mark.hbase
def test_round_trip_pre_split_table_with_family_options(hbase: HBaseHandle) -> None:
    from hbasedriver.client.client import Client
    from hbasedriver.operations.get import Get
    from hbasedriver.operations.put import Put
    from hbasedriver.table_name import TableName

    name = f"smoke_{uuid.uuid4().hex[:8]}".encode()
    splits = [b"\x10", b"\x20", b"m"]
    client = Client({"hbase.zookeeper.quorum": hbase.url})
    admin = client.get_admin()
    tn = TableName.value_of(b"default", name)
    try:
        admin.create_table(
            tn,
            [
                _family(
                    b"f",
                    VERSIONS=b"3",
                    COMPRESSION=b"NONE",
                    BLOOMFILTER=b"ROWCOL",
                    BLOCKSIZE=b"16384",
                    TTL=b"86400",
                    DATA_BLOCK_ENCODING=b"FAST_DIFF",
                )
            ],
            split_keys=splits,
        )
        # The cluster, not our request, is the witness: regions and family options read back.
        assert _regions_from_meta(client, name) == [(b"", b"\x10"), (b"\x10", b"\x20"), (b"\x20", b"m"), (b"m", b"")]
        family = admin.describe_table(tn).table_schema[0].column_families[0]
        attrs = {p.first: p.second for p in family.attributes}
        assert (attrs[b"VERSIONS"], attrs[b"BLOOMFILTER"], attrs[b"BLOCKSIZE"], attrs[b"TTL"], attrs[b"DATA_BLOCK_ENCODING"]) == (
            b"3",
            b"ROWCOL",
            b"16384",
            b"86400",
            b"FAST_DIFF",
        )

        table = client.get_table(b"default", name)
        try:
            # Rows inside regions (not on a boundary: hbase-driver mis-routes a row equal to a
            # split key, see CLIENTS.md).
            for row in (b"\x05", b"\x15", b"a", b"z"):
                table.put(Put(row).add_column(b"f", b"q", b"v" + row))
            for row in (b"\x05", b"\x15", b"a", b"z"):
                got = table.get(Get(row))
                assert got is not None and got.get(b"f", b"q") == b"v" + row
            assert table.get(Get(b"absent")) is None
        finally:
            table.close()
    finally:
        if admin.table_exists(tn):
            admin.disable_table(tn)
            admin.delete_table(tn)
        sa.close_client(client)


def test_start_failure_names_the_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing JDK fails at step 'java' with a fix in the message (no Java needed to run this)."""
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    with pytest.raises(sa.StartFailed) as err:
        sa.Standalone(run_dir=tmp_path / "run").java()
    assert err.value.step == "java"
    assert "step 'java' failed" in str(err.value) and "JAVA_HOME" in str(err.value)


def test_config_binds_loopback_and_uses_the_chosen_ports(tmp_path: Path) -> None:
    inst = sa.Standalone(run_dir=tmp_path / "run", zk_port=12181, master_port=12000, rs_port=12020, thrift_port=19090)
    inst.write_config()
    site = (tmp_path / "run" / "conf" / "hbase-site.xml").read_text()
    for key, value in [
        ("hbase.zookeeper.property.clientPort", "12181"),
        ("hbase.master.port", "12000"),
        ("hbase.regionserver.port", "12020"),
        ("hbase.master.ipc.address", "127.0.0.1"),
        ("hbase.regionserver.ipc.address", "127.0.0.1"),
        ("hbase.cluster.distributed", "false"),
        ("hbase.rootdir", f"file://{tmp_path / 'run' / 'data'}/hbase"),
    ]:
        assert f"<name>{key}</name><value>{value}</value>" in site
    assert inst.url == "127.0.0.1:12181"
