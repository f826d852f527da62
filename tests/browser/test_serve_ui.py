"""``keyshape serve``'s page in real headless Chromium over a made-up history (no cluster: the
service's store points at a closed port, so it serves the history it has): zoom and pan fetch
the window they show, the de-salted axis of a salted table folds its buckets into one, the
server lane shows which server held each key range, the metric selector asks for that metric."""

from __future__ import annotations

import base64
import json
import struct
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from chromium import Chromium, Page, chromium_path

from keyshape.serve import History, ServeOptions, Service, load_schemas
from keyshape.serve.history import Cell
from keyshape.store import open_store

pytestmark = pytest.mark.browser

SALTED = """
[table]
name = "kss_ui"
[[table.families]]
name = "d"

[key]
prefix = { strategy = "phoenix", buckets = 8 }
[[key.fields]]
name = "event_id"
type = "int64"
encoding = "hbase"
"""
BUCKETS, POLLS = 8, 30
SERVERS = ["rs0:16020", "rs1:16020", "rs2:16020"]


def _regions() -> list[tuple[str, bytes, bytes, str]]:
    """Each of the 8 salt buckets split at event id 1000: 16 regions, on 3 servers in turn."""
    out = []
    for b in range(BUCKETS):
        start = b"" if b == 0 else bytes([b])
        mid = bytes([b]) + struct.pack(">q", 1000)
        end = bytes([b + 1]) if b + 1 < BUCKETS else b""
        out.append((f"r{b}a", start, mid, SERVERS[(2 * b) % 3]))
        out.append((f"r{b}b", mid, end, SERVERS[(2 * b + 1) % 3]))
    return out


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Page]]:
    binary = chromium_path()
    if binary is None:
        pytest.skip("no Chromium: apt-get install -y chromium, or set KEYSHAPE_CHROMIUM")
    folder = tmp_path_factory.mktemp("ui")
    (folder / "schemas").mkdir()
    (folder / "schemas" / "salt.toml").write_text(SALTED)
    h = History(folder / "h.db")
    now = time.time()
    for i in range(POLLS):  # a sequential id behind the salt: the lower half of every bucket, then the upper
        hot = "a" if i < POLLS // 2 else "b"
        h.record("kss_ui", now - 300 + 10 * i, [Cell(n, s, e, srv, 500.0 if n.endswith(hot) else 5.0, 1.0) for n, s, e, srv in _regions()])
    h.event("kss_ui", now - 150, "split", "r0 split at \\x00...")
    h.close()
    options = ServeOptions(lambda: open_store("127.0.0.1:1"), str(folder / "h.db"), (), load_schemas(folder / "schemas"), "127.0.0.1:0", 60.0)
    service = Service(options).start()
    browser = Chromium(binary)
    try:
        page = browser.page()
        page.call("Emulation.setDeviceMetricsOverride", width=1400, height=1600, deviceScaleFactor=1, mobile=False)
        page.call("Page.navigate", url=f"{service.url}/")
        page.wait_for("Page.loadEventFired")
        page.js("window.ksState.ready.then(function () { window.ksState.select('kss_ui'); return window.ksState.refresh(); })")
        yield service, page
        assert not page.errors, page.errors
    finally:
        browser.close()
        service.stop()


def _heat(page: Page) -> dict[str, Any]:
    out: dict[str, Any] = page.js(
        "(function (h) { return {since: h.since, until: h.until, k0: h.k0, k1: h.k1, times: h.times, keys: h.keys, shape: h.shape,"
        " values_f32: h.values_f32, servers: h.servers, metric: h.metric, logical: h.logical && {buckets: h.logical.buckets,"
        " keys: h.logical.keys, shape: h.logical.shape, values_f32: h.logical.values_f32}, query: h.query}; })(window.ksState.heat)"
    )
    return out


def _matrix(body: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(body["values_f32"]), dtype="<f4").reshape(body["shape"]).astype(np.float64)


