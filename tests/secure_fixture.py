"""The session-scoped `secure_hbase` fixture (tests marked `secure`): a throw-away MIT KDC and two
secured standalone HBase instances started by tools/hbase/secure.py, stopped at the end.

- `full`: Kerberos offering privacy, integrity and authentication, authorization on
  (AccessController), TLS beside plaintext. `alice` gets global RWXCA; `bob` gets nothing.
- `tls_only`: refuses plaintext and needs a client certificate; Kerberos offering authentication
  only, and SIMPLE clients let in (so "TLS alone" and "a protection level not offered" are real).

Both start in parallel. Failing to start FAILS every test using it (never skips).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
import secure  # tools/hbase/secure.py
import standalone

RUN = Path(standalone.__file__).resolve().parent / "run" / "pytest-secure"


@dataclass
class SecureHandle:
    kdc: Any
    full: Any
    tls_only: Any

    def keytab(self, user: str) -> str:
        return str(self.kdc.keytab(user))

    def user_url(self, user: str, instance: Any = None, **params: str) -> str:
        instance = instance or self.full
        return instance.secure_url(auth="kerberos", principal=user, keytab=self.keytab(user), **params)


@pytest.fixture(scope="session")
def secure_hbase() -> Iterator[SecureHandle]:
    # run/pytest-secure, or -2... while another session on the machine holds it (its KDC and
    # HBases are left alone), as the standalone fixture claims its folder.
    run, lock = standalone.claim_run_dir(RUN)
    kdc = secure.KDC(run / "kdc")
    started: dict[str, Any] = {}
    errors: list[BaseException] = []

    def start(name: str, **options: Any) -> None:
        try:
            started[name] = secure.start_secure(run / name, kdc=kdc, **options)
        except BaseException as exc:  # reported below, in the test thread
            errors.append(exc)

    try:
        kdc.start()
    except standalone.StartFailed as e:
        pytest.fail(str(e), pytrace=False)
    os.environ["KRB5_CONFIG"] = str(kdc.krb5_conf)
    threads = [
        threading.Thread(target=start, args=("full",)),
        threading.Thread(target=start, args=("tls_only",), kwargs={"protection": "authentication", "authorization": False, "tls_only": True}),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        if errors:
            pytest.fail(f"secure HBase did not start: {errors[0]}", pytrace=False)
        handle = SecureHandle(kdc, started["full"], started["tls_only"])
        from keyshape.store import open_store
        from keyshape.store.hbase.acl import grant

        admin = open_store(handle.full.admin_url())
        try:
            grant(admin, "alice", "RWXCA")
        finally:
            admin.close()
        yield handle
    finally:
        for instance in started.values():
            secure.stop_secure(instance, stop_kdc=False)
        kdc.stop()
        lock.close()
