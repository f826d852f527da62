"""Self-contained HTML reports: one file, with the heat map drawn by inline JavaScript
(:mod:`keyshape.report.heatmap_html`: hover for region, time and count, drag to zoom into a key
range) and the other figures embedded as base64 PNG; no external CSS/JS/CDN, so the page opens
anywhere (a laptop, a CI artifact, an air-gapped machine). Without JavaScript the heat map shows
as a PNG."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from html import escape
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from keyshape.analysis.stats import percent_cell
from keyshape.analysis import Analysis
from keyshape.core.hbytes import to_string_binary
from keyshape.report.heatmap_html import HEATMAP_CSS, HEATMAP_JS, interactive_heatmap
from keyshape.errors import BadInput
from keyshape.report.png import (
    COLOUR_SCALES,
    VERDICT_COLOURS,
    compare_figure,
    figure_png,
    heatmap_figure,
    hot_share_figure,
    region_bars_figure,
)

_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;
     background:#f6f7f9;color:#1d232b}
main{max-width:1240px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:26px;margin:4px 0 2px} h2{font-size:19px;margin:30px 0 10px;
     border-bottom:1px solid #d9dde3;padding-bottom:4px}
.sub{color:#5b6573;font-size:14px}
.verdict{border-radius:8px;padding:14px 20px;color:#fff;margin:18px 0 8px}
.verdict .label{font-size:24px;font-weight:700;letter-spacing:.06em}
.verdict ul{margin:6px 0 0 0;padding-left:20px;font-size:15px}
.advice{background:#fff;border-left:5px solid #1565c0;padding:10px 18px;margin:10px 0}
.advice li{margin:4px 0}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.card{background:#fff;border:1px solid #d9dde3;border-radius:6px;padding:8px 14px;min-width:130px}
.card .v{font-size:20px;font-weight:600} .card .k{font-size:12px;color:#5b6573}
img{max-width:100%;background:#fff;border:1px solid #d9dde3;border-radius:4px}
table{border-collapse:collapse;background:#fff;font-size:13px}
th,td{border:1px solid #d9dde3;padding:3px 8px;text-align:right}
th{background:#eef1f5} td.key{text-align:left;font-family:ui-monospace,Menlo,Consolas,monospace}
.scroll{max-height:520px;overflow:auto;display:inline-block}
pre{background:#fff;border:1px solid #d9dde3;padding:10px 14px;overflow:auto;font-size:13px}
.bar{display:inline-block;height:10px;background:#1565c0;vertical-align:middle}
footer{margin-top:36px;color:#8a93a0;font-size:12px}
"""


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def _pct(x: float) -> str:
    return percent_cell(x)


def _verdict_block(a: Analysis) -> str:
    colour = VERDICT_COLOURS.get(a.verdict, "#455a64")
    reasons = "".join(f"<li>{escape(r)}</li>" for r in a.reasons)
    advice = "".join(f"<li>{escape(x)}</li>" for x in a.advice)
    return (
        f'<div class="verdict" style="background:{colour}"><div class="label">'
        f"{escape(a.verdict.upper())}</div><ul>{reasons}</ul></div>"
        f'<div class="advice"><b>Advice</b><ul>{advice}</ul></div>'
    )


def _cards(a: Analysis) -> str:
    items = [
        ("rows", f"{a.rows:,}"),
        ("regions", f"{len(a.regions)}"),
        ("region servers (assumed: --servers)" if a.servers_assumed else "region servers", f"{a.servers}"),
        ("max / mean", f"{a.max_over_mean:.2f}"),
        ("coefficient of variation", f"{a.cv:.3f}"),
        ("Gini", f"{a.gini:.3f}"),
        ("deviation rate (max-min)/mean", f"{a.deviation_rate:.2f}"),
        ("empty regions", f"{a.empty_regions}"),
        ("hot moment share (region)" + (f", a moment = {a.moment_rows:,} writes" if a.moment_rows else ""), _pct(a.hot_window_share)),
        ("fair share", _pct(1 / len(a.regions))),
        ("hot moment share (server)", _pct(a.hot_window_server_share)),
    ]
    if a.key_length_max:  # a live table's request counters carry no keys
        items += [
            ("key length min/mean/max", f"{a.key_length_min} / {a.key_length_mean:.1f} / {a.key_length_max}"),
            (f"key overhead ({a.cells_per_row} cell(s)/row)", _bytes(a.key_overhead_bytes)),
            ("keys increasing in write order", _pct(a.increasing_fraction)),
        ]
    return (
        '<div class="cards">'
        + "".join(f'<div class="card"><div class="v">{escape(v)}</div><div class="k">{escape(k)}</div></div>' for k, v in items)
        + "</div>"
    )


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:.1f}"


