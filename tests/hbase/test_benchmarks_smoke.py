"""Each benchmark runs end to end on tiny sizes (--quick) so the scripts cannot rot.

No timing is asserted (speed belongs to the benchmarks themselves); the JSON must carry the
machine facts and positive numbers where ratios and rates are reported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def run(script: str, tmp_path: Path, *extra: str) -> dict:
    out = tmp_path / f"{script}.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / f"{script}.py"), "--quick", "--out", str(out), *extra], capture_output=True, text=True, timeout=300
    )
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


def test_bench_autosplit(tmp_path):
    data = run("bench_autosplit", tmp_path)
    assert [r["stream"] for r in data["results"]] == ["sequential", "random"]
    for r in data["results"]:
        assert positive(r["speedup"]) and positive(r["memory_ratio"]) and r["chunked_regions"] > 1


def test_bench_analyze(tmp_path):
    data = run("bench_analyze", tmp_path)
    assert [r["rows"] for r in data["results"]] == [2_000, 20_000]
    for r in data["results"]:
        assert positive(r["seconds"]) and positive(r["peak_rss_mb"]) and positive(r["us_per_key"])
    assert positive(data["per_key_cost_ratio_largest_over_smallest"])


@pytest.mark.hbase
def test_bench_hbase_writes(tmp_path, hbase):
    data = run("bench_hbase_writes", tmp_path, "--hbase", hbase.url)
    assert data["hbase"]["version"].startswith("2.") and data["hbase"]["region_servers"] >= 1
    assert [r["case"] for r in data["results"]] == ["a", "b", "c", "d"]
    for r in data["results"]:
        assert r["rows"] == data["rows"] == 5_000, r["case"]
        assert positive(r["rows_per_s"]) and positive(r["ratio_to_a"]), r["case"]
        assert r["regions_end"] >= r["regions_created"] >= 1, r["case"]
        assert r["rows_per_region_max"] * r["regions_end"] >= data["rows"], r["case"]
        assert 0 < r["batch_hot_share"] <= 1, r["case"]
    by_case = {r["case"]: r for r in data["results"]}
    assert by_case["a"]["regions_created"] == 1
    assert all(by_case[c]["regions_created"] == data["regions"] for c in "bcd")
    # sequential keys send every batch to one region; salted keys cannot (a property of the
    # keys and split points, not of timing)
    assert by_case["a"]["batch_hot_share"] == 1.0
    assert by_case["d"]["batch_hot_share"] < 0.5


@pytest.mark.hbase
def test_bench_advise_cells(tmp_path, hbase):
    data = run("bench_advise_cells", tmp_path, "--hbase", hbase.url)
    assert [r["cells_per_row"] for r in data["results"]] == [1, 100, 1000]
    assert all(positive(r["us_per_cell"]) and r["cells"] == 2_000 for r in data["results"])


@pytest.mark.hbase
def test_bench_hbase_reads(tmp_path, hbase):
    data = run("bench_hbase_reads", tmp_path, "--hbase", hbase.url)
    assert data["hbase"]["version"].startswith("2.")
    assert [s["buckets"] for s in data["scans"]] == [8, 16, 100]
    for s in data["scans"]:
        assert s["rows"] == data["rows"] == 5_000
        for k in (
            "plain_rows_per_s",
            "merged_seq_rows_per_s",
            "merged_par_rows_per_s",
            "merged_seq_over_plain",
            "merged_par_over_plain",
            "parallel_over_sequential",
        ):
            assert positive(s[k]), (s["buckets"], k)
    assert [p["buckets"] for p in data["gets"]] == [8, 16, 100]
    for p in data["gets"]:
        assert p["gets"] == 200
        assert positive(p["direct_gets_per_s"]) and positive(p["random_over_direct"]), p["buckets"]


def test_bench_phoenix(tmp_path):
    data = run("bench_phoenix", tmp_path)
    paths = {r["path"] for r in data["results"]}
    assert {"PhoenixKey.encode (per record)", "PhoenixKey.encode_many (batch salt)"} <= paths
    assert all(positive(r["keys_per_s"]) for r in data["results"])


@pytest.mark.hbase
@pytest.mark.secure
def test_bench_secure(tmp_path):
    data = run("bench_secure", tmp_path)
    modes = [r["mode"] for r in data["results"]]
    assert modes == ["plain (SIMPLE)", "kerberos authentication", "kerberos integrity", "kerberos privacy", "TLS (SIMPLE)", "TLS + kerberos privacy"]
    for r in data["results"]:
        for k in ("load_rows_per_s", "scan_rows_per_s", "load_ratio", "scan_ratio"):
            assert positive(r[k]), (r["mode"], k)


def test_bench_migrate(tmp_path, hbase):
    data = run("bench_migrate", tmp_path, "--hbase", hbase.url)
    assert data["rows"] == 3_000 and data["hbase"]["version"].startswith("2.")
    for k in ("load_sequential_rows_per_s", "load_mod16_rows_per_s", "migrate_rows_per_s", "verify_rows_per_s", "migrate_over_load_mod16"):
        assert positive(data[k]), k


def test_bench_writes(tmp_path):
    data = run("bench_writes", tmp_path)
    assert {(r["prefix"], r["writer"], r["pass"]) for r in data["results"]} == {
        (p, w, s) for p in ("mod", "random") for w in ("hand", "keyshape") for s in ("insert", "update")
    }
    for r in data["results"]:
        assert positive(r["records_per_s"])
    copies = {(r["prefix"], r["writer"]): r["copies_per_record"] for r in data["results"] if "copies_per_record" in r}
    assert copies[("random", "keyshape")] == 1.0 and copies[("mod", "keyshape")] == 1.0


def test_bench_keys_io(tmp_path):
    data = run("bench_keys_io", tmp_path)
    assert data["rows"] == 200_000 and data["key_bytes"] == 41
    # every engine, with and without the key check, one verdict
    assert [r["result"] for r in data["local"][2:]] == ["balanced"] * (len(data["local"]) - 2)
    assert all(-1 < cost < 10 for cost in data["key_check_cost_paired"].values())
    assert positive(data["process_over_pyarrow_paired"])
    for r in data["local"]:
        assert positive(r["keys_per_s"]), r["what"]
    assert positive(data["engine_over_pyarrow_floor"])


@pytest.mark.hbase
def test_bench_hbase_io(tmp_path, hbase):
    data = run("bench_hbase_io", tmp_path, "--hbase", hbase.url)
    by = {r["client"]: r for r in data["results"]}
    # the Java reference client ran (fresh and warm JVM) next to keyshape's writers and scans
    for name in (
        "Java mutator fresh",
        "Java mutator warm",
        "Java scan fresh",
        "ks writer",
        "ks load",
        "ks plain scan",
        "ks merged 100",
        "ks merged 16",
    ):
        assert positive(by[name]["rows_per_s"]) and positive(by[name]["vs_java_fresh"]), name
