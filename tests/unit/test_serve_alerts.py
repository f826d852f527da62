"""``keyshape serve --config``: alert thresholds per table or pattern, evaluated on verdicts,
shown in /metrics as gauges, and refused in one line when the file is wrong."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from keyshape.errors import BadInput
from keyshape.serve import History, ServeOptions, Service, evaluate, load_alerts, parse_alerts
from keyshape.serve.service import alerts
from keyshape.store import open_store

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """
[alerts."kss_*"]
busiest_region_share = 0.5
busiest_server_share = 0.9
patterns = ["sequential diagonal", "single hot row"]

[alerts.kss_quiet]
verdict = "skewed"
"""
HOT = {
    "table": "kss_hot",
    "verdict": "hotspot",
    "busiest_region_share": 0.97,
    "busiest_server_share": 0.6,
    "pattern": {"name": "sequential diagonal"},
}
QUIET = {"table": "kss_quiet", "verdict": "balanced", "busiest_region_share": 0.2, "busiest_server_share": 0.4, "pattern": {"name": "balanced"}}


def test_rules_fire_on_the_tables_they_match(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(CONFIG)
    rules = load_alerts(tmp_path / "a.toml")
    assert [r.tables for r in rules] == ["kss_*", "kss_quiet"]
    hot = {(a.kind, a.firing) for a in evaluate(rules, HOT)}
    assert hot == {("busiest_region_share", True), ("busiest_server_share", False), ("pattern", True)}
    quiet = {(a.rule, a.kind, a.firing) for a in evaluate(rules, QUIET)}
    assert quiet == {
        ("kss_*", "busiest_region_share", False),
        ("kss_*", "busiest_server_share", False),
        ("kss_*", "pattern", False),
        ("kss_quiet", "verdict", False),
    }
    assert evaluate(rules, {**QUIET, "table": "other"}) == []
    lines = alerts([HOT, QUIET], rules=rules)
    assert lines == [
        'kss_hot: busiest region takes 97% (limit 50%) [alerts."kss_*"]',
        'kss_hot: pattern sequential diagonal [alerts."kss_*"]',
    ]
    skewed = {**QUIET, "verdict": "skewed"}
    assert alerts([skewed], rules=rules) == ['kss_quiet: verdict skewed [alerts."kss_quiet"]']


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[alerts."t"]\nbusiest_region_share = 1.5', "between 0 and 1"),
        ('[alerts."t"]\nbusiest_region_share = "half"', "between 0 and 1"),
        ('[alerts."t"]\npatterns = ["diagonal"]', "unknown pattern 'diagonal'; the patterns are 'sequential diagonal'"),
        ('[alerts."t"]\npatterns = "sequential diagonal"', "must be a list"),
        ('[alerts."t"]\nverdict = "bad"', 'give "skewed" or "hotspot"'),
        ('[alerts."t"]\nshare = 0.5', 'alerts."t".share: unknown key'),
        ('[alerts."t"]\n', "sets no threshold"),
        ("[alert]\nx = 1", "unknown section 'alert'"),
        ("alerts = 3", "alerts must be tables"),
    ],
)
def test_a_bad_rule_is_one_line_naming_the_key(text: str, says: str) -> None:
    import tomllib

    with pytest.raises(BadInput) as bad:
        parse_alerts(tomllib.loads(text), "c.toml")
    assert says in str(bad.value) and "\n" not in str(bad.value) and str(bad.value).startswith("c.toml")


def _one_line(args: list[str]) -> str:
    proc = subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_the_cli_refuses_a_bad_config_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("[alerts.x\n")
    assert "is not TOML" in _one_line(["serve", "--hbase", "127.0.0.1:1", "--config", str(tmp_path / "bad.toml"), "--once"])
    assert "cannot read it" in _one_line(["serve", "--hbase", "127.0.0.1:1", "--config", str(tmp_path / "none.toml"), "--once"])
    (tmp_path / "share.toml").write_text('[alerts."ns:*"]\nbusiest_server_share = 2\n')
    line = _one_line(["serve", "--hbase", "127.0.0.1:1", "--config", str(tmp_path / "share.toml"), "--once"])
    assert 'alerts."ns:*".busiest_server_share = 2' in line and "between 0 and 1" in line


def test_metrics_show_each_alert_as_a_gauge(tmp_path: Path) -> None:
    """Verdicts saved by an earlier run (the cluster unreachable now): /metrics has one
    keyshape_alert gauge per rule kind and table, 1 where it fires."""
    h = History(tmp_path / "h.db")
    for body in (HOT, QUIET):
        h.save_verdict(str(body["table"]), time.time(), body)
    h.close()
    rules = parse_alerts({"alerts": {"kss_*": {"busiest_region_share": 0.5, "patterns": ["sequential diagonal"]}}})
    options = ServeOptions(lambda: open_store("127.0.0.1:1"), str(tmp_path / "h.db"), (), {}, "127.0.0.1:0", 60.0, alert_rules=rules)
    service = Service(options).start()
    try:
        text = urllib.request.urlopen(f"{service.url}/metrics", timeout=10).read().decode()
    finally:
        service.stop()
    assert "# TYPE keyshape_alert gauge" in text
    assert 'keyshape_alert{table="kss_hot",rule="kss_*",kind="busiest_region_share"} 1' in text
    assert 'keyshape_alert{table="kss_hot",rule="kss_*",kind="pattern"} 1' in text
    assert 'keyshape_alert{table="kss_quiet",rule="kss_*",kind="busiest_region_share"} 0' in text
    assert 'keyshape_alert{table="kss_quiet",rule="kss_*",kind="pattern"} 0' in text
