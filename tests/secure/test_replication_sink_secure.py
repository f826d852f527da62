"""keyshape's replication sink on a Kerberized HBase (issue 32), against a real MIT KDC and a
secured standalone HBase (tools/hbase/secure.py: Kerberos offering privacy, integrity and
authentication; authorization on).

What the peer connection needs, as run here: the source region server logs in with SASL GSSAPI
as ITS OWN principal (hbase/localhost@EXAMPLE.COM) to the server principal it derives from
``hbase.regionserver.kerberos.principal`` (hbase/_HOST@EXAMPLE.COM) with _HOST = the host of the
sink's registered server name ("localhost"); so the sink accepts with that principal's keytab,
checks the client's principal, offers the protection layers and unwraps the one the source picks.
Adding the peer needs ADMIN (the server principal, HBase's superuser, here). The sink's znodes
live in the cluster's ZooKeeper under their own parent (this ZooKeeper has open ACLs).

Cost: seconds on top of the session's secured HBase (tests/secure_fixture.py), which the other
secure tests start anyway.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest
import secure  # tools/hbase/secure.py

from keyshape.schema import FamilySpec, TableSpec
from keyshape.store import open_store
from keyshape.store.hbase.sink import KerberosAcceptor, RunningSink
from keyshape.store.hbase.walentry import WalEntry

pytestmark = [pytest.mark.hbase, pytest.mark.secure]


@pytest.fixture
def secured(secure_hbase: Any) -> Any:
    """The session's secured instance offering all three protection levels (tests/secure_fixture.py)."""
    return secure_hbase.full


def test_a_kerberized_source_replicates_to_the_sink_over_sasl_gssapi(secured: Any) -> None:
    admin = open_store(secured.admin_url())
    table = f"ksr_sec_{uuid.uuid4().hex[:8]}"
    peer = "ksr" + uuid.uuid4().hex[:12]
    got: list[WalEntry] = []
    lock = threading.Lock()

    def on_batch(entries: list[WalEntry]) -> None:
        with lock:
            got.extend(entries)

    acceptor = KerberosAcceptor(secure.SERVER_PRINCIPAL, str(secured.kdc.keytab(secure.SERVER_PRINCIPAL)))
    try:
        admin.create_table(TableSpec(table, families=[FamilySpec("cf")]))
        admin.set_replication_scope(table, ["cf"])
        with RunningSink(on_batch, secured.url, f"/keyshape-sink-{peer}", host="localhost", kerberos=acceptor) as running:
            admin.add_replication_peer(peer, running.cluster_key, {table: []})
            try:
                admin.put(table, b"r1", {b"cf:a": b"secret"}, 1000)
                admin.put(table, b"r2", {b"cf:a": b"last"}, 2000)
                deadline = time.monotonic() + 60
                while not any(c.row == b"r2" for e in list(got) for c in e.cells):
                    assert time.monotonic() < deadline, (
                        f"nothing replicated within 60 s; logins {running.sink.authenticated}, refused {running.sink.rejected}"
                    )
                    time.sleep(0.2)
            finally:
                admin.remove_replication_peer(peer)
        cells = {(c.row, c.qualifier, c.timestamp, c.value) for e in got for c in e.cells}
        assert {(b"r1", b"a", 1000, b"secret"), (b"r2", b"a", 2000, b"last")} <= cells
        # the source logged in as its own principal and picked one of the offered layers
        assert running.sink.authenticated and all(p.startswith("hbase/localhost@") for p in running.sink.authenticated)
        assert set(acceptor.chosen) <= {"authentication", "integrity", "privacy"} and acceptor.chosen
        print(f"\nsource logged in as {running.sink.authenticated[0]}; layers chosen: {acceptor.chosen}")
    finally:
        try:
            admin.delete_table(table)
        finally:
            admin.close()
