"""The time-aware split simulation (keyshape.core.splitsim) without HBase: HBase's rules one by
one, chunking that does not change the result, and the analyzer's --auto-split built on it.
The calibration against a real HBase is tests/hbase/test_splitsim_hbase.py."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from keyshape.analysis import analyze
from keyshape.core.keyarray import KeyArray
from keyshape.core.splitsim import SplitModel, SplitSimulator, cell_size, parse_policy, region_range

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20


def seq(n: int, start: int = 0) -> KeyArray:
    return KeyArray.from_keys([b"row%010d" % i for i in range(start, start + n)])


def salted(n: int, buckets: int = 16) -> KeyArray:
    return KeyArray.from_keys([b"%02d-%010d" % (i * 7919 % buckets, i) for i in range(n)])


def run(keys: KeyArray, model: SplitModel, initial: list[bytes] | None = None, chunk: int | None = None):  # type: ignore[no-untyped-def]
    sim = SplitSimulator(model, initial or [], windows=20)
    step = chunk or len(keys)
    for lo in range(0, len(keys), step):
        sim.feed(keys[lo : lo + step])
    return sim.finish()


SMALL = SplitModel(max_filesize=2 * MIB, flush_size=MIB, write_rate=10_000, cell_bytes=cell_size(1, 1, 8))


def test_references_keep_a_fresh_table_at_two_regions_until_the_discharger_runs() -> None:
    """Sequential writes at 10k rows/s: the only region splits at 2 x flush size; its
    daughters hold reference files until the discharger's 2-minute run, and a 30 s load ends
    before that. With the discharger every second they keep splitting at MAX_FILESIZE."""
    keys = seq(300_000)
    stuck = run(keys, SMALL)
    assert len(stuck.region_map) == 2
    assert [s.regions for s in stuck.stages] == [1, 2]
    assert stuck.stages[0].seconds < 10 and stuck.stages[1].seconds > 20
    cleaned = run(keys, replace(SMALL, cleaner_interval=1.0))
    assert len(cleaned.region_map) >= 6
    # Sequential keys: whatever the region count, one region takes the writes of a moment (a
    # window with a split shares them between the parent and its upper daughter).
    assert cleaned.window_hot_shares.mean() > 0.75


def test_split_point_is_the_largest_files_middle_key_not_the_regions_median() -> None:
    """The first split of a sequential stream leaves far fewer rows on the left than half the
    region: the largest file (a compaction of the early flushes) is split in its middle."""
    h = run(seq(300_000), SMALL)
    first = h.splits[0]
    left = int(first.split_key[3:])
    assert 0 < left < 0.5 * (first.write_index + 1)
    assert h.rows[0] == pytest.approx(left, rel=0.02)


def test_stepping_uses_max_filesize_once_the_server_has_two_regions() -> None:
    """Two regions on one server split at MAX_FILESIZE (+-12.5 %); alone, at 2 x flush."""
    big = SplitModel(max_filesize=4 * MIB, flush_size=MIB, write_rate=10_000, cell_bytes=cell_size(1, 1, 8))
    keys = seq(300_000)
    alone = run(keys, big)
    pair = run(keys, big, [keys.tolist()[150_000]])
    assert alone.splits and pair.splits
    assert pair.splits[0].write_index > 1.6 * alone.splits[0].write_index
    constant = run(keys, replace(big, policy="constant"))
    assert constant.splits[0].write_index > 1.6 * alone.splits[0].write_index


def test_jitter_is_seeded_and_bounded() -> None:
    keys = salted(200_000)
    model = replace(SMALL, cleaner_interval=1.0)
    a, b = run(keys, model), run(keys, model)
    assert a.region_map == b.region_map
    other = run(keys, replace(model, seed=7))
    assert len(other.region_map) == pytest.approx(len(a.region_map), abs=3)


def test_key_prefix_and_delimited_policies_keep_a_prefix_in_one_region() -> None:
    keys = KeyArray.from_keys([b"user%03d_%08d" % (i % 50, i) for i in range(200_000)])
    model = SplitModel(
        max_filesize=2 * MIB, flush_size=MIB, write_rate=10_000, cleaner_interval=1.0, cell_bytes=cell_size(1, 1, 8), **parse_policy("key-prefix:7")
    )
    h = run(keys, model)
    assert h.splits and all(len(k) <= 7 for k in h.region_map.split_keys)
    d = run(keys, replace(model, prefix_length=None, **parse_policy("delimited:_")))
    assert d.splits and all(b"_" not in k and len(k) == 7 for k in d.region_map.split_keys)
    with pytest.raises(ValueError, match="key-prefix:N"):
        parse_policy("key-prefix")
    with pytest.raises(ValueError, match="unknown split policy"):
        parse_policy("median")


def test_chunking_does_not_change_the_result() -> None:
    keys = salted(120_000)
    model = replace(SMALL, cleaner_interval=1.0)
    whole = run(keys, model)
    pieces = run(keys, model, chunk=7_777)
    assert whole.region_map == pieces.region_map
    assert whole.rows.tolist() == pieces.rows.tolist()
    assert [e.write_index for e in whole.splits] == [e.write_index for e in pieces.splits]


def test_rows_policy_counts_every_write_and_splits_near_the_median() -> None:
    h = run(seq(50_000), SplitModel(policy="rows", max_rows=2_000))
    assert int(h.rows.sum()) == 50_000
    assert len(h.region_map) >= 20
    assert h.rows[:-1].max() <= 2_000 * 1.2


def test_memory_stays_flat_when_the_stream_grows() -> None:
    """Keys are never kept: 4x the writes must not take 4x the memory."""
    model = SplitModel(policy="rows", max_rows=20_000)

    def peak(n: int) -> int:
        sim = SplitSimulator(model, windows=20)
        tracemalloc.start()
        for lo in range(0, n, 50_000):
            sim.feed(seq(50_000, lo))
        sim.finish()
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return top

    small, large = peak(100_000), peak(400_000)
    assert large < 2.0 * small, (small, large)


def test_bad_models_are_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="write rate"):
        SplitSimulator(SplitModel()).feed([b"a"])
    with pytest.raises(ValueError, match="prefix_length"):
        SplitModel(policy="key-prefix")
    with pytest.raises(ValueError, match="max_rows"):
        SplitModel(policy="rows")


def test_analyze_auto_split_sequential_is_stuck_and_the_presplit_salted_is_even_at_once() -> None:
    """The cost of not pre-splitting as a number: a sequential key at a realistic rate spends
    the run in one or two regions with one region taking every write; the salted design
    pre-split on its buckets is even from the first second."""
    model = SplitModel(max_filesize=10 * 1024 * MIB, flush_size=128 * MIB, write_rate=20_000)
    sequential = analyze(seq(400_000).tolist(), [], split_model=model)
    assert sequential.auto_split is not None
    assert sequential.auto_split["final_regions"] <= 2
    assert sequential.hot_window_share > 0.95 and sequential.verdict == "hotspot"
    assert any("the busiest region took 100 %" in r for r in sequential.reasons)
    buckets = [b"%02d" % i for i in range(1, 16)]
    even = analyze(salted(400_000).tolist(), buckets, split_model=model)
    assert even.auto_split is not None and even.auto_split["splits"] == 0
    shares = np.array(even.window_hot_shares)
    assert shares[0] < 0.1 and shares.max() < 0.1  # 16 regions: ~1/16 each from the start


def test_cli_auto_split_reports_time_in_regions() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "keyshape.cli",
            "analyze",
            "examples/sequential.toml",
            "--rows",
            "200000",
            "--auto-split",
            "--write-rate",
            "40000",
            "--max-filesize",
            "2MiB",
            "--flush-size",
            "1MiB",
            "--json",
            "-",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    data = json.loads(proc.stdout)
    auto = data["auto_split"]
    assert auto["final_regions"] == 2 and auto["model"]["policy"] == "stepping"
    assert [s["regions"] for s in auto["stages"]] == [1, 2]
    assert auto["stages"][1]["seconds"] > auto["stages"][0]["seconds"]
    bad = subprocess.run(
        [sys.executable, "-m", "keyshape.cli", "analyze", "examples/sequential.toml", "--auto-split", "--split-policy", "median"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert bad.returncode != 0 and "median" in bad.stderr and "Traceback" not in bad.stderr


def test_write_times_can_come_from_a_timestamp_field() -> None:
    """orders.toml stamps an order every 50 ms: 100,000 rows are 5,000 s of writes, long enough
    for the 2-minute discharger to let daughters split again."""
    from keyshape.analysis.designs import analyze_schema
    from keyshape.errors import KeyshapeError

    model = SplitModel(max_filesize=2 * MIB, flush_size=MIB)
    # 100-byte values: enough bytes for several splits (load's 8-byte values fill 2 MiB once)
    a = analyze_schema(ROOT / "examples" / "orders.toml", 100_000, regions=1, split_model=model, time_field="order_time", windows=10, value_bytes=100)
    assert a.auto_split is not None
    assert a.auto_split["seconds"] == pytest.approx(100_000 * 0.05, rel=0.01)
    by_rate = analyze_schema(
        ROOT / "examples" / "orders.toml", 100_000, regions=1, windows=10, split_model=replace(model, write_rate=10_000), value_bytes=100
    )
    assert by_rate.auto_split is not None and by_rate.auto_split["seconds"] < 11
    assert a.auto_split["final_regions"] > by_rate.auto_split["final_regions"]
    with pytest.raises(KeyshapeError, match="timestamp field"):
        analyze_schema(ROOT / "examples" / "orders.toml", 1_000, split_model=model, time_field="user_id")


def test_html_report_lists_the_regions_over_time(tmp_path: Path) -> None:
    from keyshape.report.html import write_html

    model = SplitModel(max_filesize=2 * MIB, flush_size=MIB, write_rate=20_000)
    a = analyze(seq(100_000).tolist(), [], split_model=model)
    html = write_html(a, tmp_path / "r.html").read_text()
    assert "Regions over time: 1 for" in html and "2 for" in html


# --- the value size: what `keyshape load` writes, one definition (issue 28 item 6) ------------


def _sim_model(schema: Any, **options: Any) -> SplitModel:
    from keyshape.analysis.designs import analyze_schema

    a = analyze_schema(schema, 2_000, split_model=SplitModel(max_filesize=2 * MIB, flush_size=MIB, write_rate=40_000), windows=5, **options)
    assert a.auto_split is not None
    return SplitModel(**{k: (v.encode("latin-1") if k == "delimiter" and v else v) for k, v in a.auto_split["model"].items()})


def _workload_schema(tmp_path: Path, value_line: str = "") -> Path:
    text = (ROOT / "examples" / "sequential.toml").read_text()
    path = tmp_path / "s.toml"
    path.write_text(text.replace("[workload]\n", "[workload]\n" + value_line, 1))
    return path


def test_the_simulated_cell_is_the_cell_load_writes(tmp_path: Path) -> None:
    """`analyze --auto-split` used to assume 100-byte values while `keyshape load` writes its
    8-byte write index: the README's command predicted the first split at write 18,003, HBase
    splits a `load` of it near 54,000-64,000 (tests/hbase/test_splitsim_hbase.py). The simulated cell
    is now the one `load_workload` stores: the schema's first family, qualifier `v`, and the
    value `row_value` gives, whose size is the schema's `[workload] value_bytes` when set."""
    from keyshape.ops.live import load_workload
    from keyshape.schema import KeySchema
    from keyshape.store import ensure_table
    from keyshape.store.embedded import EmbeddedStore

    for value_line, size in (("", 8), ("value_bytes = 300\n", 300), ("value_bytes = 3\n", 3)):
        schema = KeySchema.load(_workload_schema(tmp_path, value_line))
        store = EmbeddedStore()
        ensure_table(store, schema.table, schema.split_keys())
        load_workload(store, schema, rows=50)
        cells = [c for _, row in store.scan(schema.table.full_name) for c in row.items()]
        assert len(cells) == 50 and {column for column, _ in cells} == {b"d:v"}
        assert {len(value) for _, value in cells} == {size}
        assert len({value for _, value in cells}) == 50  # each write still tells which it was
        model = _sim_model(schema)
        assert model.cell_bytes == cell_size(len(b"d"), len(b"v"), size), value_line
    # --value-bytes (analyze_schema's value_bytes) overrides the schema for the simulation too
    model = _sim_model(KeySchema.load(_workload_schema(tmp_path)), value_bytes=1000)
    assert model.cell_bytes == cell_size(1, 1, 1000)


