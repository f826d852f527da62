"""`keyshape split-plan --apply` on a real HBase cuts a loaded region 7 times without waiting for
HBase's chores (issue 30: 9 min 16 s for 7 splits on an idle standalone) and keeps every row. How
fast is measured by benchmarks/bench_split_plan.py, not asserted here (issue 43: no measured time
in the default suite).

Upstream behaviour pinned here (HBase 2.6): a daughter of a split cannot be split again while its
stores hold reference files to the parent's files; the daughter compacts them away as it opens,
but HStore.hasReferences() also counts the compacted files (HBASE-20940) until the
CompactedHFilesDischarger chore archives them (hbase.hfile.compaction.discharger.interval, 2 min by
default). Seven cuts in one region make a split tree three levels deep, so waiting for the chore
costs at least two intervals (4 min); closing a region archives its compacted files, so apply_plan
reopens each daughter it has to cut again as soon as its compaction is done.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from keyshape.core.hbytes import to_bytes_binary
from keyshape.errors import StoreError
from keyshape.ops.splitplan import PlannedSplit, SplitPlan, _split_levels
from keyshape.schema import TableSpec

ROOT = Path(__file__).resolve().parents[2]
ROWS = 300_000
FLUSHES = 4


def _key(i: int) -> bytes:
    return b"r%08d" % i


TABLE = f"sp30_speed_{uuid.uuid4().hex[:8]}"
OTHER = f"sp30_other_{uuid.uuid4().hex[:8]}"
AGAIN = f"sp30_again_{uuid.uuid4().hex[:8]}"


def test_cuts_go_in_rounds_of_a_balanced_tree() -> None:
    """7 cuts of one region in 3 rounds, 2 of another in 2; a round cuts each region at most
    once, and only regions the rounds before made (so nothing waits on a daughter of its own
    round). The old order (middle first, then the rest in key order) needed a round per cut."""
    a = [b"a%d" % i for i in range(1, 8)]
    b = [b"x1", b"x2"]
    plan = SplitPlan("t", [b"m"], [PlannedSplit(0, b"", b"m", k) for k in a] + [PlannedSplit(1, b"m", b"", k) for k in b])
    levels = _split_levels(plan)
    assert levels == [[b"a4", b"x2"], [b"a2", b"a6", b"x1"], [b"a1", b"a3", b"a5", b"a7"]]
    bounds = [b"", b"m"]
    for level in levels:
        regions = [max(x for x in bounds if x <= k) for k in level]
        assert len(set(regions)) == len(level)  # one cut per region in a round
        bounds = sorted(bounds + level)
    assert bounds[1:] == sorted([b"m", *a, *b])


@pytest.fixture
def store(hbase: Any) -> Iterator[Any]:
    """A store on the session's HBase; the test's two tables are dropped after."""
    from keyshape.store.hbase import HBaseStore

    opened = HBaseStore.from_url(hbase.url)
    try:
        yield opened
    finally:
        for name in (TABLE, OTHER, AGAIN):
            if opened.table_exists(name):
                opened.delete_table(name)
        opened.close()


def _load(store: Any, table: str, rows: int) -> None:
    with store.writer(table) as writer:
        for i in range(rows):
            writer.put(_key(i), {b"d:v": b"%020d" % i})
            if (i + 1) % (rows // FLUSHES) == 0:
                writer.flush()
                store.flush_table(table)  # store files: a split leaves the daughters references


@pytest.mark.hbase
def test_a_daughter_splits_again_at_once_by_a_reopen(store: Any) -> None:
    """HBase itself refuses to split a fresh daughter ("NOT splittable": its compacted
    reference files wait for the discharger chore); split_region reopens it and splits."""
    store.create_table(TableSpec(AGAIN))
    _load(store, AGAIN, 40_000)
    store.split_region(AGAIN, _key(20_000))
    with pytest.raises(StoreError, match="NOT splittable"):
        store.split_region(AGAIN, _key(10_000), reopen=False)
    # split_region gives up after its 60-s timeout, under the discharger's 120-s interval: a
    # split that waited for the chore would mostly fail here (no measured time asserted, issue 43).
    daughters = store.split_region(AGAIN, _key(10_000))
    assert [(d.start, d.end) for d in daughters] == [(b"", _key(10_000)), (_key(10_000), _key(20_000))]
    assert [r.start for r in store.regions(AGAIN)] == [b"", _key(10_000), _key(20_000)]
    assert sum(1 for _ in store.scan_keys(AGAIN)) == 40_000


@pytest.mark.hbase
def test_seven_splits_of_one_region_apply_and_keep_every_row(hbase: Any, store: Any) -> None:
    table, other = TABLE, OTHER
    store.create_table(TableSpec(table))
    store.create_table(TableSpec(other), [b"m"])
    store.put(other, b"a", {b"d:v": b"1"})
    _load(store, table, ROWS)
    assert len(store.regions(table)) == 1
    other_before = [(r.name, r.opened_ms) for r in store.region_history(other)]

    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "keyshape.cli", "split-plan", table, "--hbase", hbase.url, "--target-regions", "8", "--apply"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1200,
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    planned = [to_bytes_binary(line.split(", ", 1)[1][1:-1]) for line in proc.stdout.splitlines()]
    assert len(planned) == 7
    # progress: every split reported as it is done
    assert re.findall(r"# split (\d)/7 at ", proc.stderr) == [str(n) for n in range(1, 8)], proc.stderr
    assert [r.start for r in store.regions(table)] == [b"", *sorted(planned)]
    keys = list(store.scan_keys(table))
    assert len(keys) == ROWS and keys == [_key(i) for i in range(ROWS)]
    # the other table was not touched: same regions, not reopened
    assert [(r.name, r.opened_ms) for r in store.region_history(other)] == other_before
    assert store.get(other, b"a") == {b"d:v": b"1"}
    print(f"split-plan --apply, 7 splits of {ROWS:,} rows: {elapsed:.1f} s (benchmarks/bench_split_plan.py measures it)")
