"""`keyshape analyze` / `keyshape compare` through a real subprocess on the shipped examples:
the verdicts a human HBase expert gives (sequential key: hotspot; salted key with prefix-aligned
splits: balanced; timestamp-leading key over time-range splits: hotspot in time)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
KEYSHAPE = Path(sys.executable).with_name("keyshape")
ROWS = "60000"


def run(*args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    cmd = [str(KEYSHAPE)] if KEYSHAPE.exists() else [sys.executable, "-m", "keyshape.cli"]
    proc = subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=ROOT, timeout=300, env={"COLUMNS": "120", "PATH": "/usr/bin:/bin"})
    assert proc.returncode in ok, proc.stderr + proc.stdout
    return proc


def analyze_json(schema: Path, *extra: str) -> dict:
    proc = run("analyze", str(schema), "--json", "-", *extra)
    return json.loads(proc.stdout)


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return str(value)


def dump_toml(d: dict, prefix: str = "") -> str:
    """A tiny TOML writer for the example files' shapes (tables, arrays of tables, inline)."""
    lines: list[str] = []
    subs: list[str] = []
    for k, v in d.items():
        name = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict) and k not in ("prefix",) and prefix:
            lines.append(f"{k} = {_toml_value(v)}")
        elif isinstance(v, dict):
            subs.append(f"[{name}]\n" + dump_toml(v, name))
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            subs.extend(f"[[{name}]]\n" + dump_toml(item, name) for item in v)
        else:
            lines.append(f"{k} = {_toml_value(v)}")
    return "\n".join(lines + subs) + "\n"


def test_sequential_key_is_a_hotspot() -> None:
    d = analyze_json(EXAMPLES / "sequential.toml", "--rows", ROWS)
    assert d["verdict"] == "hotspot"
    assert any("monotonic" in a for a in d["advice"])
    # And still a hotspot once pre-split: the hot region just moves along the key space.
    d16 = analyze_json(EXAMPLES / "sequential.toml", "--rows", ROWS, "--regions", "16")
    assert d16["verdict"] == "hotspot" and len(d16["regions"]) == 16
    assert d16["hot_window_share"] > 0.8


def test_timestamp_leading_over_time_range_splits_is_a_hotspot_in_time() -> None:
    d = analyze_json(EXAMPLES / "timestamp-leading.toml")
    assert d["verdict"] == "hotspot"
    assert d["max_over_mean"] < 1.5  # totals look even...
    assert d["hot_window_share"] > 0.8  # ...but every moment is hot
    assert "in time" in d["reasons"][0]
    assert any("event_time is monotonic" in a for a in d["advice"])


def test_salted_key_with_prefix_aligned_splits_is_balanced(tmp_path: Path) -> None:
    """orders.toml's layout (mod-100 salt, 20 regions of 5 buckets each) with the salt hashed
    over the whole key, so no single user can pile up in one bucket."""
    d = tomllib.loads((EXAMPLES / "orders.toml").read_text())
    d["key"].pop("hash_fields", None)
    schema = tmp_path / "orders_all_fields.toml"
    schema.write_text(dump_toml(d))
    out = analyze_json(schema, "--rows", ROWS)
    assert out["verdict"] == "balanced", out["reasons"]
    assert out["max_over_mean"] < 1.2 and out["hot_window_share"] < 3 / len(out["regions"])


def test_orders_example_names_its_heavy_user() -> None:
    """The shipped orders.toml salts on user_id alone over a zipf(1.1) user population, so its
    heaviest user's rows share one bucket: the analyzer must say who, not call it a hotspot."""
    d = analyze_json(EXAMPLES / "orders.toml", "--rows", ROWS)
    assert d["verdict"] in ("balanced", "skewed")
    if d["verdict"] == "skewed":
        assert any("user_id" in a and "alone takes" in a for a in d["advice"])


def test_json_report_fields_and_files(tmp_path: Path) -> None:
    js, page, pic = tmp_path / "r.json", tmp_path / "r.html", tmp_path / "r.png"
    proc = run(
        "analyze",
        str(EXAMPLES / "timestamp-leading.toml"),
        "--rows",
        ROWS,
        "--windows",
        "20",
        "--servers",
        "4",
        "--json",
        str(js),
        "--html",
        str(page),
        "--png",
        str(pic),
    )
    assert "HOTSPOT" in proc.stdout
    d = json.loads(js.read_text())
    for name in ("rows", "regions", "max_over_mean", "cv", "gini", "deviation_rate", "hot_window_share", "verdict", "reasons"):
        assert name in d, name
    assert d["rows"] == int(ROWS) and d["windows"] == 20 and len(d["servers"]) == 4
    assert {"start", "end", "rows", "share"} <= set(d["regions"][0])
    assert d["regions"][0]["start"] == "" and d["regions"][-1]["end"] == ""
    assert sum(r["rows"] for r in d["regions"]) == int(ROWS)
    assert page.read_text().count("data:image/png;base64,") >= 3
    assert pic.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_fail_on_sets_the_exit_code() -> None:
    run("analyze", str(EXAMPLES / "sequential.toml"), "--rows", "5000", "--fail-on", "hotspot", ok=(3,))
    run("analyze", str(EXAMPLES / "sequential.toml"), "--rows", "5000", ok=(0,))


