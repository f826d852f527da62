"""The interactive heat map of the HTML report, like Bigtable's Key Visualizer: regions in key
order down, time windows across, drawn on a <canvas> by a few lines of inline JavaScript.

Hovering a cell shows the region (start and end key in toStringBinary form, the start decoded by
the schema), the time window (which writes it holds) and the count. Dragging up or down over the
map zooms into that key range; "show all regions" (or a double click) zooms out. Everything
(data, script, style) is inline, so the page stays one file that works offline.
"""

from __future__ import annotations

import json
from html import escape
from itertools import count

import numpy as np

from keyshape.analysis import Analysis
from keyshape.core.hbytes import shared_prefix_length, to_string_binary
from keyshape.report.png import region_tick_labels, window_caption

__all__ = ["HEATMAP_CSS", "HEATMAP_JS", "interactive_heatmap"]

_ids = count()

HEATMAP_CSS = """
.ks-heat{background:#fff;border:1px solid #d9dde3;border-radius:4px;padding:8px 10px;margin:6px 0}
.ks-bar{font-size:13px;color:#5b6573;display:flex;gap:12px;align-items:center;flex-wrap:wrap}
.ks-bar b{color:#1d232b}
.ks-bar button{font-size:12px;padding:2px 10px;border:1px solid #b8c0cc;border-radius:4px;
     background:#eef1f5;cursor:pointer}
.ks-bar button:disabled{opacity:.45;cursor:default}
.ks-scale{display:inline-block;width:120px;height:10px;vertical-align:middle;margin:0 4px;
     border:1px solid #b8c0cc;background:linear-gradient(90deg,#000004,#280b54,#65156e,#9f2a63,
     #d44842,#f57d15,#fac127,#fcffa4)}
.ks-wrap{position:relative}
.ks-canvas{display:block;width:100%;cursor:crosshair;user-select:none}
.ks-tip{position:absolute;pointer-events:none;background:rgba(22,27,34,.94);color:#f0f3f6;
     font:12px/1.45 ui-monospace,Menlo,Consolas,monospace;padding:6px 9px;border-radius:4px;
     white-space:pre;display:none;z-index:5;max-width:560px;overflow:hidden}
"""

