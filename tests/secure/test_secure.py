"""Secure clusters, against a real MIT KDC and real secured HBase instances (tests/secure_fixture.py):
Kerberos at every protection level, TLS alone and with Kerberos, access control, and every bad
input as one line within a bounded time."""

from __future__ import annotations

import os
import random
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from read_oracle import make_schema

from keyshape.read import get_many, scan
from keyshape.store import ensure_table, open_store
from keyshape.store.hbase.auth import Security, SecurityError, open_channel

pytestmark = [pytest.mark.hbase, pytest.mark.secure]

ROOT = Path(__file__).resolve().parents[2]
ROWS = 100_000
BIG = 3 << 20  # several MiB per big value, beyond any wrap token or socket buffer


def _load(store: Any, schema: Any, rows: int, big_every: int) -> dict[bytes, bytes]:
    """Write ``rows`` salted rows (every ``big_every``-th holds BIG random bytes); the rows written."""
    rnd = random.Random(rows)
    written: dict[bytes, bytes] = {}
    table = schema.table.full_name
    with store.writer(table, batch_size=5000, max_bytes=8 << 20) as w:
        for i in range(rows):
            user = chr(97 + i % 26) + chr(97 + i // 26 % 26)
            key = schema.encode({"u": user, "n": i})
            value = rnd.randbytes(BIG) if i % big_every == 7 else b"v%d" % i
            w.put(key, {b"d:v": value})
            written[key] = value
    return written


def _check_reads(store: Any, schema: Any, written: dict[bytes, bytes]) -> None:
    got = [(r.key, r.cells[b"d:v"]) for r in scan(store, schema, batch_size=2000)]
    want = sorted(written.items(), key=lambda kv: (schema.prefix.strip(kv[0]), kv[0]))
    assert len(got) == len(want)
    assert got == want
    keys = sorted(written)[::97] + [k for k, v in written.items() if len(v) == BIG]
    records = [schema.decode(k) for k in keys]
    rows = get_many(store, schema, records)
    assert [(r.key, r.cells[b"d:v"]) for r in rows] == [(k, written[k]) for k in keys]


def _channel(store: Any) -> Any:
    """The connection to the region server holding data (its Channel, for inspection)."""
    conns = [c for (host, port, service), c in store.cluster._pool.items() if service == "ClientService"]
    assert conns
    return conns[0]._sock


@pytest.mark.parametrize("protection", ["authentication", "integrity", "privacy"])
def test_protection_level_round_trip_of_100k_rows_with_big_values(secure_hbase: Any, protection: str) -> None:
    schema = make_schema("mod", 8, "_", False, name=f"sec_{protection}_{uuid.uuid4().hex[:8]}")
    store = open_store(secure_hbase.user_url("alice", protection=protection))
    try:
        ensure_table(store, schema.table, schema.split_keys(), verify=True)
        assert len(store.regions(schema.table.full_name)) == 8
        written = _load(store, schema, ROWS, big_every=40_000)
        assert sum(len(v) == BIG for v in written.values()) == 3
        _check_reads(store, schema, written)
        channel = _channel(store)
        assert channel.user == "alice@EXAMPLE.COM"
        # the security layer negotiated is the one asked for: wrapped (and sealed for privacy)
        assert (channel._context is not None) == (protection != "authentication")
        assert channel._encrypt == (protection == "privacy")
        store.delete_table(schema.table.full_name)
    finally:
        store.close()


def test_tls_with_kerberos_privacy(secure_hbase: Any) -> None:
    schema = make_schema("mod", 4, "_", False, name=f"sec_tlskrb_{uuid.uuid4().hex[:8]}")
    url = secure_hbase.user_url("alice", protection="privacy", tls="true", tls_ca=str(secure_hbase.full.tls_dir / "ca.pem"))
    store = open_store(url)
    try:
        ensure_table(store, schema.table, schema.split_keys())
        written = _load(store, schema, 5_000, big_every=4_000)
        _check_reads(store, schema, written)
        channel = _channel(store)
        assert isinstance(channel.sock, ssl.SSLSocket) and channel.sock.version() in ("TLSv1.2", "TLSv1.3")
        assert channel._encrypt
        store.delete_table(schema.table.full_name)
    finally:
        store.close()


def test_tls_alone_on_a_server_that_only_accepts_tls(secure_hbase: Any) -> None:
    inst = secure_hbase.tls_only
    schema = make_schema("mod", 4, "_", False, name=f"sec_tls_{uuid.uuid4().hex[:8]}")
    store = open_store(inst.secure_url(**inst.tls_params()))
    try:
        ensure_table(store, schema.table, schema.split_keys())
        written = _load(store, schema, 5_000, big_every=4_000)
        _check_reads(store, schema, written)
        channel = _channel(store)
        assert isinstance(channel.sock, ssl.SSLSocket) and channel.user is None
        store.delete_table(schema.table.full_name)
    finally:
        store.close()


def test_tls_only_server_with_kerberos(secure_hbase: Any) -> None:
    inst = secure_hbase.tls_only
    store = open_store(secure_hbase.user_url("bob", inst, **inst.tls_params()))
    try:
        assert isinstance(store.list_tables(), list)
        channel = store.cluster._pool[next(iter(store.cluster._pool))]._sock
        assert isinstance(channel.sock, ssl.SSLSocket) and channel.user == "bob@EXAMPLE.COM"
    finally:
        store.close()


def test_long_run_survives_ticket_expiry_with_a_keytab(secure_hbase: Any) -> None:
    """carol's tickets live 4 s: after they expired, open connections keep working and new ones
    (after a lost connection) authenticate again from the keytab, losing nothing."""
    admin = open_store(secure_hbase.full.admin_url())
    schema = make_schema("none", 1, "_", False, name=f"sec_renew_{uuid.uuid4().hex[:8]}")
    table = schema.table.full_name
    try:
        ensure_table(admin, schema.table)
        from keyshape.store.hbase.acl import grant

        # READ and WRITE only: HBase lets carol read and write but not describe the table
        grant(admin, "carol", "RW", table)
        store = open_store(secure_hbase.user_url("carol", protection="privacy"))
        try:
            # the region server learns the grant through ZooKeeper a moment after it is made
            _eventually(lambda: store.put(table, b"r0", {b"d:v": b"0"}))
            with store.writer(table) as w:
                w.put(b"r00", {b"d:v": b"00"})
            time.sleep(5)  # every ticket carol holds has expired now
            store.put(table, b"r1", {b"d:v": b"1"})  # the open connection stays authenticated
            store.cluster.relocate()  # as after a lost connection: new handshakes, new tickets
            store.put(table, b"r2", {b"d:v": b"2"})
            assert [k for k, _ in store.scan(table)] == [b"r0", b"r00", b"r1", b"r2"]
            assert _channel(store).user == "carol@EXAMPLE.COM"
        finally:
            store.close()
        admin.delete_table(table)
    finally:
        admin.close()


# --- access control ---------------------------------------------------------------------------


def _cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], float]:
    t = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout, env={**os.environ, **(env or {})}
    )
    return proc, time.monotonic() - t


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if not line.startswith("loading")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _schema_file(tmp_path: Path, table: str) -> Path:
    text = (ROOT / "examples" / "orders.toml").read_text()
    text = text.replace('name = "orders"', f'name = "{table}"').replace('namespace = "shop"', 'namespace = "default"')
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_alice_may_load_and_bob_is_denied_with_one_line_and_nothing_lost(secure_hbase: Any, tmp_path: Path) -> None:
    table = f"sec_acl_{uuid.uuid4().hex[:8]}"
    schema = _schema_file(tmp_path, table)
    proc, _ = _cli("load", str(schema), "--hbase", secure_hbase.user_url("alice"), "--rows", "3000", "--batch-size", "1000")
    assert proc.returncode == 0, proc.stderr
    assert "wrote 3,000 rows" in proc.stdout
    admin = open_store(secure_hbase.full.admin_url())
    try:
        from keyshape.store.hbase.acl import grant

        from keyshape.store.hbase.acl import PermissionDenied

        bob = open_store(secure_hbase.user_url("bob"))
        try:  # a refusal of one call (not of the connection) is a permission line
            with pytest.raises(PermissionDenied, match=r"bob@EXAMPLE.COM has no (CREATE|ADMIN) on table"):
                bob.describe_table(table)
        finally:
            bob.close()
        # bob may describe (CREATE) and read the table, not write it
        grant(admin, "bob", "RC", table)
        bob = open_store(secure_hbase.user_url("bob"))
        try:  # the master and the region server learn the grant a moment after it is made
            _eventually(lambda: bob.describe_table(table))
            _eventually(lambda: list(bob.scan(table, limit=1)))
        finally:
            bob.close()
        proc, _ = _cli(
            "load", str(schema), "--hbase", secure_hbase.user_url("bob"), "--rows", "2000", "--batch-size", "500", "--seed", "9", "--settle", "0"
        )
        line = _one_line(proc)
        assert "bob@EXAMPLE.COM has no WRITE on table '" + table + "'" in line, line
        acknowledged = int(re.search(r"\((\d[\d,]*) row\(s\) of [\d,]+ acknowledged", line).group(1).replace(",", ""))
        assert acknowledged == 0
        # nothing half-written: exactly alice's rows are there
        assert sum(1 for _ in admin.scan(table)) == 3000
        bob = open_store(secure_hbase.user_url("bob"))
        try:
            assert sum(1 for _ in bob.scan(table, limit=10)) == 10  # READ works
        finally:
            bob.close()
        admin.delete_table(table)
    finally:
        admin.close()


