"""``keyshape advise --prove`` on the 3-region-server cluster (issue 31), for each scenario of
examples/advise/: the cost constants fitted on the cluster (``--calibrate``), the advisor run on a
sample from the scenario's generator, then 5 designs loaded and measured at the horizon the advisor
ranks at (:func:`keyshape.analysis.advise.prove.prove`: the sample, then its entities' history as
earlier copies of it; reads of the whole table or of a whole window at the live rate, 10^7-10^11
rows there, extrapolated at a time per row measured on the loaded tables; every query the advisor
scored, by the route it chose, interleaved over the designs, a lower quartile per query; the
busiest server's share of the writes read from the regions as the cluster placed them). Asserted
per scenario:

- the advisor's top design is measured at least as good as the scenario's hand design on the
  weighted cost (reads + writes, ms of work per second), within the margin the measurement's own
  noise justifies (:func:`_noise`); not asserted where the two are the same key (only their split
  points differ: the saas case, where 11% between them was a neighbour's load, issue 43) or the
  advisor itself ranks them equal within its precision: a ranking between equals is noise;
- predicted and measured weighted costs rank the designs alike: Spearman >= 0.8, designs the model
  prices within 5% of each other counted as a tie (their measured order is noise, issue 43);
- the write share is the cluster's: every share lies in [1/3, 1], and some design's regions spread
  its writes over more than one server (a share below 0.9).

The designs are the top one, the hand design, and designs spread over the predicted costs
(:func:`prove.spread`): designs the model prices alike cannot show a rank agreement.

Measured at commit f6b5f91 (2 cores at load ~3.5; measured ms/s, top vs hand, Spearman):
orders 523 vs 572, 1.00; metrics 781 vs 1,799, 1.00; audit 17,806 vs 8.0e8, 1.00; profiles 1,145
vs 1.8e8, 1.00; saas 891 vs 998, 1.00 (at e0d9299 the same order in all five, profiles' Spearman
0.90). Again at 11831af: all pass, top vs hand 416/465, 1,070/1,177 (the top then device + metric +
ts), 20,539/9.1e8, 1,104/1.7e8, 1,048/1,110; Spearman 1.00, 1.00, 0.90, 0.90, 1.00. In orders,
metrics and saas the top wins by 6-11% in a run: three runs agreed, but how often that order holds
under a much heavier load from other sessions is not measured. In audit and profiles the hand
design scans the whole table for a read by field (1e9-1e11 rows at the horizon): its cost is
extrapolated, the top's is not (audit's top extrapolates its all-events-of-the-hour window, as
every design there must).
At 8d25e13 (issue 39: reads priced from the workload's rates, so every read is extrapolated at the
measured time per row to the model's rows at the horizon): all five pass, Spearman 1.00 (audit's
reads alone 0.97), top vs hand measured 2.0e6/1.0e7, 4.3e5/1.2e9, 4.0e7/3.9e9, 1,524/5.1e8,
2,342/1.8e10; busiest server measured within 0.04 of the replay's in every design; 516 s for the
file at load ~13.
Cost: the cluster's start ~22 s, calibration ~4 s, 16-40 s a scenario, 153-164 s for the file
alone (5 passed again at 08:49 UTC on the session's quiet machine, after the prove.pick change). It
runs in the default suite (CI) with the other cluster files, whose session cluster it shares.

Which scenarios the default run proves (issue 43: the suite's 30-minute budget): the five run the
same checks, and fall in two kinds. ``orders`` (and ``metrics``): the top and the hand design are
different keys a few percent apart, so the top-vs-hand check runs within the noise margin;
``audit`` (and ``profiles``): the hand design scans the whole table for a read by field, its cost
extrapolated to 1e9-1e11 rows, the top's a salted index, so the check meets a gap of orders of
magnitude and a design whose writes all land on one server (share 1.00). ``saas`` runs the same
checks minus top-vs-hand (its top and hand are the same key). The default run proves one of each
kind, ``orders`` and ``audit``; every scenario's top-vs-hand ranking as predicted is checked by
tests/unit/test_advise.py (all five). ``KEYSHAPE_ADVISE_SCENARIOS=all`` (or a comma-separated list)
runs the others too, ~65 s more on the quiet machine.
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
from keyshape.analysis.advise.prove import prove, spearman, spread
from keyshape.analysis.advise.score import QUERIES_PER_PATTERN, Score
from keyshape.store import open_store

pytestmark = [
    pytest.mark.hbase,
    pytest.mark.hbase_cluster,
]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "advise"
SCENARIOS = ("orders", "metrics", "audit", "profiles", "saas")
DEFAULT_SCENARIOS = ("orders", "audit")  # one of each kind of check (module docstring)
_ASKED = os.environ.get("KEYSHAPE_ADVISE_SCENARIOS", "").strip()
RUN = SCENARIOS if _ASKED == "all" else tuple(_ASKED.split(",")) if _ASKED else DEFAULT_SCENARIOS
ROWS = 3000  # per sample: per-entity reads stay small, fan-out, full scans and indexes show
REQUESTS = QUERIES_PER_PATTERN  # every query the advisor scored each pattern on, timed in every round
REPEATS = 3  # rounds (after one unmeasured), a lower quartile per query
CANDIDATES = 5  # designs proven per scenario, the hand design included
MAX_DESIGNS = 40
# Designs the model prices within 5% of each other (prove.spread's narrowest gap) are a tie in the
# rank agreement: their measured order is the noise's (issue 43: audit proved two pairs 0.0002% and
# 3% apart in predicted cost, measured 0.001% and 0.0004% apart, and one swap took it to 0.90).
TIE = 0.05


@pytest.fixture(scope="module")
def fitted(hbase_cluster_session: Any) -> CostModel:
    store = open_store(hbase_cluster_session.url)
    try:
        cal = calibrate(store, where=hbase_cluster_session.url, prefix="ksa_calib")
    finally:
        store.close()
    MEASURED.append(f"advise calibration on the cluster ({cal.seconds:.1f} s): {cal.model}")
    return cal.model


def _same_key(a: Score, b: Score) -> bool:
    """Whether two designs write the same keys (the same fields, order, prefix and index tables;
    only the split points may differ)."""
    sa, sb = a.design.schema, b.design.schema

    def shape(s: Any) -> tuple[Any, ...]:
        return (tuple(s.field_names), s.prefix.name, s.prefix.count(), tuple(s.hash_fields) if s.prefix.salted else ())

    return shape(sa) == shape(sb) and [shape(t) for t in a.design.index_tables] == [shape(t) for t in b.design.index_tables]


def _tied(costs: list[float], rel: float = TIE) -> list[float]:
    """``costs`` with each run of values within ``rel`` of the run's smallest replaced by it, so
    the rank correlation gives them one (shared) rank."""
    out = list(costs)
    floor = None
    for i in sorted(range(len(costs)), key=lambda i: costs[i]):
        if floor is None or costs[i] > floor * (1 + rel):
            floor = costs[i]
        out[i] = floor
    return out


def _noise(*measured: Any) -> float:
    """The relative noise of a measured weighted cost: per pattern, the spread of single queries
    ((p99 - p50) / p50) over the square root of the queries timed, weighted by the pattern's share
    of the cost; twice the larger of the designs'. Not a time asserted: a margin."""
    out = 0.0
    for m in measured:
        spreads = [(p99 - p50) / p50 for p50, p99 in m.latency_ms.values() if p50 > 0]
        rel = max(spreads, default=0.0) / (REQUESTS * REPEATS) ** 0.5
        out = max(out, 2 * rel)
    return out


