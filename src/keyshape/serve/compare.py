"""serve's before/after page of a re-key (issue 41, the autopilot's "act"): the OLD table and the
NEW one it was migrated to, side by side, from serve's own history.

``GET /compare?before=OLD&after=NEW`` (the page: both tables' numbers and both heat maps, drawn
by the UI's own heat-map code from ``/api/heatmap``) and ``GET /api/compare?before=OLD&after=NEW
[&seconds=S]`` (JSON). Each side: the verdict, the busiest region's and the busiest server's share
of the writes (the poller's verdict, the same numbers as ``/api/tables`` and ``/metrics``:
``app.table_rows``), and the p99 of the per-region write request rates over the window (every
region's writes/s in every poll interval of the last ``S`` seconds, default an hour).

The shares and verdict are the poller's judgement of the table's recent polls (its window of
``poller.MAX_SAMPLES / 2`` to ``MAX_SAMPLES`` polls, sliding; polls without writes weigh nothing in
it), so OLD keeps its loaded numbers after the cut-over until its loaded polls slide out of that
window (30 to 60 polls later); after that OLD reads idle and only its heat map and p99 (over
``seconds``) still show its load. ``judged_at`` says
when each verdict was made.

A NEW table the service's ``--tables`` does not match is added to the poller's patterns
(``Poller.watch``) when serve makes the plan that names it (``plan_route``) and when the page asks
for it beside a watched OLD: serve then polls it from its next poll on, so its history starts
when NEW is created (the autopilot's NEW is named after OLD but need not match OLD's pattern),
and a serve restarted on the same history watches it again while OLD is watched."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from html import escape
from importlib import resources
from typing import Any
from urllib.parse import urlencode

import numpy as np
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from keyshape.serve.history import History
from keyshape.serve.poller import Poller, matches

__all__ = ["DEFAULT_SECONDS", "compare_body", "compare_link", "compare_routes", "region_rate_p99", "side"]

DEFAULT_SECONDS = 3600.0  # the window compared: the history's finest layer (every poll) keeps an hour


def region_rate_p99(history: History, table: str, since: float, until: float, metric: str = "write") -> tuple[float, int]:
    """The 99th percentile of ``table``'s per-region request rates in ``history`` (``metric``: write or read) over
    every poll interval from ``since`` to ``until``, and how many (interval, region) rates it was
    taken over (0: no interval, the p99 is 0). One region's rate in one interval is its requests
    then over the interval's length; a frame of the polls layer covers the time since the frame
    before it (the first frame's start is not stored, so it is left out, as ``Observed.rates``
    does), a roll-up frame its layer's step; an interval overlapping a recorded gap is left out."""
    k = history.layer_for(since, until, 10**9, table)
    step = float(history.layers[k].step)
    frames = [(t, f) for t, f in history.frames(table, k) if since <= t <= until]
    column = "writes" if metric == "write" else "reads"
    # a poll interval holding a gap (the cluster unreachable, serve not running) counted requests
    # over less than its length: no rate of it
    gaps = [(a, until if b is None else b) for a, b, _ in history.gaps(since)]
    rates: list[np.ndarray] = []
    for i, (t, frame) in enumerate(frames):
        if step > 0:
            dt = step
        elif i == 0:
            continue
        else:
            dt = t - frames[i - 1][0]
        if any(a < t and b > t - dt for a, b in gaps):
            continue
        if dt > 0 and len(frame):
            rates.append(frame[column].astype(np.float64) / dt)
    if not rates:
        return 0.0, 0
    every = np.concatenate(rates)
    return float(np.percentile(every, 99)), int(every.size)