def _denied(store: Any, call: Any) -> str:
    from keyshape.store.hbase.acl import PermissionDenied

    with pytest.raises(PermissionDenied) as info:
        call(store)
    text = str(info.value)
    assert "\n" not in text
    return text


def _eventually(read: Any, seconds: float = 60.0) -> Any:
    """``read()`` once it is no longer refused (PermissionDenied) within ``seconds``."""
    from keyshape.store.hbase.acl import PermissionDenied

    deadline = time.monotonic() + seconds
    while True:
        try:
            return read()
        except PermissionDenied:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_denial_names_the_requests_own_table_or_namespace(secure_hbase: Any) -> None:
    """HBase's read check says "(table=sc_acl, action=READ)" (TableName.toString: no "default:"),
    its table and namespace checks "scope=default:t" and "scope=ns": the line names the table the
    request was for ('t' or 'ns:t'), or the namespace for a namespace-level denial ('@ns'), and the
    suggested grant, run as given, lets the user in (issue 28 item 8: a READ denial on 'sc_acl'
    said "namespace 'sc_acl'" and suggested '@sc_acl')."""
    from keyshape.store.hbase.acl import grant

    tag = uuid.uuid4().hex[:8]
    namespace = f"i28_8_ns_{tag}"
    plain = make_schema("none", 1, "_", False, name=f"i28_8_sc_acl_{tag}").table
    spaced = make_schema("none", 1, "_", False, name=f"i28_8_t_{tag}", namespace=namespace).table
    admin = open_store(secure_hbase.full.admin_url())
    bob = open_store(secure_hbase.user_url("bob"))
    try:
        for spec in (plain, spaced):
            ensure_table(admin, spec)
            admin.put(spec.full_name, b"r1", {b"d:v": b"1"})
        for name in (plain.name, f"{namespace}:{spaced.name}"):
            line = _denied(bob, lambda s: list(s.scan(name)))
            assert f"bob has no READ on table '{name}'" in line, line
            assert "namespace" not in line, line
            suggested = re.search(r"grant '(\w+)', '(\w)', '([^']+)'", line)
            assert suggested and suggested.groups() == ("bob", "R", name), line
            grant(admin, *suggested.groups())
            # The master stores the grant at once; region servers learn it through ZooKeeper a moment
            # later (a busy machine: seconds), so bob's read is retried until it is let in.
            assert _eventually(lambda: [k for k, _ in bob.scan(name)]) == [b"r1"]
        # creating a table is checked on its namespace: that is what the line names
        other = make_schema("none", 1, "_", False, name=f"i28_8_new_{tag}", namespace=namespace).table
        line = _denied(bob, lambda s: s.create_table(other))
        assert f"has no CREATE on namespace '{namespace}'" in line, line
        assert f"'@{namespace}')" in line, line
        for spec in (plain, spaced):
            admin.delete_table(spec.full_name)
        admin.delete_namespace(namespace)
    finally:
        bob.close()
        admin.close()