# No template literals or external calls: plain ES5 that any browser runs from a file:// URL.
HEATMAP_JS = r"""
(function () {
  "use strict";
  // matplotlib's "inferno", sampled at 8 stops, as in the PNG report.
  var STOPS = [[0,0,4],[40,11,84],[101,21,110],[159,42,99],[212,72,66],[245,125,21],
               [250,193,39],[252,255,164]];
  function colour(t) {
    t = Math.max(0, Math.min(1, t));
    var x = t * (STOPS.length - 1), i = Math.min(Math.floor(x), STOPS.length - 2), f = x - i;
    var a = STOPS[i], b = STOPS[i + 1], c = [0, 1, 2].map(function (k) {
      return Math.round(a[k] + (b[k] - a[k]) * f);
    });
    return "rgb(" + c.join(",") + ")";
  }
  function fmt(n) { return Number(n).toLocaleString("en-US"); }
  function pct(x) { return (100 * x).toFixed(1) + "%"; }  // as the tables: stats.percent_cell

  function init(root) {
    var data = JSON.parse(root.querySelector(".ks-data").textContent);
    var canvas = root.querySelector(".ks-canvas"), ctx = canvas.getContext("2d");
    var tip = root.querySelector(".ks-tip"), range = root.querySelector(".ks-range");
    var reset = root.querySelector(".ks-reset");
    var R = data.regions.length, W = data.heat.length;
    var LEFT = data.label_px, TOP = 6, BOTTOM = 34, RIGHT = 8;
    var view = {lo: 0, hi: R}, drag = null, plotW = 0, plotH = 0, cw = 1, rh = 1;
    var winTotals = data.heat.map(function (col) {
      return col.reduce(function (s, v) { return s + v; }, 0);
    });

    function layout() {
      var dpr = window.devicePixelRatio || 1, n = view.hi - view.lo;
      var cssW = Math.max(canvas.clientWidth, LEFT + 200);
      var cssH = Math.max(180, Math.min(560, n * 22)) + TOP + BOTTOM;
      canvas.style.height = cssH + "px";
      canvas.width = Math.round(cssW * dpr);
      canvas.height = Math.round(cssH * dpr);
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      plotW = cssW - LEFT - RIGHT;
      plotH = cssH - TOP - BOTTOM;
      cw = plotW / W;
      rh = plotH / n;
    }

    function draw() {
      var n = view.hi - view.lo, vmax = data.vmax || 1;
      ctx.clearRect(0, 0, canvas.width, canvas.height);
      for (var w = 0; w < W; w++) {
        var col = data.heat[w], x0 = LEFT + Math.floor(w * cw), x1 = LEFT + Math.floor((w + 1) * cw);
        for (var r = view.lo; r < view.hi; r++) {
          var y0 = TOP + Math.floor((r - view.lo) * rh), y1 = TOP + Math.floor((r - view.lo + 1) * rh);
          ctx.fillStyle = colour(col[r] / vmax);
          ctx.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
        }
      }
      ctx.fillStyle = "#1d232b";
      ctx.font = "11px ui-monospace, Menlo, Consolas, monospace";
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      var every = Math.max(1, Math.ceil(13 / rh));
      for (var i = view.lo; i < view.hi; i += every) {
        var text = data.regions[i].tick;
        while (text.length > 4 && ctx.measureText(text).width > LEFT - 8) text = text.slice(0, -2);
        if (text !== data.regions[i].tick) text += "\u2026";
        ctx.fillText(text, LEFT - 6, TOP + (i - view.lo + 0.5) * rh);
      }
      ctx.textAlign = "center";
      ctx.textBaseline = "top";
      ctx.font = "12px sans-serif";
      ctx.fillText("time \u2192 (" + data.caption + ")", LEFT + plotW / 2, TOP + plotH + 16);
      ctx.font = "11px sans-serif";
      ctx.fillText("0", LEFT + 4, TOP + plotH + 3);
      ctx.fillText(String(W), LEFT + plotW - 8, TOP + plotH + 3);
      if (drag) {
        var a = Math.min(drag.from, drag.to), b = Math.max(drag.from, drag.to) + 1;
        ctx.strokeStyle = "#4fc3f7";
        ctx.lineWidth = 2;
        ctx.strokeRect(LEFT + 1, TOP + (a - view.lo) * rh + 1, plotW - 2, (b - a) * rh - 2);
      }
      var all = view.lo === 0 && view.hi === R;
      range.textContent = all ? "all " + fmt(R) + " regions"
        : "regions #" + view.lo + "\u2013#" + (view.hi - 1) + " of " + fmt(R);
      reset.disabled = all;
      root.setAttribute("data-view", view.lo + "-" + view.hi);
    }

    function cellAt(ev) {
      var box = canvas.getBoundingClientRect(), x = ev.clientX - box.left, y = ev.clientY - box.top;
      if (x < LEFT || x >= LEFT + plotW || y < TOP || y >= TOP + plotH) return null;
      return {w: Math.min(W - 1, Math.floor((x - LEFT) / cw)),
              r: Math.min(view.hi - 1, view.lo + Math.floor((y - TOP) / rh)), x: x, y: y};
    }

    function describe(c) {
      var g = data.regions[c.r], v = data.heat[c.w][c.r], wt = winTotals[c.w];
      var first = data.windows[c.w][0], last = data.windows[c.w][1];
      var lines = ["region #" + c.r + "  (" + pct(g.share) + " of all rows, server " + g.server + ")",
                   "start  " + g.start, "end    " + g.end];
      if (g.decoded) lines.push("start decoded  " + g.decoded);
      lines.push("time window " + (c.w + 1) + " of " + W + ": " + (wt ? "writes " + fmt(first) +
                 "\u2013" + fmt(last) : "no writes"));
      lines.push(fmt(v) + " writes here, " + (wt ? pct(v / wt) : "0%") + " of the window");
      return lines.join("\n");
    }

    function showTip(c) {
      tip.textContent = describe(c);
      tip.style.display = "block";
      var box = root.querySelector(".ks-wrap").clientWidth;
      var left = c.x + 14, top = c.y + 14;
      if (left + tip.offsetWidth > box) left = Math.max(0, c.x - tip.offsetWidth - 14);
      tip.style.left = left + "px";
      tip.style.top = top + "px";
    }

    function zoom(lo, hi) {
      view = {lo: Math.max(0, lo), hi: Math.min(R, hi)};
      layout();
      draw();
    }

    canvas.addEventListener("mousemove", function (ev) {
      var c = cellAt(ev);
      if (drag && c) { drag.to = c.r; draw(); }
      if (c) showTip(c); else tip.style.display = "none";
    });
    canvas.addEventListener("mouseleave", function () { tip.style.display = "none"; });
    canvas.addEventListener("mousedown", function (ev) {
      var c = cellAt(ev);
      if (c) { drag = {from: c.r, to: c.r}; ev.preventDefault(); }
    });
    window.addEventListener("mouseup", function () {
      if (!drag) return;
      var a = Math.min(drag.from, drag.to), b = Math.max(drag.from, drag.to) + 1;
      drag = null;
      if (b - a >= 2) zoom(a, b); else draw();
    });
    canvas.addEventListener("dblclick", function () { zoom(0, R); });
    reset.addEventListener("click", function () { zoom(0, R); });
    window.addEventListener("resize", function () { layout(); draw(); });
    layout();
    draw();
  }

  var roots = document.querySelectorAll(".ks-heat");
  for (var i = 0; i < roots.length; i++) init(roots[i]);
})();
"""


