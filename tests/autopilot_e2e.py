"""The autopilot's end-to-end loop, shared by the standalone test (tests/hbase/test_autopilot.py)
and the 3-region-server one (tests/cluster/test_autopilot_cluster.py): an independent writer
process (tests/autopilot_writer.py) on a sequential or a hot-tenant table; the autopilot's dry
run, ``--apply`` while the writer writes, the writer stopped, ``--cutover``; the referee reading OLD
and NEW cell for cell; then the writer on NEW and a bounded poll measuring NEW's busiest share
live."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from online_migration import content

from keyshape.ops.autopilot.predict import NEAR_FAIR
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema
from keyshape.store.hbase import HBaseStore

ROOT = Path(__file__).resolve().parents[1]
WRITER = ROOT / "tests" / "autopilot_writer.py"
RATE = 80.0  # rows a second the writer puts
RATE_FACTOR = 3.0  # learned vs true write rate: generous, so a loaded machine never flakes it
LIVE_FACTOR = 1.75  # NEW's busiest region share measured live, at most this many fair shares

FAMILIES = '[[table.families]]\nname = "d"\n'
TIME_ID = """
[[key.fields]]
name = "event_time"
type = "timestamp"
encoding = "text"
[[key.fields]]
name = "event_id"
type = "int64"
encoding = "text"
width = 12
"""
TENANT = """
[[key.fields]]
name = "tenant"
type = "string"
"""


def schema_file(tmp: Path, name: str, tenant: bool) -> tuple[Path, KeySchema]:
    text = f'[table]\nname = "{name}"\n{FAMILIES}\n[key]\nseparator = "_"\n' + (TENANT if tenant else "") + TIME_ID
    path = tmp / f"{name}.toml"
    path.write_text(text)
    return path, KeySchema.load(path)


def start_writer(url: str, schema: Path, log: Path, tenants: bool, rate: float = RATE) -> subprocess.Popen[str]:
    out = open(log, "w")  # noqa: SIM115 - the process owns it until it ends
    args = [sys.executable, str(WRITER), url, str(schema), "--rate", str(rate)] + (["--tenants"] if tenants else [])
    proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while "started" not in log.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    return proc


def autopilot(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", "autopilot", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def loop(store: HBaseStore, url: str, tmp: Path, name: str, tenant: bool, rate: float = RATE) -> dict[str, Any]:
    path, old = schema_file(tmp, name, tenant)
    create_table_from_schema(store, old)
    log = tmp / "writer.log"
    writer = start_writer(url, path, log, tenant, rate)
    try:
        time.sleep(2)
        common = [name, "--hbase", url, "--schema", str(path), "--state", str(tmp / "state.json"), "--out-dir", str(tmp)]
        dry = autopilot(*common, "--poll-seconds", "8", "--interval", "1", "--json", str(tmp / "run.json"), "--html", str(tmp / "plan.html"))
        assert dry.returncode == 0, dry.stdout + dry.stderr
        print(dry.stdout)
        result = json.loads((tmp / "run.json").read_text())
        applied = autopilot(*common, "--apply", "--set-replication-scope")
        assert applied.returncode == 0, applied.stdout + applied.stderr
        assert "started the online migration" in applied.stdout
    finally:
        proc = writer
        proc.send_signal(15)
        assert proc.wait(60) == 0, log.read_text()
    true = json.loads(log.read_text().strip().splitlines()[-1])
    cut = autopilot(*common, "--cutover")
    assert cut.returncode == 0, cut.stdout + cut.stderr
    assert "verify OLD == NEW" in cut.stdout, cut.stdout
    new = KeySchema.load(result["plan"]["schema_path"])
    old_cells, new_cells = content(store, old), content(store, new)
    assert len(old_cells) == true["rows"] and old_cells == new_cells  # the referee: cell for cell, every row the writer put
    result["true_rate"] = true["rows"] / true["seconds"]
    result["new_schema"] = new
    # after: the writer on NEW (its own key now), NEW's busiest region share measured live
    new_path = Path(result["plan"]["schema_path"])
    log2 = tmp / "writer-new.log"
    writer = start_writer(url, new_path, log2, tenant, rate)
    try:
        time.sleep(1)
        after = autopilot(
            new.table.full_name, "--hbase", url, "--schema", str(new_path), "--stage", "diagnose", "--poll-seconds", "8",
            "--interval", "2", "--state", str(tmp / "after.json"), "--json", str(tmp / "after-run.json"),
        )  # fmt: skip
    finally:
        writer.send_signal(15)
        assert writer.wait(60) == 0, log2.read_text()
    assert after.returncode == 0, after.stdout + after.stderr
    result["after"] = json.loads((tmp / "after-run.json").read_text())["diagnosis"]
    result["after_regions"] = len(store.regions(new.table.full_name))
    return result


def check_common(r: dict[str, Any], tmp: Path) -> None:
    assert r["diagnosis"]["verdict"] == "hotspot", r["diagnosis"]
    learned = r["learned"]["write_rate"]
    assert r["true_rate"] / RATE_FACTOR <= learned <= r["true_rate"] * RATE_FACTOR, (learned, r["true_rate"])
    plan = r["plan"]
    assert plan["current_share"] >= 0.9, plan["current_share"]  # the replay of the current design is the hot spot
    fair = 1 / plan["new_regions"]
    assert plan["new_regions"] >= 2 and plan["new_share"] <= NEAR_FAIR * fair, (plan["new_share"], plan["new_regions"])
    live = r["after"]["busiest_share"]
    assert live <= LIVE_FACTOR / r["after_regions"], (live, r["after_regions"])  # near fair on the live cluster, measured
    page = (tmp / "plan.html").read_text()
    assert "busiest region" in page and plan["new_table"] in page


def say(what: str, r: dict[str, Any]) -> None:
    p = r["plan"]
    print(f"{what}: learned {r['learned']['write_rate']:.1f} rows/s vs true {r['true_rate']:.1f}; ", end="")
    print(f"busiest {p['current_share']:.2f} -> {p['new_share']:.2f} ({p['design']}, {p['new_regions']} regions); ", end="")
    print(f"live on NEW {r['after']['busiest_share']:.2f} over {r['after_regions']} regions")
