"""``keyshape load-split`` on the real standalone HBase (issue 41): TiKV's load-based split.

A hot band (writes at random keys of one range, the table one region): the hot region's recent
writes, read back by a key-only scan kept to the last minutes' cell timestamps, give a split key
TiKV's scores accept (balance at most 0.25); the replay says the busiest share falls from 100%
to about half; ``--apply`` splits there and the table then has that key as a boundary.

A sequential key: the same scores find a balanced key in the recent writes, but the replay in
time order shows no relief (the newest writes all sort after it), and ``--apply`` refuses.
The writes come from a thread of the test that keeps writing while the command (a separate
process) watches and samples.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from keyshape.schema.specs import TableSpec
from keyshape.store.hbase import HBaseStore

pytestmark = pytest.mark.hbase

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", "load-split", *args], capture_output=True, text=True, cwd=ROOT, timeout=240)


class _Writer:
    """Keeps putting rows (``key_of(i)``) until stopped, from a thread of its own."""

    def __init__(self, store: HBaseStore, table: str, key_of: object) -> None:
        self.stop = threading.Event()
        self.n = 0

        def run() -> None:
            with store.writer(table, batch_size=20) as w:
                while not self.stop.is_set():
                    w.put(key_of(self.n), {b"d:v": b"x"})  # type: ignore[operator]
                    self.n += 1
                    if self.n % 20 == 0:
                        w.flush()
                        time.sleep(0.02)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(30)


def _table(store: HBaseStore, name: str) -> None:
    if store.table_exists(name):
        store.delete_table(name)
    store.create_table(TableSpec(name))


def test_hot_band_splits_where_its_recent_writes_halve(hbase_store: HBaseStore, hbase: object, tmp_path: Path) -> None:
    name = "ls_band"
    _table(hbase_store, name)
    rng = random.Random(41)
    writer = _Writer(hbase_store, name, lambda _i: b"user%05d" % rng.randrange(100_000))
    try:
        time.sleep(2)
        out = _cli(name, "--hbase", hbase.url, "--watch", "3", "--lookback", "120", "--json", str(tmp_path / "ls.json"))  # type: ignore[attr-defined]
        assert out.returncode == 0, out.stdout + out.stderr
        found = json.loads((tmp_path / "ls.json").read_text())
        assert found["split_key"] is not None and found["relieves"], found
        assert found["busiest_share_before"] == 1.0 and found["busiest_share_after"] <= 0.65, found  # the replay's numbers
        assert found["shell"][0].startswith(f"split '{name}', ") and found["split_key"] in found["shell"][0], found
        applied = _cli(name, "--hbase", hbase.url, "--watch", "3", "--lookback", "120", "--apply", "--json", str(tmp_path / "ap.json"))  # type: ignore[attr-defined]
        assert applied.returncode == 0, applied.stdout + applied.stderr
    finally:
        writer.close()
    key = json.loads((tmp_path / "ap.json").read_text())["split_key"]
    starts = [r.start for r in hbase_store.regions(name)]
    assert len(starts) == 2 and starts[1].decode() == key, (starts, key)


def test_sequential_key_split_is_shown_as_no_relief_and_refused(hbase_store: HBaseStore, hbase: object, tmp_path: Path) -> None:
    name = "ls_seq"
    _table(hbase_store, name)
    writer = _Writer(hbase_store, name, lambda i: b"%012d" % i)
    try:
        time.sleep(2)
        out = _cli(name, "--hbase", hbase.url, "--watch", "3", "--lookback", "120", "--apply", "--json", str(tmp_path / "ls.json"))  # type: ignore[attr-defined]
    finally:
        writer.close()
    assert out.returncode != 0 and "no split" in out.stderr, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    assert len(hbase_store.regions(name)) == 1
