"""serve's before/after page of a re-key (issue 41), in a real headless Chromium: the page shows
OLD's and NEW's verdict, busiest region and server shares and p99 per-region write rate as
/api/compare gives them, and both heat maps drawn; the plan page links to it, and making the
plan made serve watch NEW. serve's own app runs under uvicorn over serve's real Poller on an
embedded store (tests/serve_compare_fixture.py, tests/autopilot_serve_fixture.py): no HBase."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from autopilot_serve_fixture import T0 as PLAN_T0
from autopilot_serve_fixture import Client, served
from serve_compare_fixture import NEW, OLD, T0, two_tables

from chromium import Chromium, chromium_path
from keyshape.serve.app import make_app

pytestmark = pytest.mark.browser

CELLS = ("verdict", "region", "server", "p99", "regions")  # the page's cells of one side (ids "before-p99"...)


def _binary() -> str:
    binary = chromium_path()
    if binary is None:
        pytest.skip("no Chromium: apt-get install -y chromium, or set KEYSHAPE_CHROMIUM")
    return binary


def _expected(side: dict[str, object]) -> dict[str, str]:
    """The page's text of one side's numbers, from the API's."""
    p99 = float(side["p99_region_write_rate"])  # type: ignore[arg-type]
    return {
        "verdict": str(side["verdict"]).upper(),
        "region": f"{100 * float(side['busiest_region_share']):.0f}%",  # type: ignore[arg-type]
        "server": f"{100 * float(side['busiest_server_share']):.0f}%",  # type: ignore[arg-type]
        "p99": f"{p99:.0f}" if p99 >= 100 else f"{p99:.1f}",
        "regions": str(side["regions"]),
    }


def test_the_page_shows_both_tables_numbers_and_maps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = _binary()
    with two_tables(tmp_path) as (poller, history, clock):
        monkeypatch.setattr("keyshape.serve.compare.time.time", lambda: clock[0])  # the history's own clock
        client = Client(make_app(poller, history))
        browser = Chromium(binary)
        try:
            status, text = client.get(f"/api/compare?before={OLD}&after={NEW}")
            assert status == 200, text
            api = json.loads(text)
            assert api["before"]["p99_region_write_rate"] == pytest.approx(100.0) and api["after"]["p99_region_write_rate"] == pytest.approx(25.0)
            page = browser.page()
            page.events.clear()
            page.call("Page.navigate", url=f"http://127.0.0.1:{client.port}/compare?before={OLD}&after={NEW}")
            page.wait_for("Page.loadEventFired")
            page.js("window.ksCompare.ready")
            for which in ("before", "after"):
                shown = {k: page.js(f"document.getElementById('{which}-{k}').textContent") for k in CELLS}
                assert shown == _expected(api[which]), which
                assert page.js(f"document.getElementById('h-{which}').textContent") == api[which]["table"]
            # both maps drawn from /api/heatmap: OLD's one region, NEW's four, the cells painted
            assert page.js("[window.ksCompare.maps.before.keys.length, window.ksCompare.maps.after.keys.length]") == [1, 4]
            painted = "(function (id) { var c = document.getElementById(id).getContext('2d'); return c.getImageData(400, 100, 1, 1).data[3]; })"
            assert page.js(f"{painted}('map-before')") == 255 and page.js(f"{painted}('map-after')") == 255
            assert T0 <= api["until"] and not page.errors, page.errors
        finally:
            browser.close()
            client.close()


def test_the_plan_page_links_to_it_and_serve_watches_new(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = _binary()
    monkeypatch.setattr("keyshape.serve.plan_route.time.time", lambda: PLAN_T0 + 9)  # the history's own clock
    with served(tmp_path) as (client, _history):
        browser = Chromium(binary)
        try:
            page = browser.page()
            page.events.clear()
            page.call("Page.navigate", url=f"http://127.0.0.1:{client.port}/plan?table=events")
            page.wait_for("Page.loadEventFired")
            href = page.js("(function () { var a = document.getElementById('compare-link'); return a && a.getAttribute('href'); })()")
            plan = json.loads(client.get("/api/plan?table=events")[1])
            assert href == f"compare?before=events&after={plan['new_table']}"
            page.events.clear()
            page.call("Page.navigate", url=f"http://127.0.0.1:{client.port}/{href}")
            page.wait_for("Page.loadEventFired")
            page.js("window.ksCompare.ready")
            assert page.js("document.getElementById('h-before').textContent") == "events"
            assert page.js("document.getElementById('after-verdict').textContent") == "NOT JUDGED YET"  # NEW not created: a dry run
            assert "it is now" not in page.js("document.getElementById('note').textContent")  # the plan made serve watch NEW already
            assert page.js("document.getElementById('before-region').textContent") == "100%"
            assert json.loads(client.get(f"/api/compare?before=events&after={plan['new_table']}")[1])["watching_after"]
            assert not page.errors, page.errors
        finally:
            browser.close()