def _window_writes(analysis: Analysis) -> list[list[int]]:
    """Per window, the first and last write it holds (1-based, in write order)."""
    ends = np.cumsum(analysis.heat.sum(axis=1).astype(np.int64))
    starts = np.concatenate(([0], ends[:-1])) + 1
    return [[int(a), int(max(a, b))] for a, b in zip(starts, ends)]


def _region_data(analysis: Analysis) -> list[dict[str, object]]:
    ticks = region_tick_labels(analysis)
    return [
        {
            "start": to_string_binary(r.start) if r.start else "(start)",
            "end": to_string_binary(r.end) if r.end else "(end)",
            "decoded": r.start_text,
            "tick": t,
            "share": r.share,
            "server": r.server,
        }
        for r, t in zip(analysis.regions, ticks)
    ]


def interactive_heatmap(analysis: Analysis, vmax: float | None = None, title: str = "") -> str:
    """The heat map of ``analysis`` as an HTML fragment (needs :data:`HEATMAP_CSS` and
    :data:`HEATMAP_JS` once on the page). ``vmax``: the count drawn brightest (default: this
    map's largest cell), so several maps can share one colour scale; ``title``: the map's heading
    ("" for none)."""
    heat = analysis.heat  # windows x regions
    regions = _region_data(analysis)
    longest = max((len(str(r["tick"])) for r in regions), default=8)
    data = {
        "heat": heat.astype(np.int64).tolist(),
        "regions": regions,
        "windows": _window_writes(analysis),
        "vmax": float(vmax if vmax is not None else max(float(heat.max()), 1.0)),
        "caption": window_caption(analysis),
        "label_px": min(260, 16 + 7 * int(longest)),
    }
    # "</" inside the JSON would end the <script> element early.
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    legend = analysis.label_legend if any(r.start_text for r in analysis.regions) else ""
    uid = f"ks-heat-{next(_ids)}"
    skip = shared_prefix_length([r.start for r in analysis.regions])
    note = f" (start keys share their first {skip} bytes)" if skip and not legend else ""
    return (
        f'<div class="ks-heat" id="{uid}" data-view="0-{len(regions)}">'
        + (f"<div><b>{escape(title)}</b></div>" if title else "")
        + '<div class="ks-bar"><span>key range: <b class="ks-range"></b></span>'
        '<button type="button" class="ks-reset">show all regions</button>'
        "<span>hover a cell for its region, time and count; drag up or down to zoom into a key "
        "range</span></div>" + f'<div class="ks-bar"><span>rows: regions by start key{escape(": " + legend if legend else note)}'
        f'</span><span>writes per region per window: 0<span class="ks-scale"></span>'
        f"{data['vmax']:,.0f}</span></div>"
        '<div class="ks-wrap"><canvas class="ks-canvas" role="img" '
        f'aria-label="heat map of writes per region per time window for {escape(analysis.name)}">'
        '</canvas><div class="ks-tip"></div></div>'
        f'<script type="application/json" class="ks-data">{payload}</script></div>'
    )