def test_keys_file_is_analyzed_like_a_workload(tmp_path: Path) -> None:
    csv = tmp_path / "keys.csv"
    csv.write_text("rowkey\n" + "".join(f"k{i:07d}\n" for i in range(20_000)))
    d = analyze_json(EXAMPLES / "sequential.toml", "--keys", str(csv), "--column", "rowkey")
    assert d["rows"] == 20_000 and d["verdict"] == "hotspot"
    assert d["increasing_fraction"] == 1.0
    assert d["key_check"]["checked"] == 20_000 and d["key_check"]["fit"] == 20_000


def test_two_foreign_keys_are_refused_not_judged_balanced(tmp_path: Path) -> None:
    """Two keys of another format spread over 2 of 20 regions: no verdict without the flag, and
    with it the counts lead the reasons."""
    csv = tmp_path / "two.csv"
    csv.write_text("rowkey\nevent-1\nzz-2\n")
    proc = run("analyze", str(EXAMPLES / "orders.toml"), "--keys", str(csv), ok=(2,))
    assert "2 of 2 (100.0%) do not fit" in proc.stderr and "BALANCED" not in proc.stdout
    d = analyze_json(EXAMPLES / "orders.toml", "--keys", str(csv), "--allow-foreign-keys")
    assert d["key_check"]["foreign"] == 2 and d["key_check"]["fit"] == 0
    assert d["reasons"][0].startswith("keys checked against the schema")


def test_compare_puts_designs_side_by_side(tmp_path: Path) -> None:
    page, pic = tmp_path / "c.html", tmp_path / "c.png"
    proc = run(
        "compare",
        str(EXAMPLES / "sequential.toml"),
        str(EXAMPLES / "timestamp-leading.toml"),
        "--rows",
        ROWS,
        "--json",
        "-",
        "--html",
        str(page),
        "--png",
        str(pic),
    )
    d = json.loads(proc.stdout)
    assert [x["name"] for x in d["designs"]] == ["sequential", "timestamp-leading"]
    assert all(x["rows"] == int(ROWS) for x in d["designs"])
    assert "sequential" in page.read_text() and pic.stat().st_size > 10_000


def test_bad_input_is_one_line_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[table]\nname = 't'\n")
    proc = run("analyze", str(bad), ok=(1, 2))
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and proc.stderr.startswith("error:")
    proc = run("analyze", str(EXAMPLES / "sequential.toml"), "--rows", "1000", "--regions", "0", ok=(2,))
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name", ["orders", "iot", "opentsdb", "inbox"])
def test_every_example_analyzes(name: str) -> None:
    d = analyze_json(EXAMPLES / f"{name}.toml", "--rows", "20000")
    assert d["verdict"] in ("balanced", "skewed", "hotspot") and d["reasons"] and d["advice"]


def test_compare_strategies_of_one_schema() -> None:
    """sequential.toml (no [splits]) as two variants on the same workload: without a prefix the
    sampled splits still leave one hot region at a time; a mod-16 salt over prefix-aligned splits
    spreads every moment's writes."""
    proc = run("compare", str(EXAMPLES / "sequential.toml"), "--strategies", "none,mod:16", "--rows", ROWS, "--json", "-")
    d = json.loads(proc.stdout)
    by = {x["name"]: x for x in d["designs"]}
    assert list(by) == ["sequential [none]", "sequential [mod:16]"]
    assert by["sequential [none]"]["verdict"] == "hotspot"
    assert by["sequential [mod:16]"]["verdict"] == "balanced"
    assert all(len(x["regions"]) == 16 and x["rows"] == int(ROWS) for x in d["designs"])
    assert "sample" in by["sequential [none]"]["splits"]
    assert "prefix" in by["sequential [mod:16]"]["splits"]
    assert "sequential [none]: sample splits" in proc.stderr  # --json - moves the notes to stderr


def test_compare_strategies_errors_are_one_line() -> None:
    proc = run("compare", str(EXAMPLES / "sequential.toml"), "--strategies", "none,mod:1", "--rows", "1000", ok=(2,))
    assert proc.stderr.startswith("error:") and proc.stderr.strip().count("\n") == 0
    assert "'mod:1'" in proc.stderr and "buckets" in proc.stderr
    proc = run("compare", str(EXAMPLES / "sequential.toml"), str(EXAMPLES / "orders.toml"), "--strategies", "none,mod:16", "--rows", "1000", ok=(2,))
    assert proc.stderr.startswith("error:") and proc.stderr.strip().count("\n") == 0
    assert "exactly one SCHEMA" in proc.stderr and "Traceback" not in proc.stderr
