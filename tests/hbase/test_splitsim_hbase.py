"""The split simulation against a real HBase 2.6.4 (marked `hbase`): calibration.

Each test loads a table with HBase's smallest allowed sizes (MAX_FILESIZE 2 MiB, MEMSTORE_FLUSHSIZE
1 MiB, table attributes), reads the real split history back from hbase:meta, and replays the same
keys at the same measured write times through `SplitSimulator` with the same parameters.

What the runs showed (standalone, 8-20k rows/s, several runs): with the default 2-minute discharger
the real table split ONCE and stayed at 2 regions (its daughters blocked by reference files), as
simulated; with references cleaned every second (own instance) HBase reached 4-5 regions where the
simulation predicts 4-6. The simulated first split comes 0-17 % of the writes before HBase's (the
flush and the split procedure take time the model does not have); HBase's left daughter varies
between runs (15,129 or 25,215 rows of a sequential load, which file is largest at that moment)
around the simulated 22,323; the busiest live region's mean share over 20 windows agreed within
0.06. The checks: region count within a factor of 1.5 (2 vs 3 fails), busiest-region share within
0.08, the left daughter's share of the rows within 0.06, the first split within 25 % of the writes (on the late side, plus the writes of half the
run's split time: `first_split_agrees`).

The simulated cell is the one `load` writes (keyshape.workload.row_value_bytes: the 8-byte write
index here), and the model takes how long this HBase took to split in this run
(`split_seconds`, read from hbase:meta: daughter OPEN time - region id): a split is not instant,
and on busy cores it took long enough that an instant model said 6-7 regions where HBase made 3
(and 17 against 11 on a 500k sequential load). Issue 28 item 6.

Over a long load with references cleaned every second, the spread of the split time (0.6-5.5 s
within one run on busy cores) and the compactions' time decide the region count more than any
size: there the prediction is a band (`region_range`: the model at the shortest, median and longest
split time of the run, and at the shortest with an instant compaction, two seeds each), and the
real count must lie inside it. Runs of the 500k sequential load with that band: real 11, 8, 8,
11, 10 regions in bands 10-17, 7-14, 7-13, 8-16, 8-16 (the point model at the median time: 11,
10, 8, 10, 9). Without the
instant-compaction end, two idle-machine runs (splits 0.6-0.9 s) made 14 and 13 regions where the
band reached 13 and 12.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keyshape.core.splitsim import SplitModel, region_range
from keyshape.ops.split_history import busiest_shares

from splitsim_calibration import MIB, SHARE_TOLERANCE, WINDOWS, _check, _keys, _load_and_simulate, _schema, first_split_agrees

pytestmark = pytest.mark.hbase


def test_sequential_load_into_an_unsplit_table_splits_once_as_simulated(hbase: Any, tmp_path: Path) -> None:
    rows = 150_000
    schema = _schema(tmp_path, "sequential.toml", "events_seq")
    r = _load_and_simulate(hbase, schema, rows, [])
    _check(r, rows)
    # The README's command (analyze --auto-split --write-rate 40000 --max-filesize 2MiB
    # --flush-size 1MiB) with its defaults predicts this load's first split within 25 %: its cell
    # is the one load writes (with 100-byte values it said write 18,003, 55-67 % early).
    from keyshape.analysis.designs import analyze_schema

    predicted = analyze_schema(schema, rows, windows=WINDOWS, split_model=SplitModel(max_filesize=2 * MIB, flush_size=MIB, write_rate=40_000))
    assert predicted.auto_split is not None
    first_real, first_predicted = r["real_events"][0][0], predicted.auto_split["first_split_write"]
    assert first_split_agrees(r, first_predicted), (first_predicted, first_real, r["split_seconds"])
    # The cost of not pre-splitting, as the simulation reports it: after the first split the
    # table is stuck at 2 regions (references block its daughters), and the last one takes
    # (nearly) every write.
    assert r["real_regions"] == 2, r
    stages = r["result"].stages
    assert [s.regions for s in stages] == [1, 2]
    assert r["sim_share"] > 0.95


def test_salted_load_into_an_unsplit_table_splits_once_as_simulated(hbase: Any, tmp_path: Path) -> None:
    rows = 120_000
    r = _load_and_simulate(hbase, _schema(tmp_path, "orders.toml", "orders"), rows, [])
    _check(r, rows)
    assert r["real_regions"] <= 3, r


def test_presplit_regions_split_at_max_filesize_as_simulated(hbase: Any, tmp_path: Path) -> None:
    """Two regions on one server: SteppingSplitPolicy uses MAX_FILESIZE (jittered), not the
    first-region 2 x flush size, so each region splits later than a lone region would."""
    rows = 160_000
    schema = _schema(tmp_path, "sequential.toml", "events_seq")
    middle = _keys(schema, rows)[rows // 2]
    r = _load_and_simulate(hbase, schema, rows, [middle])
    _check(r, rows)
    assert r["sim_regions"] >= 3


@pytest.fixture(scope="module")
def fast_cleaner() -> Any:
    """Our own standalone HBase whose CompactedHFilesDischarger runs every second (a server
    setting, so not the shared instance): daughters can split again soon after a split."""
    import standalone
    from hbase_fixture import TOOLS_HBASE, HBaseHandle

    try:
        instance = standalone.start_scratch(TOOLS_HBASE / "run" / "pytest-discharger", site={"hbase.hfile.compaction.discharger.interval": "1000"})
    except standalone.StartFailed as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield HBaseHandle(url=instance.url, standalone=instance)
    finally:
        instance.stop()


def _check_band(r: dict[str, Any]) -> None:
    """The prediction as a band (keyshape.core.splitsim.region_range): the model replayed with
    the shortest, median and longest time this run's splits took, and the shortest with an
    instant compaction, two seeds each. The real
    region count must lie inside the band, and the real busiest share within the stated share
    tolerance of the band's shares."""
    # The band's top: an instant split with an instant compaction, the most splits the sizes allow.
    # With only this run's shortest split time there, an idle machine (splits 0.60-0.75 s) made
    # 18 regions where that end said 17: the measured split time (daughter open - region id) is
    # not all time the region refused writes, so the shortest measured one is no bound.
    # The band's bottom: this run's longest split time plus how late HBase's first split came
    # after the model's (the flush and the split request before a split are JVM work that busy
    # cores slow down, and the split time read from meta does not hold them).
    times, lag = r["times"], 0.0
    if r["real_events"] and r["sim_events"]:
        lag = max(0.0, float(times[min(r["real_events"][0][0], len(times) - 1)] - times[min(r["sim_events"][0][0], len(times) - 1)]))
    longest = [max(r["durations"], default=0.0) + lag] if lag > 0 else []
    band = region_range(r["model"], r["keys"], times, split_seconds=[0.0, *r["durations"], *longest], windows=WINDOWS)
    shares = [float(busiest_shares(r["keys"], [(e.write_index, e.split_key) for e in h.splits], [], WINDOWS).mean()) for *_, h in band.runs]
    runs = [(round(took, 2), compaction, seed, len(h.region_map)) for took, compaction, seed, h in band.runs]
    note = (
        f"split times {min(r['durations'], default=0):.2f}-{max(r['durations'], default=0):.2f} s, first split {lag:.2f} s late "
        f"(median {r['split_seconds']:.2f}); real {r['real_regions']} regions, busiest share {r['real_share']:.3f}; "
        f"point model {r['sim_regions']}; band {band.low}-{band.high} from {runs}, shares {min(shares):.3f}-{max(shares):.3f}"
    )
    print(note)
    assert r["real_regions"] in band, note
    assert min(shares) - SHARE_TOLERANCE <= r["real_share"] <= max(shares) + SHARE_TOLERANCE, note


