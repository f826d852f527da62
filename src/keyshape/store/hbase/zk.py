"""ZooKeeper lookup: where the active master and hbase:meta are (their znodes under
``zookeeper.znode.parent``), with kazoo's chatter kept off the console.
"""

from __future__ import annotations

import logging
import struct
import os
import time
import uuid
from typing import Literal, TypeVar

from google.protobuf.message import Message
from hbasedriver.protobuf_py import ClusterId_pb2, HBase_pb2, ZooKeeper_pb2
from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError, NodeExistsError

from keyshape.errors import StoreError

__all__ = ["quiet_driver_logs", "locate_master_and_meta", "register_peer_cluster", "unregister_peer_cluster", "hbaseid_payload"]

M = TypeVar("M", bound=Message)


def quiet_driver_logs() -> None:
    """Keep kazoo's and hbase-driver's connection chatter off the console; keyshape reports
    failures itself as one StoreError line."""
    for name in ("kazoo", "kazoo.client", "kazoo.protocol.connection", "pybase", "hbasedriver"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # hbasedriver.zk sets its own logger to DEBUG at import time.
    logging.getLogger("pybase.hbasedriver.zk").setLevel(logging.CRITICAL)


def _znode_message(data: bytes, message: type[M]) -> M:
    """Parse an HBase znode: 0xff, a 4-byte id length, the id, b"PBUF", then the protobuf."""
    if len(data) < 5 or data[:1] != b"\xff":
        raise StoreError(f"not an HBase znode payload: {data[:16]!r}")
    body = data[5 + struct.unpack(">I", data[1:5])[0] :]
    if body[:4] != b"PBUF":
        raise StoreError("HBase znode payload lacks the PBUF magic")
    return message.FromString(body[4:])


def locate_master_and_meta(
    quorum: str, connect_timeout: float, missing_retries: int = 5, parent: str = "/hbase"
) -> tuple[HBase_pb2.ServerName, HBase_pb2.ServerName]:
    """The active master's and hbase:meta's ServerName, read from ZooKeeper ``parent``; a missing
    znode (HBase starting) is retried ``missing_retries`` times, a second apart.

    Replaces hbase-driver's ``locate_master``/``locate_meta_region``, which leave their
    KazooClient running when they raise: the orphaned connection thread then pings (and draws from
    the global ``random`` module, breaking seeded callers such as Hypothesis) until the process
    exits. Here the client is always stopped and closed.
    """
    client = KazooClient(hosts=quorum, timeout=10)
    try:
        client.start(timeout=connect_timeout)
        found: list[HBase_pb2.ServerName] = []
        for path, message in ((f"{parent}/master", ZooKeeper_pb2.Master), (f"{parent}/meta-region-server", ZooKeeper_pb2.MetaRegionServer)):
            for attempt in range(missing_retries + 1):
                try:
                    data, _ = client.get(path)
                    break
                except NoNodeError:
                    if attempt == missing_retries:
                        raise StoreError(f"znode {path} does not exist") from None
                    time.sleep(1)
            parsed = _znode_message(data, message)
            if isinstance(parsed, ZooKeeper_pb2.Master):
                found.append(parsed.master)
            elif isinstance(parsed, ZooKeeper_pb2.MetaRegionServer):
                found.append(parsed.server)
        return found[0], found[1]
    finally:
        client.stop()
        client.close()


def hbaseid_payload(cluster_id: uuid.UUID, form: Literal["master", "plain"] = "master") -> bytes:
    """The data of ``<parent>/hbaseid``. "master": as an HBase master writes it, RecoverableZooKeeper's
    header (0xff, a 4-byte id length, the writer's id) then ``PBUF`` + ``ClusterId``; "plain": the
    UUID as text (what NGData's SEP and the Flink prototype write). Readers strip the header and
    accept either body (``ClusterId.parseFrom``)."""
    if form == "plain":
        return str(cluster_id).encode()
    ident = b"keyshape-sink" + os.urandom(8)  # RecoverableZooKeeper appends 8 random bytes too
    body = b"PBUF" + ClusterId_pb2.ClusterId(cluster_id=str(cluster_id)).SerializeToString()
    return b"\xff" + struct.pack(">I", len(ident)) + ident + body


def register_peer_cluster(
    quorum: str, parent: str, cluster_id: uuid.UUID, server: str, form: Literal["master", "plain"] = "master", connect_timeout: float = 10.0
) -> KazooClient:
    """Make ``parent`` in ZooKeeper ``quorum`` look like a peer cluster with one region server:
    ``parent/hbaseid`` (``cluster_id``, see :func:`hbaseid_payload`), ``parent/rs`` and the
    EPHEMERAL ``parent/rs/<server>`` (``host,port,startcode``: replication sources read only the
    child's name). Returns the session holding the ephemeral node; :func:`unregister_peer_cluster`
    removes it all. A ``parent`` already holding an hbaseid is refused (another sink's, or
    HBase's own)."""
    if not parent.startswith("/") or parent.endswith("/") or parent in ("/", "/hbase", "/zookeeper"):
        raise StoreError(f"bad znode parent {parent!r} for a replication sink: use an absolute path of its own, e.g. /keyshape-sink-1")
    client = KazooClient(hosts=quorum, timeout=10)
    try:
        client.start(timeout=connect_timeout)
        client.ensure_path(f"{parent}/rs")
        try:
            client.create(f"{parent}/hbaseid", hbaseid_payload(cluster_id, form))
        except NodeExistsError:
            raise StoreError(f"znode {parent}/hbaseid exists: another sink (or HBase) uses {parent}; stop it or choose another parent") from None
        client.create(f"{parent}/rs/{server}", b"", ephemeral=True)
    except BaseException:
        client.stop()
        client.close()
        raise
    return client


def unregister_peer_cluster(client: KazooClient, parent: str) -> None:
    """Delete ``parent`` and everything under it, then end the session (which would drop the
    ephemeral server node anyway)."""
    try:
        client.delete(parent, recursive=True)
    except NoNodeError:
        pass
    except KazooException:
        pass  # the session is going away; the ephemeral node goes with it, the rest is left
    finally:
        client.stop()
        client.close()
