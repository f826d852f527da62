"""The user keyshape acts as on HBase (RPC ConnectionHeader.user_info.effective_user), and the one
error a cluster that requires SASL (Kerberos) gets.

The user check reads the OWNER the real master records for a procedure the store started
(MasterService.GetProcedures): that owner is the request user HBase takes from the connection
header, the identity its ACLs are checked against.
"""

from __future__ import annotations

import socket
import struct
import threading
import uuid
from typing import Any

import pytest
from google.protobuf.internal import encoder as _encoder
from hbasedriver.protobuf_py import Master_pb2, RPC_pb2

from keyshape.store.hbase import HBaseStore
from keyshape.store.hbase.rpc import AuthenticationRequired, RpcConnection, effective_user


def test_effective_user_prefers_option_then_hadoop_user_name_then_login(monkeypatch):
    monkeypatch.setenv("HADOOP_USER_NAME", "hadoop-env")
    assert effective_user("alice") == "alice"
    assert effective_user(None) == "hadoop-env"
    monkeypatch.delenv("HADOOP_USER_NAME")
    monkeypatch.setenv("LOGNAME", "login-name")  # getpass.getuser() reads LOGNAME first
    assert effective_user(None) == "login-name"


def _procedures_of(store: HBaseStore, user: str) -> list[str]:
    """Class names of the procedures the master recorded with ``user`` as their owner."""
    resp = store.cluster.master_call("GetProcedures", Master_pb2.GetProceduresRequest(), Master_pb2.GetProceduresResponse)
    return [p.class_name for p in resp.procedure if p.owner == user]


@pytest.mark.hbase
def test_requests_carry_the_chosen_user(hbase: Any, monkeypatch):
    monkeypatch.setenv("HADOOP_USER_NAME", "not-this-one")
    user = f"ks-user-{uuid.uuid4().hex[:8]}"
    namespace = f"ksuser{uuid.uuid4().hex[:8]}"
    store = HBaseStore.from_url(hbase.url, user=user)
    try:
        assert store.user == user
        store.create_namespace(namespace)
        store.delete_namespace(namespace)
        names = _procedures_of(store, user)
        assert any("CreateNamespaceProcedure" in n for n in names), names
        assert any("DeleteNamespaceProcedure" in n for n in names), names
    finally:
        store.close()


def _refusing_server() -> tuple[socket.socket, threading.Thread]:
    """A socket that answers like HBase's RpcServer on a Kerberized cluster answers a SIMPLE
    preamble (ServerRpcConnection.processPreamble): one error response for call id -1 carrying
    AccessDeniedException("Authentication is required"), then it closes the connection."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.recv(6)  # "HBas", version, auth byte
            header = RPC_pb2.ResponseHeader(call_id=0xFFFFFFFF)  # Java int -1 as the uint32 field
            header.exception.exception_class_name = "org.apache.hadoop.hbase.security.AccessDeniedException"
            header.exception.stack_trace = "org.apache.hadoop.hbase.security.AccessDeniedException: Authentication is required\n\tat ..."
            head = header.SerializeToString()
            frame = _encoder._VarintBytes(len(head)) + head  # delimited, as writeDelimitedTo
            conn.sendall(struct.pack(">I", len(frame)) + frame)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return srv, t


def test_a_server_that_requires_sasl_gets_one_clear_error_not_a_hang():
    srv, t = _refusing_server()
    try:
        conn = RpcConnection("127.0.0.1", srv.getsockname()[1], "ClientService", timeout=5.0, user="bob")
        t.join(5)
        with pytest.raises(AuthenticationRequired, match=r"requires SASL \(Kerberos\).*SIMPLE"):
            conn.call("Get", Master_pb2.GetProceduresRequest(), Master_pb2.GetProceduresResponse)
    finally:
        srv.close()
