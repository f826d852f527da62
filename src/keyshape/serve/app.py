"""The web side of ``keyshape serve``: a Starlette app with the JSON API, Prometheus ``/metrics``
and the UI (plain JS + canvas from the package's ``assets``: no CDN, it works offline).

API (JSON; ``table`` is a query parameter, ``ns:name`` or ``name``):

- ``GET /api/status``: polling state, the interval, the last error, the gaps in the history;
- ``GET /api/tables``: every table with its current verdict and pattern (the last one saved when
  the service restarted and has not judged it again yet, marked ``stale``);
- ``GET /api/table?table=T``: that table's verdict, reasons, advice and pattern (cause, fix and
  the fix as TOML);
- ``GET /api/heatmap?table=T&seconds=S[&until=U][&k0=A&k1=B][&cells=N][&keys=M]&metric=write``:
  the window of S seconds ending at U (epoch s; default now, 1 h) x the key buckets from A to B
  (fractions of the table's whole key axis, default 0..1), drawn in N time buckets and M key
  buckets at most (default 1,500 each; a narrower window gets finer buckets, and a shorter time
  window a finer layer of the history). ``metric``: write, read, requests (both) or store (MB).
  Answers ``times`` (wall clock, epoch s), ``keys`` (start key as toStringBinary, hex, and its
  label decoded by the table's schema), ``values_f32`` (the ``shape`` = times x keys matrix, row
  by row, as base64 of little-endian float32), ``lane_u16`` (the same shape: the index into
  ``servers`` of the server that held the cell, 65535 none), the events (splits, merges, moves)
  and gaps in the window, and for a salted table ``logical``: the same times on the de-salted
  key axis (every bucket folded onto one, ``serve.fold``), with its own keys and values;
- ``GET /api/predicted?table=T``: the recent intervals' writes as observed and as predicted
  under the pattern's fix (``serve.predict``: the traffic re-encoded under the fixed schema and
  replayed through the split simulation), with each one's busiest-region share;
- ``GET /api/regions?table=T``: the live region table (rates, memstore, store files, size, server).

With a token every request needs it: ``Authorization: Bearer T`` (the scheme in any case), or
``?token=T``, which also sets an HttpOnly, SameSite=Strict cookie so the page opened as
``/?token=T`` loads its script and style (plain relative links) and calls the API; a request
without it is answered 401 with ``WWW-Authenticate: Bearer``.
"""

from __future__ import annotations

import base64
import hmac
import math
import time
from importlib import resources
from collections.abc import Sequence
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema
from keyshape.serve.alerts import SEVERITY, Rule, evaluate
from keyshape.serve.compare import compare_routes
from keyshape.serve.fold import bucket_starts, first_head, fold
from keyshape.serve.history import METRICS, HeatQuery, History, window_keys
from keyshape.serve.plan_route import plan_routes
from keyshape.serve.poller import GONE, Poller, matches

__all__ = ["make_app", "metrics_text", "table_rows"]

COOKIE = "keyshape_serve_token"  # carries a ?token= the UI was opened with to its assets
MAX_SECONDS = 10 * 366 * 86400  # a heat-map window of at most ten years (the history keeps 28 days)
_ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "compare.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "index.html": "text/html; charset=utf-8",
}


def _asset(name: str) -> bytes:
    return resources.files("keyshape.serve").joinpath("assets", name).read_bytes()


def table_rows(poller: Poller, history: History) -> list[dict[str, Any]]:
    """Every known table with its verdict: the poller's, else the last one saved (``stale``)."""
    states = poller.snapshot()
    # a saved verdict counts only for a table this service watches (a narrower --tables on a
    # reused --db leaves the others out) and that is not gone (dropped since: GONE in the history)
    saved = {t: v for t, v in history.verdicts().items() if matches(t, poller.patterns)}
    out = []
    for name in sorted(set(states) | set(saved)):
        state = states.get(name)
        if state is not None and state.verdict:
            body, stale = state.verdict, False
        elif name in saved:
            body, stale = saved[name][1], True
        else:
            body, stale = {"table": name, "verdict": "idle", "regions": len(state.regions) if state else 0}, False
        if body.get("verdict") == GONE:
            continue
        row = {k: body.get(k) for k in ("table", "verdict", "regions", "busiest_region_share", "busiest_server_share", "at", "writes")}
        row["table"] = name
        row["pattern"] = (body.get("pattern") or {}).get("name", "")
        row["stale"] = stale
        out.append(row)
    return out


