"""The autopilot's stages one by one (issue 41), on data shaped as the real HBase gives it: the
observation as serve's history returns it (intervals x key ranges of request deltas, the poller's
verdict body), the table's rows in a store with their cell timestamps (the embedded store: the
same Store protocol; the real HBase end to end is tests/hbase/test_autopilot.py)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from keyshape.analysis.advise.spec import load_spec
from keyshape.errors import BadInput, Refused
from keyshape.ops.autopilot import Observed, diagnose, learn, replay
from keyshape.ops.autopilot.plan import new_schema_toml
from keyshape.ops.autopilot.predict import NEAR_FAIR
from keyshape.ops.autopilot.run import load_state, run
from keyshape.ops.autopilot.safety import PROOF_FACTOR, cluster_problems, proof_problems, refuse
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema
from keyshape.store.embedded import EmbeddedStore

T0 = 1_767_225_600.0  # epoch s of the first poll

SCHEMA = """[table]
name = "events"
[[table.families]]
name = "d"
versions = 2
[[table.families]]
name = "m"

[key]
separator = "_"
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


def _observed(writes: list[list[float]], verdict: str = "hotspot", reads: list[list[float]] | None = None, step: float = 10.0) -> Observed:
    w = np.asarray(writes, dtype=np.float64)
    n = w.shape[1]
    starts = [b""] + [b"%d" % (i + 1) for i in range(n - 1)]
    ends = starts[1:] + [b""]
    body = {"verdict": verdict, "pattern": {"name": "sequential diagonal", "cause": "event_time grows", "fix": "salt it"}}
    return Observed(
        "events", T0 + step * np.arange(len(w)), starts, ends, w, np.asarray(reads, dtype=np.float64) if reads else np.zeros_like(w), body, "test", 1
    )


def test_diagnose_repeats_the_pollers_verdict_and_finds_since_when_the_hot_run_began() -> None:
    # balanced for three intervals, then the last range takes all the writes from interval 3 on
    obs = _observed([[5, 5, 5], [5, 5, 5], [5, 5, 5], [0, 0, 30], [0, 1, 29], [0, 0, 30]])
    d = diagnose(obs)
    assert (d.verdict, d.pattern, d.cause) == ("hotspot", "sequential diagonal", "event_time grows")
    assert d.since == T0 + 20  # the start of interval 3 (it runs from the poll at T0 + 20)
    assert d.intervals == 5 and d.hot


def test_diagnose_refuses_a_history_of_one_poll() -> None:
    with pytest.raises(BadInput, match="too few to judge"):
        diagnose(_observed([[1, 2]]))


@pytest.fixture
def table(tmp_path: Path) -> tuple[EmbeddedStore, KeySchema, Path]:
    path = tmp_path / "events.toml"
    path.write_text(SCHEMA)
    schema = KeySchema.load(path)
    store = EmbeddedStore()
    create_table_from_schema(store, schema)
    for i in range(600):  # a sequential writer: one row a 100 ms, each key its write time
        t = int(T0 * 1000) + 100 * i
        store.put("events", schema.encode({"event_time": t, "event_id": i}), {b"d:v": b"x" * 40}, t)
    return store, schema, path


def test_learn_measures_the_rates_decodes_the_sample_and_writes_a_workload_that_loads(table: Any, tmp_path: Path) -> None:
    store, schema, _ = table
    obs = _observed([[0], [100], [100], [100], [100]], reads=[[0], [20], [20], [20], [20]])
    lr = learn(store, schema, obs)
    assert lr.write_rate == pytest.approx(10.0) and lr.read_rate == pytest.approx(2.0)  # 400 writes, 80 reads over 40 s
    assert lr.rows == 600 and len(lr.keys) == 600 and lr.complete
    assert lr.records["event_id"][:3] == [0, 1, 2] and lr.times[0] == int(T0 * 1000)
    out = tmp_path / "W.toml"
    out.write_text(lr.toml)
    spec = load_spec(out)  # the operator can correct it and pass it back with --queries
    assert spec.rows_per_second == pytest.approx(10.0) and spec.time_field == "event_time"
    assert any("gets of one record" in a for a in lr.assumed) and any("write rate" in m for m in lr.measured)
    assert "# Assumed" in lr.toml and "# Measured" in lr.toml


def test_learn_refuses_a_table_without_a_schema_saying_what_to_give(table: Any) -> None:
    store, _, _ = table
    with pytest.raises(BadInput, match="give its key schema"):
        learn(store, None, _observed([[0], [1]]))


def test_learn_takes_the_read_patterns_from_queries_and_the_write_rate_measured(table: Any, tmp_path: Path) -> None:
    store, schema, _ = table
    w = tmp_path / "given.toml"
    w.write_text(
        '[entity]\nid = ["event_time", "event_id"]\ntime = "event_time"\n[write]\nrows_per_second = 99999\n'
        '[[pattern]]\nname = "last hour"\nkind = "window"\nfields = []\nwindow = "1h"\nrate = 0.5\ngoal_ms = 500\n'
    )
    lr = learn(store, schema, _observed([[0], [50], [50]]), queries=str(w))
    assert lr.spec.rows_per_second == pytest.approx(5.0) and [p.name for p in lr.spec.patterns] == ["last hour"]


