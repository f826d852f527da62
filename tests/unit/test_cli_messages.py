"""Issue 40, class "unclear": the messages that did not say what failed or pointed the wrong way."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from keyshape.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def one_line(args: list[str]) -> str:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("option", ["--html", "--png", "--json"])
def test_a_report_that_cannot_be_written_names_its_file(option: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    line = one_line(["analyze", "examples/sequential.toml", "--rows", "500", option, "/dev/full"])
    assert line == f"error: {option} /dev/full: cannot write it: No space left on device"


@pytest.mark.parametrize("value", ['"8"', '"8MB"', "1.5"])
def test_a_size_hint_is_one_hbase_takes(value: str, tmp_path: Path) -> None:
    text = (ROOT / "examples" / "sequential.toml").read_text(encoding="utf-8")
    schema = tmp_path / "s.toml"
    schema.write_text(text.replace('name = "events_seq"', f'name = "events_seq"\nmemstore_flushsize = {value}'), encoding="utf-8")
    line = one_line(["lint", str(schema)])
    assert line.endswith("write memstore_flushsize = 1048576"), line  # HBase's minimum (1 MiB), not 8


def test_a_subcommand_group_without_its_subcommand_prints_its_usage() -> None:
    result = CliRunner().invoke(main, ["splits"], prog_name="keyshape", catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stdout.startswith("Usage: keyshape splits [OPTIONS] COMMAND [ARGS]...")
    assert result.stderr == "error: keyshape splits needs a command: one of buckets, decimal, hex, range, uniform\n"
