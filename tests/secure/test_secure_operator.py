"""The operator's experience on a secure cluster (issue 30, security and identity), against the
real MIT KDC and secured HBase instances of tests/secure_fixture.py: every mistake is one line
saying what is true and how to fix it, within a bound; the line printed names the identity that
acts; permissions are granted and revoked with keyshape itself; the test KDC and keys stay local."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from read_oracle import make_schema

from keyshape.store import ensure_table, open_store
from keyshape.store.hbase.acl import PermissionDenied, grant

pytestmark = [pytest.mark.hbase, pytest.mark.secure]

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "hbase"


def _cli(*args: str, env: dict[str, str] | None = None, timeout: float = 90) -> tuple[subprocess.CompletedProcess[str], float]:
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


def _watch_error(url: str, env: dict[str, str] | None = None) -> str:
    # No measured time asserted (issue 43): each caller's line names what was given up on and
    # after what (e.g. "within 20 s", the client's own bound); a hang fails at _cli's timeout.
    proc, _ = _cli("watch", "hbase:meta", "--hbase", url, "--samples", "1", "--interval", "0.1", env=env)
    return _one_line(proc)


def _schema_file(tmp_path: Path, table: str) -> Path:
    text = (ROOT / "examples" / "orders.toml").read_text()
    text = text.replace('name = "orders"', f'name = "{table}"').replace('namespace = "shop"', 'namespace = "default"')
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def _keytab(tmp_path: Path, *principals: str) -> str:
    """A keytab holding keys (from a made-up password) for ``principals``: MIT's ktutil."""
    ktutil = shutil.which("ktutil") or "/usr/bin/ktutil"
    path = tmp_path / f"k{uuid.uuid4().hex[:6]}.keytab"
    script = "".join(f"addent -password -p {p} -k 1 -e aes256-cts-hmac-sha1-96\nnot-the-password\n" for p in principals) + f"wkt {path}\nquit\n"
    subprocess.run([ktutil], input=script, text=True, capture_output=True, check=True, timeout=30)
    assert path.exists()
    return str(path)


# --- 1-4: mistakes said as they are -------------------------------------------------------------


def test_kerberos_without_tls_against_a_tls_only_server_is_told_to_use_tls(secure_hbase: Any) -> None:
    """Was: "closed the connection during the Kerberos handshake ...; is server_principal right?"."""
    inst = secure_hbase.tls_only
    line = _watch_error(secure_hbase.user_url("alice", inst))
    assert "accepts only TLS" in line and "tls=true" in line and "tls_ca=" in line, line
    assert "server_principal" not in line, line
    # the advice, followed, connects (TLS with the client certificate this server needs)
    store = open_store(secure_hbase.user_url("alice", inst, **inst.tls_params()))
    try:
        assert isinstance(store.list_tables(), list)
    finally:
        store.close()


def test_a_principal_the_keytab_or_the_kdc_does_not_know_is_told_so(secure_hbase: Any, tmp_path: Path) -> None:
    """Was: "no usable Kerberos credentials for alice@OTHER.ORG (No credentials cache found)"."""

    def url(principal: str, keytab: str) -> str:
        return str(secure_hbase.full.secure_url(auth="kerberos", principal=principal, keytab=keytab))

    # alice's keytab, asked for alice in a realm it holds no key for
    line = _watch_error(url("alice@OTHER.ORG", secure_hbase.keytab("alice")))
    assert "No credentials cache found" not in line, line
    assert "holds no key for alice@OTHER.ORG" in line and "it holds alice@EXAMPLE.COM" in line, line
    assert "default realm is EXAMPLE.COM" in line, line
    # a keytab for a realm krb5.conf names no KDC for
    line = _watch_error(url("alice@OTHER.ORG", _keytab(tmp_path, "alice@OTHER.ORG")))
    assert "realm OTHER.ORG is unknown" in line and "[realms]" in line, line
    # a principal in the right realm the KDC has never heard of
    line = _watch_error(url("dave", _keytab(tmp_path, "dave@EXAMPLE.COM")))
    assert "the KDC of realm EXAMPLE.COM does not know the principal dave@EXAMPLE.COM" in line, line


