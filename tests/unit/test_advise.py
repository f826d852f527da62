"""keyshape advise (issue 31): the workload file's errors, the scenarios of examples/advise/ scored
on samples their own generators make, the output schema being the one scored, and the ranking's
Pareto fronts (hypothesis). No HBase: the predictions only."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.analysis.advise import Advice, AdviseError, advise, dominates, load_spec, pareto_fronts, parse_spec
from keyshape.core.hbytes import to_bytes_binary
from keyshape.schema.keyschema import KeySchema

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "advise"
ROWS = 4000  # per scenario sample: enough for every pattern's counts, seconds per scenario
MAX_DESIGNS = 32  # the plainer designs first (candidates.designs): keeps the file near 15 s of CPU

GOOD = """
[entity]
id = ["user_id", "order_id"]
time = "order_time"
[write]
rows_per_second = 100
[[pattern]]
name = "p"
kind = "prefix"
fields = ["user_id"]
rate = 1
"""


def _spec(text: str) -> None:
    parse_spec(tomllib.loads(text), "W.toml")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (GOOD.replace('id = ["user_id", "order_id"]\n', ""), "entity.id is missing"),
        (GOOD.replace('kind = "prefix"', 'kind = "range"'), "not a pattern kind"),
        (GOOD.replace("rate = 1\n", ""), "pattern[0].rate is missing"),
        (GOOD.replace("rate = 1\n", "rate = -3\n"), "pattern[0].rate must be at least 0"),
        (GOOD.replace('kind = "prefix"', 'kind = "latest"'), "needs limit = N"),
        (GOOD.replace('kind = "prefix"', 'kind = "window"'), 'needs window = "1h"'),
        (GOOD.replace('kind = "prefix"', 'kind = "window"').replace("rate = 1", 'rate = 1\nwindow = "an hour"'), "is not a duration"),
        (GOOD.replace('time = "order_time"\n', "").replace('kind = "prefix"', 'kind = "latest"\nlimit = 3'), "has no time field"),
        (GOOD + '[cluster]\nregion_size = "big"\n', "is not a size"),
        (GOOD + "[cluster]\nservers = 0\n", "cluster.servers must be at least 1"),
        (GOOD + "[cluster]\nserver = 3\n", "unknown key cluster.server"),
        (GOOD + '[types]\nuser_id = "text"\n', "is not a field type"),
        (GOOD.replace("[[pattern]]", "[[patern]]"), "unknown section patern"),
        (GOOD.split("[[pattern]]")[0], "no [[pattern]]"),
        (GOOD.replace('fields = ["user_id"]', 'fields = ["user_id", "user_id"]'), "names a field twice"),
    ],
)
def test_bad_workload_files_are_one_line(text: str, says: str) -> None:
    with pytest.raises(AdviseError) as err:
        _spec(text)
    assert says in str(err.value)
    assert "\n" not in str(err.value) and str(err.value).startswith("W.toml")


def test_good_workload_file_parses_and_scales_to_the_horizon() -> None:
    spec = load_spec(EXAMPLES / "orders" / "WORKLOAD.toml")
    assert [p.kind for p in spec.patterns] == ["window", "latest", "get"]
    assert spec.patterns[0].window_s == 30 * 86400
    # 200 rows/s for 730 days growing 50 % a year: the rate is 2x at the end, 1.5x on average.
    assert spec.horizon_rows == int(200 * 730 * 86400 * 1.5)


def _sample(scenario: str, tmp: Path) -> Path:
    out = tmp / f"{scenario}.parquet"
    subprocess.run([sys.executable, str(EXAMPLES / scenario / "generate.py"), str(out), str(ROWS)], check=True, capture_output=True)
    return out


SCENARIOS = {
    # scenario: (the hand design's file, what its reason must name: the pattern it fails, or the
    # writes when it loses on them: the Zipf tenant mix piles the largest tenant on one server)
    "orders": ("hand-salted.toml", None),
    "metrics": ("hand-md5.toml", None),
    "audit": ("hand-time.toml", "'events of an actor'"),
    "profiles": ("hand-id.toml", "'profile by e-mail'"),
    # saas: a tenant's rows at the horizon are its share of 3,000 rows/s for a year (issue 39), so the
    # tenant-first hand key reads billions of rows for its latest 50 documents.
    "saas": ("hand-tenant.toml", "'latest 50 documents of a tenant'"),
}


_ADVICE: dict[str, Advice] = {}  # one advise run per scenario for the whole module


def _advice(name: str, tmp_path_factory: pytest.TempPathFactory) -> Advice:
    if name not in _ADVICE:
        data = _sample(name, tmp_path_factory.mktemp(name))
        hand = EXAMPLES / name / SCENARIOS[name][0]
        _ADVICE[name] = advise(data, EXAMPLES / name / "WORKLOAD.toml", compare=[hand], max_designs=MAX_DESIGNS)
    return _ADVICE[name]


@pytest.fixture(scope="module", params=sorted(SCENARIOS))
def scenario(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Advice]:
    return request.param, _advice(request.param, tmp_path_factory)


def test_top_design_is_predicted_at_least_as_good_as_the_hand_design(scenario: tuple[str, Advice]) -> None:
    name, advice = scenario
    (hand,) = advice.hand()
    assert advice.top.weighted_cost <= hand.weighted_cost, (name, advice.top.design.label, hand.design.label)
    assert not advice.top.design.hand or advice.top.weighted_cost == hand.weighted_cost
    # Every ranked design below the top says why, with numbers.
    assert all(s.reason and any(ch.isdigit() for ch in s.reason) for s in advice.ranked[1:])


def test_reasons_name_the_pattern_that_decides(scenario: tuple[str, Advice]) -> None:
    name, advice = scenario
    (hand,) = advice.hand()
    pattern = SCENARIOS[name][1]
    if pattern is not None:
        assert pattern in hand.reason, hand.reason
    # Salting over the whole identity spreads writes but fans out every read that does not give
    # all of it: its reason names the pattern it hurts, as scanners or a full scan.
    ids = set(advice.spec.id_fields)
    salted = [s for s in advice.ranked if s.design.shape.prefix == "mod" and set(s.design.shape.hash_fields) == ids and not s.design.indexes]
    if salted and len(ids) > 1:
        s = salted[0]
        named = [p.name for p in advice.spec.patterns if f"'{p.name}'" in s.reason]
        assert named and ("scanners" in s.reason or "full scan" in s.reason), s.reason


def test_audit_log_time_leading_key_is_a_hot_spot_and_salting_spreads_it(tmp_path_factory: pytest.TempPathFactory) -> None:
    advice = _advice("audit", tmp_path_factory)
    (hand,) = advice.hand()
    assert hand.concentration > 0.9  # every write on the newest region's server
    # An index table keyed by the bare event time is written once per event, all on its newest
    # region: counted with the main table's puts, its server takes over half of them (issue 39).
    time_index = [s for s in advice.ranked if any(t.field_names[0] == "event_time" and not t.prefix.salted for t in s.design.index_tables)]
    assert time_index and all(s.concentration > 0.6 for s in time_index), [(s.design.label, s.concentration) for s in time_index]
    salted = [s for s in advice.ranked if s.design.shape.salted and s.design.shape.order[0] == "event_time"]
    assert salted and min(s.concentration for s in salted) < 0.4


def test_output_schema_is_exactly_what_was_scored(scenario: tuple[str, Advice]) -> None:
    name, advice = scenario
    d = advice.to_dict(top=3)
    first = d["designs"][0]
    schema = KeySchema.from_dict(tomllib.loads(first["schema"]))
    scored = advice.top.design.schema
    assert schema.field_names == scored.field_names and schema.prefix.name == scored.prefix.name
    assert schema.split_keys() == [to_bytes_binary(k) for k in first["split_points"]] == advice.top.design.split_keys
    json.dumps(d)  # JSON-ready


def test_cli_bad_workload_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "W.toml"
    bad.write_text(GOOD.replace('kind = "prefix"', 'kind = "range"'))
    data = tmp_path / "d.csv"
    data.write_text("user_id,order_id,order_time\nu1,1,2026-01-01T00:00:00\n")
    r = subprocess.run([sys.executable, "-m", "keyshape.cli", "advise", "--data", str(data), "--queries", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "not a pattern kind" in r.stderr and "Traceback" not in r.stderr


def test_sample_without_a_named_field_is_one_line(tmp_path: Path) -> None:
    w = tmp_path / "W.toml"
    w.write_text(GOOD)
    data = tmp_path / "d.csv"
    data.write_text("user_id,order_time\nu1,2026-01-01T00:00:00\n")
    with pytest.raises(AdviseError, match="no field 'order_id'"):
        advise(data, w)


points = st.lists(st.tuples(*(st.integers(0, 6) for _ in range(3))), min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(points)
def test_pareto_fronts_are_non_dominated_and_layered(pts: list[tuple[int, int, int]]) -> None:
    front = pareto_fronts(pts)
    for i, p in enumerate(pts):
        # Nothing in its own front or a later one dominates it...
        assert not any(dominates(q, p) for j, q in enumerate(pts) if front[j] >= front[i])
        # ... and something in the front before does (it would be in that front otherwise).
        if front[i] > 1:
            assert any(dominates(q, p) for j, q in enumerate(pts) if front[j] == front[i] - 1)


def test_sample_types_are_inferred_from_csv_and_overridden_by_the_workload(tmp_path: Path) -> None:
    from keyshape.analysis.advise.sample import read_sample

    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "part-0.csv").write_text("user_id,order_id,order_time,note\n007,12,2026-01-02T00:00:00,x\n")
    (folder / "part-1.csv").write_text("user_id,order_id,order_time,note\n042,11,2026-01-01T00:00:00,yy\n")
    spec = parse_spec(tomllib.loads(GOOD), "W.toml")
    s = read_sample(folder, spec)
    # pyarrow reads 007 as the integer 7 unless [types] says string; the event time is a timestamp; rows in event-time order.
    assert s.types == {"user_id": "int64", "order_id": "int64", "order_time": "timestamp"}
    assert s.columns["order_id"].tolist() == [11, 12] and s.span_seconds == 86400.0 and s.cells == 1
    typed = parse_spec(tomllib.loads(GOOD + '[types]\nuser_id = "string"\n'), "W.toml")
    s = read_sample(folder, typed)
    assert s.types["user_id"] == "string" and s.columns["user_id"] == ["042", "007"]
