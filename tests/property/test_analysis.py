"""keyshape.analysis: statistics against independent formulas, and verdicts on synthetic write
streams whose shape is known by construction (one hot region, uniform, a hot region that walks
through the key space with time like a timestamp-leading key)."""

from __future__ import annotations

import json
import random
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.analysis import SchemaHints, analyze, distribution
from keyshape.analysis.stats import (
    coefficient_of_variation,
    deviation_rate,
    gini,
    key_overhead_bytes,
)
from keyshape.analysis.timeline import Timeline, hot_window_share

counts_lists = st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=60)

# 16 regions: split keys "01".."15"; region r holds keys starting with "%02d" % r.
SPLITS = [b"%02d" % r for r in range(1, 16)]
R = 16


def _key(region: int, rng: random.Random) -> bytes:
    return b"%02d" % region + b"_" + b"%08d" % rng.randrange(10**8)


# ------------------------------------------------------------------------------ statistics


@given(counts_lists)
def test_gini_equals_mean_absolute_difference_form(counts: list[int]) -> None:
    """Gini = sum_i sum_j |x_i - x_j| / (2 n^2 mean), the textbook definition."""
    n = len(counts)
    total = sum(counts)
    expected = 0.0 if total == 0 else sum(abs(a - b) for a in counts for b in counts) / (2 * n * n * (total / n))
    assert gini(counts) == pytest.approx(expected, abs=1e-9)


@given(counts_lists)
def test_cv_is_population_stdev_over_mean(counts: list[int]) -> None:
    mean = statistics.fmean(counts)
    expected = 0.0 if mean == 0 else statistics.pstdev(counts) / mean
    assert coefficient_of_variation(counts) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@given(counts_lists)
def test_deviation_rate_is_max_minus_min_over_mean(counts: list[int]) -> None:
    mean = statistics.fmean(counts)
    expected = 0.0 if mean == 0 else (max(counts) - min(counts)) / mean
    assert deviation_rate(counts) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_distribution_extremes() -> None:
    even = distribution([5, 5, 5, 5])
    assert (even.max_over_mean, even.cv, even.gini, even.excess, even.empty) == (1.0, 0.0, 0.0, 0.0, 0)
    one = distribution([0, 0, 0, 12])
    assert one.top_share == 1.0 and one.excess == 1.0 and one.empty == 3
    assert one.max_over_mean == 4.0
    assert one.gini == pytest.approx(3 / 4)  # (n-1)/n when everything is in one bucket


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ValueError):
        distribution([])
    with pytest.raises(ValueError):
        distribution([1, -1])
    with pytest.raises(ValueError):
        key_overhead_bytes(100, 0)


def test_key_overhead_is_key_bytes_times_cells() -> None:
    assert key_overhead_bytes(1_000, 10) == 10_000


# -------------------------------------------------------------------------------- timeline


@given(st.lists(st.integers(0, 4), min_size=1, max_size=400), st.integers(1, 12), st.integers(1, 50))
@settings(max_examples=60)
def test_timeline_known_total_puts_each_write_in_its_window(idx: list[int], windows: int, chunk: int) -> None:
    t = Timeline(windows, 5, total_rows=len(idx))
    for i in range(0, len(idx), chunk):
        t.update(np.array(idx[i : i + chunk]))
    m = t.matrix()
    w = min(windows, len(idx))
    expected = np.zeros((w, 5), dtype=np.int64)
    for pos, r in enumerate(idx):
        expected[pos * w // len(idx), r] += 1
    assert np.array_equal(m, expected)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=3000), st.integers(1, 20), st.integers(1, 700))
@settings(max_examples=60)
def test_timeline_unknown_total_keeps_every_write_in_order(idx: list[int], windows: int, chunk: int) -> None:
    t = Timeline(windows, 4)
    for i in range(0, len(idx), chunk):
        t.update(np.array(idx[i : i + chunk]))
    m = t.matrix()
    assert m.shape[0] <= windows
    assert np.array_equal(m.sum(axis=0), np.bincount(idx, minlength=4))
    # Windows are contiguous slices of the stream: replaying the per-window totals in order
    # must reproduce the per-region counts of each prefix slice.
    start = 0
    for row in m:
        n = int(row.sum())
        assert np.array_equal(row, np.bincount(idx[start : start + n], minlength=4))
        start += n