def test_a_kdc_that_accepts_but_never_answers_is_given_up_on_in_time(secure_hbase: Any, tmp_path: Path) -> None:
    """Was: 51 s (MIT's own retries) before "Cannot contact any KDC"; kinit gives up at 25 s."""
    silent = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(silent.accept()[0])  # take the connection, never answer
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    conf = tmp_path / "krb5.conf"
    conf.write_text(re.sub(r"127\.0\.0\.1:\d+", f"127.0.0.1:{silent.getsockname()[1]}", secure_hbase.kdc.krb5_conf.read_text()))
    try:
        # Given up by keyshape's own 20-s bound: MIT's retries (51 s) would end in "Cannot contact
        # any KDC", not in this line.
        line = _watch_error(secure_hbase.user_url("alice"), {"KRB5_CONFIG": str(conf)})
        assert "KDC did not answer within 20 s" in line and str(conf) in line, line
        assert held, "the client never reached the silent KDC: the test proves nothing"
    finally:
        silent.close()
        for conn in held:
            conn.close()


def test_simple_against_kerberos_advises_the_client_never_weakening_the_server(secure_hbase: Any) -> None:
    line = _watch_error(secure_hbase.full.secure_url())
    assert "auth=kerberos" in line, line
    assert "fallback" not in line and "simple-auth" not in line, line


# --- 5: the identity that acts -------------------------------------------------------------------


def test_commands_print_the_principal_that_acts_and_refuse_user(secure_hbase: Any, tmp_path: Path) -> None:
    """Was: "connected ... as user root" while alice@EXAMPLE.COM acted, and --user ignored."""
    table = f"sec_who_{uuid.uuid4().hex[:8]}"
    schema = _schema_file(tmp_path, table)
    url = secure_hbase.user_url("alice")
    proc, _ = _cli("load", str(schema), "--hbase", url, "--rows", "500", "--settle", "0")
    assert proc.returncode == 0, proc.stderr
    assert f"connected to HBase at {url} as Kerberos principal alice@EXAMPLE.COM" in proc.stdout, proc.stdout
    assert "as user" not in proc.stdout
    for args in (
        ("load", str(schema), "--rows", "10"),
        ("create", str(schema)),
        ("watch", table, "--samples", "1"),
        ("scan", str(schema), "--limit", "1"),
    ):
        proc, _ = _cli(*args, "--hbase", url, "--user", "bob")
        line = _one_line(proc)
        assert "'bob' (--user)" in line and "under Kerberos" in line and "(alice)" in line, (args, line)
    admin = open_store(secure_hbase.full.admin_url())
    try:
        assert sum(1 for _ in admin.scan(table)) == 500  # the refused load wrote nothing
        admin.delete_table(table)
    finally:
        admin.close()


# --- 6: grant and revoke -------------------------------------------------------------------------


