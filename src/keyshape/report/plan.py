"""The autopilot's plan as a self-contained HTML page (and terminal lines): the diagnosis, the
learned workload (measured / assumed), the two replayed heat maps side by side (the current
design and NEW, each with its busiest share), NEW's schema, the commands, estimates and risks.

It renders the plan's plain dict (``ops.autopilot.plan.Plan.to_dict``; report sits below ops in
the layers). The heat maps are inline SVG: no script, nothing fetched, opens anywhere."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

__all__ = ["plan_lines", "render_plan_html", "write_plan_html"]

_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;background:#f6f7f9;color:#1d232b}
main{max-width:1200px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:24px;margin:4px 0} h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid #d9dde3;padding-bottom:4px}
.sub{color:#5b6573;font-size:14px}
.verdict{border-radius:8px;padding:12px 18px;color:#fff;background:#c62828;margin:14px 0}
.verdict.balanced{background:#2e7d32}
.maps{display:flex;gap:24px;flex-wrap:wrap}
.map{background:#fff;border:1px solid #d9dde3;border-radius:8px;padding:12px}
.map .share{font-size:20px;font-weight:700}
pre{background:#fff;border:1px solid #d9dde3;padding:10px;overflow-x:auto;font-size:13px}
ul{margin:4px 0 4px 0} li{margin:2px 0}
table{border-collapse:collapse;background:#fff} td,th{border:1px solid #d9dde3;padding:4px 8px;font-size:14px;text-align:left}
"""


def _colour(x: float) -> str:
    # white -> orange -> dark red, the heat maps' own ramp
    x = max(0.0, min(1.0, x))
    r = 255
    g = int(255 - 190 * x)
    b = int(255 - 255 * min(1.0, 1.6 * x))
    if x > 0.75:
        r = int(255 - 300 * (x - 0.75))
    return f"rgb({r},{g},{b})"


def _svg(replay: dict[str, Any], vmax: float, title: str) -> str:
    values = replay.get("values") or []
    rows = len(values)
    cols = len(values[0]) if rows else 0
    w, h = 360, 220
    cw = w / max(cols, 1)
    rh = h / max(rows, 1)
    cells = []
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            cells.append(
                f'<rect x="{j * cw:.2f}" y="{i * rh:.2f}" width="{cw + 0.3:.2f}" height="{rh + 0.3:.2f}" fill="{_colour(v / vmax if vmax else 0)}">'
                f"<title>interval {i + 1}, region {j + 1}: {v:,.1f} writes/s</title></rect>"
            )
    return (
        f'<svg class="heat" role="img" aria-label="{escape(title)}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'xmlns="http://www.w3.org/2000/svg"><rect width="{w}" height="{h}" fill="#fff"/>{"".join(cells)}</svg>'
        f'<div class="sub">time runs down, {cols} region(s) across</div>'
    )


def render_plan_html(plan: dict[str, Any]) -> str:
    """The page for ``plan`` (a ``Plan.to_dict()``)."""
    cur, new = plan["current_replay"], plan["new_replay"]
    vmax = max([v for r in (cur, new) for row in r.get("values", []) for v in row] or [1.0])
    d = plan["diagnosis"]
    learned = plan.get("learned", {})
    verdict_cls = "verdict balanced" if d.get("verdict") == "balanced" else "verdict"

    def items(xs: list[str]) -> str:
        return "<ul>" + "".join(f"<li>{escape(x)}</li>" for x in xs) + "</ul>"

    maps = "".join(
        f'<div class="map" id="{key}"><div>{escape(label)}</div>'
        f'<div class="share">busiest region {r["busiest_share"]:.0%}</div>'
        f'<div class="sub">fair share {r["fair_share"]:.0%} over {r["regions"]} region(s); {r["keys_replayed"]:,} keys replayed</div>'
        f"{_svg(r, vmax, label)}</div>"
        for key, label, r in (("current-map", f"now: {plan['table']}", cur), ("new-map", f"NEW: {plan['new_table']} ({plan['design']})", new))
    )
    hours = plan["copy_seconds"] / 3600
    mib = plan["disk_bytes"] / 2**20
    body = f"""
<h1>From a hot table to a fixed one: {escape(plan["table"])}</h1>
<div class="sub">keyshape autopilot's plan; nothing was changed on the cluster to make it</div>
<div class="{verdict_cls}"><b>{escape(str(d.get("verdict", "")).upper())}</b> — {escape(d.get("pattern", ""))}: {escape(d.get("cause", ""))}</div>
<h2>Predicted: the observed writes replayed</h2>
<div class="maps">{maps}</div>
<h2>Learned workload</h2>
<p>{learned.get("write_rate", 0):,.1f} rows/s written, {learned.get("read_rate", 0):,.1f} reads/s, {learned.get("rows", 0):,} rows.</p>
<b>Measured</b>{items(learned.get("measured", []))}<b>Assumed</b>{items(learned.get("assumed", []))}
<details><summary>WORKLOAD.toml (correct it and pass it with --queries)</summary><pre>{escape(learned.get("workload_toml", ""))}</pre></details>
<h2>NEW's schema ({escape(plan["schema_path"])})</h2>
<pre id="schema">{escape(plan["schema_toml"])}</pre>
<h2>Commands</h2>
<table><tr><th>create NEW (HBase shell)</th><td><pre>{escape(chr(10).join(plan["create"]))}</pre></td></tr>
<tr><th>or with keyshape</th><td><pre>{escape(plan["create_command"])}</pre></td></tr>
<tr><th>start the online migration</th><td><pre id="migrate">{escape(plan["migrate_command"])}</pre></td></tr>
<tr><th>cut over (writers switched)</th><td><pre>{escape(plan["cutover_command"])}</pre></td></tr></table>
<h2>Estimates</h2>
<p id="estimate">copy {plan["rows"]:,} rows in about {hours:,.2f} h at {plan["copy_rows_per_s"]:,.0f} rows/s; NEW about {mib:,.1f} MiB</p>
{items(plan.get("estimates", []))}
<h2>Risks</h2>{items(plan.get("risks", []))}
"""
    head = f'<meta charset="utf-8"><title>keyshape plan: {escape(plan["table"])}</title><style>{_CSS}</style>'
    return f'<!doctype html><html lang="en"><head>{head}</head><body><main>{body}</main></body></html>'


def write_plan_html(plan: dict[str, Any], path: str | Path) -> Path:
    p = Path(path)
    p.write_text(render_plan_html(plan), encoding="utf-8")
    return p


def plan_lines(plan: dict[str, Any]) -> list[str]:
    """The plan as terminal lines."""
    fair = 1 / max(plan["new_regions"], 1)
    mib = plan["disk_bytes"] / 2**20
    minutes = plan["copy_seconds"] / 60
    out = [
        f"plan for {plan['table']} -> {plan['new_table']}: {plan['design']}",
        f"  replayed busiest: now {plan['current_share']:.0%}, NEW {plan['new_share']:.0%} (fair {fair:.0%} over {plan['new_regions']} regions)",
        f"  NEW's schema: {plan['schema_path']}",
        "  create (HBase shell):",
        *[f"    {line}" for line in plan["create"]],
        f"  start:   {plan['migrate_command']}",
        f"  cutover: {plan['cutover_command']}",
        f"  copy: {plan['rows']:,} rows, about {minutes:,.1f} min at {plan['copy_rows_per_s']:,.0f} rows/s; NEW about {mib:,.1f} MiB",
        *[f"  estimate: {e}" for e in plan.get("estimates", [])],
        *[f"  risk: {r}" for r in plan.get("risks", [])],
    ]
    return out