def _wait_for_new(page: Page, before: str | None) -> dict[str, Any]:
    """The heat map the page draws once the answer to a query other than ``before`` is in."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        h = _heat(page)
        if h["query"] != before and h["query"] == page.js("window.ksState.lastQuery"):
            return h
        time.sleep(0.1)
    raise AssertionError(f"the page fetched nothing new after {before}")


def test_a_wheel_zoom_fetches_a_narrower_window_in_both_axes_and_a_drag_pans_it(served: tuple[Service, Page]) -> None:
    service, page = served
    whole = _wait_for_new(page, None)
    assert whole["k0"] == 0 and whole["k1"] == 1 and len(whole["keys"]) == 2 * BUCKETS
    box = page.js(
        "(function () { var c = document.getElementById('heat'); c.scrollIntoView();"
        " var r = c.getBoundingClientRect(); return {left: r.left, top: r.top}; })()"
    )
    plot = page.js("window.ksState.plot")
    # the wheel over the right end of the time axis, a quarter down the key axis: zoom in twice
    x, y = box["left"] + plot["left"] + 0.99 * plot["width"], box["top"] + plot["top"] + 0.25 * plot["height"]
    page.call("Input.dispatchMouseEvent", type="mouseWheel", x=x, y=y, deltaX=0, deltaY=-100)
    zoomed = _wait_for_new(page, whole["query"])
    assert "seconds=1800" in zoomed["query"] and "until=" in zoomed["query"], zoomed["query"]
    # half as wide, centred where the cursor was (to the pixel)
    assert (zoomed["k0"], zoomed["k1"]) == pytest.approx((0.125, 0.625), abs=0.005)
    assert zoomed["until"] - zoomed["since"] == pytest.approx(1800, abs=1)
    # the answer is that window: fewer key buckets, all from the zoomed range, times inside it
    a, b = int(np.floor(zoomed["k0"] * 2 * BUCKETS)), int(np.ceil(zoomed["k1"] * 2 * BUCKETS))
    assert [k["hex"] for k in zoomed["keys"]] == [k["hex"] for k in whole["keys"][a:b]] and len(zoomed["keys"]) <= BUCKETS + 1
    assert all(zoomed["since"] - 1 <= t <= zoomed["until"] for t in zoomed["times"])
    # a drag down the key axis pans towards the start of the key space
    page.mouse("mousePressed", x - 100, y)
    page.mouse("mouseMoved", x - 100, y + 0.25 * plot["height"], pressed=True)
    page.mouse("mouseReleased", x - 100, y + 0.25 * plot["height"])
    panned = _wait_for_new(page, zoomed["query"])
    assert panned["k0"] == pytest.approx(0.0) and panned["k1"] == pytest.approx(0.5, abs=0.005)
    page.js("document.getElementById('reset').click()")
    back = _wait_for_new(page, panned["query"])
    assert (back["k0"], back["k1"]) == (0, 1) and "until=" not in back["query"]


def test_the_salted_table_has_a_logical_axis_that_folds_its_8_buckets_into_one(served: tuple[Service, Page]) -> None:
    _, page = served
    h = _heat(page)
    logical = h["logical"]
    assert logical is not None and logical["buckets"] == BUCKETS
    # 16 physical key buckets (8 salt buckets x 2 halves) fold into the 2 halves of the logical key
    assert [k["label"] for k in logical["keys"]] == ["(start)", "1000"]
    assert [k["label"] for k in h["keys"][:3]] == ["(start)", "bucket 0 · 1000", "bucket 1"]
    physical, folded = _matrix(h), _matrix(logical)
    assert np.allclose(physical.sum(axis=1), folded.sum(axis=1), rtol=1e-5)
    # the sequential id shows once on the logical axis: the lower half hot, then the upper
    assert folded[0, 0] > 50 * folded[0, 1] and folded[-1, 1] > 50 * folded[-1, 0]
    assert page.js("getComputedStyle(document.getElementById('logicalbox')).display") == "block"
    assert "8 buckets folded" in page.js("document.getElementById('logicalnote').textContent")


def test_the_server_lane_shows_the_three_servers(served: tuple[Service, Page]) -> None:
    _, page = served
    h = _heat(page)
    assert h["servers"] == SERVERS
    legend = page.js("Array.from(document.querySelectorAll('#lanelegend .server')).map(function (e) { return e.textContent; })")
    assert legend == SERVERS
    # the lane canvas is painted in three server colours (the palette's first three), nothing else but the background
    colours = page.js("""(function () {
        var c = document.getElementById('lane'), p = window.ksState.lanePlot, seen = {};
        var d = c.getContext('2d').getImageData(p.left + 2, p.top + 2, p.width - 4, p.height - 4).data;
        for (var i = 0; i < d.length; i += 4) seen[d[i] + ',' + d[i + 1] + ',' + d[i + 2]] = 1;
        return Object.keys(seen); })()""")
    palette = {"78,121,167", "242,142,43", "89,161,79"}
    assert palette <= set(colours), colours
    body = json.loads(urllib.request.urlopen(f"{served[0].url}/api/heatmap?table=kss_ui&seconds=3600", timeout=10).read())
    lane = np.frombuffer(base64.b64decode(body["lane_u16"]), dtype="<u2").reshape(body["shape"])
    # key bucket j of region r: its server in every poll
    assert [body["servers"][s] for s in lane[-1]] == [srv for _, _, _, srv in _regions()]


def test_the_metric_selector_and_the_brightness_redraw(served: tuple[Service, Page]) -> None:
    _, page = served
    before = page.js("window.ksState.lastQuery")
    page.js("(function () { var m = document.getElementById('metric'); m.value = 'requests'; m.onchange(); })()")
    h = _wait_for_new(page, before)
    assert h["metric"] == "requests" and "metric=requests" in h["query"]
    # requests = writes + reads: the hot cells' 500 writes and 1 read
    assert _matrix(h).max() == pytest.approx(501.0)

    def lit() -> int:
        n: int = page.js("""(function () { var c = document.getElementById('heat'), p = window.ksState.plot;
            var d = c.getContext('2d').getImageData(p.left, p.top, p.width, p.height).data, n = 0;
            for (var i = 0; i < d.length; i += 4) n += d[i] + d[i + 1] + d[i + 2];
            return n; })()""")
        return n

    dim = lit()
    page.js("(function () { var b = document.getElementById('brightness'); b.value = '3'; b.oninput(); })()")
    assert lit() > 1.02 * dim  # brighter: the quiet cells move up the colour scale
    bad = urllib.request.Request(f"{served[0].url}/api/heatmap?table=kss_ui&metric=bogus")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(bad, timeout=10)
    assert refused.value.code == 400