def test_hot_window_share_of_a_rotating_hotspot_is_one() -> None:
    m = np.eye(4, dtype=np.int64) * 10
    assert hot_window_share(m) == 1.0
    assert hot_window_share(np.full((3, 4), 7)) == 0.25


# -------------------------------------------------------------------------------- verdicts


def test_all_writes_in_one_region_is_a_hotspot() -> None:
    rng = random.Random(1)
    keys = [_key(7, rng) for _ in range(20_000)]
    a = analyze(keys, SPLITS)
    assert a.verdict == "hotspot"
    assert a.regions[7].rows == 20_000 and a.regions[7].share == 1.0
    assert a.empty_regions == R - 1
    assert "07" in " ".join(a.reasons)


def test_uniform_writes_are_balanced() -> None:
    rng = random.Random(2)
    keys = [_key(rng.randrange(R), rng) for _ in range(50_000)]
    a = analyze(keys, SPLITS)
    assert a.verdict == "balanced", a.reasons
    assert a.max_over_mean < 1.2
    assert a.hot_window_share < 2 / R


def test_rotating_hot_region_is_a_hotspot_in_time_though_totals_are_even() -> None:
    """Timestamp-leading keys over time-range splits: each slice of time writes one region."""
    rng = random.Random(3)
    per = 2_000
    keys = [_key(w, rng) for w in range(R) for _ in range(per)]
    a = analyze(keys, SPLITS, windows=R)
    assert a.max_over_mean == pytest.approx(1.0)  # totals perfectly even
    assert a.gini == pytest.approx(0.0)
    # Every moment lies in one region except those that straddle one of the R - 1 region edges.
    moments = R * per // a.moment_rows
    assert a.hot_window_share >= 1 - (R - 1) / moments / 2
    assert a.hot_window_share > 0.9
    assert a.verdict == "hotspot"
    assert "in time" in a.reasons[0]


def test_moderate_imbalance_is_skewed() -> None:
    rng = random.Random(4)
    weights = [2.0] + [1.0] * (R - 1)  # one region gets twice its share
    regions = rng.choices(range(R), weights=weights, k=60_000)
    a = analyze([_key(r, rng) for r in regions], SPLITS)
    assert a.verdict == "skewed", a.reasons
    assert 1.7 < a.max_over_mean < 2.2


def test_few_rows_over_many_regions_are_not_called_a_hotspot() -> None:
    """Chance alone makes 300 random rows over 16 regions uneven; the verdict must not fire."""
    rng = random.Random(5)
    a = analyze([_key(rng.randrange(R), rng) for _ in range(300)], SPLITS, windows=50)
    assert a.verdict != "hotspot", a.reasons
    assert any("more rows" in r for r in a.reasons)


def test_single_region_is_a_hotspot_with_presplit_advice() -> None:
    a = analyze([b"%08d" % i for i in range(1_000)], [])
    assert a.verdict == "hotspot"
    assert any("Pre-split" in x for x in a.advice)


def test_monotonic_leading_field_advice_names_the_fields() -> None:
    keys = [b"%012d_u%05d" % (i, i % 977) for i in range(40_000)]
    splits = [b"%012d" % (i * 2_500) for i in range(1, 16)]
    hints = SchemaHints(
        leading_field="order_time",
        monotonic_field="order_time",
        monotonic_generator="sequential-time",
        spread_field="user_id",
        prefix_strategy="none",
    )
    a = analyze(keys, splits, hints=hints)
    assert a.verdict == "hotspot"
    assert a.increasing_fraction == 1.0
    advice = " ".join(a.advice)
    assert "order_time is monotonic" in advice and "user_id" in advice


def test_chunked_stream_counts_like_a_flat_list() -> None:
    rng = random.Random(6)
    keys = [_key(rng.randrange(R), rng) for _ in range(10_000)]
    flat = analyze(keys, SPLITS, total_rows=len(keys))
    chunked = analyze((keys[i : i + 777] for i in range(0, len(keys), 777)), SPLITS, total_rows=len(keys))
    assert [r.rows for r in flat.regions] == [r.rows for r in chunked.regions]
    assert np.array_equal(flat.heat, chunked.heat)
    assert flat.key_bytes == chunked.key_bytes == 11 * len(keys)


