"""The HTML report's interactive heat map in a real headless Chromium (Debian's package, driven
over the DevTools Protocol by tests/chromium.py): the page loads with no console errors,
hovering a cell shows that region's keys (raw and decoded), its time window and its count, and
dragging over a key range zooms into it. Skipped only when no Chromium is installed."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from chromium import Chromium, Page
from keyshape import KeySchema
from keyshape.analysis import Analysis
from keyshape.analysis.designs import analyze_schema
from keyshape.core.hbytes import to_string_binary
from keyshape.report import html

pytestmark = pytest.mark.browser


SCHEMA = {
    "table": {"name": "events"},
    "key": {"fields": [{"name": "t", "type": "timestamp"}, {"name": "id", "type": "int32"}]},
    "splits": {"algorithm": "sample", "regions": 12, "sample_rows": 2000},
    "workload": {"rows": 12_000, "fields": {"t": {"generator": "sequential-time"}, "id": {"generator": "uniform", "cardinality": 1000}}},
}


@pytest.fixture()
def page(browser: Chromium) -> Iterator[Page]:
    p = browser.page()
    try:
        yield p
    finally:
        p.close()


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    return analyze_schema(KeySchema.from_dict(SCHEMA), windows=20)


def _plot_box(page: Page, which: int = 0) -> dict[str, float]:
    """The heat map's plot area in viewport pixels, after scrolling it into view."""
    return page.js(f"""(function () {{
        var root = document.querySelectorAll('.ks-heat')[{which}];
        root.scrollIntoView();
        var c = root.querySelector('.ks-canvas'), b = c.getBoundingClientRect();
        var d = JSON.parse(root.querySelector('.ks-data').textContent);
        return {{left: b.left + d.label_px, top: b.top + 6, width: b.width - d.label_px - 8,
                 height: b.height - 6 - 34, regions: d.regions.length, windows: d.heat.length}};
    }})()""")


def _cell_centre(box: dict[str, float], region: int, window: int, lo: int = 0, hi: int | None = None) -> tuple[float, float]:
    hi = box["regions"] if hi is None else hi
    rh = box["height"] / (hi - lo)
    return (box["left"] + (window + 0.5) * box["width"] / box["windows"], box["top"] + (region - lo + 0.5) * rh)


def _tip(page: Page) -> str:
    return page.js("(function(){var t=document.querySelector('.ks-tip');return t.style.display === 'block' ? t.textContent : ''})()")


def test_heat_map_loads_clean_and_hover_shows_region_time_and_count(page: Page, analysis: Analysis, tmp_path: Path) -> None:
    report = html.write_html(analysis, tmp_path / "report.html")
    page.open(report)
    assert page.errors == []
    box = _plot_box(page)
    assert (box["regions"], box["windows"]) == (12, 20)
    heat = analysis.heat  # windows x regions
    window = 10
    region = int(np.argmax(heat[window]))  # the time-leading key's hot region at that moment
    page.mouse("mouseMoved", *_cell_centre(box, region, window))
    tip = _tip(page)
    r = analysis.regions[region]
    assert f"region #{region} " in tip
    assert to_string_binary(r.start) in tip and to_string_binary(r.end) in tip
    assert r.start_text and f"start decoded  {r.start_text}" in tip
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d", r.start_text)
    per_window = analysis.rows // 20
    assert (f"time window {window + 1} of 20: writes {window * per_window + 1:,}–{(window + 1) * per_window:,}") in tip
    assert f"{int(heat[window, region]):,} writes here" in tip
    # A quiet cell of the same window says so.
    quiet = int(np.argmin(heat[window]))
    page.mouse("mouseMoved", *_cell_centre(box, quiet, window))
    assert f"region #{quiet} " in _tip(page) and "\n0 writes here" in _tip(page)
    # The drawn colours follow the counts: the hot cell is bright, the quiet one dark.
    bright = page.js(f"""(function () {{
        var c = document.querySelector('.ks-canvas'), ctx = c.getContext('2d'),
            b = c.getBoundingClientRect(), k = c.width / b.width;
        function lum(x, y) {{ var p = ctx.getImageData(Math.round((x - b.left) * k),
            Math.round((y - b.top) * k), 1, 1).data; return p[0] + p[1] + p[2]; }}
        return [lum({_cell_centre(box, region, window)[0]}, {_cell_centre(box, region, window)[1]}),
                lum({_cell_centre(box, quiet, window)[0]}, {_cell_centre(box, quiet, window)[1]})];
    }})()""")
    assert bright[0] > 500 and bright[1] < 30, bright
    page.mouse("mouseMoved", 2, 2)  # off the map: the tip goes away
    assert _tip(page) == ""
    page.screenshot(tmp_path / "report.png")
    assert (tmp_path / "report.png").read_bytes()[:4] == b"\x89PNG"
    assert page.errors == []


