"""Shared pytest fixtures for keyshape's tests."""

import zlib

import pytest
from hypothesis import settings

from hbase_fixture import hbase, hbase_store  # noqa: F401  (a real standalone HBase; a store on it)
from secure_fixture import secure_hbase  # noqa: F401  (session fixture: a KDC and secured HBase)

# --- the 3-region-server cluster (tests marked hbase_cluster) ---------------------------------
from hbase_cluster_fixture import MEASURED, hbase_cluster, hbase_cluster_session  # noqa: F401, E402

# Property tests check values, not speed (speed lives in benchmarks/): on a shared 2-core machine
# running HBase beside the tests, one example can take longer than Hypothesis' 200 ms default.
settings.register_profile("keyshape", deadline=None)
settings.load_profile("keyshape")


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    if MEASURED:
        terminalreporter.section("HBase cluster measurements")
        for line in MEASURED:
            terminalreporter.write_line(line)


# --- pytest-xdist (`pytest -n 2`, the README's test command) -------------------------------
# Each real service is a session fixture, started once per worker that asks for it. With
# `--dist loadgroup` every test of one service runs on one worker (a group), so a service is not
# started twice and its tests keep their order; the pure tests fill the workers in between. The
# standalone HBase's files are split in two groups (one HBase per worker): they are most of the
# suite's time, and on this 2-core machine most of it is waiting on HBase, not the CPU.
_SERVICE_GROUPS = (
    ({"hbase_cluster", "hbase_cluster_session"}, "cluster"),
    ({"secure_hbase"}, "secure"),
    ({"phoenix_url", "connectionless_oracle"}, "phoenix"),
)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        group = next((name for needs, name in _SERVICE_GROUPS if fixtures & needs), None)
        if group is None and fixtures & {"hbase", "hbase_store"}:
            group = f"standalone-{zlib.crc32(item.path.name.encode()) % 2}"
        if group is None and item.get_closest_marker("hbase_lines") is not None:
            group = "lines"  # starts other HBase lines one at a time
        if group is None and item.get_closest_marker("spark") is not None:
            group = "spark"  # one Spark JVM at a time
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