def test_auto_split_of_sequential_keys_keeps_one_hot_region() -> None:
    """The classic hot-spot story: an un-split table with sequential keys writes only to its last region."""
    keys = [b"%010d" % i for i in range(20_000)]
    a = analyze(keys, [], auto_split_rows=2_000)
    assert a.auto_split is not None and a.auto_split["splits"] >= 5
    assert len(a.regions) == a.auto_split["final_regions"]
    assert a.verdict == "hotspot"
    assert a.hot_window_share > 0.9


def test_json_has_the_documented_fields() -> None:
    rng = random.Random(7)
    a = analyze([_key(rng.randrange(R), rng) for _ in range(5_000)], SPLITS + [b"\xff\x00"])
    d = json.loads(a.to_json())
    for name in ("rows", "regions", "max_over_mean", "cv", "gini", "deviation_rate", "hot_window_share", "verdict", "reasons"):
        assert name in d
    assert d["rows"] == 5_000
    assert d["regions"][0]["start"] == "" and d["regions"][-1]["end"] == ""
    assert d["regions"][-1]["start"] == "\\xFF\\x00"  # toStringBinary form
    assert sum(r["rows"] for r in d["regions"]) == 5_000
    assert sum(r["share"] for r in d["regions"]) == pytest.approx(1.0)


def test_empty_stream_is_refused() -> None:
    with pytest.raises(ValueError, match="no keys"):
        analyze([], SPLITS)


# ------------------------------------------------------------------ strategy variants


def _java_string_hash(text: str) -> int:
    """Java's String.hashCode (s[0]*31^(n-1) + ... + s[n-1], int arithmetic), written out."""
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def test_strategy_variants_keep_the_design_and_change_only_the_prefix() -> None:
    from pathlib import Path

    from keyshape.analysis.designs import strategy_variants
    from keyshape.schema import KeySchema

    orders = KeySchema.load(Path(__file__).resolve().parents[2] / "examples" / "orders.toml")
    variants = strategy_variants(orders, ["none", "mod:16", "phoenix:8", "md5"])
    assert [v.name for v in variants] == ["orders [none]", "orders [mod:16]", "orders [phoenix:8]", "orders [md5:4]"]
    for v in variants:
        assert v.schema.field_names == orders.field_names
        assert v.schema.hash_fields == ["user_id"] and v.schema.separator == b"_"
        assert v.schema.workload is orders.workload and v.schema.table == orders.table
    assert [v.schema.prefix.name for v in variants] == ["none", "mod", "phoenix", "md5"]
    rec = {"user_id": "user0000042", "order_time": 1767225600000, "order_id": "1000042"}
    k = orders.with_prefix("none", splits=None).encode(rec)
    assert k == b"user0000042_" + b"%019d" % (2**63 - 1 - 1767225600000) + b"_000042"
    none, mod, phoenix, md5 = (v.schema for v in variants)
    assert none.encode(rec) == k
    # mod: "%02d" % ((user_id.hashCode() & 0x7FFFFFFF) % 16) + "_" + K (the classic Java layout).
    bucket = (_java_string_hash("user0000042") & 0x7FFFFFFF) % 16
    assert mod.encode(rec) == b"%02d_" % bucket + k
    assert phoenix.encode(rec)[1:] == k and phoenix.encode(rec)[0] < 8
    assert md5.encode(rec)[5:] == k and md5.encode(rec)[4:5] == b"_"
    # Splits matched to the strategy, the schema's 20 regions kept where the buckets allow.
    assert mod.splits.algorithm == "prefix" and mod.split_keys() == [b"%02d" % i for i in range(1, 16)]
    assert phoenix.split_keys() == [bytes([i]) for i in range(1, 8)]
    assert md5.splits.algorithm == "prefix" and len(md5.split_keys()) == 19
    assert none.splits.algorithm == "sample" and none.splits.regions == 20  # orders' own splits are prefix splits
    assert "sample" in variants[0].splits and "prefix" in variants[1].splits


