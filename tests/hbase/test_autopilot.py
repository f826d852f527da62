"""``keyshape autopilot`` end to end on the real standalone HBase (issue 41).

An independent writer process (tests/autopilot_writer.py) puts new rows at a steady rate: a
sequential key (the event time first), or a hot tenant's (the tenant, then its event time; 9
writes in 10 are one tenant's). The autopilot is run as an operator runs it, a separate process
each time:

1. dry run: a bounded poll shows HOTSPOT; the learned write rate is within ``RATE_FACTOR`` of
   the writer's true rate (rows it had acknowledged / its seconds); the chosen design's replayed
   busiest share is near fair (at most ``NEAR_FAIR`` x 1 / its regions) while the current
   design's replay is the hot spot; the plan's schema loads and its page is written;
2. ``--apply``: the online migration of the saved plan starts while the writer writes;
3. the writer stopped, ``--cutover``: caught up, verified, the peer removed; then the referee
   reads OLD and NEW itself and finds them equal cell for cell.

For the hot tenant the fix must salt WITHIN the tenant: the chosen design's salt hashes more than
the tenant (a hash of the tenant alone sends all of its rows to one bucket), which the replay
shows as near fair.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from autopilot_e2e import RATE_FACTOR, autopilot, check_common, loop, say, schema_file, start_writer

from keyshape.analysis.advise.spec import load_spec
from keyshape.ops.autopilot.safety import cluster_problems
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema
from keyshape.store.hbase import HBaseStore

pytestmark = pytest.mark.hbase


def test_sequential_table_hot_to_fixed_online(hbase_store: HBaseStore, hbase: Any, tmp_path: Path) -> None:
    r = loop(hbase_store, hbase.url, tmp_path, "ap_seq", tenant=False)
    check_common(r, tmp_path)
    new: KeySchema = r["new_schema"]
    assert new.prefix.salted, new.prefix
    say("sequential", r)


def test_hot_tenant_table_salted_within_the_tenant(hbase_store: HBaseStore, hbase: Any, tmp_path: Path) -> None:
    r = loop(hbase_store, hbase.url, tmp_path, "ap_tenant", tenant=True)
    check_common(r, tmp_path)
    new: KeySchema = r["new_schema"]
    assert new.prefix.salted and set(new.hash_fields) - {"tenant"}, (new.prefix, new.hash_fields)  # the tenant's rows spread
    say("hot tenant", r)


def test_diagnosis_from_serves_history_db(hbase_store: HBaseStore, hbase: Any, tmp_path: Path) -> None:
    """``--db``: the history a running ``keyshape serve`` keeps (here serve's own Poller, polling
    every second while the writer writes) is what the autopilot diagnoses and learns from."""
    from keyshape.serve.history import History
    from keyshape.serve.poller import Poller
    from keyshape.store import open_store

    path, old = schema_file(tmp_path, "ap_db", tenant=False)
    create_table_from_schema(hbase_store, old)
    writer = start_writer(hbase.url, path, tmp_path / "writer.log", False)
    db = tmp_path / "serve.sqlite"
    history = History(db)
    poller = Poller(lambda: open_store(hbase.url), history, ["ap_db"], {"ap_db": old}, 1.0)
    try:
        for _ in range(7):
            assert poller.poll_once()
            time.sleep(1)
    finally:
        writer.send_signal(15)
        assert writer.wait(60) == 0
        if poller.store is not None:
            poller.store.close()
        history.close()
    true = json.loads((tmp_path / "writer.log").read_text().strip().splitlines()[-1])
    out = autopilot(
        "ap_db",
        "--hbase",
        hbase.url,
        "--schema",
        str(path),
        "--db",
        str(db),
        "--stage",
        "learn",
        "--state",
        str(tmp_path / "s.json"),
        "--json",
        str(tmp_path / "r.json"),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["diagnosis"]["verdict"] == "hotspot" and str(db) in r["diagnosis"]["source"], r["diagnosis"]
    assert r["stopped_after"] == "learn" and r["advise"] is None
    rate = true["rows"] / true["seconds"]
    assert rate / RATE_FACTOR <= r["learned"]["write_rate"] <= rate * RATE_FACTOR, (r["learned"]["write_rate"], rate)
    # the learned WORKLOAD.toml alone on stdout (`> WORKLOAD.toml`), for the operator to correct and pass back
    written = tmp_path / "W.toml"
    written.write_text(out.stdout)
    spec = load_spec(written)
    assert spec.rows_per_second == pytest.approx(r["learned"]["write_rate"], rel=1e-3) and "diagnose:" in out.stderr


def test_prove_measures_on_scratch_tables_and_drops_them(hbase_store: HBaseStore, hbase: Any, tmp_path: Path) -> None:
    """``--prove``: the chosen and the current design loaded into scratch tables of the same
    cluster and measured; the plan's copy rate is the proof's measured one; nothing is left."""
    path, old = schema_file(tmp_path, "ap_prove", tenant=False)
    create_table_from_schema(hbase_store, old)
    writer = start_writer(hbase.url, path, tmp_path / "writer.log", False)
    try:
        time.sleep(2)
        out = autopilot(
            "ap_prove", "--hbase", hbase.url, "--schema", str(path), "--poll-seconds", "5", "--interval", "1", "--prove",
            "--state", str(tmp_path / "s.json"), "--out-dir", str(tmp_path), "--json", str(tmp_path / "r.json"),
        )  # fmt: skip
    finally:
        writer.send_signal(15)
        assert writer.wait(60) == 0
    assert out.returncode == 0, out.stdout + out.stderr
    r = json.loads((tmp_path / "r.json").read_text())
    measured = {d["name"]: d for d in r["prove"]["proof"]["designs"]}
    assert r["predict"]["chosen"] in measured and any(d["hand"] for d in measured.values()), measured.keys()
    chosen = measured[r["predict"]["chosen"]]
    assert chosen["write_rows_per_s"] > 0 and r["prove"]["contradictions"] == []
    assert r["plan"]["copy_rows_per_s"] == pytest.approx(chosen["write_rows_per_s"])
    assert "the proof's measured write rate" in r["plan"]["estimates"][0]
    assert not [t for t in hbase_store.list_tables() if t.startswith("ksap_prove")]


def test_ctrl_c_during_the_proof_leaves_no_scratch_table(hbase_store: HBaseStore, hbase: Any, tmp_path: Path) -> None:
    """Ctrl-C while the proof's scratch tables exist: the run ends saying so (exit 130, one line,
    no traceback) and drops them; no plan is saved (the state holds only the stages that ended)."""
    import signal
    import subprocess
    import sys

    path, old = schema_file(tmp_path, "ap_intr", False)
    create_table_from_schema(hbase_store, old)
    writer = start_writer(hbase.url, path, tmp_path / "writer.log", False)
    time.sleep(2)
    log = tmp_path / "run.log"
    args = ["autopilot", "ap_intr", "--hbase", hbase.url, "--schema", str(path), "--poll-seconds", "4", "--interval", "1", "--prove"]
    args += ["--state", str(tmp_path / "s.json"), "--out-dir", str(tmp_path)]
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "keyshape.cli", *args], stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 240
        while not [t for t in hbase_store.list_tables() if t.startswith("ksap_prove")]:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(120)
    finally:
        writer.send_signal(15)
        writer.wait(60)
    text = log.read_text()
    assert code == 130 and "interrupted" in text and "Traceback" not in text, text
    assert not [t for t in hbase_store.list_tables() if t.startswith("ksap_prove")]
    # the master's view the refusals read: a settled standalone has no dead server, no region in transition
    assert hbase_store.regions_in_transition() == [] and cluster_problems(hbase_store) == []
    state = json.loads((tmp_path / "s.json").read_text())
    assert "plan" not in state and "prove" not in state["stages"] and "predict" in state["stages"]
