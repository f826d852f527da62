"""The CLI's shared options are declared once (cli/options.py) and every command that offers a
report writes it through one function (keyshape.report.output.write_reports)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from keyshape.cli import main

CLI = Path(__file__).resolve().parents[2] / "src" / "keyshape" / "cli"
SHARED = ["--hbase", "--user", "--html", "--png", "--json", "--seed", "--columns", "--set-replication-scope", "--cutover", "--max-lag", "--sink-bind"]
# Command modules owned elsewhere that still declare some of them (issue 29 lists them).
NOT_YET = {"advise.py": {"--html", "--json"}, "serve.py": {"--json"}}


@pytest.mark.parametrize("option", SHARED)
def test_a_shared_option_is_declared_in_cli_options_only(option: str) -> None:
    declared = re.compile(r'click\.option\(\s*"' + re.escape(option) + r'"')
    where = sorted(p.name for p in CLI.glob("*.py") if declared.search(p.read_text(encoding="utf-8")))
    assert [n for n in where if option not in NOT_YET.get(n, set())] == ["options.py"], where


@pytest.mark.parametrize("command", ["analyze", "watch", "create", "load", "scan", "get", "admin regions", "grant"])
def test_every_command_shows_the_same_help_for_the_shared_options(command: str) -> None:
    """One declaration, one text: --user reads the same wherever it is offered."""
    from keyshape.cli.options import USER_HELP

    shown = CliRunner().invoke(main, [*command.split(), "--help"], terminal_width=400).output
    assert "--user NAME" in shown
    assert " ".join(USER_HELP.split())[:60] in " ".join(shown.split())


def test_write_reports_writes_every_report_asked_for(tmp_path: Path) -> None:
    from rich.console import Console

    from keyshape.analysis.designs import analyze_schema
    from keyshape.report.output import write_reports
    from keyshape.schema import KeySchema

    root = Path(__file__).resolve().parents[2]
    analysis = analyze_schema(KeySchema.load(root / "examples" / "sequential.toml"), rows=2_000, regions=4, windows=4)
    out = Console(record=True, width=200)
    paths = {name: str(tmp_path / f"r.{name}") for name in ("json", "html", "png")}
    write_reports(out, analysis, html_path=paths["html"], png_path=paths["png"], json_path=paths["json"])
    assert json.loads(Path(paths["json"]).read_text())["verdict"] == analysis.verdict
    assert Path(paths["html"]).read_text().lstrip().lower().startswith("<!doctype html")
    assert Path(paths["png"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    said = out.export_text()
    assert all(f"wrote {p}" in said for p in paths.values())
    # a list of analyses is the compare report; the JSON payload is the caller's when given
    write_reports(out, [analysis, analysis], json_path=paths["json"], payload={"rows": 2_000})
    assert json.loads(Path(paths["json"]).read_text()) == {"rows": 2_000}
