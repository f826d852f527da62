"""Reports: the HTML page is self-contained and says the verdict; the PNG heat map is a real
PNG; the terminal view shows regions and the verdict."""

from __future__ import annotations

import random
import re
import struct

import pytest
from rich.console import Console

from keyshape.analysis import analyze
from keyshape.report import html, png, terminal

SPLITS = [b"%02d" % r for r in range(1, 8)]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def hot():
    keys = [b"%02d_%06d" % (i * 8 // 8_000, i) for i in range(8_000)]  # walks regions in order
    return analyze(keys, SPLITS, name="time-leading")


@pytest.fixture(scope="module")
def even():
    rng = random.Random(0)
    keys = [b"%02d_%06d" % (rng.randrange(8), rng.randrange(10**6)) for _ in range(8_000)]
    return analyze(keys, SPLITS + [b'\xfe<"&>'], name="salted")


def _assert_self_contained(page: str) -> None:
    # No resource fetched from anywhere: every src/href is inline (data:) or a fragment.
    refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)["']""", page, flags=re.I)
    assert all(r.startswith(("data:", "#")) for r in refs), refs
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, flags=re.I)
    assert "<link" not in page.lower() and "@import" not in page and "url(http" not in page
    # Scripts are inline (the heat map's own few lines, and its data as JSON), never loaded or
    # loading anything: no src, no fetch, no XHR, no dynamic import, no eval.
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, flags=re.S | re.I)
    assert scripts and all("src" not in attrs.lower() for attrs, _ in scripts)
    for _, code in scripts:
        assert not re.search(r"\b(fetch|XMLHttpRequest|import|eval|WebSocket)\s*\(", code)


def test_html_is_self_contained_and_states_the_verdict(hot, tmp_path) -> None:
    path = html.write_html(hot, tmp_path / "r.html")
    page = path.read_text(encoding="utf-8")
    _assert_self_contained(page)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "HOTSPOT" in page and hot.reasons[0].split(":")[0] in page
    assert page.count('<img alt="') >= 3 and "data:image/png;base64," in page
    for advice in hot.advice:
        assert html.escape(advice) in page


def test_html_escapes_keys(even) -> None:
    page = html.render_html(even)
    assert "\\xFE&lt;&quot;&amp;&gt;" in page  # toStringBinary, then HTML-escaped
    assert '\\xFE<"&>' not in page


def test_compare_page_holds_every_design(hot, even, tmp_path) -> None:
    page = html.write_compare_html([hot, even], tmp_path / "c.html").read_text(encoding="utf-8")
    _assert_self_contained(page)
    assert "time-leading" in page and "salted" in page
    assert "hotspot" in page and "balanced" in page


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_png_heat_map_is_a_plausible_png(hot, tmp_path) -> None:
    data = png.write_png(hot, tmp_path / "h.png").read_bytes()
    width, height = _png_size(data)
    assert 600 <= width <= 3000 and 300 <= height <= 2000
    assert len(data) > 10_000  # a real picture, not an empty canvas


def test_compare_png_is_wider_than_one_heat_map(hot, even, tmp_path) -> None:
    one = _png_size(png.write_png(hot, tmp_path / "a.png").read_bytes())
    three = _png_size(png.write_compare_png([hot, even, hot], tmp_path / "b.png").read_bytes())
    assert three[0] > one[0]


def test_terminal_view_shows_regions_and_verdict(hot) -> None:
    console = Console(record=True, width=120)
    console.print(terminal.analysis_view(hot))
    text = console.export_text()
    assert "HOTSPOT" in text and "time-leading" in text
    assert "(start)" in text and "(end)" in text
    assert "1,000" in text  # rows of a region


def test_terminal_table_elides_many_regions() -> None:
    splits = [b"%03d" % r for r in range(1, 100)]
    keys = [b"%03d" % (i % 100) for i in range(10_000)] + [b"050"] * 5_000
    a = analyze(keys, splits)
    shown = terminal.pick_regions(a.regions, 12)
    real = [r for r in shown if r is not None]
    assert len(real) == 12 and None in shown
    assert any(r.index == 50 for r in real)  # the hottest region is always shown
    assert [r.index for r in real] == sorted(r.index for r in real)  # key order kept
