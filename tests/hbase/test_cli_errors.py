"""Every CLI error is ONE line on stderr, a non-zero exit and no traceback, and the line says what
is wrong and how to fix it. Run through a real subprocess, as a user meets them."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "examples" / "orders.toml"
SEQUENTIAL = ROOT / "examples" / "sequential.toml"


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def error_line(*args: str, timeout: float = 120) -> str:
    proc = run(*args, timeout=timeout)
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_missing_schema_file(tmp_path: Path) -> None:
    line = error_line("analyze", str(tmp_path / "nope.toml"))
    assert "nope.toml" in line and "does not exist" in line


def test_toml_syntax_error_names_file_and_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[table]\nname = "x\n')
    line = error_line("analyze", str(bad))
    assert "bad.toml" in line and "not valid TOML" in line and "line 2" in line


def test_unknown_prefix_strategy_lists_the_known_ones(tmp_path: Path) -> None:
    bad = tmp_path / "strategy.toml"
    bad.write_text(ORDERS.read_text().replace('strategy = "mod"', 'strategy = "bogus"'))
    line = error_line("analyze", str(bad))
    assert "'bogus'" in line and "phoenix" in line and "key.prefix.strategy" in line


def test_key_encode_with_a_missing_field_names_every_field() -> None:
    line = error_line("key", "encode", str(ORDERS), "user_id=u1", "order_time=5")
    assert "'order_id'" in line and "user_id, order_time, order_id" in line


def test_key_encode_with_a_wrong_type_says_what_is_expected() -> None:
    line = error_line("key", "encode", str(ORDERS), "user_id=u1", "order_time=abc", "order_id=1")
    assert "'abc'" in line and "timestamp" in line and "ISO-8601" in line


def test_key_decode_of_another_schemas_key() -> None:
    line = error_line("key", "decode", str(SEQUENTIAL), "39_user0000042_9223370269629175807_000042")
    assert "this schema" in line


def test_splits_hex_with_one_region() -> None:
    line = error_line("splits", "hex", "--regions", "1")
    assert "x>=2" in line and "1 is not" in line


@pytest.mark.parametrize("start,end", [("b", "a"), ("a", "a")])
def test_splits_range_needs_start_below_end(start: str, end: str) -> None:
    line = error_line("splits", "range", "--regions", "4", "--start", start, "--end", end)
    assert "must be smaller than end key" in line


def test_keys_file_missing(tmp_path: Path) -> None:
    line = error_line("analyze", str(ORDERS), "--keys", str(tmp_path / "k.csv"), "--column", "k")
    assert "k.csv" in line and "does not exist" in line


def test_keys_unknown_column_lists_the_columns(tmp_path: Path) -> None:
    keys = tmp_path / "k.csv"
    keys.write_text("rowkey,other\nabc,1\n")
    line = error_line("analyze", str(ORDERS), "--keys", str(keys), "--column", "nope")
    assert "'nope'" in line and "rowkey, other" in line


def test_keys_binary_junk_is_not_echoed_back(tmp_path: Path) -> None:
    junk = tmp_path / "junk.csv"
    junk.write_bytes(bytes(range(256)) * 8)
    line = error_line("analyze", str(ORDERS), "--keys", str(junk), "--column", "rowkey")
    # named as what it is (the one file reader: core/files.py), never echoed back
    assert "junk.csv" in line and "binary file, not a CSV" in line and len(line) < 300


def test_keys_unreadable_parquet_names_the_file_and_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "keys.parquet"
    bad.write_text("garbage, not parquet\n")
    line = error_line("analyze", str(ORDERS), "--keys", str(bad), "--column", "rowkey")
    assert "keys.parquet" in line and "not a readable Parquet file" in line and "CSV" in line


def _orders_keys(n: int) -> list[bytes]:
    from keyshape.schema import KeySchema
    from keyshape.workload import generate

    s = KeySchema.load(ORDERS)
    return s.encode_many(next(generate(s, n, seed=4, chunk_rows=n)))


def test_keys_with_a_wrong_salt_are_refused_with_the_counts(tmp_path: Path) -> None:
    """Every key salted 00 (a writer that lost its hash): one line with the counts and examples."""
    keys = _orders_keys(20_000)
    salt00 = tmp_path / "salt00.csv"
    salt00.write_bytes(b"rowkey\n" + b"".join(b"00" + k[2:] + b"\n" for k in keys))
    line = error_line("analyze", str(ORDERS), "--keys", str(salt00))
    wrong = sum(k[:2] != b"00" for k in keys)
    assert f"{wrong:,} of 20,000" in line and "wrong salt" in line and "'00_user" in line
    assert "--allow-foreign-keys" in line


def test_keys_of_another_format_are_refused_with_the_counts(tmp_path: Path) -> None:
    evt = tmp_path / "evt.csv"
    evt.write_text("rowkey\n" + "".join(f"evt-{i:08d}\n" for i in range(5_000)))
    line = error_line("analyze", str(ORDERS), "--keys", str(evt))
    assert "5,000 of 5,000 (100.0%) do not fit" in line and "'evt-00000000' at row 0" in line


@pytest.mark.parametrize(
    "args",
    [
        ("scan", str(ORDERS), "--limit", "3"),
        ("create", str(ORDERS)),
        ("load", str(ORDERS), "--rows", "10"),
        ("watch", "shop:orders", "--samples", "1"),
    ],
)
def test_connection_refused_fails_with_a_hint(args: tuple[str, ...]) -> None:
    # Nothing listens on port 1. The subprocess timeout is a guard against a hang, not a timing test.
    line = error_line(*args, "--hbase", "127.0.0.1:1", timeout=60)
    assert "cannot reach ZooKeeper at 127.0.0.1:1" in line and "is HBase running?" in line


# ------------------------------------------------------------------------- real HBase


def _schema_copy(tmp_path: Path, family: str | None = None) -> tuple[Path, str]:
    name = f"errors_{uuid.uuid4().hex[:8]}"
    text = ORDERS.read_text().replace('name = "orders"', f'name = "{name}"', 1)
    if family is not None:
        text = text.replace('name = "d"', f'name = "{family}"', 1)
    path = tmp_path / f"{name}-{family or 'd'}.toml"
    path.write_text(text)
    return path, f"shop:{name}"


@pytest.mark.hbase
@pytest.mark.parametrize("command", ["watch", "scan"])
def test_unknown_table_on_hbase_says_how_to_create_it(hbase: Any, tmp_path: Path, command: str) -> None:
    path, table = _schema_copy(tmp_path)
    if command == "watch":
        line = error_line("watch", table, "--hbase", hbase.url, "--samples", "1")
    else:
        line = error_line("scan", str(path), "--hbase", hbase.url, "--limit", "1")
    assert f"'{table}' does not exist" in line and "keyshape create" in line


@pytest.mark.hbase
def test_create_twice_and_load_into_a_missing_family(hbase: Any, tmp_path: Path) -> None:
    from keyshape.store import open_store

    path, table = _schema_copy(tmp_path)
    assert run("create", str(path), "--hbase", hbase.url).returncode == 0
    try:
        line = error_line("create", str(path), "--hbase", hbase.url)
        assert "already exists" in line and f"drop '{table}'" in line
        other = path.with_name(path.stem + "-x.toml")
        other.write_text(path.read_text().replace('name = "d"', 'name = "x"', 1))
        line = error_line("load", str(other), "--hbase", hbase.url, "--rows", "10")
        assert "family" in line and "its families are: d" in line
    finally:
        store = open_store(hbase.url)
        try:
            store.delete_table(table)
        finally:
            store.close()


@pytest.mark.hbase
def test_phoenix_catalog_on_an_hbase_without_phoenix_says_so(hbase: Any) -> None:
    """It used to say SYSTEM.CATALOG did not exist and to create it with keyshape create (issue 40)."""
    from keyshape.store import open_store

    store = open_store(hbase.url)
    try:
        if store.table_exists("SYSTEM.CATALOG") or store.table_exists("SYSTEM:CATALOG"):
            pytest.skip("this HBase has Phoenix's catalog")
    finally:
        store.close()
    line = error_line("phoenix", "catalog", "EVENTS", "--hbase", hbase.url)
    assert "has no Phoenix (no SYSTEM.CATALOG table)" in line and "keyshape create" not in line, line
