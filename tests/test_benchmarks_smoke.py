"""Each benchmark runs end to end on tiny sizes (--quick) so the scripts cannot rot.

No timing is asserted (speed belongs to the benchmarks themselves); the JSON must carry the
machine facts and positive numbers where ratios and rates are reported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def run(script: str, tmp_path: Path) -> dict:
    out = tmp_path / f"{script}.json"
    proc = subprocess.run([sys.executable, str(BENCH / f"{script}.py"), "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["benchmark"] == script
    for fact in ("cores", "python", "numpy", "git_commit"):
        assert data["machine"][fact], fact
    return data


def positive(value: object) -> bool:
    return isinstance(value, (int, float)) and value > 0


def test_bench_encode(tmp_path):
    data = run("bench_encode", tmp_path)
    schemas = {r["schema"] for r in data["results"]}
    assert {"orders.toml", "iot.toml", "opentsdb.toml"} <= schemas
    for r in data["results"]:
        for k in ("batch_keys_per_s", "batch_array_keys_per_s", "encode_keys_per_s", "batch_over_encode"):
            assert positive(r[k]), (r["schema"], k)
        assert positive(r["batch_over_seed"]), r["schema"]  # the seed-style loop covers every example
    assert positive(data["summary"]["salted_composite_best_keys_per_s"])


def test_bench_regions(tmp_path):
    data = run("bench_regions", tmp_path)
    assert [r["regions"] for r in data["results"]] == [16, 1024]
    for r in data["results"]:
        assert positive(r["keyarray_over_bisect"]) and positive(r["list_over_bisect"])


def test_bench_analyze(tmp_path):
    data = run("bench_analyze", tmp_path)
    assert [r["rows"] for r in data["results"]] == [2_000, 20_000]
    for r in data["results"]:
        assert positive(r["seconds"]) and positive(r["peak_rss_mb"]) and positive(r["us_per_key"])
    assert positive(data["per_key_cost_ratio_largest_over_smallest"])
