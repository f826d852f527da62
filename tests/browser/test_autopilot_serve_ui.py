"""serve's UI offers "plan a fix" on a hot table, in a real headless Chromium (issue 41): the link
appears under the pattern of the hot table and opens the autopilot's plan page, which shows the
two replayed heat maps. serve runs its own app over a store a sequential writer wrote
(tests/autopilot_serve_fixture.py). Skipped only when no Chromium is installed."""

from __future__ import annotations

from pathlib import Path

import pytest
from autopilot_serve_fixture import T0, served

from chromium import Chromium, chromium_path

pytestmark = pytest.mark.browser


def test_plan_a_fix_link_opens_the_plan_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = chromium_path()
    if binary is None:
        pytest.skip("no Chromium: apt-get install -y chromium, or set KEYSHAPE_CHROMIUM")
    monkeypatch.setattr("keyshape.serve.plan_route.time.time", lambda: T0 + 9)  # the history's own clock
    with served(tmp_path) as (client, _history):
        browser = Chromium(binary)
        try:
            page = browser.page()
            page.events.clear()
            page.call("Page.navigate", url=f"http://127.0.0.1:{client.port}/")
            page.wait_for("Page.loadEventFired")
            page.js("window.ksState.ready.then(function () { window.ksState.select('events'); return window.ksState.refresh(); })")
            href = page.js("(function () { var a = document.querySelector('#pattern a.pplan'); return a && a.getAttribute('href'); })()")
            assert href == "plan?table=events"
            assert page.js("document.querySelector('#verdict').textContent").startswith("HOTSPOT")
            page.events.clear()  # wait for this page's load, not the first one's
            page.call("Page.navigate", url=f"http://127.0.0.1:{client.port}/{href}")
            page.wait_for("Page.loadEventFired")
            assert page.js("document.querySelectorAll('.map').length") == 2, page.js("document.body.innerText.slice(0, 500)")
            shares = page.js("Array.from(document.querySelectorAll('.map .share')).map(e => e.textContent)")
            assert shares[0] == "busiest region 100%" and shares[1] != shares[0]
            assert "keyshape migrate" in page.js("document.getElementById('migrate').textContent")
            assert not page.errors, page.errors
        finally:
            browser.close()
