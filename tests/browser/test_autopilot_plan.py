"""The autopilot's plan page in a real headless Chromium (issue 41): a plan made by the stages
themselves (a sequential table's rows with their cell timestamps, the observation as serve's
history gives it) is written as HTML and opened: no console error, the two replayed heat maps
side by side each drawn with cells and its busiest share, the numbers the plan holds, NEW's
schema and the exact migrate command on the page. Skipped only when no Chromium is installed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autopilot_serve_fixture import SCHEMA, T0  # the same sequential events table and clock
from chromium import Chromium
from keyshape.ops.autopilot import Observed, run
from keyshape.report.plan import write_plan_html
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema
from keyshape.store.embedded import EmbeddedStore

pytestmark = pytest.mark.browser


def test_plan_page_shows_both_replays_side_by_side_with_the_plans_numbers(browser: Chromium, tmp_path: Path) -> None:
    path = tmp_path / "events.toml"
    path.write_text(SCHEMA)
    schema = KeySchema.load(path)
    store = EmbeddedStore()
    create_table_from_schema(store, schema)
    for i in range(800):
        t = int(T0 * 1000) + 100 * i
        store.put("events", schema.encode({"event_time": t, "event_id": i}), {b"d:v": b"x" * 40}, t)
    w = np.array([[0.0], [200.0], [200.0], [200.0], [200.0]])
    body = {"verdict": "hotspot", "pattern": {"name": "sequential diagonal", "cause": "leading field event_time grows in write order", "fix": ""}}
    obs = Observed("events", T0 + 20 * np.arange(5), [b""], [b""], w, np.zeros_like(w), body, "test history", 3)
    result = run(store, "events", schema, lambda: obs, hbase_url="zk:2181", state_path=tmp_path / "state.json", out_dir=tmp_path)
    assert result.plan is not None
    plan = result.plan.to_dict()
    page_file = write_plan_html(plan, tmp_path / "plan.html")
    page = browser.page()
    try:
        page.open(page_file)
        assert page.errors == []
        each = "m => [m.id, m.querySelector('.share').textContent, m.querySelectorAll('svg rect').length]"
        maps = page.js(f"Array.from(document.querySelectorAll('.map')).map({each})")
        assert [m[0] for m in maps] == ["current-map", "new-map"]
        assert maps[0][1] == f"busiest region {plan['current_share']:.0%}" and maps[1][1] == f"busiest region {plan['new_share']:.0%}"
        assert all(m[2] > 1 for m in maps)  # cells drawn (the background rect plus at least one cell)
        # side by side: the two maps share a row
        tops = page.js("Array.from(document.querySelectorAll('.map')).map(m => m.getBoundingClientRect().top)")
        assert tops[0] == tops[1]
        assert page.js("document.getElementById('migrate').textContent") == plan["migrate_command"]
        assert "keyshape migrate" in plan["migrate_command"] and "--online" in plan["migrate_command"]
        assert plan["schema_toml"].splitlines()[1] in page.js("document.getElementById('schema').textContent")
        assert "HOTSPOT" in page.js("document.querySelector('.verdict').textContent")
        shot = page.screenshot(tmp_path / "plan.png")
        assert shot.stat().st_size > 10_000
    finally:
        page.close()
