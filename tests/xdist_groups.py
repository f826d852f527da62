"""The default run on 2 workers (pyproject's addopts ``-n 2``) with each heavy session fixture started
on ONE worker: a pytest-xdist scheduler whose work unit is a *resource group*.

Why not xdist's own ``--dist loadgroup``: it tags a marked test by rewriting ``item._nodeid``, which
pytest 9 no longer reads (the id lives in ``item._id``), so the marks had no effect and two 3-server
clusters started (issue 43). The group here is read from what each test really uses:

- the fixtures it requests, the closure included (``item.fixturenames``): ``hbase_cluster_session``
  -> ``cluster``, ``secure_hbase`` -> ``secure``, ``phoenix_url`` -> ``phoenix``,
  ``connectionless_oracle`` -> ``phoenix-oracle``, in that order when a test asks for several (its
  other fixture then also starts on that worker: e.g. one secure test also asks for ``hbase``);
- a test marked ``hbase`` / ``hbase_cluster`` / ``secure`` that asks for none of them (it takes the
  session HBase through ``request.getfixturevalue``) goes by its marker, except the ``hbase_lines``
  tests, which start their own line's HBase per module;
- every other test goes with the heavy group of its file when the file has exactly one (its
  module-scoped fixtures, e.g. a SparkSession, then start once), else its file is its unit.

Tests on the standalone ``hbase`` fixture are one unit per file, not one group: each worker starts
at most one standalone HBase (a session fixture) and the two workers share that load, which one
group on one worker could not (the HBase tests are about half of the suite's time).

A worker stops an exclusive fixture (cluster, Kerberos, Phoenix) as soon as it has run the last
test of that fixture's unit, instead of at its session's end: all of that unit is on this worker,
and the JVMs left idle would take CPU from the tests still running on the 2 cores.

Each worker writes {node id: unit} after its collection into a folder the controller hands it
(``workerinput``); the controller's scheduler (:class:`ResourceScheduling`) reads it when all
collections are in and queues the units longest first (:data:`LONG`, measured), so the long ones do
not start last and leave a worker idle at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

# (fixture in the test's closure, unit); the first that matches wins.
HEAVY_FIXTURES = (
    ("hbase_cluster_session", "cluster"),
    ("secure_hbase", "secure"),
    ("phoenix_url", "phoenix"),
    ("connectionless_oracle", "phoenix-oracle"),
)
# The units known to take over a minute, longest first: the shared groups, then files (seconds,
# setup included, measured on the 2-core machine at load ~15 from other sessions: issue 43; only
# their order matters). A unit not listed goes after them (xdist puts those with more tests first).
# A stale number costs balance at the end of the run, never a second start of a heavy fixture.
LONG = {
    "cluster": 1250,
    "secure": 540,
    "phoenix": 460,
    "tests/hbase/test_readme_commands.py": 300,
    "tests/hbase/test_benchmarks_smoke.py": 300,
    "tests/hbase/test_bulkload_online.py": 200,
    "tests/hbase/test_autopilot.py": 180,
    "tests/property/test_compiled.py": 160,
    "tests/hbase/test_watch_regions_hbase.py": 160,
    "tests/property/test_verdict_sweep.py": 155,
    "tests/hbase/test_migrate_online.py": 150,
    "tests/hbase/test_splitsim_hbase.py": 150,
    "phoenix-oracle": 130,
    "tests/unit/test_native_routes.py": 130,
    "tests/browser/test_serve_hbase.py": 120,
    "tests/unit/test_serve_patterns.py": 100,
    "tests/hbase/test_replication_sink_faults.py": 100,
    "tests/hbase/test_existing_hbase.py": 100,
    "tests/unit/test_splitsim.py": 90,
    "tests/hbase/test_live_hbase.py": 80,
    "tests/unit/test_cli_bad_inputs.py": 70,
}
GROUPS_DIR = "keyshape_groups_dir"


def unit_of(item: pytest.Item) -> str | None:
    """The shared group a test belongs to by its fixtures or markers, or None (then its file's)."""
    names = set(getattr(item, "fixturenames", ()))
    for fixture, group in HEAVY_FIXTURES:
        if fixture in names:
            return group
    if "hbase" in names:
        return None  # a standalone-HBase test: its file is its unit
    markers = {m.name for m in item.iter_markers()}
    if "hbase_cluster" in markers:
        return "cluster"
    return None


def units(items: list[pytest.Item]) -> dict[str, str]:
    """{node id: unit} for the collected items."""
    own = {item.nodeid: unit_of(item) for item in items}
    by_file: dict[str, set[str]] = {}
    for nodeid, group in own.items():
        if group is not None:
            by_file.setdefault(nodeid.split("::", 1)[0], set()).add(group)
    out = {}
    for nodeid, group in own.items():
        file = nodeid.split("::", 1)[0]
        if group is None:
            heavy = by_file.get(file, set())
            group = next(iter(heavy)) if len(heavy) == 1 else file
        out[nodeid] = group
    return out


# --- worker side --------------------------------------------------------------------------------

_LEFT = pytest.StashKey[dict[str, set[str]]]()  # exclusive unit -> its tests not yet run here
_STARTED = pytest.StashKey[dict[str, Any]]()  # exclusive fixture -> its FixtureDef, once a test used it


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    folder = getattr(config, "workerinput", {}).get(GROUPS_DIR)
    if folder:
        found = units(items)
        path = Path(folder) / f"{config.workerinput['workerid']}.json"  # type: ignore[attr-defined]
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(found))
        tmp.replace(path)  # whole or absent: the controller reads it after this worker's collection
        exclusive = {group for _, group in HEAVY_FIXTURES}
        left: dict[str, set[str]] = {}
        for nodeid, unit in found.items():
            if unit in exclusive:
                left.setdefault(unit, set()).add(nodeid)
        config.stash[_LEFT] = left
        config.stash[_STARTED] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    result = yield
    left = item.config.stash.get(_LEFT, None)
    started = item.config.stash.get(_STARTED, {})
    # The FixtureDefs a test resolved (pytest's own record; a session fixture's hooks would run on
    # the session node, which this conftest's hooks do not reach).
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    for fixture, unit in HEAVY_FIXTURES if left else ():
        tests = left.get(unit) if left else None
        if tests is None or item.nodeid not in tests:
            continue
        if defs.get(fixture):
            started[fixture] = defs[fixture][-1]
        tests.discard(item.nodeid)
        if not tests and fixture in started:
            started.pop(fixture).finish(item._request)  # type: ignore[attr-defined]  # idempotent: the session's end finds it finished
    return result


