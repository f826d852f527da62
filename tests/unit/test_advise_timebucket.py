"""Time bucketing in ``advise`` (issue 31): OpenTSDB's base-hour row as a candidate, its bucket
chosen from the workload's rate and the sample's per-entity shares (issue 39: not from the
sample's own pace; the workloads here declare the pace their samples are drawn at), scored by the
same engines, its TOML loadable. It ranks first where one entity's long window dominates (six
hours of a sensor read every 10 s: 6 packed rows and the open hour's loose readings instead of
2,160 event rows), and loses, with the reason, where the newest reading dominates (the open bucket
is read whole). Samples are generated here; no HBase."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.analysis.advise import advise, parse_spec
from keyshape.analysis.advise.candidates import designs
from keyshape.analysis.advise.sample import Sample, read_sample
from keyshape.analysis.advise.timebucket import MAX_EVENTS, MIN_EVENTS, Bucket, choose_bucket
from keyshape.schema.keyschema import KeySchema

START = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DAY = 86_400_000

WORKLOAD = """
[entity]
id = ["sensor", "ts"]
time = "ts"
[write]
rows_per_second = {rate}
[horizon]
days = 30
[cluster]
servers = 3
{patterns}
"""
DAY_WINDOW = """
[[pattern]]
name = "a sensor's last 6 hours"
kind = "window"
fields = ["sensor"]
window = "6h"
rate = 20
goal_ms = 50
"""
NEWEST = """
[[pattern]]
name = "a sensor's newest reading"
kind = "latest"
fields = ["sensor"]
limit = 1
rate = 500
goal_ms = 5
"""


def _data(tmp: Path, sensors: int = 5, rows: int = 43_200, span_ms: int = DAY) -> Path:
    """``rows`` readings of ``sensors`` sensors over ``span_ms``; by default a day of 5 sensors,
    each read every 10 s (360 readings an hour, 8,640 a day)."""
    rng = np.random.default_rng(7)
    ts = START + np.sort(rng.integers(0, span_ms, rows))
    ids = rng.integers(0, sensors, rows)
    table = pa.table({"sensor": [f"s{v:05d}" for v in ids], "ts": pa.array(ts, type=pa.timestamp("ms")), "value": rng.normal(20.0, 2.0, rows)})
    out = tmp / f"sensors-{sensors}-{rows}-{span_ms}.parquet"
    pq.write_table(table, out)
    return out


RATE = 0.5  # the default sample's pace: 43,200 readings a day


def _workload(tmp: Path, patterns: str, rate: float = RATE) -> Path:
    path = tmp / "W.toml"
    path.write_text(WORKLOAD.format(rate=rate, patterns=patterns))
    return path


def test_the_bucket_is_the_largest_whose_busiest_row_stays_bounded(tmp_path: Path) -> None:
    def chosen(*data: int) -> Bucket | str:
        rows, span = (data[1], data[2]) if len(data) > 2 else (data[1], DAY) if len(data) > 1 else (43_200, DAY)
        spec = parse_spec(tomllib.loads(WORKLOAD.format(rate=rows / span * 1000, patterns=DAY_WINDOW)), "W.toml")
        return choose_bucket(spec, read_sample(_data(tmp_path, *data), spec), ("sensor",))

    # A reading every 10 s: 360 an hour, 8,640 a day (> 3,600): the hour.
    hour = chosen()
    assert isinstance(hour, Bucket) and hour.unit == "hour" and hour.busiest <= MAX_EVENTS < hour.busiest * 24
    assert 330 < hour.mean < 390
    # A reading a minute: 1,440 a day fit one row: the day.
    day = chosen(5, 7200)
    assert isinstance(day, Bucket) and day.unit == "day" and 1300 < day.mean < 1600
    # Two sensors writing 10,000 readings an hour each: too many for a row even by the hour.
    assert "even by the hour" in str(chosen(2, 20_000, 3_600_000))
    # 10,000 sensors with two readings each in two days: a day's row would hold one: not proposed.
    assert "packs nothing" in str(chosen(10_000, 20_000, 2 * DAY))


def test_bucketing_ranks_first_where_a_long_window_per_entity_dominates(tmp_path: Path) -> None:
    advice = advise(_data(tmp_path), _workload(tmp_path, DAY_WINDOW))
    top = advice.top
    assert top.design.shape.bucket_ms == 3_600_000, [s.design.label for s in advice.ranked[:5]]
    plain = next(s for s in advice.ranked if s.design.shape.order == ("sensor", "ts") and not s.design.shape.salted and not s.design.shape.desc_time)
    day, plain_day = top.pattern("a sensor's last 6 hours"), plain.pattern("a sensor's last 6 hours")
    # 6 packed rows plus the open hour's ~180 loose readings, against ~2,160 event rows.
    assert day.rows < plain_day.rows / 10 and day.cost_ms < plain_day.cost_ms / 2
    assert top.write_amp > 2.0 and top.write_cost > plain.write_cost  # the compaction is paid for
    assert top.storage_bytes < plain.storage_bytes / 1.5  # a key per hour of a sensor, not per reading
    assert abs(top.concentration - plain.concentration) < 0.05  # the open bucket takes the writes the entity-led key would
    # The TOML it prints is a schema keyshape loads: the bucket is a field the writer sets.
    schema = KeySchema.from_dict(tomllib.loads(top.design.toml))
    assert schema.field_names == ["sensor", "ts_hour"]
    assert top.design.toml.startswith("# Time bucketing") and "ts_hour = ts - ts % 3600000" in top.design.toml
    a = schema.encode({"sensor": "s0001", "ts_hour": START + 3_600_000})
    assert a == schema.encode({"sensor": "s0001", "ts_hour": START + 3_600_000}) != schema.encode({"sensor": "s0001", "ts_hour": START})
    assert schema.decode(a)["ts_hour"] == START + 3_600_000


def test_bucketing_loses_where_the_newest_reading_dominates(tmp_path: Path) -> None:
    advice = advise(_data(tmp_path), _workload(tmp_path, DAY_WINDOW + NEWEST))
    assert not advice.top.design.shape.bucket_ms
    bucketed = [s for s in advice.ranked if s.design.shape.bucket_ms]
    assert bucketed, [p.reason for p in advice.pruned]
    best = bucketed[0]
    newest = best.pattern("a sensor's newest reading")
    assert newest.rows > 100  # half an hour of a sensor's readings, for one
    assert "'a sensor's newest reading'" in best.reason, best.reason


def test_no_bucket_where_no_pattern_reads_one_entity_by_time(tmp_path: Path) -> None:
    spec = parse_spec(tomllib.loads(WORKLOAD.format(rate=RATE, patterns=DAY_WINDOW.replace('fields = ["sensor"]\n', "fields = []\n"))), "W.toml")
    found, pruned = designs(spec, read_sample(_data(tmp_path), spec), max_designs=16)
    assert not any(d.shape.bucket_ms for d in found)
    assert any("time bucketing" in p.label and "all entities" in p.reason for p in pruned)


@pytest.mark.parametrize(("data", "says"), [((2, 20_000, 3_600_000), "even by the hour"), ((10_000, 20_000, 2 * DAY), "packs nothing")])
def test_a_bucket_that_does_not_fit_is_pruned_with_its_reason(tmp_path: Path, data: tuple[int, int, int], says: str) -> None:
    spec = parse_spec(tomllib.loads(WORKLOAD.format(rate=data[1] / data[2] * 1000, patterns=DAY_WINDOW)), "W.toml")
    found, pruned = designs(spec, read_sample(_data(tmp_path, *data), spec), max_designs=16)
    assert not any(d.shape.bucket_ms for d in found)
    (why,) = [p.reason for p in pruned if "ts bucket" in p.label]
    assert says in why


@settings(max_examples=60, deadline=None)
@given(
    entities=st.integers(1, 300),
    rows=st.integers(50, 3000),
    span_h=st.integers(1, 24 * 14),
    skew=st.floats(0.0, 2.0),
    seed=st.integers(0, 2**16),
)
def test_the_chosen_bucket_holds_the_busiest_entity_and_the_larger_one_would_not(
    entities: int, rows: int, span_h: int, skew: float, seed: int
) -> None:
    """Whatever the mix: a chosen bucket keeps the busiest entity's row within MAX_EVENTS and an
    average row at MIN_EVENTS or more, and an hour is chosen only when a day would overflow; a
    refusal says which of the two it is."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, entities + 1) ** skew
    ids = rng.choice(entities, rows, p=weights / weights.sum())
    ts = START + np.sort(rng.integers(0, span_h * 3_600_000, rows))
    span = (int(ts[-1]) - int(ts[0])) / 1000
    sample = Sample(
        columns={"sensor": [f"s{v}" for v in ids], "ts": ts},
        types={"sensor": "string", "ts": "timestamp"},
        rows=rows,
        value_bytes=8,
        source="<generated>",
        span_seconds=span,
    )
    rate = max(0.001, rows / span) if span > 0 else 1.0  # the workload declares the sample's pace
    spec = parse_spec(tomllib.loads(WORKLOAD.format(rate=rate, patterns=DAY_WINDOW)), "W.toml")
    chosen = choose_bucket(spec, sample, ("sensor",))
    busiest_per_s = np.bincount(ids).max() / rows * rate
    if isinstance(chosen, Bucket):
        assert chosen.busiest <= MAX_EVENTS and chosen.mean >= MIN_EVENTS
        assert chosen.busiest == pytest.approx(busiest_per_s * chosen.ms / 1000)
        if chosen.unit == "hour":
            assert busiest_per_s * 86_400 > MAX_EVENTS
    else:
        assert ("even by the hour" in chosen and busiest_per_s * 3600 > MAX_EVENTS) or "packs nothing" in chosen