@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(s, marks=() if s in RUN else pytest.mark.skip(reason="same checks as orders/audit; KEYSHAPE_ADVISE_SCENARIOS=all runs it"))
        for s in SCENARIOS
    ],
)
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
    hand_score = next(s for s in advice.ranked if s.design.name == hand.name)
    if _same_key(advice.top, hand_score) or hand_score.rank == advice.top.rank:
        MEASURED.append(f"  top and hand not compared: {'the same key' if _same_key(advice.top, hand_score) else 'equal within the precision'}")
    else:
        margin = _noise(top, hand)
        assert top.measured_cost <= hand.measured_cost * (1 + margin), (top, hand, margin)
    # The rank agreement over designs the model prices apart: predicted ties (within TIE) share a
    # rank, so noise between them cannot move it; prove's own (proof.spearman) is printed above.
    agreement = spearman(_tied([m.predicted_cost for m in proof.designs]), [m.measured_cost for m in proof.designs])
    MEASURED.append(f"  rank agreement with predicted ties within {TIE:.0%}: {agreement:.2f}")
    assert agreement >= 0.8 - 1e-9, agreement
    assert all(1 / 3 - 1e-9 <= m.measured_share <= 1.0 for m in proof.designs)
    assert any(m.measured_share < 0.9 for m in proof.designs)