# --- bad input and faults: one line, non-zero exit, bounded time -------------------------------


def _watch_error(url: str, env: dict[str, str] | None = None) -> str:
    # No measured time asserted (issue 43): the line names the fault; a hang fails at _cli's timeout.
    proc, _ = _cli("watch", "hbase:meta", "--hbase", url, "--samples", "1", "--interval", "0.1", env=env)
    return _one_line(proc)


def test_no_credentials(secure_hbase: Any, tmp_path: Path) -> None:
    url = secure_hbase.full.secure_url(auth="kerberos")
    line = _watch_error(url, {"KRB5CCNAME": f"FILE:{tmp_path}/none"})
    assert "no usable Kerberos credentials" in line and "kinit" in line


def test_expired_ticket_without_keytab(secure_hbase: Any, tmp_path: Path) -> None:
    cache = f"FILE:{tmp_path}/cc"
    env = {**os.environ, "KRB5CCNAME": cache}
    kinit = shutil.which("kinit") or "/usr/bin/kinit"
    subprocess.run([kinit, "-l", "2s", "-k", "-t", secure_hbase.keytab("alice"), "alice"], env=env, check=True, timeout=30)
    time.sleep(3)
    line = _watch_error(secure_hbase.full.secure_url(auth="kerberos"), {"KRB5CCNAME": cache})
    assert "expired" in line and "kinit" in line


