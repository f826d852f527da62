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
  }

  function refresh() {
    if (!state.table) return Promise.resolve();
    var q = "?table=" + encodeURIComponent(state.table);
    var seconds = document.getElementById("range").value, metric = document.getElementById("metric").value;
    return Promise.all([
      api("api/table" + q).then(showVerdict).catch(function () {}),
      api("api/heatmap" + q + "&seconds=" + seconds + "&metric=" + metric).then(function (h) {
        // values_f32: base64 of the times x keys float32 matrix, row by row
        var raw = atob(h.values_f32), bytes = new Uint8Array(raw.length);
        for (var b = 0; b < raw.length; b++) bytes[b] = raw.charCodeAt(b);
        var flat = new Float32Array(bytes.buffer), nk = h.shape[1];
        h.values = [];
        for (var i = 0; i < h.shape[0]; i++) h.values.push(flat.subarray(i * nk, (i + 1) * nk));
        state.heat = h;
        draw();
      }),
      api("api/regions" + q).then(function (r) { state.regions = r.regions; drawRegions(); }),
    ]);
  }

  // Colour on a log scale: dark blue (few) through red to yellow (the most).
  function colour(v, max) {
    if (!(v > 0)) return "rgb(12,12,28)";
    var x = Math.log1p(v) / Math.log1p(max);
    var stops = [[20, 30, 110], [170, 30, 90], [240, 90, 30], [255, 235, 90]];
    var f = x * (stops.length - 1), i = Math.min(Math.floor(f), stops.length - 2), r = f - i;
    var c = stops[i].map(function (a, k) { return Math.round(a + (stops[i + 1][k] - a) * r); });
    return "rgb(" + c.join(",") + ")";
  }

  function draw() {
    var h = state.heat, canvas = document.getElementById("heat"), ctx = canvas.getContext("2d");
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    var left = 220, top = 14, bottom = 34, right = 10;
    var plot = { left: left, top: top, width: canvas.width - left - right, height: canvas.height - top - bottom };
    state.plot = plot;
    ctx.font = "11px sans-serif";
    if (!h || !h.times.length || !h.keys.length) {
      ctx.fillStyle = "#777";
      ctx.fillText("no history yet for this range: the first interval is being polled", left, top + 20);
      return;
    }
    var nt = h.times.length, nk = h.keys.length, cw = plot.width / nt, ch = plot.height / nk;
    for (var i = 0; i < nt; i++) {
      for (var j = 0; j < nk; j++) {
        ctx.fillStyle = colour(h.values[i][j], h.max);
        ctx.fillRect(left + i * cw, top + j * ch, Math.ceil(cw), Math.ceil(ch));
      }
    }
    // gaps: a grey band where two buckets are much further apart than a step
    var step = h.step || h.interval;
    ctx.fillStyle = "rgba(200,200,200,0.85)";
    for (i = 1; i < nt; i++) {
      if (h.times[i] - h.times[i - 1] > 2.5 * step) {
        ctx.fillRect(left + i * cw - 2, top, 4, plot.height);
      }
    }
    // events: splits (S), merges (M), moves (V) marked over the column they fell in
    h.events.forEach(function (e) {
      var k = 0;
      while (k < nt - 1 && h.times[k + 1] <= e.t) k++;
      ctx.fillStyle = "#333";
      ctx.fillText(e.kind === "split" ? "S" : e.kind === "merge" ? "M" : "V", left + k * cw + cw / 2 - 3, top - 3);
      ctx.fillStyle = "rgba(255,255,255,0.6)";
      ctx.fillRect(left + k * cw, top, 1, plot.height);
    });
    // key axis: decoded labels of the buckets' start keys, as many as fit
    ctx.fillStyle = "#333";
    var every = Math.max(1, Math.ceil(14 / ch));
    for (j = 0; j < nk; j += every) {
      var text = h.keys[j].label || h.keys[j].start || "(start)";
      if (text.length > 34) text = text.slice(0, 33) + "…";
      ctx.fillText(text, 4, top + j * ch + Math.min(ch, 14) / 2 + 4);
    }
    // time axis: wall clock
    var ticks = Math.min(nt, 8);
    for (var t = 0; t < ticks; t++) {
      var idx = Math.round(t * (nt - 1) / Math.max(ticks - 1, 1));
      ctx.fillText(clock(h.times[idx], false), left + idx * cw, top + plot.height + 14);
    }
    ctx.fillText(clock(h.times[0], true) + " → " + clock(h.times[nt - 1], true) + " (local time)", left, top + plot.height + 28);
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
    var h = state.heat, k = h.keys[c.j];
    tip.textContent = (k.label || "(start)") + "\nkey " + (k.start || "(start)") + "\n" + clock(h.times[c.i], true) +
      (h.step ? " (+" + h.step + " s)" : "") + "\n" + Math.round(h.values[c.i][c.j]).toLocaleString("en") + " " + h.metric + " requests";
    tip.style.display = "block";
    tip.style.left = Math.min(x + 14, r.width - 260) + "px";
    tip.style.top = (y + 14) + "px";
  }

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
  document.getElementById("range").onchange = refresh;
  document.getElementById("metric").onchange = refresh;
  state.select = select;
  state.refresh = refresh;
  state.ready = Promise.all([loadStatus(), loadTables()]);
  setInterval(function () { loadStatus(); loadTables(); refresh(); }, 5000);
})();
