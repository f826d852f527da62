"""The verdict means the same at 1 region and at 100,000 (issue 28, item 1).

Each classic design is built at the byte level (as a Java writer would lay it out), its table split
as an operator would split it, and analyzed at region counts drawn from 1 to 100,000. The verdict an
HBase expert gives does not depend on the region count: a sequential or time-leading key is a
hotspot (one region takes the writes at any moment) however finely the table is split; a salt with a
bucket per region and a hash prefix over a split hash space are balanced; a Zipf tenant mix leading
the key leaves one region with a quarter of every moment's writes, which is skewed. Before the
moments of ``timeline.moment_rows`` the sequential key was "balanced" at 1,000 regions.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from keyshape.analysis import analyze
from keyshape.analysis.timeline import Moments, dwell, moment_rows

MAX_REGIONS = 100_000


def _be(values: np.ndarray, width: int) -> np.ndarray:
    return np.asarray(values, dtype=np.uint64).astype(">u8").view(np.uint8).reshape(-1, 8)[:, 8 - width :]


def _keys(*cols: np.ndarray) -> list[bytes]:
    return [bytes(r) for r in np.hstack(cols)]


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """A well-mixed 64-bit hash of each value (SplitMix64's finalizer)."""
    with np.errstate(over="ignore"):
        z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _quantile_splits(keys: list[bytes], regions: int) -> list[bytes]:
    ordered = sorted(keys)
    return sorted({ordered[(i * len(ordered)) // regions] for i in range(1, regions)})


def design(name: str, rows: int, regions: int, seed: int = 0) -> tuple[list[bytes], list[bytes]]:
    """(keys in write order, split keys) of one classic design."""
    rng = np.random.default_rng(seed)
    ids = np.arange(rows, dtype=np.uint64)
    if name == "sequential":  # Bytes.toBytes(long) of a counter; splits sampled from the keys
        keys = _keys(_be(ids, 8))
        return keys, _quantile_splits(keys, regions)
    if name == "timestamp-leading":  # event time (ms) then a random id; createTable(start, end, n)
        lo = 1_767_225_600_000
        keys = _keys(_be(lo + ids * 1000, 8), _be(rng.integers(0, 1 << 32, rows), 4))
        hi = lo + rows * 1000
        return keys, [bytes(_be(np.array([lo + (hi - lo) * i // regions]), 8)[0]) for i in range(1, regions)]
    if name == "salted":  # a 4-byte bucket of a hashed id, one bucket per region, then the id
        bucket = _splitmix64(ids) % np.uint64(regions)
        keys = _keys(_be(bucket, 4), _be(ids, 8))
        return keys, [bytes(_be(np.array([i]), 4)[0]) for i in range(1, regions)]
    if name == "hashed":  # md5(id)[:4] + id, the hash space split evenly (HexStringSplit-like)
        prefix = b"".join(hashlib.md5(i.to_bytes(8, "big")).digest()[:4] for i in range(rows))
        keys = _keys(np.frombuffer(prefix, dtype=np.uint8).reshape(-1, 4), _be(ids, 8))
        return keys, [bytes(_be(np.array([(i << 32) // regions]), 4)[0]) for i in range(1, regions)]
    if name == "zipf-tenants":  # tenant id (Zipf 1.3 over 10,000) leading, then a sequence
        tenant = rng.zipf(1.3, rows) % 10_000
        keys = _keys(_be(tenant, 4), _be(ids, 8))
        return keys, _quantile_splits(keys, regions)
    raise AssertionError(name)


def _rows_for(regions: int) -> int:
    # At least 4 rows per region: with fewer, no region can take two writes in a row of its own.
    return max(40_000, 4 * regions)


EXPERT = {"sequential": "hotspot", "timestamp-leading": "hotspot", "salted": "balanced", "hashed": "balanced"}

region_counts = st.integers(min_value=0, max_value=500).map(lambda i: max(1, round(MAX_REGIONS ** (i / 500))))


@pytest.mark.parametrize("name", sorted(EXPERT))
@settings(max_examples=12, deadline=None)
@given(regions=region_counts)
@example(regions=1)
@example(regions=2)
@example(regions=1_000)
@example(regions=MAX_REGIONS)
def test_classic_designs_keep_their_verdict_at_every_region_count(name: str, regions: int) -> None:
    keys, splits = design(name, _rows_for(regions), regions)
    a = analyze(keys, splits)
    expected = "hotspot" if len(a.regions) == 1 else EXPERT[name]
    assert a.verdict == expected, (name, regions, a.reasons)


@settings(max_examples=10, deadline=None)
@given(regions=st.integers(min_value=16, max_value=MAX_REGIONS // 4))
@example(regions=16)
@example(regions=1_000)
@example(regions=MAX_REGIONS // 4)
def test_a_zipf_tenant_mix_leading_the_key_is_skewed_at_every_region_count(regions: int) -> None:
    """The top tenant takes a quarter of the writes, always at the tail of its own key range: one
    region takes a quarter of every moment's writes, 4x to 25,000x its fair share. Totals are even
    (splits from the keys' quantiles), so only the moments can show it."""
    keys, splits = design("zipf-tenants", max(200_000, 8 * regions), regions)
    a = analyze(keys, splits)
    assert a.max_over_mean < 1.5
    assert a.verdict == "skewed", (regions, a.reasons)


@pytest.mark.parametrize("name", ["sequential", "hashed"])
@pytest.mark.parametrize("regions", [16, 1_000, 20_000])
def test_the_heat_map_windows_do_not_change_the_verdict(name: str, regions: int) -> None:
    """--windows draws the picture; the verdict reads moments (with 2,000 windows the sequential
    key was a 100% hotspot, with 50 windows over 1,000 regions "balanced")."""
    keys, splits = design(name, 100_000, regions)
    results = [analyze(keys, splits, windows=w) for w in (1, 50, 2_000)]
    assert {a.verdict for a in results} == {EXPERT[name]}
    assert len({round(a.hot_window_share, 12) for a in results}) == 1
    assert len({a.moment_rows for a in results}) == 1


@pytest.mark.parametrize(
    "rows,regions,expected", [(200_000, 1, 65_536), (200_000, 16, 4_096), (200_000, 1_000, 64), (200_000, 100_000, 16), (10, 3, 16), (0, 5, 16)]
)
def test_a_moment_is_half_a_region_s_rows_as_a_power_of_two_and_at_least_16(rows: int, regions: int, expected: int) -> None:
    assert moment_rows(rows, regions) == expected


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), width=st.sampled_from([1, 2, 3, 16, 64]), pieces=st.integers(1, 9), regions=st.integers(1, 40))
def test_moments_of_a_stream_counted_in_pieces_merge_into_one_pass(seed: int, width: int, pieces: int, regions: int) -> None:
    """Parquet row groups and Spark partitions count pieces of one stream apart: the merged moments,
    and the pairs of consecutive writes across the pieces' edges, are exactly one pass's."""
    rng = random.Random(seed)
    n = rng.randrange(1, 700)
    # Runs of one region (so moments and pairs are not all alike), in write order.
    idx = np.repeat(np.array([rng.randrange(regions) for _ in range(n)]), [rng.randrange(1, 6) for _ in range(n)])[:n]
    server_of = np.arange(regions) % 3
    one = Moments(width, regions, server_of)
    one.update(idx, np.arange(idx.size))
    cuts = sorted(rng.sample(range(1, idx.size), min(pieces - 1, idx.size - 1))) if idx.size > 1 else []
    bounds = list(zip([0, *cuts], [*cuts, idx.size]))
    rng.shuffle(bounds)
    merged = Moments(width, regions, server_of)
    for lo, hi in bounds:
        part = Moments(width, regions, server_of)
        part.update(idx[lo:hi], np.arange(lo, hi))
        merged.merge(part)
    for got, want in zip(merged.shares(), one.shares()):
        np.testing.assert_array_equal(got, want)
    assert (merged.pairs, merged.same) == (one.pairs, one.same) == (idx.size - 1, int(np.sum(idx[1:] == idx[:-1])))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), width=st.sampled_from([1, 2, 3, 16, 64]), pieces=st.integers(1, 9), regions=st.sampled_from([1, 7, 40, 500]))
def test_moments_of_consecutive_writes_are_the_general_count(seed: int, width: int, pieces: int, regions: int) -> None:
    """A chunk of consecutive positions (the key-file engine's batches) is counted by slicing
    its moments out; a chunk given in another order takes the general grouping: the same counts."""
    rng = random.Random(seed)
    n = rng.randrange(1, 700)
    idx = np.array([rng.randrange(regions) for _ in range(n)])
    server_of = np.arange(regions) % 3
    cuts = sorted(rng.sample(range(1, n), min(pieces - 1, n - 1))) if n > 1 else []
    run, general = Moments(width, regions, server_of), Moments(width, regions, server_of)
    for lo, hi in zip([0, *cuts], [*cuts, n]):
        run.update(idx[lo:hi], np.arange(lo, hi))
        back = np.arange(hi - 1, lo - 1, -1)  # the same writes, positions descending
        general.update(idx[back], back)
    for got, want in zip(run.shares(), general.shares()):
        np.testing.assert_array_equal(got, want)
    assert (run.pairs, run.same) == (general.pairs, general.same)


def test_moments_count_the_busiest_region_and_server_of_each_moment() -> None:
    # Regions 0..3 on servers 0, 1, 0, 1; moments of 4 writes.
    m = Moments(4, 4, np.array([0, 1, 0, 1]))
    m.update(np.array([0, 0, 0, 1, 2, 3, 2, 0, 1]), np.arange(9))
    region, server, writes = m.shares()
    np.testing.assert_allclose(region, [3 / 4, 2 / 4, 1.0])
    np.testing.assert_allclose(server, [3 / 4, 3 / 4, 1.0])
    np.testing.assert_array_equal(writes, [4, 4, 1])


def test_dwell_is_one_for_a_walk_and_chance_for_independent_writes() -> None:
    walk = np.repeat(np.arange(1_000), 2)  # 2 rows per region, one region after the other
    counts = np.bincount(walk)
    same = int(np.sum(walk[1:] == walk[:-1]))
    d, chance = dwell(same, walk.size - 1, counts)
    assert d == 1.0 and chance < 0.01
    rng = np.random.default_rng(1)
    iid = rng.integers(0, 1_000, 2_000)
    d, chance = dwell(int(np.sum(iid[1:] == iid[:-1])), iid.size - 1, np.bincount(iid, minlength=1_000))
    assert d < 0.05 and abs(d - chance) < 0.03
    cycle = np.tile(np.arange(16), 100)  # a salt cycling through its buckets never dwells
    assert dwell(0, cycle.size - 1, np.bincount(cycle))[0] == 0.0