def test_readme_auto_split_command_predicts_the_first_split_of_a_load() -> None:
    """The README's `analyze examples/sequential.toml --auto-split --write-rate 40000
    --max-filesize 2MiB --flush-size 1MiB`: the first split comes after the writes that fill
    2 x 1 MiB of store files with `load`'s cells (HBase: 54,000-64,000 of a load at 40,000 rows/s,
    tests/hbase/test_splitsim_hbase.py), not 18,003 as with 100-byte values."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "keyshape.cli",
            "analyze",
            "examples/sequential.toml",
            "--auto-split",
            "--write-rate",
            "40000",
            "--max-filesize",
            "2MiB",
            "--flush-size",
            "1MiB",
            "--json",
            "-",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    auto = json.loads(proc.stdout)["auto_split"]
    assert 45_000 <= auto["first_split_write"] <= 70_000, auto["first_split_write"]
    with_values = subprocess.run(
        [
            sys.executable,
            "-m",
            "keyshape.cli",
            "analyze",
            "examples/sequential.toml",
            "--auto-split",
            "--write-rate",
            "40000",
            "--max-filesize",
            "2MiB",
            "--flush-size",
            "1MiB",
            "--value-bytes",
            "100",
            "--json",
            "-",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert with_values.returncode == 0, with_values.stderr
    assert json.loads(with_values.stdout)["auto_split"]["first_split_write"] < 25_000
    bad = subprocess.run(
        [sys.executable, "-m", "keyshape.cli", "analyze", "examples/sequential.toml", "--auto-split", "--value-bytes", "-1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert bad.returncode != 0 and "--value-bytes" in bad.stderr and "Traceback" not in bad.stderr


# --- how long HBase takes: an input of the model (issue 28 item 6) -----------------------------


def test_flush_and_split_durations_delay_the_splits_they_belong_to() -> None:
    """A flush that takes 0.5 s at 10,000 rows/s moves the first split ~5,000 writes later (the
    file and the split check come when it is written); a split that takes 3 s keeps the parent
    taking the writes for 30,000 more, and with references cleaned every second a table whose
    splits take that long ends with fewer regions (what a busy machine showed: HBase 3 regions
    where the instant model said 6-7)."""
    keys = seq(300_000)
    fast = replace(SMALL, cleaner_interval=1.0)
    instant = run(keys, fast)
    flushed = run(keys, replace(fast, flush_seconds=0.5))
    assert flushed.splits[0].write_index - instant.splits[0].write_index == pytest.approx(5_000, abs=1_500)
    slow = run(keys, replace(fast, split_seconds=3.0))
    assert slow.splits[0].write_index == instant.splits[0].write_index  # the request is not later
    assert len(slow.region_map) < len(instant.region_map)
    assert int(slow.rows.sum()) == int(instant.rows.sum()) == 300_000
    # the daughters open 3 s (30,000 writes) after the request: the write index of the second
    # split comes at least that much after the first
    assert slow.splits[1].write_index - slow.splits[0].write_index >= 30_000
    with pytest.raises(ValueError, match="seconds >= 0"):
        SplitModel(split_seconds=-1)


def test_chunking_does_not_change_the_result_with_durations() -> None:
    keys = salted(150_000)
    model = replace(SMALL, cleaner_interval=1.0, flush_seconds=0.3, split_seconds=1.5)
    whole, pieces = run(keys, model), run(keys, model, chunk=6_101)
    assert whole.region_map == pieces.region_map and whole.splits
    assert [e.write_index for e in whole.splits] == [e.write_index for e in pieces.splits]
    assert whole.rows.tolist() == pieces.rows.tolist()


def test_region_range_is_the_band_of_split_times_and_seeds() -> None:
    """The prediction as a band (issue 28 item 6): with references cleaned every second the
    split and compaction times bound how often a region splits, so the band replays the
    shortest, median and longest split time seen, and the shortest with an instant compaction.
    Longer splits never give more regions on a sequential load, an instant compaction never
    fewer, the band holds the point model run at the median time, and it says how it was made."""
    keys = seq(300_000)
    model = replace(SMALL, cleaner_interval=1.0)
    band = region_range(model, keys, split_seconds=[4.0, 0.5, 1.0, 8.0])
    made = [(took, compaction, seed) for took, compaction, seed, _ in band.runs]
    assert made == [(0.5, 0.0, 0), (0.5, 0.0, 1), (0.5, 1.0, 0), (0.5, 1.0, 1), (2.5, 1.0, 0), (2.5, 1.0, 1), (8.0, 1.0, 0), (8.0, 1.0, 1)]
    counts = {(took, compaction): len(h.region_map) for took, compaction, seed, h in band.runs if seed == 0}
    assert counts[(0.5, 0.0)] >= counts[(0.5, 1.0)] >= counts[(2.5, 1.0)] >= counts[(8.0, 1.0)]
    assert band.low == min(len(h.region_map) for *_, h in band.runs) < band.high
    point = run(keys, replace(model, split_seconds=2.5))
    assert len(point.region_map) in band
    assert band.high + 1 not in band and "5" not in band
    # No durations: the model's own split time, at its compaction delay and an instant one.
    assert {(took, c) for took, c, _, _ in region_range(model, keys[:50_000], seeds=(3,)).runs} == {(0.0, 0.0), (0.0, 1.0)}
    with pytest.raises(ValueError, match="at least one seed"):
        region_range(model, keys, seeds=())