def test_replay_of_a_sequential_stream_the_current_key_is_one_region_a_salted_one_near_fair(table: Any) -> None:
    store, schema, _ = table
    lr = learn(store, schema, _observed([[0], [100], [100]]))
    now = replay(lr, schema, "current", "current")
    assert now.busiest_share == 1.0 and len(now.starts) == 1
    salted_text = SCHEMA.replace('separator = "_"', 'separator = "_"\nprefix = { strategy = "mod", buckets = 4 }\nhash_fields = ["event_id"]')
    salted = KeySchema.from_dict(tomllib.loads(salted_text + '\n[splits]\nalgorithm = "prefix"\nregions = 4\n'), source="<salted>")
    r = replay(lr, salted, "salted", "mod 4(event_id)")
    assert len(r.starts) == 4 and r.busiest_share <= NEAR_FAIR * r.fair and r.near_fair
    assert r.values.sum() > 0 and r.keys == 600


def test_new_schema_keeps_the_tables_families_and_versions_and_loads(table: Any) -> None:
    _, schema, _ = table
    design = (
        '[table]\nname = "d01"\n[[table.families]]\nname = "d"\n\n[key]\nseparator = "_"\nprefix = { strategy = "mod", buckets = 2 }\n'
        'hash_fields = ["event_time"]\n\n[[key.fields]]\nname = "event_time"\ntype = "timestamp"\n\n[[key.fields]]\nname = "event_id"\n'
        'type = "int64"\nencoding = "hbase"\n\n[splits]\nalgorithm = "prefix"\nregions = 2\n'
    )
    text = new_schema_toml(schema, design, "events_v2", "a note")
    new = KeySchema.from_dict(tomllib.loads(text))
    assert new.table.full_name == "events_v2" and [(f.name, int(f.versions)) for f in new.table.families] == [("d", 2), ("m", 1)]
    assert new.prefix.salted and len(new.split_keys()) == 1


def test_safety_refuses_a_proof_that_contradicts_the_prediction() -> None:
    fine = SimpleNamespace(measured_share=0.6, predicted_share=0.5)
    off = SimpleNamespace(measured_share=0.5 * PROOF_FACTOR + 0.01, predicted_share=0.5)
    assert proof_problems(fine) == [] and proof_problems(None) == []
    problems = proof_problems(off)
    assert problems and "does not hold" in problems[0]
    with pytest.raises(Refused, match="will not act"):
        refuse("act", problems)
    refuse("act", [])  # nothing to refuse
    assert cluster_problems(EmbeddedStore()) == []  # a store that cannot report unsettled servers has none


def test_run_stops_after_a_stage_and_act_needs_the_saved_plan(table: Any, tmp_path: Path) -> None:
    store, schema, _ = table
    state = tmp_path / "state.json"
    obs = _observed([[0], [100], [100]])
    r = run(store, "events", schema, lambda: obs, hbase_url="localhost:2181", stop_after="learn", state_path=state)
    assert r.stopped_after == "learn" and r.advised is None
    saved = load_state(state)
    assert set(saved["stages"]) == {"diagnose", "learn"} and "plan" not in saved
    with pytest.raises(BadInput, match="holds no plan"):
        run(store, "events", schema, lambda: obs, hbase_url="localhost:2181", apply=True, state_path=state, stop_after="plan")
    with pytest.raises(BadInput, match="autopilot state of table"):
        run(store, "other", schema, lambda: obs, hbase_url="x", state_path=state)


def test_act_refuses_a_plan_learned_from_an_incomplete_read_or_contradicted_by_its_proof(table: Any, tmp_path: Path) -> None:
    store, schema, _ = table
    state = tmp_path / "state.json"
    plan = {"plan": {"table": "events", "new_table": "events_v2", "schema_path": "x.toml"}, "table": "events"}
    state.write_text(json.dumps({**plan, "complete": False, "incomplete": ["the sample did not reach every region within 30 s"]}))
    with pytest.raises(Refused, match="did not reach every region"):
        run(store, "events", schema, lambda: _observed([[0], [1]]), hbase_url="h", apply=True, state_path=state)
    state.write_text(json.dumps({**plan, "complete": True, "contradictions": ["the prediction does not hold on this cluster"]}))
    with pytest.raises(Refused, match="does not hold"):
        run(store, "events", schema, lambda: _observed([[0], [1]]), hbase_url="h", cutover=True, state_path=state)


def test_a_balanced_table_gets_no_plan(table: Any, tmp_path: Path) -> None:
    store, schema, _ = table
    said: list[str] = []
    obs = _observed([[5, 5, 5], [5, 5, 5], [5, 6, 5]], verdict="balanced")
    r = run(store, "events", schema, lambda: obs, hbase_url="h", state_path=tmp_path / "s.json", say=said.append)
    assert r.stopped_after == "diagnose" and r.plan is None and r.learned is None
    assert said[-1] == "diagnose: events is balanced; no fix to plan"


def test_since_when_of_a_one_region_table_is_the_start_of_its_history_and_said_in_utc(tmp_path: Path) -> None:
    d = diagnose(_observed([[0], [100], [100], [100]]))
    assert d.since == T0  # one region took every write from the first interval on
    said: list[str] = []
    run(
        EmbeddedStore(),
        "events",
        None,
        lambda: _observed([[0], [100], [100]]),
        hbase_url="h",
        stop_after="diagnose",
        state_path=tmp_path / "s.json",
        say=said.append,
    )
    assert "since 2026-01-01 00:00:00 UTC" in said[0]
