"""`keyshape key encode|decode|ranges` and `keyshape lint`, through a real subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from keyshape.core.hbytes import to_bytes_binary
from keyshape.schema import KeySchema

ORDERS = str(Path(__file__).parents[2] / "examples" / "orders.toml")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, timeout=120)


def test_encode_prints_key_and_length_and_decode_inverts():
    r = run("key", "encode", ORDERS, "user_id=user42", "order_time=2026-01-01T00:00:00Z", "order_id=1123456")
    assert r.returncode == 0, r.stderr
    line, length = r.stdout.splitlines()
    expected = KeySchema.load(ORDERS).encode({"user_id": "user42", "order_time": 1767225600000, "order_id": 1123456})
    assert to_bytes_binary(line) == expected and length == f"length: {len(expected)} bytes"
    d = run("key", "decode", ORDERS, line)
    assert d.returncode == 0, d.stderr
    assert d.stdout.splitlines() == ["user_id=user42", "order_time=1767225600000", "order_id=123456"]


def test_ranges_one_bucket_for_a_user_and_time_range():
    r = run("key", "ranges", ORDERS, "user_id=user42", "order_time=2026-01-01..2026-01-02")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1
    start, stop = (to_bytes_binary(x) for x in lines[0].split("\t"))
    s = KeySchema.load(ORDERS)
    inside = s.encode({"user_id": "user42", "order_time": "2026-01-01T12:00:00Z", "order_id": "1"})
    outside = s.encode({"user_id": "user42", "order_time": "2026-01-02T00:00:00Z", "order_id": "1"})
    assert start <= inside < stop and not start <= outside < stop
    assert len(run("key", "ranges", ORDERS).stdout.splitlines()) == 100


def test_lint_exit_codes(tmp_path):
    ok = run("lint", ORDERS)
    assert ok.returncode == 0 and "0 error(s)" in ok.stdout
    bad = tmp_path / "long.toml"
    bad.write_text('[table]\nname = "t"\n[key]\n[[key.fields]]\nname = "a"\ntype = "string"\nwidth = 150\n')
    r = run("lint", str(bad))
    assert r.returncode == 1 and "key-too-long" in r.stdout


def test_malformed_schema_one_line_non_zero(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[table]\nname = "t"\n[key]\nprefix = { strategy = "md6" }\n[[key.fields]]\nname = "a"\ntype = "string"\n')
    for args in (("lint", str(p)), ("key", "encode", str(p), "a=1")):
        r = run(*args)
        assert r.returncode != 0 and r.stdout == ""
        assert r.stderr.count("\n") == 1 and "key.prefix.strategy" in r.stderr and str(p) in r.stderr
        assert "Traceback" not in r.stderr


def test_bad_field_value_is_one_line():
    r = run("key", "encode", ORDERS, "user_id=u", "order_time=yesterday", "order_id=1")
    assert r.returncode != 0 and "timestamp" in r.stderr and "Traceback" not in r.stderr