def test_ticket_from_credential_cache(secure_hbase: Any, tmp_path: Path) -> None:
    cache = f"FILE:{tmp_path}/cc"
    env = {**os.environ, "KRB5CCNAME": cache}
    subprocess.run([shutil.which("kinit") or "/usr/bin/kinit", "-k", "-t", secure_hbase.keytab("alice"), "alice"], env=env, check=True, timeout=30)
    os.environ["KRB5CCNAME"] = cache
    try:
        store = open_store(secure_hbase.full.secure_url(auth="kerberos", protection="integrity"))
        schema = make_schema("none", 1, "_", False, name=f"sec_cc_{uuid.uuid4().hex[:8]}")
        try:
            ensure_table(store, schema.table)
            store.put(schema.table.full_name, b"r", {b"d:v": b"from the cache"})
            assert store.get(schema.table.full_name, b"r") == {b"d:v": b"from the cache"}
            assert _channel(store).user == "alice@EXAMPLE.COM"
            store.delete_table(schema.table.full_name)
        finally:
            store.close()
    finally:
        del os.environ["KRB5CCNAME"]


def test_wrong_server_principal(secure_hbase: Any) -> None:
    line = _watch_error(secure_hbase.user_url("alice", server_principal="hbase/otherhost"))
    assert "hbase/otherhost" in line and "server_principal" in line


def test_protection_level_not_offered(secure_hbase: Any) -> None:
    inst = secure_hbase.tls_only
    line = _watch_error(secure_hbase.user_url("alice", inst, protection="privacy", **inst.tls_params()))
    assert "does not offer protection=privacy" in line and "authentication" in line


def test_kdc_unreachable(secure_hbase: Any, tmp_path: Path) -> None:
    conf = tmp_path / "krb5.conf"
    dead = standalone_free_port()
    conf.write_text(re.sub(r"127\.0\.0\.1:\d+", f"127.0.0.1:{dead}", secure_hbase.kdc.krb5_conf.read_text()))
    line = _watch_error(secure_hbase.user_url("alice"), {"KRB5_CONFIG": str(conf)})
    assert "KDC" in line or "Kerberos" in line


def test_simple_client_against_kerberized_server(secure_hbase: Any) -> None:
    line = _watch_error(secure_hbase.full.secure_url())
    assert "requires SASL (Kerberos)" in line and "auth=kerberos" in line


def test_kerberos_client_against_simple_server(secure_hbase: Any, hbase: Any) -> None:
    line = _watch_error(f"hbase://{hbase.url}?auth=kerberos&principal=alice&keytab={secure_hbase.keytab('alice')}")
    assert "does not use Kerberos" in line


def test_plaintext_client_against_tls_only_server(secure_hbase: Any) -> None:
    line = _watch_error(secure_hbase.tls_only.secure_url())
    assert "require TLS" in line


