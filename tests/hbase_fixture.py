"""The session-scoped `hbase` fixture: a real standalone HBase for tests marked `@pytest.mark.hbase`.

- KEYSHAPE_HBASE_URL=host:port (ZooKeeper) -> use that running HBase; never start or stop it.
- Otherwise start tools/hbase's standalone HBase once per session on free loopback ports (so it
  does not collide with a developer's instance on 2181) in tools/hbase/run/pytest/, and always
  stop it and delete its data at the end.
- If fetching jars, finding Java or starting fails, every test using the fixture FAILS (never
  skips) with the step that failed and the log to read.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

TOOLS_HBASE = Path(__file__).resolve().parent.parent / "tools" / "hbase"


def load_standalone() -> Any:
    """Import tools/hbase/standalone.py (a script folder, not a package)."""
    name = "keyshape_tools_hbase_standalone"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, TOOLS_HBASE / "standalone.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


@dataclass
class HBaseHandle:
    """What tests get: the ZooKeeper address, and the instance when this session started it."""

    url: str
    standalone: Any | None  # tools/hbase/standalone.Standalone, or None for an external HBase

    def require_standalone(self) -> Any:
        """The started instance, for tests that kill/restart HBase; fails on an external one."""
        if self.standalone is None:
            pytest.fail("this test kills and restarts HBase, so it needs the fixture-started "
                        "instance; unset KEYSHAPE_HBASE_URL", pytrace=False)
        return self.standalone


@pytest.fixture(scope="session")
def hbase() -> Iterator[HBaseHandle]:
    url = os.environ.get("KEYSHAPE_HBASE_URL", "").strip()
    if url:
        yield HBaseHandle(url=url.removeprefix("hbase://"), standalone=None)
        return
    sa = load_standalone()
    instance = sa.Standalone.with_free_ports(TOOLS_HBASE / "run" / "pytest")
    instance.stop()  # an instance left behind by a killed earlier session
    failure = None
    try:
        instance.start(timeout=float(os.environ.get("KEYSHAPE_HBASE_START_TIMEOUT", "240")))
    except sa.StartFailed as e:
        failure = str(e)
    if failure is not None:
        instance.kill()  # a half-started master may not answer a clean stop; keep data/ and logs
        pytest.fail(failure, pytrace=False)
    try:
        yield HBaseHandle(url=instance.url, standalone=instance)
    finally:
        instance.stop()