# --- controller side ----------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist") or not config.getoption("numprocesses", None):
        return
    config.stash[_DIR] = tempfile.mkdtemp(prefix="keyshape-xdist-")


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_DIR, None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


_DIR = pytest.StashKey[str]()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    node.workerinput[GROUPS_DIR] = node.config.stash[_DIR]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") != "load" or _DIR not in config.stash:
        return None  # an explicit --dist other than the default gets xdist's own scheduler
    return _scheduler_class()(config, log)


def _scheduler_class() -> type:
    from xdist.scheduler import LoadScopeScheduling

    class ResourceScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """LoadScopeScheduling whose scope is the test's unit (:func:`units`), queued longest first."""

        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            self._units: dict[str, str] | None = None
            self._ordered = False

        def _split_scope(self, nodeid: str) -> str:
            if self._units is None:
                self._units = _read_units(self.config.stash[_DIR])
            return self._units.get(nodeid) or nodeid.split("::", 1)[0]

        def _assign_work_unit(self, node: Any) -> None:
            # schedule() builds the queue in collection order and assigns from it at once: the
            # first assignment is the one place to put the long units first.
            if not self._ordered:
                self._ordered = True
                self.workqueue = OrderedDict(sorted(self.workqueue.items(), key=lambda kv: -LONG.get(kv[0], 0)))
                log_units(self.workqueue)
            super()._assign_work_unit(node)

    return ResourceScheduling


def _read_units(folder: str) -> dict[str, str]:
    found = sorted(Path(folder).glob("*.json"))
    if not found:
        return {}
    return json.loads(found[0].read_text())


def log_units(workqueue: Any) -> None:
    """With KEYSHAPE_XDIST_LOG=path, the units and their sizes in queue order (to check grouping)."""
    target = os.environ.get("KEYSHAPE_XDIST_LOG")
    if target:
        with open(target, "a") as f:
            for scope, tests in workqueue.items():
                f.write(f"unit {scope}: {len(tests)} tests\n")
