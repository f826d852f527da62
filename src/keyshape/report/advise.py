"""Reports of ``keyshape advise``: the ranked designs in the terminal (rich) and as one HTML page
(the ranked table, each top design's TOML, split points and predicted heat map, the reasons the
tempting designs lose). The JSON form is :meth:`keyshape.analysis.advise.Advice.to_dict`."""

from __future__ import annotations

from html import escape
from pathlib import Path

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from keyshape.analysis.advise import Advice
from keyshape.analysis.advise.score import Score
from keyshape.report.heatmap_html import interactive_heatmap
from keyshape.report.html import _page

__all__ = ["advice_renderable", "render_advice_html", "write_advice_html"]


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} PiB"


def _shown(advice: Advice, top: int) -> list[Score]:
    return [s for s in advice.ranked if s.rank <= top or s.design.hand]


TIE = "equal within the model's precision"


def _rank(s: Score) -> str:
    """The rank, marked ``=`` when the design shares it with others (equal within the precision)."""
    return f"{s.rank}=" if s.tie else str(s.rank)


def _tie_note(shown: list[Score]) -> str:
    ties = sorted({s.tie for s in shown if s.tie})
    return f"n= : {TIE} (a shared rank: ranks {', '.join(map(str, ties))})" if ties else ""


def advice_renderable(advice: Advice, top: int = 5) -> RenderableType:
    """The ranked table of ``advice`` (its ``top`` designs), the top design's schema, and the
    reasons the others lose."""
    t = Table(box=box.SIMPLE_HEAVY, title=f"{len(advice.ranked)} designs scored on {advice.sample.rows:,} records ({advice.seconds:.1f} s)")
    for col in ("#", "front", "design", "busiest server", "cost ms/s", "storage"):
        t.add_column(col, justify="left" if col == "design" else "right")
    for s in _shown(advice, top):
        name = Text(("[hand] " if s.design.hand else "") + s.design.label)
        share = f"{100 * s.concentration:.0f}% ±{100 * 2 * s.concentration_se:.0f}"
        t.add_row(_rank(s), str(s.front), name, share, f"{s.weighted_cost:,.1f}", _size(s.storage_bytes))
    best = advice.top
    parts: list[RenderableType] = [t]
    note = _tie_note(_shown(advice, top))
    if note:
        parts.append(Text(note))
    parts += [Text(f"Top: {best.design.label}", style="bold"), Text(f"  decided by: {best.decided}")]
    for c in best.patterns:
        flag = "" if c.over_goal <= 1 else f"  ({c.over_goal:.1f}x the goal)"
        parts.append(
            Text(f"  {c.pattern}: {c.route}, {c.scanners:.0f} scanners, {c.rows:,.0f} rows, {c.latency_ms:.1f} ms (goal {c.goal_ms:g} ms){flag}")
        )
    parts.append(Text("Schema (keyshape TOML):", style="bold"))
    parts.append(Text(best.design.toml, no_wrap=True, overflow="ignore"))
    for p, _, text in best.design.indexes:
        parts.append(Text(f"Index table for '{p.name}':", style="bold"))
        parts.append(Text(text, no_wrap=True, overflow="ignore"))
    losers = [s for s in _shown(advice, top) if s.reason]
    if losers:
        parts.append(Text("Why the others rank lower:", style="bold"))
        for s in losers:
            parts.append(Text(f"  #{s.rank} {s.design.label}: {s.reason}"))
    if advice.pruned:
        parts.append(Text(f"Left out of the search ({len(advice.pruned)}):", style="bold"))
        for pr in advice.pruned[:5]:
            parts.append(Text(f"  {pr.label}: {pr.reason}"))
        if len(advice.pruned) > 5:
            parts.append(Text(f"  ... and {len(advice.pruned) - 5} more (--json lists them all)"))
    for note in advice.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    return Group(*parts)


def _row(s: Score) -> str:
    hand = " <em>(hand)</em>" if s.design.hand else ""
    return (
        f"<tr><td>{_rank(s)}</td><td>{s.front}</td><td class=key>{escape(s.design.label)}{hand}</td>"
        f"<td>{100 * s.concentration:.0f}% &plusmn;{100 * 2 * s.concentration_se:.0f}</td>"
        f"<td>{s.weighted_cost:,.1f}</td><td>{escape(_size(s.storage_bytes))}</td>"
        f"<td class=key>{escape((TIE + ': ' if s.tie else '') + (s.reason or s.decided))}</td></tr>"
    )


def _design(s: Score) -> str:
    rows = "".join(
        f"<tr><td class=key>{escape(c.pattern)}</td><td>{escape(c.route)}</td><td>{c.scanners:.0f}</td><td>{c.rows:,.0f}</td>"
        f"<td>{c.latency_ms:.1f}</td><td>{c.goal_ms:g}</td></tr>"
        for c in s.patterns
    )
    index = "".join(f"<h4>Index table for '{escape(p.name)}'</h4><pre>{escape(text)}</pre>" for p, _, text in s.design.indexes)
    # Every table the design writes has its own map: an index keyed by a bare time is the hot
    # spot of a design whose main table spreads, and the ranking counted its puts.
    shares = s.table_shares or (s.concentration,)
    maps = "".join(
        f"<h4>Predicted heat map of index table {escape(name)} (its busiest server takes "
        f"{100 * share:.0f}% of its puts)</h4>" + interactive_heatmap(a, title=name)
        for (name, a), share in zip(s.tables[1:], shares[1:])
    )
    return (
        f"<h3>#{s.rank} {escape(s.design.label)}</h3><p>{escape(s.decided)}</p>"
        f"<table><tr><th>pattern</th><th>route</th><th>scanners</th><th>rows</th><th>ms</th><th>goal ms</th></tr>{rows}</table>"
        f"<h4>Schema</h4><pre>{escape(s.design.toml)}</pre>{index}"
        f"<h4>Predicted heat map (writes per region over time, the sample's second half replayed)</h4>"
        + interactive_heatmap(s.analysis, title=s.design.name)
        + maps
    )


def render_advice_html(advice: Advice, top: int = 5) -> str:
    """One self-contained page for ``advice``: the ranked table, then each of the ``top`` designs
    in full."""
    shown = _shown(advice, top)
    table = (
        "<table><tr><th>#</th><th>front</th><th>design</th><th>busiest server</th><th>cost ms/s</th><th>storage</th>"
        f"<th>what decided its place</th></tr>{''.join(_row(s) for s in shown)}</table>"
    )
    note = _tie_note(shown)
    if note:
        table += f"<p class=sub>{escape(note)}; the busiest server's share is shown &plusmn; twice its sampling error</p>"
    body = (
        f"<h1>keyshape advise</h1><p class=sub>{escape(advice.sample.source)}: {advice.sample.rows:,} records; "
        f"{escape(advice.spec.source)}: {len(advice.spec.patterns)} patterns, {advice.spec.servers} servers, "
        f"{advice.spec.horizon_days:g} days; {len(advice.ranked)} designs scored in {advice.seconds:.1f} s</p>"
        f"<h2>Ranked designs</h2><div class=scroll>{table}</div><h2>Top designs</h2>" + "".join(_design(s) for s in advice.ranked[: min(top, 3)])
    )
    return _page("keyshape advise", body)


def write_advice_html(advice: Advice, path: str | Path, top: int = 5) -> Path:
    """Write :func:`render_advice_html` of ``advice`` (its ``top`` designs) to ``path``; returns
    the path."""
    p = Path(path)
    p.write_text(render_advice_html(advice, top), encoding="utf-8")
    return p
