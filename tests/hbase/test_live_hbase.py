"""`keyshape create`, `load` and `watch` against a real standalone HBase (marked `hbase`).

- create from examples/orders.toml gives exactly the intended regions, read back from hbase:meta;
- load then watch: the write requests the region servers count spread over the regions as
  `analyze_schema` predicts for the same rows and seed;
- HBase killed (SIGKILL) and restarted in the middle of a load: every acknowledged row is there.

Each test uses its own table name, so they can share the session's HBase.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hbase_fixture import scan_after_restart

from keyshape.analysis.designs import analyze_schema
from keyshape.ops.live import LiveHeat, live_analysis, load_workload, row_value, watch
from keyshape.schema import KeySchema
from keyshape.workload import generate

pytestmark = pytest.mark.hbase

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "examples" / "orders.toml"
# The orders design independently of keyshape's split code: 100 two-digit buckets "00".."99"
# (hashCode % 100), 20 regions of 5 buckets each.
ORDERS_SPLITS = [b"%02d" % (5 * i) for i in range(1, 20)]


def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def orders_copy(tmp_path: Path, stem: str = "orders") -> tuple[Path, KeySchema]:
    """examples/orders.toml under a fresh table name (namespace 'shop' kept)."""
    name = f"{stem}_{uuid.uuid4().hex[:8]}"
    text = ORDERS.read_text().replace('name = "orders"', f'name = "{name}"', 1)
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path, KeySchema.load(path)


def open_hbase(url: str) -> Any:
    from keyshape.store import open_store

    return open_store(url)


def create(store: Any, schema: KeySchema) -> None:
    from keyshape.store import ensure_table
    from keyshape.store.base import check_regions

    ensure_table(store, schema.table, schema.split_keys())
    check_regions(store.regions(schema.table.full_name), schema.split_keys())


def test_create_orders_gives_exactly_the_intended_regions(hbase: Any, tmp_path: Path) -> None:
    path, schema = orders_copy(tmp_path)
    proc = run("create", str(path), "--hbase", hbase.url, "--user", "ks-creator")
    assert proc.returncode == 0, proc.stderr
    assert "20 regions" in proc.stdout
    assert f"connected to HBase at {hbase.url} as user ks-creator" in proc.stdout
    store = open_hbase(hbase.url)
    try:
        regions = store.regions(schema.table.full_name)
    finally:
        store.close()
    assert [r.start for r in regions] == [b""] + ORDERS_SPLITS
    assert [r.end for r in regions] == ORDERS_SPLITS + [b""]
    # Creating it again is refused in one line.
    line = one_error_line(run("create", str(path), "--hbase", hbase.url))
    assert schema.table.name in line and "exist" in line


def test_unknown_table_and_wrong_namespace_are_one_line(hbase: Any) -> None:
    line = one_error_line(run("watch", "no_such_table_xyz", "--hbase", hbase.url, "--samples", "1"))
    assert "no_such_table_xyz" in line
    line = one_error_line(run("watch", "no_such_ns:orders", "--hbase", hbase.url, "--samples", "1"))
    assert "no_such_ns" in line


def test_load_then_watch_spreads_writes_as_the_analyzer_predicted(hbase: Any, tmp_path: Path) -> None:
    rows = 20_000
    path, schema = orders_copy(tmp_path, "orders_live")
    table = schema.table.full_name
    store = open_hbase(hbase.url)
    try:
        create(store, schema)
        seen = {"writes": 0}

        def on_sample(sample: Any) -> bool:
            seen["writes"] += sample.total_writes
            return seen["writes"] < rows

        heat = LiveHeat()
        heat.add(store.regions(table))
        watcher = threading.Thread(target=watch, args=(store, table, 1.0), kwargs={"duration": 240.0, "on_sample": on_sample, "heat": heat})
        watcher.start()
        proc = run("load", str(path), "--hbase", hbase.url, "--rows", str(rows))
        watcher.join(300)
        assert not watcher.is_alive()
    finally:
        store.close()
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {rows:,} rows to {table}" in proc.stdout
    live = live_analysis(heat, name=table)
    predicted = analyze_schema(schema, rows, seed=0)
    assert live.rows == rows  # one write request per put, every put counted
    assert [r.start for r in live.regions] == [r.start for r in predicted.regions]
    for got, want in zip(live.regions, predicted.regions):
        assert got.share == pytest.approx(want.share, abs=0.005), got.label
    assert live.verdict == predicted.verdict == "balanced"
    # `keyshape watch` draws the live heat map from the cluster while more rows are written.
    png, html = tmp_path / "live.png", tmp_path / "live.html"
    watcher_cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "keyshape.cli",
            "watch",
            table,
            "--hbase",
            hbase.url,
            "--samples",
            "8",
            "--interval",
            "1",
            "--png",
            str(png),
            "--html",
            str(html),
            "--schema",
            str(path),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    # Rows are written until the watch ends, not for a fixed while: on a busy machine its
    # baseline poll can come after a short load, and 8 empty samples draw no map.
    def write_until_the_watch_ends() -> None:
        store = open_hbase(hbase.url)
        try:
            seed = 1
            while watcher_cli.poll() is None:
                load_workload(store, schema, 1_000, seed=seed)
                seed += 1
        finally:
            store.close()

    writer = threading.Thread(target=write_until_the_watch_ends)
    writer.start()
    try:
        out, err = watcher_cli.communicate(timeout=120)
    finally:
        writer.join(timeout=120)
    assert watcher_cli.returncode == 0, err
    assert re.search(r"BALANCED|SKEWED|HOTSPOT", out)
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert "data:image/png;base64," in html.read_text()
    # --schema: region labels decoded from the live start keys (mod buckets).
    assert "start decoded" in out and re.search(r"bucket \d\d", out)
    assert re.search(r"<td class=key>bucket \d\d</td>", html.read_text())


def test_kill_and_restart_during_a_load_loses_no_acknowledged_row(hbase: Any, tmp_path: Path) -> None:
    instance = hbase.require_standalone()
    rows, batch = 30_000, 500
    _, schema = orders_copy(tmp_path, "orders_crash")
    table = schema.table.full_name
    store = open_hbase(hbase.url)
    create(store, schema)
    half_way = threading.Event()
    killed = threading.Event()
    outcome: dict[str, Any] = {}

    def progress(done: int, total: int) -> None:
        if done >= rows // 3 and not killed.is_set():
            half_way.set()
            killed.wait(120)  # hold the load here until HBase is dead, then keep writing

    def load() -> None:
        try:
            outcome["result"] = load_workload(store, schema, rows, batch, progress, keep_going=True)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            outcome["error"] = exc

    loader = threading.Thread(target=load)
    loader.start()
    try:
        assert half_way.wait(300), "the load never got a third of the way"
        instance.kill()
        killed.set()
        time.sleep(3)  # let some batches hit the dead cluster
        instance.start(timeout=240)
        loader.join(900)
        assert not loader.is_alive(), "the load hung after the restart"
    finally:
        killed.set()
    if "error" in outcome:
        raise outcome["error"]
    result = outcome["result"]
    keys = [k for cols in generate(schema, rows) for k in schema.encode_many(cols)]
    failed = set(result.failed)
    acknowledged = [(i, k) for i, k in enumerate(keys) if k not in failed]
    assert result.rows == len(acknowledged) == rows - len(result.failed)
    assert result.rows >= rows // 3
    store.close()
    stored = scan_after_restart(hbase.url, table)
    present = [k for _, k in acknowledged if k in stored]
    assert len(present) == len(acknowledged), f"{len(acknowledged) - len(present)} acknowledged row(s) lost after kill -9 and restart"
    assert len(stored) >= len(acknowledged)
    for i, k in acknowledged[:: max(1, len(acknowledged) // 500)]:
        assert stored[k] == {b"d:v": row_value(i)}
    assert re.fullmatch(r"shop:orders_crash_[0-9a-f]{8}", table)
