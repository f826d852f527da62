"""load-split's scores and replay without a cluster (issue 41; on the real HBase:
tests/hbase/test_loadsplit.py)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from keyshape.ops.loadsplit import MAX_BALANCE, _replay, score_candidates


def test_tikv_scores_pick_the_median_of_point_writes_and_count_ranges_cut() -> None:
    keys = [b"k%03d" % i for i in range(100)]
    best = score_candidates(keys)[0]
    assert best.balance <= MAX_BALANCE and abs(best.left - best.right) <= 6 and best.crossing == 0.0
    # a scan over [k040, k060) is cut by every candidate inside it: crossing counts it
    cut = score_candidates(keys, ranges=[(b"k040", b"k060")] * 50)
    inside = [c for c in cut if b"k040" < c.key < b"k060"]
    assert inside and all(c.crossing == pytest.approx(50 / 150) for c in inside)


def test_replay_halves_a_hot_band_but_not_a_sequential_stream() -> None:
    rng = random.Random(1)
    times = np.arange(1000, dtype=np.float64) / 100.0
    band = [b"u%05d" % rng.randrange(100_000) for _ in range(1000)]
    split = sorted(band)[500]
    assert _replay(times, band, None, 100.0, np.zeros(0)) == 1.0
    assert _replay(times, band, split, 100.0, np.zeros(0)) == pytest.approx(0.5, abs=0.1)
    seq = [b"%012d" % i for i in range(1000)]
    mid = seq[500]
    # in time order each interval's writes fall on one side of the median: no relief at all
    assert _replay(times, seq, mid, 100.0, np.zeros(0)) == pytest.approx(1.0)
    # the other regions' measured writes count in the table's busiest share
    assert _replay(times, band, None, 100.0, np.array([100.0])) == pytest.approx(0.5)
