"""The web side of ``keyshape serve``: a Starlette app with the JSON API, Prometheus ``/metrics``
and the UI (plain JS + canvas from the package's ``assets``: no CDN, it works offline).

API (JSON; ``table`` is a query parameter, ``ns:name`` or ``name``):

- ``GET /api/status``: polling state, the interval, the last error, the gaps in the history;
- ``GET /api/tables``: every table with its current verdict and pattern (the last one saved when
  the service restarted and has not judged it again yet, marked ``stale``);
- ``GET /api/table?table=T``: that table's verdict, reasons, advice and pattern (cause, fix and
  the fix as TOML);
- ``GET /api/heatmap?table=T&seconds=S&metric=write``: time x key-space buckets of the last S
  seconds (default 1 h): ``times`` (wall clock, epoch s), ``keys`` (start key as toStringBinary
  and its label decoded by the table's schema), ``values_f32`` (the ``shape`` = times x keys
  matrix of requests, row by row, as base64 of little-endian float32), the events (splits,
  merges, moves) and gaps in the range;
- ``GET /api/regions?table=T``: the live region table (rates, memstore, store files, size, server).

With a token every request needs it: ``Authorization: Bearer T``, or ``?token=T`` (the UI keeps
the one it was opened with).
"""

from __future__ import annotations

import base64
import hmac
import math
import time
from importlib import resources
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from keyshape.core.hbytes import to_string_binary
from keyshape.serve.history import History
from keyshape.serve.poller import Poller

__all__ = ["make_app", "metrics_text", "table_rows"]

_ASSETS = {"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8", "index.html": "text/html; charset=utf-8"}
SEVERITY = {"idle": 0, "balanced": 0, "skewed": 1, "hotspot": 2}


def _asset(name: str) -> bytes:
    return resources.files("keyshape.serve").joinpath("assets", name).read_bytes()


def table_rows(poller: Poller, history: History) -> list[dict[str, Any]]:
    """Every known table with its verdict: the poller's, else the last one saved (``stale``)."""
    states = poller.snapshot()
    saved = history.verdicts()
    out = []
    for name in sorted(set(states) | set(saved)):
        state = states.get(name)
        if state is not None and state.verdict:
            body, stale = state.verdict, False
        elif name in saved:
            body, stale = saved[name][1], True
        else:
            body, stale = {"table": name, "verdict": "idle", "regions": len(state.regions) if state else 0}, False
        row = {k: body.get(k) for k in ("table", "verdict", "regions", "busiest_region_share", "busiest_server_share", "at", "writes")}
        row["table"] = name
        row["pattern"] = (body.get("pattern") or {}).get("name", "")
        row["stale"] = stale
        out.append(row)
    return out


def metrics_text(poller: Poller, history: History) -> str:
    """Prometheus exposition text: per table the busiest region's and server's share of writes
    at a typical moment, the verdict (0 balanced/idle, 1 skewed, 2 hotspot) and the regions."""
    lines = [
        "# HELP keyshape_busiest_region_share Share of a table's writes the busiest region takes at a typical moment.",
        "# TYPE keyshape_busiest_region_share gauge",
        "# HELP keyshape_busiest_server_share Share of a table's writes the busiest region server takes at a typical moment.",
        "# TYPE keyshape_busiest_server_share gauge",
        "# HELP keyshape_verdict The table's verdict: 0 balanced or idle, 1 skewed, 2 hotspot.",
        "# TYPE keyshape_verdict gauge",
        "# HELP keyshape_regions The table's regions at the last poll.",
        "# TYPE keyshape_regions gauge",
        "# HELP keyshape_up 1 when the last poll reached the cluster.",
        "# TYPE keyshape_up gauge",
        f"keyshape_up {1 if poller.connected else 0}",
    ]
    for row in table_rows(poller, history):
        label = '{table="' + str(row["table"]).replace("\\", "\\\\").replace('"', '\\"') + '"}'
        lines.append(f"keyshape_busiest_region_share{label} {float(row['busiest_region_share'] or 0.0):.6f}")
        lines.append(f"keyshape_busiest_server_share{label} {float(row['busiest_server_share'] or 0.0):.6f}")
        lines.append(f"keyshape_verdict{label} {SEVERITY.get(str(row['verdict']), 0)}")
        lines.append(f"keyshape_regions{label} {int(row['regions'] or 0)}")
    return "\n".join(lines) + "\n"


