"""``keyshape advise --prove`` on the 3-region-server cluster (issue 31), for each scenario of
examples/advise/: the cost constants fitted on the cluster (``--calibrate``), the advisor run on a
sample from the scenario's generator, then at least 5 designs loaded and measured
(:func:`keyshape.analysis.advise.prove.prove`: every design loaded, the patterns replayed in
round-robin rounds, medians per query; the busiest server's share of the writes read from the
regions as the cluster placed them). Asserted per scenario:

- the advisor's top design is measured at least as good as the scenario's hand design on the
  weighted cost (reads + writes, ms of work per second);
- predicted and measured weighted costs rank the designs alike: Spearman >= 0.8;
- the write share is the cluster's: every share lies in [1/3, 1], and some design's regions spread
  its writes over more than one server (a share below 0.9).

The designs are the top one, the hand design, and designs spread over the predicted costs
(:func:`prove.spread`): designs the model prices alike cannot show a rank agreement.
Cost measured on this 2-core machine at load 5-28 from other sessions: the cluster's start ~35 s,
calibration ~5 s, then 4-10 minutes a scenario (the 5 JVMs wait for CPU); far over the 3-4 minutes
meant, so run it alone: ``KEYSHAPE_ADVISE_CLUSTER=1 .venv/bin/pytest tests/cluster/test_advise_cluster.py``.

It is NOT in the default run (issue 31 stays open on it): it does not pass yet — in each scenario
the top design measured worse than the hand design (the sample is too small for the horizon's full
scans to cost what they will; the model leaves out where the index table's own writes pile up),
and metrics' Spearman was 0.60 — and at 20-50 minutes it would take CI past its budget. The
assertions stay as the issue states them; the run is opt-in until they hold.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hbase_cluster_fixture import MEASURED

from keyshape.analysis.advise import advise
from keyshape.analysis.advise.calibrate import calibrate
from keyshape.analysis.advise.costs import CostModel
from keyshape.analysis.advise.prove import prove, spread
from keyshape.analysis.advise.score import QUERIES_PER_PATTERN
from keyshape.store import open_store

pytestmark = [
    pytest.mark.hbase,
    pytest.mark.hbase_cluster,
    pytest.mark.skipif(
        os.environ.get("KEYSHAPE_ADVISE_CLUSTER") != "1",
        reason="advise --prove on the cluster: opt-in (KEYSHAPE_ADVISE_CLUSTER=1; 20-50 min, does not pass yet: issue 31)",
    ),
]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "advise"
SCENARIOS = ("orders", "metrics", "audit", "profiles", "saas")
ROWS = 3000  # per sample: per-entity reads stay small, fan-out, full scans and indexes show
REQUESTS = QUERIES_PER_PATTERN  # every query the advisor scored each pattern on, timed in every round
REPEATS = 3  # rounds (after one unmeasured), a lower quartile per query
CANDIDATES = 5  # designs proven per scenario, the hand design included
MAX_DESIGNS = 40


@pytest.fixture(scope="module")
def fitted(hbase_cluster_session: Any) -> CostModel:
    store = open_store(hbase_cluster_session.url)
    try:
        cal = calibrate(store, where=hbase_cluster_session.url, prefix="ksa_calib")
    finally:
        store.close()
    MEASURED.append(f"advise calibration on the cluster ({cal.seconds:.1f} s): {cal.model}")
    return cal.model


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_prove_on_the_cluster(hbase_cluster: Any, fitted: CostModel, scenario: str, tmp_path: Path) -> None:
    folder = EXAMPLES / scenario
    data = tmp_path / f"{scenario}.parquet"
    subprocess.run([sys.executable, str(folder / "generate.py"), str(data), str(ROWS)], check=True, capture_output=True)
    hand_path = next(folder.glob("hand-*.toml"))
    advice = advise(data, folder / "WORKLOAD.toml", compare=[hand_path], max_designs=MAX_DESIGNS, model=fitted)
    chosen = spread(advice, CANDIDATES, REQUESTS)
    assert len(chosen) >= CANDIDATES
    store = open_store(hbase_cluster.url)
    try:
        proof = prove(advice, store, requests=REQUESTS, prefix=f"ksa_prove_{scenario}", chosen=chosen, repeats=REPEATS)
        assert not [t for t in store.list_tables() if t.startswith("ksa_prove")]  # dropped after
    finally:
        store.close()
    lines = [f"advise prove {scenario}: Spearman {proof.spearman:.2f} (reads alone {proof.read_spearman:.2f}) over {len(proof.designs)} designs"]
    for m in proof.designs:
        lines.append(
            f"  {m.name}{' (hand)' if m.hand else ''}: predicted {m.predicted_cost:,.1f}, measured {m.measured_cost:,.1f} ms/s "
            f"(reads {m.measured_read_cost:,.1f}, of which extrapolated {m.extrapolated_read_cost:,.1f}; history x{m.copies}); "
            f"busiest server {m.measured_share:.2f} (predicted {m.predicted_share:.2f}); {m.label}"
        )
    MEASURED.extend(lines)
    print("\n".join(lines))
    by_name = {m.name: m for m in proof.designs}
    top = by_name[advice.top.design.name]
    hand = next(m for m in proof.designs if m.hand)
    assert top.measured_cost <= hand.measured_cost, (top, hand)
    assert proof.spearman >= 0.8
    assert all(1 / 3 - 1e-9 <= m.measured_share <= 1.0 for m in proof.designs)
    assert any(m.measured_share < 0.9 for m in proof.designs)