def _region_table(a: Analysis) -> str:
    top = max((r.rows for r in a.regions), default=1) or 1
    decoded = any(r.start_text for r in a.regions)
    rows = "".join(
        f"<tr><td>{r.index}</td><td class=key>{escape(_tsb(r.start))}</td>"
        f"<td class=key>{escape(_tsb(r.end))}</td>"
        + (f"<td class=key>{escape(r.start_text)}</td>" if decoded else "")
        + f"<td>{r.rows:,}</td><td>{_pct(r.share)}</td>"
        f'<td style="text-align:left"><span class="bar" style="width:{120 * r.rows / top:.0f}px">'
        f"</span></td><td>{_bytes(r.bytes)}</td><td>{r.server}</td></tr>"
        for r in a.regions
    )
    legend = f" ({escape(a.label_legend)})" if decoded and a.label_legend else ""
    head = f"<th>start decoded{legend}</th>" if decoded else ""
    return (
        '<div class="scroll"><table><tr><th>#</th><th>start</th><th>end</th>'
        + head
        + "<th>rows</th><th>share</th><th></th><th>est. size</th><th>server</th></tr>"
        + rows
        + "</table></div>"
    )


def _tsb(key: bytes) -> str:
    return to_string_binary(key) if key else "(unbounded)"


def _version() -> str:
    """The installed distribution's version: the package root (which re-exports every layer, this
    one included) is above the reports and is not imported from here."""
    try:
        return version("keyshape")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}{HEATMAP_CSS}</style></head><body><main>{body}"
        f"<footer>Generated by keyshape {escape(_version())}. Regions are [start, end) like "
        f"HBase; keys are shown in Bytes.toStringBinary form.</footer></main>"
        f"<script>{HEATMAP_JS}</script></body></html>"
    )


def _heatmap(a: Analysis, vmax: float | None = None) -> str:
    """The interactive heat map, with the PNG for browsers that run no JavaScript."""
    still = _img(figure_png(heatmap_figure(a, vmax)), "heat map of writes per region per time window")
    return interactive_heatmap(a, vmax=vmax) + f"<noscript>{still}</noscript>"


def _key_check(a: Analysis) -> str:
    """The line on real keys checked against the schema ("" for a generated workload); keys that
    do not fit are also the first reason in the verdict block."""
    check = a.key_check
    if check is None:
        return ""
    style = ' style="color:#b45309;font-weight:600"' if check.foreign or check.wrong_salt else ""
    return f'<p class="sub key-check"{style}>{escape(check.summary())}</p>'


def _design_sections(a: Analysis, level: str = "h2", vmax: float | None = None) -> str:
    parts = [
        _verdict_block(a),
        _key_check(a),
        _cards(a),
        f"<{level}>Writes over time × key space</{level}>",
        '<p class="sub">Each column is a slice of the write stream, each row a region in key order '
        "(like Bigtable's Key Visualizer). A bright diagonal is a key that moves with time; one "
        "bright row is a hot region; an even glow is a balanced design.</p>",
        _heatmap(a, vmax),
        _img(figure_png(hot_share_figure(a)), "hottest region's share of each time window"),
        f"<{level}>Rows per region</{level}>",
        _img(figure_png(region_bars_figure(a)), "rows per region"),
        "<p></p>",
        _region_table(a),
    ]
    if a.auto_split:
        s = a.auto_split
        how = f"split at {s['split_rows']:,} rows per region" if s.get("split_rows") else "splitting as HBase does (see the reasons above)"
        parts.append(
            f"<{level}>Auto-split</{level}><p>Started with {s['initial_regions']} "
            f"region(s), {how}: {s['splits']} "
            f"splits, {s['final_regions']} regions at the end; first split after "
            f"{s['first_split_write']} writes.</p>"
        )
        timed = [st for st in s.get("stages", []) if st.get("seconds") is not None]
        if timed:
            parts.append(
                "<p>Regions over time: "
                + ", ".join(f"{st['regions']} for {st['seconds']:.1f} s ({st['writes']:,} writes)" for st in timed[:12])
                + (", ..." if len(timed) > 12 else "")
                + ".</p>"
            )
    if a.lint:
        parts.append(f"<{level}>Schema lint</{level}><ul>" + "".join(f"<li>{escape(x)}</li>" for x in a.lint) + "</ul>")
    if a.schema_text:
        parts.append(f"<{level}>Key schema</{level}><pre>{escape(a.schema_text)}</pre>")
    return "".join(parts)


