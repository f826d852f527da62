"""Shared parts of the ``migrate --online`` end-to-end tests (issue 32: tests/hbase/test_migrate_online.py
on the standalone HBase, tests/cluster/test_migrate_online_cluster.py on the 3-region-server one):
the CLI run as a separate process, the independent writer process (tests/online_writer.py), and the
referee that reads OLD and NEW itself and compares them cell for cell (decoded key, family,
qualifier, timestamp and value of every stored version).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from keyshape.ops.migrate_online import PURGE_DELETES, peer_id_for
from keyshape.schema import KeySchema
from keyshape.store.hbase import HBaseStore

ROOT = Path(__file__).resolve().parents[1]
WRITER = ROOT / "tests" / "online_writer.py"
BAD_KEY = b"zz-not-a-key"  # a row OLD's schema cannot decode (the referee leaves it out)

Content = dict[tuple[Any, ...], dict[bytes, list[tuple[int, bytes]]]]


def cli(*args: str, log: Path) -> subprocess.Popen[str]:
    """``keyshape ARGS`` as a user runs it, stdout and stderr into ``log``."""
    out = open(log, "w")  # noqa: SIM115 - the process owns it until it ends
    return subprocess.Popen([sys.executable, "-m", "keyshape.cli", *args], stdout=out, stderr=subprocess.STDOUT, text=True, cwd=ROOT)


def start_writer(url: str, schema_path: Path, log: Path, rows: int, rate: float = 150, seed: int = 32) -> subprocess.Popen[str]:
    """The independent writer on ids ``0..rows-1`` at ``rate`` operations/s, once it has started."""
    out = open(log, "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), url, str(schema_path), "--rows", str(rows), "--rate", str(rate), "--seed", str(seed)],
        stdout=out,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while "started" not in log.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    return proc


def stop_writer(proc: subprocess.Popen[str], log: Path) -> dict[str, int]:
    """SIGTERM the writer; its counts (it must exit 0: every write it made was acknowledged)."""
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0, log.read_text()
    return dict(json.loads(log.read_text().strip().splitlines()[-1]))


def content(store: HBaseStore, schema: KeySchema) -> Content:
    """The referee's view: decoded key -> column -> every stored (timestamp, value)."""
    return {
        tuple(sorted(schema.decode(key).items())): {c: sorted(v) for c, v in columns.items()}
        for key, columns in store.scan_versions(schema.table.full_name)
        if key != BAD_KEY
    }


def wait_for(what: str, check: Any, timeout: float = 120.0, every: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f} s"
        time.sleep(every)


def check_converged(store: HBaseStore, old: KeySchema, new: KeySchema, counts: dict[str, int], output: str, filled: int, writer_rows: int) -> None:
    """After the cut-over (OLD was filled with ids ``0..filled-1``, the writer worked on ids
    ``0..writer_rows-1``): OLD and NEW equal cell for
    cell, rows deleted and not put again absent from both, the stream's final counts consistent,
    the peer gone and NEW's delete-marker setting given back."""
    assert counts["ops"] > 500 and counts["row_deletes"] > 20, counts
    old_cells, new_cells = content(store, old), content(store, new)
    ids = {dict(k)["event_id"] for k in old_cells}
    assert len(old_cells) > filled // 2
    assert len(ids) < writer_rows, "some rows should be deleted (and not put again) in OLD"
    assert max(ids) >= filled, "the writer's new rows are there"
    differ = set(old_cells) ^ set(new_cells) | {k for k in set(old_cells) & set(new_cells) if old_cells[k] != new_cells[k]}
    assert old_cells == new_cells, f"{len(differ)} row(s) differ, e.g. {sorted(differ)[:3]}"
    assert "verify: OK" in output and "cut over" in output
    # the cut-over run's stream counts are consistent (a batch refused before the copy started,
    # or failed, is received again: then more received than applied); it may have received
    # nothing at all: the writers stopped before it started, and an earlier run applied their edits
    final = re.search(r"^done: .*stream ([\d,]+) cells received, ([\d,]+) applied, ([\d,]+) batches refused", output, re.M)
    assert final is not None, output
    received, applied, refused = (int(g.replace(",", "")) for g in final.groups())
    assert applied <= received and (refused > 0 or applied == received), final.group(0)
    assert peer_id_for(old, new) not in store.replication_peers()
    assert set(store.family_attributes(new.table.full_name, PURGE_DELETES, configuration=True).values()) == {None}


def cleanup(store: HBaseStore, *schemas: KeySchema) -> None:
    """Remove the migration's peer (if a failed run left it) and the tables."""
    peer = peer_id_for(schemas[0], schemas[1])
    if peer in store.replication_peers():
        store.remove_replication_peer(peer)
    for schema in schemas:
        if store.table_exists(schema.table.full_name):
            store.delete_table(schema.table.full_name)
