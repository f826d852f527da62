"""Issue 40, class "80 columns and pipes": the tables of keys fit 80 columns when piped (a long key
cut with "…"), --wide prints them whole, --json writes every key whole; lint and load have --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from keyshape.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
PHOENIX_KEY = "\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"


@pytest.fixture(autouse=True)
def _root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def run(args: list[str]) -> str:
    result = CliRunner().invoke(main, args, catch_exceptions=False)  # not a terminal: as piped
    assert result.exit_code == 0, result.stderr
    return result.stdout


def widest(text: str) -> int:
    """The widest line of the table(s) in ``text`` (prose lines are not wrapped when piped)."""
    return max(len(line) for line in text.splitlines() if line[:1] in "┏┃┡│└")


def test_piped_output_is_not_padded() -> None:
    out = run(["analyze", "examples/sequential.toml", "--rows", "2000"])
    assert not [line for line in out.splitlines() if line.endswith(" ")], out


def test_create_fits_80_columns_and_cuts_a_22_byte_phoenix_key() -> None:
    out = run(["create", "examples/phoenix/events.sql"])
    assert widest(out) <= 80, out
    assert "│ \\x01\\x00\\…" in out and PHOENIX_KEY not in out
    # one line per region (8 regions), not 11 folded lines each
    assert sum(line.startswith("│") for line in out.splitlines()) == 8


def test_create_wide_and_json_keep_every_key_whole() -> None:
    assert PHOENIX_KEY in run(["create", "examples/phoenix/events.sql", "--wide"])
    doc = json.loads(run(["create", "examples/phoenix/events.sql", "--json", "-"]))
    assert doc["regions"][1]["start"] == PHOENIX_KEY.replace("\\\\", "\\") and len(doc["regions"]) == 8


def test_scan_fits_80_columns_wide_and_json_keep_the_key() -> None:
    out = run(["scan", "examples/orders.toml", "--load-rows", "20", "--limit", "3"])
    assert widest(out) <= 80 and "…" in out, out
    wide = run(["scan", "examples/orders.toml", "--load-rows", "20", "--limit", "3", "--wide"])
    doc = json.loads(run(["scan", "examples/orders.toml", "--load-rows", "20", "--limit", "3", "--json", "-"]))
    keys = [row["key"] for row in doc["rows"]]
    assert len(keys) == 3 and all(len(k) > 30 and k in wide and k not in out for k in keys)


def test_lint_and_load_write_json() -> None:
    doc = json.loads(run(["lint", "examples/sequential.toml", "--json", "-"]))
    assert doc["warnings"] >= 1 and any(f["code"] == "monotonic-leading" for f in doc["findings"])
    doc = json.loads(run(["load", "examples/sequential.toml", "--rows", "300", "--settle", "0", "--json", "-"]))
    assert doc["rows_acknowledged"] == 300 and doc["live"]["rows"] == 300