def test_a_thinned_sample_prices_an_entity_window_like_the_whole_one(tmp_path: Path) -> None:
    """A sample cut to a quarter holds a quarter of each sensor's readings: a window of one sensor
    reads four times what it matched, on the plain and on the bucketed design alike (else a cut
    sample would price the plain key's window 4x too cheap against the bucket's)."""
    data, workload = _data(tmp_path), _workload(tmp_path, DAY_WINDOW)
    whole, cut = advise(data, workload), advise(data, workload, max_rows=10_800)
    assert cut.sample.thinning == pytest.approx(4.0)
    for label in ("sensor + ts", "sensor + ts_hour [hour buckets]"):
        a, b = (next(s for s in adv.ranked if s.design.label == label) for adv in (whole, cut))
        assert b.pattern("a sensor's last 6 hours").rows == pytest.approx(a.pattern("a sensor's last 6 hours").rows, rel=0.15), label


def test_prove_leaves_a_bucketed_top_design_out_and_says_why(tmp_path: Path) -> None:
    """prove loads one cell per record: a bucketed design's events would overwrite each other in
    their bucket's row, so its measurement would be wrong. It is named as not measured, and the
    next designs are measured in its place (k of them, none bucketed)."""
    from keyshape.analysis.advise.prove import pick

    advice = advise(_data(tmp_path), _workload(tmp_path, DAY_WINDOW))
    assert advice.top.design.shape.bucket_ms  # the top design is bucketed here
    picked, skipped = pick(advice, k=2)
    assert len(skipped) >= 1 and advice.top.design.name in skipped[0] and "time-bucketed" in skipped[0]
    assert picked[:2] == [s for s in advice.ranked if not s.design.shape.bucket_ms][:2]
    assert all(not s.design.shape.bucket_ms for s in picked)
    chosen, said = pick(advice, chosen=advice.ranked[:3])
    assert all(not s.design.shape.bucket_ms for s in chosen) and len(chosen) + len(said) == 3
