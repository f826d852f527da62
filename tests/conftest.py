"""Shared pytest fixtures for keyshape's tests."""

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
