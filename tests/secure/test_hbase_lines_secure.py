"""Kerberos on HBase lines other than the default (issue 34): a throw-away MIT KDC and a secured
standalone HBase of the line (tools/hbase/secure.py, `version=`), with the AccessController.

Lines: $KEYSHAPE_HBASE_SECURE_LINES (comma-separated), else the oldest line that starts, 2.4.18 (the
default line has tests/secure/test_secure.py; 2.5.11 passes too, KEYSHAPE_HBASE_SECURE_LINES=2.5.11, but CI's
30-minute budget holds one other line: the oldest, furthest from the default in its protocol). Native TLS
(`hbase.server.netty.tls.*`) exists from HBase 2.6.0 on: on 2.4/2.5 the server ignores those
settings, so only SASL/Kerberos (every protection level) is checked there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import secure  # tools/hbase/secure.py
import standalone

ROOT = Path(__file__).resolve().parents[2]
OLD = ROOT / "examples" / "migrate" / "events-mod16.toml"
# The oldest line tests/hbase/test_hbase_lines.py starts (one other than the default's minor).
RUNNABLE = [
    min(
        (v for v, line in standalone.LINES.items() if line.artifact and v.rsplit(".", 1)[0] != standalone.DEFAULT_VERSION.rsplit(".", 1)[0]),
        key=lambda v: tuple(int(x) for x in v.split(".")),
    )
]

pytestmark = [pytest.mark.secure, pytest.mark.hbase_lines]


def secure_lines() -> list[str]:
    raw = os.environ.get("KEYSHAPE_HBASE_SECURE_LINES", "").strip()
    return [v.strip() for v in raw.split(",") if v.strip()] if raw else RUNNABLE


@pytest.fixture(scope="module", params=secure_lines())
def secured(request: pytest.FixtureRequest) -> Iterator[Any]:
    run = standalone.HERE / "run" / f"pytest-line-secure-{request.param}"
    try:
        instance = secure.start_secure(run, version=request.param)
    except (standalone.StartFailed, standalone.UnknownVersion) as e:
        pytest.fail(str(e), pytrace=False)
    try:
        from keyshape.store import open_store
        from keyshape.store.hbase.acl import grant

        admin = open_store(instance.admin_url())
        try:
            grant(admin, "alice", "RWXCA")
        finally:
            admin.close()
        yield instance
    finally:
        secure.stop_secure(instance)


def user_url(instance: Any, user: str) -> str:
    return instance.secure_url(auth="kerberos", principal=user, keytab=str(instance.kdc.keytab(user)))


def ks(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, timeout=600, cwd=ROOT, env={**os.environ})


def test_kerberos_create_load_scan_as_a_granted_user(secured: Any) -> None:
    log = secured.master_log.read_text(errors="replace")
    assert re.search(rf"HBase {re.escape(secured.version)}\b", log)
    url = user_url(secured, "alice")
    for args in (("create", str(OLD)), ("load", str(OLD), "--rows", "3000")):
        proc = ks(*args, "--hbase", url)
        assert proc.returncode == 0, proc.stderr[-1500:]
    proc = ks("scan", str(OLD), "--hbase", url, "--count")
    assert proc.returncode == 0 and re.search(r"\b3,?000\b", proc.stdout), proc.stdout + proc.stderr


@pytest.mark.parametrize("protection", ["authentication", "integrity", "privacy"])
def test_every_protection_level_reads_back(secured: Any, protection: str) -> None:
    from keyshape.store.hbase import HBaseStore

    url = secured.secure_url(auth="kerberos", principal="alice", keytab=str(secured.kdc.keytab("alice")), protection=protection)
    with HBaseStore.from_url(url) as store:
        store.put("ns:events", b"00_" + protection.encode(), {b"d:v": protection.encode()})
        assert store.get("ns:events", b"00_" + protection.encode()) == {b"d:v": protection.encode()}
        store.delete("ns:events", b"00_" + protection.encode())


def test_an_ungranted_user_is_refused_in_one_line(secured: Any) -> None:
    proc = ks("scan", str(OLD), "--hbase", user_url(secured, "bob"), "--count")
    lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
    assert proc.returncode != 0 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert re.search(r"bob", lines[0]) and re.search(r"permission|denied|insufficient", lines[0], re.I), lines[0]


def test_a_simple_auth_client_is_told_kerberos_is_required(secured: Any) -> None:
    proc = ks("scan", str(OLD), "--hbase", secured.url, "--count")
    lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
    assert proc.returncode != 0 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert re.search(r"kerberos|authenticat", lines[0], re.I), lines[0]
