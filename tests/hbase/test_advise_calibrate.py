"""``keyshape advise --calibrate`` on the real standalone HBase (issue 31): the cost constants fitted
from timed micro-runs are positive and finite, the saved file reads back as the same model, and
advise scores with it (its JSON names the fitted constants) and still ranks its top design at
least as good as the scenario's hand design.

How far two back-to-back fits agree is a measured time's spread, not asserted here (issue 43: a
CPU hog beside one fit and not the other moves it): benchmarks/bench_advise_calibrate.py measures
it (within a factor of 4 on this 2-core machine at load 3-20)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from keyshape.analysis.advise.calibrate import FITTED, FLOOR, calibrate, load_model, save_model
from keyshape.analysis.advise.costs import CostModel
from keyshape.store import open_store

pytestmark = pytest.mark.hbase
ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "examples" / "advise" / "orders"


def _keyshape(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_the_fit_is_positive_finite_and_reproducible(hbase: Any, tmp_path: Path) -> None:
    store = open_store(hbase.url)
    try:
        first = calibrate(store, where=hbase.url, prefix="ksa_calib")
        second = calibrate(store, where=hbase.url, prefix="ksa_calib")
        assert not [t for t in store.list_tables() if t.startswith("ksa_calib")]  # the scratch tables are dropped
    finally:
        store.close()
    print(f"\ncalibration 1: {first.model}\ncalibration 2: {second.model} ({first.seconds:.1f} s, {second.seconds:.1f} s)")
    # How long a fit takes, and how far two fits agree, are printed above, not asserted (measured
    # times; benchmarks/bench_advise_calibrate.py measures the spread).
    for cal in (first, second):
        for name in FITTED:
            value = getattr(cal.model, name)
            assert math.isfinite(value) and value > 0, (name, value)
        # a constant the runs could not tell from zero is floored at 1% of its default and named;
        # no other constant is below that floor
        for name in FITTED:
            least = FLOOR * getattr(CostModel(), name)
            assert getattr(cal.model, name) == pytest.approx(least) if name in cal.floored else getattr(cal.model, name) >= least, name
    path = save_model(first, tmp_path / "model.json")
    assert load_model(path) == first.model


def test_calibrate_then_advise_with_the_fitted_model(hbase: Any, tmp_path: Path) -> None:
    model = tmp_path / "cost-model.json"
    fitted = _keyshape("advise", "--calibrate", "--hbase", hbase.url, "--cost-model", str(model))
    assert fitted.returncode == 0, fitted.stderr
    assert f"saved to {model}" in fitted.stdout
    assert "rpc_ms" in fitted.stdout and "default" in fitted.stdout  # fitted beside the defaults
    saved = json.loads(model.read_text())["constants"]
    data = tmp_path / "orders.parquet"
    subprocess.run([sys.executable, str(ORDERS / "generate.py"), str(data), "4000"], check=True, capture_output=True)
    ran = _keyshape(
        "advise", "--data", str(data), "--queries", str(ORDERS / "WORKLOAD.toml"), "--compare", str(ORDERS / "hand-salted.toml"),
        "--max-designs", "16", "--cost-model", str(model), "--json", "-",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["cost_model"] == saved
    designs = out["designs"]
    hand = next(d for d in designs if d["hand"])
    assert designs[0]["weighted_cost_ms_per_s"] <= hand["weighted_cost_ms_per_s"]
    # A missing cost model file is one line, not a traceback.
    bad = _keyshape("advise", "--data", str(data), "--queries", str(ORDERS / "WORKLOAD.toml"), "--cost-model", str(tmp_path / "none.json"))
    assert bad.returncode != 0 and "no such cost model file" in bad.stderr and "Traceback" not in bad.stderr