def test_dragging_over_a_key_range_zooms_into_it(page: Page, analysis: Analysis, tmp_path: Path) -> None:
    page.open(html.write_html(analysis, tmp_path / "zoom.html"))
    box = _plot_box(page)
    assert page.js("document.querySelector('.ks-reset').disabled") is True
    page.mouse("mousePressed", *_cell_centre(box, 3, 5))
    page.mouse("mouseMoved", *_cell_centre(box, 5, 5), pressed=True)
    page.mouse("mouseMoved", *_cell_centre(box, 6, 5), pressed=True)
    page.mouse("mouseReleased", *_cell_centre(box, 6, 5))
    assert page.js("document.querySelector('.ks-heat').getAttribute('data-view')") == "3-7"
    assert page.js("document.querySelector('.ks-range').textContent") == "regions #3–#6 of 12"
    assert page.js("document.querySelector('.ks-reset').disabled") is False
    zoomed = _plot_box(page)
    # Four regions now fill the map: its top quarter is region #3, its bottom quarter #6.
    page.mouse("mouseMoved", zoomed["left"] + 5, zoomed["top"] + zoomed["height"] * 0.1)
    assert _tip(page).startswith("region #3 ")
    page.mouse("mouseMoved", zoomed["left"] + 5, zoomed["top"] + zoomed["height"] * 0.9)
    assert _tip(page).startswith("region #6 ")
    page.js("document.querySelector('.ks-reset').click()")
    assert page.js("document.querySelector('.ks-heat').getAttribute('data-view')") == "0-12"
    assert page.errors == []


def test_compare_page_per_panel_scales_load_clean(page: Page, analysis: Analysis, tmp_path: Path) -> None:
    even = analyze_schema(
        KeySchema.from_dict(
            {
                **SCHEMA,
                "key": {"prefix": {"strategy": "phoenix", "buckets": 12}, "fields": SCHEMA["key"]["fields"]},
                "splits": {"algorithm": "prefix"},
            }
        ),
        windows=20,
        name="salted",
    )
    report = html.write_compare_html([analysis, even], tmp_path / "cmp.html", "per-panel")
    page.open(report)
    assert page.errors == []
    vmaxes = page.js("Array.prototype.map.call(document.querySelectorAll('.ks-data'),function (s) { return JSON.parse(s.textContent).vmax; })")
    assert vmaxes == [float(analysis.heat.max()), float(even.heat.max())]
    box = _plot_box(page, which=1)
    page.mouse("mouseMoved", *_cell_centre(box, 5, 0))
    tips = page.js(
        "Array.prototype.map.call(document.querySelectorAll('.ks-tip'),function (t) { return t.style.display === 'block' ? t.textContent : ''; })"
    )
    assert tips[0] == "" and tips[1].startswith("region #5 ")
    assert "start  \\x05\n" in tips[1] and "start decoded  bucket 5\n" in tips[1]
    assert json.dumps(page.errors) == "[]"
