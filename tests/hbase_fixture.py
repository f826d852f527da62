"""The session-scoped `hbase` fixture: a real standalone HBase for tests marked `@pytest.mark.hbase`.

- KEYSHAPE_HBASE_URL=host:port (ZooKeeper) -> use that running HBase; never start or stop it.
- Otherwise start tools/hbase's standalone HBase once per session on free loopback ports (so it
  does not collide with a developer's instance on 2181) in tools/hbase/run/pytest/ (pytest-2/...
  while another session on the machine holds that one), and always
  stop it and delete its data at the end. Its line is $KEYSHAPE_HBASE_VERSION (any of
  standalone.LINES that starts, e.g. 2.6.1), else the default line (standalone.DEFAULT_VERSION,
  2.6.4); the cluster, Kerberos and Phoenix fixtures pick their line the same way.
- If fetching jars, finding Java or starting fails, every test using the fixture FAILS (never
  skips) with the step that failed and the log to read.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
import standalone  # tools/hbase/standalone.py, on the path through pyproject's pytest `pythonpath`

TOOLS_HBASE = Path(standalone.__file__).resolve().parent


@dataclass
class HBaseHandle:
    """What tests get: the ZooKeeper address, and the instance when this session started it."""

    url: str
    standalone: Any | None  # tools/hbase/standalone.Standalone, or None for an external HBase

    def require_standalone(self) -> Any:
        """The started instance, for tests that kill/restart HBase; fails on an external one."""
        if self.standalone is None:
            pytest.fail("this test kills and restarts HBase, so it needs the fixture-started instance; unset KEYSHAPE_HBASE_URL", pytrace=False)
        return self.standalone


@pytest.fixture(scope="session")
def hbase() -> Iterator[HBaseHandle]:
    url = os.environ.get("KEYSHAPE_HBASE_URL", "").strip()
    if url:
        yield HBaseHandle(url=url.removeprefix("hbase://"), standalone=None)
        return
    try:
        # run/pytest, or run/pytest-2... while another session holds it (its HBase is left alone).
        run_dir, lock = standalone.claim_run_dir(TOOLS_HBASE / "run" / "pytest")
        instance = standalone.start_scratch(run_dir)
    except (standalone.StartFailed, standalone.UnknownVersion) as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield HBaseHandle(url=instance.url, standalone=instance)
    finally:
        instance.stop()
        lock.close()


@pytest.fixture
def hbase_store(hbase: HBaseHandle) -> Iterator[Any]:
    """An ``HBaseStore`` on the session's HBase, closed after the test."""
    from keyshape.store.hbase import HBaseStore

    opened = HBaseStore.from_url(hbase.url)
    try:
        yield opened
    finally:
        opened.close()


def scan_after_restart(url: str, table: str, timeout: float = 300.0) -> dict[bytes, Any]:
    """Every row of ``table``, retried while HBase is still re-assigning regions after a crash
    or restart (ServerCrashProcedure: WAL split and replay can take longer than the store's own
    wait)."""
    from keyshape.errors import StoreError
    from keyshape.store.hbase import HBaseStore

    deadline = time.monotonic() + timeout
    while True:
        check = HBaseStore.from_url(url)
        try:
            return dict(check.scan(table, batch_size=5_000))
        except StoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(5)
        finally:
            check.close()
