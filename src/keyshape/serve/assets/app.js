// keyshape serve's UI: plain JS + canvas, talking only to the JSON API of the same process.
"use strict";
(function () {
  var token = new URLSearchParams(location.search).get("token");
  var state = { table: null, heat: null, plot: null, regions: [], sortKey: "write_rate", sortDesc: true };
  window.ksState = state; // for the browser tests and for debugging from the console

  function api(path) {
    var url = path + (token ? (path.indexOf("?") < 0 ? "?" : "&") + "token=" + encodeURIComponent(token) : "");
    return fetch(url).then(function (r) {
      if (!r.ok) throw new Error(path + ": HTTP " + r.status);
      return r.json();
    });
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function pct(x) { return x == null ? "" : (100 * x).toFixed(0) + "%"; }
  function clock(t, withDate) {
    var d = new Date(t * 1000), p = function (n) { return String(n).padStart(2, "0"); };
    var hm = p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds());
    return withDate ? d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + " " + hm : hm;
  }

  function loadTables() {
    return api("api/tables").then(function (body) {
      var tb = document.querySelector("#tables tbody");
      tb.textContent = "";
      body.tables.forEach(function (t) {
        var tr = el("tr");
        tr.dataset.table = t.table;
        if (t.table === state.table) tr.className = "sel";
        tr.appendChild(el("td", t.table));
        tr.appendChild(el("td", t.verdict + (t.stale ? " (saved)" : ""), t.stale ? "stale" : t.verdict));
        tr.appendChild(el("td", t.pattern));
        tr.onclick = function () { select(t.table); };
        tb.appendChild(tr);
      });
      if (!state.table && body.tables.length) select(body.tables[0].table);
    });
  }

  function loadStatus() {
    return api("api/status").then(function (s) {
      var open = s.gaps.filter(function (g) { return g.stop === null; });
      document.getElementById("status").textContent =
        (s.connected ? "polling every " + s.interval + " s" : "cluster unreachable, retrying: " + s.last_error) +
        " · " + s.polls + " polls" + (open.length ? " · gap since " + clock(open[0].start) : "");
    });
  }

  function select(name) {
    state.table = name;
    document.querySelectorAll("#tables tr").forEach(function (tr) { tr.className = tr.dataset.table === name ? "sel" : ""; });
    refresh();
  }

  function showVerdict(v) {
    document.getElementById("title").textContent = v.table;
    var box = document.getElementById("verdict");
    box.textContent = "";
    box.appendChild(el("span", v.verdict.toUpperCase(), v.verdict));
    box.appendChild(el("span", "  busiest region " + pct(v.busiest_region_share) + " · busiest server " + pct(v.busiest_server_share) +
      " · " + v.regions + " regions"));
    (v.reasons || []).forEach(function (r) { box.appendChild(el("div", r)); });
    var p = document.getElementById("pattern");
    p.textContent = "";
    if (v.pattern) {
      p.appendChild(el("div", "Pattern: " + v.pattern.name, "pname"));
      if (v.pattern.cause) p.appendChild(el("div", "Cause: " + v.pattern.cause, "pcause"));
      if (v.pattern.fix) p.appendChild(el("div", "Fix: " + v.pattern.fix, "pfix"));
      if (v.pattern.fix_toml) p.appendChild(el("pre", v.pattern.fix_toml, "ptoml"));
    }
    if (v.verdict === "hotspot" || v.verdict === "skewed") {  // the autopilot's dry run on this table (serve/plan_route.py)
      var plan = el("a", "plan a fix", "pplan");
      plan.href = "plan?table=" + encodeURIComponent(v.table);
      plan.target = "_blank";
      p.appendChild(plan);
    }
  }

  // The window shown: the last `seconds` up to `until` (null: now, following the live edge) x the
  // key buckets k0..k1 (fractions of the table's whole key axis). Zoom and pan change it; every
  // change fetches that window again, at the resolution the API can give for it.
  var view = { seconds: 3600, until: null, k0: 0, k1: 1 };
  state.view = view;

  function decode(b64, Kind) {
    var raw = atob(b64), bytes = new Uint8Array(raw.length);
    for (var b = 0; b < raw.length; b++) bytes[b] = raw.charCodeAt(b);
    return new Kind(bytes.buffer);
  }
  function rows(flat, shape) {
    var out = [], nk = shape[1];
    for (var i = 0; i < shape[0]; i++) out.push(flat.subarray(i * nk, (i + 1) * nk));
    return out;
  }

  function heatQuery() {
    var metric = document.getElementById("metric").value;
    return "api/heatmap?table=" + encodeURIComponent(state.table) + "&seconds=" + Math.max(1, Math.round(view.seconds)) +
      (view.until === null ? "" : "&until=" + view.until.toFixed(0)) + "&k0=" + view.k0.toFixed(6) + "&k1=" + view.k1.toFixed(6) +
      "&metric=" + metric + "&cells=" + Math.round(document.getElementById("heat").width - 230);
  }

  function refresh() {
    if (!state.table) return Promise.resolve();
    var table = state.table, q = "?table=" + encodeURIComponent(table), url = heatQuery();
    state.lastQuery = url;
    // Answers arrive in any order: one for a table (or a window) no longer shown would paint over
    // the one asked for since, so it is dropped.
    function current(then) {
      return function (body) { if (state.table === table) return then(body); };
    }
    return Promise.all([
      api("api/table" + q).then(current(showVerdict)).catch(function () {}),
      api(url).then(function (h) {
        if (url !== state.lastQuery) return;
        h.query = url; // which window this answers (the tests wait for it)
        // values_f32: base64 of the times x keys float32 matrix, row by row; lane_u16 the servers
        h.values = rows(decode(h.values_f32, Float32Array), h.shape);
        h.lane = rows(decode(h.lane_u16, Uint16Array), h.shape);
        if (h.logical) h.logical.values = rows(decode(h.logical.values_f32, Float32Array), h.logical.shape);
        state.heat = h;
        draw();
      }),
      api("api/regions" + q).then(current(function (r) { state.regions = r.regions; drawRegions(); })),
      api("api/predicted" + q).then(current(showPredicted)).catch(function () {}),
    ]);
  }

  // Colour on a log scale: dark blue (few) through red to yellow (the most); brightness scales
  // the top of the scale down (x2: half the maximum is already yellow).
  function colour(v, max) {
    if (!(v > 0)) return "rgb(12,12,28)";
    var knob = document.getElementById("brightness"), bright = Math.pow(2, knob ? Number(knob.value) : 0);
    var x = Math.min(1, Math.log1p(v) / Math.log1p(Math.max(max / bright, 1e-9)));
    var stops = [[20, 30, 110], [170, 30, 90], [240, 90, 30], [255, 235, 90]];
    var f = x * (stops.length - 1), i = Math.min(Math.floor(f), stops.length - 2), r = f - i;
    var c = stops[i].map(function (a, k) { return Math.round(a + (stops[i + 1][k] - a) * r); });
    return "rgb(" + c.join(",") + ")";
  }
  var PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"];
  function serverColour(i) { return i === 65535 ? "rgb(12,12,28)" : PALETTE[i % PALETTE.length]; }

  // One matrix (times x keys) on a canvas with its key labels and wall-clock axis; returns the plot box.
  function drawMatrix(canvas, h, keys, values, fill, note) {
    var ctx = canvas.getContext("2d");
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    var left = 220, top = 14, bottom = 34, right = 10;
    var plot = { left: left, top: top, width: canvas.width - left - right, height: canvas.height - top - bottom };
    ctx.font = "11px sans-serif";
    if (!h || !h.times.length || !keys.length) {
      ctx.fillStyle = "#777";
      ctx.fillText("no history yet for this range: the first interval is being polled", left, top + 20);
      return plot;
    }
    var nt = h.times.length, nk = keys.length, cw = plot.width / nt, ch = plot.height / nk;
    for (var i = 0; i < nt; i++) {
      for (var j = 0; j < nk; j++) {
        ctx.fillStyle = fill(values[i][j]);
        ctx.fillRect(left + i * cw, top + j * ch, Math.ceil(cw), Math.ceil(ch));
      }
    }
    // gaps: a grey band where two buckets are much further apart than a step
    var step = h.step || h.interval;
    ctx.fillStyle = "rgba(200,200,200,0.85)";
    for (i = 1; i < nt; i++) {
      if (h.times[i] - h.times[i - 1] > 2.5 * step) ctx.fillRect(left + i * cw - 2, top, 4, plot.height);
    }
    // events: splits (S), merges (M), moves (V), the table gone (X) marked over the column they fell in
    var marks = { split: ["S", "#06c"], merge: ["M", "#a0a"], move: ["V", "#333"], gone: ["X", "#c00"] };
    h.events.forEach(function (e) {
      var k = 0, mark = marks[e.kind] || ["?", "#333"];
      while (k < nt - 1 && h.times[k + 1] <= e.t) k++;
      ctx.fillStyle = mark[1];
      ctx.fillText(mark[0], left + k * cw + cw / 2 - 3, top - 3);
      ctx.fillStyle = "rgba(255,255,255,0.6)";
      ctx.fillRect(left + k * cw, top, 1, plot.height);
    });
    ctx.fillStyle = "#333";
    var every = Math.max(1, Math.ceil(14 / ch));
    for (j = 0; j < nk; j += every) {
      var text = keys[j].label || keys[j].start || "(start)";
      if (text.length > 34) text = text.slice(0, 33) + "…";
      ctx.fillText(text, 4, top + j * ch + Math.min(ch, 14) / 2 + 4);
    }
    var ticks = Math.min(nt, 8);
    for (var t = 0; t < ticks; t++) {
      var idx = Math.round(t * (nt - 1) / Math.max(ticks - 1, 1));
      ctx.fillText(clock(h.times[idx], false), left + idx * cw, top + plot.height + 14);
    }
    ctx.fillText(clock(h.times[0], true) + " → " + clock(h.times[nt - 1], true) + " (local time)" + (note || ""), left, top + plot.height + 28);
    return plot;
  }

  function draw() {
    var h = state.heat;
    if (!h) return;
    var keyNote = h.k0 > 0 || h.k1 < 1 ? " · keys " + (100 * h.k0).toFixed(1) + "–" + (100 * h.k1).toFixed(1) + "% of " + h.total_keys : "";
    state.plot = drawMatrix(document.getElementById("heat"), h, h.keys, h.values, function (v) { return colour(v, h.max); }, keyNote);
    state.lanePlot = drawMatrix(document.getElementById("lane"), h, h.keys, h.lane, serverColour, "");
    var legend = document.getElementById("lanelegend");
    legend.textContent = "";
    h.servers.forEach(function (s, i) {
      var item = el("span", s, "server");
      item.style.borderLeft = "12px solid " + serverColour(i);
      legend.appendChild(item);
    });
    var box = document.getElementById("logicalbox");
    box.style.display = h.logical ? "block" : "none";
    if (h.logical) {
      document.getElementById("logicalnote").textContent = "logical key (de-salted: " + h.logical.buckets + " buckets folded into one axis)";
      state.logicalPlot = drawMatrix(document.getElementById("logical"), h, h.logical.keys, h.logical.values,
        function (v) { return colour(v, h.logical.max); }, "");
    }
  }

  // The observed intervals and the same traffic replayed under the pattern's fix, side by side.
  function showPredicted(p) {
    state.predicted = p;
    var box = document.getElementById("predictbox"), pair = document.getElementById("predictpair");
    // a pattern a key design fixes always says what became of its prediction: the map, or why none
    var keyed = ["sequential diagonal", "hot band", "single hot row"].indexOf(p.pattern) >= 0;
    box.style.display = p.available || keyed ? "block" : "none";
    pair.style.display = p.available ? "" : "none";
    if (!p.available) {
      document.getElementById("predictnote").textContent = "No predicted map: " + (p.reason || "nothing to replay") + ".";
      return;
    }
    p.observed.values = rows(decode(p.observed.values_f32, Float32Array), p.observed.shape);
    p.predicted.values = rows(decode(p.predicted.values_f32, Float32Array), p.predicted.shape);
    var top = Math.max(p.observed.max, p.predicted.max), h = { times: p.times, events: [], step: 0, interval: 1 };
    if (p.times.length > 1) h.interval = (p.times[p.times.length - 1] - p.times[0]) / (p.times.length - 1);
    drawMatrix(document.getElementById("observed"), h, p.observed.keys, p.observed.values, function (v) { return colour(v, top); }, "");
    drawMatrix(document.getElementById("predicted"), h, p.predicted.keys, p.predicted.values, function (v) { return colour(v, top); }, "");
    document.getElementById("predictnote").textContent = "Observed: the busiest region takes " + pct(p.observed.busiest_share) +
      " of an interval's writes. Predicted under the fix (" + p.fix_prefix.strategy + ", " + p.fix_prefix.buckets + " buckets" +
      (p.fix_prefix.hash_fields ? ", hashing " + p.fix_prefix.hash_fields.join(" and ") : "") + "; " +
      p.predicted.keys_replayed + " keys replayed through the split simulation): " + pct(p.predicted.busiest_share) + ".";
  }

  function cellAt(x, y) {
    var h = state.heat, p = state.plot;
    if (!h || !p || !h.times.length) return null;
    var i = Math.floor((x - p.left) / (p.width / h.times.length)), j = Math.floor((y - p.top) / (p.height / h.keys.length));
    if (i < 0 || j < 0 || i >= h.times.length || j >= h.keys.length) return null;
    return { i: i, j: j };
  }

  function hover(ev) {
    var canvas = document.getElementById("heat"), tip = document.getElementById("tip");
    var r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top, c = cellAt(x, y);
    if (!c) { tip.style.display = "none"; return; }
    var h = state.heat, k = h.keys[c.j], s = h.lane[c.i][c.j];
    var unit = h.metric === "store" ? " MB stored" : " " + (h.metric === "requests" ? "" : h.metric + " ") + "requests";
    tip.textContent = (k.label || "(start)") + "\nkey " + (k.start || "(start)") + "\n" + clock(h.times[c.i], true) +
      (h.step ? " (+" + h.step + " s)" : "") + "\n" + Math.round(h.values[c.i][c.j]).toLocaleString("en") + unit +
      (s !== 65535 && h.servers[s] ? "\non " + h.servers[s] : "");
    tip.style.display = "block";
    tip.style.left = Math.min(x + 14, r.width - 260) + "px";
    tip.style.top = (y + 14) + "px";
  }

  // Zoom and pan. Time: the window's length and end; keys: k0..k1. `fx`/`fy` are where (0..1 of
  // the plot) the zoom is centred, so the cell under the cursor stays under it.
  function clampKeys() {
    var w = Math.min(1, Math.max(view.k1 - view.k0, 1e-6));
    if (view.k0 < 0) view.k0 = 0;
    view.k1 = view.k0 + w;
    if (view.k1 > 1) { view.k1 = 1; view.k0 = 1 - w; }
  }
  function endOf() { return view.until === null ? Date.now() / 1000 : view.until; }
  function zoomTime(factor, fx) {
    var end = endOf(), start = end - view.seconds, at = start + (fx === undefined ? 0.5 : fx) * view.seconds;
    var seconds = Math.max(10, view.seconds * factor);
    var newEnd = Math.min(Date.now() / 1000, at + (end - at) * seconds / view.seconds);
    view.seconds = seconds;
    view.until = newEnd >= Date.now() / 1000 - 1 ? null : newEnd;
  }
  function zoomKeys(factor, fy) {
    var w = view.k1 - view.k0, at = view.k0 + (fy === undefined ? 0.5 : fy) * w;
    var nw = Math.min(1, w * factor);
    view.k0 = at - (at - view.k0) * nw / w;
    view.k1 = view.k0 + nw;
    clampKeys();
  }
  function panTime(fraction) {
    var end = endOf() + fraction * view.seconds;
    view.until = end >= Date.now() / 1000 - 1 ? null : end;
  }
  function panKeys(fraction) {
    var w = view.k1 - view.k0;
    view.k0 += fraction * w;
    view.k1 = view.k0 + w;
    clampKeys();
  }
  state.zoomTime = function (f, fx) { zoomTime(f, fx); return refresh(); };
  state.zoomKeys = function (f, fy) { zoomKeys(f, fy); return refresh(); };
  state.panTime = function (f) { panTime(f); return refresh(); };
  state.panKeys = function (f) { panKeys(f); return refresh(); };

  // the heat-map drawing, for serve's other pages (compare.js); the rest is the table page's
  window.ksDraw = { api: api, el: el, pct: pct, decode: decode, rows: rows, colour: colour, drawMatrix: drawMatrix };
  if (!document.getElementById("tables")) return;

  function plotFraction(ev) {
    var canvas = document.getElementById("heat"), r = canvas.getBoundingClientRect(), p = state.plot;
    return { fx: Math.min(1, Math.max(0, (ev.clientX - r.left - p.left) / p.width)), fy: Math.min(1, Math.max(0, (ev.clientY - r.top - p.top) / p.height)) };
  }
  var heatCanvas = document.getElementById("heat");
  heatCanvas.addEventListener("wheel", function (ev) {
    if (!state.plot) return;
    ev.preventDefault();
    var f = plotFraction(ev), factor = ev.deltaY < 0 ? 0.5 : 2;
    if (ev.shiftKey) zoomKeys(factor, f.fy); else if (ev.altKey) zoomTime(factor, f.fx); else { zoomTime(factor, f.fx); zoomKeys(factor, f.fy); }
    refresh();
  }, { passive: false });
  var drag = null;
  heatCanvas.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, y: ev.clientY }; });
  window.addEventListener("mouseup", function (ev) {
    if (!drag || !state.plot) { drag = null; return; }
    var dx = (ev.clientX - drag.x) / state.plot.width, dy = (ev.clientY - drag.y) / state.plot.height;
    drag = null;
    if (Math.abs(dx) < 0.01 && Math.abs(dy) < 0.01) return;
    panTime(-dx);
    panKeys(-dy);
    refresh();
  });
  function button(id, fn) { document.getElementById(id).onclick = function () { fn(); refresh(); }; }
  button("zin", function () { zoomTime(0.5); zoomKeys(0.5); });
  button("zout", function () { zoomTime(2); zoomKeys(2); });
  button("tin", function () { zoomTime(0.5); });
  button("tout", function () { zoomTime(2); });
  button("kin", function () { zoomKeys(0.5); });
  button("kout", function () { zoomKeys(2); });
  button("left", function () { panTime(-0.25); });
  button("right", function () { panTime(0.25); });
  button("up", function () { panKeys(-0.25); });
  button("down", function () { panKeys(0.25); });
  button("reset", function () { view.seconds = Number(document.getElementById("range").value); view.until = null; view.k0 = 0; view.k1 = 1; });

  function drawRegions() {
    var rows = state.regions.slice(), k = state.sortKey, d = state.sortDesc ? -1 : 1;
    rows.sort(function (a, b) { return (a[k] < b[k] ? -1 : a[k] > b[k] ? 1 : 0) * d; });
    var tb = document.querySelector("#regions tbody");
    tb.textContent = "";
    var mb = function (v) { return (v / 1048576).toFixed(0); };
    rows.forEach(function (r) {
      var tr = el("tr");
      tr.appendChild(el("td", r.label || r.start || "(start)"));
      tr.appendChild(el("td", r.write_rate.toFixed(1), "n"));
      tr.appendChild(el("td", r.read_rate.toFixed(1), "n"));
      tr.appendChild(el("td", mb(r.memstore_bytes), "n"));
      tr.appendChild(el("td", String(r.store_files), "n"));
      tr.appendChild(el("td", mb(r.store_bytes), "n"));
      tr.appendChild(el("td", r.server));
      tb.appendChild(tr);
    });
  }

  document.querySelectorAll("#regions th").forEach(function (th) {
    th.onclick = function () {
      var k = th.dataset.k;
      state.sortDesc = state.sortKey === k ? !state.sortDesc : k !== "label" && k !== "server";
      state.sortKey = k;
      drawRegions();
    };
  });
  document.getElementById("heat").addEventListener("mousemove", hover);
  document.getElementById("heat").addEventListener("mouseleave", function () { document.getElementById("tip").style.display = "none"; });
  document.getElementById("range").onchange = function () {
    view.seconds = Number(document.getElementById("range").value);
    view.until = null;
    refresh();
  };
  document.getElementById("metric").onchange = refresh;
  document.getElementById("brightness").oninput = draw;
  state.select = select;
  state.refresh = refresh;
  state.ready = Promise.all([loadStatus(), loadTables()]);
  setInterval(function () { loadStatus(); loadTables(); refresh(); }, 5000);
})();