def test_tls_without_client_certificate_when_the_server_needs_one(secure_hbase: Any) -> None:
    inst = secure_hbase.tls_only
    line = _watch_error(inst.secure_url(tls="true", tls_ca=str(inst.tls_dir / "ca.pem")))
    assert "client certificate" in line


def test_tls_untrusted_ca(secure_hbase: Any) -> None:
    # the other instance's CA did not sign this server's certificate
    line = _watch_error(secure_hbase.user_url("alice", tls="true", tls_ca=str(secure_hbase.tls_only.tls_dir / "ca.pem")))
    assert "not trusted" in line


def test_tls_certificate_of_another_host(secure_hbase: Any) -> None:
    """A TLS server on loopback presenting a valid certificate (same CA) for another host name."""
    tls = secure_hbase.full.tls_dir
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls / "other.pem", tls / "other.key")
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        conn, _ = server.accept()
        try:
            context.wrap_socket(conn, server_side=True).close()
        except (ssl.SSLError, OSError):
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    # No measured time asserted (issue 43): the refusal is the handshake's (below), and
    # open_channel's own 5-s bounds end any wait.
    with pytest.raises(SecurityError) as info:
        open_channel("localhost", port, 5, 5, Security(tls=True, tls_ca=str(tls / "ca.pem")))
    message = str(info.value)
    assert "\n" not in message and "localhost" in message and "not trusted" in message
    assert "Hostname mismatch" in message or "hostname" in message.lower()
    server.close()
    thread.join(5)


def test_bad_url_options(secure_hbase: Any) -> None:
    base = secure_hbase.full.secure_url()
    for query, words in (
        ("auth=ntlm", "auth=simple or auth=kerberos"),
        ("auth=kerberos&protection=secret", "authentication, integrity or privacy"),
        ("auth=kerberos&principal=alice&keytab=/no/such.keytab", "does not exist"),
        ("tlsca=/x", "unknown HBase URL option"),
        ("principal=alice", "need auth=kerberos"),
    ):
        line = _watch_error(f"{base}?{query}")
        assert words in line, line


def standalone_free_port() -> int:
    import standalone

    return standalone.free_port()


@pytest.mark.parametrize("instance", ["kerberos", "tls+kerberos"])
def test_bulk_copy_on_a_secured_cluster_verifies(secure_hbase: Any, tmp_path: Path, instance: str) -> None:
    """``migrate --via bulkload`` as alice (Kerberos, privacy), and over TLS with Kerberos: the
    HFiles go through secure bulk load's prepare/load/cleanup RPCs as the user, and verify says
    NEW holds every row of OLD (issue 42: Kerberos and TLS as elsewhere)."""
    inst = secure_hbase.full if instance == "kerberos" else secure_hbase.tls_only
    url = secure_hbase.user_url("alice", inst, **(inst.tls_params() if instance != "kerberos" else {}))
    tag = uuid.uuid4().hex[:8]
    old_path = _schema_file(tmp_path, f"sec_bulk_old_{tag}")
    new_path = tmp_path / "new.toml"
    text = old_path.read_text().replace(f"sec_bulk_old_{tag}", f"sec_bulk_new_{tag}")
    # NEW keeps the example's SNAPPY family: the bulk copy writes SNAPPY blocks
    new_path.write_text(text.replace("buckets = 100", "buckets = 8").replace("regions = 20 ", "regions = 8 "))
    proc, _ = _cli("load", str(old_path), "--hbase", url, "--rows", "2000", "--batch-size", "1000")
    assert proc.returncode == 0, proc.stderr
    proc, _ = _cli("migrate", str(old_path), str(new_path), "--hbase", url, "--via", "bulkload", "--state", str(tmp_path / "state.json"), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "copied 2,000 rows" in proc.stdout and "verify: OK" in proc.stdout, proc.stdout
    admin = open_store(inst.admin_url())
    try:
        assert sum(1 for _ in admin.scan(f"sec_bulk_new_{tag}")) == 2000
        assert admin.describe_table(f"sec_bulk_new_{tag}")["d"]["COMPRESSION"] == "SNAPPY"
        for name in (f"sec_bulk_old_{tag}", f"sec_bulk_new_{tag}"):
            admin.delete_table(name)
    finally:
        admin.close()