def side(row: dict[str, Any] | None, history: History, table: str, since: float, until: float) -> dict[str, Any]:
    """One table's column of the page: ``table``'s ``row`` of serve's table rows (the poller's
    verdict and shares; None when serve has not judged it) and the p99 of its per-region write
    rates in ``history`` from ``since`` to ``until`` (epoch s)."""
    p99, rates = region_rate_p99(history, table, since, until)
    row = row or {}
    return {
        "table": table,
        "verdict": row.get("verdict") or "not judged yet",
        "pattern": row.get("pattern") or "",
        "busiest_region_share": float(row.get("busiest_region_share") or 0.0),
        "busiest_server_share": float(row.get("busiest_server_share") or 0.0),
        "regions": int(row.get("regions") or 0),
        "stale": bool(row.get("stale", False)),
        "judged_at": float(row.get("at") or 0.0),
        "p99_region_write_rate": p99,
        "rates": rates,
    }


def compare_body(
    poller: Poller,
    history: History,
    rows: Sequence[dict[str, Any]],
    before: str,
    after: str,
    seconds: float = DEFAULT_SECONDS,
    now: float | None = None,
) -> dict[str, Any]:
    """``before`` (OLD) and ``after`` (NEW) side by side from ``history`` over the last ``seconds``
    to ``now`` (default the clock), and whether NEW was just added to ``poller``'s watched tables.
    ``rows``: serve's table rows (``app.table_rows``, the one place a table's verdict row is made)."""
    until = time.time() if now is None else now
    since = until - seconds
    by_table = {r["table"]: r for r in rows}
    added = poller.watch(after, before) if matches(before, poller.patterns) else False
    body: dict[str, Any] = {
        "seconds": seconds,
        "since": since,
        "until": until,
        "watching_after": added or matches(after, poller.patterns),
        "added_after": added,
        "before": side(by_table.get(before), history, before, since, until),
        "after": side(by_table.get(after), history, after, since, until),
    }
    polled = set(history.tables()) | set(poller.snapshot())
    for s in (body["before"], body["after"]):
        s["polled"] = s["table"] in polled  # the page asks /api/heatmap only for a polled table
    return body


def compare_link(plan: dict[str, Any]) -> str:
    """The plan page's link to this page for the OLD -> NEW of ``plan`` (``Plan.to_dict()``;
    serve's plan page adds it)."""
    old, new = str(plan.get("table", "")), str(plan.get("new_table", ""))
    href = "compare?" + urlencode({"before": old, "after": new})
    return (
        f'<p class="compare">Once {escape(new)} takes the writes (<code>keyshape autopilot --apply</code>, then <code>--cutover</code>): '
        f'<a id="compare-link" href="{escape(href)}">{escape(old)} and {escape(new)}, before and after</a> '
        f"(serve watches {escape(new)} from then on).</p>"
    )


def compare_routes(poller: Poller, history: History, guard: Callable[[Any], Any], table_rows: Callable[[], Sequence[dict[str, Any]]]) -> list[Route]:
    """``/compare`` and ``/api/compare`` over ``poller`` and ``history``, behind serve's ``guard``
    (its token check); ``table_rows``
    gives serve's table rows (``app.table_rows``: app imports this module, not the reverse)."""

    def known(name: str) -> bool:
        return name in poller.snapshot() or name in history.tables()

    async def page(request: Request) -> Response:
        html = resources.files("keyshape.serve").joinpath("assets", "compare.html").read_bytes()
        return Response(html, media_type="text/html; charset=utf-8")

    async def api(request: Request) -> Response:
        params = request.query_params
        before, after = params.get("before", ""), params.get("after", "")
        try:
            seconds = float(params.get("seconds", str(DEFAULT_SECONDS)))
        except ValueError:
            seconds = math.nan
        if not before or not after or not (math.isfinite(seconds) and 0 < seconds <= 28 * 86400):
            return JSONResponse({"error": "give before=OLD and after=NEW (table names) and seconds in (0, 2419200]"}, status_code=400)
        if not known(before):
            return JSONResponse({"error": f"no table {before!r} polled; see /api/tables"}, status_code=404)
        # NEW may not be polled yet (just created, or outside --tables): the body says so and
        # serve starts watching it, so a reload shows it
        return JSONResponse(compare_body(poller, history, table_rows(), before, after, seconds))

    return [Route("/compare", guard(page)), Route("/api/compare", guard(api))]