def _escape(value: str) -> str:
    """A Prometheus label value: backslash, quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def metrics_text(poller: Poller, history: History, rules: Sequence[Rule] = ()) -> str:
    """Prometheus exposition text: per table the busiest region's and server's share of writes
    at a typical moment, the verdict (0 balanced/idle, 1 skewed, 2 hotspot), the regions, and
    each ``--config`` alert of the table (1 firing, 0 not)."""
    families: dict[str, tuple[str, list[str]]] = {
        "keyshape_up": ("1 when the last poll reached the cluster.", [f"keyshape_up {1 if poller.connected else 0}"]),
        "keyshape_busiest_region_share": ("Share of a table's writes the busiest region takes at a typical moment.", []),
        "keyshape_busiest_server_share": ("Share of a table's writes the busiest region server takes at a typical moment.", []),
        "keyshape_verdict": ("The table's verdict: 0 balanced or idle, 1 skewed, 2 hotspot.", []),
        "keyshape_regions": ("The table's regions at the last poll.", []),
        "keyshape_alert": ("1 when the table's alert (a --config rule's threshold of this kind) fires, else 0.", []),
    }
    for row in table_rows(poller, history):
        label = '{table="' + _escape(str(row["table"])) + '"}'
        families["keyshape_busiest_region_share"][1].append(f"keyshape_busiest_region_share{label} {float(row['busiest_region_share'] or 0.0):.6f}")
        families["keyshape_busiest_server_share"][1].append(f"keyshape_busiest_server_share{label} {float(row['busiest_server_share'] or 0.0):.6f}")
        families["keyshape_verdict"][1].append(f"keyshape_verdict{label} {SEVERITY.get(str(row['verdict']), 0)}")
        families["keyshape_regions"][1].append(f"keyshape_regions{label} {int(row['regions'] or 0)}")
        for a in evaluate(rules, row):
            tags = f'{{table="{_escape(str(row["table"]))}",rule="{_escape(a.rule)}",kind="{a.kind}"}}'
            families["keyshape_alert"][1].append(f"keyshape_alert{tags} {1 if a.firing else 0}")
    # one block per metric family: its HELP, its TYPE, then its samples (the text format's rule:
    # a parser reads samples after another family's TYPE as untyped)
    lines: list[str] = []
    for name, (help_text, samples) in families.items():
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", *samples]
    return "\n".join(lines) + "\n"


def _b64(matrix: np.ndarray, dtype: str) -> str:
    # a matrix as base64 of its little-endian bytes, row by row: 2.25 M cells as JSON numbers took seconds
    return base64.b64encode(np.ascontiguousarray(matrix, dtype=dtype).tobytes()).decode("ascii")


def _logical_label(poller: Poller, table: str, first_bucket: bytes, key: bytes) -> str:
    """A logical key's label: the schema's label of that key in the first bucket, without the
    bucket (``"bucket 0 · 1234"`` -> ``"1234"``)."""
    if not key:
        return "(start)"
    text = poller.label(table, first_bucket + key)
    head, sep, rest = text.partition(" · ")
    return rest if sep else to_string_binary(key)


def heatmap_body(
    poller: Poller,
    history: History,
    table: str,
    seconds: float,
    metric: str = "write",
    max_cells: int = 1500,
    *,
    until: float | None = None,
    k0: float = 0.0,
    k1: float = 1.0,
    max_keys: int | None = None,
) -> dict[str, Any]:
    """The JSON of ``GET /api/heatmap`` (see the module docstring): the window of ``seconds``
    ending at ``until`` (default now) x the key buckets ``k0``..``k1`` (fractions of the whole
    axis), drawn in ``max_cells`` times x ``max_keys`` keys at most; with the server lane, and
    for a salted table the logical (de-salted) axis of the same times over the whole key space."""
    now = time.time()
    until = now if until is None else min(until, now)
    since = until - seconds
    max_keys = max_cells if max_keys is None else max_keys
    schema = poller.schema_for(table)
    salt = bucket_starts(schema.prefix) if schema is not None else []
    full = history.heat(table, since, until, max_times=max_cells, max_keys=0, metrics=(metric,), lane=True, extra_bounds=salt)
    q = window_keys(full, k0, k1, max_keys)
    values = q.values[metric]
    lane = q.lane if q.lane is not None else np.zeros(values.shape, dtype=np.uint16)
    body: dict[str, Any] = {
        "table": table,
        "metric": metric,
        "step": q.step,
        "interval": poller.interval,
        "since": since,
        "until": until,
        "now": now,
        "k0": q.k0,
        "k1": q.k1,
        "total_keys": q.total_keys,
        "times": q.times.tolist(),
        "keys": [{"start": to_string_binary(k), "hex": k.hex(), "label": poller.label(table, k)} for k in q.starts],
        "values_f32": _b64(values, "<f4"),
        "shape": [int(values.shape[0]), int(values.shape[1]) if values.ndim == 2 else 0],
        "max": float(values.max()) if values.size else 0.0,
        "servers": q.servers,
        "lane_u16": _b64(lane, "<u2"),
        "events": [{"t": t, "kind": k, "detail": d} for t, k, d in history.events(table, since) if t <= until],
        "gaps": [{"start": a, "stop": b, "reason": r} for a, b, r in history.gaps(since) if a <= until],
        "logical": None,
    }
    if salt and schema is not None and full.starts:
        axis, folded = fold(schema.prefix, full.starts, full.values[metric])
        lq = window_keys(HeatQuery(q.step, q.times, axis, {metric: folded}), 0.0, 1.0, max_keys)
        lv = lq.values[metric]
        head = first_head(schema.prefix)
        body["logical"] = {
            "buckets": len(salt),
            "keys": [{"start": to_string_binary(k), "hex": k.hex(), "label": _logical_label(poller, table, head, k)} for k in lq.starts],
            "values_f32": _b64(lv, "<f4"),
            "shape": [int(lv.shape[0]), int(lv.shape[1])],
            "max": float(lv.max()) if lv.size else 0.0,
        }
    return body


def predicted_body(poller: Poller, table: str) -> dict[str, Any]:
    """The JSON of ``GET /api/predicted``: the table's recent intervals as observed (writes on its
    regions) and as predicted under its pattern's fix (``serve.predict``), on the same wall-clock
    times; ``available`` false (with a ``reason``) when there is no fix to replay."""
    from keyshape.schema.labels import key_label
    from keyshape.serve.predict import Traffic, fixed_schema, replay, sample_records

    state = poller.snapshot().get(table)
    schema = poller.schema_for(table)
    pattern = (state.verdict.get("pattern") or {}) if state is not None else {}
    fix_prefix = pattern.get("fix_prefix") or {}
    body: dict[str, Any] = {"table": table, "pattern": pattern.get("name", ""), "fix_prefix": fix_prefix, "available": False}
    if state is None or not state.heat.samples:
        return {**body, "reason": "not polled yet"}
    if not fix_prefix:
        checked = (pattern.get("fix_check") or {}).get("reason") or ""
        return {**body, "reason": checked or f"the pattern ({pattern.get('name') or 'none'}) has no key design to replay"}
    if schema is None:
        return {**body, "reason": "no key schema for this table (give --schemas): the keys cannot be re-encoded"}
    traffic = Traffic.from_heat(state.heat)
    sampled = sample_records(schema, traffic)
    if not sampled.records:
        return {**body, "reason": sampled.reason}
    try:
        fix = fixed_schema(schema, fix_prefix)
    except KeyshapeError as exc:  # the fix does not fit this schema (with_prefix refuses it): say so, not a 500
        return {**body, "reason": f"the fix cannot be replayed: {exc}"}
    p = replay(sampled, fix, traffic)
    if p is None:
        return {**body, "reason": "no observed key can be encoded by the fix's schema"}
    # the samples' times are seconds since the table's first poll; the last one is state.last_at
    # (monotonic): to wall clock through it
    offset = poller.clock() - (poller.monotonic() - state.last_at) - float(traffic.times[-1])

    def label(s: KeySchema, k: bytes) -> str:
        try:
            return key_label(s, k) or "(start)"
        except Exception:  # noqa: BLE001 - a key outside the schema is shown as bytes
            return to_string_binary(k) or "(start)"

    return {
        **body,
        "available": True,
        "times": (traffic.times + offset).tolist(),
        "observed": {
            "keys": [{"start": to_string_binary(k), "label": poller.label(table, k)} for k in traffic.starts],
            "values_f32": _b64(traffic.writes, "<f4"),
            "shape": [int(traffic.writes.shape[0]), int(traffic.writes.shape[1])],
            "max": float(traffic.writes.max()) if traffic.writes.size else 0.0,
            "busiest_share": p.observed_share,
        },
        "predicted": {
            "keys": [{"start": to_string_binary(k), "label": label(fix, k)} for k in p.starts],
            "values_f32": _b64(p.values, "<f4"),
            "shape": [int(p.values.shape[0]), int(p.values.shape[1])],
            "max": float(p.values.max()) if p.values.size else 0.0,
            "busiest_share": p.busiest_share,
            "fair_share": ((pattern.get("fix_check") or {}).get("shown") or {}).get("fair_share"),
            "factor": (pattern.get("fix_check") or {}).get("factor"),
            "regions_skipped": sampled.skipped,
            "splits": p.splits,
            "keys_replayed": p.keys,
        },
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


def make_app(poller: Poller, history: History, token: str | None = None, rules: Sequence[Rule] = ()) -> Starlette:
    """The ASGI app over a running ``poller`` and its ``history``."""

    def given(request: Request) -> tuple[str, bool]:
        """The token a request carries, and whether it came in the address (``?token=``)."""
        query = request.query_params.get("token")
        if query:
            return query, True
        scheme, _, credentials = request.headers.get("authorization", "").strip().partition(" ")
        if scheme.lower() == "bearer" and credentials.strip():  # RFC 7235: the scheme is case-insensitive
            return credentials.strip(), False
        return request.cookies.get(COOKIE, ""), False

    def guard(handler: Any) -> Any:
        async def run(request: Request) -> Response:
            if not token:
                response: Response = await handler(request)
                return response
            value, in_address = given(request)
            if not hmac.compare_digest(value.encode(), token.encode()):
                return PlainTextResponse(
                    "a token is required: Authorization: Bearer TOKEN, or ?token=TOKEN\n",
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="keyshape serve"'},
                )
            response = await handler(request)
            if in_address:
                # The UI opened as /?token=T loads its script and style by plain links, which carry
                # no token: a cookie (this path only, never sent to other sites, unreadable by
                # scripts) carries it for them and for the page's API calls.
                response.set_cookie(COOKIE, value, httponly=True, samesite="strict", path="/")
            return response

        return run

    def table_of(request: Request) -> str:
        return request.query_params.get("table", "")

    def unknown(name: str) -> Response | None:
        """404 for a table neither polled nor in the history (as /api/table answers)."""
        if name in poller.snapshot() or name in history.tables():
            return None
        return JSONResponse({"error": f"no table {name!r} polled; see /api/tables"}, status_code=404)

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
        params = request.query_params
        try:
            seconds = float(params.get("seconds", "3600"))
            until = float(params["until"]) if "until" in params else None
            k0, k1 = float(params.get("k0", "0")), float(params.get("k1", "1"))
            cells = int(params.get("cells", "1500"))
            keys = int(params.get("keys", str(cells)))
        except ValueError:
            seconds = math.nan
            until, k0, k1, cells, keys = None, 0.0, 1.0, 1500, 1500
        metric = params.get("metric", "write")
        # inf, 1e309 (inf once parsed) and nan parse as floats: refused here, not a 500 later
        finite = math.isfinite(seconds) and (until is None or (math.isfinite(until) and until >= 0))
        sizes = 1 <= cells <= 4000 and 1 <= keys <= 4000
        if not finite or not 0 < seconds <= MAX_SECONDS or metric not in METRICS or not 0 <= k0 < k1 <= 1 or not sizes:
            return JSONResponse(
                {
                    "error": f"seconds must be a number in (0, {MAX_SECONDS}], until epoch seconds (finite, >= 0), 0 <= k0 < k1 <= 1, cells and keys "
                    f"1..4000, and metric one of {', '.join(METRICS)}"
                },
                status_code=400,
            )
        if (missing := unknown(name)) is not None:  # a malformed request is 400 first, then an unknown table 404
            return missing
        return JSONResponse(heatmap_body(poller, history, name, seconds, metric, cells, until=until, k0=k0, k1=k1, max_keys=keys))

    async def regions(request: Request) -> Response:
        name = table_of(request)
        if (missing := unknown(name)) is not None:
            return missing
        return JSONResponse(regions_body(poller, name))

    replays: dict[str, tuple[int, dict[str, Any]]] = {}  # table -> (polls, body): one replay per poll

    async def predicted(request: Request) -> Response:
        name = table_of(request)
        if (missing := unknown(name)) is not None:
            return missing
        cached = replays.get(name)
        if cached is None or cached[0] != poller.polls:
            # the replay takes up to a second: off the event loop, so the page's other calls go on
            replays[name] = (poller.polls, await run_in_threadpool(predicted_body, poller, name))
        return JSONResponse(replays[name][1])

    async def metrics(request: Request) -> Response:
        return PlainTextResponse(metrics_text(poller, history, rules), media_type="text/plain; version=0.0.4")

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
        Route("/api/predicted", guard(predicted)),
        Route("/metrics", guard(metrics)),
        *plan_routes(poller, history, guard),  # "plan a fix": the autopilot's dry run (serve.plan_route)
        *compare_routes(poller, history, guard, lambda: table_rows(poller, history)),  # a re-key's OLD and NEW side by side (serve.compare)
    ]
    return Starlette(routes=routes)