def test_strategy_variant_none_keeps_the_schemas_own_range_splits() -> None:
    from pathlib import Path

    from keyshape.analysis.designs import strategy_variants
    from keyshape.schema import KeySchema

    ts = KeySchema.load(Path(__file__).resolve().parents[2] / "examples" / "timestamp-leading.toml")
    none, crc = strategy_variants(ts, ["none", "crc32"])
    assert none.schema.split_keys() == ts.split_keys() and "own range splits" in none.splits
    assert crc.schema.prefix.name == "crc32" and len(crc.schema.split_keys()) == 15
    assert crc.schema.split_keys()[0] == b"1000"  # bucket 4096 of 65536, "%04x"


@pytest.mark.parametrize(
    "entries, message",
    [
        (["mod:1"], "key.prefix.buckets: 1 is out of range"),
        (["bogus"], "unknown value 'bogus'"),
        (["mod:x"], "not a whole number"),
        (["none", ""], "empty"),
        (["mod:16", "mod:16"], "listed twice"),
    ],
)
def test_bad_strategy_entries_are_refused(entries: list[str], message: str) -> None:
    from pathlib import Path

    from keyshape.analysis.designs import strategy_variants

    with pytest.raises(ValueError, match=message):
        strategy_variants(Path(__file__).resolve().parents[2] / "examples" / "orders.toml", entries)


def test_auto_split_server_share_counts_the_live_region_on_its_one_server() -> None:
    """Before a split the whole hot region sits on one server, so the busiest server takes at
    least what the busiest live region takes in every window (the final regions would wrongly
    spread a window that straddles a split over two servers)."""
    keys = [b"%010d" % i for i in range(20_000)]
    a = analyze(keys, [], auto_split_rows=2_000, servers=3)
    assert a.hot_window_server_share >= a.hot_window_share > 0.9


def test_monotonic_keys_are_not_told_to_pre_split_or_auto_split_as_they_are() -> None:
    """Split points from today's sequential keys all sort below tomorrow's: the advice for a
    single region or an auto-split run must send the user to salting, not to plain pre-splits."""
    keys = [b"%010d" % i for i in range(20_000)]
    for a in (analyze(keys, []), analyze(keys, [], auto_split_rows=2_000)):
        advice = " ".join(a.advice)
        assert "salt" in advice
        assert 'else "sample"' not in advice
        assert "Pre-split to" not in advice


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.binary(max_size=4), max_size=12), max_size=4))
def test_write_order_on_key_arrays_equals_the_byte_compare(chunks):
    from keyshape.analysis.signals import WriteOrder
    from keyshape.core.keyarray import KeyArray

    a, b = WriteOrder(), WriteOrder()
    start, flat = 0, []
    for chunk in chunks:
        a.update(chunk, start)
        b.update(KeyArray.from_keys(chunk), start)
        start += len(chunk)
        flat += chunk
    pairs = list(zip(flat, flat[1:]))
    expected = (len(pairs), sum(y > x for x, y in pairs), sum(y < x for x, y in pairs))
    assert (a.pairs, a.up, a.down) == (b.pairs, b.up, b.down) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab\x00é", max_size=4), min_size=1, max_size=300), st.booleans())
def test_value_counts_of_text_columns_equal_numpy_unique(values, as_bytes):
    """Text columns are counted by Arrow's hash table over the rows' bytes: the same distinct
    values and counts as np.unique (numpy's own equality: trailing NULs do not count)."""
    from keyshape.analysis.signals import HeavyHitters, _value_counts

    arr = np.array([v.encode() for v in values]) if as_bytes else np.array(values)
    got, counts = _value_counts(arr)
    want, want_counts = np.unique(arr, return_counts=True)
    assert dict(zip(got.tolist(), counts.tolist())) == dict(zip(want.tolist(), want_counts.tolist()))
    hh = HeavyHitters(k=3)
    hh.update(arr)
    best = max(want_counts)
    assert hh.top(1)[0][1] == best / len(arr) and want_counts[want.tolist().index(hh.top(1)[0][0])] == best
