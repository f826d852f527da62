"""ZooKeeper lookup: where the active master and hbase:meta are (their znodes under
``zookeeper.znode.parent``), with kazoo's chatter kept off the console.
"""

from __future__ import annotations

import logging
import struct
import time
from typing import TypeVar

from google.protobuf.message import Message
from hbasedriver.protobuf_py import HBase_pb2, ZooKeeper_pb2
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from keyshape.errors import StoreError

__all__ = ["quiet_driver_logs", "locate_master_and_meta"]

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