@pytest.mark.parametrize(
    "example,table,rows,band",
    [
        ("sequential.toml", "events_seq", 150_000, False),
        ("orders.toml", "orders", 220_000, False),
        # HBase itself made 10-18 regions in five runs of this load, the model given each run's
        # median split time 9-12 (17 vs 11 once, outside the 1.5 factor): over a long load the
        # split time's spread decides the count, so this case is checked against the band.
        ("sequential.toml", "events_seq", 500_000, True),
    ],
)
def test_with_references_cleaned_every_second_the_table_keeps_splitting_as_simulated(
    fast_cleaner: Any, tmp_path: Path, example: str, table: str, rows: int, band: bool
) -> None:
    # At 20,000 rows/s, a steady service's rate rather than a bulk load's: a load at full speed
    # (80,000 rows/s with batches in flight) ends before a daughter can split again.
    r = _load_and_simulate(fast_cleaner, _schema(tmp_path, example, table), rows, [], cleaner_interval=1.0, rate=20_000)
    if band:
        _check_band(r)
    else:
        _check(r, rows)
    # Split more than once (the default 2-minute cleaner stops the table at 2 regions). How many
    # more depends on how fast a loaded 2-core machine flushes and splits: 3 to 6 regions seen.
    assert r["real_regions"] >= 3, r
