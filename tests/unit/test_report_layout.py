"""Report layout a reader relies on: the compare table keeps names and verdicts whole on an
80-column terminal, the heat map's time axis says what a column is, and the hot-share line sits
under the heat-map columns it describes."""

from __future__ import annotations

import numpy as np
from rich.console import Console

from keyshape.analysis import analyze
from keyshape.report import png, terminal

SPLITS = [b"%02d" % r for r in range(1, 8)]


def _design(name: str, walking: bool):
    if walking:
        keys = [b"%02d_%06d" % (i * 8 // 4_000, i) for i in range(4_000)]
    else:
        keys = [b"%02d_%06d" % (i % 8, i) for i in range(4_000)]
    return analyze(keys, SPLITS, name=name)


def test_compare_table_keeps_names_verdicts_and_every_column_at_80_columns() -> None:
    designs = [_design("timestamp-leading", True), _design("orders-salted", False)]
    console = Console(width=80, record=True, color_system=None)
    console.print(terminal.compare_table(designs))
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "…" not in text
    for a in designs:
        row = next(line for line in text.splitlines() if a.name in line)
        assert a.verdict in row
        assert f"{100 * a.hot_window_share:.1f}%" in row and f"{a.key_length_mean:.1f}" in row
    assert "key" in text and "bytes" in text  # the last column is not dropped


def test_window_caption_gives_writes_per_window_only_when_windows_are_even() -> None:
    a = _design("even", False)
    assert png.window_caption(a) == f"{a.windows} windows of ~{a.rows / a.windows:,.0f} writes"
    a.heat = np.array([[0] * 8, [100] * 8, [10] * 8, [0] * 8])  # live polls: uneven
    caption = png.window_caption(a)
    assert caption.startswith("4 windows") and "of ~" not in caption
    assert f"{int(a.heat.sum()):,}" in caption


def test_hot_share_points_sit_under_their_non_empty_heat_map_columns() -> None:
    a = _design("live-like", True)
    heat = np.zeros((6, len(a.regions)), dtype=np.int64)
    heat[1, 2], heat[2, 3], heat[2, 4] = 50, 30, 10  # windows 0, 3, 4, 5 saw no writes
    a.heat = heat
    a.window_hot_shares = np.array([1.0, 0.75])
    fig = png.hot_share_figure(a)
    ax = fig.axes[0]
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [1.5, 2.5]
    assert list(line.get_ydata()) == [1.0, 0.75]
    assert ax.get_xlim() == (0.0, 6.0)  # the same time axis as the heat map


def test_region_table_shows_the_bytes_that_tell_long_binary_boundaries_apart() -> None:
    """Eight-byte big-endian ids share their leading zero bytes; cutting keys at the end would
    print the same "\\x00\\x00\\x00\\…" on every row."""
    splits = [(i * 1_000).to_bytes(8, "big") for i in range(1, 8)]
    keys = [i.to_bytes(8, "big") for i in range(8_000)]
    a = analyze(keys, splits, name="ids")
    console = Console(width=80, record=True, color_system=None)
    console.print(terminal.region_table(a, width=80))
    rows = [line for line in console.export_text().splitlines() if line.startswith("│")]
    starts = [line.split("│")[2].strip() for line in rows[1:]]
    assert len(set(starts)) == len(starts) == 7
    assert all(s.startswith("…") for s in starts)


def test_drawing_a_png_leaves_the_callers_matplotlib_alone() -> None:
    """No backend switch and no pyplot figures left behind: the report uses Figure objects."""
    import subprocess
    import sys

    code = (
        "import matplotlib; matplotlib.use('svg'); import keyshape.report.png as png; "
        "from keyshape.analysis import analyze; import matplotlib.pyplot as plt; "
        "png.figure_png(png.heatmap_figure(analyze([bytes([i]) for i in range(50)], [b'\\x10'])));"
        "print(matplotlib.get_backend(), len(plt.get_fignums()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["svg", "0"]