def heatmap_body(poller: Poller, history: History, table: str, seconds: float, metric: str = "write", max_cells: int = 1500) -> dict[str, Any]:
    """The JSON of ``GET /api/heatmap`` (see the module docstring)."""
    now = time.time()
    since = now - seconds
    q = history.heat(table, since, now, max_times=max_cells, max_keys=max_cells)
    values = q.writes if metric == "write" else q.reads
    return {
        "table": table,
        "metric": metric,
        "step": q.step,
        "interval": poller.interval,
        "since": since,
        "now": now,
        "times": q.times.tolist(),
        "keys": [{"start": to_string_binary(k), "label": poller.label(table, k)} for k in q.starts],
        # the matrix as little-endian float32, base64: 2.25 M cells as JSON numbers took seconds
        "values_f32": base64.b64encode(np.ascontiguousarray(values, dtype="<f4").tobytes()).decode("ascii"),
        "shape": [int(values.shape[0]), int(values.shape[1]) if values.ndim == 2 else 0],
        "max": float(values.max()) if values.size else 0.0,
        "events": [{"t": t, "kind": k, "detail": d} for t, k, d in history.events(table, since)],
        "gaps": [{"start": a, "stop": b, "reason": r} for a, b, r in history.gaps(since)],
    }


def regions_body(poller: Poller, table: str) -> dict[str, Any]:
    state = poller.snapshot().get(table)
    rows = []
    if state is not None:
        for i, r in enumerate(state.regions):
            rows.append(
                {
                    "start": to_string_binary(r.start),
                    "label": poller.label(table, r.start),
                    "name": r.name,
                    "server": r.server,
                    "write_rate": state.write_rates[i] if i < len(state.write_rates) else 0.0,
                    "read_rate": state.read_rates[i] if i < len(state.read_rates) else 0.0,
                    "memstore_bytes": r.memstore_bytes,
                    "store_files": r.store_files,
                    "store_bytes": r.store_size_bytes,
                }
            )
    return {"table": table, "regions": rows}


def make_app(poller: Poller, history: History, token: str | None = None) -> Starlette:
    """The ASGI app over a running ``poller`` and its ``history``."""

    def allowed(request: Request) -> bool:
        if not token:
            return True
        given = request.query_params.get("token") or request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        return hmac.compare_digest(given.encode(), token.encode())

    def guard(handler: Any) -> Any:
        async def run(request: Request) -> Response:
            if not allowed(request):
                return PlainTextResponse("a token is required: Authorization: Bearer TOKEN, or ?token=TOKEN\n", status_code=401)
            response: Response = await handler(request)
            return response

        return run

    def table_of(request: Request) -> str:
        return request.query_params.get("table", "")

    async def index(request: Request) -> Response:
        return Response(_asset("index.html"), media_type=_ASSETS["index.html"])

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _ASSETS:
            return PlainTextResponse("not found\n", status_code=404)
        return Response(_asset(name), media_type=_ASSETS[name], headers={"Cache-Control": "no-cache"})

    async def status(request: Request) -> Response:
        return JSONResponse(
            {
                "connected": poller.connected,
                "polls": poller.polls,
                "interval": poller.interval,
                "last_error": poller.last_error,
                "gaps": [{"start": a, "stop": b, "reason": r} for a, b, r in history.gaps()],
                "db": history.path,
            }
        )

    async def tables(request: Request) -> Response:
        return JSONResponse({"tables": table_rows(poller, history)})

    async def table(request: Request) -> Response:
        name = table_of(request)
        state = poller.snapshot().get(name)
        body = state.verdict if state is not None and state.verdict else history.verdicts().get(name, (0.0, None))[1]
        if body is None and state is not None:  # polled once: no interval to judge yet
            body = {"table": name, "verdict": "idle", "regions": len(state.regions), "reasons": ["waiting for the second poll"], "advice": []}
        elif body is None and name in history.tables():  # history only, never judged
            body = {
                "table": name,
                "verdict": "idle",
                "regions": 0,
                "reasons": ["not judged yet: no poll of it since this service started"],
                "advice": [],
            }
        if body is None:
            return JSONResponse({"error": f"no table {name!r} polled; see /api/tables"}, status_code=404)
        return JSONResponse(body)

    async def heatmap(request: Request) -> Response:
        name = table_of(request)
        try:
            seconds = float(request.query_params.get("seconds", "3600"))
        except ValueError:
            seconds = math.nan
        metric = request.query_params.get("metric", "write")
        if not seconds > 0 or metric not in ("write", "read"):
            return JSONResponse({"error": "seconds must be a positive number and metric write or read"}, status_code=400)
        return JSONResponse(heatmap_body(poller, history, name, seconds, metric))

    async def regions(request: Request) -> Response:
        return JSONResponse(regions_body(poller, table_of(request)))

    async def metrics(request: Request) -> Response:
        return PlainTextResponse(metrics_text(poller, history), media_type="text/plain; version=0.0.4")

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)  # browsers ask; there is none, and no error either

    routes = [
        Route("/", guard(index)),
        Route("/favicon.ico", favicon),
        Route("/assets/{name}", guard(asset)),
        Route("/api/status", guard(status)),
        Route("/api/tables", guard(tables)),
        Route("/api/table", guard(table)),
        Route("/api/heatmap", guard(heatmap)),
        Route("/api/regions", guard(regions)),
        Route("/metrics", guard(metrics)),
    ]
    return Starlette(routes=routes)