def render_html(analysis: Analysis) -> str:
    """The full self-contained report page for one analysis, as HTML text."""
    a = analysis
    head = (
        f"<h1>keyshape: {escape(a.name or 'row keys')}</h1><div class=sub>"
        f"{a.rows:,} writes over {len(a.regions)} region{'' if len(a.regions) == 1 else 's'} "
        f"on {a.servers} region server{'' if a.servers == 1 else 's'}"
        f"{' · ' + escape(a.source) if a.source else ''}</div>"
    )
    return _page(f"keyshape report: {a.name}", head + _design_sections(a))


def render_compare_html(analyses: Sequence[Analysis], colour_scale: str = "shared") -> str:
    """One page comparing several designs on the same workload: a summary table, the heat maps
    side by side, then each design's verdict, advice and interactive heat map (one colour scale
    for all designs, or ``colour_scale="per-panel"``: each its own) and region chart."""
    if not analyses:
        raise BadInput("compare needs at least one analysis")
    if colour_scale not in COLOUR_SCALES:
        raise BadInput(f"colour scale {colour_scale!r}: use one of {', '.join(COLOUR_SCALES)}")
    shared = max(float(a.heat.max()) for a in analyses) or 1.0
    vmax = None if colour_scale == "per-panel" else shared
    rows = "".join(
        f"<tr><td class=key>{escape(a.name)}</td>"
        f'<td style="color:{VERDICT_COLOURS.get(a.verdict, "#000")};font-weight:700">'
        f"{escape(a.verdict)}</td><td>{len(a.regions)}</td><td>{a.max_over_mean:.2f}</td>"
        f"<td>{a.cv:.3f}</td><td>{a.gini:.3f}</td><td>{a.deviation_rate:.2f}</td>"
        f"<td>{_pct(a.hot_window_share)}</td><td>{a.key_length_mean:.1f}</td></tr>"
        for a in analyses
    )
    table = (
        "<table><tr><th>design</th><th>verdict</th><th>regions</th><th>max/mean</th>"
        "<th>CV</th><th>Gini</th><th>deviation</th><th>hot window</th><th>key bytes</th>"
        f"</tr>{rows}</table>"
    )
    body = [
        f"<h1>keyshape: comparing {len(analyses)} designs</h1>",
        f"<div class=sub>{analyses[0].rows:,} writes each, same workload</div>",
        "<h2>Summary</h2>",
        table,
        "<h2>Writes over time × key space</h2>",
        '<p class="sub">'
        + (
            "Each design on its own colour scale: compare patterns, not brightness."
            if vmax is None
            else "One colour scale for all designs: brightness compares across them."
        )
        + "</p>",
        _img(figure_png(compare_figure(analyses, colour_scale)), "heat maps side by side"),
    ]
    for a in analyses:
        body.append(f"<h2>{escape(a.name)}</h2>")
        body.append(_design_sections(a, level="h3", vmax=vmax))
    return _page("keyshape comparison", "".join(body))


def write_html(analysis: Analysis, path: str | Path) -> Path:
    """Write ``render_html(analysis)`` to ``path`` (UTF-8); returns the path."""
    out = Path(path)
    out.write_text(render_html(analysis), encoding="utf-8")
    return out


def write_compare_html(analyses: Sequence[Analysis], path: str | Path, colour_scale: str = "shared") -> Path:
    """Write ``render_compare_html(analyses, colour_scale)`` to ``path`` (UTF-8); returns the path."""
    out = Path(path)
    out.write_text(render_compare_html(analyses, colour_scale), encoding="utf-8")
    return out
