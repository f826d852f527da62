"""The session-scoped `connectionless_oracle` fixture: one connectionless Phoenix 5.2.1 JVM
(tests/phoenix_oracle.py, tools/golden/phoenix/oracle.sh) for every test module that asks Phoenix
for keys, instead of one JVM start (~5-10 s on the 2-core CI machine) per module. The modules
name their tables apart (their own prefixes and counters), so they share its catalog safely.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from phoenix_oracle import PhoenixOracle


@pytest.fixture(scope="session")
def connectionless_oracle() -> Iterator[PhoenixOracle]:
    try:
        o = PhoenixOracle()
    except (RuntimeError, OSError) as exc:
        pytest.fail(f"the Phoenix oracle could not start: {exc}")
    yield o
    o.close()
