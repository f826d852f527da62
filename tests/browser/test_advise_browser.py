"""keyshape advise end to end (issue 31): the CLI on a generated orders sample writes the report
page and the JSON; the page opens in a real headless Chromium (tests/chromium.py) with no console
errors, its ranked table agrees with the JSON, and each top design has its schema and a drawn heat
map. Skipped only when no Chromium is installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chromium import Chromium

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "examples" / "advise" / "orders"


def test_advise_report_page_in_a_real_browser(browser: Chromium, tmp_path: Path) -> None:
    data = tmp_path / "orders.parquet"
    subprocess.run([sys.executable, str(ORDERS / "generate.py"), str(data), "3000"], check=True, capture_output=True)
    page_file, json_file = tmp_path / "advise.html", tmp_path / "advise.json"
    cli = [sys.executable, "-m", "keyshape.cli", "advise", "--data", str(data), "--queries", str(ORDERS / "WORKLOAD.toml")]
    cli += ["--compare", str(ORDERS / "hand-salted.toml"), "--top", "3", "--max-designs", "16", "--html", str(page_file), "--json", str(json_file)]
    r = subprocess.run(cli, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "Top:" in r.stdout and "Why the others rank lower" in r.stdout
    report = json.loads(json_file.read_text())
    designs = report["designs"]
    ranks = [d["rank"] for d in designs]
    # Designs equal within the model's precision share a rank (issue 39): the ranks only ever grow.
    assert ranks[0] == 1 and ranks == sorted(ranks) and any(d["hand"] for d in designs)
    assert all(d["tie"] == d["rank"] for d in designs if ranks.count(d["rank"]) > 1)
    page = browser.page()
    try:
        page.open(page_file)
        assert page.errors == []
        rows = page.js("Array.from(document.querySelectorAll('table')[0].querySelectorAll('tr')).slice(1).map(r => r.children[2].textContent)")
        assert len(rows) == len(designs)
        assert rows[0] == designs[0]["design"]
        shown = page.js("Array.from(document.querySelectorAll('table')[0].querySelectorAll('tr')).slice(1).map(r => r.children[0].textContent)")
        assert shown == [f"{d['rank']}=" if d["tie"] else str(d["rank"]) for d in designs]
        assert any("(hand)" in row for row in rows)
        # Each of the three top designs: its schema and its heat map, drawn (a canvas with pixels),
        # and one more map for each index table it writes.
        assert page.js("document.querySelectorAll('.ks-heat').length") == sum(1 + len(d["indexes"]) for d in designs[:3])
        assert page.js("Array.from(document.querySelectorAll('.ks-heat canvas')).every(c => c.width > 0 && c.height > 0)") is True
        assert designs[0]["schema"].split("\n")[0] in page.js("document.querySelectorAll('pre')[0].textContent")
        page.screenshot(tmp_path / "advise.png")
        assert page.errors == []
    finally:
        page.close()
