"""serve's "plan a fix" action: the autopilot's dry run on a table serve watches, from serve's own
history, shown as the same plan page (``report.plan``) and JSON the CLI writes.

``GET /plan?table=T`` (HTML) and ``GET /api/plan?table=T`` (JSON): diagnose from the history
serve keeps (the last hour), learn (a bounded key-only sample of the live table: reads only),
advise with the current design beside, replay, plan. Nothing on the cluster changes: acting stays
with ``keyshape autopilot --apply``, whose command the page gives. ``GET /api/loadsplit?table=T``:
load-split's relief now (the hot region's split key and its replayed effect), read-only too. The table needs its schema in
serve's ``--schemas`` (the keys are decoded by it); NEW's schema file is kept beside the history
(``<db folder>/keyshape-plans/<table>/``), the same file the page's commands name.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from keyshape.errors import KeyshapeError
from keyshape.ops.autopilot import run
from keyshape.report.plan import render_plan_html
from keyshape.serve.compare import compare_link
from keyshape.serve.history import History
from keyshape.serve.observe import from_history
from keyshape.serve.poller import Poller

__all__ = ["plan_for", "plan_routes", "split_for"]

HISTORY_S = 3600.0  # the history the plan is learned from


def plan_for(poller: Poller, history: History, table: str) -> dict[str, Any]:
    """The autopilot's plan of ``table`` (``Plan.to_dict()``), or ``{"error": ...}`` saying why not."""
    schema = poller.schema_for(table)
    if schema is None:
        return {"error": f"serve has no key schema for {table!r}: give its schema file in --schemas to plan a fix"}
    store = poller.store
    if store is None:
        return {"error": "serve is not connected to the cluster; try again once it polls"}
    now = time.time()
    try:
        observed = from_history(history, table, now - HISTORY_S, f"serve's history {history.path}", len(store.region_servers()), until=now)
        cluster = getattr(store, "cluster", None)
        url = str(getattr(cluster, "quorum", "") or "HOST:PORT")
        folder = Path(history.path).resolve().parent / "keyshape-plans" / table.replace(":", "_")
        folder.mkdir(parents=True, exist_ok=True)
        result = run(store, table, schema, lambda: observed, hbase_url=url, state_path=folder / "state.json", out_dir=folder)
    except KeyshapeError as exc:
        return {"error": str(exc)}
    if result.plan is None:
        return {"error": f"no plan: the run stopped after {result.stopped_after}"}
    poller.watch(result.plan.new_table, table)  # serve polls NEW from its creation on: the before/after page's history
    return result.plan.to_dict()


def plan_routes(poller: Poller, history: History, guard: Callable[[Any], Any]) -> list[Route]:
    """The two routes, behind serve's ``guard`` (its token check)."""

    async def compute(request: Request) -> dict[str, Any]:
        table = request.query_params.get("table", "")
        if table not in poller.snapshot() and table not in history.tables():
            return {"error": f"no table {table!r} polled; see /api/tables", "status": 404}
        return await run_in_threadpool(plan_for, poller, history, table)

    async def page(request: Request) -> Response:
        plan = await compute(request)
        if "error" in plan:
            return HTMLResponse(f"<!doctype html><title>no plan</title><p>{_escape(plan['error'])}</p>", status_code=int(plan.get("status", 422)))
        return HTMLResponse(render_plan_html(plan).replace("</main>", compare_link(plan) + "</main>", 1))

    async def api(request: Request) -> Response:
        plan = await compute(request)
        return JSONResponse(plan, status_code=int(plan.pop("status", 422)) if "error" in plan else 200)

    async def split(request: Request) -> Response:
        table = request.query_params.get("table", "")
        if table not in poller.snapshot() and table not in history.tables():
            return JSONResponse({"error": f"no table {table!r} polled; see /api/tables"}, status_code=404)
        try:
            watch = float(request.query_params.get("watch", "5"))
            lookback = float(request.query_params.get("lookback", "300"))
        except ValueError:
            watch = lookback = -1.0
        if not (1 <= watch <= 60 and 1 <= lookback <= 86400):
            return JSONResponse({"error": "watch must be 1-60 s and lookback 1-86400 s"}, status_code=400)
        body = await run_in_threadpool(split_for, poller, table, watch, lookback)
        return JSONResponse(body, status_code=422 if "error" in body else 200)

    return [Route("/plan", guard(page)), Route("/api/plan", guard(api)), Route("/api/loadsplit", guard(split))]


def split_for(poller: Poller, table: str, watch: float, lookback: float) -> dict[str, Any]:
    """load-split's proposal for ``table`` (``LoadSplit.to_dict()``: the key, TiKV's scores, the
    replayed busiest share before and after, the shell line), or ``{"error": ...}``. Read-only:
    applying it stays with ``keyshape load-split --apply``."""
    from keyshape.ops.loadsplit import load_split

    store = poller.store
    if store is None:
        return {"error": "serve is not connected to the cluster; try again once it polls"}
    try:
        return load_split(store, table, watch=watch, lookback=lookback).to_dict()
    except KeyshapeError as exc:
        return {"error": str(exc)}


def _escape(text: str) -> str:
    from html import escape

    return escape(text)
