"""Pictures of an analysis: the time x key-space heat map (like Bigtable's Key Visualizer), the
per-region bar chart and side-by-side comparisons, drawn with matplotlib's object API.

Figures are built as ``matplotlib.figure.Figure`` objects, never through pyplot: no global backend
switch in the caller's process, no figure registry to leak into, and ``savefig`` renders PNG with
the Agg canvas on its own."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from keyshape.analysis import Analysis
from keyshape.core.hbytes import shared_prefix_length, to_string_binary
from keyshape.errors import BadInput

VERDICT_COLOURS = {"balanced": "#2e7d32", "skewed": "#ef6c00", "hotspot": "#c62828"}
_MAX_KEY_LABELS = 32
_LABEL_CHARS = 22
_DECODED_CHARS = 30


def _short(key: bytes, skip: int = 0) -> str:
    """A tick label: the key in toStringBinary form, minus a prefix every start key shares
    (shown as …, so binary keys show the bytes that differ), cut to a readable length."""
    if not key:
        return "(start)"
    text = ("…" if skip else "") + to_string_binary(key[skip:])
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"


def region_tick_labels(analysis: Analysis) -> list[str]:
    """One label per region: its start key decoded by the schema (``RegionLoad.start_text``)
    when the analysis has them, else toStringBinary minus the prefix all start keys share."""
    starts = [r.start for r in analysis.regions]
    if any(r.start_text for r in analysis.regions):
        return [_cut(r.start_text or _short(r.start), _DECODED_CHARS) for r in analysis.regions]
    common = shared_prefix_length(starts)
    # Keep the shared prefix when it is short and readable; drop it when it hides the difference.
    skip = common if len(to_string_binary(starts[-1])) > _LABEL_CHARS else 0
    return [_short(k, skip) for k in starts]


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _region_ticks(ax: Axes, analysis: Analysis, axis: str) -> None:
    """Label regions with their start keys when few, else with every k-th region index."""
    n = len(analysis.regions)
    names = region_tick_labels(analysis)
    if n <= _MAX_KEY_LABELS:
        ticks = np.arange(n)
        labels = names
    else:
        step = int(np.ceil(n / 16))
        ticks = np.arange(0, n, step)
        labels = [f"#{i} {names[i]}" for i in ticks]
    if axis == "y":
        ax.set_yticks(ticks, labels, fontsize=7, family="monospace")
    else:
        ax.set_xticks(ticks, labels, fontsize=7, family="monospace", rotation=60, ha="right")


def window_caption(analysis: Analysis) -> str:
    """What one heat-map column is: "50 windows of ~4,000 writes" when the windows hold (nearly)
    equal numbers of writes, as for a workload or a key file; otherwise (the polls of a live
    table) just the window count and the total, since a per-window figure would be false."""
    sizes = analysis.heat.sum(axis=1)
    n = int(sizes.size)
    total = int(sizes.sum())
    if n and sizes.min() >= 0.9 * sizes.max():
        return f"{n} windows of ~{total / n:,.0f} writes"
    return f"{n} windows, {total:,} writes in all, uneven per window"


def draw_heatmap(ax: Axes, analysis: Analysis, *, vmax: float | None = None, colorbar: bool = True, title: str | None = None) -> None:
    """Draw writes per region (rows, key order top to bottom) per time window (columns)."""
    heat = analysis.heat.T.astype(np.float64)
    windows = heat.shape[1]
    im = ax.imshow(
        heat,
        aspect="auto",
        interpolation="nearest",
        cmap="inferno",
        vmin=0,
        vmax=vmax if vmax is not None else max(float(heat.max()), 1.0),
        origin="upper",
        extent=(0, windows, len(analysis.regions) - 0.5, -0.5),
    )
    ax.set_xlabel(f"time → ({window_caption(analysis)})")
    legend = f": {analysis.label_legend}" if analysis.label_legend and any(r.start_text for r in analysis.regions) else ""
    ax.set_ylabel(f"key space → (regions by start key{legend})")
    _region_ticks(ax, analysis, "y")
    if title is not None:
        ax.set_title(title, fontsize=11, color=VERDICT_COLOURS.get(analysis.verdict, "black"))
    if colorbar:
        cb = ax.figure.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
        cb.set_label("writes per region per window")


def draw_region_bars(ax: Axes, analysis: Analysis) -> None:
    """Draw rows per region in key order with the fair-share line."""
    rows = np.array([r.rows for r in analysis.regions], dtype=np.float64)
    n = len(rows)
    colour = VERDICT_COLOURS.get(analysis.verdict, "#1565c0")
    ax.bar(np.arange(n), rows, width=0.85 if n < 200 else 1.0, color=colour, alpha=0.85)
    ax.axhline(rows.sum() / n, color="black", linestyle="--", linewidth=1, label=f"fair share ({rows.sum() / n:,.0f} rows)")
    ax.set_ylabel("rows")
    ax.set_xlabel("region (key order)")
    ax.set_xlim(-0.6, n - 0.4)
    _region_ticks(ax, analysis, "x")
    ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def draw_hot_share(ax: Axes, analysis: Analysis) -> None:
    """Draw, per window, the share of writes the hottest region takes, against the fair share."""
    shares = analysis.window_hot_shares
    windows = analysis.windows
    # Shares exist for non-empty windows only; plot each under its heat-map column.
    filled = np.flatnonzero(analysis.heat.sum(axis=1) > 0)
    x = filled + 0.5 if filled.size == shares.size else np.arange(shares.size) + 0.5
    ax.plot(
        x,
        shares,
        color="#c62828",
        linewidth=1.5,
        marker="o" if shares.size <= 12 else None,
        markersize=3,
        label="hottest region's share of the window",
    )
    ax.axhline(1 / len(analysis.regions), color="black", linestyle="--", linewidth=1, label=f"fair share (1/{len(analysis.regions)})")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(0, max(windows, shares.size, 1))
    ax.set_xlabel("time window")
    ax.set_ylabel("share of writes")
    # Above the axes: the line itself often runs along the top edge.
    ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, fontsize=8, frameon=False)


def heatmap_figure(analysis: Analysis, vmax: float | None = None) -> Figure:
    """A figure with the heat map alone, titled with the design name and verdict (``vmax``: the
    count drawn brightest, default this map's largest)."""
    n = len(analysis.regions)
    height = min(max(3.5, 0.28 * n + 1.8), 11) if n <= _MAX_KEY_LABELS else 7
    fig = Figure(figsize=(11, height), layout="constrained")
    ax = fig.subplots()
    name = analysis.name or "keys"
    draw_heatmap(ax, analysis, vmax=vmax, title=f"{name}: {analysis.verdict.upper()} — writes per region over time")
    return fig


def region_bars_figure(analysis: Analysis) -> Figure:
    fig = Figure(figsize=(11, 3.6), layout="constrained")
    ax = fig.subplots()
    draw_region_bars(ax, analysis)
    return fig


def hot_share_figure(analysis: Analysis) -> Figure:
    fig = Figure(figsize=(11, 2.8), layout="constrained")
    ax = fig.subplots()
    draw_hot_share(ax, analysis)
    return fig


COLOUR_SCALES = ("shared", "per-panel")


def compare_figure(analyses: Sequence[Analysis], colour_scale: str = "shared") -> Figure:
    """Heat maps of several designs side by side.

    ``colour_scale="shared"`` (default): one scale for all panels, so brightness compares
    across designs (a balanced design looks dim beside a hot spot). ``"per-panel"``: each panel
    scaled to its own busiest cell with its own colour bar, so the pattern inside a quiet
    design shows too.
    """
    if not analyses:
        raise BadInput("compare needs at least one analysis")
    if colour_scale not in COLOUR_SCALES:
        raise BadInput(f"colour scale {colour_scale!r}: use one of {', '.join(COLOUR_SCALES)}")
    k = len(analyses)
    per_panel = colour_scale == "per-panel"
    fig = Figure(figsize=(max(5.0 * k, 7), 6), layout="constrained")
    axes = fig.subplots(1, k, squeeze=False)
    for ax, a in zip(axes[0], analyses):
        draw_heatmap(
            ax,
            a,
            colorbar=per_panel,
            title=f"{a.name or 'keys'}\n{a.verdict.upper()} · max/mean {a.max_over_mean:.2f} · hot window {100 * a.hot_window_share:.0f}%",
        )
    if per_panel:
        return fig
    vmax = max(float(a.heat.max()) for a in analyses) or 1.0
    for ax in axes[0]:
        for im in ax.get_images():
            im.set_clim(0, vmax)
    fig.colorbar(axes[0][0].get_images()[0], ax=list(axes[0]), fraction=0.02, pad=0.01, label="writes per region per window (one scale for all)")
    return fig


def figure_png(fig: Figure, dpi: int = 110) -> bytes:
    """Render a figure to PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def write_png(analysis: Analysis, path: str | Path) -> Path:
    """Write the heat map alone to ``path`` as PNG; returns the path."""
    out = Path(path)
    out.write_bytes(figure_png(heatmap_figure(analysis)))
    return out


def write_compare_png(analyses: Sequence[Analysis], path: str | Path, colour_scale: str = "shared") -> Path:
    """Write the side-by-side heat maps of several designs to ``path`` as PNG
    (``colour_scale``: see :func:`compare_figure`)."""
    out = Path(path)
    out.write_bytes(figure_png(compare_figure(analyses, colour_scale)))
    return out