def _until(check: Any, seconds: float = 60) -> Any:
    """``check()`` once it stops raising PermissionDenied (or returns truthy), within ``seconds``:
    HBase's region servers learn a grant or revoke through ZooKeeper, a moment after it is made."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            result = check()
            if result:
                return result
        except PermissionDenied:
            pass
        if time.monotonic() > deadline:
            return check()
        time.sleep(0.2)


def _denied(store: Any, table: str) -> bool:
    try:
        list(store.scan(table, limit=1))
    except PermissionDenied:
        return True
    return False


def test_grant_and_revoke_as_hbase_shell(secure_hbase: Any) -> None:
    tag = uuid.uuid4().hex[:8]
    namespace = f"sec_grant_ns_{tag}"
    plain = make_schema("none", 1, "_", False, name=f"sec_grant_{tag}").table
    spaced = make_schema("none", 1, "_", False, name=f"sec_grant_t_{tag}", namespace=namespace).table
    admin_url = secure_hbase.full.admin_url()
    admin = open_store(admin_url)
    bob = open_store(secure_hbase.user_url("bob"))
    try:
        for spec in (plain, spaced):
            ensure_table(admin, spec)
            admin.put(spec.full_name, b"r1", {b"d:v": b"1"})
            assert _denied(bob, spec.full_name)
        # bob may not grant himself anything: one line naming what he lacks
        proc, _ = _cli("grant", "bob", "R", plain.name, "--hbase", secure_hbase.user_url("bob"))
        assert "bob@EXAMPLE.COM has no ADMIN" in _one_line(proc)
        # READ and WRITE on the table, as `grant 'bob', 'RW', 't'`
        proc, _ = _cli("grant", "bob", "RW", plain.name, "--hbase", admin_url)
        assert proc.returncode == 0, proc.stderr
        assert f"granted RW to bob on table '{plain.name}'" in proc.stdout
        assert "granted as hbase/localhost@EXAMPLE.COM" in proc.stdout
        assert _until(lambda: [k for k, _ in bob.scan(plain.name)]) == [b"r1"]
        bob.put(plain.name, b"r2", {b"d:v": b"2"})
        assert _denied(bob, spaced.full_name)  # only that table
        # READ alone replaces READ and WRITE, as the shell's grant does
        proc, _ = _cli("grant", "bob", "R", plain.name, "--hbase", admin_url)
        assert proc.returncode == 0, proc.stderr

        # Until the region server has learnt it, a probe put still lands: each probe has its own
        # key, and the table must hold exactly the probes acknowledged before the first refusal.
        acknowledged: list[bytes] = []

        def write_refused() -> bool:
            key = b"r3-%04d" % len(acknowledged)
            try:
                bob.put(plain.name, key, {b"d:v": b"3"})
            except PermissionDenied as exc:
                return "no WRITE" in str(exc)
            acknowledged.append(key)
            return False

        assert _until(write_refused)
        assert [k for k, _ in bob.scan(plain.name)] == [b"r1", b"r2", *acknowledged]
        # revoke takes it back
        proc, _ = _cli("revoke", "bob", plain.name, "--hbase", admin_url)
        assert proc.returncode == 0, proc.stderr
        assert f"revoked every permission of bob on table '{plain.name}'" in proc.stdout
        assert _until(lambda: _denied(bob, plain.name))
        # a namespace, as `grant 'bob', 'RW', '@ns'`: every table in it
        proc, _ = _cli("grant", "bob", "rw", f"@{namespace}", "--hbase", admin_url)
        assert proc.returncode == 0 and f"granted RW to bob on namespace '{namespace}'" in proc.stdout, proc.stderr
        assert _until(lambda: [k for k, _ in bob.scan(spaced.full_name)]) == [b"r1"]
        bob.put(spaced.full_name, b"r2", {b"d:v": b"2"})
        proc, _ = _cli("revoke", "bob", f"@{namespace}", "--hbase", admin_url)
        assert proc.returncode == 0, proc.stderr
        assert _until(lambda: _denied(bob, spaced.full_name))
        # bad input: one line each
        for args, words in (
            (("grant", "bob", "RZ", plain.name), "use letters of RWXCA"),
            (("grant", "bob", "R", "@a:b"), "write a namespace as @NAME"),
            # HBase would store a grant on any name: a typo must not pass silently
            (("grant", "bob", "R", plain.name + "_typo"), "does not exist"),
            (("revoke", "bob", f"@{namespace}_typo"), "does not exist"),
        ):
            proc, _ = _cli(*args, "--hbase", admin_url)
            assert words in _one_line(proc), proc.stderr
        for spec in (plain, spaced):
            admin.delete_table(spec.full_name)
        admin.delete_namespace(namespace)
    finally:
        bob.close()
        admin.close()


# --- 7: READ and WRITE are enough to load ---------------------------------------------------------


def test_load_into_an_existing_table_with_read_and_write_only(secure_hbase: Any, tmp_path: Path) -> None:
    """Was: "bob has no CREATE on table ..." (load read the table's descriptor to see whether it
    exists)."""
    table = f"sec_rw_{uuid.uuid4().hex[:8]}"
    schema = _schema_file(tmp_path, table)
    admin_url = secure_hbase.full.admin_url()
    proc, _ = _cli("create", str(schema), "--hbase", admin_url)
    assert proc.returncode == 0, proc.stderr
    admin = open_store(admin_url)
    try:
        grant(admin, "bob", "RW", table)
        bob = open_store(secure_hbase.user_url("bob"))
        try:  # bob really lacks CREATE: he may not describe the table, yet learns that it exists
            with pytest.raises(PermissionDenied):
                bob.describe_table(table)
            assert bob.table_exists(table)
            assert not bob.table_exists(table + "_none")
            # the region server learns the grant through ZooKeeper a moment later: READ and WRITE
            # come in one update, so a read that goes through means the load's puts will too
            _until(lambda: list(bob.scan(table, limit=1)) == [])
        finally:
            bob.close()
        proc, _ = _cli("load", str(schema), "--hbase", secure_hbase.user_url("bob"), "--rows", "2000", "--batch-size", "500", "--settle", "0")
        assert proc.returncode == 0, proc.stderr
        assert "wrote 2,000 rows" in proc.stdout and "created" not in proc.stdout
        assert sum(1 for _ in admin.scan(table)) == 2000
        admin.delete_table(table)
    finally:
        admin.close()


# --- 8: the test KDC and keys stay local ----------------------------------------------------------


def _listeners(port: int) -> list[str]:
    """Local addresses listening on ``port`` (TCP LISTEN, or bound UDP), from /proc/net."""
    found = []
    for name in ("tcp", "tcp6", "udp", "udp6"):
        for line in Path(f"/proc/net/{name}").read_text().splitlines()[1:]:
            fields = line.split()
            address, hexport = fields[1].rsplit(":", 1)
            if int(hexport, 16) == port and (name.startswith("udp") or fields[3] == "0A"):
                found.append(f"{name} {address}")
    return found


def test_the_test_kdc_listens_on_loopback_only_and_private_keys_are_private(secure_hbase: Any, tmp_path: Path) -> None:
    found = _listeners(secure_hbase.kdc.port)
    assert found, "the KDC is not listening at all"
    # 0100007F: 127.0.0.1 as /proc/net writes it; no IPv6 socket, no 0.0.0.0
    assert all(entry.split()[1] == "0100007F" for entry in found), found
    keystore = secure_hbase.full.tls_dir / "server-keystore.pem"
    assert keystore.stat().st_mode & 0o077 == 0, oct(keystore.stat().st_mode)
    import secure  # tools/hbase/secure.py (on the path: tests/secure_fixture.py imports it too)

    made = secure.make_tls(tmp_path / "tls")
    for path in (*(tmp_path / "tls").glob("*.key"), tmp_path / "tls" / "server-keystore.pem"):
        assert path.stat().st_mode & 0o077 == 0, (path, oct(path.stat().st_mode))
    assert made["ca"].stat().st_mode & 0o044  # certificates stay readable


def test_secure_py_start_honours_the_port_variables(tmp_path: Path) -> None:
    """tools/hbase/secure.py start on KEYSHAPE_HBASE_*_PORT (it took free ports whatever was set),
    and stop finds them again."""
    import standalone

    ports = {name: standalone.free_port() for name in ("ZK", "MASTER", "RS", "THRIFT", "KDC")}
    env = {
        **os.environ,
        "KEYSHAPE_HBASE_RUN_DIR": str(tmp_path / "run"),
        **{f"KEYSHAPE_HBASE_{name}_PORT": str(port) for name, port in ports.items()},
    }
    script = str(TOOLS / "secure.py")
    try:
        started = subprocess.run([sys.executable, script, "start"], env=env, capture_output=True, text=True, timeout=400)
        assert started.returncode == 0, started.stderr
        assert f"hbase://127.0.0.1:{ports['ZK']}?" in started.stdout, started.stdout
        for name in ("ZK", "MASTER", "RS", "KDC"):
            assert _listeners(ports[name]), f"nothing listens on KEYSHAPE_HBASE_{name}_PORT={ports[name]}"
    finally:
        # without the ZooKeeper variable: stop must find the port it was started on by itself
        stopped = subprocess.run(
            [sys.executable, script, "stop"], env={**env, "KEYSHAPE_HBASE_ZK_PORT": ""}, capture_output=True, text=True, timeout=200
        )
    assert stopped.returncode == 0, stopped.stderr
    for name, port in ports.items():
        assert not _listeners(port), f"{name} port {port} still open after stop"
