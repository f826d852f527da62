"""Shared pytest fixtures for keyshape's tests."""

from collections.abc import Iterator

import pytest
from hypothesis import settings

from hbase_fixture import hbase, hbase_store  # noqa: F401  (a real standalone HBase; a store on it)
from browser_fixture import browser  # noqa: F401  (a real headless Chromium per module)
from secure_fixture import secure_hbase  # noqa: F401  (session fixture: a KDC and secured HBase)

# --- the 3-region-server cluster (tests marked hbase_cluster) ---------------------------------
from hbase_cluster_fixture import MEASURED, hbase_cluster, hbase_cluster_session  # noqa: F401, E402

# --- the default run on 2 workers, one worker per heavy session fixture (tests/xdist_groups.py) ---
from xdist_groups import (  # noqa: F401, E402
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_configure_node,
    pytest_runtest_teardown,
    pytest_unconfigure,
    pytest_xdist_make_scheduler,
)

# Property tests check values, not speed (speed lives in benchmarks/): on a shared 2-core machine
# running HBase beside the tests, one example can take longer than Hypothesis' 200 ms default.
settings.register_profile("keyshape", deadline=None)
settings.load_profile("keyshape")

MEASURED_PROPERTY = "keyshape_measured"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """On an xdist worker, the MEASURED lines a test phase added ride on its report to the
    controller, which prints the terminal summary (a worker's MEASURED is not the controller's)."""
    report = yield
    if hasattr(item.config, "workerinput"):
        sent = item.config.stash.get(_SENT, 0)
        if len(MEASURED) > sent:
            report.user_properties = [*report.user_properties, *((MEASURED_PROPERTY, line) for line in MEASURED[sent:])]
            item.config.stash[_SENT] = len(MEASURED)
    return report


_SENT = pytest.StashKey[int]()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if getattr(report, "node", None) is not None:  # a worker's report, on the controller
        MEASURED.extend(value for name, value in report.user_properties if name == MEASURED_PROPERTY)


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    if MEASURED:
        terminalreporter.section("HBase cluster measurements")
        for line in MEASURED:
            terminalreporter.write_line(line)
