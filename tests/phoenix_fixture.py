"""The Phoenix tests' session fixtures.

- `connectionless_oracle`: one connectionless Phoenix 5.2.1 JVM (tests/phoenix_oracle.py,
  tools/golden/phoenix/oracle.sh) for every test module that asks Phoenix for keys, instead of one
  JVM start (~5-10 s on the 2-core CI machine) per module.
- `phoenix_url`: one Phoenix-enabled HBase (tools/hbase/phoenix_server.py; or KEYSHAPE_PHOENIX_URL)
  for every module that talks to a live Phoenix, instead of one start (~10-30 s) per module.

The modules name their tables apart (their own prefixes, counters and process ids), so they share
a catalog safely.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import phoenix_server  # tools/hbase/phoenix_server.py (pytest pythonpath)
import pytest
import standalone
from phoenix_oracle import PhoenixOracle


@pytest.fixture(scope="session")
def phoenix_url() -> Iterator[str]:
    url = os.environ.get("KEYSHAPE_PHOENIX_URL", "").strip()
    if url:
        yield url
        return
    try:
        # run/pytest-phoenix, or -2... while another session holds it (as the standalone fixture).
        run_dir, lock = standalone.claim_run_dir(Path(standalone.HERE) / "run" / "pytest-phoenix")
        instance = phoenix_server.start_scratch(run_dir)
    except standalone.StartFailed as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield instance.url
    finally:
        instance.stop()
        lock.close()


@pytest.fixture(scope="session")
def connectionless_oracle() -> Iterator[PhoenixOracle]:
    try:
        o = PhoenixOracle()
    except (RuntimeError, OSError) as exc:
        pytest.fail(f"the Phoenix oracle could not start: {exc}")
    yield o
    o.close()
